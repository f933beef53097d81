// core::StatGroup: registration keeps creation order and returns the same counter for the same
// name; lookup by name finds registered statistics and throws, naming group and name, otherwise.
#include "models/core/stats.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "tests/support/bench.h"

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

VTOE_TEST_MAIN
