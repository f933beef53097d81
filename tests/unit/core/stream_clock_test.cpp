// core::StreamClock: each message's latency from the sender's hand-over of its last byte to the
// receiver's taking of it, whatever the sizes of the hand-overs and takes.
#include "models/core/stream_clock.h"

#include <gtest/gtest.h>

#include "tests/support/bench.h"

using vtoe::core::LogHistogram;
using vtoe::core::StreamClock;

TEST(StreamClock, TimesEachMessageFromItsHandOverToItsTaking) {
  StreamClock c(1000);
  c.handed(1000, 10);  // message 1
  c.handed(2500, 20);  // message 2 (and half of 3)
  c.taken(500, 100);   // nothing complete
  EXPECT_EQ(c.latency().count(), 0u);
  c.taken(2000, 130);  // messages 1 and 2
  ASSERT_EQ(c.latency().count(), 2u);
  EXPECT_EQ(c.latency().min(), 110u);  // exact below 128
  EXPECT_EQ(c.latency().max(), 120u);
  c.taken(3000, 150);  // message 3 was not handed over whole: not stamped, not timed
  EXPECT_EQ(c.latency().count(), 2u);
  c.handed(3000, 160);
  c.taken(3000, 170);
  EXPECT_EQ(c.latency().count(), 3u);
  EXPECT_EQ(c.latency().min(), 10u);
}

TEST(StreamClock, OneHandOverOfManyMessagesStampsEachAndCanRecordElsewhere) {
  LogHistogram into;
  StreamClock c(100, &into);
  c.handed(1000, 5);  // ten messages at once
  for (int k = 1; k <= 10; ++k) c.taken(static_cast<std::uint64_t>(k) * 100, 5 + k);
  EXPECT_EQ(into.count(), 10u);
  EXPECT_EQ(into.min(), 1u);
  EXPECT_EQ(into.max(), 10u);
  EXPECT_EQ(c.latency().count(), 0u);  // recorded into `into` instead
  EXPECT_EQ(c.message_size(), 100u);
}

VTOE_TEST_MAIN
