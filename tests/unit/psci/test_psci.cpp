// psci::Psci: the answers QEMU's virt gives one core (checked end to end against QEMU by
// tests/system's psci program once the ISS executes SMC/HVC), and the calls that end a run.
#include <gtest/gtest.h>

#include "models/psci/psci.h"

using namespace vtoe::psci;

TEST(Psci, AnswersAsQemuForOneCore) {
  Psci p;
  EXPECT_EQ(p.call(fn::kVersion, 0, 0, 0).r0, 0x00010001u);
  EXPECT_EQ(p.call(fn::kFeatures, fn::kSystemOff, 0, 0).r0, 0u);
  EXPECT_EQ(p.call(fn::kFeatures, 0x8400001F, 0, 0).r0, static_cast<std::uint32_t>(-1));
  EXPECT_EQ(p.call(fn::kMigrateInfoType, 0, 0, 0).r0, 2u);
  EXPECT_EQ(p.call(fn::kAffinityInfo, 0, 0, 0).r0, 0u);
  EXPECT_EQ(p.call(fn::kCpuOn, 0, 0x40010000, 0).r0, static_cast<std::uint32_t>(-4));
  EXPECT_EQ(p.call(fn::kCpuOn, 1, 0x40010000, 0).r0, static_cast<std::uint32_t>(-2));
  EXPECT_EQ(p.call(0x8400001F, 0, 0, 0).r0, static_cast<std::uint32_t>(-1));
  EXPECT_EQ(p.unsupported().at(0x8400001F), 1u);
  EXPECT_EQ(p.calls(), 8u);
}

TEST(Psci, SystemOffAndResetEndTheRunDistinctly) {
  Psci p;
  EXPECT_EQ(p.call(fn::kSystemOff, 0, 0, 0).action, Action::PowerOff);
  EXPECT_EQ(p.call(fn::kSystemReset, 0, 0, 0).action, Action::Reset);
  EXPECT_EQ(p.call(fn::kVersion, 0, 0, 0).action, Action::None);
  EXPECT_NE(kResetExitStatus, 0);
  EXPECT_TRUE(Psci::is_psci(fn::kCpuOn64));
  EXPECT_FALSE(Psci::is_psci(0x82000000));  // a SiP call, not PSCI's
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
