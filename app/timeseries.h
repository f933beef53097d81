// The time series (--stats-interval, the scenario key stats_interval): every interval of simulated
// time, one row of DIR/timeseries.csv with what happened in that interval, from the start of the
// run (warm-up included). Like results.json it holds simulated quantities only: same scenario and
// seed give the same bytes. The columns carry their unit in their name (docs/outputs.md); the
// Python package converts the CSV to Parquet (vtoe.load_timeseries). With a timeline trace the
// rows also become its counter tracks.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "platform/platform.h"

namespace vtoe::app {

class TimeSeries {
 public:
  // `path` empty: no CSV (the rows go to the timeline trace's counter tracks only). The CSV holds
  // at most `max_bytes` (0: no bound); rows past it are left out, and full_at_ps() says when.
  TimeSeries(platform::Platform& p, const std::string& path, std::uint64_t max_bytes = 0);
  // Writes the row of the interval that ends now (nothing if no time passed since the last one).
  void sample();
  // Call just before Platform::mark_baseline(): the CPU accounting it resets is carried over.
  void before_baseline();
  const std::vector<std::string>& columns() const { return columns_; }
  // Rows left out because the CSV reached its bound, and the end of the first of them (ps).
  std::uint64_t rows_left_out() const { return rows_left_out_; }
  std::uint64_t full_at_ps() const { return full_at_ps_; }

 private:
  // Running totals (since the start of the run) the rows are differences of.
  struct Totals {
    std::uint64_t time_ps = 0;
    std::vector<std::uint64_t> acked, rx, exits;  // exits: six causes per VM
    std::vector<std::uint64_t> busy;              // per VM: user, kernel, hypervisor
    std::uint64_t idle = 0, toe_tx = 0, toe_rx = 0, wire_tx = 0, wire_rx = 0, dram_busy = 0;
    std::uint64_t ppm_tx = 0, ppm_rx = 0, retransmits = 0, peer_retransmits = 0;
    std::uint64_t rx_fifo_drops = 0, ooo_segments = 0;  // the PPM's receive FIFO; the TOE's stack
    std::vector<double> sendq_area, vsendq_area;  // per channel, per VM under device emulation
    double ccb_area = 0;
    std::vector<std::uint64_t> core_idle;  // multi-core hosts: per core, idle time
    std::vector<double> probes;            // the network's columns' running totals
  };
  Totals read();

  // The network's columns, after the platform's (so that those stay as they were): every link,
  // every linked switch port and every host of a topology (the single link0 without one). Each
  // reads a running total (or, Peak, the highest level since the last read); the row shows its
  // change over the interval.
  enum class Kind {
    Mbps,          // bytes: Mbit/s in the interval
    Share,         // ps of something busy: share of the interval
    Count,         // events in the interval
    Mean,          // area of a time-weighted level (value * ps): mean over the interval
    Peak,          // the level's highest value in the interval (read takes it)
    BusyFromIdle,  // ps idle: share of the interval not idle
  };
  struct Probe {
    Kind kind;
    std::function<double()> raw;
    bool resets_at_baseline = false;  // a level's area, a core's idle time: carried over
    double carry = 0;
  };
  void add_network_probes();
  std::vector<Probe> probes_;

  platform::Platform& p_;
  std::ofstream out_;
  std::uint64_t max_bytes_ = 0, bytes_ = 0;
  std::uint64_t rows_left_out_ = 0, full_at_ps_ = 0;
  std::vector<std::string> columns_;
  Totals last_;
  // CPU time accounted before the baseline reset it, per VM and class, and idle.
  std::vector<std::uint64_t> busy_carry_;
  std::uint64_t idle_carry_ = 0;
  std::vector<std::uint64_t> core_idle_carry_;  // multi-core hosts: per core
  // Time-weighted levels restart at the baseline: their area up to it.
  std::vector<double> sendq_carry_, vsendq_carry_;
  double ccb_carry_ = 0;
};

}  // namespace vtoe::app
