// The sideband every TLM transaction may carry: which VM issued it (or on whose behalf a device
// acts), which TOE channel, the SystemMMU stream, and which core issued it (the CPU number a
// banked register such as the GIC's per-CPU interface decodes by). IDs never travel in address
// bits.
#pragma once

#include <cstdint>
#include <tlm>

namespace vtoe::core {

struct SidebandExtension : tlm::tlm_extension<SidebandExtension> {
  static constexpr std::uint16_t kHost = 0xffff;  // native host / hypervisor itself

  std::uint16_t vm_id = kHost;
  std::uint16_t channel = 0;
  std::uint32_t stream_id = 0;
  std::uint16_t cpu = 0;  // the issuing core (0 for devices and uniprocessors)

  tlm::tlm_extension_base* clone() const override { return new SidebandExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const SidebandExtension&>(other);
  }
};

}  // namespace vtoe::core
