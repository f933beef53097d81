#include "models/mem/interconnect.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace vtoe::mem {

Arbitration parse_arbitration(const std::string& text) {
  if (text == "round_robin") return Arbitration::RoundRobin;
  if (text == "weighted") return Arbitration::Weighted;
  throw std::invalid_argument("unknown bus arbitration '" + text +
                              "' (expected round_robin or weighted)");
}

const char* to_string(Arbitration a) {
  return a == Arbitration::Weighted ? "weighted" : "round_robin";
}

std::vector<std::uint32_t> parse_weights(const std::string& text) {
  std::vector<std::uint32_t> out;
  if (text.find_first_not_of(" ") == std::string::npos) return out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto b = item.find_first_not_of(' ');
    const auto e = item.find_last_not_of(' ');
    const std::string t = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    const bool digits =
        !t.empty() && t.size() <= 6 && t.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoul(t) == 0) {
      throw std::invalid_argument("expected comma-separated positive integers, got \"" + text +
                                  "\"");
    }
    out.push_back(static_cast<std::uint32_t>(std::stoul(t)));
  }
  return out;
}

const std::vector<core::Param<InterconnectParams>>& interconnect_params() {
  using core::ParamKind;
  using P = InterconnectParams;
  static const std::vector<core::Param<P>> params = {
      core::param<P>(
          ParamKind::Time, "platform.bus_latency", "10ns",
          "Latency the interconnect adds to each transaction",
          [](P & s) -> auto& { return s.hop_latency_ps; }),
      // Approximately-timed mode only (platform.timing = at).
      core::param<P>(
          ParamKind::Bytes, "platform.bus_width", "16B",
          "AT timing: bytes the interconnect's fabric moves per clock cycle (a request "
          "of N bytes holds it ceil(N / width) cycles)",
          [](P & s) -> auto& { return s.width_bytes; })
          .range("1B", "4KiB"),
      core::param<P>(
          ParamKind::Frequency, "platform.bus_clock", "1GHz",
          "AT timing: clock of the interconnect's fabric",
          [](P & s) -> auto& { return s.clock_hz; })
          .above("0Hz"),
      core::enum_param<P>(
          "platform.bus_arbitration", {"round_robin", "weighted"}, "round_robin",
          "AT timing: arbitration between the interconnect's initiators: round robin, or "
          "weighted round robin by platform.bus_weights",
          [](P & s) -> auto& { return s.arbitration; }, parse_arbitration,
          [](Arbitration a) { return to_string(a); }),
      core::param<P>(
          ParamKind::String, "platform.bus_weights", "",
          "AT timing, weighted arbitration: grants per round of each initiator port, "
          "comma separated in port order (e.g. 3,1); ports without an entry get 1",
          [](P & s) -> auto& { return s.weights; })
          .validate([](const core::ParamValue& v) { parse_weights(std::get<std::string>(v)); },
                    "comma-separated positive integers"),
  };
  return params;
}

namespace {

InterconnectParams lt_params(core::TimePs hop_latency_ps) {
  InterconnectParams p;
  p.hop_latency_ps = hop_latency_ps;
  return p;
}

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
    : Interconnect(name, lt_params(hop_latency_ps)) {}

Interconnect::Interconnect(const sc_core::sc_module_name& name, const InterconnectParams& params)
    : core::Module(name),
      in("in"),
      params_(params),
      hop_latency_ps_(params.hop_latency_ps),
      transactions_(stats_.counter("transactions", "transactions routed (b_transport, BEGIN_REQ)")),
      decode_errors_(stats_.counter("decode_errors", "transactions to no mapped region")) {
  hop_latency_ = core::ps(hop_latency_ps_);  // the time resolution is checked by now
  in.register_b_transport(this, &Interconnect::b_transport);
  in.register_nb_transport_fw(this, &Interconnect::nb_transport_fw);
  in.register_transport_dbg(this, &Interconnect::transport_dbg);
  in.register_get_direct_mem_ptr(this, &Interconnect::get_direct_mem_ptr);
  if (params_.at) {
    const std::string me = this->name();
    if (params_.width_bytes == 0) throw std::invalid_argument(me + ": bus width is 0");
    if (!(params_.clock_hz > 0)) throw std::invalid_argument(me + ": bus clock must be > 0");
    try {
      weights_ = parse_weights(params_.weights);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(me + ": bus weights: " + e.what());
    }
    peq_ = std::make_unique<tlm_utils::peq_with_cb_and_phase<Interconnect>>(this,
                                                                            &Interconnect::peq_cb);
    // AT statistics only in AT mode (LT results stay as they were); grants_<port> come at the
    // end of elaboration, when the number of initiator ports is known.
    arbitration_wait_ = &stats_.accumulator(
        "arbitration_wait_ps", "ps from a request's arrival to its grant of the fabric");
    SC_METHOD(arbitrate);
    sensitive << arbitrate_;
    dont_initialize();
  }
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

long Interconnect::decode(std::uint64_t addr, std::uint64_t len, std::size_t& hint) const {
  if (len == 0) len = 1;
  if (hint < regions_.size()) {
    const Region& last = regions_[hint];
    const std::uint64_t off = addr - last.base;
    if (addr >= last.base && off < last.size && len <= last.size - off)
      return static_cast<long>(hint);
  }
  auto it = std::upper_bound(regions_.begin(), regions_.end(), addr,
                             [](std::uint64_t a, const Region& r) { return a < r.base; });
  if (it == regions_.begin()) return -1;
  --it;
  const std::uint64_t off = addr - it->base;
  if (off >= it->size || len > it->size - off) return -1;
  hint = static_cast<std::size_t>(it - regions_.begin());
  return static_cast<long>(hint);
}

// decode_or_fail() past the port's last region: the search, or the error.
long Interconnect::decode_elsewhere(int id, tlm::tlm_generic_payload& trans) {
  const std::uint64_t len = trans.get_data_length();
  const std::uint64_t width = trans.get_streaming_width();
  const std::uint64_t span = (width != 0 && width < len) ? width : len;
  const long r = decode(trans.get_address(), span, last_region(id));
  if (r < 0) {
    ++decode_errors_;
    VTOE_LOG(log_, Debug) << "decode error at " << hex(trans.get_address()) << " len " << len;
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
  return r;
}

void Interconnect::b_transport(int id, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const long r = decode_or_fail(id, trans);
  if (r < 0) return;
  const Region& region = regions_[static_cast<std::size_t>(r)];
  ++transactions_;
  const std::uint64_t addr = trans.get_address();
  trans.set_address(addr - region.base);
  if (params_.at) {  // book the fabric behind what is booked already, then the hop
    const std::size_t port = static_cast<std::size_t>(id);
    const core::TimePs arrival = core::now_ps() + core::to_ps(delay);
    const core::TimePs grant = std::max(arrival, fabric_free_);
    const core::TimePs occupancy = occupancy_ps(trans);
    fabric_free_ = grant + occupancy;
    if (port < grants_.size()) ++*grants_[port];
    arbitration_wait_->sample(static_cast<double>(grant - arrival));
    delay += core::ps(grant - arrival + occupancy + hop_latency_ps_);
  } else {
    delay += hop_latency_;
  }
  (*outs_[region.target])->b_transport(trans, delay);
  trans.set_address(addr);
}

tlm::tlm_sync_enum Interconnect::nb_transport_fw(int id, tlm::tlm_generic_payload& trans,
                                                 tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (params_.at && phase == tlm::BEGIN_REQ) return nb_transport_fw_at(id, trans, phase, delay);
  if (phase == tlm::BEGIN_REQ) {
    const long r = decode_or_fail(id, trans);
    if (r < 0) {
      delay += hop_latency_;
      return tlm::TLM_COMPLETED;
    }
    const Region& region = regions_[static_cast<std::size_t>(r)];
    ++transactions_;
    const std::uint64_t addr = trans.get_address();
    trans.set_address(addr - region.base);
    delay += hop_latency_;
    const tlm::tlm_sync_enum status = (*outs_[region.target])->nb_transport_fw(trans, phase, delay);
    if (status == tlm::TLM_COMPLETED || (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
      trans.set_address(addr);
    }
    if (status != tlm::TLM_COMPLETED)
      pending_.insert(&trans, Pending{id, region.target, region.base});
    return status;
  }
  // Later phases (END_RESP) of a four-phase transaction go back to the target that owns it.
  const Pending* it = pending_.find(&trans);
  if (it == nullptr) {
    SC_REPORT_ERROR(name(), "nb_transport_fw: phase for a transaction not in flight");
    return tlm::TLM_COMPLETED;
  }
  if (it->target_done) {  // AT: the target completed early, the response was ours
    pending_.erase(&trans);
    return tlm::TLM_COMPLETED;
  }
  const std::size_t target = it->target;
  const bool last = (phase == tlm::END_RESP);
  const tlm::tlm_sync_enum status = (*outs_[target])->nb_transport_fw(trans, phase, delay);
  if (last || status == tlm::TLM_COMPLETED) pending_.erase(&trans);
  return status;
}

tlm::tlm_sync_enum Interconnect::nb_transport_bw(int /*target*/, tlm::tlm_generic_payload& trans,
                                                 tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (params_.at) return nb_transport_bw_at(trans, phase, delay);
  const Pending* it = pending_.find(&trans);
  if (it == nullptr) {
    SC_REPORT_ERROR(name(), "nb_transport_bw: transaction not in flight");
    return tlm::TLM_COMPLETED;
  }
  const Pending p = *it;
  if (phase == tlm::BEGIN_RESP) trans.set_address(trans.get_address() + p.base);
  const tlm::tlm_sync_enum status = in[p.initiator]->nb_transport_bw(trans, phase, delay);
  if (status == tlm::TLM_COMPLETED) pending_.erase(&trans);
  return status;
}

unsigned int Interconnect::transport_dbg(int id, tlm::tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address();
  const long r = decode(addr, 1, last_region(id));
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

bool Interconnect::get_direct_mem_ptr(int id, tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) {
  const std::uint64_t addr = trans.get_address();
  const long r = decode(addr, 1, last_region(id));
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

// --- Approximately-timed mode ---------------------------------------------------------------

void Interconnect::end_of_elaboration() {
  if (!params_.at) return;
  queues_.resize(in.size());
  target_busy_.assign(outs_.size(), nullptr);
  for (unsigned int i = 0; i < in.size(); ++i) {
    grants_.push_back(&stats_.counter("grants_" + std::to_string(i),
                                      "fabric grants to initiator port " + std::to_string(i)));
  }
  rr_credit_ = weight(0);
}

core::TimePs Interconnect::occupancy_ps(const tlm::tlm_generic_payload& trans) const {
  const std::uint64_t len = trans.get_data_length();
  const std::uint64_t cycles =
      std::max<std::uint64_t>(1, (len + params_.width_bytes - 1) / params_.width_bytes);
  return core::cycles_to_ps(static_cast<double>(cycles), params_.clock_hz);
}

std::uint32_t Interconnect::weight(std::size_t port) const {
  if (params_.arbitration == Arbitration::RoundRobin || port >= weights_.size()) return 1;
  return weights_[port];
}

tlm::tlm_sync_enum Interconnect::nb_transport_fw_at(int id, tlm::tlm_generic_payload& trans,
                                                    tlm::tlm_phase& phase,
                                                    sc_core::sc_time& delay) {
  const long r = decode_or_fail(id, trans);
  if (r < 0) {
    delay += core::ps(hop_latency_ps_);
    phase = tlm::END_RESP;
    return tlm::TLM_COMPLETED;
  }
  const Region& region = regions_[static_cast<std::size_t>(r)];
  ++transactions_;
  Pending& p = pending_.insert(&trans, Pending{id, region.target, region.base});
  if (delay == sc_core::SC_ZERO_TIME) {
    enqueue(trans, p);
  } else {
    peq_->notify(trans, phase, delay);  // joins its port's queue at its annotated time
  }
  return tlm::TLM_ACCEPTED;
}

void Interconnect::peq_cb(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase) {
  Pending* it = pending_.find(&trans);
  if (it == nullptr) {
    SC_REPORT_ERROR(name(), "internal: event for a transaction not in flight");
    return;
  }
  Pending& p = *it;
  if (phase == tlm::BEGIN_REQ && p.state == Pending::State::Arriving) {
    enqueue(trans, p);
  } else if (phase == tlm::BEGIN_REQ) {  // granted, through the fabric and the hop
    send_downstream(trans);
  } else if (phase == tlm::END_REQ) {  // the target's END_REQ, at its annotated time
    target_accepted(trans);
  } else if (phase == tlm::BEGIN_RESP) {  // the target completed early: respond in its place
    respond_for_target(trans);
  }
}

void Interconnect::enqueue(tlm::tlm_generic_payload& trans, Pending& p) {
  p.state = Pending::State::Queued;
  p.queued_at = core::now_ps();
  queues_[static_cast<std::size_t>(p.initiator)].push_back(&trans);
  ++queued_;
  arbitrate_.notify(sc_core::SC_ZERO_TIME);
}

// The arbiter decides at the end of a time step, once no other process is runnable at this
// instant (bounded, so two such arbiters cannot wait for each other forever): requests posted at
// the same instant the fabric frees — typically the next request of the initiator whose END_REQ
// just came — compete, as in a clocked arbiter sampling its request lines.
void Interconnect::arbitrate() {
  static constexpr int kSettleDeltas = 16;
  const core::TimePs now = core::now_ps();
  if (sc_core::sc_pending_activity_at_current_time() && settle_deltas_ < kSettleDeltas) {
    ++settle_deltas_;
    arbitrate_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  settle_deltas_ = 0;
  if (fabric_free_ > now) {
    arbitrate_.notify(core::ps(fabric_free_ - now));
    return;
  }
  const std::size_t n = queues_.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t port = (rr_next_ + k) % n;
    if (queues_[port].empty()) continue;
    tlm::tlm_generic_payload* trans = queues_[port].front();
    Pending& p = pending_.at(trans, name());
    if (target_busy_[p.target] != nullptr) continue;  // its target still owes an END_REQ
    if (port != rr_next_) {  // the port whose turn it was had nothing to send: next round
      rr_next_ = port;
      rr_credit_ = weight(port);
    }
    queues_[port].pop_front();
    --queued_;
    p.state = Pending::State::Granted;
    target_busy_[p.target] = trans;
    ++*grants_[port];
    arbitration_wait_->sample(static_cast<double>(now - p.queued_at));
    const core::TimePs occupancy = occupancy_ps(*trans);
    fabric_free_ = now + occupancy;
    peq_->notify(*trans, tlm::BEGIN_REQ, core::ps(occupancy + hop_latency_ps_));
    if (--rr_credit_ == 0) {
      rr_next_ = (port + 1) % n;
      rr_credit_ = weight(rr_next_);
    }
    // The next grant, if anything is left then (a request arriving later notifies the arbiter
    // itself, which then waits for the fabric).
    if (queued_ != 0) arbitrate_.notify(core::ps(occupancy));
    return;
  }
}

void Interconnect::send_downstream(tlm::tlm_generic_payload& trans) {
  Pending& p = pending_.at(&trans, name());
  p.state = Pending::State::Downstream;
  const std::uint64_t addr = trans.get_address();
  trans.set_address(addr - p.base);
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum st = (*outs_[p.target])->nb_transport_fw(trans, phase, delay);
  if (st == tlm::TLM_ACCEPTED) return;  // END_REQ comes on the backward path
  if (st == tlm::TLM_COMPLETED) {       // early completion (an LT target, or an error)
    trans.set_address(addr);
    p.target_done = true;
    target_accepted(trans);
    peq_->notify(trans, tlm::BEGIN_RESP, delay);
    return;
  }
  if (phase == tlm::END_REQ) {
    if (delay == sc_core::SC_ZERO_TIME) {
      target_accepted(trans);
    } else {
      peq_->notify(trans, tlm::END_REQ, delay);
    }
    return;
  }
  if (phase == tlm::BEGIN_RESP) {  // END_REQ implied, the response is here already
    const std::size_t target = p.target;
    target_accepted(trans);
    tlm::tlm_phase resp = tlm::BEGIN_RESP;
    const tlm::tlm_sync_enum back = nb_transport_bw_at(trans, resp, delay);  // may erase p
    if (back == tlm::TLM_COMPLETED || resp == tlm::END_RESP) {
      tlm::tlm_phase end = tlm::END_RESP;
      (*outs_[target])->nb_transport_fw(trans, end, delay);
    }
    return;
  }
  SC_REPORT_ERROR(name(), "nb_transport_fw: the target answered BEGIN_REQ with a bad phase");
}

void Interconnect::target_accepted(tlm::tlm_generic_payload& trans) {
  const Pending& p = pending_.at(&trans, name());
  if (target_busy_[p.target] == &trans) target_busy_[p.target] = nullptr;
  if (queued_ != 0) arbitrate_.notify(sc_core::SC_ZERO_TIME);  // the target may take the next
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  in[p.initiator]->nb_transport_bw(trans, phase, delay);
}

void Interconnect::respond_for_target(tlm::tlm_generic_payload& trans) {
  Pending& p = pending_.at(&trans, name());
  p.state = Pending::State::Responding;
  tlm::tlm_phase phase = tlm::BEGIN_RESP;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum st = in[p.initiator]->nb_transport_bw(trans, phase, delay);
  if (st == tlm::TLM_COMPLETED || phase == tlm::END_RESP) pending_.erase(&trans);
  // TLM_ACCEPTED: END_RESP comes on the forward path and is answered there.
}

tlm::tlm_sync_enum Interconnect::nb_transport_bw_at(tlm::tlm_generic_payload& trans,
                                                    tlm::tlm_phase& phase,
                                                    sc_core::sc_time& delay) {
  const Pending* it = pending_.find(&trans);
  if (it == nullptr) {
    SC_REPORT_ERROR(name(), "nb_transport_bw: transaction not in flight");
    return tlm::TLM_COMPLETED;
  }
  if (phase == tlm::END_REQ) {
    if (delay == sc_core::SC_ZERO_TIME) {
      target_accepted(trans);
    } else {
      peq_->notify(trans, tlm::END_REQ, delay);
    }
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::BEGIN_RESP) {
    const Pending p = *it;
    if (target_busy_[p.target] == &trans) target_accepted(trans);  // END_REQ implied
    trans.set_address(trans.get_address() + p.base);
    const tlm::tlm_sync_enum status = in[p.initiator]->nb_transport_bw(trans, phase, delay);
    if (status == tlm::TLM_COMPLETED || phase == tlm::END_RESP) pending_.erase(&trans);
    return status;
  }
  SC_REPORT_ERROR(name(), "nb_transport_bw: unexpected phase from a target");
  return tlm::TLM_COMPLETED;
}

}  // namespace vtoe::mem
