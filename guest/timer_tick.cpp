#include "guest/timer_tick.h"

#include <cmath>

namespace vtoe::guest {

TimerTick::TimerTick(const sc_core::sc_module_name& name, const TimerTickParams& params,
                     cpu::Core& core, int owner, cpu::TimerPort* port)
    : core::Module(name),
      params_(params),
      core_(core),
      // An interrupt handler: the highest guest priority. Not an I/O wake-up (no BOOST).
      ctx_(core.add_context(std::string(this->name()), 0, owner)),
      port_(port),
      ticks_(stats_.counter("ticks", "timer interrupts handled")),
      merged_(stats_.counter("merged", "ticks due while the previous one was still handled")) {
  SC_THREAD(run);
}

void TimerTick::run() {
  const auto period = static_cast<core::TimePs>(std::llround(1e12 / params_.hz));
  core::TimePs due = params_.phase ? params_.phase : period;
  for (;;) {
    const core::TimePs now = core::now_ps();
    if (due > now) sc_core::wait(core::ps(due - now));
    if (port_) port_->deliver();
    core_.execute(ctx_, params_.handler_cycles, cpu::CycleClass::GuestKernel);
    ++ticks_;
    due += period;
    // Ticks that fell due while this one was delivered and handled are merged into it.
    while (due <= core::now_ps()) {
      ++merged_;
      due += period;
    }
  }
}

}  // namespace vtoe::guest
