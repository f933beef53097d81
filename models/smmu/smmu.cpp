#include "models/smmu/smmu.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace vtoe::smmu {

const std::vector<core::Param<SmmuParams>>& smmu_params() {
  using core::ParamKind;
  using P = SmmuParams;
  static const std::vector<core::Param<P>> params = {
      core::param<P>(
          ParamKind::Uint, "platform.smmu.tlb_entries", "32",
          "SystemMMU TLB entries per stream (4 KiB pages); 0 = no TLB",
          [](P & s) -> auto& { return s.tlb_entries; })
          .range("0", "65536"),
      core::param<P>(
          ParamKind::Time, "platform.smmu.hit_latency", "0s",
          "SystemMMU time added per page of a DMA on a TLB hit",
          [](P & s) -> auto& { return s.hit_latency_ps; }),
      core::param<P>(
          ParamKind::Time, "platform.smmu.walk_latency", "100ns",
          "SystemMMU time added per page of a DMA on a TLB miss (a stage-2 walk)",
          [](P & s) -> auto& { return s.walk_latency_ps; }),
  };
  return params;
}

Smmu::Smmu(const sc_core::sc_module_name& name, const SmmuParams& params)
    : core::Module(name),
      upstream("upstream"),
      downstream("downstream"),
      params_(params),
      transactions_(stats_.counter("transactions", "transactions translated and forwarded")),
      bytes_(stats_.counter("bytes", "bytes forwarded (translated or bypassed)")),
      pieces_(stats_.counter("pieces", "downstream transactions issued for translated ones")),
      bypassed_(stats_.counter("bypassed", "transactions forwarded untranslated in bypass mode")),
      tlb_hits_(stats_.counter("tlb_hits", "page translations served by a TLB")),
      tlb_misses_(stats_.counter("tlb_misses", "page translations that walked the stage-2 table")),
      walk_reads_(
          stats_.counter("walk_reads", "table descriptors read from memory by walks (timing at)")),
      tlb_flushes_(stats_.counter("tlb_flushes", "per-stream TLB flushes")),
      faults_unmapped_(stats_.counter("faults_unmapped", "DMA to an IPA with no mapping")),
      faults_permission_(
          stats_.counter("faults_permission", "DMA not allowed by the mapping's permissions")),
      faults_no_context_(stats_.counter("faults_no_context", "DMA from a stream with no context")),
      faults_no_sideband_(
          stats_.counter("faults_no_sideband", "DMA without a SidebandExtension (no stream)")),
      fault_records_dropped_(
          stats_.counter("fault_records_dropped", "fault records lost to a full fault queue")),
      burst_errors_(
          stats_.counter("burst_errors", "streaming bursts whose window is not contiguous in PA")) {
  upstream.register_b_transport(this, &Smmu::b_transport);
  upstream.register_transport_dbg(this, &Smmu::transport_dbg);
  upstream.register_get_direct_mem_ptr(this, &Smmu::get_direct_mem_ptr);
  upstream.register_nb_transport_fw(this, &Smmu::nb_transport_fw);
  downstream.register_nb_transport_bw(this, &Smmu::nb_transport_bw);
}

void Smmu::set_context(std::uint32_t stream, std::shared_ptr<const Stage2Table> table,
                       std::uint16_t vm_id) {
  if (!table) {
    throw std::invalid_argument(std::string(name()) + ": set_context(stream " +
                                std::to_string(stream) + "): null stage-2 table");
  }
  Context& ctx = contexts_[stream];
  ctx.generation = table->generation();
  ctx.table = std::move(table);
  ctx.vm_id = vm_id;
  ctx.stream = stream;
  ctx.tlb.clear();
  ++tlb_flushes_;
}

void Smmu::clear_context(std::uint32_t stream) {
  if (contexts_.erase(stream) != 0) ++tlb_flushes_;
}

void Smmu::tlb_invalidate(std::uint32_t stream) {
  auto it = contexts_.find(stream);
  if (it == contexts_.end()) return;
  it->second.tlb.clear();
  ++tlb_flushes_;
}

void Smmu::tlb_invalidate_all() {
  for (auto& [stream, ctx] : contexts_) {
    ctx.tlb.clear();
    ++tlb_flushes_;
  }
}

std::size_t Smmu::tlb_occupancy(std::uint32_t stream) const {
  auto it = contexts_.find(stream);
  return it == contexts_.end() ? 0 : it->second.tlb.size();
}

std::optional<Fault> Smmu::pop_fault() {
  if (faults_.empty()) return std::nullopt;
  Fault f = faults_.front();
  faults_.pop_front();
  return f;
}

bool Smmu::tlb_translate(Context& ctx, std::uint64_t ipa, bool write, std::uint64_t& pa,
                         core::TimePs& latency, TranslationFault& fault) {
  const std::uint64_t page = ipa >> kPageBits;
  const std::uint64_t offset = ipa & kPageMask;
  for (TlbEntry& e : ctx.tlb) {
    if (e.ipa_page != page) continue;
    ++tlb_hits_;
    latency += params_.hit_latency_ps;
    e.last_use = ++ctx.use_clock;
    if (!e.perm.allows(write)) {
      fault = {FaultKind::Permission, ipa};
      return false;
    }
    pa = (e.pa_page << kPageBits) | offset;
    return true;
  }
  ++tlb_misses_;
  latency += walk_size_ > 0 ? walk(ctx, page, latency) : params_.walk_latency_ps;
  const std::optional<Region> region = ctx.table->region_at(ipa);
  if (!region) {
    fault = {FaultKind::Unmapped, ipa};
    return false;
  }
  const std::uint64_t page_pa = region->pa + ((ipa & ~kPageMask) - region->ipa);
  if (params_.tlb_entries > 0) {
    const TlbEntry entry{page, page_pa >> kPageBits, region->perm, ++ctx.use_clock};
    if (ctx.tlb.size() < params_.tlb_entries) {
      ctx.tlb.push_back(entry);
    } else {
      auto lru = std::min_element(
          ctx.tlb.begin(), ctx.tlb.end(),
          [](const TlbEntry& a, const TlbEntry& b) { return a.last_use < b.last_use; });
      *lru = entry;
    }
  }
  if (!region->perm.allows(write)) {
    fault = {FaultKind::Permission, ipa};
    return false;
  }
  pa = page_pa | offset;
  return true;
}

core::TimePs Smmu::walk(const Context& ctx, std::uint64_t page, core::TimePs latency) {
  // Two descriptor reads, the second after the first: the level-1 entry for the page's 2 MiB
  // block, then the level-2 entry for the page, in the stream's 8 KiB of table memory.
  const std::uint64_t table = (static_cast<std::uint64_t>(ctx.stream) * 8192) % walk_size_;
  const std::uint64_t reads[2] = {table + ((page >> 9) & 511) * 8,
                                  (table + 4096 + (page & 511) * 8) % walk_size_};
  const core::TimePs start = walk_offset_ps_ + latency;  // after `now`, when the walk begins
  sc_core::sc_time at = core::ps(start);
  for (const std::uint64_t off : reads) {
    std::uint64_t descriptor = 0;
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(walk_base_ + off);
    gp.set_data_ptr(reinterpret_cast<unsigned char*>(&descriptor));
    gp.set_data_length(8);
    gp.set_streaming_width(8);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    downstream->b_transport(gp, at);
    ++walk_reads_;
  }
  return core::to_ps(at) - start;
}

bool Smmu::translate(Context& ctx, std::uint64_t addr, std::uint64_t span, bool write, bool timed,
                     std::vector<Piece>& pieces, core::TimePs& latency, TranslationFault& fault) {
  pieces.clear();
  if (span == 0) span = 1;
  const std::uint64_t last = addr + (span - 1);
  if (last < addr) {  // wraps around 2^64
    fault = {FaultKind::Unmapped, addr};
    return false;
  }
  std::uint64_t cur = addr;
  while (true) {
    const std::uint64_t page_last = cur | kPageMask;
    const std::uint64_t piece_last = std::min(page_last, last);
    std::uint64_t pa = 0;
    if (timed) {
      if (!tlb_translate(ctx, cur, write, pa, latency, fault)) return false;
    } else {
      const std::optional<Translation> t = ctx.table->translate(cur, write, &fault);
      if (!t) return false;
      pa = t->pa;
    }
    const std::uint64_t n = piece_last - cur + 1;
    if (!pieces.empty() && pieces.back().pa + pieces.back().len == pa) {
      pieces.back().len += n;
    } else {
      pieces.push_back(Piece{cur - addr, pa, n});
    }
    if (piece_last == last) return true;
    cur = piece_last + 1;
  }
}

void Smmu::record_fault(const Fault& fault) {
  switch (fault.kind) {
    case FaultKind::Unmapped:
      ++faults_unmapped_;
      break;
    case FaultKind::Permission:
      ++faults_permission_;
      break;
    case FaultKind::NoContext:
      ++faults_no_context_;
      break;
    case FaultKind::NoSideband:
      ++faults_no_sideband_;
      break;
  }
  VTOE_LOG(log_, Debug) << to_string(fault.kind) << " fault: stream " << fault.stream << " vm "
                        << fault.vm << (fault.write ? " write" : " read") << " at 0x" << std::hex
                        << fault.address << " (fault address 0x" << fault.fault_address << ")"
                        << std::dec << " len " << fault.length;
  if (faults_.size() < params_.fault_queue_depth) {
    faults_.push_back(fault);
  } else {
    ++fault_records_dropped_;
  }
  if (fault_callback_) fault_callback_(fault);
}

void Smmu::forward(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay,
                   const std::vector<Piece>& pieces) {
  const std::uint64_t addr = trans.get_address();
  if (pieces.size() == 1) {  // the common case: only the address changes
    trans.set_address(pieces.front().pa);
    downstream->b_transport(trans, delay);
    trans.set_address(addr);
    trans.set_dmi_allowed(false);
    return;
  }
  unsigned char* const data = trans.get_data_ptr();
  const unsigned int len = trans.get_data_length();
  const unsigned int width = trans.get_streaming_width();
  unsigned char* const be = trans.get_byte_enable_ptr();
  const unsigned int be_len = trans.get_byte_enable_length();
  std::vector<unsigned char> piece_be;
  tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
  for (const Piece& p : pieces) {
    const auto n = static_cast<unsigned int>(p.len);
    trans.set_address(p.pa);
    trans.set_data_ptr(data + p.offset);
    trans.set_data_length(n);
    trans.set_streaming_width(n);
    if (be != nullptr && be_len >= len) {
      trans.set_byte_enable_ptr(be + p.offset);
      trans.set_byte_enable_length(n);
    } else if (be != nullptr && be_len > 0) {  // a repeating pattern: rotate it for this piece
      piece_be.resize(n);
      for (unsigned int i = 0; i < n; ++i) piece_be[i] = be[(p.offset + i) % be_len];
      trans.set_byte_enable_ptr(piece_be.data());
      trans.set_byte_enable_length(n);
    }
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    downstream->b_transport(trans, delay);
    status = trans.get_response_status();
    if (status != tlm::TLM_OK_RESPONSE) break;
  }
  trans.set_address(addr);
  trans.set_data_ptr(data);
  trans.set_data_length(len);
  trans.set_streaming_width(width);
  trans.set_byte_enable_ptr(be);
  trans.set_byte_enable_length(be_len);
  trans.set_response_status(status);
  trans.set_dmi_allowed(false);
}

void Smmu::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const std::uint64_t len = trans.get_data_length();
  if (bypass_) {
    ++bypassed_;
    bytes_ += len;
    downstream->b_transport(trans, delay);
    trans.set_dmi_allowed(false);
    return;
  }
  std::vector<Piece> pieces;
  if (prepare(trans, delay, pieces)) forward(trans, delay, pieces);
}

tlm::tlm_sync_enum Smmu::nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                         sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) {  // END_RESP: the transaction is over downstream too
    in_flight_.erase(&trans);
    return downstream->nb_transport_fw(trans, phase, delay);
  }
  const std::uint64_t addr = trans.get_address();
  std::vector<Piece>& pieces = fw_pieces_;  // reused: no allocation per transaction
  pieces.clear();
  if (bypass_) {
    ++bypassed_;
    bytes_ += trans.get_data_length();
    pieces.push_back({0, addr, trans.get_data_length()});
  } else if (!prepare(trans, delay, pieces)) {
    phase = tlm::END_RESP;
    return tlm::TLM_COMPLETED;  // a fault: nothing went downstream
  }
  if (pieces.size() > 1) {
    // Pieces of different pages go down one after another; a split transaction is served
    // loosely timed (still booking the memory system's resources) and completes at once.
    forward(trans, delay, pieces);
    phase = tlm::END_RESP;
    return tlm::TLM_COMPLETED;
  }
  trans.set_address(pieces.front().pa);
  in_flight_.insert(&trans, addr);
  const tlm::tlm_sync_enum status = downstream->nb_transport_fw(trans, phase, delay);
  if (status == tlm::TLM_COMPLETED) {
    in_flight_.erase(&trans);
    trans.set_address(addr);
  } else if (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP) {
    trans.set_address(addr);
  }
  return status;
}

tlm::tlm_sync_enum Smmu::nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                         sc_core::sc_time& delay) {
  const std::uint64_t* ipa = in_flight_.find(&trans);
  if (ipa == nullptr) {
    SC_REPORT_ERROR(name(), "nb_transport_bw: transaction not in flight");
    return tlm::TLM_COMPLETED;
  }
  if (phase == tlm::BEGIN_RESP) trans.set_address(*ipa);  // the initiator's IPA again
  const tlm::tlm_sync_enum status = upstream->nb_transport_bw(trans, phase, delay);
  if (status == tlm::TLM_COMPLETED) in_flight_.erase(&trans);
  return status;
}

bool Smmu::prepare(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay,
                   std::vector<Piece>& pieces) {
  const std::uint64_t len = trans.get_data_length();
  const std::uint64_t addr = trans.get_address();
  const bool write = trans.is_write();
  const std::uint64_t width = trans.get_streaming_width();
  const bool streaming = width != 0 && width < len;
  const std::uint64_t span = streaming ? width : len;

  Fault fault;
  fault.address = addr;
  fault.fault_address = addr;
  fault.length = static_cast<std::uint32_t>(len);
  fault.write = write;
  auto fail = [&](FaultKind kind) {
    fault.kind = kind;
    fault.time_ps = core::now_ps() + core::to_ps(delay);
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    record_fault(fault);
  };

  core::SidebandExtension* ext = nullptr;
  trans.get_extension(ext);
  if (ext == nullptr) {
    fail(FaultKind::NoSideband);
    return false;
  }
  fault.stream = ext->stream_id;
  fault.vm = ext->vm_id;
  auto it = contexts_.find(ext->stream_id);
  if (it == contexts_.end()) {
    fail(FaultKind::NoContext);
    return false;
  }
  Context& ctx = it->second;
  fault.vm = ctx.vm_id;
  if (ctx.table->generation() != ctx.generation) {  // the table changed under the TLB
    ctx.tlb.clear();
    ctx.generation = ctx.table->generation();
    ++tlb_flushes_;
  }

  core::TimePs latency = 0;
  TranslationFault tf;
  walk_offset_ps_ = core::to_ps(delay);
  const bool ok = translate(ctx, addr, span, write, /*timed=*/true, pieces, latency, tf);
  delay += core::ps(latency);
  if (!ok) {
    fault.fault_address = tf.ipa;
    fail(tf.kind);
    return false;
  }
  if (streaming && pieces.size() > 1) {
    ++burst_errors_;
    VTOE_LOG(log_, Debug) << "streaming burst at 0x" << std::hex << addr << std::dec
                          << " crosses a PA discontinuity";
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return false;
  }
  ++transactions_;
  bytes_ += len;
  pieces_ += pieces.size();
  return true;
}

unsigned int Smmu::transport_dbg(tlm::tlm_generic_payload& trans) {
  if (bypass_) return downstream->transport_dbg(trans);
  core::SidebandExtension* ext = nullptr;
  trans.get_extension(ext);
  auto it = ext ? contexts_.find(ext->stream_id) : contexts_.end();
  if (it == contexts_.end()) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  const std::uint64_t addr = trans.get_address();
  const unsigned int len = trans.get_data_length();
  std::vector<Piece> pieces;
  core::TimePs unused = 0;
  TranslationFault tf;
  // On a fault, `pieces` still holds the translatable prefix: debug accesses may be truncated.
  translate(it->second, addr, len, trans.is_write(), /*timed=*/false, pieces, unused, tf);
  if (pieces.empty()) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  if (len == 0) pieces.front().len = 0;
  unsigned char* const data = trans.get_data_ptr();
  unsigned int done = 0;
  for (const Piece& p : pieces) {
    const auto n = static_cast<unsigned int>(p.len);
    trans.set_address(p.pa);
    trans.set_data_ptr(data + p.offset);
    trans.set_data_length(n);
    const unsigned int got = downstream->transport_dbg(trans);
    done += got;
    if (got < n) break;
  }
  trans.set_address(addr);
  trans.set_data_ptr(data);
  trans.set_data_length(len);
  return done;
}

bool Smmu::get_direct_mem_ptr(tlm::tlm_generic_payload& /*trans*/, tlm::tlm_dmi& dmi) {
  // A device behind the SMMU never gets a pointer that would bypass translation.
  dmi.allow_none();
  dmi.set_start_address(0);
  dmi.set_end_address(std::numeric_limits<sc_dt::uint64>::max());
  return false;
}

}  // namespace vtoe::smmu
