// The direct-access manager (paper §3.2, Fig. 5), the counterpart of the device-emulation
// VirtualToeManager. Under direct access each VM owns a physical TOE control channel:
//  - channel assignment: VM i gets channel i while there are enough; when there are more VMs
//    than channels, the last channel is shared by the remaining VMs through device emulation;
//  - set-up of a direct VM: stage 2 maps its channel page (at the IPA where every guest finds its
//    TOE) to the channel's registers as device memory, so its driver reaches the TOE with no
//    exit; the SMMU translates the channel's DMA with the VM's own stage 2; the channel carries
//    the VM's id and uses the VM's address;
//  - the TOE's physical interrupt in bit-vector mode: read and clear the multi-channel control
//    unit's vector, then raise a virtual interrupt in the VM of each set bit; the emulated
//    channel's bit goes to the device-emulation manager;
//  - or, with the interrupts steered per VM (platform.irq_steering: vm), one interrupt per
//    channel (a per-queue vector, as MSI-X gives each queue): its handler clears the channel's
//    bit and raises that VM's virtual interrupt, on the core the interrupt was steered to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "hypervisor/hypervisor.h"
#include "models/smmu/smmu.h"
#include "models/toe/toe.h"

namespace vtoe::hypervisor {

// Where one VM's TOE traffic goes: a physical channel, and whether the VM reaches it directly
// (its page mapped in stage 2) or through device emulation (its accesses trap).
struct ChannelAssignment {
  int channel = 0;
  bool direct = false;

  bool operator==(const ChannelAssignment& o) const {
    return channel == o.channel && direct == o.direct;
  }
};

// Direct access for `vms` VMs over `channels` physical channels: VM i -> channel i, directly,
// while vms <= channels; otherwise VMs 0 .. channels - 2 keep a channel each and the others share
// the last one through device emulation.
std::vector<ChannelAssignment> assign_channels(std::size_t vms, int channels);

struct DirectAccessParams {
  std::vector<ChannelAssignment> assignment;  // per VM, as assign_channels gives it
  int channels = 1;                           // physical channels: bits of the interrupt vector
  std::uint64_t toe_regs_pa = 0;     // the TOE's register region (channel c at c * stride)
  std::uint64_t guest_regs_ipa = 0;  // where every guest finds its TOE channel
  std::vector<std::uint32_t> addresses;  // per VM: the local address its direct channel uses
};

class DirectAccessManager {
 public:
  using Ctx = cpu::Core::Context;
  // Serves the device-emulation channel's completions (the VirtualToeManager's interrupt).
  using EmulatedChannelHandler = std::function<void(Ctx& ctx)>;

  DirectAccessManager(const DirectAccessParams& params, Hypervisor& hyp);

  // Gives each direct VM its channel: stage-2 mapping of the channel page, SMMU context, owner
  // and address of the channel.
  void connect_channels(smmu::Smmu& smmu, toe::Toe& toe);

  // The channel shared through device emulation (-1 if every VM is direct), and who serves it.
  int emulated_channel() const { return emulated_channel_; }
  void set_emulated_channel_handler(EmulatedChannelHandler handler) {
    emulated_handler_ = std::move(handler);
  }

  // The TOE's physical interrupt (called from the hypervisor's interrupt handler).
  void handle_interrupt(Ctx& ctx);
  // Channel `channel`'s own interrupt (a per-queue vector): clears its bit of the vector (one
  // register write, charged to the channel's VM) and raises its VM's virtual interrupt, or hands
  // it to the device-emulation manager for the emulated channel.
  void handle_channel_interrupt(Ctx& ctx, int channel);
  // The direct VM on `channel`, or -1 (none, or the emulated channel).
  int vm_of_channel(int channel) const {
    return channel == emulated_channel_ ? -1 : vm_of_channel_.at(static_cast<std::size_t>(channel));
  }
  // Direct interrupts: every channel set in the interrupt bit vector `bits` is a direct channel
  // of `vm` (so the interrupt can be posted to that VM's running vCPU).
  bool owns_all(std::uint32_t bits, int vm) const;

  // The control unit's interrupt bit vector (physical address).
  std::uint64_t vector_pa() const { return vector_pa_; }

 private:
  DirectAccessParams params_;
  Hypervisor& hyp_;
  std::vector<int> vm_of_channel_;  // the direct VM on each channel, -1 if none
  int emulated_channel_ = -1;
  // The VM of the lowest direct channel: the interrupt's decode is charged to it, whichever VM
  // the interrupt is for.
  int charged_vm_ = 0;
  std::uint64_t vector_pa_ = 0;
  EmulatedChannelHandler emulated_handler_;
};

}  // namespace vtoe::hypervisor
