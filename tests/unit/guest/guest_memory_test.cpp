// guest::GuestMemory's allocator: first fit, alignment, release with merging, exhaustion that
// names its key, and memory that stays flat over many allocate/release cycles.
#include "guest/guest_memory.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "tests/support/bench.h"

using vtoe::guest::GuestMemory;

namespace {

constexpr std::uint64_t kBase = 0x8000'0000, kSize = 1 << 20;

GuestMemory memory() {
  return GuestMemory(kBase, kSize, [](std::uint64_t, void*, std::size_t, bool) {});
}

}  // namespace

TEST(GuestMemory, AllocatesAlignedFirstFitBlocksInsideTheRegion) {
  GuestMemory m = memory();
  const std::uint64_t a = m.allocate(100, 64);
  const std::uint64_t b = m.allocate(4096, 4096);
  EXPECT_EQ(a, kBase);
  EXPECT_EQ(b % 4096, 0u);
  EXPECT_GE(b, a + 100);
  EXPECT_EQ(m.bytes_in_use(), 4196u);
  // The gap left by b's alignment is used by a small block that fits in it.
  const std::uint64_t c = m.allocate(64, 64);
  EXPECT_LT(c, b);
}

TEST(GuestMemory, ReleasedBlocksAreReusedAndMerge) {
  GuestMemory m = memory();
  std::vector<std::uint64_t> blocks;
  for (int i = 0; i < 4; ++i) blocks.push_back(m.allocate(kSize / 4, 4096));
  EXPECT_THROW(m.allocate(1), std::runtime_error);
  m.release(blocks[1]);
  m.release(blocks[2]);
  // Two neighbouring quarters merged: half the region fits again, where they were.
  EXPECT_EQ(m.allocate(kSize / 2, 4096), blocks[1]);
  EXPECT_EQ(m.blocks_in_use(), 3u);
}

TEST(GuestMemory, ExhaustionNamesTheKeyAndReleaseOfAStrangerIsABug) {
  GuestMemory m = memory();
  try {
    m.allocate(kSize + 1);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("platform.guest_memory"), std::string::npos) << e.what();
  }
  const std::uint64_t a = m.allocate(128);
  EXPECT_THROW(m.release(a + 64), std::logic_error);
  m.release(a);
  EXPECT_THROW(m.release(a), std::logic_error);
}

TEST(GuestMemory, ManyConnectionsWorthOfBuffersStayFlat) {
  // What a server does: a socket's two buffers are allocated and released 100,000 times, with a
  // few long-lived blocks (rings, a listener) in between.
  GuestMemory m = memory();
  const std::uint64_t ring = m.allocate(8192, 4096);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t tx = m.allocate(64 * 1024, 4096), rx = m.allocate(16 * 1024, 4096);
    m.release(tx);
    m.release(rx);
  }
  EXPECT_EQ(m.blocks_in_use(), 1u);
  EXPECT_EQ(m.bytes_in_use(), 8192u);
  m.release(ring);
  EXPECT_EQ(m.allocate(kSize, 4096), kBase);  // everything merged back into one block
}

VTOE_TEST_MAIN
