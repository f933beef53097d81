// An ARMv7-A core: A32 and T32 states with interworking, VFPv3-D16, and a decoded-instruction
// cache (each address is decoded once; a write to a code page drops that page's decoded
// instructions).
//
// The core is plain C++ (no SystemC): it runs instructions against a PagedMemory. Two ways to run:
//  - syscall emulation (the default): user mode; SVC goes to a SupervisorCall handler (Linux
//    system-call emulation, or a test); undefined instructions and faults are thrown.
//  - system mode (set_system_mode, reset_system): the processor modes with their banked registers
//    (USR, FIQ, IRQ, SVC, ABT, UND, SYS and, with the Virtualization Extensions, HYP), SPSRs, and
//    exceptions taken to the vectors as ARMv7-A takes them: SVC, undefined instruction, prefetch
//    and data abort, IRQ and FIQ (inputs set_irq/set_fiq, taken at instruction boundaries when
//    CPSR.I/F allow), and to Hyp mode (HVBAR) for HVC, the Hyp traps and routed interrupts.
//
// The core is split along the architecture's seams: its architectural state is one ArmState
// (arm_state.h: what a snapshot copies, what another core does not share); the MMU (mmu.h: table
// walker and TLB), CP15 (cp15.h: the register table and its access checks and traps) and
// exception entry (exception_entry.h) are objects of their own that work on that state. The
// core keeps the executor, the decoded-instruction cache and the run loop.
// Retired instructions are counted by class, so that timing models can sit behind it.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/cpu/iss/arm_state.h"
#include "models/cpu/iss/cache.h"
#include "models/cpu/iss/cp15.h"
#include "models/cpu/iss/exception_entry.h"
#include "models/cpu/iss/generic_timer.h"
#include "models/cpu/iss/insn.h"
#include "models/cpu/iss/mmu.h"
#include "models/cpu/iss/paged_memory.h"

namespace vtoe::cpu::iss {

class Cluster;

// An encoding the core does not implement (the architectural Undefined Instruction exception).
class UndefinedInstruction : public std::runtime_error {
 public:
  UndefinedInstruction(uint32_t addr, uint32_t raw, bool thumb, uint8_t len);
  uint32_t addr;
  uint32_t raw;
  bool thumb;
};

// An unaligned address for an instruction that requires alignment (LDRD/STRD, LDM/STM,
// LDREX/STREX, VFP loads and stores): the architecture's alignment fault (SIGBUS on Linux).
// Ordinary LDR/STR/LDRH/STRH may be unaligned (SCTLR.A = 0, as Linux runs user code).
class AlignmentFault : public std::runtime_error {
 public:
  AlignmentFault(uint32_t addr, uint32_t size, bool write = false);
  uint32_t addr;
  bool write;
};

class ArmCore;

// Bit NZCV of kCondPass[cond]: whether condition `cond` holds for those flags (a table: the
// switch it replaces was an unpredictable indirect jump, and the compiler did not inline it).
constexpr std::array<uint16_t, 16> cond_table() {
  std::array<uint16_t, 16> t{};
  for (uint32_t cond = 0; cond < 16; ++cond) {
    for (uint32_t f = 0; f < 16; ++f) {
      const bool n = f & 8, z = f & 4, c = f & 2, v = f & 1;
      // EQ, CS, MI, VS, HI, GE, GT, AL; odd conditions are their negations (but 15: always).
      const bool holds[8] = {z, c, n, v, c && !z, n == v, !z && n == v, true};
      bool r = holds[cond >> 1];
      if ((cond & 1) && cond != 15) r = !r;
      if (r) t[cond] = static_cast<uint16_t>(t[cond] | (1u << f));
    }
  }
  return t;
}
constexpr std::array<uint16_t, 16> kCondPass = cond_table();

// Firmware behind SMC (there is no Monitor mode: QEMU answers PSCI there too) and behind HVC
// when the core has no Hyp mode (reset_system(false)). Returns false: the instruction is
// undefined. The call reads and writes the core's registers (r0-r3 for PSCI).
class FirmwareCall {
 public:
  virtual ~FirmwareCall() = default;
  virtual bool smc(ArmCore& core) = 0;
  virtual bool hvc(ArmCore& core) = 0;
};

// Receives SVC instructions (the core has no operating system of its own).
class SupervisorCall {
 public:
  virtual ~SupervisorCall() = default;
  virtual void svc(ArmCore& core, uint32_t imm) = 0;
};

class ArmCore {
  // The core's parts that work on its state (see arm_state.h).
  friend class Cp15;
  friend class ExceptionEntry;
  friend class Cluster;

 public:
  static constexpr int kClasses = static_cast<int>(InsnClass::Count);
  // Retired instructions are counted in kRetiredBanks counters per class (see retired_).
  static constexpr int kRetiredBanks = 4;
  // Why Hyp mode was entered from another mode: the HSR exception class (0-63), or an
  // interrupt taken to Hyp mode.
  static constexpr int kHypCauseIrq = 64, kHypCauseFiq = 65, kHypCauses = 66;

  explicit ArmCore(PagedMemory& mem);
  ~ArmCore();
  ArmCore(const ArmCore&) = delete;
  ArmCore& operator=(const ArmCore&) = delete;

  PagedMemory& memory() { return mem_; }
  void set_svc_handler(SupervisorCall* h) { svc_ = h; }

  uint32_t reg(int n) const { return n == 15 ? st_.pc : st_.r[n]; }
  void set_reg(int n, uint32_t v);
  // Address of the next instruction; bit 0 of `addr` selects Thumb state.
  void set_pc(uint32_t addr);
  uint32_t pc() const { return st_.pc; }
  bool thumb() const { return st_.thumb; }
  // The whole CPSR: N Z C V Q, IT, GE, E, A I F, T, mode.
  uint32_t cpsr() const;
  // Writes every CPSR field (mode switch included): for set-up and tests.
  void set_cpsr(uint32_t v) { write_cpsr(v, 0xffffffffu); }
  void set_nzcv(uint32_t bits31_28);
  Mode mode() const { return static_cast<Mode>(st_.mode); }
  // SPSR of the current mode (0 in USR and SYS, which have none), and of a given mode.
  uint32_t spsr() const { return st_.spsr[bank_of(st_.mode)]; }
  uint32_t spsr(Mode m) const { return st_.spsr[bank_of(static_cast<uint8_t>(m))]; }
  // Register n (r8-r14 are banked) as mode `m` sees it, whichever mode is current.
  uint32_t banked_reg(Mode m, int n) const;

  // System mode (see the top of this file). Entering it resets the core as the hardware does:
  // SVC mode, A I F masked, ARM state, SCTLR.V = 0, VBAR = 0; the PC is left to set_pc.
  void set_system_mode(bool on);
  bool system_mode() const { return st_.system; }
  // System mode as a Cortex-A15 resets (non-secure state only): with `hyp`, the Virtualization
  // Extensions exist and the core starts in Hyp mode (QEMU's virtualization=on); without, it
  // starts in SVC and HVC goes to the firmware. MMU off, A I F masked, every CP15 register at
  // its reset value; the PC is left to set_pc.
  void reset_system(bool hyp);
  bool has_hyp() const { return st_.has_hyp; }
  void set_firmware(FirmwareCall* f) { firmware_ = f; }
  // One core of a cluster (cluster.h): its index there (the global monitor's slot), and the
  // broadcasts of TLB maintenance and decoded code. Null (the default): a uniprocessor.
  void set_cluster(Cluster* c, int index) {
    cluster_ = c;
    cluster_index_ = index;
  }
  Cluster* cluster() const { return cluster_; }
  // MPIDR (and VMPIDR's reset value): 0x80000000 | the core's Aff0, as QEMU virt numbers them.
  void set_mpidr(uint32_t v) { st_.mpidr = v; }
  uint32_t mpidr() const { return st_.mpidr; }
  // Ends run() after the instruction being executed, the core's state intact (WFE with more
  // than one core, a core powering itself off); take_yield() says it happened, once.
  void request_yield() {
    yield_ = true;
    attention_ = true;
  }
  bool take_yield() {
    const bool y = yielded_;
    yielded_ = false;
    return y;
  }
  // Virtual interrupt lines from the GIC's virtual CPU interface. A pending virtual interrupt is
  // taken (to IRQ/FIQ mode) only outside Hyp mode with HCR.IMO/FMO set; HCR.VI/VF assert them too.
  void set_virq(bool level) {
    st_.virq = level;
    if (level) st_.wfi = false;
    update_attention();
  }
  void set_vfiq(bool level) {
    st_.vfiq = level;
    if (level) st_.wfi = false;
    update_attention();
  }
  // The generic timer (its registers are CP15; see generic_timer.h). The count is
  // `source()` (the SystemC wrapper: simulated time x CNTFRQ); without a source it is the number
  // of instructions retired. The listener is called when an output level may have changed.
  void set_counter_source(std::function<uint64_t()> source) { counter_ = std::move(source); }
  void set_timer_listener(std::function<void()> listener) { timer_listener_ = std::move(listener); }
  bool timer_output(TimerKind k) const { return st_.timer.output(k, counter()); }
  // The physical count at which the next output rises (none: nothing armed).
  std::optional<uint64_t> next_timer_deadline() const { return st_.timer.next_deadline(counter()); }
  GenericTimer& timer() { return st_.timer; }
  // The PMU (pmu.h): its cycle counter counts `source()` (the SystemC wrapper: the core's
  // cycles; without a source, instructions retired). The listener is called with the overflow
  // interrupt's level when it changes (the platform drives PPI 23 with it).
  void set_cycle_source(std::function<uint64_t()> source) { cycles_ = std::move(source); }
  void set_pmu_listener(std::function<void(bool)> listener) { pmu_listener_ = std::move(listener); }
  // Brings the PMU's counters up to date (overflows included) and reports the interrupt's level;
  // the wrapper calls it at each quantum's end, so an overflow is seen within a quantum.
  bool pmu_poll();
  Pmu& pmu() { return st_.pmu; }
  // What the PMU counts from now (the cycle source, instructions retired, the mode).
  Pmu::Context pmu_context() const {
    return {cycles_ ? cycles_() : retired(),
            retired(),
            st_.mode == static_cast<uint8_t>(Mode::Usr),
            st_.mode == kHyp,
            st_.has_hyp,
            st_.cp15.hdcr};
  }
  // After a PMU register access: the interrupt's level to the listener when it changed.
  void pmu_changed() {
    const bool level = st_.pmu.irq();
    if (level == pmu_level_) return;
    pmu_level_ = level;
    if (pmu_listener_) pmu_listener_(level);
  }

  // The architectural state (registers of every mode, CP15, VFP, timer registers), for
  // snapshots, debuggers and tests. restore_state() installs a saved one: the TLB and the
  // decoded-code map are looked up again, pending interrupts re-evaluated. Memory is not part
  // of it: a snapshot restores its pages itself, and drops the code decoded from pages whose
  // contents it changed behind the core's back (invalidate_decoded).
  const ArmState& state() const { return st_; }
  void restore_state(const ArmState& s);
  // The counters a snapshot carries beside the state, so that totals go on across it: retired
  // instructions by class, by mode and by class in mode, and exception entries. Plain data.
  struct Statistics {
    std::array<uint64_t, kClasses * kRetiredBanks> retired;
    uint64_t mode_retired[32];
    uint64_t mode_start;
    uint64_t mode_class_retired[32][kClasses];
    uint64_t mode_class_start[kClasses];
    ExceptionEntry::Counts exceptions;
    uint64_t irqs_handled;
    uint64_t irq_retired[kClasses];
    uint64_t hyp_handled[kHypCauses];
    uint64_t hyp_retired[kHypCauses][kClasses];
  };
  Statistics statistics() const;
  void restore_statistics(const Statistics& s);

  // Hyp mode's own registers, for the platform and tests.
  uint32_t elr_hyp() const { return st_.elr_hyp; }
  uint32_t hsr() const { return st_.cp15.hsr; }
  uint32_t hcr() const { return st_.cp15.hcr; }
  uint32_t hvbar() const { return st_.cp15.hvbar; }
  uint32_t hdfar() const { return st_.cp15.hdfar; }
  uint32_t hifar() const { return st_.cp15.hifar; }
  uint32_t hpfar() const { return st_.cp15.hpfar; }
  uint32_t dfsr() const { return st_.cp15.dfsr; }
  uint32_t dfar() const { return st_.cp15.dfar; }
  uint32_t ifsr() const { return st_.cp15.ifsr; }
  uint32_t ifar() const { return st_.cp15.ifar; }
  // A CP15 register by its MRC/MCR coordinates, as the current mode would read it but without
  // access checks, traps or side effects (debuggers, tests); nullopt: not implemented.
  std::optional<uint32_t> cp15(uint32_t crn, uint32_t opc1, uint32_t crm, uint32_t opc2) {
    return cp15_.read(crn, opc1, crm, opc2);
  }
  std::optional<uint64_t> cp15_64(uint32_t opc1, uint32_t crm) { return cp15_.read64(opc1, crm); }
  // Writes one as MCR/MCRR would (side effects included: TLB flushes, timer listener), without
  // access checks or traps. False: not implemented or not writable.
  bool set_cp15(uint32_t crn, uint32_t opc1, uint32_t crm, uint32_t opc2, uint32_t v) {
    return cp15_.write(crn, opc1, crm, opc2, v);
  }
  bool set_cp15_64(uint32_t opc1, uint32_t crm, uint64_t v) { return cp15_.write64(opc1, crm, v); }
  // The CP15 registers the core implements, as "name crn opc1 crm opc2" (coverage listing).
  static std::vector<std::string> cp15_register_names() { return Cp15::register_names(); }

  // Debug access for a GDB stub: translated with the current regime, no fault taken, no fault
  // register changed. False: something in the range is not mapped.
  bool debug_read(uint32_t va, void* dst, uint32_t len);
  bool debug_write(uint32_t va, const void* src, uint32_t len);
  // run() stops before an instruction at a breakpoint (not the first one of a run, so that a
  // run resumes from the breakpoint it stopped at).
  void add_breakpoint(uint32_t va);
  void remove_breakpoint(uint32_t va);
  bool at_breakpoint() const { return bp_hit_; }

  // Interrupt handling (statistics): from an IRQ's entry (physical or virtual, to a PL1 mode)
  // to the exception return that goes back to the interrupted instruction in its mode, or to
  // any return to User mode (a task switched in on the way out counts its switch): the vector,
  // the handler and what its exit runs (Linux's softirqs). Not the returns inside (Linux's
  // vector stub enters SVC mode by one). How many such spans ended, and the instructions they
  // retired by class.
  uint64_t irqs_handled() const { return irqs_handled_; }
  uint64_t irq_handler_retired(InsnClass c) const { return irq_retired_[static_cast<int>(c)]; }
  // A hypervisor's handling (statistics): from an entry to Hyp mode from another mode to the
  // exception return that leaves Hyp mode (an exception taken inside belongs to the first), by
  // cause (kHypCause*: the HSR class, or an interrupt): how many such spans ended, and the
  // instructions they retired by class. What a trap costs the hypervisor that runs here.
  uint64_t hyp_handled(int cause) const { return hyp_handled_[cause]; }
  uint64_t hyp_handling_retired(int cause, InsnClass c) const {
    return hyp_retired_[cause][static_cast<int>(c)];
  }
  // Retired instructions by the mode they ran in (statistics).
  uint64_t retired_in_mode(Mode m) const;
  // Instructions of class `c` retired in mode `m` (cycles by mode: IssCpu::cycles_in_mode).
  uint64_t retired_in_mode(Mode m, InsnClass c) const;
  // Exceptions taken to Hyp mode by HSR exception class (IRQ and FIQ have none: hyp_interrupts).
  uint64_t hyp_entries(uint8_t ec) const { return exc_.hyp_entries(ec); }
  uint64_t hyp_interrupts(Exception e) const { return exc_.hyp_interrupts(e); }
  // Interrupt inputs (levels). Taken at the next instruction boundary when unmasked; either one
  // also ends a WFI, masked or not.
  void set_irq(bool level) {
    st_.irq = level;
    if (level) st_.wfi = false;
    update_attention();
  }
  void set_fiq(bool level) {
    st_.fiq = level;
    if (level) st_.wfi = false;
    update_attention();
  }
  bool irq() const { return st_.irq; }
  bool fiq() const { return st_.fiq; }
  // WFI (or WFE) in system mode with no interrupt asserted: run() returns and the core stays
  // asleep until set_irq/set_fiq raise a line.
  bool waiting_for_interrupt() const { return st_.wfi; }
  uint64_t exceptions(Exception e) const { return exc_.taken(e); }
  // Every exception entry (PL1 and Hyp, synchronous and interrupts); with retired(), what a
  // run's bound counts.
  uint64_t exception_entries() const { return exc_.entries(); }
  // Prefetch aborts on an instruction fetch (a step that ran no instruction at all).
  uint64_t fetch_faults() const { return exc_.fetch_faults(); }
  // The last synchronous exception (kind, faulting instruction and mode, vector, repeats); "" if
  // none.
  std::string last_exception() const { return exc_.last_fault(); }
  uint32_t sctlr() const { return st_.cp15.sctlr; }
  uint32_t vbar() const { return st_.cp15.vbar; }
  void set_vbar(uint32_t v) { st_.cp15.vbar = v & ~31u; }
  // Drops the decoded instructions of [addr, addr + len): code changed behind the core's back
  // (another bus master, a DMI region that went away).
  void invalidate_decoded(uint32_t addr, uint32_t len);
  uint32_t tls() const { return st_.tls; }
  void set_tls(uint32_t v) { st_.tls = v; }
  uint32_t sreg(int n) const { return st_.s[n]; }
  void set_sreg(int n, uint32_t v) { st_.s[n] = v; }
  uint64_t dreg(int n) const { return st_.s[2 * n] | (uint64_t{st_.s[2 * n + 1]} << 32); }
  void set_dreg(int n, uint64_t v);
  uint32_t fpscr() const;
  void set_fpscr(uint32_t v);

  // For code that runs inside run() but is not the guest's (a bus transaction, a SystemC wait):
  // the host's floating-point environment while it lives, the guest's again after.
  class HostFpScope {
   public:
    explicit HostFpScope(ArmCore& c) : c_(c), active_(c.in_guest_fp_) {
      if (active_) c_.leave_guest_fp();
    }
    ~HostFpScope() {
      if (active_) c_.enter_guest_fp();
    }
    HostFpScope(const HostFpScope&) = delete;
    HostFpScope& operator=(const HostFpScope&) = delete;

   private:
    ArmCore& c_;
    bool active_;
  };

  // Runs until halt(), WFI, a breakpoint or `max` instructions retired and exception entries
  // (each entry uses one, so that a handler that faults at once cannot keep it going); returns
  // how many instructions retired. Throws ExceptionLoop (exception_entry.h) on a storm of
  // entries with no progress.
  uint64_t run(uint64_t max = ~uint64_t{0});
  // One instruction, or one exception entry (run() is the fast way to execute many). Nothing
  // when halted or asleep.
  void step();
  // Whether step() would now run (or attempt, if it faults) the instruction at the PC: not
  // halted, not asleep, no interrupt to take first (a register trace logs these, but for one
  // whose fetch faults: fetch_faults()).
  bool instruction_next() const {
    return !halted_ && !hyp_exit_ && !st_.wfi && !interrupt_takeable();
  }
  void halt() {
    halted_ = true;
    attention_ = true;
  }
  bool halted() const { return halted_; }

  // A hypervisor that is a model, not code (hypervisor/iss_hypervisor.h): with hyp exits on, an
  // exception that enters Hyp mode from another mode (a trap with its HSR, a physical IRQ or
  // FIQ routed there by HCR) completes its entry as the architecture has it (HSR, HDFAR, HPFAR,
  // ELR_hyp, SPSR_hyp) and then stops run() before the first instruction at HVBAR:
  // hyp_exit_pending() holds until return_from_hyp(), which the model calls when it has done
  // the handler's work, to return to the mode in SPSR_hyp at `target` as ERET does.
  void set_hyp_exits(bool on) { hyp_exits_ = on; }
  bool hyp_exits() const { return hyp_exits_; }
  bool hyp_exit_pending() const { return hyp_exit_; }
  void return_from_hyp(uint32_t target);

  uint64_t retired() const;
  uint64_t retired(InsnClass c) const {
    uint64_t n = 0;
    for (int b = 0; b < kRetiredBanks; ++b) n += retired_[static_cast<int>(c) * kRetiredBanks + b];
    return n;
  }
  uint64_t decoded() const { return decoded_; }
  // Software TLB statistics (system mode with translation on).
  uint64_t tlb_misses() const { return mmu_.misses(); }
  uint64_t tlb_flushes() const { return mmu_.flushes(); }
  // Whether the current regime translates addresses (SCTLR.M, HSCTLR.M in Hyp mode, HCR.VM).
  bool translation_on() const { return mmu_.on(); }
  // Level-1 caches (timing only, cache.h; null: none, the default). Data accesses are looked up
  // while the MMU is on and SCTLR.C (HSCTLR.C in Hyp mode) is set: with the MMU off data
  // accesses are Strongly-ordered, uncached. Instruction fetches are looked up with SCTLR.I.
  // CP15's maintenance operations act on them, and CCSIDR reports their geometry.
  void set_caches(L1Caches* c) {
    l1_ = c;
    drop_all_decoded();  // the load/store executors depend on it (executor_for)
  }
  L1Caches* caches() const { return l1_; }

  // Loads and stores of guest code by virtual address: the MMU's when it is on (system mode),
  // else straight to PagedMemory (syscall emulation, MMU off: the fast path).
  // With the MMU on, a software-TLB hit on a page of host memory is served here (the current
  // privilege's FastTlbEntry); everything else (a miss, a permission to check, a device, a page
  // crossing) goes to mmu_read/mmu_write.
  template <typename T>
  T rd(uint32_t a) {
    if (__builtin_expect(mmu_.on(), 0)) {
      const Mmu::FastTlbEntry& e = mmu_.fast(a >> PagedMemory::kPageBits);
      const uint32_t off = a & (PagedMemory::kPageSize - 1);
      if (__builtin_expect(e.read_va == (a >> PagedMemory::kPageBits) &&
                               off <= PagedMemory::kPageSize - sizeof(T),
                           1)) {
        T v;
        std::memcpy(&v, e.host + off, sizeof(T));
        if (__builtin_expect(dhook_ != nullptr, 0)) dhook_->data(e.host + off, sizeof(T), false);
        return v;
      }
      return mmu_.read<T>(a);
    }
    if constexpr (sizeof(T) == 1)
      return mem_.read8(a);
    else if constexpr (sizeof(T) == 2)
      return mem_.read16(a);
    else
      return mem_.read32(a);
  }
  // Host memory for an access of T at `a` when the fast paths of rd and wr would serve it
  // (null: they would not). The caches do not see it: with caches the fast load/store executors
  // tell them (exec_ls's Cached), and LDM/STM does itself.
  template <typename T, bool Write>
  uint8_t* host_address(uint32_t a) {
    const uint32_t off = a & (PagedMemory::kPageSize - 1);
    if (off > PagedMemory::kPageSize - sizeof(T)) return nullptr;
    const uint32_t page = a >> PagedMemory::kPageBits;
    if (mmu_.on()) {
      const Mmu::FastTlbEntry& e = mmu_.fast(page);
      return (Write ? e.write_va : e.read_va) == page ? e.host + off : nullptr;
    }
    uint8_t* p = mem_.host_page(page);
    if (!p || (Write && mem_.is_code(page))) return nullptr;
    return p + off;
  }
  template <typename T>
  void wr(uint32_t a, T v) {
    if (__builtin_expect(mmu_.on(), 0)) {
      const Mmu::FastTlbEntry& e = mmu_.fast(a >> PagedMemory::kPageBits);
      const uint32_t off = a & (PagedMemory::kPageSize - 1);
      if (__builtin_expect(e.write_va == (a >> PagedMemory::kPageBits) &&
                               off <= PagedMemory::kPageSize - sizeof(T),
                           1)) {
        std::memcpy(e.host + off, &v, sizeof(T));
        if (__builtin_expect(dhook_ != nullptr, 0)) dhook_->data(e.host + off, sizeof(T), true);
        return;
      }
      return mmu_.write<T>(a, v);
    }
    if constexpr (sizeof(T) == 1)
      mem_.write8(a, v);
    else if constexpr (sizeof(T) == 2)
      mem_.write16(a, v);
    else
      mem_.write32(a, v);
  }

 private:
  // The decoded instructions of one physical page: code is decoded once whatever virtual
  // addresses it runs at, and a change of mapping (a TLB flush) does not discard it.
  // Decoding resolves branch targets and ADR results to absolute addresses, so a page is valid
  // for the virtual page it was decoded at (va_page); run at another (an alias of the same
  // physical page: a process's vDSO, a kernel's identity map), it is decoded again.
  struct DecodedPage {
    uint32_t pa_page = 0;
    uint32_t va_page = 0;
    Insn a32[PagedMemory::kPageSize / 4];
    Insn t32[PagedMemory::kPageSize / 2];
  };
  // Which decoded page a virtual page runs: valid while ctx equals ctx_ (0: never valid).
  struct CodeMapEntry {
    uint32_t ctx = 0;
    DecodedPage* page = nullptr;
  };
  void update_mmu();  // the MMU's regime and ctx_ from SCTLR/HSCTLR/HCR and the mode

  static constexpr uint32_t kA = 1u << 8, kI = 1u << 7, kF = 1u << 6;
  static constexpr uint32_t kSctlrA = 1u << 1, kSctlrV = 1u << 13, kSctlrTe = 1u << 30;
  static constexpr uint8_t kHyp = static_cast<uint8_t>(Mode::Hyp);
  // HCR bits (B4.1.65).
  static constexpr uint32_t kHcrVm = 1u << 0, kHcrSwio = 1u << 1, kHcrFmo = 1u << 3,
                            kHcrImo = 1u << 4, kHcrAmo = 1u << 5, kHcrVf = 1u << 6,
                            kHcrVi = 1u << 7, kHcrVa = 1u << 8, kHcrTwi = 1u << 13,
                            kHcrTwe = 1u << 14, kHcrTid0 = 1u << 15, kHcrTid1 = 1u << 16,
                            kHcrTid2 = 1u << 17, kHcrTid3 = 1u << 18, kHcrTsc = 1u << 19,
                            kHcrTidcp = 1u << 20, kHcrTac = 1u << 21, kHcrTsw = 1u << 22,
                            kHcrTpc = 1u << 23, kHcrTpu = 1u << 24, kHcrTtlb = 1u << 25,
                            kHcrTvm = 1u << 26, kHcrTge = 1u << 27, kHcrTrvm = 1u << 30;
  // HDCR's debug traps (B4.1.64): TDE makes the other three act as set.
  static constexpr uint32_t kHdcrTde = 1u << 8, kHdcrTda = 1u << 9, kHdcrTdosa = 1u << 10,
                            kHdcrTdra = 1u << 11;

  class GuestFpScope;
  uint64_t run_loop(uint64_t max);
  // Runs the instruction at `pc` (== st_.pc) and returns the next PC (also in st_.pc).
  uint32_t step_inner(uint32_t pc);
  uint32_t form_block(uint32_t pc, const Insn& first);
  template <bool Thumb>
  uint32_t run_block(uint32_t pc, const Insn* in, uint32_t len);
  // Banks of SP, LR and SPSR: 0 USR/SYS, 1 SVC, 2 ABT, 3 UND, 4 IRQ, 5 FIQ, 6 HYP (SP and SPSR
  // only: Hyp mode uses LR_usr) (-1: no such mode).
  static int bank_of(uint8_t mode);
  static int lr_bank_of(uint8_t mode) { return mode == kHyp ? 0 : bank_of(mode); }
  // A mode the core may be in (HYP only with the Virtualization Extensions).
  bool valid_mode(uint8_t mode) const {
    return bank_of(mode) >= 0 && (mode != kHyp || st_.has_hyp);
  }
  void switch_mode(uint8_t mode);
  void write_cpsr(uint32_t v, uint32_t mask);
  bool privileged() const { return st_.mode != static_cast<uint8_t>(Mode::Usr); }
  void update_attention() {
    attention_ = halted_ || hyp_exit_ || st_.wfi || code_changed_ || yield_ || interrupt_takeable();
  }
  bool interrupt_takeable() const {
    if (!(st_.cp15.hcr & (kHcrImo | kHcrFmo | kHcrAmo)) && st_.mode != kHyp) {  // the common case
      return (st_.irq && !(st_.aif & kI)) || (st_.fiq && !(st_.aif & kF));
    }
    return exc_.pending_interrupt() != 0;
  }
  // false: stop running (halted, asleep, or an interrupt was taken: entered_in_loop_).
  bool service_attention();
  // Exception entry (exception_entry.h).
  bool take_pending_interrupt() { return exc_.take_pending_interrupt(); }
  void hyp_trap(uint8_t ec, uint32_t iss, const Insn& in, uint32_t hyp_offset = 0x14) {
    exc_.hyp_trap(ec, iss, in, hyp_offset);
  }
  uint32_t trap_cond(const Insn& in) const { return exc_.trap_cond(in); }
  void take_exception(Exception e, uint32_t lr, uint32_t spsr) { exc_.take_exception(e, lr, spsr); }
  bool in_hyp() const { return st_.mode == kHyp; }
  // Non-secure PL0/PL1 with the Virtualization Extensions: where HCR's traps apply.
  bool below_hyp() const { return st_.has_hyp && st_.mode != kHyp; }
  void hvc(const Insn& in);
  void smc(const Insn& in);
  void bkpt(const Insn& in);
  void srs(const Insn& in);
  void rfe(const Insn& in);
  // LDRT, STRBT, ...: from PL1 with PL0's permissions (arm_core_system.cpp).
  static void exec_ls_unprivileged(ArmCore& c, const Insn& in);
  // Every decoded instruction is dropped (its executor depends on SCTLR.A).
  void drop_all_decoded();
  void wfi(const Insn& in);
  void eret(const Insn& in);
  void mrs_banked(const Insn& in);
  void msr_banked(const Insn& in);
  // The register a banked MRS/MSR names, or null (undefined from the current mode).
  uint32_t* banked_register(uint32_t sysm, bool& is_spsr);
  // TLB maintenance: the MMU's, then every virtual page looks its decoded code up again.
  void tlb_flush() {
    mmu_.flush();
    new_code_generation();
  }
  void tlb_flush_va(uint32_t va) {
    mmu_.flush_va(va);
    new_code_generation();
  }
  // Every virtual page's decoded code is looked up again (a mapping or the code changed).
  void new_code_generation();
  // An ATS* operation (Mmu::address_translate's kinds) into PAR.
  void address_translate(uint32_t va, int kind) { st_.cp15.par = mmu_.address_translate(va, kind); }
  uint64_t counter() const { return counter_ ? counter_() : retired(); }
  void timer_changed() {
    if (timer_listener_) timer_listener_();
  }
  // Runs body; a synchronous exception it throws is taken (system mode) and false returned.
  template <typename F>
  bool guarded(F&& body);
  void exception_return(uint32_t target);
  // An exception return to `target` with CPSR = `spsr` (RFE; exception_return with the SPSR).
  void return_to(uint32_t target, uint32_t spsr);
  static uint8_t it_advance(uint8_t s) {
    return (s & 7) ? static_cast<uint8_t>((s & 0xE0) | ((s << 1) & 0x1F)) : 0;
  }
  uint32_t& user_reg(int n);  // register n of USR mode (LDM/STM with the S bit)
  void msr(const Insn& in);
  void cps(const Insn& in);
  void enter_guest_fp();
  void leave_guest_fp();
  const Insn& fetch_decoded(uint32_t pc) {  // the common case: on the last fetch's page, decoded
    if ((pc >> PagedMemory::kPageBits) == fetch_vpage_) {
      uint32_t off = pc & (PagedMemory::kPageSize - 1);
      const Insn& s = st_.thumb ? fetch_page_->t32[off >> 1] : fetch_page_->a32[off >> 2];
      if (s.op != Op::None) return s;
    }
    return lookup(pc);
  }
  // The decoded instruction at the PC if it is cached (the syndrome of a data abort).
  const Insn* current_insn() const;
  const Insn& lookup(uint32_t pc);
  void drop_page(uint32_t page);
  // A peer core of the cluster decoded code from `page` / wrote to a page of code.
  void peer_code_marked(uint32_t page);
  void peer_code_written(uint32_t page);
  // The Inner Shareable TLB maintenance: this core's, then the cluster's other cores'.
  void tlb_flush_shareable();
  void tlb_flush_va_shareable(uint32_t va);
  void exclusive_reserve(uint32_t a, uint8_t sub);
  bool exclusive_claim(uint32_t a, uint8_t sub);                        // may the STREX store?
  const uint8_t* exclusive_host(uint32_t a, unsigned len, bool write);  // RAM at `a`, or null
  Insn decode(uint32_t pc, uint32_t pa);
  bool cond_pass(uint32_t cond) const { return (kCondPass[cond & 15] >> st_.nzcv) & 1; }
  void execute(const Insn& in);
  void execute_vfp(const Insn& in);
  bool check_vfp_enabled(const Insn& in);  // false: trapped to Hyp mode
  uint32_t vfp_system_register(const Insn& in);
  void execute_vfp_op(const Insn& in, bool dbl);
  // Executors stored in Insn::fn: data processing per operation and operand kind, loads and
  // stores per size and offset kind, branches, and everything else through execute().
  // Kind: an Opnd, kRegImmShift + a Shift (a register shifted by an immediate of that type) or
  // kRegPlain.
  static constexpr uint8_t kRegImmShift = 8;
  static constexpr uint8_t kRegPlain = kRegImmShift + kRrx + 1;  // a register, not shifted
  // Flags: whether a data-processing executor sets the flags (never, always, outside an IT block:
  // the 16-bit Thumb forms) or asks the instruction (S, or S outside an IT block) and may write
  // the PC (only the last kind).
  static constexpr uint8_t kDpFlagsNever = 0, kDpFlagsAlways = 1, kDpFlagsOutsideIt = 2,
                           kDpFlagsGeneral = 3;
  template <uint8_t Sub, uint8_t Kind, uint8_t Flags>
  static void exec_dp(ArmCore& c, const Insn& in);
  template <uint8_t Flags>
  static ExecFn dp_executor(const Insn& in);
  // Form: the addressing mode as decoded (kLsGeneral: from the instruction's flags; the others
  // also promise that neither the base nor a loaded register is the PC).
  static constexpr uint8_t kLsGeneral = 0, kLsOffsetAdd = 1, kLsOffsetSub = 2, kLsPreAdd = 3,
                           kLsPostAdd = 4;
  // Cached: a core with caches (set_caches) tells its data cache about the access; the
  // executors of a core without them are the ones without that call.
  template <uint8_t Sub, bool RegOff, uint8_t Form, bool Cached = false>
  static void exec_ls(ArmCore& c, const Insn& in);
  template <uint8_t Sub>
  static ExecFn ls_executor(bool reg, uint8_t form, bool cached);
  template <uint8_t Sub, bool RegOff>
  static void exec_ls_slow(ArmCore& c, const Insn& in);
  static void exec_branch(ArmCore& c, const Insn& in);
  static void exec_other(ArmCore& c, const Insn& in) { c.execute(in); }
  // Frequent operations without execute()'s switch.
  static void exec_multi(ArmCore& c, const Insn& in) { c.load_store_multi(in); }
  static void exec_multiply(ArmCore& c, const Insn& in) { c.multiply(in); }
  // MUL/MLA/MLS (Acc: ra is not 15) and UMULL/UMLAL/SMULL/SMLAL (Sub 0-3), without S.
  template <bool Acc>
  static void exec_mul(ArmCore& c, const Insn& in);
  template <uint8_t Sub>
  static void exec_mul_long(ArmCore& c, const Insn& in);
  static void exec_media(ArmCore& c, const Insn& in) { c.media(in); }
  static void exec_branch_reg(ArmCore& c, const Insn& in);
  static void exec_movw(ArmCore& c, const Insn& in) { c.write_reg(in.rd, in.imm); }
  ExecFn executor_for(const Insn& in) const;  // by SCTLR.A too
  template <uint8_t Kind, uint8_t Flags, size_t... S>
  static constexpr std::array<ExecFn, sizeof...(S)> dp_table(std::index_sequence<S...>);
  void load_store_multi(const Insn& in);
  void load_store_multi_user(const Insn& in);  // the S-bit forms (system mode)
  void multiply(const Insn& in);
  void media(const Insn& in);
  void parallel(const Insn& in);
  void write_reg(int n, uint32_t v) {
    if (n == 15)
      alu_write_pc(v);
    else
      st_.r[n] = v;
  }
  void alu_write_pc(uint32_t v);  // A32: interworking; T32: stays in Thumb
  void bx_write_pc(uint32_t v);   // interworking branch
  // The flags live packed (N Z C V in bits 3..0, the condition table's index): a condition check
  // is one load, and an instruction that sets them all one store.
  uint32_t flag_c() const { return (st_.nzcv >> 1) & 1; }
  void set_nz(uint32_t v) {
    st_.nzcv = (st_.nzcv & 3u) | ((v >> 31) << 3) | (uint32_t{v == 0} << 2);
  }
  void set_nzc(uint32_t v, uint32_t carry) {
    st_.nzcv = (st_.nzcv & 1u) | ((v >> 31) << 3) | (uint32_t{v == 0} << 2) | (carry << 1);
  }
  void set_nzcv_bits(uint32_t v, uint32_t carry, uint32_t overflow) {
    st_.nzcv = ((v >> 31) << 3) | (uint32_t{v == 0} << 2) | (carry << 1) | overflow;
  }
  [[noreturn]] void undefined(const Insn& in) const;
  static void check_aligned(uint32_t addr, uint32_t size, bool write = false) {
    if (addr & (size - 1)) throw AlignmentFault(addr, size, write);
  }

  PagedMemory& mem_;
  SupervisorCall* svc_ = nullptr;
  // First, so that its hot head (the registers, PC, flags) starts the object. (The run loop's
  // flags below before it measured 5-7 % slower on the boot's first 1.5 G instructions.)
  ArmState st_;  // the architectural state (arm_state.h)
  bool halted_ = false;
  bool hyp_exits_ = false;  // Hyp mode is a model's: entries stop run() (set_hyp_exits)
  bool hyp_exit_ = false;   // one is pending
  bool attention_ = false;  // halted, asleep, or an unmasked interrupt: run() looks before a step
  Cluster* cluster_ = nullptr;
  int cluster_index_ = 0;
  bool yield_ = false, yielded_ = false;
  bool code_changed_ = false;  // decoded code was dropped: a basic block in flight must end
  FirmwareCall* firmware_ = nullptr;
  std::function<uint64_t()> counter_;
  std::function<void()> timer_listener_;
  std::function<uint64_t()> cycles_;
  std::function<void(bool)> pmu_listener_;
  bool pmu_level_ = false;
  std::vector<uint32_t> breakpoints_;
  std::vector<uint8_t> bp_pages_;  // by virtual page: 1 if a breakpoint is on it
  bool bp_hit_ = false;
  bool bp_skip_ = false;          // the first instruction of a run is not stopped at
  bool entered_in_loop_ = false;  // run_loop ended at an interrupt entry (run() goes on)
  uint64_t mode_retired_[32] = {};
  uint64_t mode_start_ = 0;  // retired() when the current mode was entered
  // By mode and class, counted at mode switches (a few per system call, not per instruction).
  uint64_t mode_class_retired_[32][kClasses] = {};
  uint64_t mode_class_start_[kClasses] = {};  // retired(class) when the current mode was entered
  // An IRQ's handling in progress (irq_entered .. the next return_to), and the totals.
  void irq_entered();
  void hyp_entered(int cause);
  bool in_hyp_span_ = false;
  int hyp_cause_ = 0;
  uint64_t hyp_start_[kClasses] = {};
  uint64_t hyp_handled_[kHypCauses] = {};
  uint64_t hyp_retired_[kHypCauses][kClasses] = {};
  bool in_irq_ = false;
  uint32_t irq_return_pc_ = 0;
  uint8_t irq_from_mode_ = 0;
  uint64_t irq_start_[kClasses] = {};
  uint64_t irqs_handled_ = 0;
  uint64_t irq_retired_[kClasses] = {};
  // Host floating-point environment while guest code runs (see GuestFpScope).
  bool in_guest_fp_ = false;
  int host_fp_flags_ = 0, host_rounding_ = 0;
  std::vector<std::unique_ptr<DecodedPage>> pages_;  // by physical page
  std::vector<CodeMapEntry> code_map_;               // by virtual page
  // The context code_map_ entries are valid in: generation << 2 | regime (0 PL1, 1 PL0, 2 Hyp;
  // each has its own translation and execute permission). The generation grows with every TLB
  // invalidation (a mapping may have changed) and every store into decoded code, so that no
  // virtual page runs stale code; a new generation costs a TLB lookup per page, not a decode.
  uint32_t ctx_ = 4;
  uint32_t generation_ = 1;
  // The virtual page of the last fetch and its decoded page (~0u: none; reset with ctx_).
  uint32_t fetch_vpage_ = ~0u;
  DecodedPage* fetch_page_ = nullptr;
  // The caches (set_caches), and what the loads and stores (fetches) look up now: l1_ while
  // enabled (update_cache_hooks), else null.
  L1Caches* l1_ = nullptr;
  L1Caches* dhook_ = nullptr;
  L1Caches* ihook_ = nullptr;
  void update_cache_hooks();
  // The instruction cache's look-up for the `len` instructions of the block at `pc` (its decoded
  // slots at `in`, on fetch_page_).
  void fetch_block(uint32_t pc, const Insn* in, uint32_t len);
  // A maintenance operation: the MVA forms translate their address first (none: nothing to do).
  void cache_maintenance(CacheOp op, uint32_t arg);
  Mmu mmu_;                    // table walker and TLB (mmu.h)
  Cp15 cp15_{*this};           // the CP15/CP14 access path (cp15.h)
  ExceptionEntry exc_{*this};  // exception entry (exception_entry.h)
  // Pages dropped by a write while one of their instructions may still be executing; freed at
  // the next decode.
  std::vector<std::unique_ptr<DecodedPage>> dropped_;
  // Retired instructions by class, in kRetiredBanks counters per class that consecutive
  // instructions of a block take in turn: one counter incremented by every instruction of a run
  // of ALU instructions was a chain of read-modify-writes through memory (a store forwarded to
  // the next load, several cycles each) that the executors could not overlap.
  std::array<uint64_t, kClasses* kRetiredBanks> retired_ = {};
  void count_retired(const Insn& in, uint32_t bank) {
    ++retired_[static_cast<int>(in.cls) * kRetiredBanks + (bank & (kRetiredBanks - 1))];
  }
  uint64_t decoded_ = 0;
};

}  // namespace vtoe::cpu::iss
