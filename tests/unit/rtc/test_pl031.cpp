// Bench for rtc::Pl031: identification as Linux's amba bus and kvm-unit-tests read it, the count
// in seconds of simulated time, LR, and the match interrupt through IMSC/RIS/MIS/ICR.
#include <gtest/gtest.h>

#include <systemc>

#include "models/rtc/pl031.h"
#include "tests/support/bench.h"

using vtoe::rtc::Pl031;

namespace {

struct Bench {
  Bench() : rtc("rtc", 100), irq("irq") { rtc.irq(irq); }
  Pl031 rtc;
  sc_core::sc_signal<bool> irq;
};

}  // namespace

TEST(Pl031, IdentifiesAsAPrimeCellAndCountsSeconds) {
  Bench b;
  vtoe::test::Initiator cpu("cpu", [&](vtoe::test::Initiator& self) {
    const std::uint32_t ids[8] = {0x31, 0x10, 0x14, 0x00, 0x0d, 0xf0, 0x05, 0xb1};
    for (int i = 0; i < 8; ++i) EXPECT_EQ(self.read32(0xFE0 + 4 * i), ids[i]);
    EXPECT_EQ(self.read32(0x00c), 1u);  // CR: always running
    EXPECT_EQ(self.read32(0x000), 100u);
    sc_core::wait(2500, sc_core::SC_MS);
    EXPECT_EQ(self.read32(0x000), 102u);
    self.write32(0x008, 1000);  // LR
    EXPECT_EQ(self.read32(0x000), 1000u);
    sc_core::wait(1, sc_core::SC_SEC);
    EXPECT_EQ(self.read32(0x000), 1001u);
    self.write32(0x000, 5);  // DR is read-only
    EXPECT_EQ(self.read32(0x000), 1001u);
  });
  cpu.socket.bind(b.rtc.in);
  sc_core::sc_start(sc_core::sc_time(5, sc_core::SC_SEC));
  EXPECT_EQ(b.rtc.stats().counter("bad_accesses").value(), 1u);
}

TEST(Pl031, MatchRaisesRisAndImscLetsItThrough) {
  Bench b;
  vtoe::test::Initiator cpu("cpu", [&](vtoe::test::Initiator& self) {
    const std::uint32_t now = self.read32(0x000);
    self.write32(0x004, now + 1);  // MR: in a second
    sc_core::wait(1500, sc_core::SC_MS);
    EXPECT_EQ(self.read32(0x014), 1u);  // RIS
    EXPECT_EQ(self.read32(0x018), 0u);  // MIS: masked
    EXPECT_FALSE(b.irq.read());
    self.write32(0x010, 1);  // IMSC
    sc_core::wait(1, sc_core::SC_NS);
    EXPECT_TRUE(b.irq.read());
    EXPECT_EQ(self.read32(0x018), 1u);
    self.write32(0x01c, 1);  // ICR
    sc_core::wait(1, sc_core::SC_NS);
    EXPECT_FALSE(b.irq.read());
    EXPECT_EQ(self.read32(0x014), 0u);
    self.write32(0x004, self.read32(0x000));  // MR = DR: at once
    sc_core::wait(1, sc_core::SC_NS);
    EXPECT_TRUE(b.irq.read());
  });
  cpu.socket.bind(b.rtc.in);
  sc_core::sc_start(sc_core::sc_time(3, sc_core::SC_SEC));
  EXPECT_EQ(b.rtc.stats().counter("matches").value(), 2u);
}

VTOE_TEST_MAIN
