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

volatile std::sig_atomic_t Pacer::stop_signal_ = 0;

void Pacer::tick() {
  if (stop_signal_ != 0) {
    interrupted_ = std::string("stopped by ") + (stop_signal_ == SIGINT ? "SIGINT" : "SIGTERM") +
                   " at " + std::to_string(static_cast<double>(core::now_ps()) / 1e12) +
                   " s of simulated time";
    // The runner reports it; SystemC's own "stopped by user" line would only repeat it.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO,
                                            sc_core::SC_DO_NOTHING);
    sc_core::sc_stop();
    return;
  }
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
  if (on_tick_ && on_tick_() > 0) last_frame_ = std::chrono::steady_clock::now();
  next_trigger(core::ps(idle_wait()));
}

core::TimePs Pacer::idle_wait() {
  // Nothing else to simulate before the next tick (no event pending) and no frame for a while:
  // rather than tick through the quiet time (20,000 wake-ups a second at 50 us, half a core on
  // an idle run), wait in wall time for the next event or a frame from the wire, whichever
  // comes first, and let the simulation jump there. A frame then enters when it arrives, not at
  // the next tick. Inside a transfer the gaps are short and the ticks go on: a thread woken
  // from a wait on a virtual machine's idle CPU starts later than one that keeps ticking
  // (loss-free echoes through NetVP were slower with the wait at every gap).
  const core::TimePs tick = params_.tick_ps;
  if (!wait_for_wire_ || std::chrono::steady_clock::now() - last_frame_ < kQuietBeforeIdle)
    return tick;
  const core::TimePs to_next = core::to_ps(sc_core::sc_time_to_pending_activity());
  if (to_next <= tick) return tick;
  const core::TimePs now = core::now_ps();
  // At most 100 ms at a time, so that a stop request is seen soon, and not past the end of
  // the run.
  core::TimePs until = to_next > kMaxIdlePs ? now + kMaxIdlePs : now + to_next;
  if (end_ps_ > now && end_ps_ < until) until = end_ps_;
  const auto wall_of = [this](core::TimePs t) {
    return start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                        std::chrono::duration<double, std::micro>(static_cast<double>(t) / 1e6));
  };
  const auto before = std::chrono::steady_clock::now();
  if (wall_of(until) <= before) return tick;  // behind: no time to wait
  wait_for_wire_(wall_of(until));
  const auto after = std::chrono::steady_clock::now();
  slept_us_ += std::chrono::duration<double, std::micro>(after - before).count();
  ++idle_waits_;
  // The next tick at the wall time now, but not past the next event.
  const auto woke =
      static_cast<core::TimePs>(std::chrono::duration<double, std::pico>(after - start_).count());
  const core::TimePs target = std::min(woke, until);
  return target > now ? target - now : tick;
}

}  // namespace vtoe::netvp
