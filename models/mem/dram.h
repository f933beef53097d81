// DRAM: a sparse backing store behind one channel with bandwidth, access latency and contention.
//
// Timing (approximately timed, one channel):
//   A transaction of N bytes arriving at t = sc_time_stamp() + annotated delay is accepted after
//   `accept_delay_ps` (command decode), starts service at max(t + accept_delay, busy_until),
//   occupies the channel for transfer_time_ps(N, bandwidth) and completes `latency_ps` after its
//   last byte. b_transport adds (completion - t) to the annotated delay and never waits: the caller
//   synchronises. nb_transport_fw answers BEGIN_REQ with TLM_COMPLETED and the same delay (legal
//   early completion of the base protocol); it never calls the backward path.
//   transport_dbg and the read()/write() backdoor take no time and do not count in the stats.
//
// Storage: 64 KiB pages allocated (zeroed) on first write; reads of never-written memory return
// zeros, so a 1 GiB DRAM costs one pointer per page until touched. DMI is not offered.
//
// Errors: a transaction outside [0, size) gets TLM_ADDRESS_ERROR_RESPONSE (counted as
// address_errors); the backdoor throws std::out_of_range naming the module and range.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/module.h"
#include "models/core/param.h"

namespace vtoe::mem {

struct DramParams {
  std::uint64_t size = 1024ull << 20;  ///< bytes
  double bandwidth_bps = 6.4e9;       ///< channel bandwidth, bit/s
  core::TimePs latency_ps = 50'000;   ///< after the last byte of a transfer, ps (default 50 ns)
  core::TimePs accept_delay_ps = 0;   ///< before a request may start service, ps
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
  // Absolute time (ps) until which the channel is booked.
  core::TimePs busy_until() const { return busy_until_; }
  // Pages allocated so far (each kPageSize bytes).
  std::size_t pages_allocated() const { return pages_allocated_; }
  // Fraction of `window` ps the channel was transferring data, from busy_ps measured since the
  // last stats baseline (clamped to 1: a burst booked ahead of time may end after the window).
  double utilisation(core::TimePs window) const;

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

  DramParams params_;
  std::vector<std::unique_ptr<std::uint8_t[]>> pages_;
  std::size_t pages_allocated_ = 0;
  core::TimePs busy_until_ = 0;

  core::Counter& bytes_read_;
  core::Counter& bytes_written_;
  core::Counter& transactions_;
  core::Counter& busy_ps_;
  core::Counter& address_errors_;
};

}  // namespace vtoe::mem
