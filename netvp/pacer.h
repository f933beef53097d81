// Keeps simulated time from running ahead of wall-clock time, for a simulation that talks to real
// hosts (NetVP). Every `tick` of simulated time it compares the simulated time elapsed with the
// wall time elapsed since the start: ahead, it sleeps the difference; behind, the lag is recorded.
// Policy best_effort only reports lag; strict stops the simulation with an error once the lag
// exceeds `max_lag`. Each tick calls `before_wait` first (the bridge hands what the simulation
// sent to the wire there) and `on_tick` after any wait (the bridge takes what arrived meanwhile).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <systemc>

#include "models/core/module.h"

namespace vtoe::netvp {

enum class Pacing { BestEffort, Strict };

struct PacerParams {
  core::TimePs tick_ps = 50'000'000;  // 50 us
  Pacing pacing = Pacing::BestEffort;
  core::TimePs max_lag_ps = 100'000'000'000;  // 100 ms (strict)
};

class Pacer : public core::Module {
 public:
  SC_HAS_PROCESS(Pacer);
  Pacer(const sc_core::sc_module_name& name, const PacerParams& params);

  void on_tick(std::function<void()> cb) { on_tick_ = std::move(cb); }
  void before_wait(std::function<void()> cb) { before_wait_ = std::move(cb); }
  // Lag statistics (simulated time behind wall time), in microseconds.
  double max_lag_us() const { return max_lag_us_; }
  double mean_lag_us() const { return ticks_ ? lag_sum_us_ / static_cast<double>(ticks_) : 0.0; }
  std::uint64_t ticks() const { return ticks_; }
  std::uint64_t late_ticks() const { return late_ticks_; }
  double slept_s() const { return slept_us_ / 1e6; }
  // Set when strict pacing stopped the run; the runner reports it.
  const std::string& failure() const { return failure_; }

 private:
  void tick();

  PacerParams params_;
  std::chrono::steady_clock::time_point start_;
  bool started_ = false;
  std::function<void()> on_tick_;
  std::function<void()> before_wait_;
  double max_lag_us_ = 0, lag_sum_us_ = 0, slept_us_ = 0;
  std::uint64_t ticks_ = 0, late_ticks_ = 0;
  std::string failure_;
};

}  // namespace vtoe::netvp
