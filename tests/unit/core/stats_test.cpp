// core::StatGroup: registration keeps creation order and returns the same counter for the same
// name; lookup by name finds registered statistics and throws, naming group and name, otherwise.
#include "models/core/stats.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <systemc>

#include "tests/support/bench.h"
#include "tests/support/sc_proc.h"

using vtoe::core::StatGroup;

TEST(StatGroup, LookupFindsRegisteredCounterAndAccumulator) {
  StatGroup g("top.mac");
  auto& frames = g.counter("tx_frames", "frames sent");
  frames += 3;
  g.accumulator("occupancy", "queue depth").sample(2.0);
  const StatGroup& reader = g;
  EXPECT_EQ(reader.counter("tx_frames").value(), 3u);
  EXPECT_EQ(&reader.counter("tx_frames"), &frames);
  EXPECT_EQ(reader.accumulator("occupancy").count(), 1u);
  // Registering a name twice gives the same counter, in its first place.
  EXPECT_EQ(&g.counter("tx_frames", "again"), &frames);
  ASSERT_EQ(g.counters().size(), 1u);
}

TEST(StatGroup, LookupOfUnknownNameThrowsNamingGroupAndCounter) {
  StatGroup g("top.mac");
  g.counter("tx_frames", "frames sent");
  try {
    (void)g.counter("tx_frame");  // misspelt
    FAIL() << "a misspelt counter name was accepted";
  } catch (const std::out_of_range& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("top.mac"), std::string::npos) << what;
    EXPECT_NE(what.find("tx_frame'"), std::string::npos) << what;
  }
  EXPECT_THROW((void)g.accumulator("occupancy"), std::out_of_range);
  // The failed lookups registered nothing.
  EXPECT_EQ(g.counters().size(), 1u);
  EXPECT_TRUE(g.accumulators().empty());
}

// A queue's occupancy is a level: weighted by how long each value held, and kept across the
// baseline (a queue that stays full after warm-up is full in the measured window too).
TEST(Accumulator, LevelIsTimeWeightedAndSurvivesTheBaseline) {
  vtoe::core::Accumulator a;
  a.level(4, 10);  // 0 over [0, 10), then 4
  a.level(0, 30);  // 4 over [10, 30)
  EXPECT_TRUE(a.time_weighted());
  EXPECT_DOUBLE_EQ(a.mean(40), (4.0 * 20) / 40);
  EXPECT_DOUBLE_EQ(a.max(), 4.0);
  EXPECT_DOUBLE_EQ(a.area(40), 80.0);
  a.level(2, 40);
  a.mark_baseline(50);  // the level 2 holds on
  EXPECT_DOUBLE_EQ(a.mean(60), 2.0);
  EXPECT_DOUBLE_EQ(a.max(), 2.0);
  EXPECT_EQ(a.count(), 0u);
  // A sampled accumulator still averages its samples.
  vtoe::core::Accumulator s;
  s.sample(1);
  s.sample(3);
  EXPECT_FALSE(s.time_weighted());
  EXPECT_DOUBLE_EQ(s.mean(1000), 2.0);
}

// An increment booked for a later time (a frame's departure computed when it is queued) shows
// from that time on, whatever order the times come in, and the baseline sees only what is due.
TEST(Counter, ASumOfTwoCountersReadsTheirTotalAndTakesItsOwnBaseline) {
  vtoe::core::Counter a, b, total;
  a += 3;
  total.sum_of(a, b);
  EXPECT_EQ(total.value(), 3u);
  b += 5;
  EXPECT_EQ(total.value(), 8u);
  total.mark_baseline();
  a += 1;
  EXPECT_EQ(total.value(), 9u);
  EXPECT_EQ(total.measured(), 1u);
  EXPECT_EQ(a.measured(), 4u);  // the parts' baselines are their own
}

TEST(Counter, ACountOfTimedAdditionsCountsEachWhenDue) {
  vtoe::core::Counter bytes, frames;
  frames.count_of_timed(bytes);
  vtoe::test::Proc drv("count_drv", [&] {
    bytes.add_at(0, 1500);
    bytes.add_at(0, 60);
    bytes.add_at(100, 60);
    EXPECT_EQ(frames.value(), 2u);
    EXPECT_EQ(bytes.value(), 1560u);
    frames.mark_baseline();
    sc_core::wait(sc_core::sc_time::from_value(100));
    EXPECT_EQ(frames.value(), 3u);
    EXPECT_EQ(frames.measured(), 1u);
    EXPECT_EQ(bytes.value(), 1620u);
  });
  sc_core::sc_start();
  EXPECT_EQ(frames.value(), 3u);
}

TEST(Counter, AddAtCountsFromItsDueTimeInAnyOrder) {
  vtoe::core::Counter c;
  vtoe::test::Proc drv("drv", [&] {
    c.add_at(100, 1);
    c.add_at(50, 2);
    c += 4;  // an ordinary increment counts at once
    EXPECT_EQ(c.value(), 4u);
    sc_core::wait(sc_core::sc_time::from_value(50));
    EXPECT_EQ(c.value(), 6u);
    c.mark_baseline();
    sc_core::wait(sc_core::sc_time::from_value(50));
    EXPECT_EQ(c.value(), 7u);
    EXPECT_EQ(c.measured(), 1u);
    // Many increments ahead, none read for a while: settled in bulk, none lost or early.
    for (std::uint64_t i = 0; i < 1000; ++i) c.add_at(sc_core::sc_time_stamp().value() + 1000 - i);
    EXPECT_EQ(c.value(), 7u);
    sc_core::wait(sc_core::sc_time::from_value(500));
    EXPECT_EQ(c.value(), 7u + 500);  // due at now + 1 .. now + 500
    sc_core::wait(sc_core::sc_time::from_value(500));
    EXPECT_EQ(c.value(), 1007u);
  });
  sc_core::sc_start();
  EXPECT_EQ(c.value(), 1007u);
}

VTOE_TEST_MAIN
