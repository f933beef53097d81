#include "guest/toe_driver.h"

#include <array>
#include <cstring>
#include <vector>

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
      rings_(params.ring_entries),
      interrupts_(stats_.counter("interrupts", "TOE interrupts handled")),
      completions_(stats_.counter("completions", "ECQ entries consumed")),
      posted_(stats_.counter("contexts_posted", "CmdQ/SendQ/RecvQ contexts posted")),
      ring_full_(stats_.counter("ring_full_waits", "posts that found their ring full")) {
  if (params.polled)
    polls_ = &stats_.counter("polls", "user-space channel: looks at the ECQ (workload.path user)");
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

// The ring driver reaches the channel through this guest's register port (each access charged to
// `ctx`) and its memory.
class ToeDriver::RingAccess : public toe::HostRingDriver::Access {
 public:
  RingAccess(ToeDriver& d, cpu::Core::Context& ctx) : d_(d), ctx_(ctx) {}
  void write_reg(std::uint64_t offset, std::uint32_t value) override {
    d_.write_reg(ctx_, offset, value);
  }
  std::uint32_t read_reg(std::uint64_t offset) override { return d_.read_reg(ctx_, offset); }
  // Descriptor reads miss the cache (the TOE wrote them); writes are posted.
  void read_mem(std::uint64_t addr, void* dst, std::size_t len) override {
    if (cpu::MemoryTraffic* t = d_.mem_.traffic())
      t->work(ctx_, 0, CycleClass::GuestKernel, false, d_.mem_.physical(addr), len);
    d_.mem_.read(addr, dst, len);
  }
  void write_mem(std::uint64_t addr, const void* src, std::size_t len) override {
    d_.mem_.write(addr, src, len);
    if (cpu::MemoryTraffic* t = d_.mem_.traffic())
      t->work(ctx_, 0, CycleClass::GuestKernel, true, d_.mem_.physical(addr), len, false);
  }
  void wait_for_space() override {
    ++d_.ring_full_;
    if (d_.params_.polled) {
      // Nobody else drains a polled channel's ECQ (the TOE may wait for room there before it
      // takes more contexts): one turn of the poll loop, then look at the head again.
      d_.core_.execute(ctx_, d_.costs_.poll, CycleClass::GuestUser);
      d_.drain(ctx_, *this);
      return;
    }
    sc_core::wait(d_.ring_space_ev_);
  }
  void posted() override { ++d_.posted_; }

 private:
  ToeDriver& d_;
  cpu::Core::Context& ctx_;
};

void ToeDriver::lock_rings() {
  if (!ring_locked_) {
    ring_locked_ = true;
    return;
  }
  sc_core::sc_event handed_over;  // notified by the holder, who leaves the lock taken for us
  ring_lock_queue_.push_back(&handed_over);
  sc_core::wait(handed_over);
}

void ToeDriver::unlock_rings() {
  if (ring_lock_queue_.empty()) {
    ring_locked_ = false;
    return;
  }
  sc_core::sc_event* next = ring_lock_queue_.front();
  ring_lock_queue_.pop_front();
  next->notify(sc_core::SC_ZERO_TIME);
}

void ToeDriver::start(cpu::Core::Context& ctx) {
  if (rings_.started()) return;
  lock_rings();
  if (!rings_.started()) {  // another process may have brought them up while this one waited
    std::array<std::uint64_t, toe::kRings> addr{};
    for (auto& a : addr)
      a = mem_.allocate(static_cast<std::uint64_t>(params_.ring_entries) * toe::kDescBytes, 4096);
    RingAccess access(*this, ctx);
    rings_.start(access, addr);
    // A polled channel runs with its interrupt disabled: completions wait in the ECQ.
    if (params_.polled) write_reg(ctx, toe::reg::kCtrl, toe::reg::kCtrlEnable);
  }
  unlock_rings();
}

void ToeDriver::post(cpu::Core::Context& ctx, Ring ring, const void* desc, cpu::Core::Work before) {
  core_.execute(ctx, before, costs_.post_context, CycleClass::GuestKernel);
  post_spent(ctx, ring, desc);
}

void ToeDriver::post_spent(cpu::Core::Context& ctx, Ring ring, const void* desc) {
  lock_rings();
  RingAccess access(*this, ctx);
  rings_.post(access, ring, desc);
  unlock_rings();
}

std::uint32_t ToeDriver::poll(cpu::Core::Context& ctx) {
  if (!rings_.started()) return 0;
  lock_rings();
  RingAccess access(*this, ctx);
  const std::uint32_t n = drain(ctx, access);
  unlock_rings();
  return n;
}

// The rings' lock is held (deliveries post nothing).
std::uint32_t ToeDriver::drain(cpu::Core::Context& ctx, toe::HostRingDriver::Access& access) {
  if (polls_) ++*polls_;
  std::vector<toe::EcqDesc> taken;
  toe::EcqDesc d;
  while (rings_.next_completion(access, d)) taken.push_back(d);
  if (!taken.empty()) rings_.release_completions(access);
  if (taken.empty()) return 0;
  completions_ += taken.size();
  core_.execute(ctx, costs_.ecq_entry * static_cast<double>(taken.size()), CycleClass::GuestUser);
  ring_space_ev_.notify(sc_core::SC_ZERO_TIME);
  for (const toe::EcqDesc& e : taken)
    if (deliver_) deliver_(e);
  return static_cast<std::uint32_t>(taken.size());
}

void ToeDriver::isr_thread() {
  RingAccess access(*this, isr_ctx_);
  for (;;) {
    while (!irq_.pending()) sc_core::wait(irq_.pending_event());
    // Interrupt entry; under a hypervisor this waits until the VM's vCPU is on the core. The
    // handler goes on at once (acknowledge, ECQ reads) to its next request.
    core_.then_more(isr_ctx_);
    core_.execute(isr_ctx_, costs_.isr, CycleClass::GuestKernel);
    const int id = irq_.acknowledge();
    if (id == 1023) continue;  // spurious: taken by an earlier pass
    ++interrupts_;
    std::uint32_t taken = 0;
    if (rings_.started()) {
      toe::EcqDesc d;
      while (rings_.next_completion(access, d)) {
        events_.push_back(d);
        ++taken;
      }
    }
    if (taken) {
      completions_ += taken;
      core_.then_more(isr_ctx_);  // the ECQ head register's write follows
      core_.execute(isr_ctx_, costs_.ecq_entry * taken, CycleClass::GuestKernel);
      events_ev_.notify(sc_core::SC_ZERO_TIME);
    }
    // Handing the slots back lowers the TOE's level interrupt; then end the interrupt.
    if (rings_.started()) rings_.release_completions(access);
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
