// System mode with the Virtualization Extensions: reset, HVC/SMC/ERET/WFI, the banked-register
// forms of MRS/MSR, debug access and breakpoints. CP15 is cp15.cpp; exception entry and
// interrupt routing are exception_entry.cpp.
#include <algorithm>
#include <cstring>

#include "models/cpu/iss/arm_core.h"

namespace vtoe::cpu::iss {

const char* to_string(Mode m) {
  switch (m) {
    case Mode::Usr:
      return "usr";
    case Mode::Fiq:
      return "fiq";
    case Mode::Irq:
      return "irq";
    case Mode::Svc:
      return "svc";
    case Mode::Abt:
      return "abt";
    case Mode::Hyp:
      return "hyp";
    case Mode::Und:
      return "und";
    case Mode::Sys:
      return "sys";
    default:
      return "?";
  }
}

void ArmCore::reset_system(bool hyp) {
  st_.system = true;
  st_.has_hyp = hyp;
  st_.wfi = false;
  halted_ = false;
  st_.monitor = false;
  uint32_t tls = st_.tls;  // TPIDRURO resets UNKNOWN; keep what a loader may have set
  st_.cp15 = Cp15Regs{};
  st_.tls = tls;
  st_.cp15.sctlr = 0x00c50078;  // Cortex-A15: MMU, caches, alignment checks off; V, TE clear
  st_.cp15.hsctlr = 0;          // UNKNOWN at reset; QEMU 7.2 reads 0 (its RES1 bits are not set)
  st_.cp15.actlr = 0;
  // VPIDR and VMPIDR reset to MIDR and MPIDR (QEMU 7.2; a PL1 guest reads them as its MIDR and
  // MPIDR until Hyp code writes them).
  st_.cp15.vpidr = Cp15::kMidr;
  st_.cp15.vmpidr = st_.mpidr;
  // HDCR.HPMN resets to the number of event counters QEMU 7.2's Cortex-A15 reports (6).
  st_.cp15.hdcr = Pmu::kCounters;
  st_.pmu.reset();
  // The mode's registers keep their values (UNKNOWN at reset); the banks are cleared.
  std::fill(std::begin(st_.spsr), std::end(st_.spsr), 0u);
  st_.elr_hyp = 0;
  st_.timer.reset();
  set_fpscr(0);
  uint8_t m = static_cast<uint8_t>(hyp ? Mode::Hyp : Mode::Svc);
  // The flags are UNKNOWN at reset; QEMU 7.2 starts with Z set (its ZF field is 0), and a
  // register-by-register comparison with it starts from the same CPSR.
  write_cpsr((1u << 30) | kA | kI | kF | m, 0xffffffffu);
  st_.mode = m;  // whatever write_cpsr did with the banks, this is the reset mode
  tlb_flush();
  update_attention();
}

bool ArmCore::pmu_poll() {
  if (st_.pmu.active(st_.cp15.hdcr)) {
    const Pmu::Context c = pmu_context();
    st_.pmu.sync(c);
    st_.pmu.rebase(c);
  }
  pmu_changed();
  return pmu_level_;
}

void ArmCore::restore_state(const ArmState& s) {
  const bool align_changes = (st_.cp15.sctlr ^ s.cp15.sctlr) & kSctlrA;
  st_ = s;
  if (align_changes) drop_all_decoded();
  tlb_flush();  // also a new code generation and the MMU's regime from the new state
  update_attention();
}

ArmCore::Statistics ArmCore::statistics() const {
  Statistics s{};
  s.retired = retired_;
  std::memcpy(s.mode_retired, mode_retired_, sizeof mode_retired_);
  s.mode_start = mode_start_;
  std::memcpy(s.mode_class_retired, mode_class_retired_, sizeof mode_class_retired_);
  std::memcpy(s.mode_class_start, mode_class_start_, sizeof mode_class_start_);
  s.exceptions = exc_.counts();
  s.irqs_handled = irqs_handled_;
  std::memcpy(s.irq_retired, irq_retired_, sizeof irq_retired_);
  std::memcpy(s.hyp_handled, hyp_handled_, sizeof hyp_handled_);
  std::memcpy(s.hyp_retired, hyp_retired_, sizeof hyp_retired_);
  return s;
}

void ArmCore::restore_statistics(const Statistics& s) {
  retired_ = s.retired;
  std::memcpy(mode_retired_, s.mode_retired, sizeof mode_retired_);
  mode_start_ = s.mode_start;
  std::memcpy(mode_class_retired_, s.mode_class_retired, sizeof mode_class_retired_);
  std::memcpy(mode_class_start_, s.mode_class_start, sizeof mode_class_start_);
  exc_.restore_counts(s.exceptions);
  irqs_handled_ = s.irqs_handled;
  std::memcpy(irq_retired_, s.irq_retired, sizeof irq_retired_);
  in_irq_ = false;
  std::memcpy(hyp_handled_, s.hyp_handled, sizeof hyp_handled_);
  std::memcpy(hyp_retired_, s.hyp_retired, sizeof hyp_retired_);
  in_hyp_span_ = false;
}

// BKPT: a debug event, taken as a prefetch abort (IFSR/IFSC "debug event", IFAR 0) as QEMU 7.2
// takes it (there is no external debugger to halt): to ABT mode, or in Hyp mode to its prefetch
// abort vector with HSR EC 0x21. The return address is the BKPT itself.
void ArmCore::bkpt(const Insn& in) {
  if (!st_.system) undefined(in);  // syscall emulation: reported as before
  exc_.take_debug_event(true);     // HSR.IL set for the 16-bit BKPT too, as QEMU 7.2
}

// SRS: LR and SPSR of the current mode onto the stack of mode `in.imm` (B9.3.16). Undefined in
// User and Hyp mode and for a mode that does not exist or is Hyp (QEMU 7.2 does the same); in
// System mode UNPREDICTABLE, undefined as in QEMU 7.2.
void ArmCore::srs(const Insn& in) {
  const uint8_t m = static_cast<uint8_t>(in.imm);
  if (!st_.system || st_.mode == static_cast<uint8_t>(Mode::Usr) || st_.mode == kHyp ||
      st_.mode == static_cast<uint8_t>(Mode::Sys) || bank_of(m) < 0 || m == kHyp) {
    undefined(in);
  }
  uint32_t& sp = bank_of(m) == bank_of(st_.mode) ? st_.r[13] : st_.bank_sp[bank_of(m)];
  const bool increment = in.flags & kFlagU, word_higher = bool(in.flags & kFlagP) == increment;
  uint32_t a = increment ? sp : sp - 8;
  if (word_higher) a += 4;
  check_aligned(a, 4, true);
  wr<uint32_t>(a, st_.r[14]);
  wr<uint32_t>(a + 4, st_.spsr[bank_of(st_.mode)]);
  if (in.flags & kFlagW) sp = increment ? sp + 8 : sp - 8;
}

// RFE: the PC and the CPSR from memory, an exception return (B9.3.13). Undefined in User and Hyp
// mode.
void ArmCore::rfe(const Insn& in) {
  if (!st_.system || st_.mode == static_cast<uint8_t>(Mode::Usr) || st_.mode == kHyp) {
    undefined(in);
  }
  const uint32_t base = st_.r[in.rn];
  const bool increment = in.flags & kFlagU, word_higher = bool(in.flags & kFlagP) == increment;
  uint32_t a = increment ? base : base - 8;
  if (word_higher) a += 4;
  check_aligned(a, 4);
  const uint32_t target = rd<uint32_t>(a);
  const uint32_t spsr = rd<uint32_t>(a + 4);
  if (in.flags & kFlagW) st_.r[in.rn] = increment ? base + 8 : base - 8;
  return_to(target, spsr);
}

void ArmCore::hvc(const Insn& in) {
  if (!st_.system || st_.mode == static_cast<uint8_t>(Mode::Usr)) undefined(in);
  if (!st_.has_hyp) {
    if (firmware_ && firmware_->hvc(*this)) return;
    undefined(in);
  }
  // HVC completes: the return address is the next instruction. From Hyp mode it takes the HVC
  // vector (0x08), from PL1 the Hyp trap vector (0x14).
  exc_.enter_hyp_with_syndrome(hsr_ec::kHvc, in.imm & 0xffff, in.len == 4,
                               st_.mode == kHyp ? 0x08 : 0x14, st_.next);
}

void ArmCore::smc(const Insn& in) {
  if (!st_.system || st_.mode == static_cast<uint8_t>(Mode::Usr)) undefined(in);
  if (below_hyp() && (st_.cp15.hcr & kHcrTsc)) {
    hyp_trap(hsr_ec::kSmc, 0, in);
    return;
  }
  // SMC is the firmware's conduit only with Hyp mode (QEMU's virt: HVC without it); otherwise,
  // with no Monitor mode, it is undefined.
  if (st_.has_hyp && firmware_ && firmware_->smc(*this)) return;
  undefined(in);
}

void ArmCore::wfi(const Insn& in) {
  if (!st_.system) return;  // syscall emulation: a NOP
  // WFE completes at once, never trapped (HCR.TWE) nor asleep: a hint that may complete at any
  // time, as QEMU 7.2 runs it (a yield); with one core there is no event to wait for.
  if (in.sub) {
    if (cluster_) request_yield();  // let the other cores run (the holder of a lock)
    return;
  }
  // A pending wake-up event (an interrupt, masked or not; a virtual one only where HCR routes
  // it) completes WFI at once; HCR.TWI traps only a WFI that would suspend execution
  // (ARM ARM B1.14.9; QEMU does the same).
  const uint32_t hcr = below_hyp() ? st_.cp15.hcr : 0;
  const bool wake = st_.irq || st_.fiq || ((hcr & kHcrImo) && (st_.virq || (hcr & kHcrVi))) ||
                    ((hcr & kHcrFmo) && (st_.vfiq || (hcr & kHcrVf))) ||
                    ((hcr & kHcrAmo) && (hcr & kHcrVa));
  if (wake) return;
  if (below_hyp() && (st_.cp15.hcr & kHcrTwi)) {
    hyp_trap(hsr_ec::kWfiWfe, trap_cond(in), in);
    return;
  }
  st_.wfi = true;
  update_attention();
}

void ArmCore::eret(const Insn& in) {
  if (!st_.system || st_.mode == static_cast<uint8_t>(Mode::Usr)) undefined(in);
  if (st_.mode == kHyp) {
    exception_return(st_.elr_hyp);
    return;
  }
  exception_return(st_.r[14]);  // elsewhere ERET is SUBS PC, LR, #0
}

// SYSm (with R) of the banked MRS/MSR (B9.2.3). Registers of the current mode, Monitor mode's
// (no Security Extensions) and Hyp mode's from a PL1 mode are UNPREDICTABLE: undefined here.
uint32_t* ArmCore::banked_register(uint32_t sysm, bool& is_spsr) {
  bool r = sysm & 32;
  sysm &= 31;
  is_spsr = r;
  uint8_t target;
  int n;  // register number, or -1 for SPSR / ELR_hyp
  if (r) {
    switch (sysm) {
      case 14:
        target = 0x11;
        break;
      case 16:
        target = 0x12;
        break;
      case 18:
        target = 0x13;
        break;
      case 20:
        target = 0x17;
        break;
      case 22:
        target = 0x1B;
        break;
      case 30:
        target = kHyp;
        break;
      default:
        return nullptr;
    }
    // SPSR_hyp is Monitor mode's to access (UNPREDICTABLE elsewhere; qemu-system-arm 7.2
    // makes it undefined in Hyp mode too, and so does the core: Hyp code uses MSR SPSR_<fields>).
    if (target == st_.mode || target == kHyp) return nullptr;
    return &st_.spsr[bank_of(target)];
  }
  if (sysm <= 6) {
    target = 0x10;
    n = 8 + static_cast<int>(sysm);
  } else if (sysm >= 8 && sysm <= 14) {
    target = 0x11;
    n = static_cast<int>(sysm);
  } else if (sysm >= 16 && sysm <= 23) {
    static const uint8_t kModes[4] = {0x12, 0x13, 0x17, 0x1B};
    target = kModes[(sysm - 16) / 2];
    n = (sysm & 1) ? 13 : 14;
  } else if (sysm == 30) {  // ELR_hyp: from Hyp mode only
    if (st_.mode != kHyp) return nullptr;
    return &st_.elr_hyp;
  } else {
    return nullptr;  // Monitor mode's, and SP_hyp (accessible from Monitor mode only)
  }
  if (target == st_.mode || (target == 0x10 && st_.mode == 0x1F)) return nullptr;
  if (target == 0x10 && st_.mode != 0x11 && n < 13) return nullptr;  // r8-r12_usr are the current
  if (target == 0x11 && st_.mode == 0x11) return nullptr;
  if (n >= 8 && n <= 12) return target == 0x11 ? &st_.fiq_hi[n - 8] : &st_.usr_hi[n - 8];
  if (n == 13) return &st_.bank_sp[bank_of(target)];
  // LR_usr is Hyp mode's own LR: UNPREDICTABLE there, undefined as in QEMU 7.2.
  if (target == 0x10 && n == 14 && st_.mode == kHyp) return nullptr;
  return &st_.bank_lr[lr_bank_of(target)];
}

void ArmCore::mrs_banked(const Insn& in) {
  // Part of the Virtualization Extensions: undefined without them (as QEMU 7.2 without EL2).
  if (!st_.system || !privileged() || !st_.has_hyp) undefined(in);
  bool is_spsr;
  uint32_t* reg = banked_register(in.imm, is_spsr);
  if (!reg) undefined(in);
  st_.r[in.rd] = *reg;
}

void ArmCore::msr_banked(const Insn& in) {
  // Part of the Virtualization Extensions: undefined without them (as QEMU 7.2 without EL2).
  if (!st_.system || !privileged() || !st_.has_hyp) undefined(in);
  bool is_spsr;
  uint32_t* reg = banked_register(in.imm, is_spsr);
  if (!reg) undefined(in);
  *reg = st_.r[in.rm];
}

uint64_t ArmCore::retired_in_mode(Mode m) const {
  uint8_t i = static_cast<uint8_t>(m) & 31;
  uint64_t n = mode_retired_[i];
  if (i == st_.mode) n += retired() - mode_start_;
  return n;
}

uint64_t ArmCore::retired_in_mode(Mode m, InsnClass c) const {
  const uint8_t i = static_cast<uint8_t>(m) & 31;
  const int k = static_cast<int>(c);
  uint64_t n = mode_class_retired_[i][k];
  if (i == st_.mode) n += retired(c) - mode_class_start_[k];
  return n;
}

void ArmCore::add_breakpoint(uint32_t va) {
  if (std::find(breakpoints_.begin(), breakpoints_.end(), va) == breakpoints_.end()) {
    breakpoints_.push_back(va);
  }
  if (bp_pages_.empty()) bp_pages_.resize(PagedMemory::kPages);
  bp_pages_[va >> PagedMemory::kPageBits] = 1;
}

void ArmCore::remove_breakpoint(uint32_t va) {
  breakpoints_.erase(std::remove(breakpoints_.begin(), breakpoints_.end(), va), breakpoints_.end());
  if (bp_pages_.empty()) return;
  const uint32_t page = va >> PagedMemory::kPageBits;
  bp_pages_[page] = std::any_of(breakpoints_.begin(), breakpoints_.end(),
                                [&](uint32_t b) { return b >> PagedMemory::kPageBits == page; });
}

bool ArmCore::debug_read(uint32_t va, void* dst, uint32_t len) {
  auto* out = static_cast<uint8_t*>(dst);
  for (uint32_t i = 0; i < len; ++i) {
    uint32_t pa;
    if (!mmu_.debug_translate(va + i, pa)) return false;
    try {
      out[i] = mem_.read8(pa);
    } catch (const GuestFault&) {
      return false;
    }
  }
  return true;
}

bool ArmCore::debug_write(uint32_t va, const void* src, uint32_t len) {
  const auto* in = static_cast<const uint8_t*>(src);
  for (uint32_t i = 0; i < len; ++i) {
    uint32_t pa;
    if (!mmu_.debug_translate(va + i, pa)) return false;
    try {
      mem_.write8(pa, in[i]);
    } catch (const GuestFault&) {
      return false;
    }
  }
  return true;
}

}  // namespace vtoe::cpu::iss
