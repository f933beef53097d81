// An ARMv7-A core: A32 and T32 states with interworking, VFPv3-D16, and a decoded-instruction
// cache (each address is decoded once; a write to a code page drops that page's decoded
// instructions).
//
// The core is plain C++ (no SystemC): it runs instructions against a GuestMemory. Two ways to run:
//  - syscall emulation (the default): user mode; SVC goes to a SupervisorCall handler (Linux
//    system-call emulation, or a test); undefined instructions and faults are thrown.
//  - system mode (set_system_mode, reset_system): the processor modes with their banked registers
//    (USR, FIQ, IRQ, SVC, ABT, UND, SYS and, with the Virtualization Extensions, HYP), SPSRs, and
//    exceptions taken to the vectors as ARMv7-A takes them: SVC, undefined instruction, prefetch
//    and data abort, IRQ and FIQ (inputs set_irq/set_fiq, taken at instruction boundaries when
//    CPSR.I/F allow), and to Hyp mode (HVBAR) for HVC, the Hyp traps and routed interrupts.
//    CP15 is a table (arm_core_cp15.cpp); the generic timer's registers live in the core
//    (generic_timer.h).
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

#include "models/cpu/iss/generic_timer.h"
#include "models/cpu/iss/guest_memory.h"
#include "models/cpu/iss/insn.h"

namespace vtoe::cpu::iss {

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
  AlignmentFault(uint32_t addr, uint32_t size);
  uint32_t addr;
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

// A translation fault, access-flag, domain or permission fault, or an external abort on a
// table walk, found by the MMU (system mode): taken as a data or prefetch abort to PL1 (stage 1)
// or to Hyp mode (stage 2, or Hyp's own stage 1).
struct MmuFault {
  enum Kind : uint8_t { Translation, AccessFlag, Domain, Permission, External, WalkExternal };
  Kind kind = Translation;
  uint8_t level = 1;    // 1-3 (short format: 1 section, 2 page)
  uint8_t domain = 0;   // short format
  bool stage2 = false;  // found by stage 2 (IPA -> PA)
  bool s1ptw = false;   // stage 2 fault on a stage-1 table walk
  bool long_format = false;
  uint64_t ipa = 0;  // stage 2 faults: the IPA
};
class MmuAbort : public std::runtime_error {
 public:
  MmuAbort(uint32_t va, bool write, bool fetch, const MmuFault& f);
  uint32_t va;
  bool write, fetch;
  MmuFault fault;
};

// Processor modes (CPSR.M).
enum class Mode : uint8_t {
  Usr = 0x10,
  Fiq = 0x11,
  Irq = 0x12,
  Svc = 0x13,
  Abt = 0x17,
  Hyp = 0x1A,
  Und = 0x1B,
  Sys = 0x1F
};
const char* to_string(Mode m);

// Exceptions of system mode, counted by kind (taken to a PL1 mode or to Hyp mode). HypTrap is
// the Hyp trap vector (0x14): HVC from PL1, trapped instructions, stage-2 aborts.
enum class Exception : uint8_t {
  Undefined,
  Svc,
  PrefetchAbort,
  DataAbort,
  Irq,
  Fiq,
  HypTrap,
  Count
};
const char* to_string(Exception e);

// HSR exception classes (ARM ARM B3.13.6) the core reports.
namespace hsr_ec {
constexpr uint8_t kUnknown = 0x00, kWfiWfe = 0x01, kMcrMrcCp15 = 0x03, kMcrrMrrcCp15 = 0x04,
                  kCp10 = 0x07, kMrcCp10Id = 0x08, kSvc = 0x11, kHvc = 0x12, kSmc = 0x13,
                  kPrefetchAbortLower = 0x20, kPrefetchAbortHyp = 0x21, kDataAbortLower = 0x24,
                  kDataAbortHyp = 0x25;
}

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
 public:
  static constexpr int kClasses = static_cast<int>(InsnClass::Count);

  explicit ArmCore(GuestMemory& mem);
  ~ArmCore();
  ArmCore(const ArmCore&) = delete;
  ArmCore& operator=(const ArmCore&) = delete;

  GuestMemory& memory() { return mem_; }
  void set_svc_handler(SupervisorCall* h) { svc_ = h; }

  uint32_t reg(int n) const { return n == 15 ? pc_ : r_[n]; }
  void set_reg(int n, uint32_t v);
  // Address of the next instruction; bit 0 of `addr` selects Thumb state.
  void set_pc(uint32_t addr);
  uint32_t pc() const { return pc_; }
  bool thumb() const { return thumb_; }
  // The whole CPSR: N Z C V Q, IT, GE, E, A I F, T, mode.
  uint32_t cpsr() const;
  // Writes every CPSR field (mode switch included): for set-up and tests.
  void set_cpsr(uint32_t v) { write_cpsr(v, 0xffffffffu); }
  void set_nzcv(uint32_t bits31_28);
  Mode mode() const { return static_cast<Mode>(mode_); }
  // SPSR of the current mode (0 in USR and SYS, which have none), and of a given mode.
  uint32_t spsr() const { return spsr_[bank_of(mode_)]; }
  uint32_t spsr(Mode m) const { return spsr_[bank_of(static_cast<uint8_t>(m))]; }
  // Register n (r8-r14 are banked) as mode `m` sees it, whichever mode is current.
  uint32_t banked_reg(Mode m, int n) const;

  // System mode (see the top of this file). Entering it resets the core as the hardware does:
  // SVC mode, A I F masked, ARM state, SCTLR.V = 0, VBAR = 0; the PC is left to set_pc.
  void set_system_mode(bool on);
  bool system_mode() const { return system_; }
  // System mode as a Cortex-A15 resets (non-secure state only): with `hyp`, the Virtualization
  // Extensions exist and the core starts in Hyp mode (QEMU's virtualization=on); without, it
  // starts in SVC and HVC goes to the firmware. MMU off, A I F masked, every CP15 register at
  // its reset value; the PC is left to set_pc.
  void reset_system(bool hyp);
  bool has_hyp() const { return has_hyp_; }
  void set_firmware(FirmwareCall* f) { firmware_ = f; }
  // Virtual interrupt lines from the GIC's virtual CPU interface. A pending virtual interrupt is
  // taken (to IRQ/FIQ mode) only outside Hyp mode with HCR.IMO/FMO set; HCR.VI/VF assert them too.
  void set_virq(bool level) {
    virq_ = level;
    if (level) wfi_ = false;
    update_attention();
  }
  void set_vfiq(bool level) {
    vfiq_ = level;
    if (level) wfi_ = false;
    update_attention();
  }
  // The generic timer (its registers are CP15; see generic_timer.h). The count is
  // `source()` (the SystemC wrapper: simulated time x CNTFRQ); without a source it is the number
  // of instructions retired. The listener is called when an output level may have changed.
  void set_counter_source(std::function<uint64_t()> source) { counter_ = std::move(source); }
  void set_timer_listener(std::function<void()> listener) { timer_listener_ = std::move(listener); }
  bool timer_output(TimerKind k) const { return timer_.output(k, counter()); }
  // The physical count at which the next output rises (none: nothing armed).
  std::optional<uint64_t> next_timer_deadline() const { return timer_.next_deadline(counter()); }
  GenericTimer& timer() { return timer_; }

  // Hyp mode's own registers, for the platform and tests.
  uint32_t elr_hyp() const { return elr_hyp_; }
  uint32_t hsr() const { return sys_.hsr; }
  uint32_t hcr() const { return sys_.hcr; }
  uint32_t hvbar() const { return sys_.hvbar; }
  uint32_t hdfar() const { return sys_.hdfar; }
  uint32_t hifar() const { return sys_.hifar; }
  uint32_t hpfar() const { return sys_.hpfar; }
  uint32_t dfsr() const { return sys_.dfsr; }
  uint32_t dfar() const { return sys_.dfar; }
  uint32_t ifsr() const { return sys_.ifsr; }
  uint32_t ifar() const { return sys_.ifar; }
  // A CP15 register by its MRC/MCR coordinates, as the current mode would read it but without
  // access checks, traps or side effects (debuggers, tests); nullopt: not implemented.
  std::optional<uint32_t> cp15(uint32_t crn, uint32_t opc1, uint32_t crm, uint32_t opc2);
  std::optional<uint64_t> cp15_64(uint32_t opc1, uint32_t crm);
  // Writes one as MCR/MCRR would (side effects included: TLB flushes, timer listener), without
  // access checks or traps. False: not implemented or not writable.
  bool set_cp15(uint32_t crn, uint32_t opc1, uint32_t crm, uint32_t opc2, uint32_t v);
  bool set_cp15_64(uint32_t opc1, uint32_t crm, uint64_t v);
  // The CP15 registers the core implements, as "name crn opc1 crm opc2" (coverage listing).
  static std::vector<std::string> cp15_register_names();

  // Debug access for a GDB stub: translated with the current regime, no fault taken, no fault
  // register changed. False: something in the range is not mapped.
  bool debug_read(uint32_t va, void* dst, uint32_t len);
  bool debug_write(uint32_t va, const void* src, uint32_t len);
  // run() stops before an instruction at a breakpoint (not the first one of a run, so that a
  // run resumes from the breakpoint it stopped at).
  void add_breakpoint(uint32_t va);
  void remove_breakpoint(uint32_t va);
  bool at_breakpoint() const { return bp_hit_; }

  // Retired instructions by the mode they ran in (statistics).
  uint64_t retired_in_mode(Mode m) const;
  // Exceptions taken to Hyp mode by HSR exception class (IRQ and FIQ have none: hyp_interrupts).
  uint64_t hyp_entries(uint8_t ec) const { return hyp_ec_[ec & 63]; }
  uint64_t hyp_interrupts(Exception e) const { return hyp_exceptions_[static_cast<int>(e)]; }
  // Interrupt inputs (levels). Taken at the next instruction boundary when unmasked; either one
  // also ends a WFI, masked or not.
  void set_irq(bool level) {
    irq_ = level;
    if (level) wfi_ = false;
    update_attention();
  }
  void set_fiq(bool level) {
    fiq_ = level;
    if (level) wfi_ = false;
    update_attention();
  }
  bool irq() const { return irq_; }
  bool fiq() const { return fiq_; }
  // WFI (or WFE) in system mode with no interrupt asserted: run() returns and the core stays
  // asleep until set_irq/set_fiq raise a line.
  bool waiting_for_interrupt() const { return wfi_; }
  uint64_t exceptions(Exception e) const { return exceptions_[static_cast<int>(e)]; }
  uint32_t sctlr() const { return sys_.sctlr; }
  uint32_t vbar() const { return sys_.vbar; }
  void set_vbar(uint32_t v) { sys_.vbar = v & ~31u; }
  // Drops the decoded instructions of [addr, addr + len): code changed behind the core's back
  // (another bus master, a DMI region that went away).
  void invalidate_decoded(uint32_t addr, uint32_t len);
  uint32_t tls() const { return tls_; }
  void set_tls(uint32_t v) { tls_ = v; }
  uint32_t sreg(int n) const { return s_[n]; }
  void set_sreg(int n, uint32_t v) { s_[n] = v; }
  uint64_t dreg(int n) const { return s_[2 * n] | (uint64_t{s_[2 * n + 1]} << 32); }
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

  // Runs until halt(), WFI, a breakpoint or `max` instructions; returns how many retired. In system
  // mode an exception entry is not an instruction: the count is of instructions retired.
  uint64_t run(uint64_t max = ~uint64_t{0});
  // One instruction, or one exception entry (run() is the fast way to execute many). Nothing
  // when halted or asleep.
  void step();
  void halt() {
    halted_ = true;
    attention_ = true;
  }
  bool halted() const { return halted_; }

  uint64_t retired() const;
  uint64_t retired(InsnClass c) const {
    uint64_t n = 0;
    for (int b = 0; b < kRetiredBanks; ++b) n += retired_[static_cast<int>(c) * kRetiredBanks + b];
    return n;
  }
  uint64_t decoded() const { return decoded_; }
  // Software TLB statistics (system mode with translation on).
  uint64_t tlb_misses() const { return tlb_misses_; }
  uint64_t tlb_flushes() const { return tlb_flushes_; }
  // Whether the current regime translates addresses (SCTLR.M, HSCTLR.M in Hyp mode, HCR.VM).
  bool translation_on() const { return mmu_on_; }

  // Loads and stores of guest code by virtual address: the MMU's when it is on (system mode),
  // else straight to GuestMemory (syscall emulation, MMU off: the fast path).
  // With the MMU on, a software-TLB hit on a page of host memory is served here (the current
  // privilege's FastTlbEntry); everything else (a miss, a permission to check, a device, a page
  // crossing) goes to mmu_read/mmu_write.
  template <typename T>
  T rd(uint32_t a) {
    if (__builtin_expect(mmu_on_, 0)) {
      const FastTlbEntry& e = cur_fast_[(a >> GuestMemory::kPageBits) % kTlbSize];
      const uint32_t off = a & (GuestMemory::kPageSize - 1);
      if (__builtin_expect(e.read_va == (a >> GuestMemory::kPageBits) &&
                               off <= GuestMemory::kPageSize - sizeof(T),
                           1)) {
        T v;
        std::memcpy(&v, e.host + off, sizeof(T));
        return v;
      }
      return mmu_read<T>(a);
    }
    if constexpr (sizeof(T) == 1)
      return mem_.read8(a);
    else if constexpr (sizeof(T) == 2)
      return mem_.read16(a);
    else
      return mem_.read32(a);
  }
  // Host memory for an access of T at `a` when the fast paths of rd and wr would serve it
  // (null: they would not).
  template <typename T, bool Write>
  uint8_t* host_address(uint32_t a) {
    const uint32_t off = a & (GuestMemory::kPageSize - 1);
    if (off > GuestMemory::kPageSize - sizeof(T)) return nullptr;
    const uint32_t page = a >> GuestMemory::kPageBits;
    if (mmu_on_) {
      const FastTlbEntry& e = cur_fast_[page % kTlbSize];
      return (Write ? e.write_va : e.read_va) == page ? e.host + off : nullptr;
    }
    uint8_t* p = mem_.host_page(page);
    if (!p || (Write && mem_.is_code(page))) return nullptr;
    return p + off;
  }
  template <typename T>
  void wr(uint32_t a, T v) {
    if (__builtin_expect(mmu_on_, 0)) {
      const FastTlbEntry& e = cur_fast_[(a >> GuestMemory::kPageBits) % kTlbSize];
      const uint32_t off = a & (GuestMemory::kPageSize - 1);
      if (__builtin_expect(e.write_va == (a >> GuestMemory::kPageBits) &&
                               off <= GuestMemory::kPageSize - sizeof(T),
                           1)) {
        std::memcpy(e.host + off, &v, sizeof(T));
        return;
      }
      return mmu_write<T>(a, v);
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
    Insn a32[GuestMemory::kPageSize / 4];
    Insn t32[GuestMemory::kPageSize / 2];
  };
  // Which decoded page a virtual page runs: valid while ctx equals ctx_ (0: never valid).
  struct CodeMapEntry {
    uint32_t ctx = 0;
    DecodedPage* page = nullptr;
  };
  // A software TLB entry: virtual page -> physical page, with the combined stage 1 and stage 2
  // permissions (bits 0-2 PL1 read/write/execute, 3-5 PL0, as kPermR << shift); `block` says the
  // stage-1 mapping is larger than a page (TLBIMVA drops it whatever the page).
  struct TlbEntry {
    uint32_t va_page = ~0u;
    uint32_t pa_page = 0;
    uint8_t perms = 0;
    bool block = false;
  };
  // What the loads and stores look at first, one per TlbEntry and privilege: the virtual page
  // when a read (a write) at that privilege is served from `host`, the page's host memory (a
  // RAM page the privilege may read; a write also needs it not to hold decoded code), else ~0u.
  // One compare instead of the page, the permissions and the host pointer; 16 bytes.
  struct FastTlbEntry {
    uint32_t read_va = ~0u;
    uint32_t write_va = ~0u;
    uint8_t* host = nullptr;
  };
  static constexpr uint32_t kTlbSize = 1024;
  static constexpr uint8_t kPermR = 1, kPermW = 2, kPermX = 4;
  // The result of a walk: the output address and the permissions of each stage.
  struct Walk {
    uint64_t pa = 0;
    uint8_t s1perms = 0x3f, s2perms = 0x3f;
    bool s1_domain_no_access = false;  // short format: a domain with no access
    MmuFault fault;
    bool ok = false;
    uint8_t level = 1;
    uint8_t domain = 0;
    bool block = false;  // stage 1 mapped a section, supersection, large page or LPAE block
    // Long format, stage 1: the MAIR attribute byte and SH of the mapping (for PAR only).
    uint8_t attr = 0, sh = 0;
  };
  template <typename T>
  T mmu_read(uint32_t a);
  template <typename T>
  void mmu_write(uint32_t a, T v);
  // VA -> PA for an access of `need` (kPermR/W/X) at the current privilege; throws MmuAbort.
  uint32_t translate(uint32_t va, uint8_t need);
  // The full walk for the current (or a given) regime; never throws.
  Walk walk(uint32_t va, bool hyp_regime, bool stage2_on);
  Walk walk_short(uint32_t va, bool stage2_on);
  Walk walk_long(uint32_t va, bool hyp_regime, bool stage2_on);
  bool stage2(uint64_t ipa, Walk& w, bool s1ptw);
  bool read_desc(uint64_t addr, bool is64, uint64_t& v, Walk& w, bool stage2_on);
  void update_mmu();  // mmu_on_ and ctx_ from SCTLR/HSCTLR/HCR and the mode
  void take_mmu_fault(const MmuAbort& a);
  uint32_t fault_status(const MmuFault& f, bool write) const;

  static constexpr uint32_t kA = 1u << 8, kI = 1u << 7, kF = 1u << 6;
  static constexpr uint32_t kSctlrV = 1u << 13, kSctlrTe = 1u << 30;
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

  // The CP15 registers (non-secure state; the generic timer's are in timer_). Reset values in
  // reset_system.
  struct SysRegs {
    uint32_t sctlr, actlr, cpacr, ttbcr, dacr, prrr, nmrr, amair0, amair1;
    uint64_t ttbr0, ttbr1, par;
    uint32_t dfsr, ifsr, dfar, ifar, adfsr, aifsr, contextidr, csselr;
    uint32_t tpidrurw, tpidrprw, vbar, fpexc;
    uint32_t hcr, hdcr, hcptr, hstr, hacr, hsctlr, htcr, vtcr, hmair0, hmair1, hamair0, hamair1;
    uint64_t httbr, vttbr;
    uint32_t vpidr, vmpidr, hsr, hdfar, hifar, hpfar, hvbar, htpidr, hadfsr, haifsr;
  };
  struct Cp15Reg;
  static const std::vector<Cp15Reg>& cp15_table();
  static const Cp15Reg* cp15_find(bool is64, uint32_t key);

  class GuestFpScope;
  uint64_t run_loop(uint64_t max);
  // Runs the instruction at `pc` (== pc_) and returns the next PC (also in pc_).
  uint32_t step_inner(uint32_t pc);
  uint32_t form_block(uint32_t pc, const Insn& first);
  template <bool Thumb>
  uint32_t run_block(uint32_t pc, const Insn* in, uint32_t len);
  // Banks of SP, LR and SPSR: 0 USR/SYS, 1 SVC, 2 ABT, 3 UND, 4 IRQ, 5 FIQ, 6 HYP (SP and SPSR
  // only: Hyp mode uses LR_usr) (-1: no such mode).
  static int bank_of(uint8_t mode);
  static int lr_bank_of(uint8_t mode) { return mode == kHyp ? 0 : bank_of(mode); }
  // A mode the core may be in (HYP only with the Virtualization Extensions).
  bool valid_mode(uint8_t mode) const { return bank_of(mode) >= 0 && (mode != kHyp || has_hyp_); }
  void switch_mode(uint8_t mode);
  void write_cpsr(uint32_t v, uint32_t mask);
  bool privileged() const { return mode_ != static_cast<uint8_t>(Mode::Usr); }
  void update_attention() { attention_ = halted_ || wfi_ || code_changed_ || interrupt_takeable(); }
  bool interrupt_takeable() const {
    if (!(sys_.hcr & (kHcrImo | kHcrFmo | kHcrAmo)) && mode_ != kHyp) {  // the common case
      return (irq_ && !(aif_ & kI)) || (fiq_ && !(aif_ & kF));
    }
    return pending_interrupt() != 0;
  }
  // What the interrupt inputs and HCR make takeable now: 0 none, else a code for take_.
  int pending_interrupt() const;
  bool service_attention();  // false: stop running (halted, asleep or at a breakpoint)
  bool take_pending_interrupt();
  // Exception entry to Hyp mode (B1.8.4): vector HVBAR + offset, ELR_hyp = return address.
  void enter_hyp(uint32_t offset, uint32_t return_addr, uint32_t spsr);
  // A synchronous exception to Hyp mode with its syndrome: from Hyp mode at `hyp_offset`, from
  // the other modes at the Hyp trap vector. The return address is the instruction itself.
  void hyp_trap(uint8_t ec, uint32_t iss, const Insn& in, uint32_t hyp_offset = 0x14);
  uint32_t hsr_value(uint8_t ec, uint32_t iss, bool il32) const {
    return (uint32_t{ec} << 26) | (il32 ? 1u << 25 : 0u) | (iss & 0x1ffffff);
  }
  // The condition field a trapped instruction reports in HSR.ISS (CV = 1).
  uint32_t trap_cond(const Insn& in) const;
  bool in_hyp() const { return mode_ == kHyp; }
  // Non-secure PL0/PL1 with the Virtualization Extensions: where HCR's traps apply.
  bool below_hyp() const { return has_hyp_ && mode_ != kHyp; }
  void hvc(const Insn& in);
  void smc(const Insn& in);
  void wfi(const Insn& in);
  void eret(const Insn& in);
  void mrs_banked(const Insn& in);
  void msr_banked(const Insn& in);
  // The register a banked MRS/MSR names, or null (undefined from the current mode).
  uint32_t* banked_register(uint32_t sysm, bool& is_spsr);
  uint64_t cp15_access(const Insn& in, bool is64, bool read, uint64_t value);
  // CP14: the debug registers a kernel probes (arm_core_cp15.cpp).
  uint32_t cp14_access(const Insn& in, bool read, uint32_t value);
  // Translation (arm_core_mmu.cpp): TLB maintenance, the ATS* operations (kind: 0-3 ATS1C{P,U}
  // {R,W}, 4-7 ATS12NSO{P,U}{R,W}, 8-9 ATS1H{R,W}) into PAR, and the debugger's translation.
  void tlb_flush();
  void tlb_flush_va(uint32_t va);
  // The TLB's host pointers when host memory goes away or a page starts holding code.
  void tlb_forget_host();
  void tlb_protect_code(uint32_t pa_page);
  // Every virtual page's decoded code is looked up again (a mapping or the code changed).
  void new_code_generation();
  void address_translate(uint32_t va, int kind);
  bool debug_translate(uint32_t va, uint32_t& pa);
  uint64_t counter() const { return counter_ ? counter_() : retired(); }
  void timer_changed() {
    if (timer_listener_) timer_listener_();
  }
  // Runs body; a synchronous exception it throws is taken (system mode) and false returned.
  template <typename F>
  bool guarded(F&& body);
  void take_exception(Exception e, uint32_t lr, uint32_t spsr);
  void exception_return(uint32_t target);
  // A synchronous exception thrown while an instruction ran: taken in system mode, else rethrown.
  void take_fault(Exception e, uint32_t fault_addr, bool write, bool alignment);
  static uint8_t it_advance(uint8_t s) {
    return (s & 7) ? static_cast<uint8_t>((s & 0xE0) | ((s << 1) & 0x1F)) : 0;
  }
  uint32_t& user_reg(int n);  // register n of USR mode (LDM/STM with the S bit)
  void msr(const Insn& in);
  void cps(const Insn& in);
  void enter_guest_fp();
  void leave_guest_fp();
  const Insn& fetch_decoded(uint32_t pc) {  // the common case: on the last fetch's page, decoded
    if ((pc >> GuestMemory::kPageBits) == fetch_vpage_) {
      uint32_t off = pc & (GuestMemory::kPageSize - 1);
      const Insn& s = thumb_ ? fetch_page_->t32[off >> 1] : fetch_page_->a32[off >> 2];
      if (s.op != Op::None) return s;
    }
    return lookup(pc);
  }
  // The decoded instruction at the PC if it is cached (the syndrome of a data abort).
  const Insn* current_insn() const;
  const Insn& lookup(uint32_t pc);
  void drop_page(uint32_t page);
  Insn decode(uint32_t pc, uint32_t pa);
  bool cond_pass(uint32_t cond) const { return (kCondPass[cond & 15] >> nzcv_) & 1; }
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
  template <uint8_t Sub, bool RegOff, uint8_t Form>
  static void exec_ls(ArmCore& c, const Insn& in);
  template <uint8_t Sub>
  static ExecFn ls_executor(bool reg, uint8_t form);
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
  static ExecFn executor_for(const Insn& in);
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
      r_[n] = v;
  }
  void alu_write_pc(uint32_t v);  // A32: interworking; T32: stays in Thumb
  void bx_write_pc(uint32_t v);   // interworking branch
  // The flags live packed (N Z C V in bits 3..0, the condition table's index): a condition check
  // is one load, and an instruction that sets them all one store.
  uint32_t flag_c() const { return (nzcv_ >> 1) & 1; }
  void set_nz(uint32_t v) { nzcv_ = (nzcv_ & 3u) | ((v >> 31) << 3) | (uint32_t{v == 0} << 2); }
  void set_nzc(uint32_t v, uint32_t carry) {
    nzcv_ = (nzcv_ & 1u) | ((v >> 31) << 3) | (uint32_t{v == 0} << 2) | (carry << 1);
  }
  void set_nzcv_bits(uint32_t v, uint32_t carry, uint32_t overflow) {
    nzcv_ = ((v >> 31) << 3) | (uint32_t{v == 0} << 2) | (carry << 1) | overflow;
  }
  [[noreturn]] void undefined(const Insn& in) const;
  static void check_aligned(uint32_t addr, uint32_t size) {
    if (addr & (size - 1)) throw AlignmentFault(addr, size);
  }

  GuestMemory& mem_;
  SupervisorCall* svc_ = nullptr;
  // r_[15] holds the PC as instructions read it (address + 8 or + 4); r_[16] is where an
  // exception return's data-processing result goes before it becomes the PC.
  uint32_t r_[17] = {};
  uint32_t pc_ = 0;    // address of the current instruction
  uint32_t next_ = 0;  // address of the next one (branches write it)
  bool thumb_ = false;
  uint32_t nzcv_ = 0;  // CPSR.NZCV >> 28 (see set_nz)
  uint32_t q_ = 0, ge_ = 0;
  uint8_t itstate_ = 0;
  bool in_it_ = false;
  bool halted_ = false;
  bool attention_ = false;  // halted, asleep, or an unmasked interrupt: run() looks before a step
  bool code_changed_ = false;  // decoded code was dropped: a basic block in flight must end
  bool system_ = false;
  bool irq_ = false, fiq_ = false, wfi_ = false;
  uint8_t mode_ = static_cast<uint8_t>(Mode::Usr);
  uint8_t it_at_start_ = 0;  // ITSTATE of the instruction in an IT block (for a fault in it)
  uint32_t aif_ = 0;         // CPSR bits E, A, I, F in place (9..6)
  uint32_t bank_sp_[7] = {}, bank_lr_[7] = {}, spsr_[7] = {};
  uint32_t elr_hyp_ = 0;
  bool has_hyp_ = false;
  bool virq_ = false, vfiq_ = false;
  FirmwareCall* firmware_ = nullptr;
  GenericTimer timer_;
  std::function<uint64_t()> counter_;
  std::function<void()> timer_listener_;
  std::vector<uint32_t> breakpoints_;
  std::vector<uint8_t> bp_pages_;  // by virtual page: 1 if a breakpoint is on it
  bool bp_hit_ = false;
  bool bp_skip_ = false;  // the first instruction of a run is not stopped at
  uint64_t mode_retired_[32] = {};
  uint64_t mode_start_ = 0;  // retired() when the current mode was entered
  std::array<uint64_t, static_cast<int>(Exception::Count)> hyp_exceptions_ = {};
  std::array<uint64_t, 64> hyp_ec_ = {};
  uint32_t usr_hi_[5] = {}, fiq_hi_[5] = {};  // r8-r12 of the mode not current (FIQ or others)
  SysRegs sys_ = {};
  // CP14 debug registers: breakpoint and watchpoint value/control pairs, DSCR, VCR, OSDLR.
  struct DebugRegs {
    uint32_t bvr[6], bcr[6], wvr[4], wcr[4];
    uint32_t dscr, vcr, osdlr;
    uint32_t teecr, teehbr;  // ThumbEE
  };
  DebugRegs dbg_ = {};
  std::array<uint64_t, static_cast<int>(Exception::Count)> exceptions_ = {};
  bool monitor_ = false;  // local exclusive monitor (one core: no other observer)
  uint32_t monitor_addr_ = 0;
  uint32_t tls_ = 0;
  uint32_t s_[32] = {};
  uint32_t fpscr_ = 0;
  // Host floating-point environment while guest code runs (see GuestFpScope).
  bool in_guest_fp_ = false;
  int guest_fp_flags_ = 0;  // host FE_* flags of the guest between runs
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
  bool mmu_on_ = false;
  // The PL1&0 regime's TLB, then Hyp's (on the heap: the core's hot fields stay together).
  std::vector<TlbEntry> tlb_storage_ = std::vector<TlbEntry>(2 * kTlbSize);
  TlbEntry* const tlb_ = tlb_storage_.data();
  TlbEntry* const tlb_hyp_ = tlb_ + kTlbSize;
  // The fast entries of tlb_ at PL1 and at PL0, then of tlb_hyp_ (index i mirrors tlb_[i]).
  std::vector<FastTlbEntry> fast_storage_ = std::vector<FastTlbEntry>(3 * kTlbSize);
  FastTlbEntry* cur_fast_ = fast_storage_.data();  // the current privilege's
  // The fast entries that mirror tlb_storage_[i] (one for Hyp's, two for PL1&0's).
  void fast_invalidate(size_t i) {
    if (i < kTlbSize) {
      fast_storage_[i] = FastTlbEntry{};
      fast_storage_[kTlbSize + i] = FastTlbEntry{};
    } else {
      fast_storage_[kTlbSize + i] = FastTlbEntry{};
    }
  }
  uint64_t tlb_misses_ = 0, tlb_flushes_ = 0;
  // Pages dropped by a write while one of their instructions may still be executing; freed at
  // the next decode.
  std::vector<std::unique_ptr<DecodedPage>> dropped_;
  // Retired instructions by class, in kRetiredBanks counters per class that consecutive
  // instructions of a block take in turn: one counter incremented by every instruction of a run
  // of ALU instructions was a chain of read-modify-writes through memory (a store forwarded to
  // the next load, several cycles each) that the executors could not overlap.
  static constexpr int kRetiredBanks = 4;
  std::array<uint64_t, kClasses* kRetiredBanks> retired_ = {};
  void count_retired(const Insn& in, uint32_t bank) {
    ++retired_[static_cast<int>(in.cls) * kRetiredBanks + (bank & (kRetiredBanks - 1))];
  }
  uint64_t decoded_ = 0;
};

}  // namespace vtoe::cpu::iss
