// The guest's hardware ports on a native (non-virtualized) platform: register accesses go to the
// bus, interrupts come from the physical GIC CPU interface.
#pragma once

#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/cpu/core.h"
#include "models/cpu/hardware_ports.h"
#include "models/gic/gic.h"

namespace vtoe::cpu {

// An uncached 32-bit access: the CPU stalls for `stall_cycles` plus the bus latency.
class BusRegisterPort : public RegisterPort {
 public:
  BusRegisterPort(tlm::tlm_initiator_socket<>& bus, cpu::Core& core, double stall_cycles)
      : bus_(bus), core_(core), stall_cycles_(stall_cycles) {}
  void access(cpu::Core::Context& ctx, bool write, std::uint64_t addr,
              std::uint32_t& value) override;
  // The same access charged to a given class and owner (the hypervisor uses it for its own).
  void access_as(cpu::Core::Context& ctx, bool write, std::uint64_t addr, std::uint32_t& value,
                 cpu::CycleClass cls, int charge_to);
  std::uint64_t errors() const { return errors_; }

 private:
  tlm::tlm_initiator_socket<>& bus_;
  cpu::Core& core_;
  double stall_cycles_;
  std::uint64_t errors_ = 0;
  // Payloads reused across accesses (one per access in flight: a target may wait).
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> free_payloads_;
};

// The CPU interface of a native platform's core `cpu`: the GIC's IRQ output to that core arrives
// on the port `irq` (unbound is an elaboration error); acknowledge and end of interrupt go to
// the GIC's CPU interface `cpu`.
class GicInterruptPort : public sc_core::sc_module, public InterruptPort {
 public:
  sc_core::sc_in<bool> irq{"irq"};

  GicInterruptPort(const sc_core::sc_module_name& name, gic::Gic& gic, int cpu = 0)
      : sc_core::sc_module(name), gic_(gic), cpu_(cpu) {}
  bool pending() const override { return gic_.irq_asserted(cpu_); }
  const sc_core::sc_event& pending_event() const override { return irq.posedge_event(); }
  int acknowledge() override { return gic_.acknowledge(cpu_); }
  void end_of_interrupt(int id) override { gic_.end_of_interrupt(id, cpu_); }

 private:
  gic::Gic& gic_;
  int cpu_;
};

}  // namespace vtoe::cpu
