// The device-emulation channel's DMA context. The virtual TOE manager hands the TOE physical
// addresses it has checked and translated, so the channel's SMMU context is an identity table
// over exactly what the manager may let it reach: the hypervisor's own memory (the physical
// rings) and the RAM of the guests it serves; nothing else, in particular no directly assigned
// VM's RAM. The channel's DMA carries the hypervisor's id.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/smmu/smmu.h"
#include "models/smmu/stage2_table.h"
#include "models/toe/toe.h"

namespace vtoe::hypervisor {

struct MemoryRange {
  std::uint64_t base = 0;
  std::uint64_t size = 0;
};

// The identity table: each range mapped onto itself, read-write.
std::shared_ptr<smmu::Stage2Table> emulated_channel_table(
    const MemoryRange& hypervisor_memory, const std::vector<MemoryRange>& guest_ram);

// Programs `channel`'s SMMU context with that table and makes the hypervisor its owner.
void connect_emulated_channel(smmu::Smmu& smmu, toe::Toe& toe, int channel,
                              const MemoryRange& hypervisor_memory,
                              const std::vector<MemoryRange>& guest_ram);

}  // namespace vtoe::hypervisor
