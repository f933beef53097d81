#include "models/mem/dram.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace vtoe::mem {

const std::vector<core::Param<DramParams>>& dram_params() {
  using core::ParamKind;
  using P = DramParams;
  static const std::vector<core::Param<P>> params = {
      core::param<P>(ParamKind::Bandwidth, "platform.dram_bandwidth", "6.4Gbps",
                     "Peak DRAM bandwidth", [](P& s) -> auto& { return s.bandwidth_bps; })
          .above("0bps"),
      core::param<P>(ParamKind::Time, "platform.dram_latency", "50ns",
                     "DRAM access latency, added after the last byte of each transfer",
                     [](P& s) -> auto& { return s.latency_ps; }),
      core::param<P>(ParamKind::Bytes, "platform.dram_size", "1024MiB", "Physical DRAM size",
                     [](P& s) -> auto& { return s.size; })
          .at_least("1MiB"),
      core::param<P>(ParamKind::Time, "platform.dram_accept_delay", "0ns",
                     "DRAM command decode: a request is accepted (END_REQ) this long after it "
                     "arrives",
                     [](P& s) -> auto& { return s.accept_delay_ps; }),
      // Approximately-timed mode only (platform.timing = at).
      core::param<P>(ParamKind::Uint, "platform.dram_banks", "8",
                     "AT timing: DRAM banks, row-interleaved (bank = row % banks)",
                     [](P& s) -> auto& { return s.banks; })
          .range("1", "1024"),
      core::param<P>(ParamKind::Bytes, "platform.dram_row_size", "2KiB",
                     "AT timing: bytes per DRAM row (page); bursts split at row boundaries",
                     [](P& s) -> auto& { return s.row_size; })
          .range("64B", "1MiB"),
      core::param<P>(ParamKind::Time, "platform.dram_row_hit", "15ns",
                     "AT timing: access to a bank's open row (CAS latency)",
                     [](P& s) -> auto& { return s.row_hit_ps; }),
      core::param<P>(ParamKind::Time, "platform.dram_row_miss", "45ns",
                     "AT timing: access to another row (precharge + activate + CAS)",
                     [](P& s) -> auto& { return s.row_miss_ps; }),
      core::param<P>(ParamKind::Time, "platform.dram_refresh_interval", "7.8us",
                     "AT timing: a refresh every interval blocks all banks and closes their rows "
                     "(0 = no refresh)",
                     [](P& s) -> auto& { return s.refresh_interval_ps; }),
      core::param<P>(ParamKind::Time, "platform.dram_refresh_time", "350ns",
                     "AT timing: duration of one refresh, tRFC (< the refresh interval)",
                     [](P& s) -> auto& { return s.refresh_time_ps; }),
      core::param<P>(ParamKind::Uint, "platform.dram_queue_depth", "8",
                     "AT timing: requests accepted and not yet responded before END_REQ is "
                     "withheld (back-pressure)",
                     [](P& s) -> auto& { return s.queue_depth; })
          .range("1", "4096"),
      core::param<P>(ParamKind::Time, "platform.dram_response_delay", "0ns",
                     "AT timing: added after a request's last byte before BEGIN_RESP",
                     [](P& s) -> auto& { return s.response_delay_ps; }),
  };
  return params;
}

namespace {

std::string range_text(std::uint64_t addr, std::uint64_t len) {
  std::ostringstream s;
  s << "[0x" << std::hex << addr << ", 0x" << addr + len << ")";
  return s.str();
}

}  // namespace

Dram::Dram(const sc_core::sc_module_name& name, const DramParams& params)
    : core::Module(name),
      in("in"),
      params_(params),
      bytes_read_(stats_.counter("bytes_read", "bytes read through the TLM socket")),
      bytes_written_(stats_.counter("bytes_written", "bytes written through the TLM socket")),
      transactions_(stats_.counter("transactions", "TLM transactions served (read/write)")),
      busy_ps_(stats_.counter("busy_ps", "ps the channel spent transferring data")),
      address_errors_(stats_.counter("address_errors", "transactions outside the DRAM")) {
  if (params_.size == 0) throw std::invalid_argument(std::string(this->name()) + ": size is 0");
  if (!(params_.bandwidth_bps > 0)) {
    throw std::invalid_argument(std::string(this->name()) + ": bandwidth must be > 0");
  }
  pages_.resize(static_cast<std::size_t>((params_.size + kPageSize - 1) >> kPageBits));
  if (params_.at) {
    if (params_.queue_depth == 0) {
      throw std::invalid_argument(std::string(this->name()) + ": queue depth is 0");
    }
    try {
      timing_ = std::make_unique<DramTiming>(params_);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(this->name()) + ": " + e.what());
    }
    peq_ = std::make_unique<tlm_utils::peq_with_cb_and_phase<Dram>>(this, &Dram::peq_cb);
    // Registered in AT mode only: LT statistics (and results) stay as they were.
    row_hits_ = &stats_.counter("row_hits", "bursts' row pieces that found their row open");
    row_misses_ = &stats_.counter("row_misses", "row pieces that had to open their row");
    refreshes_ = &stats_.counter("refreshes", "refresh windows begun (up to the last command)");
    backpressure_ = &stats_.counter("backpressure", "requests whose END_REQ was withheld");
    queue_depth_ = &stats_.accumulator(
        "queue_depth", "requests outstanding (accepted, not responded) at each acceptance");
  }
  in.register_b_transport(this, &Dram::b_transport);
  in.register_nb_transport_fw(this, &Dram::nb_transport_fw);
  in.register_transport_dbg(this, &Dram::transport_dbg);
}

double Dram::utilisation(core::TimePs window) const {
  if (window == 0) return 0.0;
  const double u = static_cast<double>(busy_ps_.measured()) / static_cast<double>(window);
  return std::min(u, 1.0);
}

std::uint8_t* Dram::page_for_write(std::uint64_t page) {
  auto& p = pages_[static_cast<std::size_t>(page)];
  if (!p) {
    p.reset(new std::uint8_t[kPageSize]());  // value-initialised: zeros
    ++pages_allocated_;
  }
  return p.get();
}

void Dram::copy_out(std::uint64_t addr, std::uint8_t* dst, std::size_t len) const {
  while (len > 0) {
    const std::uint64_t page = addr >> kPageBits;
    const std::size_t off = static_cast<std::size_t>(addr & (kPageSize - 1));
    const std::size_t n = std::min(len, kPageSize - off);
    const auto& p = pages_[static_cast<std::size_t>(page)];
    if (p) {
      std::memcpy(dst, p.get() + off, n);
    } else {
      std::memset(dst, 0, n);
    }
    addr += n;
    dst += n;
    len -= n;
  }
}

void Dram::copy_in(std::uint64_t addr, const std::uint8_t* src, std::size_t len) {
  while (len > 0) {
    const std::uint64_t page = addr >> kPageBits;
    const std::size_t off = static_cast<std::size_t>(addr & (kPageSize - 1));
    const std::size_t n = std::min(len, kPageSize - off);
    std::memcpy(page_for_write(page) + off, src, n);
    addr += n;
    src += n;
    len -= n;
  }
}

void Dram::read(std::uint64_t addr, void* dst, std::size_t len) const {
  if (!in_range(addr, len)) {
    throw std::out_of_range(std::string(name()) + ": backdoor read " + range_text(addr, len) +
                            " outside DRAM of " + std::to_string(params_.size) + " bytes");
  }
  copy_out(addr, static_cast<std::uint8_t*>(dst), len);
}

void Dram::write(std::uint64_t addr, const void* src, std::size_t len) {
  if (!in_range(addr, len)) {
    throw std::out_of_range(std::string(name()) + ": backdoor write " + range_text(addr, len) +
                            " outside DRAM of " + std::to_string(params_.size) + " bytes");
  }
  copy_in(addr, static_cast<const std::uint8_t*>(src), len);
}

bool Dram::access(tlm::tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address();
  const std::size_t len = trans.get_data_length();
  std::uint8_t* data = trans.get_data_ptr();
  const std::uint8_t* be = trans.get_byte_enable_ptr();
  const std::size_t be_len = trans.get_byte_enable_length();
  std::size_t width = trans.get_streaming_width();
  if (width == 0) width = len;
  const bool is_read = trans.is_read();

  if (be == nullptr && width >= len) {  // the common case: one contiguous burst
    if (is_read) {
      copy_out(addr, data, len);
    } else {
      copy_in(addr, data, len);
    }
    return true;
  }
  if (be != nullptr && be_len == 0) return false;
  for (std::size_t i = 0; i < len; ++i) {
    if (be != nullptr && be[i % be_len] != TLM_BYTE_ENABLED) continue;
    const std::uint64_t a = addr + (i % width);
    if (is_read) {
      copy_out(a, data + i, 1);
    } else {
      copy_in(a, data + i, 1);
    }
  }
  return true;
}

void Dram::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (params_.at) {
    b_transport_at(trans, delay);
    return;
  }
  const tlm::tlm_command cmd = trans.get_command();
  const std::uint64_t len = trans.get_data_length();
  if (cmd == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  const std::uint64_t width = trans.get_streaming_width();
  const std::uint64_t span = (width != 0 && width < len) ? width : len;
  if (!in_range(trans.get_address(), span)) {
    ++address_errors_;
    VTOE_LOG(log_, Debug) << "address error at 0x" << std::hex << trans.get_address() << std::dec
                          << " len " << len;
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (len > 0 && trans.get_data_ptr() == nullptr) {
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  if (!access(trans)) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }

  // Timing: accept, queue behind the channel, transfer, then the access latency.
  const core::TimePs arrival = core::now_ps() + core::to_ps(delay);
  const core::TimePs start = std::max(arrival + params_.accept_delay_ps, busy_until_);
  const core::TimePs transfer = core::transfer_time_ps(len, params_.bandwidth_bps);
  busy_until_ = start + transfer;
  const core::TimePs done = busy_until_ + params_.latency_ps;
  delay += core::ps(done - arrival);

  ++transactions_;
  busy_ps_ += transfer;
  if (cmd == tlm::TLM_READ_COMMAND) {
    bytes_read_ += len;
  } else {
    bytes_written_ += len;
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

tlm::tlm_sync_enum Dram::nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                         sc_core::sc_time& delay) {
  if (params_.at) return nb_transport_fw_at(trans, phase, delay);
  if (phase != tlm::BEGIN_REQ) {
    // This target completes every request early, so an initiator never has a reason to send
    // END_RESP (or any other phase) to it.
    SC_REPORT_ERROR(name(), "nb_transport_fw: unexpected phase (only BEGIN_REQ is accepted)");
    return tlm::TLM_COMPLETED;
  }
  b_transport(trans, delay);
  phase = tlm::END_RESP;
  return tlm::TLM_COMPLETED;
}

// --- Approximately-timed mode ---------------------------------------------------------------

bool Dram::admissible(tlm::tlm_generic_payload& trans) {
  const std::uint64_t len = trans.get_data_length();
  const std::uint64_t width = trans.get_streaming_width();
  const std::uint64_t span = (width != 0 && width < len) ? width : len;
  if (!in_range(trans.get_address(), span)) {
    ++address_errors_;
    VTOE_LOG(log_, Debug) << "address error at 0x" << std::hex << trans.get_address() << std::dec
                          << " len " << len;
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  if (len > 0 && trans.get_data_ptr() == nullptr) {
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return false;
  }
  if (trans.get_byte_enable_ptr() != nullptr && trans.get_byte_enable_length() == 0) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return false;
  }
  return true;
}

DramTiming::Booking Dram::serve(tlm::tlm_generic_payload& trans, core::TimePs arrival,
                                core::TimePs not_before) {
  const std::uint64_t len = trans.get_data_length();
  const std::uint64_t width = trans.get_streaming_width();
  const std::uint64_t span = (width != 0 && width < len) ? width : len;
  access(trans);  // cannot fail: admissible() checked the byte enables
  const DramTiming::Booking b = timing_->book(trans.get_address(), span, len, arrival, not_before);
  ++transactions_;
  busy_ps_ += b.bus_ps;
  if (trans.get_command() == tlm::TLM_READ_COMMAND) {
    bytes_read_ += len;
  } else {
    bytes_written_ += len;
  }
  *row_hits_ += b.row_hits;
  *row_misses_ += b.row_misses;
  *refreshes_ += timing_->refreshes() - refreshes_seen_;
  refreshes_seen_ = timing_->refreshes();
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  return b;
}

void Dram::b_transport_at(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (!admissible(trans)) return;
  const core::TimePs arrival = core::now_ps() + core::to_ps(delay);
  const DramTiming::Booking b = serve(trans, arrival, 0);
  delay += core::ps(b.done - arrival);
}

tlm::tlm_sync_enum Dram::nb_transport_fw_at(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                            sc_core::sc_time& delay) {
  if (phase == tlm::BEGIN_REQ) {
    if (trans.get_command() == tlm::TLM_IGNORE_COMMAND || !admissible(trans)) {
      if (trans.get_command() == tlm::TLM_IGNORE_COMMAND) {
        trans.set_response_status(tlm::TLM_OK_RESPONSE);
      }
      delay += core::ps(params_.accept_delay_ps);  // refused or nothing to do: early completion
      phase = tlm::END_RESP;
      return tlm::TLM_COMPLETED;
    }
    if (trans.has_mm()) trans.acquire();  // held until the response is over
    peq_->notify(trans, phase, delay);
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::END_RESP) {
    peq_->notify(trans, phase, delay);
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR(name(), "nb_transport_fw: unexpected phase (BEGIN_REQ or END_RESP expected)");
  return tlm::TLM_COMPLETED;
}

// The peq carries the initiator's BEGIN_REQ and END_RESP at their annotated times, and the
// DRAM's own END_REQ (accepted) and BEGIN_RESP (data done) events.
void Dram::peq_cb(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase) {
  if (phase == tlm::BEGIN_REQ) {
    if (outstanding_ < params_.queue_depth && waiting_.empty()) {
      accept(trans, core::now_ps());
    } else {
      ++*backpressure_;
      waiting_.push_back(Waiting{&trans, core::now_ps()});
    }
  } else if (phase == tlm::END_REQ) {
    end_request(trans);
  } else if (phase == tlm::BEGIN_RESP) {
    responses_.push_back(&trans);
    send_responses();
  } else if (phase == tlm::END_RESP) {
    if (&trans != responding_) {
      SC_REPORT_ERROR(name(), "END_RESP for a transaction that is not being responded");
      return;
    }
    responding_ = nullptr;
    finish(trans);
    send_responses();
  }
}

void Dram::accept(tlm::tlm_generic_payload& trans, core::TimePs arrival) {
  ++outstanding_;
  queue_depth_->sample(static_cast<double>(outstanding_));
  const core::TimePs now = core::now_ps();
  const DramTiming::Booking b = serve(trans, arrival, now);
  peq_->notify(trans, tlm::BEGIN_RESP, core::ps(b.done - now));
  if (b.accept == now) {
    end_request(trans);  // accepted at this instant: no need to go round the queue
  } else {
    peq_->notify(trans, tlm::END_REQ, core::ps(b.accept - now));
  }
}

void Dram::end_request(tlm::tlm_generic_payload& trans) {
  tlm::tlm_phase p = tlm::END_REQ;
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum st = in->nb_transport_bw(trans, p, d);
  if (st != tlm::TLM_ACCEPTED) {
    SC_REPORT_ERROR(name(), "nb_transport_bw: END_REQ must be answered TLM_ACCEPTED");
  }
}

void Dram::admit_waiting() {
  while (outstanding_ < params_.queue_depth && !waiting_.empty()) {
    const Waiting w = waiting_.front();
    waiting_.pop_front();
    accept(*w.trans, w.arrival);
  }
}

// One response at a time (the base protocol's response exclusion rule).
void Dram::send_responses() {
  while (responding_ == nullptr && !responses_.empty()) {
    tlm::tlm_generic_payload& trans = *responses_.front();
    responses_.pop_front();
    --outstanding_;  // its response begins: a slot frees for a withheld request
    admit_waiting();
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum st = in->nb_transport_bw(trans, phase, delay);
    if (st == tlm::TLM_ACCEPTED) {
      responding_ = &trans;  // END_RESP comes on the forward path
    } else if (st == tlm::TLM_COMPLETED || phase == tlm::END_RESP) {
      if (delay == sc_core::SC_ZERO_TIME) {
        finish(trans);
      } else {
        responding_ = &trans;  // the response channel stays busy until the annotated END_RESP
        peq_->notify(trans, tlm::END_RESP, delay);
      }
    } else {
      SC_REPORT_ERROR(name(), "nb_transport_bw: BEGIN_RESP answered with an unexpected phase");
      finish(trans);
    }
  }
}

void Dram::finish(tlm::tlm_generic_payload& trans) {
  if (trans.has_mm()) trans.release();
}

unsigned int Dram::transport_dbg(tlm::tlm_generic_payload& trans) {
  const std::uint64_t addr = trans.get_address();
  std::uint64_t len = trans.get_data_length();
  const tlm::tlm_command cmd = trans.get_command();
  if (cmd == tlm::TLM_IGNORE_COMMAND) return 0;
  if (addr >= params_.size) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  len = std::min<std::uint64_t>(len, params_.size - addr);  // debug accesses may be truncated
  if (cmd == tlm::TLM_READ_COMMAND) {
    copy_out(addr, trans.get_data_ptr(), static_cast<std::size_t>(len));
  } else {
    copy_in(addr, trans.get_data_ptr(), static_cast<std::size_t>(len));
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  return static_cast<unsigned int>(len);
}

}  // namespace vtoe::mem
