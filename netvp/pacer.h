// Keeps simulated time from running ahead of wall-clock time, for a simulation that talks to real
// hosts (NetVP). Every `tick` of simulated time it compares the simulated time elapsed with the
// wall time elapsed since the start: ahead, it sleeps the difference; behind, the lag is recorded.
// When nothing is pending before the next tick and no frame entered for a millisecond, it waits in
// wall time for the next event or a frame from the wire instead of ticking (wait_for_wire).
// Policy best_effort only reports lag; strict stops the simulation with an error once the lag
// exceeds `max_lag`. Each tick calls `before_wait` first (the bridge hands what the simulation
// sent to the wire there) and `on_tick` after any wait (the bridge takes what arrived meanwhile).
#pragma once

#include <chrono>
#include <csignal>
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

  // `cb` returns how many frames entered the simulation.
  void on_tick(std::function<std::size_t()> cb) { on_tick_ = std::move(cb); }
  void before_wait(std::function<void()> cb) { before_wait_ = std::move(cb); }
  // How the pacer waits, when the simulation has nothing to do, for wall time `until` or a frame
  // from the wire, whichever comes first. Without it the pacer ticks through quiet times.
  using WireWait = std::function<void(std::chrono::steady_clock::time_point until)>;
  void wait_for_wire(WireWait w) { wait_for_wire_ = std::move(w); }
  // Where the current sc_start() ends: a wait through a quiet time ends there at the latest, so
  // a run takes no more wall time than its duration.
  void set_end(core::TimePs end_ps) { end_ps_ = end_ps; }
  // Lag statistics (simulated time behind wall time), in microseconds.
  double max_lag_us() const { return max_lag_us_; }
  double mean_lag_us() const { return ticks_ ? lag_sum_us_ / static_cast<double>(ticks_) : 0.0; }
  std::uint64_t ticks() const { return ticks_; }
  std::uint64_t late_ticks() const { return late_ticks_; }
  double slept_s() const { return slept_us_ / 1e6; }
  // Quiet times waited through in one piece (see wait_for_wire).
  std::uint64_t idle_waits() const { return idle_waits_; }
  // Set when strict pacing stopped the run; the runner reports it.
  const std::string& failure() const { return failure_; }

  // Asks every pacer to end the run at its next tick, from a signal handler (async-signal-safe):
  // a real-time run is ended by hand, and what was simulated so far is still a result.
  static void request_stop(int signal) { stop_signal_ = signal; }
  // Why the run ended early at a user's request ("" if it did not).
  const std::string& interrupted() const { return interrupted_; }

 private:
  void tick();
  core::TimePs idle_wait();  // the time to the next tick

  static constexpr core::TimePs kMaxIdlePs = 100'000'000'000;  // 100 ms
  static constexpr std::chrono::milliseconds kQuietBeforeIdle{1};
  PacerParams params_;
  std::chrono::steady_clock::time_point start_;
  bool started_ = false;
  std::function<std::size_t()> on_tick_;
  std::chrono::steady_clock::time_point last_frame_;  // when a frame last entered
  std::function<void()> before_wait_;
  WireWait wait_for_wire_;
  core::TimePs end_ps_ = ~core::TimePs{0};
  double max_lag_us_ = 0, lag_sum_us_ = 0, slept_us_ = 0;
  std::uint64_t ticks_ = 0, late_ticks_ = 0, idle_waits_ = 0;
  std::string failure_;
  std::string interrupted_;
  static volatile std::sig_atomic_t stop_signal_;
};

}  // namespace vtoe::netvp
