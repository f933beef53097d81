#include "hypervisor/emulated_channel_dma.h"

#include "models/core/sideband.h"

namespace vtoe::hypervisor {

std::shared_ptr<smmu::Stage2Table> emulated_channel_table(
    const MemoryRange& hypervisor_memory, const std::vector<MemoryRange>& guest_ram) {
  auto identity = std::make_shared<smmu::Stage2Table>("device emulation channel");
  identity->map(hypervisor_memory.base, hypervisor_memory.base, hypervisor_memory.size,
                smmu::Perm::rw());
  for (const MemoryRange& ram : guest_ram)
    identity->map(ram.base, ram.base, ram.size, smmu::Perm::rw());
  return identity;
}

void connect_emulated_channel(smmu::Smmu& smmu, toe::Toe& toe, int channel,
                              const MemoryRange& hypervisor_memory,
                              const std::vector<MemoryRange>& guest_ram) {
  smmu.set_context(static_cast<std::uint32_t>(channel),
                   emulated_channel_table(hypervisor_memory, guest_ram),
                   core::SidebandExtension::kHost);
  toe.channel(channel).set_owner(core::SidebandExtension::kHost,
                                 static_cast<std::uint32_t>(channel));
}

}  // namespace vtoe::hypervisor
