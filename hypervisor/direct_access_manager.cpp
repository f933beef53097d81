#include "hypervisor/direct_access_manager.h"

#include "models/toe/descriptors.h"

namespace vtoe::hypervisor {

std::vector<ChannelAssignment> assign_channels(std::size_t vms, int channels) {
  std::vector<ChannelAssignment> out;
  const bool fits = vms <= static_cast<std::size_t>(channels);
  for (std::size_t i = 0; i < vms; ++i) {
    const bool own = fits || i + 1 < static_cast<std::size_t>(channels);
    out.push_back({own ? static_cast<int>(i) : channels - 1, own});
  }
  return out;
}

DirectAccessManager::DirectAccessManager(const DirectAccessParams& params, Hypervisor& hyp)
    : params_(params),
      hyp_(hyp),
      vm_of_channel_(static_cast<std::size_t>(params.channels), -1),
      vector_pa_(params.toe_regs_pa + toe::reg::kControlUnitBase + toe::reg::kIrqVector) {
  for (std::size_t vm = 0; vm < params_.assignment.size(); ++vm) {
    const ChannelAssignment& a = params_.assignment[vm];
    if (a.direct)
      vm_of_channel_.at(static_cast<std::size_t>(a.channel)) = static_cast<int>(vm);
    else if (emulated_channel_ < 0)
      emulated_channel_ = a.channel;
  }
  for (int vm : vm_of_channel_)
    if (vm >= 0) {
      charged_vm_ = vm;
      break;
    }
}

void DirectAccessManager::connect_channels(smmu::Smmu& smmu, toe::Toe& toe) {
  for (std::size_t i = 0; i < params_.assignment.size(); ++i) {
    const ChannelAssignment& a = params_.assignment[i];
    if (!a.direct) continue;
    const int vm = static_cast<int>(i);
    const int ch = a.channel;
    hyp_.stage2(vm).map(params_.guest_regs_ipa,
                        params_.toe_regs_pa +
                            static_cast<std::uint64_t>(ch) * toe::reg::kChannelStride,
                        toe::reg::kChannelStride, smmu::Perm::rw(), smmu::MemAttr::Device);
    // The channel's DMA is translated with the VM's own stage 2: it can reach nothing else.
    smmu.set_context(static_cast<std::uint32_t>(ch), hyp_.stage2_ptr(vm),
                     static_cast<std::uint16_t>(vm));
    toe.channel(ch).set_owner(static_cast<std::uint16_t>(vm), static_cast<std::uint32_t>(ch));
    toe.channel(ch).set_address(params_.addresses.at(i));  // its connections use the VM's address
  }
}

bool DirectAccessManager::owns_all(std::uint32_t bits, int vm) const {
  if (bits == 0 || vm < 0) return false;
  for (std::size_t c = 0; c < vm_of_channel_.size(); ++c)
    if ((bits & (1u << c)) &&
        (vm_of_channel_[c] != vm || static_cast<int>(c) == emulated_channel_))
      return false;
  return true;
}

void DirectAccessManager::handle_interrupt(Ctx& ctx) {
  // Read and clear the multi-channel control unit's interrupt bit vector, then raise the virtual
  // interrupts it names (paper §3.2, "Interrupt delivery").
  std::uint32_t bits = 0;
  hyp_.device_access(ctx, false, vector_pa_, bits, charged_vm_);
  if (bits == 0) return;
  hyp_.device_access(ctx, true, vector_pa_, bits, charged_vm_);
  // Posted (direct) delivery: the interrupt translation hardware routes it; no host cycles.
  const bool posted = hyp_.posted_delivery(ctx);
  if (!posted) hyp_.spend(ctx, hyp_.costs().bitvector, charged_vm_);
  for (std::size_t c = 0; c < vm_of_channel_.size(); ++c) {
    if (!(bits & (1u << c))) continue;
    if (static_cast<int>(c) == emulated_channel_ && emulated_handler_) {
      emulated_handler_(ctx);
    } else if (vm_of_channel_[c] >= 0) {
      if (!posted) hyp_.spend(ctx, hyp_.costs().vgic_inject, vm_of_channel_[c]);
      hyp_.inject(vm_of_channel_[c]);
    }
  }
}

void DirectAccessManager::handle_channel_interrupt(Ctx& ctx, int channel) {
  const auto c = static_cast<std::size_t>(channel);
  const int vm = vm_of_channel_.at(c);
  const bool emulated = channel == emulated_channel_;
  // The queue's bit, written 1 to clear: no vector to read and decode, the vector is the queue's.
  std::uint32_t bit = 1u << channel;
  hyp_.device_access(ctx, true, vector_pa_, bit, vm >= 0 && !emulated ? vm : charged_vm_);
  if (emulated) {
    if (emulated_handler_) emulated_handler_(ctx);
    return;
  }
  if (vm < 0) return;
  if (!hyp_.posted_delivery(ctx)) hyp_.spend(ctx, hyp_.costs().vgic_inject, vm);
  hyp_.inject(vm);
}

}  // namespace vtoe::hypervisor
