// Bench for hypervisor::CreditScheduler: credit accounting and weights, slices, BOOST, Tickle
// (the qualitative effect of paper Fig. 13(a)), blocking, determinism and misuse.
//
// A small discrete-time fake core drives the scheduler: it calls pick() at next_event() times,
// after wake() returned true and when the running VM blocked, and runs scripted workloads
// (CPU-bound VMs that never block; I/O VMs that compute a burst, block, and are woken by an I/O
// completion some time later).
#include "hypervisor/credit_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

namespace hv = vtoe::hypervisor;
using hv::CreditParams;
using hv::CreditScheduler;
using hv::kNoEvent;
using hv::TimePs;

namespace {

constexpr TimePs kUs = 1'000'000;
constexpr TimePs kMs = 1000 * kUs;
constexpr TimePs kSec = 1000 * kMs;

// One VM's workload. CPU-bound: always runnable from `first_wake` on. I/O: needs `burst` of CPU,
// then blocks; its I/O completes `io_wait` later and wakes it (io_event); repeat.
struct Script {
  bool cpu_bound = true;
  TimePs burst = 0;
  TimePs io_wait = 0;
  TimePs first_wake = 0;
  bool io_event = true;  // how the VM is woken after an I/O wait
  // Randomised variant (for property tests): burst/io_wait drawn in [1, value] per round.
  bool random = false;
};

struct Switch {
  TimePs t;
  int vm;
  bool operator==(const Switch& o) const { return t == o.t && vm == o.vm; }
};

class FakeCore {
 public:
  FakeCore(CreditScheduler& s, std::vector<Script> scripts, std::uint32_t seed = 1)
      : s_(s), scripts_(std::move(scripts)), rng_(seed) {
    const std::size_t n = scripts_.size();
    runnable_.assign(n, false);
    remaining_.assign(n, 0);
    wake_at_.assign(n, kNoEvent);
    woke_at_.assign(n, kNoEvent);
    run_ps_.assign(n, 0);
    bursts_done_.assign(n, 0);
    started_.assign(n, false);
    latencies_.resize(n);
    for (std::size_t i = 0; i < n; ++i) wake_at_[i] = scripts_[i].first_wake;
  }

  // Extra pick() calls at these times (a core calling more often than asked must change nothing).
  void add_spurious_picks(std::vector<TimePs> times) { spurious_ = std::move(times); }

  void run(TimePs until) {
    std::size_t spurious_next = 0;
    while (true) {
      bool need_pick = false;
      // The running I/O VM finished its burst: it blocks (WFI).
      if (running_ >= 0 && !scripts_[idx(running_)].cpu_bound && remaining_[idx(running_)] == 0) {
        const int vm = running_;
        s_.block(vm, t_);
        runnable_[idx(vm)] = false;
        ++bursts_done_[idx(vm)];
        wake_at_[idx(vm)] = t_ + draw(scripts_[idx(vm)].io_wait, scripts_[idx(vm)].random);
        need_pick = true;  // running_ stays the blocked VM: the contract allows passing it
      }
      // Wake-ups due now, in VM order.
      for (std::size_t i = 0; i < scripts_.size(); ++i) {
        if (runnable_[i] || wake_at_[i] > t_) continue;
        const bool io = started_[i] && scripts_[i].io_event;  // the first wake is the boot
        started_[i] = true;
        runnable_[i] = true;
        wake_at_[i] = kNoEvent;
        remaining_[i] = scripts_[i].cpu_bound ? 0 : draw(scripts_[i].burst, scripts_[i].random);
        woke_at_[i] = t_;
        if (s_.wake(static_cast<int>(i), io, t_)) need_pick = true;
      }
      if (s_.next_event(t_) <= t_) need_pick = true;
      if (spurious_next < spurious_.size() && spurious_[spurious_next] <= t_) {
        need_pick = true;
        while (spurious_next < spurious_.size() && spurious_[spurious_next] <= t_) ++spurious_next;
      }
      if (need_pick) {
        const int before = running_;
        const int vm = s_.pick(running_, t_);
        if (vm >= 0) {
          EXPECT_TRUE(runnable_[idx(vm)]) << "picked blocked VM " << vm << " at " << t_;
        } else {
          EXPECT_TRUE(std::none_of(runnable_.begin(), runnable_.end(), [](bool r) { return r; }))
              << "idle core while a VM is runnable at " << t_;
        }
        const bool prev_blocked = before >= 0 && !runnable_[idx(before)];
        if (vm != before || prev_blocked) {
          switches_.push_back({t_, vm});
          if (vm >= 0 && woke_at_[idx(vm)] != kNoEvent) {
            latencies_[idx(vm)].push_back(t_ - woke_at_[idx(vm)]);
            woke_at_[idx(vm)] = kNoEvent;
          }
        }
        running_ = vm;
      }
      // Next instant at which something happens.
      TimePs next = s_.next_event(t_);
      for (std::size_t i = 0; i < scripts_.size(); ++i) next = std::min(next, wake_at_[i]);
      if (running_ >= 0 && !scripts_[idx(running_)].cpu_bound) {
        next = std::min(next, t_ + remaining_[idx(running_)]);
      }
      if (spurious_next < spurious_.size()) next = std::min(next, spurious_[spurious_next]);
      if (next == kNoEvent || next >= until) {
        consume(until);
        t_ = until;
        break;
      }
      if (next <= t_) {
        ADD_FAILURE() << "time does not advance at " << t_;
        break;
      }
      consume(next);
      t_ = next;
    }
  }

  const std::vector<Switch>& switches() const { return switches_; }
  TimePs run_ps(int vm) const { return run_ps_[idx(vm)]; }
  std::uint64_t bursts_done(int vm) const { return bursts_done_[idx(vm)]; }
  const std::vector<TimePs>& latencies(int vm) const { return latencies_[idx(vm)]; }
  double mean_latency_ms(int vm) const {
    const auto& l = latencies_[idx(vm)];
    if (l.empty()) return 0;
    long double sum = 0;
    for (TimePs x : l) sum += x;
    return static_cast<double>(sum / l.size() / kMs);
  }
  TimePs max_latency(int vm) const {
    const auto& l = latencies_[idx(vm)];
    return l.empty() ? 0 : *std::max_element(l.begin(), l.end());
  }
  int running() const { return running_; }

 private:
  static std::size_t idx(int vm) { return static_cast<std::size_t>(vm); }
  TimePs draw(TimePs value, bool random) {
    if (!random) return value;
    return 1 + static_cast<TimePs>(rng_()) % value;  // raw mt19937 output: portable
  }
  void consume(TimePs until) {
    if (running_ < 0 || !runnable_[idx(running_)]) return;
    const TimePs d = until - t_;
    run_ps_[idx(running_)] += d;
    if (!scripts_[idx(running_)].cpu_bound) remaining_[idx(running_)] -= d;
  }

  CreditScheduler& s_;
  std::vector<Script> scripts_;
  std::mt19937 rng_;
  std::vector<bool> runnable_, started_;
  std::vector<TimePs> remaining_, wake_at_, woke_at_, run_ps_;
  std::vector<std::uint64_t> bursts_done_;
  std::vector<TimePs> spurious_;
  std::vector<Switch> switches_;
  std::vector<std::vector<TimePs>> latencies_;
  TimePs t_ = 0;
  int running_ = -1;
};

std::vector<Script> busy(int n) { return std::vector<Script>(static_cast<std::size_t>(n)); }

Script io_vm(TimePs burst, TimePs io_wait) {
  Script s;
  s.cpu_bound = false;
  s.burst = burst;
  s.io_wait = io_wait;
  return s;
}

double share(const FakeCore& core, int vm, TimePs total) {
  return static_cast<double>(core.run_ps(vm)) / static_cast<double>(total);
}

// Calls pick() at every next_event() up to `until` on a core whose VMs never block.
int run_picks(CreditScheduler& s, int running, TimePs until) {
  for (TimePs t = s.next_event(0); t <= until && t != kNoEvent; t = s.next_event(t)) {
    running = s.pick(running, t);
    if (s.next_event(t) <= t) break;
  }
  return running;
}

// ---------------------------------------------------------------- credit accounting and weights

TEST(CreditScheduler, EqualWeightsShareFiftyFifty) {
  CreditScheduler s(2);
  FakeCore core(s, busy(2));
  core.run(3 * kSec);
  EXPECT_NEAR(share(core, 0, 3 * kSec), 0.5, 0.02);
  EXPECT_NEAR(share(core, 1, 3 * kSec), 0.5, 0.02);
  s.advance(3 * kSec);
  // The scheduler's own accounting agrees with the core's, to the picosecond.
  EXPECT_EQ(s.stats().vm[0].run_ps, core.run_ps(0));
  EXPECT_EQ(s.stats().vm[1].run_ps, core.run_ps(1));
  EXPECT_EQ(s.stats().vm[0].run_ps + s.stats().vm[1].run_ps, 3 * kSec);
}

TEST(CreditScheduler, WeightsTwoToOne) {
  CreditParams p;
  p.weights = {512, 256};
  CreditScheduler s(2, p);
  FakeCore core(s, busy(2));
  core.run(3 * kSec);
  EXPECT_NEAR(share(core, 0, 3 * kSec), 2.0 / 3, 0.03);
  EXPECT_NEAR(share(core, 1, 3 * kSec), 1.0 / 3, 0.03);
}

TEST(CreditScheduler, WeightsFourOneTwoTwo) {
  CreditParams p;
  p.weights = {4 * 64, 1 * 64, 2 * 64, 2 * 64};
  CreditScheduler s(4, p);
  FakeCore core(s, busy(4));
  core.run(3 * kSec);
  const double expect[] = {4.0 / 9, 1.0 / 9, 2.0 / 9, 2.0 / 9};
  for (int vm = 0; vm < 4; ++vm) {
    EXPECT_NEAR(share(core, vm, 3 * kSec), expect[vm], 0.03) << "VM " << vm;
  }
}

TEST(CreditScheduler, WeightsHoldOverLongRuns) {
  CreditParams p;
  p.weights = {100, 300};
  CreditScheduler s(2, p);
  FakeCore core(s, busy(2));
  core.run(30 * kSec);
  EXPECT_NEAR(share(core, 0, 30 * kSec), 0.25, 0.01);
  EXPECT_NEAR(share(core, 1, 30 * kSec), 0.75, 0.01);
}

TEST(CreditScheduler, RefillWhenSumNegativeAndBalancesBounded) {
  CreditParams p;
  p.weights = {512, 256, 256};
  CreditScheduler s(3, p);
  // One refill hands out 100 * 3 * 3 = 900 credits, split 2:1:1.
  EXPECT_DOUBLE_EQ(s.refill_total(), 900);
  EXPECT_DOUBLE_EQ(s.credit_share(0), 450);
  EXPECT_DOUBLE_EQ(s.credit_share(1), 225);
  EXPECT_DOUBLE_EQ(s.credit(2), 225);  // every VM starts with one share
  // VM 2 is an I/O VM that is mostly blocked: it must not hoard credit.
  std::vector<Script> scripts = busy(2);
  scripts.push_back(io_vm(100 * kUs, 20 * kMs));
  FakeCore core(s, scripts);
  core.run(3 * kSec);
  s.advance(3 * kSec);
  const auto& st = s.stats();
  EXPECT_EQ(st.ticks, 300u);
  // 3 s of CPU = 30000 credits debited. VM 2 sits at its cap, so a refill adds about 450 + 225
  // usable credits: about 44 refills.
  EXPECT_GE(st.refills, 35u);
  EXPECT_LE(st.refills, 50u);
  for (int vm = 0; vm < 3; ++vm) {
    const auto& v = st.vm[static_cast<std::size_t>(vm)];
    EXPECT_LE(v.credit_max, 2 * s.refill_total()) << vm;
    // A balance drops only while the VM runs, and a refill comes at the first tick with a negative
    // sum: it cannot fall below minus one refill and one slice of debit.
    EXPECT_GE(v.credit_min, -(s.refill_total() + 300)) << vm;
  }
  EXPECT_DOUBLE_EQ(st.vm[2].credit_max, s.credit_share(2));  // the idle VM sat at its cap...
  EXPECT_GT(st.vm[2].credit_dropped, 1000);                  // ...and lost what a refill added
  EXPECT_EQ(st.vm[0].credit_dropped, 0);  // the busy VMs lost nothing: weights hold
  EXPECT_EQ(st.vm[1].credit_dropped, 0);
  EXPECT_NEAR(share(core, 0, 3 * kSec) / share(core, 1, 3 * kSec), 2.0, 0.1);
}

TEST(CreditScheduler, IdleVmDoesNotHoard) {
  CreditScheduler s(2);
  s.wake(0, false, 0);
  EXPECT_EQ(s.pick(-1, 0), 0);
  EXPECT_EQ(run_picks(s, 0, 2 * kSec), 0);
  EXPECT_GT(s.stats().refills, 20u);
  EXPECT_DOUBLE_EQ(s.credit(1), s.credit_share(1));  // blocked all along: stays at one share
  EXPECT_LE(s.credit(0), 0);  // the lone busy VM lives on refills, OVER most of the time
  EXPECT_GE(s.stats().vm[0].credit_min, -(s.refill_total() + 100));
}

TEST(CreditScheduler, TickPreemptsOverVmWhenCreditWaits) {
  for (const bool tick_preempt : {true, false}) {
    CreditParams p;
    p.weights = {1, 3};  // shares 150 and 450
    p.tick_preempt = tick_preempt;
    CreditScheduler s(2, p);
    s.wake(0, false, 0);
    s.wake(1, false, 0);
    EXPECT_EQ(s.pick(-1, 0), 0);
    EXPECT_EQ(s.pick(0, 10 * kMs), 0);  // 50 credits left
    // At 20 ms VM 0 is OVER (-50) and VM 1 has credit.
    EXPECT_EQ(s.pick(0, 20 * kMs), tick_preempt ? 1 : 0) << tick_preempt;
    EXPECT_STREQ(s.state_name(0), "OVER");
    if (!tick_preempt) {
      EXPECT_EQ(s.pick(0, 30 * kMs), 1);
    }
    EXPECT_EQ(s.stats().vm[0].preempted, tick_preempt ? 1u : 0u);
  }
}

TEST(CreditScheduler, WeightsFourOneTwoTwoOverLongRuns) {
  CreditParams p;
  p.weights = {4 * 64, 1 * 64, 2 * 64, 2 * 64};
  CreditScheduler s(4, p);
  FakeCore core(s, busy(4));
  core.run(30 * kSec);
  const double expect[] = {4.0 / 9, 1.0 / 9, 2.0 / 9, 2.0 / 9};
  for (int vm = 0; vm < 4; ++vm) {
    EXPECT_NEAR(share(core, vm, 30 * kSec), expect[vm], 0.01) << "VM " << vm;
  }
}

TEST(CreditScheduler, TickPreemptMakesWeightsTightOverShortRuns) {
  CreditParams p;
  p.weights = {4 * 64, 1 * 64, 2 * 64, 2 * 64};
  p.tick_preempt = true;
  CreditScheduler s(4, p);
  FakeCore core(s, busy(4));
  core.run(3 * kSec);
  const double expect[] = {4.0 / 9, 1.0 / 9, 2.0 / 9, 2.0 / 9};
  for (int vm = 0; vm < 4; ++vm) {
    EXPECT_NEAR(share(core, vm, 3 * kSec), expect[vm], 0.01) << "VM " << vm;
  }
}

TEST(CreditScheduler, ManyVmsUnevenWeights) {
  CreditParams p;
  p.weights = {256, 256, 256, 256, 256, 256, 256, 1024};
  CreditScheduler s(8, p);
  FakeCore core(s, busy(8));
  core.run(10 * kSec);
  for (int vm = 0; vm < 7; ++vm) EXPECT_NEAR(share(core, vm, 10 * kSec), 1.0 / 11, 0.01) << vm;
  EXPECT_NEAR(share(core, 7, 10 * kSec), 4.0 / 11, 0.01);
}

TEST(CreditScheduler, DebitIsProRataOfRunTime) {
  CreditScheduler s(2);
  EXPECT_TRUE(s.wake(0, false, 0));
  EXPECT_EQ(s.pick(-1, 0), 0);
  s.block(0, 2500 * kUs);  // 2.5 ms of CPU = 25 credits, debited at the 10 ms tick
  EXPECT_DOUBLE_EQ(s.credit(0), 300);
  s.advance(10 * kMs);
  EXPECT_DOUBLE_EQ(s.credit(0), 275);
  EXPECT_TRUE(s.wake(0, false, 12 * kMs));
  EXPECT_EQ(s.pick(-1, 12 * kMs), 0);
  s.advance(20 * kMs + 7);
  EXPECT_DOUBLE_EQ(s.credit(0), 195);  // 8 ms more before the 20 ms tick
  EXPECT_EQ(s.stats().vm[0].run_ps, 2500 * kUs + 8 * kMs + 7);
  EXPECT_DOUBLE_EQ(s.credit(1), 300);  // never ran, never debited
}

TEST(CreditScheduler, UnderThenOverAtTicks) {
  CreditScheduler s(2);
  s.wake(0, false, 0);
  s.wake(1, false, 0);
  EXPECT_EQ(s.pick(-1, 0), 0);
  EXPECT_STREQ(s.state_name(0), "UNDER");
  EXPECT_EQ(s.pick(0, 20 * kMs), 0);
  EXPECT_STREQ(s.state_name(0), "UNDER");  // 100 credits left
  // The 30 ms tick leaves 0 credits: OVER; the slice ends and VM 1 (UNDER) runs.
  EXPECT_EQ(s.pick(0, 30 * kMs), 1);
  EXPECT_STREQ(s.state_name(0), "OVER");
  EXPECT_STREQ(s.state_name(1), "UNDER");
}

// ---------------------------------------------------------------- slices

TEST(CreditScheduler, ThreeBusyVmsSwitchEvery30ms) {
  CreditScheduler s(3);
  FakeCore core(s, busy(3));
  core.run(3 * kSec);
  const auto& sw = core.switches();
  ASSERT_EQ(sw.size(), 100u);  // 0, 30, ..., 2970 ms
  for (std::size_t i = 0; i < sw.size(); ++i) {
    EXPECT_EQ(sw[i].t, i * 30 * kMs) << "switch " << i;
  }
  EXPECT_EQ(sw[0].vm, 0);
  EXPECT_EQ(sw[1].vm, 1);
  EXPECT_EQ(sw[2].vm, 2);
  EXPECT_EQ(sw[3].vm, 0);
  for (int vm = 0; vm < 3; ++vm) EXPECT_NEAR(share(core, vm, 3 * kSec), 1.0 / 3, 0.02);
}

TEST(CreditScheduler, LoneBusyVmRenewsItsSlice) {
  CreditScheduler alone(1);
  EXPECT_TRUE(alone.wake(0, false, 0));
  EXPECT_EQ(alone.pick(-1, 0), 0);
  EXPECT_EQ(alone.next_event(0), 10 * kMs);  // the tick comes before the slice end
  EXPECT_EQ(run_picks(alone, 0, 300 * kMs), 0);
  EXPECT_EQ(alone.stats().vm[0].picks, 1u);
  EXPECT_EQ(alone.stats().vm[0].slices, 11u);  // 0, 30, ..., 300 ms
  EXPECT_EQ(alone.stats().vm[0].run_ps, 300 * kMs);
}

TEST(CreditScheduler, SliceEndsAtThirtyMsAfterPickNotOnTickGrid) {
  CreditScheduler s(2);
  s.wake(0, false, 0);
  EXPECT_EQ(s.pick(-1, 0), 0);
  s.block(0, 4 * kMs);
  EXPECT_EQ(s.pick(0, 4 * kMs), -1);
  s.wake(0, false, 5 * kMs);
  s.wake(1, false, 5 * kMs);
  EXPECT_EQ(s.pick(-1, 5 * kMs), 0);
  EXPECT_EQ(s.next_event(5 * kMs), 10 * kMs);
  EXPECT_EQ(s.pick(0, 10 * kMs), 0);
  EXPECT_EQ(s.pick(0, 30 * kMs), 0);
  EXPECT_EQ(s.next_event(30 * kMs), 35 * kMs);
  EXPECT_EQ(s.pick(0, 35 * kMs), 1);
}

// ---------------------------------------------------------------- BOOST

// VMs 0..2 busy from t = 0, VM 0 runs; VM 3 wakes at 5 ms. Returns who runs at 30 ms and 60 ms.
std::tuple<int, int, bool> boost_scenario(bool boost, bool io_event) {
  CreditParams p;
  p.boost = boost;
  p.tickle = false;
  CreditScheduler s(4, p);
  for (int vm = 0; vm < 3; ++vm) s.wake(vm, false, 0);
  EXPECT_EQ(s.pick(-1, 0), 0);
  const bool preempt = s.wake(3, io_event, 5 * kMs);
  EXPECT_STREQ(s.state_name(3), boost && io_event ? "BOOST" : "UNDER");
  EXPECT_EQ(s.pick(0, 10 * kMs), 0);  // ticks never preempt
  EXPECT_EQ(s.pick(0, 20 * kMs), 0);
  const int at30 = s.pick(0, 30 * kMs);
  const int at60 = s.pick(at30, 60 * kMs);
  return {at30, at60, preempt};
}

TEST(CreditScheduler, BoostedIoVmRunsBeforeUnderVmsAtNextDecision) {
  const auto [at30, at60, preempt] = boost_scenario(true, true);
  EXPECT_FALSE(preempt);  // no Tickle
  EXPECT_EQ(at30, 3);
  EXPECT_EQ(at60, 1);
}

TEST(CreditScheduler, WithoutBoostIoVmWaitsItsFifoTurn) {
  const auto [at30, at60, preempt] = boost_scenario(false, true);
  EXPECT_FALSE(preempt);
  EXPECT_EQ(at30, 1);
  EXPECT_EQ(at60, 2);
}

TEST(CreditScheduler, NonIoWakeIsNotBoosted) {
  const auto [at30, at60, preempt] = boost_scenario(true, false);
  EXPECT_FALSE(preempt);
  EXPECT_EQ(at30, 1);
  EXPECT_EQ(at60, 2);
}

TEST(CreditScheduler, BoostEndsAtFirstTickWhileRunning) {
  CreditParams p;
  p.tickle = false;
  CreditScheduler s(2, p);
  s.wake(0, false, 0);
  EXPECT_EQ(s.pick(-1, 0), 0);
  s.wake(1, true, 5 * kMs);
  EXPECT_STREQ(s.state_name(1), "BOOST");
  EXPECT_EQ(s.pick(0, 10 * kMs), 0);
  EXPECT_STREQ(s.state_name(1), "BOOST");  // a waiting VM keeps BOOST across ticks
  EXPECT_EQ(s.pick(0, 30 * kMs), 1);
  EXPECT_STREQ(s.state_name(1), "BOOST");
  s.advance(35 * kMs);
  EXPECT_STREQ(s.state_name(1), "BOOST");
  s.advance(40 * kMs);  // the tick finds it running
  EXPECT_STREQ(s.state_name(1), "UNDER");
  EXPECT_EQ(s.stats().vm[1].boosts, 1u);
}

TEST(CreditScheduler, BoostEndsWhenDescheduled) {
  CreditParams p;
  p.timeslice = 4 * kMs;  // shorter than a tick, so a slice can end before the tick does
  CreditScheduler s(2, p);
  s.wake(0, false, 0);
  EXPECT_EQ(s.pick(-1, 0), 0);
  EXPECT_EQ(s.pick(0, 4 * kMs), 0);  // alone: renews its slice
  EXPECT_TRUE(s.wake(1, true, 5 * kMs));
  EXPECT_EQ(s.pick(0, 5 * kMs), 1);
  EXPECT_STREQ(s.state_name(1), "BOOST");
  EXPECT_EQ(s.next_event(5 * kMs), 9 * kMs);
  EXPECT_EQ(s.pick(1, 9 * kMs), 0);  // slice end: VM 1 goes to the UNDER tail without BOOST
  EXPECT_STREQ(s.state_name(1), "UNDER");
  EXPECT_EQ(s.stats().vm[0].preempted, 1u);
  EXPECT_EQ(s.stats().vm[1].preempted, 0u);  // a slice end is not a preemption
}

TEST(CreditScheduler, BoostDoesNotPreemptBoostAndUnderDoesNotPreemptBoost) {
  CreditScheduler s(3);  // boost + tickle
  s.wake(0, false, 0);
  EXPECT_EQ(s.pick(-1, 0), 0);
  s.block(0, 1 * kMs);
  EXPECT_EQ(s.pick(0, 1 * kMs), -1);
  EXPECT_TRUE(s.wake(1, true, 2 * kMs));  // idle core
  EXPECT_EQ(s.pick(-1, 2 * kMs), 1);
  EXPECT_FALSE(s.wake(2, true, 3 * kMs));
  EXPECT_STREQ(s.state_name(2), "BOOST");
  EXPECT_EQ(s.pick(1, 3 * kMs), 1);
  EXPECT_FALSE(s.wake(0, false, 4 * kMs));
  EXPECT_FALSE(s.wake(2, true, 4 * kMs));  // already runnable: no-op
  EXPECT_EQ(s.stats().vm[2].wakes, 1u);
  s.block(1, 5 * kMs);
  EXPECT_EQ(s.pick(1, 5 * kMs), 2);  // BOOST first, then UNDER
  s.block(2, 6 * kMs);
  EXPECT_EQ(s.pick(-1, 6 * kMs), 0);
}

TEST(CreditScheduler, BoostOnlyUnderFollowsXen) {
  CreditParams p;
  p.boost_only_under = true;
  CreditScheduler s(2, p);
  s.wake(0, false, 0);
  EXPECT_EQ(s.pick(-1, 0), 0);
  EXPECT_EQ(s.pick(0, 30 * kMs), 0);  // 300 credits used: OVER
  s.block(0, 31 * kMs);
  EXPECT_EQ(s.pick(0, 31 * kMs), -1);
  EXPECT_STREQ(s.state_name(0), "BLOCKED");
  EXPECT_TRUE(s.wake(0, true, 32 * kMs));
  EXPECT_STREQ(s.state_name(0), "OVER");
  EXPECT_EQ(s.stats().vm[0].boosts, 0u);
  EXPECT_TRUE(s.wake(1, true, 33 * kMs));
  EXPECT_STREQ(s.state_name(1), "BOOST");
}

// ---------------------------------------------------------------- Tickle

TEST(CreditScheduler, TickleBoostedVmPreemptsAtOnce) {
  CreditScheduler s(4);
  for (int vm = 0; vm < 3; ++vm) s.wake(vm, false, 0);
  EXPECT_EQ(s.pick(-1, 0), 0);
  EXPECT_TRUE(s.wake(3, true, 5 * kMs));
  EXPECT_EQ(s.next_event(5 * kMs), 5 * kMs);
  EXPECT_EQ(s.pick(0, 5 * kMs), 3);
  EXPECT_EQ(s.stats().vm[3].tickles, 1u);
  EXPECT_EQ(s.stats().vm[0].preempted, 1u);
  EXPECT_EQ(s.stats().vm[3].wake_to_run_count, 1u);
  EXPECT_EQ(s.stats().vm[3].wake_to_run_total_ps, 0u);
  // The preempted VM went to the tail: 1, 2, then 0.
  s.block(3, 6 * kMs);
  EXPECT_EQ(s.pick(3, 6 * kMs), 1);
  EXPECT_EQ(s.pick(1, 36 * kMs), 2);
  EXPECT_EQ(s.pick(2, 66 * kMs), 0);
}

TEST(CreditScheduler, TickleUnderPreemptsOverButNotUnder) {
  for (const bool tickle : {true, false}) {
    CreditParams p;
    p.tickle = tickle;
    CreditScheduler s(3, p);
    s.wake(0, false, 0);
    EXPECT_EQ(s.pick(-1, 0), 0);
    EXPECT_EQ(run_picks(s, 0, 30 * kMs), 0);  // alone; its 300 credits are gone at 30 ms
    EXPECT_STREQ(s.state_name(0), "OVER");
    EXPECT_EQ(s.wake(1, false, 35 * kMs), tickle) << tickle;  // UNDER over OVER
    const int next = s.pick(0, 35 * kMs);
    EXPECT_EQ(next, tickle ? 1 : 0);
    if (!tickle) {
      EXPECT_EQ(s.pick(0, 60 * kMs), 1);  // at the slice end
    }
    // UNDER does not tickle UNDER.
    EXPECT_FALSE(s.wake(2, false, 61 * kMs));
  }
}

TEST(CreditScheduler, WakeOnIdleCoreAlwaysAsksForPick) {
  CreditParams p;
  p.tickle = false;
  p.boost = false;
  CreditScheduler s(2, p);
  EXPECT_EQ(s.next_event(0), kNoEvent);
  EXPECT_TRUE(s.wake(1, false, 3 * kMs));
  EXPECT_EQ(s.next_event(3 * kMs), 3 * kMs);
  EXPECT_EQ(s.pick(-1, 3 * kMs), 1);
}

// Paper Figs. 7 and 13(a): VM 0 does network I/O (short CPU bursts between I/O completions), the
// other VMs are CPU-bound. Measures VM 0's wake-to-run latency and I/O rounds completed in 3 s.
struct IoResult {
  double mean_latency_ms;
  TimePs max_latency;
  std::uint64_t rounds;
  double io_share;
};

IoResult io_vs_cpu(int cpu_vms, bool boost, bool tickle, bool tick_preempt = false,
                   TimePs ratelimit = 0) {
  CreditParams p;
  p.boost = boost;
  p.tickle = tickle;
  p.tick_preempt = tick_preempt;
  p.ratelimit = ratelimit;
  CreditScheduler s(1 + cpu_vms, p);
  std::vector<Script> scripts{io_vm(100 * kUs, 400 * kUs)};
  for (int i = 0; i < cpu_vms; ++i) scripts.push_back(Script{});
  FakeCore core(s, scripts);
  core.run(3 * kSec);
  s.advance(3 * kSec);
  const auto& st = s.stats().vm[0];
  // The scheduler's latency statistics agree with the core's measurement.
  EXPECT_EQ(st.wake_to_run_count, core.latencies(0).size());
  EXPECT_EQ(st.wake_to_run_max_ps, core.max_latency(0));
  return {core.mean_latency_ms(0), core.max_latency(0), core.bursts_done(0),
          share(core, 0, 3 * kSec)};
}

TEST(CreditScheduler, Fig7MoreCpuVmsLessIo) {
  std::uint64_t prev = 0;
  for (int cpu_vms = 0; cpu_vms <= 3; ++cpu_vms) {
    const IoResult r = io_vs_cpu(cpu_vms, false, false);
    if (cpu_vms == 0) {
      EXPECT_EQ(r.rounds, 6000u);  // alone: a round every 0.5 ms
    } else {
      EXPECT_LT(r.rounds, prev) << cpu_vms << " CPU VMs";
    }
    prev = r.rounds;
  }
}

TEST(CreditScheduler, Fig13aBoostAndTickle) {
  const IoResult base = io_vs_cpu(3, false, false);
  const IoResult boost = io_vs_cpu(3, true, false);
  const IoResult both = io_vs_cpu(3, true, true);
  // BOOST + Tickle: the I/O VM runs the moment its I/O completes; it completes a round every
  // 0.5 ms, as if it were alone (3 s / 0.5 ms = 6000).
  EXPECT_EQ(both.max_latency, 0u);
  EXPECT_LT(both.mean_latency_ms, 0.001);
  EXPECT_GE(both.rounds, 5990u);
  // BOOST alone: it waits for the running CPU VM's slice end (up to 30 ms), then goes first.
  EXPECT_GT(boost.mean_latency_ms, 5.0);
  EXPECT_LE(boost.max_latency, 30 * kMs);
  EXPECT_LT(boost.rounds, both.rounds / 10);
  // Baseline: it can also wait behind the other UNDER VMs, up to three slices.
  EXPECT_GT(base.max_latency, 60 * kMs);
  EXPECT_LE(base.rounds, boost.rounds);
  // The CPU VMs share what the I/O VM leaves.
  EXPECT_NEAR(both.io_share, 0.2, 0.01);
}

TEST(CreditScheduler, Fig13aWithTickPreempt) {
  // Ticks let the I/O VM (which has credit) in when the running CPU VM has gone OVER, but only
  // Tickle gives it the core at once.
  const IoResult boost = io_vs_cpu(3, true, false, true);
  const IoResult both = io_vs_cpu(3, true, true, true);
  EXPECT_GT(boost.mean_latency_ms, 5.0);
  EXPECT_LE(boost.max_latency, 30 * kMs);
  EXPECT_LT(boost.rounds, both.rounds / 10);
  EXPECT_EQ(both.max_latency, 0u);
  EXPECT_GE(both.rounds, 5990u);
}

// ---------------------------------------------------------------- rate limit

TEST(CreditScheduler, RateLimitDefersTicklePreemption) {
  CreditParams p;
  p.ratelimit = 1 * kMs;
  CreditScheduler s(2, p);
  EXPECT_TRUE(s.wake(1, false, 0));
  EXPECT_EQ(s.pick(-1, 0), 1);
  // VM 0 wakes boosted 200 us after VM 1 was switched in: the preemption waits for 1 ms.
  EXPECT_TRUE(s.wake(0, true, 200 * kUs));
  EXPECT_EQ(s.pick(1, 200 * kUs), 1);
  EXPECT_EQ(s.next_event(200 * kUs), 1 * kMs);
  EXPECT_EQ(s.pick(1, 600 * kUs), 1);  // an extra call before the limit changes nothing
  EXPECT_EQ(s.pick(1, 1 * kMs), 0);
  EXPECT_EQ(s.stats().vm[1].preempted, 1u);
  EXPECT_EQ(s.stats().vm[1].ratelimited, 1u);  // one deferred preemption, however many calls
  EXPECT_EQ(s.stats().vm[0].wake_to_run_max_ps, 800 * kUs);
  // VM 1 waits as UNDER; VM 0 blocks. Once VM 1 has run longer than the limit, a Tickle
  // preempts it at once.
  s.block(0, 1100 * kUs);
  EXPECT_EQ(s.pick(0, 1100 * kUs), 1);
  EXPECT_TRUE(s.wake(0, true, 2500 * kUs));
  EXPECT_EQ(s.next_event(2500 * kUs), 2500 * kUs);
  EXPECT_EQ(s.pick(1, 2500 * kUs), 0);
  EXPECT_EQ(s.stats().vm[0].wake_to_run_max_ps, 800 * kUs);
}

TEST(CreditScheduler, RateLimitAppliesAfterEverySwitchInNotSliceRenewal) {
  CreditParams p;
  p.ratelimit = 1 * kMs;
  CreditScheduler s(2, p);
  EXPECT_TRUE(s.wake(1, false, 0));
  EXPECT_EQ(s.pick(-1, 0), 1);
  EXPECT_EQ(s.pick(1, 30 * kMs), 1);  // alone: a new slice, not a new switch-in
  EXPECT_TRUE(s.wake(0, true, 30 * kMs + 100 * kUs));
  EXPECT_EQ(s.pick(1, 30 * kMs + 100 * kUs), 0);  // ran 30 ms since its switch-in
  EXPECT_EQ(s.stats().vm[1].ratelimited, 0u);
}

TEST(CreditScheduler, Fig13aWithRateLimit) {
  // BOOST + Tickle with Xen's 1 ms rate limit: the I/O VM waits at most 1 ms behind a CPU VM that
  // was just switched in, so it completes fewer rounds than without the limit but many more than
  // with BOOST alone, and the CPU VMs get the time back.
  const IoResult boost = io_vs_cpu(3, true, false);
  const IoResult both = io_vs_cpu(3, true, true);
  const IoResult limited = io_vs_cpu(3, true, true, false, 1 * kMs);
  EXPECT_GT(limited.max_latency, 0u);
  EXPECT_LE(limited.max_latency, 1 * kMs);
  EXPECT_LT(limited.rounds, both.rounds);
  EXPECT_GT(limited.rounds, boost.rounds * 5);
  EXPECT_LT(limited.io_share, both.io_share);
}

// ---------------------------------------------------------------- blocking

TEST(CreditScheduler, BlockedVmIsNeverPickedAndIdleCoreReturnsMinusOne) {
  CreditScheduler s(3);
  EXPECT_EQ(s.pick(-1, 0), -1);
  EXPECT_EQ(s.next_event(0), kNoEvent);
  for (int vm = 0; vm < 3; ++vm) EXPECT_STREQ(s.state_name(vm), "BLOCKED");
  s.wake(0, false, 1 * kMs);
  s.wake(1, false, 1 * kMs);
  EXPECT_EQ(s.pick(-1, 1 * kMs), 0);
  s.block(1, 2 * kMs);  // a waiting VM blocks
  EXPECT_EQ(s.pick(0, 31 * kMs), 0);
  s.block(0, 32 * kMs);
  EXPECT_EQ(s.pick(0, 32 * kMs), -1);
  EXPECT_EQ(s.next_event(32 * kMs), kNoEvent);
  EXPECT_EQ(s.running(), -1);
  EXPECT_EQ(s.pick(-1, 900 * kMs), -1);  // long idle: ticks are caught up lazily
  EXPECT_EQ(s.stats().ticks, 90u);
  s.block(0, 901 * kMs);  // blocking a blocked VM is a no-op
  EXPECT_TRUE(s.wake(2, true, 902 * kMs));
  EXPECT_EQ(s.pick(-1, 902 * kMs), 2);
  EXPECT_EQ(s.next_event(902 * kMs), 910 * kMs);
}

TEST(CreditScheduler, RandomWorkloadNeverPicksBlockedVm) {
  CreditScheduler s(5);
  std::vector<Script> scripts;
  for (int i = 0; i < 5; ++i) {
    Script sc = io_vm((i + 1) * 3 * kMs, (5 - i) * 4 * kMs);
    sc.random = true;
    sc.io_event = i % 2 == 0;
    sc.first_wake = static_cast<TimePs>(i) * 7 * kMs;
    scripts.push_back(sc);
  }
  FakeCore core(s, scripts, 42);
  core.run(5 * kSec);  // the core EXPECTs on every pick
  s.advance(5 * kSec);
  TimePs total = 0;
  for (int vm = 0; vm < 5; ++vm) {
    EXPECT_EQ(s.stats().vm[static_cast<std::size_t>(vm)].run_ps, core.run_ps(vm));
    EXPECT_GT(core.bursts_done(vm), 10u);
    total += core.run_ps(vm);
  }
  EXPECT_LT(total, 5 * kSec);  // there were idle periods
}

// ---------------------------------------------------------------- determinism and misuse

std::vector<Switch> random_run(std::uint32_t seed, bool spurious, hv::CreditStats* out = nullptr,
                               bool tick_preempt = false, TimePs ratelimit = 0) {
  CreditParams p;
  p.tick_preempt = tick_preempt;
  p.ratelimit = ratelimit;
  p.weights = {256, 512, 128, 256};
  CreditScheduler s(4, p);
  std::vector<Script> scripts = busy(2);
  Script a = io_vm(2 * kMs, 3 * kMs);
  a.random = true;
  Script b = io_vm(500 * kUs, 9 * kMs);
  b.random = true;
  b.io_event = false;
  scripts.push_back(a);
  scripts.push_back(b);
  FakeCore core(s, scripts, seed);
  if (spurious) {
    std::vector<TimePs> times;
    std::mt19937 r(seed + 1);
    for (TimePs t = 0; t < 2 * kSec; t += 1 + r() % (3 * kMs)) times.push_back(t);
    core.add_spurious_picks(times);
  }
  core.run(2 * kSec);
  s.advance(2 * kSec);
  if (out != nullptr) *out = s.stats();
  return core.switches();
}

bool same_stats(const hv::CreditStats& a, const hv::CreditStats& b) {
  if (a.ticks != b.ticks || a.refills != b.refills || a.vm.size() != b.vm.size()) return false;
  for (std::size_t i = 0; i < a.vm.size(); ++i) {
    const auto& x = a.vm[i];
    const auto& y = b.vm[i];
    if (x.run_ps != y.run_ps || x.picks != y.picks || x.boosts != y.boosts ||
        x.tickles != y.tickles || x.preempted != y.preempted || x.ratelimited != y.ratelimited ||
        x.wake_to_run_total_ps != y.wake_to_run_total_ps || x.credit_min != y.credit_min) {
      return false;
    }
  }
  return true;
}

TEST(CreditScheduler, IdenticalInputsGiveIdenticalSequences) {
  hv::CreditStats a, b;
  const auto sa = random_run(7, false, &a);
  const auto sb = random_run(7, false, &b);
  EXPECT_GT(sa.size(), 100u);
  EXPECT_EQ(sa, sb);
  EXPECT_TRUE(same_stats(a, b));
  EXPECT_NE(sa, random_run(8, false));  // and the workload does matter
}

TEST(CreditScheduler, ExtraPickCallsChangeNothing) {
  for (const bool tick_preempt : {false, true}) {
    hv::CreditStats a, b;
    const auto sa = random_run(11, false, &a, tick_preempt);
    const auto sb = random_run(11, true, &b, tick_preempt);
    EXPECT_EQ(sa, sb) << tick_preempt;
    EXPECT_TRUE(same_stats(a, b)) << tick_preempt;
  }
  hv::CreditStats a, b;
  const auto sa = random_run(13, false, &a, false, 2 * kMs);
  const auto sb = random_run(13, true, &b, false, 2 * kMs);
  EXPECT_EQ(sa, sb);
  EXPECT_TRUE(same_stats(a, b));
  std::uint64_t deferred = 0;
  for (const auto& vm : a.vm) deferred += vm.ratelimited;
  EXPECT_GT(deferred, 0u);  // the limit was exercised
}

TEST(CreditScheduler, MisuseIsReported) {
  CreditParams bad;
  bad.weights = {1, 2};
  EXPECT_THROW(CreditScheduler(3, bad), std::invalid_argument);
  bad.weights = {1, 0};
  EXPECT_THROW(CreditScheduler(2, bad), std::invalid_argument);
  bad.weights = {1, 65536};
  EXPECT_THROW(CreditScheduler(2, bad), std::invalid_argument);
  bad.weights = {65535, 1};
  EXPECT_NO_THROW(CreditScheduler(2, bad));
  CreditParams huge;
  huge.timeslice = hv::kNoEvent / 2;
  EXPECT_THROW(CreditScheduler(2, huge), std::invalid_argument);
  EXPECT_THROW(CreditScheduler(0), std::invalid_argument);
  CreditParams over;
  over.ratelimit = over.timeslice + 1;
  EXPECT_THROW(CreditScheduler(2, over), std::invalid_argument);
  CreditParams zero;
  zero.tick = 0;
  EXPECT_THROW(CreditScheduler(1, zero), std::invalid_argument);

  CreditScheduler s(2);
  EXPECT_THROW(s.wake(2, false, 0), std::out_of_range);
  EXPECT_THROW(s.state_name(-1), std::out_of_range);
  s.wake(0, false, 5 * kMs);
  EXPECT_THROW(s.wake(1, false, 4 * kMs), std::invalid_argument);  // time went back
  EXPECT_EQ(s.pick(-1, 5 * kMs), 0);
  EXPECT_THROW(s.pick(1, 5 * kMs), std::logic_error);  // core and scheduler disagree
  EXPECT_THROW(s.pick(-1, 6 * kMs), std::logic_error);
  EXPECT_EQ(s.pick(0, 6 * kMs), 0);
}

// ---------------------------------------------------------------- several pCPUs

// A discrete-time fake of several cores sharing one scheduler: every vCPU is CPU-bound (never
// blocks once woken at its first_wake) or an I/O script as above. After every event it calls
// pick_on() for each pCPU the scheduler asked for (wake_on's answer, next_event_on <= now) until
// none is due, and records which pCPU ran which vCPU for how long.
class FakeCores {
 public:
  FakeCores(CreditScheduler& s, std::vector<Script> scripts) : s_(s), scripts_(std::move(scripts)) {
    const std::size_t n = scripts_.size();
    const auto p = static_cast<std::size_t>(s_.pcpu_count());
    running_.assign(p, -1);
    runnable_.assign(n, false);
    started_.assign(n, false);
    remaining_.assign(n, 0);
    wake_at_.assign(n, kNoEvent);
    run_ps_.assign(n, 0);
    ran_on_.assign(n, std::vector<TimePs>(p, 0));
    for (std::size_t i = 0; i < n; ++i) wake_at_[i] = scripts_[i].first_wake;
  }

  void run(TimePs until) {
    for (int guard = 0; guard < 10'000'000; ++guard) {
      std::vector<bool> due(running_.size(), false);
      for (std::size_t p = 0; p < running_.size(); ++p) {
        const int v = running_[p];
        if (v < 0 || scripts_[idx(v)].cpu_bound || remaining_[idx(v)] > 0) continue;
        s_.block(v, t_);
        runnable_[idx(v)] = false;
        wake_at_[idx(v)] = t_ + scripts_[idx(v)].io_wait;
        running_[p] = -1;
        due[p] = true;
      }
      for (std::size_t i = 0; i < scripts_.size(); ++i) {
        if (runnable_[i] || wake_at_[i] > t_) continue;
        const bool io = started_[i] && scripts_[i].io_event;
        started_[i] = runnable_[i] = true;
        wake_at_[i] = kNoEvent;
        remaining_[i] = scripts_[i].cpu_bound ? 0 : scripts_[i].burst;
        for (int p : s_.wake_on(static_cast<int>(i), io, t_))
          due[static_cast<std::size_t>(p)] = true;
      }
      for (int round = 0; round < 64; ++round) {
        bool any = false;
        for (std::size_t p = 0; p < running_.size(); ++p) {
          if (!due[p] && s_.next_event_on(static_cast<int>(p), t_) > t_) continue;
          due[p] = false;
          any = true;
          const int v = s_.pick_on(static_cast<int>(p), running_[p], t_);
          if (v >= 0) {
            EXPECT_TRUE(runnable_[idx(v)]) << "blocked vCPU " << v << " picked at " << t_;
            if (!allowed(v, static_cast<int>(p))) ++affinity_violations_;
            for (std::size_t q = 0; q < running_.size(); ++q)
              if (q != p && running_[q] == v) ++double_runs_;
          }
          running_[p] = v;
        }
        if (!any) break;
      }
      TimePs next = kNoEvent;
      for (std::size_t p = 0; p < running_.size(); ++p) {
        next = std::min(next, s_.next_event_on(static_cast<int>(p), t_));
        const int v = running_[p];
        if (v >= 0 && !scripts_[idx(v)].cpu_bound) next = std::min(next, t_ + remaining_[idx(v)]);
      }
      for (TimePs w : wake_at_) next = std::min(next, w);
      if (next == kNoEvent || next >= until) {
        consume(until);
        t_ = until;
        s_.advance(until);  // statistics up to the end
        return;
      }
      if (next <= t_) {
        ADD_FAILURE() << "time does not advance at " << t_;
        return;
      }
      consume(next);
      t_ = next;
    }
    ADD_FAILURE() << "too many events";
  }

  void set_affinity(std::vector<std::vector<int>> a) { affinity_ = std::move(a); }
  TimePs run_ps(int v) const { return run_ps_[idx(v)]; }
  TimePs ran_on(int v, int p) const { return ran_on_[idx(v)][static_cast<std::size_t>(p)]; }
  int affinity_violations() const { return affinity_violations_; }
  int double_runs() const { return double_runs_; }

 private:
  static std::size_t idx(int v) { return static_cast<std::size_t>(v); }
  bool allowed(int v, int p) const {
    if (affinity_.empty() || affinity_[idx(v)].empty()) return true;
    const auto& a = affinity_[idx(v)];
    return std::find(a.begin(), a.end(), p) != a.end();
  }
  void consume(TimePs until) {
    const TimePs d = until - t_;
    for (std::size_t p = 0; p < running_.size(); ++p) {
      const int v = running_[p];
      if (v < 0) continue;
      run_ps_[idx(v)] += d;
      ran_on_[idx(v)][p] += d;
      if (!scripts_[idx(v)].cpu_bound) remaining_[idx(v)] -= d;
    }
  }

  CreditScheduler& s_;
  std::vector<Script> scripts_;
  std::vector<std::vector<int>> affinity_;
  std::vector<int> running_;
  std::vector<bool> runnable_, started_;
  std::vector<TimePs> remaining_, wake_at_, run_ps_;
  std::vector<std::vector<TimePs>> ran_on_;
  int affinity_violations_ = 0;
  int double_runs_ = 0;
  TimePs t_ = 0;
};

CreditParams cores(int n) {
  CreditParams p;
  p.pcpus = n;
  return p;
}

TEST(CreditSchedulerSmp, TwoBusyVcpusOnTwoPcpusRunInParallel) {
  CreditScheduler s(2, cores(2));
  FakeCores c(s, busy(2));
  c.run(1 * kSec);
  EXPECT_EQ(c.run_ps(0), 1 * kSec);
  EXPECT_EQ(c.run_ps(1), 1 * kSec);
  EXPECT_EQ(s.home(0), 0);  // placed one per pCPU
  EXPECT_EQ(s.home(1), 1);
  EXPECT_EQ(s.stats().pcpu_busy_ps[0] + s.stats().pcpu_busy_ps[1], 2 * kSec);
  EXPECT_EQ(c.double_runs(), 0);
}

TEST(CreditSchedulerSmp, IdlePcpuStealsAWaiterOnWake) {
  CreditScheduler s(3, cores(2));  // homes: 0 -> p0, 1 -> p1, 2 -> p0
  EXPECT_EQ(s.home(2), 0);
  EXPECT_EQ(s.wake_on(0, false, 0), std::vector<int>{0});  // its home is idle
  EXPECT_EQ(s.pick_on(0, -1, 0), 0);
  // vCPU 2's home runs vCPU 0 (same priority, no preemption): the idle pCPU 1 is asked instead.
  EXPECT_EQ(s.wake_on(2, false, 1 * kUs), std::vector<int>{1});
  EXPECT_EQ(s.next_event_on(1, 1 * kUs), 1 * kUs);
  EXPECT_EQ(s.pick_on(1, -1, 1 * kUs), 2);
  EXPECT_EQ(s.home(2), 1);
  EXPECT_EQ(s.stats().vm[2].migrations, 1u);
  EXPECT_EQ(s.running_on(0), 0);
  EXPECT_EQ(s.running_on(1), 2);
}

TEST(CreditSchedulerSmp, BoostedWakeTicklesItsHomeWhenAllPcpusAreBusy) {
  CreditScheduler s(3, cores(2));
  s.wake_on(0, false, 0);
  s.wake_on(1, false, 0);
  EXPECT_EQ(s.pick_on(0, -1, 0), 0);
  EXPECT_EQ(s.pick_on(1, -1, 0), 1);
  EXPECT_EQ(s.wake_on(2, true, 1 * kMs), std::vector<int>{0});  // BOOST over UNDER on p0
  EXPECT_EQ(s.pick_on(0, 0, 1 * kMs), 2);
  EXPECT_EQ(s.stats().vm[0].preempted, 1u);
  EXPECT_EQ(s.running_on(1), 1);  // the other pCPU is untouched
  // A plain wake of the preempted vCPU's peer with no idle pCPU asks nobody.
  s.block(1, 2 * kMs);
  EXPECT_EQ(s.pick_on(1, 1, 2 * kMs), 0);  // pCPU 1 idles, so it steals vCPU 0 from p0's queue
  EXPECT_EQ(s.wake_on(1, false, 3 * kMs), std::vector<int>{});
}

TEST(CreditSchedulerSmp, PinnedVcpuNeverRunsElsewhere) {
  CreditParams p = cores(2);
  p.affinity = {{0}, {0}, {1}};
  CreditScheduler s(3, p);
  FakeCores c(s, busy(3));
  c.set_affinity(p.affinity);
  c.run(3 * kSec);
  EXPECT_EQ(c.affinity_violations(), 0);
  EXPECT_EQ(c.ran_on(0, 1) + c.ran_on(1, 1) + c.ran_on(2, 0), 0u);
  EXPECT_EQ(c.run_ps(2), 3 * kSec);  // alone on pCPU 1, although pCPU 0 is overloaded
  EXPECT_NEAR(static_cast<double>(c.run_ps(0)) / (3 * kSec), 0.5, 0.02);
  EXPECT_NEAR(static_cast<double>(c.run_ps(1)) / (3 * kSec), 0.5, 0.02);
  // A vCPU pinned away from an idle pCPU is not offered to it.
  CreditScheduler t(3, p);
  t.wake_on(0, false, 0);
  t.pick_on(0, -1, 0);
  EXPECT_EQ(t.wake_on(1, false, 1 * kMs), std::vector<int>{});
  EXPECT_EQ(t.next_event_on(1, 1 * kMs), kNoEvent);
  EXPECT_EQ(t.pick_on(1, -1, 1 * kMs), -1);
}

TEST(CreditSchedulerSmp, LoadBalancingEvensOutThreeBusyVcpusOnTwoPcpus) {
  // Without balancing the vCPU alone on its home would keep a whole pCPU (100 %) and the other
  // two would share one (50 % each); stealing by a pCPU whose own best waiter is OVER evens
  // them out towards 2/3 each.
  CreditScheduler s(3, cores(2));
  FakeCores c(s, busy(3));
  c.run(6 * kSec);
  std::uint64_t migrations = 0;
  for (int v = 0; v < 3; ++v) {
    const double f = static_cast<double>(c.run_ps(v)) / (6 * kSec);
    EXPECT_GT(f, 0.55) << "vCPU " << v;
    EXPECT_LT(f, 0.80) << "vCPU " << v;
    migrations += s.stats().vm[static_cast<std::size_t>(v)].migrations;
  }
  EXPECT_GT(migrations, 0u);
  EXPECT_EQ(c.double_runs(), 0);
  EXPECT_EQ(s.stats().pcpu_busy_ps[0], 6 * kSec);  // work-conserving: no pCPU idles
  EXPECT_EQ(s.stats().pcpu_busy_ps[1], 6 * kSec);
}

TEST(CreditSchedulerSmp, IoVcpusSpreadOverIdlePcpus) {
  // Four I/O vCPUs on four pCPUs, each busy 1 ms of every 3 ms: all bursts are served at once.
  CreditScheduler s(4, cores(4));
  FakeCores c(s, std::vector<Script>(4, io_vm(1 * kMs, 2 * kMs)));
  c.run(300 * kMs);
  for (int v = 0; v < 4; ++v) EXPECT_EQ(c.run_ps(v), 100 * kMs) << "vCPU " << v;
}

TEST(CreditSchedulerSmp, WeightIsPerDomainAndSplitAmongItsVcpus) {
  CreditParams p;
  p.domain = {0, 0, 1};  // VM 0 has two vCPUs, VM 1 one
  p.weights = {256, 256};
  CreditScheduler s(3, p);
  EXPECT_DOUBLE_EQ(s.credit_share(0) + s.credit_share(1), s.credit_share(2));
  EXPECT_NEAR(s.credit_share(0), s.credit_share(1), 1e-9);
  EXPECT_DOUBLE_EQ(s.credit_share(0) + s.credit_share(1) + s.credit_share(2), s.refill_total());
  // One pCPU: VM 1's lone vCPU gets about what VM 0's two get together.
  FakeCores c(s, busy(3));
  c.run(6 * kSec);
  const double vm0 = static_cast<double>(c.run_ps(0) + c.run_ps(1)) / (6 * kSec);
  EXPECT_NEAR(vm0, 0.5, 0.05);
}

TEST(CreditSchedulerSmp, OnePcpuWithExplicitOptionsDecidesAsTheDefault) {
  // The same random I/O mix through the default scheduler and one given pcpus = 1, an identity
  // domain map and every vCPU pinned to pCPU 0: identical decisions and statistics.
  std::vector<Script> mix;
  for (int i = 0; i < 4; ++i) {
    Script sc = io_vm(3 * kMs, 5 * kMs);
    sc.random = true;
    mix.push_back(sc);
  }
  mix.push_back(Script{});
  CreditParams explicit_p;
  explicit_p.pcpus = 1;
  explicit_p.domain = {0, 1, 2, 3, 4};
  explicit_p.affinity = {{0}, {0}, {0}, {0}, {0}};
  CreditScheduler a(5), b(5, explicit_p);
  FakeCore ca(a, mix, 7), cb(b, mix, 7);
  ca.run(2 * kSec);
  cb.run(2 * kSec);
  EXPECT_EQ(ca.switches(), cb.switches());
  EXPECT_GT(ca.switches().size(), 100u);
  for (int v = 0; v < 5; ++v) EXPECT_EQ(a.stats().vm[v].run_ps, b.stats().vm[v].run_ps);
}

TEST(CreditSchedulerSmp, SmpMisuseIsReported) {
  CreditParams p = cores(2);
  p.affinity = {{0}, {2}};
  EXPECT_THROW(CreditScheduler(2, p), std::invalid_argument);  // pCPU 2 of 2
  p.affinity = {{0}};
  EXPECT_THROW(CreditScheduler(2, p), std::invalid_argument);  // one entry for two vCPUs
  EXPECT_THROW(CreditScheduler(2, cores(0)), std::invalid_argument);
  CreditParams d;
  d.domain = {0, 2};  // domain 1 has no vCPU
  EXPECT_THROW(CreditScheduler(2, d), std::invalid_argument);
  d.domain = {0, 0};
  d.weights = {256, 256};  // one weight per domain
  EXPECT_THROW(CreditScheduler(2, d), std::invalid_argument);
  CreditScheduler s(2, cores(2));
  EXPECT_THROW(s.pick_on(2, -1, 0), std::out_of_range);
  EXPECT_THROW(s.next_event_on(-1, 0), std::out_of_range);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
