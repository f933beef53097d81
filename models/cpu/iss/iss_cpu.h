// The ISS's TLM-2.0 face: an ArmCore as a SystemC module.
//
//  - One initiator socket carries instruction fetches and data accesses. The core's PagedMemory is
//    the DMI cache: a b_transport response with the DMI hint makes the module ask for a DMI
//    pointer and lend the granted pages (read and write allowed, wholly inside the region) to the
//    core, which then reads and writes them directly; everything else goes through b_transport.
//    invalidate_direct_mem_ptr takes the pages back (and drops the instructions decoded from
//    them), so accesses fall back to b_transport until the target grants DMI again.
//  - Loosely timed: each retired instruction adds cpi[class] cycles of the clock period to a
//    tlm_quantumkeeper's local time; the thread syncs when the quantum is used up and (by default)
//    around every b_transport access. The core runs in batches that fit the rest of the quantum,
//    so the per-instruction cost stays the core's own.
//  - Exceptions and interrupts: irq/fiq inputs (the optional ports, or set_irq/set_fiq), taken at
//    instruction boundaries when CPSR.I/F allow; the core runs in system mode (ArmCore::
//    set_system_mode) for that, or in syscall emulation with a SupervisorCall handler.
//    An interrupt raised by another process is seen when the core next syncs (LT semantics:
//    the quantum bounds the latency). WFI sleeps until a line rises.
//  - Instructions retired by class: retired(), and counters in the module's statistics group.
//  - Optional level-1 caches (IssCpuParams::caches; cache.h, docs/caches.md): timing only, the
//    data stays in the DMI memory. A miss sends a line fill (and a dirty victim's write-back)
//    through the socket as a b_transport of a whole line, whose delay the core waits for; the
//    platform reports other masters' accesses with snoop().
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "models/core/module.h"
#include "models/cpu/iss/arm_core.h"
#include "models/cpu/iss/cache.h"
#include "models/cpu/iss/paged_memory.h"

namespace vtoe::cpu::iss {

struct IssCpuParams {
  sc_core::sc_time clock_period{1, sc_core::SC_NS};
  // Cycles per retired instruction, by InsnClass (a condition-failed instruction counts too).
  std::array<uint32_t, ArmCore::kClasses> cpi = filled(1);
  bool dmi = true;                 // ask for DMI pointers when a target offers them
  bool sync_on_bus_access = true;  // sync the quantum keeper around every b_transport
  // The generic timer's count: simulated time x this frequency (QEMU virt's 62.5 MHz).
  uint64_t timer_frequency_hz = 62'500'000;
  // Level-1 instruction and data caches (off: memory costs only the CPI).
  bool caches = false;
  CacheGeometry icache, dcache;
  // Which core of the platform this is: its bus accesses carry it (core::SidebandExtension's
  // `cpu`, what a GIC's banked registers decode by). 0 adds no extension.
  uint16_t cpu_index = 0;

  static std::array<uint32_t, ArmCore::kClasses> filled(uint32_t v) {
    std::array<uint32_t, ArmCore::kClasses> a{};
    a.fill(v);
    return a;
  }
};

class IssCpu : public core::Module {
 public:
  tlm_utils::simple_initiator_socket<IssCpu> socket;
  // Interrupt inputs; bind them to a signal (a GIC's outputs) or leave them and call set_irq.
  sc_core::sc_port<sc_core::sc_signal_in_if<bool>, 1, sc_core::SC_ZERO_OR_MORE_BOUND> irq_in;
  sc_core::sc_port<sc_core::sc_signal_in_if<bool>, 1, sc_core::SC_ZERO_OR_MORE_BOUND> fiq_in;

  SC_HAS_PROCESS(IssCpu);
  explicit IssCpu(const sc_core::sc_module_name& name, const IssCpuParams& p = {});
  ~IssCpu() override;

  // Set up the core (registers, PC, system mode, SVC handler) before the simulation starts; it
  // begins running at time 0. The memory holds only what DMI lends (and pages the set-up maps).
  ArmCore& core() { return core_; }
  PagedMemory& memory() { return mem_; }
  const IssCpuParams& params() const { return p_; }

  void set_irq(bool level);
  void set_fiq(bool level);
  // The GIC's virtual CPU interface lines (taken outside Hyp mode with HCR.IMO/FMO).
  void set_virq(bool level);
  void set_vfiq(bool level);
  // Called with the generic timer's output levels when one changes (the platform drives the
  // GIC's PPIs with them: 26 Hyp, 27 virtual, 30 physical). The core's count is simulated time
  // x params().timer_frequency_hz; a wake-up is scheduled at the next deadline, so that a timer
  // fires at its time whether the core runs, sleeps in WFI or waits.
  void set_timer_output_listener(std::function<void(TimerKind, bool)> f) {
    timer_output_ = std::move(f);
  }
  bool timer_level(TimerKind k) const { return timer_levels_[static_cast<int>(k)]; }
  // The generic timer's count at global simulated time `t`.
  uint64_t count_at(const sc_core::sc_time& t) const;
  // A debugger (GDB stub). stopped() is called from the core's thread before the first
  // instruction and whenever the core stops at one of its breakpoints (the core's own, set with
  // ArmCore::add_breakpoint; breakpoint_at() also catches one where a batch happens to end, which
  // the core's run() would skip as the first instruction of the next run). stopped() may step
  // the core (core().step()), read and write it, and block: the simulation waits with it. When
  // it returns the core runs on.
  class Debugger {
   public:
    virtual ~Debugger() = default;
    virtual void stopped(bool at_start) = 0;
    virtual bool breakpoint_at(uint32_t pc) const = 0;
    // Whether the debugger asks to stop the running core (GDB's Ctrl-C); polled every
    // kInterruptPollBatches batches, then stopped(false) follows.
    virtual bool interrupted() { return false; }
  };
  static constexpr uint32_t kInterruptPollBatches = 256;
  void set_debugger(Debugger* d) { debugger_ = d; }
  // A hypervisor that is a model (hypervisor/iss_hypervisor.h) instead of code in Hyp mode: the
  // core's entries to Hyp mode stop it (ArmCore::set_hyp_exits), and the thread calls
  // hyp_exit(), at the core's local time (synced), which does the handler's work, takes the
  // simulated time it costs (spend(), or waits for an event while no guest can run) and returns
  // to a guest with ArmCore::return_from_hyp.
  class HypervisorModel {
   public:
    virtual ~HypervisorModel() = default;
    virtual void hyp_exit() = 0;
  };
  void set_hypervisor_model(HypervisorModel* m) {
    hyp_model_ = m;
    core_.set_hyp_exits(m != nullptr);
  }
  // From hyp_exit(): `cycles` of the core's clock pass (counted in model_cycles()).
  void spend(uint64_t cycles);
  uint64_t model_cycles() const { return model_cycles_; }
  // From hyp_exit(): the model waited `t` with nothing to run (counted in idle_time()).
  void add_idle(const sc_core::sc_time& t) { idle_ += t; }
  // Notified when an interrupt line of the core rises or the timer needs a look (what ends a
  // WFI): a model with no guest to run waits for it.
  const sc_core::sc_event& wake_event() const { return wake_; }
  // The timer's registers were changed from outside the core's instructions (a model): its
  // outputs and deadline are looked at again.
  void timer_changed() { timer_event_.notify(sc_core::SC_ZERO_TIME); }
  // Installs another guest's state (a hypervisor model's vCPU switch): the input lines stay the
  // core's, the TLB and decoded code go, the timer's outputs and deadline are looked at again.
  void switch_state(const ArmState& s);
  // Stops the core after the instruction it is executing (from a target, a test, an SVC handler).
  void halt();
  // Power (PSCI): a core powered off runs nothing and sleeps until power_on(). start_off()
  // before the simulation (a secondary core at reset); power_off() from the core's own
  // instruction (CPU_OFF: it ends after that instruction); power_on() from anywhere, with the
  // core's state set up first (CPU_ON's entry point).
  void start_off() { off_ = true; }
  void power_off();
  void power_on();
  bool powered() const { return !off_; }
  // A bound on the run: it ends (done(), limit_reached()) after exactly `n` instructions retired
  // and exception entries together (ArmCore::exception_entries), so that neither a program nor
  // an exception loop runs past it. 0: no bound.
  void set_instruction_limit(uint64_t n) { limit_ = n; }
  bool limit_reached() const { return limit_reached_; }
  // The run ended with an exception storm (ArmCore throws ExceptionLoop; fault() says where).
  bool exception_loop() const { return exception_loop_; }
  // The registers before an instruction: r0-r15 of the current mode (r15 = its address) and the
  // CPSR.
  struct TraceRecord {
    uint32_t r[16];
    uint32_t cpsr;
  };
  // Called with the registers before every instruction the core runs or attempts (not before
  // an interrupt entry, nor for a fetch that faults: as qemu-system-arm -singlestep -d cpu logs
  // them), for the first `limit` of them: a register trace. While it observes, the core runs
  // one instruction at a time (slow); after, at full speed again.
  void set_instruction_observer(std::function<void(const TraceRecord&)> f, uint64_t limit) {
    observer_ = std::move(f);
    observe_left_ = limit;
  }
  // The instructions retired when the observer had seen its `limit` of them (0: not yet): a
  // trace that reached its bound says where.
  uint64_t observer_full_at() const { return observe_full_at_; }
  // A profile: the PC after every `interval` instructions retired (0: off), counted by address;
  // exact and deterministic (by instruction count, not by time). Turning it on or off clears it.
  void set_pc_sampling(uint64_t interval) {
    sample_interval_ = sample_left_ = interval;
    pc_samples_.clear();
  }
  const std::unordered_map<uint32_t, uint64_t>& pc_samples() const { return pc_samples_; }
  // The same, from the first instruction at virtual address `va` on (the core runs at full
  // speed before it; a breakpoint of its own finds it): a trace of a kernel from start_kernel.
  void set_instruction_observer_from(std::function<void(const TraceRecord&)> f, uint64_t limit,
                                     uint32_t va) {
    observer_ = std::move(f);
    observe_pending_ = limit;
    observe_at_ = va;
    core_.add_breakpoint(va);
  }
  // Snapshots of a whole platform (platform/system/snapshot.h): the architectural state, the
  // counters behind retired(), cycles(), idle_time() and the miss stalls, and the timer's output
  // levels; taken while the core sleeps in WFI with nothing pending (a quiescent point). Plain
  // data: a snapshot file is read only by the binary that wrote it.
  struct Saved {
    ArmState state;
    ArmCore::Statistics statistics;
    std::array<uint64_t, ArmCore::kClasses> accounted;
    uint64_t cycles, bus_accesses, dmi_grants, dmi_invalidations;
    uint64_t idle;  // idle_time() at the snapshot, in kernel time units
    uint64_t stall[2];
    std::array<bool, 3> timer_levels;
  };
  Saved save() const;
  // Sleeping in WFI (the thread waits for an interrupt line or the timer).
  bool sleeping() const { return asleep_; }
  // Brings what only caches state to the state a restored core starts in: the TLB and the
  // decoded code dropped, the caches' lines invalid (timing only: the data is in memory). At a
  // snapshot's point, so that the run that booted and every run restored from it go on alike.
  void settle();
  // Before the simulation starts: the thread waits, before its first instruction, for
  // restore(). A platform being restored replays to its devices what they saw up to the
  // snapshot (the core must not run meanwhile).
  void hold() { held_ = true; }
  // At the snapshot's time: installs `s`, takes the DMI pointer of the memory at
  // `dmi_address` (the RAM: the booted core had it), settles, looks at the timer's deadline
  // again, and lets the thread run (asleep in WFI, as the snapshot's core was).
  void restore(const Saved& s, uint32_t dmi_address);
  // The run ended (halt, or an error in syscall emulation); fault() says which error, if any.
  bool done() const { return done_; }
  const sc_core::sc_event& done_event() const { return done_event_; }
  const std::string& fault() const { return fault_; }

  uint64_t retired() const { return core_.retired(); }
  uint64_t retired(InsnClass c) const { return core_.retired(c); }
  uint64_t cycles() const { return cycles_; }
  // Cycles of the instructions retired in mode `m` (their classes' cpi).
  uint64_t cycles_in_mode(Mode m) const;
  // Simulated time the core has slept in WFI (up to now, a sleep in progress included).
  sc_core::sc_time idle_time() const;
  uint64_t bus_accesses() const { return bus_accesses_; }  // b_transport calls
  // The caches (null without IssCpuParams::caches).
  L1Caches* caches() { return l1_.get(); }
  const L1Caches* caches() const { return l1_.get(); }
  // Another bus master read or wrote [addr, addr + len) (the platform's DMA snoop).
  void snoop(uint64_t addr, uint64_t len, bool write) {
    if (l1_) l1_->snoop(addr, len, write);
  }
  // Simulated time the core waited for line fills and write-backs, in user mode and in all.
  sc_core::sc_time miss_stall() const {
    return sc_core::sc_time::from_value(stall_[0] + stall_[1]);
  }
  sc_core::sc_time miss_stall_user() const { return sc_core::sc_time::from_value(stall_[1]); }
  uint64_t dmi_grants() const { return dmi_grants_; }
  uint64_t dmi_invalidations() const { return dmi_invalidations_; }
  tlm_utils::tlm_quantumkeeper& quantum_keeper() { return qk_; }

 private:
  class Bus;
  class LineTransfer;

  void end_of_elaboration() override;
  void thread();
  uint64_t batch() const;  // instructions that fit in the rest of the quantum (at least 1)
  void account();          // retired instructions since the last call -> local time
  bool transport(tlm::tlm_command cmd, uint32_t addr, void* data, uint32_t len);
  void request_dmi(uint32_t addr);
  // A whole cache line to or from memory (LineTransfer); its delay is the core's.
  void line_transfer(tlm::tlm_command cmd, uint32_t pa, uint32_t len);
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end);
  void timer_method();  // outputs at the current time, and the wake-up for the next deadline

  IssCpuParams p_;
  PagedMemory mem_;
  ArmCore core_;
  std::unique_ptr<Bus> bus_;
  std::unique_ptr<LineTransfer> line_bus_;
  std::unique_ptr<L1Caches> l1_;
  tlm::tlm_generic_payload line_trans_;
  std::vector<uint8_t> line_buf_;
  uint64_t stall_[2] = {};  // kernel resolution units: not user, user
  Debugger* debugger_ = nullptr;
  uint32_t debug_polls_ = 0;  // batches run with a debugger (Debugger::interrupted)
  tlm_utils::tlm_quantumkeeper qk_;
  tlm::tlm_generic_payload trans_;
  sc_core::sc_event wake_, done_event_, timer_event_;
  HypervisorModel* hyp_model_ = nullptr;
  uint64_t model_cycles_ = 0;
  std::function<void(TimerKind, bool)> timer_output_;
  std::array<bool, 3> timer_levels_ = {};
  bool done_ = false;
  std::string fault_;
  std::function<void(const TraceRecord&)> observer_;
  uint64_t observe_left_ = 0;
  uint64_t observe_pending_ = 0;  // observe_left_ once the core reaches observe_at_
  uint64_t observe_full_at_ = 0;  // retired() when observe_left_ reached 0
  uint32_t observe_at_ = 0;
  uint64_t limit_ = 0;
  bool limit_reached_ = false, exception_loop_ = false;
  uint32_t min_cpi_ = 1;
  std::array<uint64_t, ArmCore::kClasses> accounted_ = {};
  std::vector<bool> dmi_refused_;  // pages where the DMI offer did not help (until invalidated)
  std::array<core::Counter*, ArmCore::kClasses> retired_stats_ = {};
  core::Counter* cycles_stat_ = nullptr;
  uint64_t cycles_ = 0, bus_accesses_ = 0, dmi_grants_ = 0, dmi_invalidations_ = 0;
  sc_core::sc_time idle_, asleep_since_;
  uint64_t sample_interval_ = 0, sample_left_ = 0;
  std::unordered_map<uint32_t, uint64_t> pc_samples_;
  bool asleep_ = false;
  bool held_ = false;
  bool off_ = false;
  sc_core::sc_event released_;
};

}  // namespace vtoe::cpu::iss
