// The guest's TOE driver (paper §2.2): owns the four rings of its control channel in guest
// memory, posts contexts and rings doorbells, and handles the TOE interrupt in two halves: an
// interrupt service routine that drains the ECQ, and a kernel thread that delivers each
// completion to its socket. Every step is charged to the core as guest kernel cycles.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <systemc>

#include "guest/costs.h"
#include "guest/guest_memory.h"
#include "models/core/module.h"
#include "models/cpu/core.h"
#include "models/cpu/hardware_ports.h"
#include "models/toe/descriptors.h"
#include "models/toe/host_ring_driver.h"

namespace vtoe::guest {

struct DriverParams {
  std::uint64_t regs_addr = 0;       // guest-physical address of the control channel's registers
  std::uint32_t ring_entries = 256;  // per ring, power of two
  // The channel raises no interrupt: its user polls the ECQ (poll()), the user-space channel.
  bool polled = false;
};

class ToeDriver : public core::Module {
 public:
  SC_HAS_PROCESS(ToeDriver);
  ToeDriver(const sc_core::sc_module_name& name, cpu::Core& core, int owner, GuestMemory& mem,
            const GuestCosts& costs, const DriverParams& params, cpu::RegisterPort& regs,
            cpu::InterruptPort& irq);

  // Allocates the rings and programs the channel. Call once from a thread before any post.
  void start(cpu::Core::Context& ctx);
  // Post one context on behalf of `ctx` (waits while the ring is full). `before`: the caller's
  // work just before it (a copy into the buffer the context covers), run with the post's own
  // cost as one request.
  void post(cpu::Core::Context& ctx, toe::Ring ring, const void* desc, cpu::Core::Work before = {});
  // The post's own cycles, and a post whose caller has spent them already (in a request of its
  // own that ran through to here).
  double post_cycles() const { return costs_.post_context; }
  void post_spent(cpu::Core::Context& ctx, toe::Ring ring, const void* desc);
  // Polled channel: drains the ECQ on behalf of `ctx` and delivers each completion at once (no
  // interrupt, no kernel thread); returns how many it took.
  std::uint32_t poll(cpu::Core::Context& ctx);
  // Where completions go (called in the kernel thread, after its per-event cost).
  void on_completion(std::function<void(const toe::EcqDesc&)> cb) { deliver_ = std::move(cb); }

  // Register access (offset in the channel page) on behalf of `ctx`, through the register port.
  void write_reg(cpu::Core::Context& ctx, std::uint64_t offset, std::uint32_t value);
  std::uint32_t read_reg(cpu::Core::Context& ctx, std::uint64_t offset);

  std::uint64_t interrupts() const { return interrupts_.value(); }
  cpu::Core::Context& kthread_context() { return kthread_ctx_; }

 private:
  class RingAccess;  // the ring driver's view of this guest: register port, memory, costs
  // Processes on several cores (or vCPUs) post at once: bringing the rings up and each post with
  // its doorbell are one critical section, as a kernel's spin lock would make them (waiting for
  // it costs no cycles here). Uncontended it takes no simulated time.
  void lock_rings();
  void unlock_rings();
  // Polled channel: takes the ECQ's completions and delivers them (the rings' lock held).
  std::uint32_t drain(cpu::Core::Context& ctx, toe::HostRingDriver::Access& access);
  void isr_thread();
  void kthread();

  cpu::Core& core_;
  GuestMemory& mem_;
  GuestCosts costs_;
  DriverParams params_;
  cpu::RegisterPort& regs_;
  cpu::InterruptPort& irq_;
  cpu::Core::Context& isr_ctx_;
  cpu::Core::Context& kthread_ctx_;
  toe::HostRingDriver rings_;
  std::deque<toe::EcqDesc> events_;
  std::function<void(const toe::EcqDesc&)> deliver_;
  sc_core::sc_event events_ev_;
  sc_core::sc_event ring_space_ev_;
  bool ring_locked_ = false;
  // Processes waiting for the rings' lock, first come first served: the holder hands the lock to
  // the first (waking all of them to race for it cost N thread switches per hand-over, N^2 with
  // thousands of server processes).
  std::deque<sc_core::sc_event*> ring_lock_queue_;
  core::Counter& interrupts_;
  core::Counter& completions_;
  core::Counter& posted_;
  core::Counter& ring_full_;
  core::Counter* polls_ = nullptr;  // registered only on a polled channel
};

}  // namespace vtoe::guest
