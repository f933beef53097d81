// netvp::Pacer: simulated time never ahead of wall time; quiet times waited through in one piece
// (not ticked through), never past the next event or the end of the run; a frame keeps the ticks
// going; a stop request ends the run at a tick.
// The wire is a stand-in: a function that sleeps until the time the pacer asks for.
#include "netvp/pacer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

#include "tests/support/sc_proc.h"
#include "tests/support/sc_test_main.h"

using namespace sc_core;
using vtoe::netvp::Pacer;
using vtoe::netvp::PacerParams;
using Clock = std::chrono::steady_clock;

namespace {

struct Wait {
  double sim_ms;        // when the pacer asked
  double requested_ms;  // how long it asked to wait
};

// A wire that never delivers: each wait lasts until the time asked for.
Pacer::WireWait quiet_wire(std::vector<Wait>& waits) {
  return [&waits](Clock::time_point until) {
    waits.push_back({sc_time_stamp().to_seconds() * 1e3,
                     std::chrono::duration<double, std::milli>(until - Clock::now()).count()});
    std::this_thread::sleep_until(until);
  };
}

}  // namespace

TEST(Pacer, WaitsThroughAQuietTimeInOnePieceInsteadOfTicking) {
  Pacer pacer("pacer", PacerParams{});  // ticks of 50 us
  std::vector<Wait> waits;
  int ticks = 0;
  pacer.on_tick([&ticks] {
    ++ticks;
    return std::size_t{0};
  });
  pacer.wait_for_wire(quiet_wire(waits));
  const auto t0 = Clock::now();
  sc_start(sc_time(20, SC_MS));
  const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  // Ticking would have taken 400 ticks; nothing is pending, so the pacer waits (at most 100 ms
  // at a time, for stop requests).
  EXPECT_LE(ticks, 3);
  ASSERT_GE(waits.size(), 1u);
  EXPECT_EQ(pacer.idle_waits(), waits.size());
  EXPECT_LE(waits.front().requested_ms, 100.0);
  EXPECT_GE(wall_ms, 20.0);  // never ahead of wall time
}

TEST(Pacer, AWaitEndsNoLaterThanTheNextEvent) {
  Pacer pacer("pacer", PacerParams{});
  std::vector<Wait> waits;
  pacer.on_tick([] { return std::size_t{0}; });
  pacer.wait_for_wire(quiet_wire(waits));
  double event_wall_ms = -1;
  const auto t0 = Clock::now();
  vtoe::test::Proc model("model", [&] {
    wait(sc_time(5, SC_MS));
    event_wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  });
  sc_start(sc_time(6, SC_MS));
  ASSERT_TRUE(model.done);
  ASSERT_GE(waits.size(), 1u);
  // Every wait before the model's event asks for no more than the time left to it. On a quiet
  // machine the first comes a tick in; on a loaded one the run can start so far behind the wall
  // clock that the pacer has nothing to wait for until after the event.
  for (const Wait& w : waits) {
    if (w.sim_ms >= 5.0) continue;
    EXPECT_GT(w.requested_ms, 0.0) << "at " << w.sim_ms << " ms";
    EXPECT_LE(w.requested_ms, 5.0 - w.sim_ms) << "at " << w.sim_ms << " ms";
  }
  EXPECT_GE(event_wall_ms, 5.0);  // the event came when wall time had reached it
}

TEST(Pacer, AWaitEndsNoLaterThanTheEndOfTheRun) {
  Pacer pacer("pacer", PacerParams{});
  std::vector<Wait> waits;
  pacer.on_tick([] { return std::size_t{0}; });
  pacer.wait_for_wire(quiet_wire(waits));
  pacer.set_end(20'000'000'000);  // the runner says where this sc_start() ends: 20 ms
  sc_start(sc_time(20, SC_MS));
  ASSERT_EQ(waits.size(), 1u);  // one wait, to the end, not 100 ms
  EXPECT_GT(waits.front().requested_ms, 0.0);
  EXPECT_LE(waits.front().requested_ms, 20.0);
}

TEST(Pacer, FramesKeepTheTicksGoing) {
  PacerParams params;
  params.tick_ps = 100'000'000;  // 100 us
  Pacer pacer("pacer", params);
  std::vector<Wait> waits;
  int ticks = 0;
  pacer.on_tick([&ticks] {  // a frame at every tick: a transfer in progress
    ++ticks;
    return std::size_t{1};
  });
  pacer.wait_for_wire(quiet_wire(waits));
  sc_start(sc_time(5, SC_MS));
  EXPECT_TRUE(waits.empty());
  EXPECT_EQ(pacer.idle_waits(), 0u);
  EXPECT_GE(ticks, 50);
}

TEST(Pacer, AStopRequestEndsTheRunAtTheNextTick) {
  Pacer pacer("pacer", PacerParams{});
  int ticks = 0;
  pacer.on_tick([&ticks] {
    if (++ticks == 20) Pacer::request_stop(SIGINT);
    return std::size_t{1};
  });
  sc_start(sc_time(1, SC_SEC));
  EXPECT_EQ(ticks, 20);
  EXPECT_NE(pacer.interrupted().find("SIGINT"), std::string::npos) << pacer.interrupted();
  EXPECT_LT(sc_time_stamp(), sc_time(2, SC_MS));
  EXPECT_TRUE(pacer.failure().empty());
}

VTOE_TEST_MAIN
