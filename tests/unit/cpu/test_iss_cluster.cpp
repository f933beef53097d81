// cpu::iss::GlobalMonitor and cpu::iss::Cluster: exclusives that hold across cores (a reservation
// broken by another core's store or STREX, as QEMU 7.2 decides), the broadcast of Inner Shareable
// TLB maintenance and of writes to decoded code, WFE's yield, and MPIDR per core. Two ArmCores in
// system mode share one host buffer as a platform's cores share the RAM's DMI pointer.
// Encodings from arm-linux-gnueabihf-as -march=armv7-a.
#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <vector>

#include "models/cpu/iss/arm_core.h"
#include "models/cpu/iss/cluster.h"
#include "models/cpu/iss/global_monitor.h"

using vtoe::cpu::iss::ArmCore;
using vtoe::cpu::iss::Cluster;
using vtoe::cpu::iss::GlobalMonitor;
using vtoe::cpu::iss::PagedMemory;

namespace {

TEST(GlobalMonitor, AStoreOfAnotherValueOrAnotherCoresStrexBreaksAReservation) {
  alignas(64) std::uint8_t ram[256] = {};
  GlobalMonitor m(2);
  // Uncontended: LDREX then STREX succeeds once.
  m.reserve(0, ram, 4);
  EXPECT_TRUE(m.holds(0));
  EXPECT_TRUE(m.claim(0, ram, 4));
  EXPECT_FALSE(m.holds(0));
  EXPECT_FALSE(m.claim(0, ram, 4));  // the reservation is used up
  // Another core's store of a new value in between.
  m.reserve(0, ram, 4);
  ram[0] = 7;
  EXPECT_FALSE(m.claim(0, ram, 4));
  // Both reserve; the first STREX wins and clears the other's reservation in its granule.
  m.reserve(0, ram, 4);
  m.reserve(1, ram + 8, 4);  // same 64-byte granule
  EXPECT_TRUE(m.claim(1, ram + 8, 4));
  EXPECT_FALSE(m.holds(0));
  EXPECT_FALSE(m.claim(0, ram, 4));
  // Another granule is left alone.
  m.reserve(0, ram, 4);
  m.reserve(1, ram + 128, 4);
  EXPECT_TRUE(m.claim(1, ram + 128, 4));
  EXPECT_TRUE(m.claim(0, ram, 4));
  // A STREX to another address or size than the LDREX's fails; CLREX forgets.
  m.reserve(0, ram, 4);
  EXPECT_FALSE(m.claim(0, ram + 4, 4));
  m.reserve(0, ram, 8);
  EXPECT_FALSE(m.claim(0, ram, 4));
  m.reserve(1, ram, 4);
  m.clear(1);
  EXPECT_FALSE(m.claim(1, ram, 4));
  EXPECT_EQ(m.claims(), 4u);
  EXPECT_EQ(m.failures(), 6u);
  EXPECT_THROW(GlobalMonitor(9), std::invalid_argument);
  EXPECT_THROW(m.reserve(2, ram, 4), std::out_of_range);
}

constexpr uint32_t kRam = 0x40000000;
constexpr uint32_t kCode0 = kRam, kCode1 = kRam + 0x1000, kData = kRam + 0x2000;

// Two system-mode cores (SVC, MMU off) over one shared buffer.
class Pair : public ::testing::Test {
 protected:
  void SetUp() override {
    buf.assign(0x4000, 0);
    for (int i = 0; i < 2; ++i) {
      mem[i].attach(kRam, buf.size(), buf.data());
      core[i]->reset_system(false);
      core[i]->set_mpidr(0x80000000u | static_cast<uint32_t>(i));
    }
  }
  void a32_at(uint32_t addr, std::initializer_list<uint32_t> code) {
    for (uint32_t w : code) {
      std::memcpy(&buf[addr - kRam], &w, 4);
      addr += 4;
    }
  }
  uint32_t word(uint32_t addr) const {
    uint32_t v;
    std::memcpy(&v, &buf[addr - kRam], 4);
    return v;
  }
  std::vector<uint8_t> buf;
  PagedMemory mem[2];
  ArmCore c0{mem[0]}, c1{mem[1]};
  ArmCore* core[2] = {&c0, &c1};
};

TEST_F(Pair, StrexFailsAfterTheOtherCoresStoreOrStrex) {
  Cluster cluster({core[0], core[1]});
  // r1 = kData: ldrex r0, [r1]; add r0, r0, #1; strex r2, r0, [r1]
  const std::initializer_list<uint32_t> inc = {0xe1910f9f, 0xe2800001, 0xe1812f90};
  a32_at(kCode0, inc);
  a32_at(kCode1, {0xe5813000,  // str r3, [r1]
                  0xe1910f9f, 0xe2800001, 0xe1812f90});
  for (int i = 0; i < 2; ++i) core[i]->set_reg(1, kData);
  core[1]->set_reg(3, 41);

  core[0]->set_pc(kCode0);
  core[0]->step();  // core 0: ldrex (0)
  core[1]->set_pc(kCode1);
  core[1]->step();  // core 1: str 41
  core[0]->step();
  core[0]->step();  // core 0: strex fails
  EXPECT_EQ(core[0]->reg(2), 1u);
  EXPECT_EQ(word(kData), 41u);

  core[0]->set_pc(kCode0);
  core[0]->step();                              // core 0: ldrex (41)
  for (int i = 0; i < 3; ++i) core[1]->step();  // core 1: ldrex, add, strex: 42
  EXPECT_EQ(core[1]->reg(2), 0u);
  EXPECT_EQ(word(kData), 42u);
  core[0]->step();
  core[0]->step();  // core 0's reservation went with core 1's STREX
  EXPECT_EQ(core[0]->reg(2), 1u);
  EXPECT_EQ(word(kData), 42u);

  core[0]->set_pc(kCode0);
  for (int i = 0; i < 3; ++i) core[0]->step();  // alone: succeeds
  EXPECT_EQ(core[0]->reg(2), 0u);
  EXPECT_EQ(word(kData), 43u);
  EXPECT_EQ(cluster.monitor().claims(), 2u);
}

TEST_F(Pair, WithoutAClusterEachCoreHasOnlyItsLocalMonitor) {
  a32_at(kCode0, {0xe1910f9f, 0xe2800001, 0xe1812f90});
  a32_at(kCode1, {0xe5813000});
  core[0]->set_reg(1, kData);
  core[1]->set_reg(1, kData);
  core[1]->set_reg(3, 41);
  core[0]->set_pc(kCode0);
  core[0]->step();
  core[1]->set_pc(kCode1);
  core[1]->step();
  core[0]->step();
  core[0]->step();
  EXPECT_EQ(core[0]->reg(2), 0u);  // a uniprocessor: nothing else could have stored
}

TEST_F(Pair, AStoreToCodeAnotherCoreDecodedDropsItThere) {
  Cluster cluster({core[0], core[1]});
  a32_at(kCode1, {0xe3a00001});  // mov r0, #1
  core[1]->set_pc(kCode1);
  core[1]->step();
  EXPECT_EQ(core[1]->reg(0), 1u);
  // Core 0 rewrites it: str r2, [r3] with r2 = mov r0, #2.
  a32_at(kCode0, {0xe5832000});
  core[0]->set_reg(2, 0xe3a00002);
  core[0]->set_reg(3, kCode1);
  core[0]->set_pc(kCode0);
  core[0]->step();
  core[1]->set_pc(kCode1);
  core[1]->step();
  EXPECT_EQ(core[1]->reg(0), 2u);
}

TEST_F(Pair, InnerShareableTlbMaintenanceReachesTheOtherCore) {
  Cluster cluster({core[0], core[1]});
  a32_at(kCode0, {0xee080f13,    // mcr p15, 0, r0, c8, c3, 0 (TLBIALLIS)
                  0xee080f17});  // mcr p15, 0, r0, c8, c7, 0 (TLBIALL: this core's only)
  const auto before = core[1]->tlb_flushes();
  core[0]->set_pc(kCode0);
  core[0]->step();
  EXPECT_EQ(core[1]->tlb_flushes(), before + 1);
  core[0]->step();
  EXPECT_EQ(core[1]->tlb_flushes(), before + 1);
  EXPECT_EQ(cluster.tlb_broadcasts(), 1u);
}

TEST_F(Pair, MpidrPerCoreAndWfeYieldsInACluster) {
  a32_at(kCode0, {0xee100fb0,    // mrc p15, 0, r0, c0, c0, 5 (MPIDR)
                  0xe320f002,    // wfe
                  0xe3a01007});  // mov r1, #7
  a32_at(kCode1, {0xee100fb0});
  core[1]->set_pc(kCode1);
  core[1]->step();
  EXPECT_EQ(core[1]->reg(0), 0x80000001u);
  core[0]->set_pc(kCode0);
  core[0]->run(3);  // no cluster: WFE is a NOP
  EXPECT_EQ(core[0]->reg(0), 0x80000000u);
  EXPECT_EQ(core[0]->reg(1), 7u);
  EXPECT_FALSE(core[0]->take_yield());
  Cluster cluster({core[0], core[1]});
  core[0]->set_reg(1, 0);
  core[0]->set_pc(kCode0);
  EXPECT_EQ(core[0]->run(3), 2u);  // run() ends after the WFE
  EXPECT_TRUE(core[0]->take_yield());
  EXPECT_FALSE(core[0]->take_yield());
  EXPECT_EQ(core[0]->reg(1), 0u);
  core[0]->run(1);
  EXPECT_EQ(core[0]->reg(1), 7u);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
