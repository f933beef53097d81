// toe::HostRingDriver: the host side of the ring protocol, against a fake channel that records
// register accesses and owns the ring memory.
#include "models/toe/host_ring_driver.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "tests/support/bench.h"

using namespace vtoe::toe;

namespace {

struct FakeChannel : HostRingDriver::Access {
  std::map<std::uint64_t, std::uint8_t> mem;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> writes;
  std::uint32_t head[kRings] = {};  // what the TOE reports
  int reads = 0, waits = 0;
  std::function<void()> on_wait;

  void write_reg(std::uint64_t off, std::uint32_t v) override { writes.emplace_back(off, v); }
  std::uint32_t read_reg(std::uint64_t off) override {
    ++reads;
    const int r = static_cast<int>((off - reg::kRingBase) / reg::kRingStride);
    return head[r];
  }
  void read_mem(std::uint64_t a, void* d, std::size_t n) override {
    auto* p = static_cast<std::uint8_t*>(d);
    for (std::size_t i = 0; i < n; ++i) p[i] = mem.count(a + i) ? mem[a + i] : 0xee;
  }
  void write_mem(std::uint64_t a, const void* d, std::size_t n) override {
    const auto* p = static_cast<const std::uint8_t*>(d);
    for (std::size_t i = 0; i < n; ++i) mem[a + i] = p[i];
  }
  void wait_for_space() override {
    ++waits;
    if (on_wait) on_wait();
  }
};

constexpr std::array<std::uint64_t, kRings> kAddr = {0x10000, 0x20000, 0x30000, 0x40000};

}  // namespace

TEST(HostRingDriver, StartZeroesRingsAndProgramsEveryRingThenEnables) {
  FakeChannel ch;
  HostRingDriver d(8);
  d.start(ch, kAddr);
  EXPECT_TRUE(d.started());
  ASSERT_EQ(ch.writes.size(), 4u * 3 + 1);
  EXPECT_EQ(ch.writes[0], std::make_pair(HostRingDriver::ring_reg(Ring::Cmd, reg::kRingSize), 8u));
  EXPECT_EQ(ch.writes[1], std::make_pair(HostRingDriver::ring_reg(Ring::Cmd, reg::kRingAddrLo),
                                         std::uint32_t{0x10000}));
  EXPECT_EQ(ch.writes[10], std::make_pair(HostRingDriver::ring_reg(Ring::Ecq, reg::kRingAddrLo),
                                          std::uint32_t{0x40000}));
  EXPECT_EQ(ch.writes.back(), std::make_pair(reg::kCtrl, reg::kCtrlEnable | reg::kCtrlIrqEnable));
  EXPECT_EQ(ch.mem.at(0x40000 + 8 * kDescBytes - 1), 0);  // the ECQ is zeroed: no stale valid bit
  d.start(ch, kAddr);  // a second start does nothing
  EXPECT_EQ(ch.writes.size(), 13u);
}

TEST(HostRingDriver, PostWritesTheContextAtTheTailThenRingsTheDoorbell) {
  FakeChannel ch;
  HostRingDriver d(8);
  d.start(ch, kAddr);
  ch.writes.clear();
  SendDesc s{};
  s.sock = 7;
  s.length = 1234;
  d.post(ch, Ring::Send, &s);
  d.post(ch, Ring::Send, &s);
  SendDesc back{};
  ch.read_mem(kAddr[1] + kDescBytes, &back, sizeof back);
  EXPECT_EQ(back.sock, 7);
  EXPECT_EQ(back.length, 1234u);
  ASSERT_EQ(ch.writes.size(), 2u);
  EXPECT_EQ(ch.writes[1], std::make_pair(HostRingDriver::ring_reg(Ring::Send, reg::kRingTail), 2u));
  EXPECT_EQ(d.tail(Ring::Send), 2u);
  EXPECT_EQ(ch.reads, 0);  // room left: the head is not read
}

TEST(HostRingDriver, AFullRingRereadsTheHeadAndWaitsUntilTheToeTakesContexts) {
  FakeChannel ch;
  HostRingDriver d(4);  // three usable slots
  d.start(ch, kAddr);
  CmdDesc c{};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(d.post(ch, Ring::Cmd, &c), 0u);
  int polls = 0;
  ch.on_wait = [&] {
    if (++polls == 2) ch.head[0] = 2;  // the TOE consumes two contexts after two waits
  };
  EXPECT_EQ(d.post(ch, Ring::Cmd, &c), 2u);
  EXPECT_EQ(ch.waits, 2);
  EXPECT_EQ(ch.reads, 3);  // once per wait, and once more that found space
  EXPECT_EQ(d.tail(Ring::Cmd), 0u);  // wrapped
}

TEST(HostRingDriver, DrainsValidCompletionsInOrderClearsThemAndHandsSlotsBack) {
  FakeChannel ch;
  HostRingDriver d(4);
  d.start(ch, kAddr);
  for (std::uint16_t i = 0; i < 2; ++i) {
    EcqDesc e{};
    e.valid = 1;
    e.sock = static_cast<std::uint16_t>(10 + i);
    ch.write_mem(kAddr[3] + i * kDescBytes, &e, sizeof e);
  }
  EcqDesc got{};
  ASSERT_TRUE(d.next_completion(ch, got));
  EXPECT_EQ(got.sock, 10);
  EXPECT_EQ(got.valid, 0);
  ASSERT_TRUE(d.next_completion(ch, got));
  EXPECT_EQ(got.sock, 11);
  EXPECT_FALSE(d.next_completion(ch, got));
  EcqDesc slot{};
  ch.read_mem(kAddr[3], &slot, sizeof slot);
  EXPECT_EQ(slot.valid, 0) << "a consumed entry keeps its valid flag";
  ch.writes.clear();
  d.release_completions(ch);
  ASSERT_EQ(ch.writes.size(), 1u);
  EXPECT_EQ(ch.writes[0], std::make_pair(HostRingDriver::ring_reg(Ring::Ecq, reg::kRingHead), 2u));
}

VTOE_TEST_MAIN
