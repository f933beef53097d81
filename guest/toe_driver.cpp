#include "guest/toe_driver.h"

#include <cstring>

namespace vtoe::guest {

using cpu::CycleClass;
using toe::Ring;

ToeDriver::ToeDriver(const sc_core::sc_module_name& name, cpu::Core& core, int owner,
                     GuestMemory& mem, const GuestCosts& costs, const DriverParams& params,
                     tlm::tlm_initiator_socket<>& bus)
    : core::Module(name),
      irq("irq"),
      core_(core),
      mem_(mem),
      costs_(costs),
      params_(params),
      bus_(bus),
      isr_ctx_(core.add_context(std::string(this->name()) + ".isr", 0, owner)),
      kthread_ctx_(core.add_context(std::string(this->name()) + ".kthread", 1, owner)),
      interrupts_(stats_.counter("interrupts", "TOE interrupts handled")),
      completions_(stats_.counter("completions", "ECQ entries consumed")),
      posted_(stats_.counter("contexts_posted", "CmdQ/SendQ/RecvQ contexts posted")),
      ring_full_(stats_.counter("ring_full_waits", "posts that found their ring full")),
      bus_errors_(stats_.counter("bus_errors", "register accesses that failed")) {
  SC_THREAD(isr_thread);
  SC_THREAD(kthread);
}

// One 32-bit register access; the core stalls until it completes (uncached, strongly ordered).
void ToeDriver::reg_access(cpu::Core::Context& ctx, tlm::tlm_command cmd, std::uint64_t offset,
                           std::uint32_t& value) {
  tlm::tlm_generic_payload gp;
  gp.set_command(cmd);
  gp.set_address(params_.regs_addr + offset);
  gp.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
  gp.set_data_length(4);
  gp.set_streaming_width(4);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  bus_->b_transport(gp, delay);
  if (!gp.is_response_ok()) ++bus_errors_;
  core_.execute(ctx, costs_.doorbell + static_cast<double>(delay.value()) * core_.freq_hz() / 1e12,
                CycleClass::GuestKernel);
}

void ToeDriver::write_reg(cpu::Core::Context& ctx, std::uint64_t offset, std::uint32_t value) {
  reg_access(ctx, tlm::TLM_WRITE_COMMAND, offset, value);
}

std::uint32_t ToeDriver::read_reg(cpu::Core::Context& ctx, std::uint64_t offset) {
  std::uint32_t value = 0;
  reg_access(ctx, tlm::TLM_READ_COMMAND, offset, value);
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
    if (!irq.read()) sc_core::wait(irq.posedge_event());
    if (!started_) {
      sc_core::wait(irq.negedge_event());
      continue;
    }
    ++interrupts_;
    core_.execute(isr_ctx_, costs_.isr, CycleClass::GuestKernel);
    std::uint32_t taken = 0;
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
    if (taken) {
      completions_ += taken;
      core_.execute(isr_ctx_, costs_.ecq_entry * taken, CycleClass::GuestKernel);
      events_ev_.notify(sc_core::SC_ZERO_TIME);
    }
    // Handing the slots back acknowledges the interrupt (level: it stays up while entries wait).
    write_reg(isr_ctx_, ring_reg(Ring::Ecq, toe::reg::kRingHead), ecq.head);
    sc_core::wait(sc_core::SC_ZERO_TIME);  // let the TOE lower the line before looking again
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
