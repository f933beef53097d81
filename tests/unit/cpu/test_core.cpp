// Bench for cpu::Core: cycle accounting, priorities, preemption, time slices, switch costs.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/cpu/core.h"
#include "tests/support/bench.h"

using vtoe::core::TimePs;
using vtoe::cpu::Core;
using vtoe::cpu::CoreParams;
using vtoe::cpu::CycleClass;

namespace {

constexpr TimePs kNs = 1000;
constexpr TimePs kUs = 1000 * kNs;
constexpr TimePs kMs = 1000 * kUs;

using vtoe::test::Proc;

TimePs now() { return sc_core::sc_time_stamp().value(); }

}  // namespace

TEST(CpuCore, ExecuteTakesCyclesOverFrequencyAndIsAccounted) {
  CoreParams p;
  p.freq_hz = 2e9;
  Core core("core", p);
  auto& ctx = core.add_context("proc", 2);
  TimePs done_at = 0;
  Proc proc("proc", [&] {
    core.execute(ctx, 2000, CycleClass::GuestUser);    // 1 us at 2 GHz
    core.execute(ctx, 1000, CycleClass::GuestKernel);  // 0.5 us
    done_at = now();
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  EXPECT_EQ(done_at, 1500 * kNs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestUser), 1 * kUs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestKernel), 500 * kNs);
  EXPECT_EQ(core.idle_ps(), 8500 * kNs);
  EXPECT_EQ(core.accounted_ps(), 10 * kUs);
}

TEST(CpuCore, HigherPriorityPreemptsAndLowerResumes) {
  Core core("core", CoreParams{});
  auto& low = core.add_context("low", 2);
  auto& high = core.add_context("isr", 0);
  TimePs low_done = 0, high_done = 0;
  Proc a("a", [&] {
    core.execute(low, 4000, CycleClass::GuestUser);  // 2 us of work
    low_done = now();
  });
  Proc b("b", [&] {
    sc_core::wait(sc_core::sc_time(500, sc_core::SC_NS));
    core.execute(high, 2000, CycleClass::GuestKernel);  // 1 us, arrives at 0.5 us
    high_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  EXPECT_EQ(high_done, 1500 * kNs);  // ran at once
  EXPECT_EQ(low_done, 3 * kUs);      // 2 us of its own plus 1 us stolen
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestUser), 2 * kUs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestKernel), 1 * kUs);
  EXPECT_GE(core.stats().counter("preemptions").value(), 1u);
}

TEST(CpuCore, TwoPieceRequestEndsAsTwoRequestsWouldAndChargesEachPieceToItsClass) {
  Core core("core", CoreParams{});  // 2 GHz
  auto& low = core.add_context("app", 2);
  auto& high = core.add_context("isr", 0);
  TimePs low_done = 0, high_done = 0, idle_done = 0;
  Proc a("a", [&] {
    // 1 us of user work then 0.5 us of kernel work, as one request.
    core.execute(low, Core::Work{2000, CycleClass::GuestUser}, 1000, CycleClass::GuestKernel);
    low_done = now();
    // An empty first piece is a plain request; nothing at all is no request.
    core.execute(low, Core::Work{}, 0, CycleClass::GuestKernel);
    idle_done = now();
  });
  Proc b("b", [&] {
    // Arrives inside the first piece: 0.4 us of kernel work.
    sc_core::wait(sc_core::sc_time(600, sc_core::SC_NS));
    core.execute(high, 800, CycleClass::GuestKernel);
    high_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  EXPECT_EQ(high_done, 1000 * kNs);
  EXPECT_EQ(low_done, 1900 * kNs);  // 1.5 us of its own plus 0.4 us taken by the handler
  EXPECT_EQ(idle_done, low_done);
  // The first piece is user time, whatever interrupted it; the second and the handler kernel.
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestUser), 1 * kUs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestKernel), 900 * kNs);
  EXPECT_EQ(core.accounted_ps(), 10 * kUs);
}

TEST(CpuCore, RequestGoesOnPastItsCutOnlyIfItHadTheCoreAlone) {
  Core core("core", CoreParams{});  // 2 GHz
  auto& app = core.add_context("app", 2);
  auto& isr = core.add_context("isr", 0);
  bool through[3] = {};
  TimePs end[3] = {};
  Proc a("a", [&] {
    // Alone: 0.5 us user, 0.5 us kernel to the cut, then 0.25 + 0.25 us kernel.
    through[0] = core.execute_past_cut(app, Core::Work{1000, CycleClass::GuestUser}, 1000,
                                       CycleClass::GuestKernel, {500, 500});
    end[0] = now();
    // An interrupt handler takes the core before the cut: the request ends there.
    through[1] = core.execute_past_cut(app, Core::Work{}, 2000, CycleClass::GuestKernel, {2000});
    end[1] = now();
    // Alone again: through.
    through[2] = core.execute_past_cut(app, Core::Work{}, 2000, CycleClass::GuestKernel, {2000});
    end[2] = now();
  });
  Proc b("b", [&] {
    sc_core::wait(sc_core::sc_time(2000, sc_core::SC_NS));
    core.execute(isr, 400, CycleClass::GuestKernel);  // 0.2 us from 2 us
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  EXPECT_TRUE(through[0]);
  EXPECT_EQ(end[0], 1500 * kNs);
  EXPECT_FALSE(through[1]);
  EXPECT_EQ(end[1], 2700 * kNs);  // its 1 us to the cut and the handler's 0.2 us, no more
  EXPECT_TRUE(through[2]);
  EXPECT_EQ(end[2], 4700 * kNs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestUser), 500 * kNs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestKernel), 4200 * kNs);
}

TEST(CpuCore, RequestEndsAtItsCutWhenAnEqualPriorityContextWaitsForItsTurn) {
  Core core("core", CoreParams{});
  auto& app = core.add_context("app", 2);
  auto& other = core.add_context("other", 2);
  bool through = true;
  TimePs app_done = 0, other_done = 0;
  Proc a("a", [&] {
    through = core.execute_past_cut(app, Core::Work{}, 2000, CycleClass::GuestKernel, {2000});
    app_done = now();
  });
  Proc b("b", [&] {
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_NS));
    core.execute(other, 200, CycleClass::GuestUser);  // ready behind it, runs at the cut
    other_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  EXPECT_FALSE(through);
  EXPECT_EQ(app_done, 1000 * kNs);
  EXPECT_EQ(other_done, 1100 * kNs);
}

TEST(CpuCore, ThenMoreLeavesDecisionsAndTimesAsTheyWereWhetherTheThreadGoesOnOrWaits) {
  Core core("core", CoreParams{});  // 2 GHz
  auto& low = core.add_context("app", 2);
  auto& high = core.add_context("isr", 0);
  TimePs low_done = 0, first_done = 0, second_done = 0, third_done = 0;
  Proc a("a", [&] {
    core.execute(low, 8000, CycleClass::GuestUser);  // 4 us of work
    low_done = now();
  });
  Proc b("b", [&] {
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    // Goes on at once: the app is picked at 1.5 us and preempted again in the same instant.
    core.then_more(high);
    core.execute(high, 1000, CycleClass::GuestKernel);  // 0.5 us
    first_done = now();
    core.then_more(high);
    core.execute(high, 1000, CycleClass::GuestKernel);
    second_done = now();
    // Said it would go on but waits: the app's wake-up is timed a delta cycle later.
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_NS));
    core.execute(high, 1000, CycleClass::GuestKernel);  // at 2 us + 1 ns
    third_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  EXPECT_EQ(first_done, 1500 * kNs);
  EXPECT_EQ(second_done, 2 * kUs);
  EXPECT_EQ(third_done, 2501 * kNs);
  EXPECT_EQ(low_done, 5500 * kNs);  // 4 us of its own plus 1.5 us taken by the handler
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestUser), 4 * kUs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestKernel), 1500 * kNs);
  EXPECT_EQ(core.accounted_ps(), 10 * kUs);
  EXPECT_EQ(core.stats().counter("preemptions").value(), 3u);
}

TEST(CpuCore, EqualPrioritiesShareByTimeSlice) {
  CoreParams p;
  p.timeslice_ps = 1 * kMs;
  Core core("core", p);
  auto& x = core.add_context("x", 2);
  auto& y = core.add_context("y", 2);
  TimePs x_done = 0, y_done = 0;
  // Each needs 3 ms: with 1 ms slices they alternate and both finish near the end.
  Proc a("a", [&] {
    core.execute(x, 6e6, CycleClass::GuestUser);
    x_done = now();
  });
  Proc b("b", [&] {
    core.execute(y, 6e6, CycleClass::GuestUser);
    y_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
  EXPECT_EQ(x_done, 5 * kMs);
  EXPECT_EQ(y_done, 6 * kMs);
  EXPECT_GE(core.context_switches(), 5u);
}

TEST(CpuCore, SwitchCostChargedAsKernelBetweenProcesses) {
  CoreParams p;
  p.switch_cycles = 1000;  // 0.5 us
  Core core("core", p);
  auto& x = core.add_context("x", 2);
  auto& y = core.add_context("y", 2);
  TimePs y_done = 0;
  Proc a("a", [&] { core.execute(x, 2000, CycleClass::GuestUser); });
  Proc b("b", [&] {
    core.execute(y, 2000, CycleClass::GuestUser);
    y_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  // x runs 1 us, then a switch (0.5 us) and y's 1 us.
  EXPECT_EQ(y_done, 2500 * kNs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestKernel), 500 * kNs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestUser), 2 * kUs);
}

TEST(CpuCore, OwnersAccountedSeparatelyAndBaselineResets) {
  Core core("core", CoreParams{}, 2);
  auto& vm0 = core.add_context("vm0", 2, 0);
  auto& vm1 = core.add_context("vm1", 2, 1);
  Proc a("a", [&] { core.execute(vm0, 2000, CycleClass::GuestUser); });
  Proc b("b", [&] { core.execute(vm1, 4000, CycleClass::Hypervisor); });
  sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_US));
  core.mark_baseline();
  sc_core::sc_start(sc_core::sc_time(8, sc_core::SC_US));
  // By 2 us vm0 (1 us) and 1 us of vm1 ran; after the baseline only vm1's last 1 us counts.
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestUser), 0u);
  EXPECT_EQ(core.busy_ps(1, CycleClass::Hypervisor), 1 * kUs);
  EXPECT_EQ(core.idle_ps(), 7 * kUs);
  EXPECT_THROW(core.add_context("bad", 2, 5), std::out_of_range);
}

TEST(CpuCore, AContextRunsOnItsOwnCoreWhicheverCoreIsAsked) {
  // A multi-core host: a kernel layer built with core 0 executes a process of core 1; the work
  // runs on core 1, in parallel with core 0's own.
  Core core0("core0", CoreParams{}), core1("core1", CoreParams{});
  auto& kthread = core0.add_context("kthread", 1);
  auto& proc1 = core1.add_context("proc1", 2);
  EXPECT_EQ(&proc1.core(), &core1);
  TimePs k_done = 0, p_done = 0;
  Proc a("a", [&] {
    core0.execute(kthread, 2000, CycleClass::GuestKernel);  // 1 us on core 0
    k_done = now();
  });
  Proc b("b", [&] {
    core0.execute(proc1, 4000, CycleClass::GuestKernel);  // 2 us, asked of core 0
    p_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  EXPECT_EQ(k_done, 1 * kUs);  // not delayed by proc1: it ran elsewhere
  EXPECT_EQ(p_done, 2 * kUs);
  EXPECT_EQ(core0.busy_ps(0, CycleClass::GuestKernel), 1 * kUs);
  EXPECT_EQ(core1.busy_ps(0, CycleClass::GuestKernel), 2 * kUs);
}

TEST(CpuCore, HandOverMovesAWaitingVmsContextsToAnotherCore) {
  // Core 0 runs VM 1's hog; VM 0's request waits behind it. Handed over to core 1 at 0.5 us, it
  // runs there at once, and the next request of its thread goes to core 1 too.
  Core core0("core0", CoreParams{}, 2), core1("core1", CoreParams{}, 2);
  auto& hog = core0.add_context("hog", 2, 1);
  auto& mover = core0.add_context("mover", 2, 0);
  TimePs hog_done = 0, first_done = 0, second_done = 0;
  Proc a("a", [&] {
    core0.execute(hog, 4000, CycleClass::GuestUser);  // 2 us
    hog_done = now();
  });
  Proc b("b", [&] {
    core0.execute(mover, 2000, CycleClass::GuestUser);  // 1 us, queued behind the hog
    first_done = now();
    core0.execute(mover, 2000, CycleClass::GuestUser);  // asked of core 0, runs on core 1
    second_done = now();
  });
  Proc c("c", [&] {
    sc_core::wait(sc_core::sc_time(500, sc_core::SC_NS));
    core0.hand_over(0, core1);
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  EXPECT_EQ(&mover.core(), &core1);
  EXPECT_EQ(hog_done, 2 * kUs);
  EXPECT_EQ(first_done, 1500 * kNs);
  EXPECT_EQ(second_done, 2500 * kNs);
  EXPECT_EQ(core1.busy_ps(0, CycleClass::GuestUser), 2 * kUs);
  EXPECT_EQ(core0.busy_ps(0, CycleClass::GuestUser), 0u);
  EXPECT_EQ(core0.busy_ps(1, CycleClass::GuestUser), 2 * kUs);
}

TEST(CpuCore, ThousandsOfReadyContextsRunInArrivalOrderBehindHigherPriorities) {
  // A server with thousands of worker processes ready at once (NetVP with 10,000 clients): the
  // ready set keeps FIFO order among equal priorities, a higher priority still goes first, and
  // natively the contexts of two VMs compete by priority and arrival alone.
  CoreParams p;
  p.freq_hz = 2e9;
  p.timeslice_ps = 1 * kMs;
  Core core("core", p, 2);
  constexpr int kWorkers = 3000;
  std::vector<TimePs> done(kWorkers, 0);
  std::vector<std::unique_ptr<Proc>> procs;
  for (int k = 0; k < kWorkers; ++k) {
    // Odd workers belong to VM 1: natively both VMs' processes share one queue per priority.
    auto& ctx = core.add_context("w" + std::to_string(k), 2, k % 2);
    procs.push_back(std::make_unique<Proc>(("p" + std::to_string(k)).c_str(), [&, k] {
      sc_core::wait(sc_core::sc_time::from_value(static_cast<std::uint64_t>(k) * kNs));
      core.execute(ctx, 2000, CycleClass::GuestUser);  // 1 us each; arrivals 1 ns apart
      done[static_cast<std::size_t>(k)] = now();
    }));
  }
  auto& isr = core.add_context("isr", 0, 1);
  TimePs isr_done = 0;
  Proc irq("irq", [&] {
    sc_core::wait(sc_core::sc_time::from_value(1500 * kNs + 1));
    core.execute(isr, 200, CycleClass::GuestKernel);  // 0.1 us, in the middle of worker 1
    isr_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
  EXPECT_EQ(isr_done, 1600 * kNs + 1);
  EXPECT_EQ(done[0], 1 * kUs);
  for (int k = 1; k < kWorkers; ++k)  // one after another in arrival order, 0.1 us later
    ASSERT_EQ(done[static_cast<std::size_t>(k)], (k + 1) * kUs + 100 * kNs) << "worker " << k;
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestUser) + core.busy_ps(1, CycleClass::GuestUser),
            kWorkers * kUs);
}

namespace {
// A VM scheduler for tests: round robin over runnable VMs with a fixed slice; preempts on an
// I/O wake when `tickle` is set. Records the calls it gets.
struct FakeScheduler : vtoe::cpu::VmScheduler {
  explicit FakeScheduler(int vms, TimePs slice) : runnable(vms, false), slice_(slice) {}
  int vm_count() const override { return static_cast<int>(runnable.size()); }
  bool wake(int vm, bool io, TimePs) override {
    runnable[vm] = true;
    ++wakes;
    return io && tickle;
  }
  void block(int vm, TimePs) override {
    runnable[vm] = false;
    ++blocks;
  }
  int pick(int running, TimePs now) override {
    const int n = vm_count();
    const bool keep = running >= 0 && runnable[running] && now < slice_end_;
    if (keep && !(tickle_target >= 0 && runnable[tickle_target] && tickle_target != running))
      return running;
    int next = -1;
    if (tickle_target >= 0 && runnable[tickle_target]) next = tickle_target;
    for (int i = 1; next < 0 && i <= n; ++i) {
      const int v = ((running < 0 ? -1 : running) + i + n) % n;
      if (runnable[v]) next = v;
    }
    tickle_target = -1;
    slice_end_ = now + slice_;
    picks.push_back(next);
    return next;
  }
  TimePs next_event(TimePs) const override { return slice_end_; }
  const char* state_name(int) const override { return "X"; }
  std::vector<bool> runnable;
  std::vector<int> picks;
  int wakes = 0, blocks = 0, tickle_target = -1;
  bool tickle = false;
  TimePs slice_, slice_end_ = 0;
};
}  // namespace

TEST(CpuCoreVirtualized, VmsTakeTurnsAndSwitchesCostHypervisorTime) {
  Core core("core", CoreParams{}, 2);
  FakeScheduler sched(2, 30 * kMs);
  vtoe::cpu::VmHooks hooks;
  hooks.switch_cycles = 2000;  // 1 us per VM switch
  int switches_seen = 0;
  hooks.on_switch = [&](int, int) { ++switches_seen; };
  core.set_vm_scheduler(&sched, hooks);
  auto& a = core.add_context("vm0.p", 2, 0);
  auto& b = core.add_context("vm1.p", 2, 1);
  // Both CPU-bound for 45 ms: 30 ms slices alternate.
  TimePs a_done = 0, b_done = 0;
  Proc pa("pa", [&] {
    core.execute(a, 90e6, CycleClass::GuestUser);
    a_done = now();
  });
  Proc pb("pb", [&] {
    core.execute(b, 90e6, CycleClass::GuestUser);
    b_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(200, sc_core::SC_MS));
  ASSERT_GE(sched.picks.size(), 3u);
  EXPECT_EQ(sched.picks[0], 0);
  EXPECT_EQ(sched.picks[1], 1);  // VM 1 gets the core when VM 0's slice ends
  // VM 0: 30 ms; switch (1 us, inside VM 1's slice); VM 1 until 60 ms; switch; VM 0 its last
  // 15 ms; then VM 1 (switch) its remaining 15 ms + 1 us.
  EXPECT_EQ(a_done, 75 * kMs + 1 * kUs);
  EXPECT_EQ(b_done, 90 * kMs + 3 * kUs + 1);  // +1 ps: VM 0 traps WFI once the instant settled
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestUser), 45 * kMs);
  EXPECT_EQ(core.busy_ps(1, CycleClass::GuestUser), 45 * kMs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::Hypervisor) + core.busy_ps(1, CycleClass::Hypervisor),
            3 * kUs);
  EXPECT_EQ(core.vm_switches(), 3u);
  EXPECT_GE(switches_seen, 3);
}

TEST(CpuCoreVirtualized, HypervisorContextPreemptsAnyVmAndIsChargedToItsTarget) {
  Core core("core", CoreParams{}, 2);
  FakeScheduler sched(2, 30 * kMs);
  core.set_vm_scheduler(&sched, vtoe::cpu::VmHooks{});
  auto& g = core.add_context("vm0.p", 2, 0);
  auto& h = core.add_hypervisor_context("hyp.irq");
  TimePs g_done = 0, h_done = 0;
  Proc pg("pg", [&] {
    core.execute(g, 20000, CycleClass::GuestUser);
    g_done = now();
  });  // 10 us
  Proc ph("ph", [&] {
    sc_core::wait(sc_core::sc_time(2, sc_core::SC_US));
    core.execute(h, 4000, CycleClass::Hypervisor, /*charge_to=*/1);  // 2 us for VM 1
    h_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_EQ(h_done, 4 * kUs);
  EXPECT_EQ(g_done, 12 * kUs);
  EXPECT_EQ(core.busy_ps(1, CycleClass::Hypervisor), 2 * kUs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestUser), 10 * kUs);
}

TEST(CpuCoreVirtualized, IdleVcpuTrapsWfiAndAnIoWakeCanPreempt) {
  Core core("core", CoreParams{}, 2);
  FakeScheduler sched(2, 30 * kMs);
  vtoe::cpu::VmHooks hooks;
  hooks.wfi_cycles = 200;  // 100 ns
  int wfis = 0;
  hooks.on_wfi = [&](int) { ++wfis; };
  core.set_vm_scheduler(&sched, hooks);
  auto& cpu_bound = core.add_context("vm0.loop", 2, 0);
  auto& isr = core.add_context("vm1.isr", 0, 1, /*io_wake=*/true);
  TimePs isr_done = 0;
  // VM 1 runs a short job at t=0 and then has nothing: it traps WFI and VM 0 takes the core.
  Proc p0("p0", [&] {
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_US));
    core.execute(cpu_bound, 200e6, CycleClass::GuestUser);
  });
  Proc p1("p1", [&] {
    core.execute(isr, 2000, CycleClass::GuestKernel);
    sc_core::wait(sc_core::sc_time(5, sc_core::SC_MS));
    sched.tickle = true;
    sched.tickle_target = 1;
    core.execute(isr, 2000, CycleClass::GuestKernel);  // an interrupt for VM 1 at 5 ms
    isr_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_MS));
  EXPECT_GE(wfis, 1);
  EXPECT_GE(sched.blocks, 1);
  // With tickle the interrupt handler runs at once (plus nothing else queued), not after 30 ms.
  EXPECT_GT(isr_done, 5 * kMs);
  EXPECT_LT(isr_done, 5 * kMs + 10 * kUs);
}

TEST(CpuCoreVirtualized, HaltPollingRunsEarlyWorkAtOnceAndBlocksWhenItRunsOut) {
  Core core("core", CoreParams{}, 2);
  FakeScheduler sched(2, 30 * kMs);
  vtoe::cpu::VmHooks hooks;
  hooks.halt_poll_ps = 50 * kUs;
  int wfis = 0;
  hooks.on_wfi = [&](int) { ++wfis; };
  core.set_vm_scheduler(&sched, hooks);
  auto& p = core.add_context("vm0.p", 2, 0);
  TimePs second_done = 0;
  Proc p0("p0", [&] {
    core.execute(p, 20000, CycleClass::GuestUser);  // 10 us, then idle
    sc_core::wait(sc_core::sc_time(20, sc_core::SC_US));
    core.execute(p, 20000, CycleClass::GuestUser);  // arrives while the hypervisor polls
    second_done = now();
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  // The second job ran at once (no wake-up, no pick) and the poll after it ran out at 40 + 50 us.
  EXPECT_EQ(second_done, 40 * kUs);
  EXPECT_EQ(wfis, 2);
  EXPECT_EQ(sched.wakes, 1);
  EXPECT_EQ(sched.blocks, 1);
  EXPECT_EQ(vtoe::test::counter(core.stats(), "halt_poll_hits"), 1u);
  EXPECT_EQ(vtoe::test::counter(core.stats(), "halt_poll_misses"), 1u);
  // Polling is host time charged to the VM: 20 us before the hit and 50 us before the miss (the
  // 1 ps each WFI waits for its instant to settle is idle).
  const TimePs polled = core.busy_ps(0, CycleClass::Hypervisor);
  EXPECT_GE(polled, 70 * kUs - 2);
  EXPECT_LE(polled, 70 * kUs);
  // The host saw the vCPU on the core from its first pick until it blocked: 90 us (+ the 1 ps).
  EXPECT_EQ(core.vcpu_ps(0), 90 * kUs + 1);
  EXPECT_EQ(core.vcpu_ps(1), 0u);
}

TEST(CpuCoreVirtualized, TimerThatDoesNotInterruptTheVmCostsNoExit) {
  // A tickless core: the scheduler's slice ends are decisions without an exit or its cost.
  Core core("core", CoreParams{}, 1);
  FakeScheduler sched(1, 1 * kMs);
  vtoe::cpu::VmHooks hooks;
  hooks.tick_cycles = 2000;
  int timers = 0;
  hooks.on_timer = [&](int) { ++timers; };
  hooks.timer_interrupts = [](int) { return false; };
  core.set_vm_scheduler(&sched, hooks);
  auto& p = core.add_context("vm0.p", 2, 0);
  Proc p0("p0", [&] { core.execute(p, 20e6, CycleClass::GuestUser); });  // 10 ms
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
  EXPECT_GE(sched.picks.size(), 9u);  // decisions were made at the slice ends
  EXPECT_EQ(timers, 0);
  EXPECT_EQ(core.busy_ps(0, CycleClass::Hypervisor), 0u);
  EXPECT_EQ(core.vcpu_ps(0), 10 * kMs);
}

VTOE_TEST_MAIN
