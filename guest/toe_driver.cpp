#include "guest/toe_driver.h"

#include <cstring>

namespace vtoe::guest {

using cpu::CycleClass;
using toe::Ring;

ToeDriver::ToeDriver(const sc_core::sc_module_name& name, cpu::Core& core, int owner,
                     GuestMemory& mem, const GuestCosts& costs, const DriverParams& params,
                     cpu::RegisterPort& regs, cpu::InterruptPort& irq)
    : core::Module(name),
      core_(core),
      mem_(mem),
      costs_(costs),
      params_(params),
      regs_(regs),
      irq_(irq),
      isr_ctx_(core.add_context(std::string(this->name()) + ".isr", 0, owner, /*io_wake=*/true)),
      kthread_ctx_(core.add_context(std::string(this->name()) + ".kthread", 1, owner)),
      interrupts_(stats_.counter("interrupts", "TOE interrupts handled")),
      completions_(stats_.counter("completions", "ECQ entries consumed")),
      posted_(stats_.counter("contexts_posted", "CmdQ/SendQ/RecvQ contexts posted")),
      ring_full_(stats_.counter("ring_full_waits", "posts that found their ring full")) {
  SC_THREAD(isr_thread);
  SC_THREAD(kthread);
}

void ToeDriver::write_reg(cpu::Core::Context& ctx, std::uint64_t offset, std::uint32_t value) {
  regs_.access(ctx, true, params_.regs_addr + offset, value);
}

std::uint32_t ToeDriver::read_reg(cpu::Core::Context& ctx, std::uint64_t offset) {
  std::uint32_t value = 0;
  regs_.access(ctx, false, params_.regs_addr + offset, value);
  return value;
}

void ToeDriver::start(cpu::Core::Context& ctx) {
  if (started_) return;
  const std::uint32_t n = params_.ring_entries;
  for (int r = 0; r < toe::kRings; ++r) {
    rings_[r].addr = mem_.allocate(static_cast<std::uint64_t>(n) * toe::kDescBytes, 4096);
    std::vector<std::uint8_t> zero(static_cast<std::size_t>(n) * toe::kDescBytes, 0);
    mem_.write(rings_[r].addr, zero.data(), zero.size());
    write_reg(ctx, ring_reg(static_cast<Ring>(r), toe::reg::kRingSize), n);
    write_reg(ctx, ring_reg(static_cast<Ring>(r), toe::reg::kRingAddrLo),
              static_cast<std::uint32_t>(rings_[r].addr));
    write_reg(ctx, ring_reg(static_cast<Ring>(r), toe::reg::kRingAddrHi),
              static_cast<std::uint32_t>(rings_[r].addr >> 32));
  }
  write_reg(ctx, toe::reg::kCtrl, toe::reg::kCtrlEnable | toe::reg::kCtrlIrqEnable);
  started_ = true;
}

void ToeDriver::post(cpu::Core::Context& ctx, Ring ring, const void* desc) {
  RingState& rs = rings_[static_cast<int>(ring)];
  const std::uint32_t mask = params_.ring_entries - 1;
  core_.execute(ctx, costs_.post_context, CycleClass::GuestKernel);
  // Full when advancing the tail would meet the head the TOE last reported.
  while (((rs.tail + 1) & mask) == rs.head) {
    rs.head = read_reg(ctx, ring_reg(ring, toe::reg::kRingHead));
    if (((rs.tail + 1) & mask) != rs.head) break;
    ++ring_full_;
    sc_core::wait(ring_space_ev_);
  }
  mem_.write(rs.addr + static_cast<std::uint64_t>(rs.tail) * toe::kDescBytes, desc,
             toe::kDescBytes);
  rs.tail = (rs.tail + 1) & mask;
  ++posted_;
  write_reg(ctx, ring_reg(ring, toe::reg::kRingTail), rs.tail);
}

void ToeDriver::isr_thread() {
  RingState& ecq = rings_[static_cast<int>(Ring::Ecq)];
  const std::uint32_t mask = params_.ring_entries - 1;
  for (;;) {
    while (!irq_.pending()) sc_core::wait(irq_.pending_event());
    // Interrupt entry; under a hypervisor this waits until the VM's vCPU is on the core.
    core_.execute(isr_ctx_, costs_.isr, CycleClass::GuestKernel);
    const int id = irq_.acknowledge();
    if (id == 1023) continue;  // spurious: taken by an earlier pass
    ++interrupts_;
    std::uint32_t taken = 0;
    if (started_) {
      for (;;) {
        toe::EcqDesc d;
        const std::uint64_t at = ecq.addr + static_cast<std::uint64_t>(ecq.head) * toe::kDescBytes;
        mem_.read(at, &d, sizeof d);
        if (!d.valid) break;
        d.valid = 0;
        mem_.write(at, &d, sizeof d);
        events_.push_back(d);
        ecq.head = (ecq.head + 1) & mask;
        ++taken;
      }
    }
    if (taken) {
      completions_ += taken;
      core_.execute(isr_ctx_, costs_.ecq_entry * taken, CycleClass::GuestKernel);
      events_ev_.notify(sc_core::SC_ZERO_TIME);
    }
    // Handing the slots back lowers the TOE's level interrupt; then end the interrupt.
    if (started_) write_reg(isr_ctx_, ring_reg(Ring::Ecq, toe::reg::kRingHead), ecq.head);
    irq_.end_of_interrupt(id);
  }
}

void ToeDriver::kthread() {
  for (;;) {
    while (events_.empty()) sc_core::wait(events_ev_);
    const toe::EcqDesc d = events_.front();
    events_.pop_front();
    core_.execute(kthread_ctx_, costs_.kthread_event, CycleClass::GuestKernel);
    ring_space_ev_.notify(sc_core::SC_ZERO_TIME);
    if (deliver_) deliver_(d);
  }
}

}  // namespace vtoe::guest
