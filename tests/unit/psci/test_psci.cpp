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

TEST(Psci, CpuOnCpuOffAndAffinityInfoWithFourCores) {
  Psci p(0x80000000, 4);
  const auto u = [](std::int32_t v) { return static_cast<std::uint32_t>(v); };
  EXPECT_EQ(p.call(fn::kAffinityInfo, 0, 0, 0).r0, kAffinityOn);
  EXPECT_EQ(p.call(fn::kAffinityInfo, 2, 0, 0).r0, kAffinityOff);  // secondaries start off
  EXPECT_EQ(p.call(fn::kAffinityInfo, 2, 1, 0).r0, kAffinityOn);   // level 1: as QEMU
  EXPECT_EQ(p.call(fn::kAffinityInfo, 4, 0, 0).r0, u(ret::kInvalidParameters));  // no core 4
  Result r = p.call(fn::kCpuOn, 2, 0x40010001, 0x1234);
  EXPECT_EQ(r.r0, u(ret::kSuccess));
  EXPECT_EQ(r.action, Action::CpuOn);
  EXPECT_EQ(r.target, 2);
  EXPECT_EQ(r.entry, 0x40010001u);  // Thumb bit kept: the platform sets the state
  EXPECT_EQ(r.context_id, 0x1234u);
  EXPECT_TRUE(p.is_on(2));
  EXPECT_EQ(p.call(fn::kAffinityInfo, 0x80000002, 0, 0).r0, kAffinityOn);  // MPIDR's bit 31
  EXPECT_EQ(p.call(fn::kCpuOn, 2, 0x40010000, 0).r0, u(ret::kAlreadyOn));
  EXPECT_EQ(p.call(fn::kCpuOn, 0, 0x40010000, 0).action, Action::None);
  EXPECT_EQ(p.call(fn::kCpuOn64, 9, 0x40010000, 0).r0, u(ret::kInvalidParameters));
  EXPECT_EQ(p.call(fn::kCpuOn, 0x100, 0x40010000, 0).r0, u(ret::kInvalidParameters));  // Aff1
  // CPU_OFF powers the caller off; the last one off ends the run.
  EXPECT_EQ(p.call(fn::kCpuOff, 0, 0, 0, 2).action, Action::CpuOff);
  EXPECT_FALSE(p.is_on(2));
  EXPECT_EQ(p.call(fn::kAffinityInfo, 2, 0, 0).r0, kAffinityOff);
  EXPECT_EQ(p.call(fn::kCpuOn, 2, 0x40020000, 0).action, Action::CpuOn);  // on again
  EXPECT_EQ(p.call(fn::kCpuOff, 0, 0, 0, 0).action, Action::CpuOff);
  EXPECT_EQ(p.call(fn::kCpuOff, 0, 0, 0, 2).action, Action::PowerOff);
  EXPECT_EQ(p.call(fn::kVersion, 0, 0, 0, 1).r0, kVersion);  // the rest as with one core
  EXPECT_THROW(Psci(0x80000000, 9), std::invalid_argument);
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
