// Bench for the device-emulation channel's DMA context: an identity table over the hypervisor's
// memory and the emulated guests' RAM only, installed for the channel with the hypervisor as owner.
#include "hypervisor/emulated_channel_dma.h"

#include <gtest/gtest.h>

#include "models/core/sideband.h"
#include "tests/support/bench.h"

using namespace vtoe;
using hypervisor::MemoryRange;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
const MemoryRange kHypervisorMemory{8 * kMiB, 8 * kMiB};
// Guests 1 and 3 are emulated; guest 2's RAM (between them) belongs to a direct VM.
const std::vector<MemoryRange> kEmulatedRam{{32 * kMiB, 16 * kMiB}, {64 * kMiB, 16 * kMiB}};

}  // namespace

TEST(EmulatedChannelDma, IdentityOverHypervisorMemoryAndEmulatedGuestsOnly) {
  const auto table = hypervisor::emulated_channel_table(kHypervisorMemory, kEmulatedRam);
  for (std::uint64_t pa : {8 * kMiB, 16 * kMiB - 4, 32 * kMiB, 48 * kMiB - 1, 64 * kMiB + 4096}) {
    const auto t = table->translate(pa, true);
    ASSERT_TRUE(t) << std::hex << pa;
    EXPECT_EQ(t->pa, pa);
  }
  const std::uint64_t outside[] = {0, 8 * kMiB - 1, 16 * kMiB, 48 * kMiB, 63 * kMiB, 80 * kMiB};
  for (std::uint64_t pa : outside)
    EXPECT_FALSE(table->translate(pa, false)) << std::hex << pa;
  EXPECT_EQ(table->mapped_bytes(), 8 * kMiB + 32 * kMiB);
}

TEST(EmulatedChannelDma, ConnectGivesTheChannelTheTableAndTheHypervisorAsOwner) {
  smmu::Smmu smmu("smmu");
  toe::ToeParams tp;
  tp.channels = 2;
  toe::Toe toe("toe", tp);
  hypervisor::connect_emulated_channel(smmu, toe, 1, kHypervisorMemory, kEmulatedRam);
  EXPECT_TRUE(smmu.has_context(1));
  EXPECT_FALSE(smmu.has_context(0));
  EXPECT_EQ(toe.channel(1).sideband().vm_id, core::SidebandExtension::kHost);
  EXPECT_EQ(toe.channel(1).sideband().stream_id, 1u);
}

VTOE_TEST_MAIN
