// What the guest OS sees of its machine, so the same driver runs native, under device emulation
// and with direct access (full virtualization: the guest cannot tell):
//  - RegisterPort: its CPU's 32-bit loads/stores to device registers at guest-physical
//    addresses. Native: straight to the bus. Virtualized: through stage 2, which either passes
//    the access to a device page (direct access) or traps it to the hypervisor (emulation).
//  - InterruptPort: the GIC CPU interface it acknowledges interrupts at. Native: the physical
//    interface; virtualized: the virtual CPU interface fed by the hypervisor's list registers.
//  - TimerPort: how its periodic timer interrupt (the kernel tick) reaches it. Native: at once
//    (no port); virtualized: through the hypervisor (an exit and an injection, or direct).
#pragma once

#include <cstdint>
#include <systemc>

#include "models/cpu/core.h"

namespace vtoe::cpu {

class RegisterPort {
 public:
  virtual ~RegisterPort() = default;
  // One 32-bit access on behalf of `ctx`; returns when the CPU may go on, all costs charged.
  virtual void access(cpu::Core::Context& ctx, bool write, std::uint64_t addr,
                      std::uint32_t& value) = 0;
};

class InterruptPort {
 public:
  virtual ~InterruptPort() = default;
  // An interrupt is pending for this CPU interface.
  virtual bool pending() const = 0;
  // Notified whenever pending() may have become true.
  virtual const sc_core::sc_event& pending_event() const = 0;
  virtual int acknowledge() = 0;  // interrupt ID, or 1023 when nothing is pending
  virtual void end_of_interrupt(int id) = 0;
};

class TimerPort {
 public:
  virtual ~TimerPort() = default;
  // The guest's timer expired; returns when the interrupt has reached the guest, the delivery's
  // hypervisor work (if any) done and charged. The guest's handler runs after it.
  virtual void deliver() = 0;
};

}  // namespace vtoe::cpu
