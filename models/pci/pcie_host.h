// QEMU virt's PCIe host bridge (QEMU's gpex) as far as software without PCI devices sees it: its
// ECAM window (0x3f00_0000, 16 MiB: buses 0-15) with the host bridge's type-0 header at bus 0,
// device 0, function 0 (1b36:0008, class 0x0600; docs/registers.md, from pcie_host.regs.yaml),
// and every other function absent: reads give all ones, writes are ignored, as on QEMU. No BAR,
// no capability; the memory and I/O windows hold no device.
//
// Enough for a PCI enumeration to find what QEMU's `-M virt` without `-device` shows
// (kvm-unit-tests' pci-test, Linux's pci-host-generic). The absent functions' accesses are
// counted as bad accesses without warnings (an enumeration makes hundreds).
#pragma once

#include <cstdint>
#include <systemc>

#include "models/core/peripheral.h"
#include "models/pci/pcie_host_regs.h"

namespace vtoe::pci {

constexpr std::uint64_t kEcamSize = 0x1000000;  // 16 buses x 32 devices x 8 functions x 4 KiB

class PcieHost : public core::Peripheral {
 public:
  Socket ecam;

  explicit PcieHost(const sc_core::sc_module_name& name);

  // Configuration access as a 32-bit bus access at `offset` in the ECAM window (tests, tools).
  std::uint32_t read(std::uint32_t offset);
  void write(std::uint32_t offset, std::uint32_t value);

 private:
  core::RegisterBank regs_;
  core::Reg<std::uint32_t> id_, command_status_, class_revision_, header_, bar_, cardbus_cis_,
      subsystem_, rom_, capabilities_, interrupt_, device_specific_;
};

}  // namespace vtoe::pci
