// DRAM: a sparse backing store behind one channel with bandwidth, access latency and contention.
//
// Two timing modes, chosen by DramParams::at (the platform sets it from platform.timing).
//
// Loosely timed (at = false, one channel, the default):
//   A transaction of N bytes arriving at t = sc_time_stamp() + annotated delay is accepted after
//   `accept_delay_ps` (command decode), starts service at max(t + accept_delay, busy_until),
//   occupies the channel for transfer_time_ps(N, bandwidth) and completes `latency_ps` after its
//   last byte. b_transport adds (completion - t) to the annotated delay and never waits: the caller
//   synchronises. nb_transport_fw answers BEGIN_REQ with TLM_COMPLETED and the same delay (legal
//   early completion of the base protocol); it never calls the backward path.
//   transport_dbg and the read()/write() backdoor take no time and do not count in the stats.
//
// Approximately timed (at = true): banks, open rows, refresh and a shared data bus, booked by one
// timing core (DramTiming, dram_timing.h) for both paths.
//   nb_transport_fw speaks the full four-phase base protocol through a peq_with_cb_and_phase:
//   BEGIN_REQ is answered TLM_ACCEPTED; END_REQ follows accept_delay later while fewer than
//   queue_depth requests are outstanding (accepted, response not yet begun), otherwise it is
//   withheld until a response begins (back-pressure). The data moves when the request is accepted
//   (so requests see each other in acceptance order); BEGIN_RESP goes on the backward path at the
//   booked completion, one response at a time (response exclusion: the next waits for END_RESP,
//   or for TLM_UPDATED/TLM_COMPLETED from the initiator). Requests the DRAM refuses (address,
//   byte-enable or null-data errors, TLM_IGNORE_COMMAND) complete early with TLM_COMPLETED.
//   b_transport books the same banks and bus and adds (completion - arrival) to the delay, no wait.
//   The DRAM never calls wait(): everything runs in the caller or in the peq's method.
//   AT counters (row_hits, row_misses, refreshes, backpressure, queue_depth) exist only in AT mode,
//   so LT statistics stay as they were.
//
// Storage: 64 KiB pages allocated (zeroed) on first write; reads of never-written memory return
// zeros, so a 1 GiB DRAM costs one pointer per page until touched. DMI is not offered.
//
// Errors: a transaction outside [0, size) gets TLM_ADDRESS_ERROR_RESPONSE (counted as
// address_errors); the backdoor throws std::out_of_range naming the module and range.
#pragma once

#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/module.h"
#include "models/core/param.h"
#include "models/mem/dram_timing.h"

namespace vtoe::mem {

struct DramParams {
  std::uint64_t size = 1024ull << 20;  ///< bytes
  double bandwidth_bps = 6.4e9;        ///< channel bandwidth, bit/s
  core::TimePs latency_ps = 50'000;    ///< after the last byte of a transfer, ps (default 50 ns)
  core::TimePs accept_delay_ps = 0;    ///< before a request may start service (END_REQ), ps
  // Approximately-timed mode (set by the platform from platform.timing, not a key of its own).
  // Keep the members above first and in this order: callers build DramParams{size, bw, lat, acc}.
  bool at = false;
  std::uint32_t banks = 8;                       ///< row-interleaved banks
  std::uint64_t row_size = 2048;                 ///< bytes per row (page)
  core::TimePs row_hit_ps = 15'000;              ///< access to the open row (CAS)
  core::TimePs row_miss_ps = 45'000;             ///< precharge + activate + CAS
  core::TimePs refresh_interval_ps = 7'800'000;  ///< tREFI; 0 = no refresh
  core::TimePs refresh_time_ps = 350'000;        ///< tRFC: all banks blocked
  std::uint32_t queue_depth = 8;                 ///< requests accepted and not yet responded
  core::TimePs response_delay_ps = 0;            ///< added before BEGIN_RESP
};

// The scenario keys that fill DramParams (platform.dram_*).
const std::vector<core::Param<DramParams>>& dram_params();

class Dram : public core::Module {
 public:
  static constexpr std::size_t kPageBits = 16;  // 64 KiB pages
  static constexpr std::size_t kPageSize = std::size_t{1} << kPageBits;

  tlm_utils::simple_target_socket<Dram> in;

  Dram(const sc_core::sc_module_name& name, const DramParams& params = {});

  // Backdoor for software models: no timing, no stats. Throws std::out_of_range if
  // [addr, addr + len) is not inside the DRAM.
  void read(std::uint64_t addr, void* dst, std::size_t len) const;
  void write(std::uint64_t addr, const void* src, std::size_t len);

  const DramParams& params() const { return params_; }
  std::uint64_t size() const { return params_.size; }
  // Absolute time (ps) until which the channel (AT: the data bus) is booked.
  core::TimePs busy_until() const { return timing_ ? timing_->bus_free() : busy_until_; }
  // AT only: requests accepted whose response has not begun, and requests whose END_REQ is
  // withheld (0 in LT mode).
  std::size_t outstanding() const { return outstanding_; }
  std::size_t withheld() const { return waiting_.size(); }
  // Pages allocated so far (each kPageSize bytes).
  std::size_t pages_allocated() const { return pages_allocated_; }
  // Fraction of `window` ps the channel was transferring data, from busy_ps measured since the
  // last stats baseline (clamped to 1: a burst booked ahead of time may end after the window).
  double utilisation(core::TimePs window) const;
  // ps the channel spent transferring data since the start (time series take differences).
  std::uint64_t busy_ps_total() const { return busy_ps_.value(); }

  // TLM target interface (public so tests and wrappers may call it directly).
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);

 private:
  bool in_range(std::uint64_t addr, std::uint64_t len) const {
    return len <= params_.size && addr <= params_.size - len;
  }
  // Executes the data movement of a checked transaction; false if byte enables are malformed.
  bool access(tlm::tlm_generic_payload& trans);
  void copy_out(std::uint64_t addr, std::uint8_t* dst, std::size_t len) const;
  void copy_in(std::uint64_t addr, const std::uint8_t* src, std::size_t len);
  std::uint8_t* page_for_write(std::uint64_t page);

  // Approximately-timed mode.
  struct Waiting {
    tlm::tlm_generic_payload* trans;
    core::TimePs arrival;
  };
  // Checks a request; sets the error status (counting address errors) and returns false if the
  // DRAM refuses it. Does not move data.
  bool admissible(tlm::tlm_generic_payload& trans);
  // Books a checked request at `arrival` (accepted not before `not_before`), moves its data and
  // counts it.
  DramTiming::Booking serve(tlm::tlm_generic_payload& trans, core::TimePs arrival,
                            core::TimePs not_before);
  void b_transport_at(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw_at(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                        sc_core::sc_time& delay);
  void peq_cb(tlm::tlm_generic_payload& trans, const tlm::tlm_phase& phase);
  void accept(tlm::tlm_generic_payload& trans, core::TimePs arrival);
  void end_request(tlm::tlm_generic_payload& trans);  // END_REQ on the backward path, now
  void admit_waiting();
  void send_responses();
  void finish(tlm::tlm_generic_payload& trans);

  DramParams params_;
  std::vector<std::unique_ptr<std::uint8_t[]>> pages_;
  std::size_t pages_allocated_ = 0;
  core::TimePs busy_until_ = 0;

  core::Counter& bytes_read_;
  core::Counter& bytes_written_;
  core::Counter& transactions_;
  core::Counter& busy_ps_;
  core::Counter& address_errors_;

  std::unique_ptr<DramTiming> timing_;  // AT only, as everything below
  std::unique_ptr<tlm_utils::peq_with_cb_and_phase<Dram>> peq_;
  std::deque<Waiting> waiting_;                      // END_REQ withheld
  std::deque<tlm::tlm_generic_payload*> responses_;  // done, waiting for the response channel
  tlm::tlm_generic_payload* responding_ = nullptr;   // BEGIN_RESP sent, END_RESP not yet
  std::size_t outstanding_ = 0;
  std::uint64_t refreshes_seen_ = 0;
  core::Counter* row_hits_ = nullptr;
  core::Counter* row_misses_ = nullptr;
  core::Counter* refreshes_ = nullptr;
  core::Counter* backpressure_ = nullptr;
  core::Accumulator* queue_depth_ = nullptr;
};

}  // namespace vtoe::mem
