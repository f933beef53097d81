#include "netvp/pacer.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

namespace vtoe::netvp {

Pacer::Pacer(const sc_core::sc_module_name& name, const PacerParams& params)
    : core::Module(name), params_(params) {
  SC_METHOD(tick);
}

void Pacer::tick() {
  const auto now_wall = std::chrono::steady_clock::now();
  if (!started_) {
    started_ = true;
    start_ = now_wall;
    // Linux lets a sleep of this thread end up to 50 us late by default (timer slack): a
    // tick's worth of latency on every wait, paid by every frame through the bridge.
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    // Every frame through the bridge waits for this thread, which runs the simulation: on a
    // loaded 2-core machine at normal priority it was preempted by the bridge's writer and the
    // real hosts and fell milliseconds behind wall time (docs/performance.md). Like the writer,
    // it asks to run first; without the privilege it runs as it is. (With SystemC's pthread
    // processes, threads other than this one keep their priority.)
    (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), -10);
  }
  if (before_wait_) before_wait_();
  const double sim_us = static_cast<double>(core::now_ps()) / 1e6;
  double wall_us = std::chrono::duration<double, std::micro>(now_wall - start_).count();
  if (sim_us > wall_us) {
    // Ahead of the real hosts: wait for them. (A frame arriving meanwhile waits too: the
    // simulation is already at this tick's time, so it could enter no earlier; its latency
    // is at most a tick, network.netvp.tick.)
    std::this_thread::sleep_until(
        now_wall + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double, std::micro>(sim_us - wall_us)));
    slept_us_ += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() -
                                                           now_wall)
                     .count();
  } else {
    const double lag = wall_us - sim_us;
    ++ticks_;
    lag_sum_us_ += lag;
    if (lag > max_lag_us_) max_lag_us_ = lag;
    if (lag > static_cast<double>(params_.tick_ps) / 1e6) ++late_ticks_;
    if (params_.pacing == Pacing::Strict && lag > static_cast<double>(params_.max_lag_ps) / 1e6) {
      failure_ = "strict pacing: simulated time fell " +
                 std::to_string(static_cast<long long>(lag)) +
                 " us behind wall-clock time (network.netvp.max_lag is " +
                 std::to_string(params_.max_lag_ps / 1'000'000) + " us)";
      VTOE_LOG(log_, Error) << failure_;
      sc_core::sc_stop();
      return;
    }
  }
  if (on_tick_) on_tick_();
  next_trigger(core::ps(params_.tick_ps));
}

}  // namespace vtoe::netvp
