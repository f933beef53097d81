// mem::Ram: untimed by default (the system platform without caches); with set_timing its
// b_transport books the DRAM timing core (row miss, row hit, one data bus), so that transfers
// queue behind each other, while the data and DMI stay as they were.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "models/mem/dram.h"
#include "models/mem/ram.h"
#include "tests/support/bench.h"

using namespace sc_core;
using vtoe::mem::DramParams;
using vtoe::mem::Ram;
using vtoe::test::Initiator;

namespace {
// 64 bytes at 6.4 Gbit/s: 512 bits / 6.4e9 = 80 ns; a closed row 45 ns, an open one 15 ns.
constexpr std::uint64_t kLine = 80'000, kRowMiss = 45'000, kRowHit = 15'000;  // ps
}  // namespace

TEST(RamTiming, UntimedByDefault) {
  Ram ram("ram", 1 << 20);
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(64, 0xab);
    sc_time d = SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, 0x1000, buf.data(), 64, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d, SC_ZERO_TIME);
  });
  init.socket.bind(ram.in);
  sc_start();
  EXPECT_FALSE(ram.timed());
  EXPECT_EQ(ram.host(0x1000, 1)[0], 0xab);
}

TEST(RamTiming, LinesBookTheDramAndQueue) {
  Ram ram("ram", 1 << 20);
  ram.set_timing(DramParams{});
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(64);
    for (int i = 0; i < 64; ++i) buf[i] = static_cast<std::uint8_t>(i);
    sc_time d1 = SC_ZERO_TIME, d2 = SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, 0x2000, buf.data(), 64, d1),
              tlm::TLM_OK_RESPONSE);
    // The same row, at the same time: it waits for the first on the bank and the bus.
    std::vector<std::uint8_t> back(64);
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, 0x2000, back.data(), 64, d2),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d1.value(), kRowMiss + kLine);
    EXPECT_EQ(d2.value(), kRowMiss + kLine + kRowHit + kLine);
    EXPECT_EQ(back, buf);
  });
  init.socket.bind(ram.in);
  sc_start();
  EXPECT_TRUE(ram.timed());
  EXPECT_EQ(ram.transactions(), 2u);
  EXPECT_EQ(ram.bytes(), 128u);
  EXPECT_EQ(ram.busy_ps(), 2 * kLine);
}

VTOE_TEST_MAIN
