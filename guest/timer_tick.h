// The guest kernel's periodic tick (HZ): a timer interrupt every 1/hz from `phase` on, whose
// handler (timekeeping, the scheduler's tick) costs guest-kernel cycles on the VM's core. Under a
// hypervisor the interrupt arrives through a cpu::TimerPort, which decides whether it costs an
// exit (docs/hypervisor.md, "Timer interrupts and idling"). A tick whose handler has not run yet
// when the next one is due is merged with it, as a real kernel counts missed jiffies.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/core/param.h"
#include "models/cpu/core.h"
#include "models/cpu/hardware_ports.h"

namespace vtoe::guest {

struct TimerTickParams {
  double hz = 0;                 // 0 = no periodic tick (a tickless guest)
  core::TimePs phase = 0;        // first tick at phase (0: at 1/hz)
  double handler_cycles = 2000;  // the tick handler's cost
};

class TimerTick : public core::Module {
 public:
  SC_HAS_PROCESS(TimerTick);
  // `port` null: native (the interrupt reaches the kernel at once).
  TimerTick(const sc_core::sc_module_name& name, const TimerTickParams& params, cpu::Core& core,
            int owner, cpu::TimerPort* port);
  std::uint64_t ticks() const { return ticks_.value(); }

 private:
  void run();
  TimerTickParams params_;
  cpu::Core& core_;
  cpu::Core::Context& ctx_;
  cpu::TimerPort* port_;
  core::Counter& ticks_;
  core::Counter& merged_;
};

}  // namespace vtoe::guest
