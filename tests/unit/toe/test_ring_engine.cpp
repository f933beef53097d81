// RingEngine: index arithmetic, full/empty, and refusal of bad programming.
#include <gtest/gtest.h>

#include <systemc>

#include "models/toe/ring_engine.h"
#include "tests/support/bench.h"

using namespace vtoe::toe;

TEST(RingEngine, PendingSpaceAndWrap) {
  RingEngine r;
  std::string err;
  ASSERT_TRUE(r.write_register(reg::kRingSize, 8, &err));
  ASSERT_TRUE(r.write_register(reg::kRingAddrLo, 0x1000, &err));
  EXPECT_EQ(r.pending(), 0u);
  EXPECT_EQ(r.space(), 7u);
  ASSERT_TRUE(r.write_register(reg::kRingTail, 6, &err));
  EXPECT_EQ(r.pending(), 6u);
  EXPECT_EQ(r.pending_contiguous(), 6u);
  r.consume(5);
  ASSERT_TRUE(r.write_register(reg::kRingTail, 2, &err));  // wrapped: 5,6,7,0,1
  EXPECT_EQ(r.pending(), 5u);
  EXPECT_EQ(r.pending_contiguous(), 3u);  // up to the ring's end
  EXPECT_EQ(r.entry_addr(9), 0x1000u + 1 * kDescBytes);
}

TEST(RingEngine, ProduceUntilFull) {
  RingEngine r;
  std::string err;
  r.write_register(reg::kRingSize, 4, &err);
  r.write_register(reg::kRingAddrLo, 0x2000, &err);
  for (int i = 0; i < 3; ++i) {
    ASSERT_GT(r.space(), 0u);
    r.produce();
  }
  EXPECT_EQ(r.space(), 0u);
  ASSERT_TRUE(r.write_register(reg::kRingHead, 2, &err));
  EXPECT_EQ(r.space(), 2u);
}

TEST(RingEngine, TheHeadNeverOvertakesTheTail) {
  RingEngine r;
  std::string err;
  ASSERT_TRUE(r.write_register(reg::kRingSize, 8, &err));
  ASSERT_TRUE(r.write_register(reg::kRingAddrLo, 0x1000, &err));
  ASSERT_TRUE(r.write_register(reg::kRingTail, 1, &err));
  // The host rewinds its tail while the context is fetched: nothing is left to consume.
  ASSERT_TRUE(r.write_register(reg::kRingTail, 0, &err));
  EXPECT_EQ(r.consume(1), 0u);
  EXPECT_EQ(r.pending(), 0u);  // not 7 contexts the host never posted
  // Reprogramming restarts the indices and starts a new generation.
  ASSERT_TRUE(r.write_register(reg::kRingTail, 3, &err));
  const std::uint32_t gen = r.generation();
  ASSERT_TRUE(r.write_register(reg::kRingAddrLo, 0x1000, &err));
  EXPECT_NE(r.generation(), gen);
  EXPECT_EQ(r.pending(), 0u);
  EXPECT_EQ(r.consume(3), 0u);
  EXPECT_EQ(r.head(), 0u);
  ASSERT_TRUE(r.write_register(reg::kRingTail, 2, &err));
  EXPECT_EQ(r.consume(5), 2u);
  EXPECT_EQ(r.pending(), 0u);
}

TEST(RingEngine, RefusesBadProgramming) {
  RingEngine r;
  std::string err;
  EXPECT_FALSE(r.write_register(reg::kRingSize, 6, &err));
  EXPECT_NE(err.find("power of two"), std::string::npos);
  EXPECT_FALSE(r.write_register(reg::kRingSize, 0, &err));
  EXPECT_FALSE(r.write_register(reg::kRingSize, 1u << 20, &err));
  EXPECT_FALSE(r.write_register(reg::kRingTail, 1, &err));  // not configured yet
  r.write_register(reg::kRingSize, 16, &err);
  r.write_register(reg::kRingAddrLo, 0x3000, &err);
  EXPECT_FALSE(r.write_register(reg::kRingTail, 16, &err));  // past the end
  EXPECT_EQ(r.tail(), 0u);
  EXPECT_FALSE(r.write_register(0x18, 1, &err));
}

VTOE_TEST_MAIN
