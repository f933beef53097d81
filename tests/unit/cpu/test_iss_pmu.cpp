// The ISS's PMU (models/cpu/iss/pmu.h), no SystemC: without a cycle source the cycle counter
// counts instructions retired, so every count here is exact. PMCR's identification, PL0 access
// by PMUSERENR, the cycle counter's enable/reset/overflow with the interrupt level, an event
// counter on INST_RETIRED and on SW_INCR, and a filter that stops counting in PL1.
// Encodings from arm-linux-gnueabihf-as -march=armv7-a.
#include <gtest/gtest.h>

#include <initializer_list>

#include "models/cpu/iss/arm_core.h"

using vtoe::cpu::iss::ArmCore;
using vtoe::cpu::iss::PagedMemory;
using vtoe::cpu::iss::Pmu;

namespace {

constexpr uint32_t kCode = 0x10000;
constexpr uint32_t kMrcPmcrR0 = 0xee190f1c;        // mrc p15, 0, r0, c9, c12, 0
constexpr uint32_t kMcrPmcrR1 = 0xee091f1c;        // mcr p15, 0, r1, c9, c12, 0
constexpr uint32_t kMcrPmcntensetR2 = 0xee092f3c;  // mcr p15, 0, r2, c9, c12, 1
constexpr uint32_t kMrcPmccntrR3 = 0xee193f1d;     // mrc p15, 0, r3, c9, c13, 0
constexpr uint32_t kMrcPmovsrR4 = 0xee194f7c;      // mrc p15, 0, r4, c9, c12, 3
constexpr uint32_t kMcrPmselrR5 = 0xee095fbc;      // mcr p15, 0, r5, c9, c12, 5
constexpr uint32_t kMcrPmxevtyperR6 = 0xee096f3d;  // mcr p15, 0, r6, c9, c13, 1
constexpr uint32_t kMrcPmxevcntrR7 = 0xee197f5d;   // mrc p15, 0, r7, c9, c13, 2
constexpr uint32_t kMcrPmswincR8 = 0xee098f9c;     // mcr p15, 0, r8, c9, c12, 4
constexpr uint32_t kMcrPmintensetR9 = 0xee099f3e;  // mcr p15, 0, r9, c9, c14, 1
constexpr uint32_t kMcrPmuserenrR1 = 0xee091f1e;   // mcr p15, 0, r1, c9, c14, 0
constexpr uint32_t kMcrPmccntrR1 = 0xee091f1d;     // mcr p15, 0, r1, c9, c13, 0
constexpr uint32_t kNop = 0xe1a00000;
constexpr uint32_t kCpsUsr = 0xf1020010;  // cps #0x10

class IssPmu : public ::testing::Test {
 protected:
  void SetUp() override {
    mem.map(0, 0x1000);  // the vectors
    mem.map(kCode, 0x1000);
    core.set_system_mode(true);
    core.set_pmu_listener([this](bool level) { irq = level; });
  }
  void run(std::initializer_list<uint32_t> code) {
    uint32_t addr = kCode;
    for (uint32_t w : code) {
      mem.write32(addr, w);
      addr += 4;
    }
    core.set_pc(kCode);
    for (size_t i = 0; i < code.size(); ++i) core.step();
  }

  PagedMemory mem;
  ArmCore core{mem};
  bool irq = false;
};

TEST_F(IssPmu, PmcrIdentifiesQemusCortexA15Pmu) {
  run({kMrcPmcrR0});
  EXPECT_EQ(core.reg(0), 0x410f3000u);  // IMP 'A', IDCODE 0x0f, N = 6, counting off
}

TEST_F(IssPmu, CycleCounterCountsWhileEnabledAndResetsWithC) {
  core.set_reg(1, Pmu::kE | Pmu::kC);
  core.set_reg(2, 1u << 31);
  // Enabled by the PMCNTENSET write; 3 instructions later the read sees 3 (the read itself not).
  run({kMcrPmcrR1, kMcrPmcntensetR2, kNop, kNop, kMrcPmccntrR3});
  EXPECT_EQ(core.reg(3), 3u);
  core.set_reg(1, 0);  // PMCR.E off: the count holds
  run({kMcrPmcrR1, kNop, kNop, kMrcPmccntrR3});
  EXPECT_EQ(core.reg(3), 4u);
  core.set_reg(1, Pmu::kE | Pmu::kC);  // C resets it
  run({kMcrPmcrR1, kMrcPmccntrR3});
  EXPECT_EQ(core.reg(3), 1u);
}

TEST_F(IssPmu, CycleCounterOverflowSetsPmovsrAndRaisesTheInterrupt) {
  core.set_reg(1, 0xfffffffe);
  core.set_reg(2, 1u << 31);
  core.set_reg(9, 1u << 31);
  run({kMcrPmccntrR1, kMcrPmintensetR9, kMcrPmcntensetR2});
  EXPECT_FALSE(irq);
  core.set_reg(1, Pmu::kE);
  run({kMcrPmcrR1, kNop, kNop, kNop, kMrcPmovsrR4});
  EXPECT_EQ(core.reg(4), 1u << 31);
  EXPECT_TRUE(irq);
  EXPECT_TRUE(core.pmu_poll());
}

TEST_F(IssPmu, EventCountersCountInstructionsAndSoftwareIncrements) {
  core.set_reg(5, 0);
  core.set_reg(6, 0x08);  // counter 0: INST_RETIRED
  core.set_reg(2, 3);     // counters 0 and 1
  core.set_reg(1, Pmu::kE | Pmu::kP);
  run({kMcrPmselrR5, kMcrPmxevtyperR6, kMcrPmcntensetR2, kMcrPmcrR1, kNop, kNop, kMrcPmxevcntrR7});
  EXPECT_EQ(core.reg(7), 3u);  // the PMCR write and two NOPs
  core.set_reg(5, 1);
  core.set_reg(6, 0x00);  // counter 1: SW_INCR
  core.set_reg(8, 3);     // PMSWINC: counters 0 and 1 (0 counts no SW_INCR)
  run({kMcrPmselrR5, kMcrPmxevtyperR6, kMcrPmswincR8, kMcrPmswincR8, kMrcPmxevcntrR7});
  EXPECT_EQ(core.reg(7), 2u);
  // An unsupported event does not count.
  core.set_reg(6, 0x13);
  run({kMcrPmxevtyperR6, kMcrPmswincR8, kMrcPmxevcntrR7});
  EXPECT_EQ(core.reg(7), 2u);
}

TEST_F(IssPmu, FilterPStopsCountingInPl1) {
  core.set_reg(1, Pmu::kE | Pmu::kC);
  core.set_reg(2, 1u << 31);
  core.set_reg(5, 31);
  core.set_reg(6, 1u << 31);  // PMCCFILTR.P: not in PL1
  run({kMcrPmselrR5, kMcrPmxevtyperR6, kMcrPmcntensetR2, kMcrPmcrR1, kNop, kNop, kMrcPmccntrR3});
  EXPECT_EQ(core.reg(3), 0u);
}

TEST_F(IssPmu, Pl0NeedsPmuserenrEn) {
  core.set_reg(1, 1);
  run({kMcrPmuserenrR1, kCpsUsr, kMrcPmcrR0});
  EXPECT_EQ(core.reg(0), 0x410f3000u);  // allowed by PMUSERENR.EN
  core.set_system_mode(true);           // back to SVC
  core.set_reg(1, 0);
  core.set_reg(0, 0);
  run({kMcrPmuserenrR1, kCpsUsr, kMrcPmcrR0});
  EXPECT_EQ(core.reg(0), 0u);
  EXPECT_EQ(core.pc(), 0x4u);  // Undefined Instruction
}

}  // namespace

// The ISS is plain C++: no SystemC kernel, so GoogleTest's own main.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
