#include "models/mem/dram_timing.h"

#include <algorithm>
#include <stdexcept>

#include "models/mem/dram.h"

namespace vtoe::mem {

DramTiming::DramTiming(const DramParams& p)
    : row_size_(p.row_size),
      bandwidth_bps_(p.bandwidth_bps),
      row_hit_ps_(p.row_hit_ps),
      row_miss_ps_(p.row_miss_ps),
      refresh_interval_ps_(p.refresh_interval_ps),
      refresh_time_ps_(p.refresh_time_ps),
      accept_delay_ps_(p.accept_delay_ps),
      response_delay_ps_(p.response_delay_ps),
      banks_(p.banks) {
  if (p.banks == 0) throw std::invalid_argument("DRAM timing: banks is 0");
  if (p.row_size == 0) throw std::invalid_argument("DRAM timing: row size is 0");
  if (!(p.bandwidth_bps > 0)) throw std::invalid_argument("DRAM timing: bandwidth must be > 0");
  if (p.refresh_interval_ps != 0 && p.refresh_time_ps >= p.refresh_interval_ps) {
    throw std::invalid_argument("DRAM timing: refresh time must be shorter than its interval");
  }
}

DramTiming::Booking DramTiming::book(std::uint64_t addr, std::uint64_t span, std::uint64_t len,
                                     core::TimePs arrival, core::TimePs not_before) {
  Booking b;
  b.accept = std::max(arrival + accept_delay_ps_, not_before);
  core::TimePs end = b.accept;
  // Pieces: one per row touched; a streaming burst (span < len) moves all its bytes in one row.
  const bool streaming = span < len;
  std::uint64_t a = addr;
  std::uint64_t left = streaming ? 1 : std::max<std::uint64_t>(span, 1);
  do {
    const std::uint64_t row = a / row_size_;
    const std::uint64_t in_row = std::min(left, row_size_ - a % row_size_);
    const std::uint64_t bytes = streaming ? len : std::min(in_row, len - (a - addr));
    Bank& bank = banks_[static_cast<std::size_t>(row % banks_.size())];

    core::TimePs cmd = std::max(b.accept, bank.ready);
    if (refresh_interval_ps_ != 0) {
      std::uint64_t k = cmd / refresh_interval_ps_;
      if (k >= 1 && cmd < k * refresh_interval_ps_ + refresh_time_ps_) {
        cmd = k * refresh_interval_ps_ + refresh_time_ps_;  // wait for the refresh to finish
      }
      k = cmd / refresh_interval_ps_;
      if (k >= 1 && k * refresh_interval_ps_ >= bank.last_use) bank.open = false;  // refreshed
      refreshes_ = std::max(refreshes_, k);
    }
    const bool hit = bank.open && bank.row == row;
    if (hit) {
      ++b.row_hits;
    } else {
      ++b.row_misses;
    }
    const core::TimePs data_ready = cmd + (hit ? row_hit_ps_ : row_miss_ps_);
    const core::TimePs transfer = core::transfer_time_ps(bytes, bandwidth_bps_);
    const core::TimePs bus_start = std::max(data_ready, bus_free_);
    bus_free_ = bus_start + transfer;
    b.bus_ps += transfer;
    bank.open = true;
    bank.row = row;
    bank.ready = bus_free_;
    bank.last_use = bus_free_;
    end = std::max(end, bus_free_);
    a += in_row;
    left -= in_row;
  } while (left > 0);
  b.done = end + response_delay_ps_;
  return b;
}

}  // namespace vtoe::mem
