#include "models/pci/pcie_host.h"

#include <iterator>

namespace vtoe::pci {

namespace {

core::PeripheralParams params() {
  core::PeripheralParams p;
  p.bad_response = core::BadAccessResponse::ReadAsOnes;  // absent functions, beyond the header
  p.bad_access_stat = "absent_accesses";
  p.warn_limit = 0;
  return p;
}

}  // namespace

PcieHost::PcieHost(const sc_core::sc_module_name& name)
    : core::Peripheral(name, params()),
      ecam("ecam"),
      regs_(std::string(this->name()) + ".config"),
      id_(regs_, reg_info::kId),
      command_status_(regs_, reg_info::kCommandStatus),
      class_revision_(regs_, reg_info::kClassRevision),
      header_(regs_, reg_info::kHeader),
      bar_(regs_, reg_info::kBar),
      cardbus_cis_(regs_, reg_info::kCardbusCis),
      subsystem_(regs_, reg_info::kSubsystem),
      rom_(regs_, reg_info::kRom),
      capabilities_(regs_, reg_info::kCapabilities),
      interrupt_(regs_, reg_info::kInterrupt),
      device_specific_(regs_, reg_info::kDeviceSpecific) {
  serve(ecam);
  map(ecam, regs_, 0, reg::kConfigSize);
  regs_.expect_all(reg_info::kConfigBank, std::size(reg_info::kConfigBank));
}

std::uint32_t PcieHost::read(std::uint32_t offset) {
  std::uint64_t v = 0;
  // A bad access (an absent function) reads as ones on the bus; the same here.
  if (!Peripheral::read(ecam, offset, v, 4)) return 0xffffffffu;
  return static_cast<std::uint32_t>(v);
}

void PcieHost::write(std::uint32_t offset, std::uint32_t value) {
  Peripheral::write(ecam, offset, value, 4);
}

}  // namespace vtoe::pci
