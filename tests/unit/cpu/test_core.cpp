// Bench for cpu::Core: cycle accounting, priorities, preemption, time slices, switch costs.
#include <gtest/gtest.h>

#include <systemc>
#include <vector>

#include "models/cpu/core.h"

using vtoe::core::TimePs;
using vtoe::cpu::Core;
using vtoe::cpu::CoreParams;
using vtoe::cpu::CycleClass;

namespace {

constexpr TimePs kNs = 1000;
constexpr TimePs kUs = 1000 * kNs;
constexpr TimePs kMs = 1000 * kUs;

// Runs `body` as one SystemC thread and records when each step finished.
struct Proc : sc_core::sc_module {
  SC_HAS_PROCESS(Proc);
  Proc(sc_core::sc_module_name n, std::function<void()> body)
      : sc_module(n), body_(std::move(body)) {
    SC_THREAD(run);
  }
  void run() { body_(); }
  std::function<void()> body_;
};

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

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_THROW);
  return RUN_ALL_TESTS();
}
