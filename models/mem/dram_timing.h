// DramTiming: the timing core of the DRAM's approximately-timed mode (DramParams::at). Plain C++,
// no SystemC: it books banks and the shared data bus for a request arriving at time t and returns
// when the request is accepted and when its data is done. Both of the Dram's AT paths
// (nb_transport four-phase and b_transport) book through one instance, so they contend.
//
// Model (all times in ps, deterministic, requests booked in call order):
//   - Banks are row-interleaved: row = addr / row_size, bank = row % banks. Open-page policy: each
//     bank keeps its last row open; an access to the open row costs row_hit (CAS), anything else
//     row_miss (precharge + activate + CAS).
//   - A burst is split at row boundaries; each piece issues its command at
//     max(accept, bank ready), waits row_hit/row_miss, then takes the data bus at
//     max(that, bus free) for transfer_time_ps(piece, bandwidth). The pieces of one burst go to
//     different banks, so their activations overlap each other's transfers.
//   - A bank is busy until its piece's last byte left the bus (same bank serialises).
//   - Refresh: windows [k * interval, k * interval + refresh_time) for k >= 1 (interval 0 = none).
//     No command starts inside a window (it waits for the window's end), and a refresh closes the
//     open row of every bank (a bank last used before a window's start misses). A transfer already
//     on the bus is not interrupted.
//   - Completion = end of the burst's last piece on the bus + response_delay.
// Not modelled: read/write turnaround, tRAS/tRP/tRCD separately, reordering (FR-FCFS), power-down.
#pragma once

#include <cstdint>
#include <vector>

#include "models/core/sim_time.h"

namespace vtoe::mem {

struct DramParams;

class DramTiming {
 public:
  struct Booking {
    core::TimePs accept = 0;  // the request is accepted (END_REQ): arrival + accept_delay
    core::TimePs done = 0;    // the response may begin (BEGIN_RESP)
    core::TimePs bus_ps = 0;  // data bus time the request took
    std::uint32_t row_hits = 0;
    std::uint32_t row_misses = 0;
  };

  // Throws std::invalid_argument on banks == 0, row_size == 0 or a refresh that does not fit its
  // interval.
  explicit DramTiming(const DramParams& params);

  // Books a request of `len` bytes over [addr, addr + span) (span < len: a streaming burst that
  // stays in one row) arriving at `arrival`; it is accepted at
  // max(arrival + accept_delay, not_before).
  Booking book(std::uint64_t addr, std::uint64_t span, std::uint64_t len, core::TimePs arrival,
               core::TimePs not_before = 0);

  // Refresh windows begun up to the latest command booked.
  std::uint64_t refreshes() const { return refreshes_; }
  core::TimePs bus_free() const { return bus_free_; }
  std::uint32_t bank_of(std::uint64_t addr) const {
    return static_cast<std::uint32_t>((addr / row_size_) % banks_.size());
  }

 private:
  struct Bank {
    bool open = false;
    std::uint64_t row = 0;
    core::TimePs ready = 0;     // earliest next command
    core::TimePs last_use = 0;  // end of the last transfer, to see whether a refresh came since
  };

  std::uint64_t row_size_;
  double bandwidth_bps_;
  core::TimePs row_hit_ps_, row_miss_ps_;
  core::TimePs refresh_interval_ps_, refresh_time_ps_;
  core::TimePs accept_delay_ps_, response_delay_ps_;
  std::vector<Bank> banks_;
  core::TimePs bus_free_ = 0;
  std::uint64_t refreshes_ = 0;
};

}  // namespace vtoe::mem
