#include "models/mem/interconnect.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace vtoe::mem {

namespace {

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// SystemC object names allow letters, digits and '_' safely.
std::string object_name(const std::string& name) {
  std::string out = "out_";
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  return out;
}

// Makes objects created outside the constructor children of `module`.
class HierarchyScope {
 public:
  explicit HierarchyScope(sc_core::sc_module* module) {
    sc_core::sc_get_curr_simcontext()->hierarchy_push(module);
  }
  ~HierarchyScope() { sc_core::sc_get_curr_simcontext()->hierarchy_pop(); }
  HierarchyScope(const HierarchyScope&) = delete;
  HierarchyScope& operator=(const HierarchyScope&) = delete;
};

}  // namespace

Interconnect::Interconnect(const sc_core::sc_module_name& name, core::TimePs hop_latency_ps)
    : core::Module(name),
      in("in"),
      hop_latency_ps_(hop_latency_ps),
      transactions_(stats_.counter("transactions", "transactions routed (b_transport, BEGIN_REQ)")),
      decode_errors_(stats_.counter("decode_errors", "transactions to no mapped region")) {
  in.register_b_transport(this, &Interconnect::b_transport);
  in.register_nb_transport_fw(this, &Interconnect::nb_transport_fw);
  in.register_transport_dbg(this, &Interconnect::transport_dbg);
  in.register_get_direct_mem_ptr(this, &Interconnect::get_direct_mem_ptr);
}

Interconnect::~Interconnect() = default;

void Interconnect::map(std::uint64_t base, std::uint64_t size, tlm::tlm_target_socket<>& target,
                       const std::string& name) {
  const std::string where =
      std::string(this->name()) + ": map '" + name + "' [" + hex(base) + ", +" + hex(size) + ")";
  const auto status = sc_core::sc_get_status();
  if (status != sc_core::SC_ELABORATION && status != sc_core::SC_BEFORE_END_OF_ELABORATION) {
    throw std::logic_error(where + ": regions can only be mapped during elaboration");
  }
  if (size == 0) throw std::invalid_argument(where + ": size is 0");
  if (base + (size - 1) < base) throw std::invalid_argument(where + ": wraps around 2^64");
  const std::uint64_t last = base + (size - 1);
  for (const Region& r : regions_) {
    const std::uint64_t r_last = r.base + (r.size - 1);
    if (base <= r_last && r.base <= last) {
      throw std::invalid_argument(where + " overlaps '" + r.name + "' [" + hex(r.base) + ", +" +
                                  hex(r.size) + ")");
    }
  }

  {
    HierarchyScope scope(this);
    outs_.push_back(std::make_unique<OutSocket>(object_name(name).c_str()));
  }
  OutSocket& out = *outs_.back();
  const int index = static_cast<int>(outs_.size() - 1);
  out.register_nb_transport_bw(this, &Interconnect::nb_transport_bw, index);
  out.register_invalidate_direct_mem_ptr(this, &Interconnect::invalidate_direct_mem_ptr, index);
  out.bind(target);
  out_base_.push_back(base);

  Region region{base, size, outs_.size() - 1, name};
  regions_.insert(
      std::upper_bound(regions_.begin(), regions_.end(), region,
                       [](const Region& a, const Region& b) { return a.base < b.base; }),
      std::move(region));
}

long Interconnect::decode(std::uint64_t addr, std::uint64_t len) const {
  auto it = std::upper_bound(regions_.begin(), regions_.end(), addr,
                             [](std::uint64_t a, const Region& r) { return a < r.base; });
  if (it == regions_.begin()) return -1;
  --it;
  const std::uint64_t off = addr - it->base;
  if (len == 0) len = 1;
  if (off >= it->size || len > it->size - off) return -1;
  return it - regions_.begin();
}

long Interconnect::decode_or_fail(tlm::tlm_generic_payload& trans) {
  const std::uint64_t len = trans.get_data_length();
  const std::uint64_t width = trans.get_streaming_width();
  const std::uint64_t span = (width != 0 && width < len) ? width : len;
  const long r = decode(trans.get_address(), span);
  if (r < 0) {
    ++decode_errors_;
    VTOE_LOG(log_, Debug) << "decode error at " << hex(trans.get_address()) << " len " << len;
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
  return r;
}

void Interconnect::b_transport(int /*id*/, tlm::tlm_generic_payload& trans,
                               sc_core::sc_time& delay) {
  const long r = decode_or_fail(trans);
  if (r < 0) return;
  const Region& region = regions_[static_cast<std::size_t>(r)];
  ++transactions_;
  const std::uint64_t addr = trans.get_address();
  trans.set_address(addr - region.base);
  delay += core::ps(hop_latency_ps_);
  (*outs_[region.target])->b_transport(trans, delay);
  trans.set_address(addr);
}

tlm::tlm_sync_enum Interconnect::nb_transport_fw(int id, tlm::tlm_generic_payload& trans,
                                                 tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase == tlm::BEGIN_REQ) {
    const long r = decode_or_fail(trans);
    if (r < 0) {
      delay += core::ps(hop_latency_ps_);
      return tlm::TLM_COMPLETED;
    }
    const Region& region = regions_[static_cast<std::size_t>(r)];
    ++transactions_;
    const std::uint64_t addr = trans.get_address();
    trans.set_address(addr - region.base);
    delay += core::ps(hop_latency_ps_);
    const tlm::tlm_sync_enum status = (*outs_[region.target])->nb_transport_fw(trans, phase, delay);
    if (status == tlm::TLM_COMPLETED || (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
      trans.set_address(addr);
    }
    if (status != tlm::TLM_COMPLETED) pending_[&trans] = Pending{id, region.target, region.base};
    return status;
  }
  // Later phases (END_RESP) of a four-phase transaction go back to the target that owns it.
  auto it = pending_.find(&trans);
  if (it == pending_.end()) {
    SC_REPORT_ERROR(name(), "nb_transport_fw: phase for a transaction not in flight");
    return tlm::TLM_COMPLETED;
  }
  const std::size_t target = it->second.target;
  const bool last = (phase == tlm::END_RESP);
  const tlm::tlm_sync_enum status = (*outs_[target])->nb_transport_fw(trans, phase, delay);
  if (last || status == tlm::TLM_COMPLETED) pending_.erase(&trans);
  return status;
}

tlm::tlm_sync_enum Interconnect::nb_transport_bw(int /*target*/, tlm::tlm_generic_payload& trans,
                                                 tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  auto it = pending_.find(&trans);
  if (it == pending_.end()) {
    SC_REPORT_ERROR(name(), "nb_transport_bw: transaction not in flight");
    return tlm::TLM_COMPLETED;
  }
  const Pending p = it->second;
  if (phase == tlm::BEGIN_RESP) trans.set_address(trans.get_address() + p.base);
  const tlm::tlm_sync_enum status = in[p.initiator]->nb_transport_bw(trans, phase, delay);
  if (status == tlm::TLM_COMPLETED) pending_.erase(&trans);
  return status;
}

unsigned int Interconnect::transport_dbg(int /*id*/, tlm::tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address();
  const long r = decode(addr, 1);
  if (r < 0) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  const Region& region = regions_[static_cast<std::size_t>(r)];
  const unsigned int len = trans.get_data_length();
  const std::uint64_t room = region.size - (addr - region.base);
  if (len > room) trans.set_data_length(static_cast<unsigned int>(room));  // debug may truncate
  trans.set_address(addr - region.base);
  const unsigned int n = (*outs_[region.target])->transport_dbg(trans);
  trans.set_address(addr);
  trans.set_data_length(len);
  return n;
}

bool Interconnect::get_direct_mem_ptr(int /*id*/, tlm::tlm_generic_payload& trans,
                                      tlm::tlm_dmi& dmi) {
  const std::uint64_t addr = trans.get_address();
  const long r = decode(addr, 1);
  if (r < 0) {
    dmi.allow_none();
    dmi.set_start_address(addr);
    dmi.set_end_address(addr);
    return false;
  }
  const Region& region = regions_[static_cast<std::size_t>(r)];
  trans.set_address(addr - region.base);
  const bool ok = (*outs_[region.target])->get_direct_mem_ptr(trans, dmi);
  trans.set_address(addr);
  // Back to initiator addresses, clipped to the region.
  const std::uint64_t last_off = region.size - 1;
  const std::uint64_t start = dmi.get_start_address();
  const std::uint64_t end = std::min<std::uint64_t>(dmi.get_end_address(), last_off);
  dmi.set_start_address(region.base + start);
  dmi.set_end_address(region.base + end);
  return ok;
}

void Interconnect::invalidate_direct_mem_ptr(int target, sc_dt::uint64 start, sc_dt::uint64 end) {
  const std::size_t t = static_cast<std::size_t>(target);
  const std::uint64_t base = out_base_[t];
  std::uint64_t size = 0;
  for (const Region& r : regions_) {
    if (r.target == t) size = r.size;
  }
  if (start >= size) return;
  const std::uint64_t last = std::min<std::uint64_t>(end, size - 1);
  for (unsigned int i = 0; i < in.size(); ++i) {
    in[static_cast<int>(i)]->invalidate_direct_mem_ptr(base + start, base + last);
  }
}

}  // namespace vtoe::mem
