// System mode with the Virtualization Extensions: reset, Hyp mode and its exception entry,
// interrupt routing (HCR.IMO/FMO/AMO, virtual interrupts), HVC/SMC/ERET/WFI, the banked-register
// forms of MRS/MSR, debug access and breakpoints. CP15 is in arm_core_cp15.cpp.
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
  system_ = true;
  has_hyp_ = hyp;
  wfi_ = false;
  halted_ = false;
  monitor_ = false;
  uint32_t tls = tls_;  // TPIDRURO resets UNKNOWN; keep what a loader may have set
  sys_ = SysRegs{};
  tls_ = tls;
  sys_.sctlr = 0x00c50078;   // Cortex-A15: MMU, caches, alignment checks off; V, TE clear
  sys_.hsctlr = 0x30c50818;  // the RES1 bits
  sys_.actlr = 0;
  // The mode's registers keep their values (UNKNOWN at reset); the banks are cleared.
  std::fill(std::begin(spsr_), std::end(spsr_), 0u);
  elr_hyp_ = 0;
  timer_.reset();
  set_fpscr(0);
  uint8_t m = static_cast<uint8_t>(hyp ? Mode::Hyp : Mode::Svc);
  write_cpsr(kA | kI | kF | m, 0xffffffffu);
  mode_ = m;  // whatever write_cpsr did with the banks, this is the reset mode
  tlb_flush();
  update_attention();
}

void ArmCore::enter_hyp(uint32_t offset, uint32_t return_addr, uint32_t spsr) {
  switch_mode(kHyp);
  spsr_[bank_of(kHyp)] = spsr;
  elr_hyp_ = return_addr;
  aif_ = (aif_ | kA | kI | kF) & ~(1u << 9);  // no EL3: SCR.EA/FIQ/IRQ are 0; HSCTLR.EE = 0
  itstate_ = 0;
  thumb_ = sys_.hsctlr & kSctlrTe;
  pc_ = next_ = sys_.hvbar + offset;
  wfi_ = false;
  update_attention();
}

uint32_t ArmCore::trap_cond(const Insn& in) const {
  uint32_t cond = thumb_ ? (in_it_ ? uint32_t{it_at_start_} >> 4 : 0xEu) : in.cond;
  return (1u << 24) | ((cond & 0xF) << 20);
}

void ArmCore::hyp_trap(uint8_t ec, uint32_t iss, const Insn& in, uint32_t hyp_offset) {
  // The trapped instruction did not execute: its IT state is the one to return to.
  if (in_it_) itstate_ = it_at_start_;
  sys_.hsr = hsr_value(ec, iss, in.len == 4);
  ++hyp_ec_[ec];
  uint32_t offset = mode_ == kHyp ? hyp_offset : 0x14;
  if (offset == 0x14) ++hyp_exceptions_[static_cast<int>(Exception::HypTrap)];
  enter_hyp(offset, pc_, cpsr());
  // The instruction that trapped does not complete: what step_inner would make the next PC is
  // the vector.
}

// Interrupt routing (B1.8.5, B1.9.8): outside Hyp mode, HCR.FMO/IMO/AMO send the physical
// interrupts to Hyp mode whatever CPSR.F/I/A say, and enable the virtual ones (HCR.VF/VI/VA or
// the GIC's virtual lines), which CPSR masks. In Hyp mode only physical interrupts are taken,
// and CPSR masks them.
// Codes: 1 physical FIQ to FIQ mode, 2 to Hyp; 3 physical IRQ to IRQ mode, 4 to Hyp; 5 virtual
// FIQ; 6 virtual IRQ; 7 virtual abort.
int ArmCore::pending_interrupt() const {
  bool hyp = mode_ == kHyp;
  uint32_t hcr = hyp ? 0 : sys_.hcr;
  if (fiq_) {
    if (hyp) {
      if (!(aif_ & kF)) return 2;
    } else if (hcr & kHcrFmo) {
      return 2;
    } else if (!(aif_ & kF)) {
      return 1;
    }
  }
  if (irq_) {
    if (hyp) {
      if (!(aif_ & kI)) return 4;
    } else if (hcr & kHcrImo) {
      return 4;
    } else if (!(aif_ & kI)) {
      return 3;
    }
  }
  if (hyp) return 0;
  if ((hcr & kHcrAmo) && (hcr & kHcrVa) && !(aif_ & kA)) return 7;
  if ((hcr & kHcrFmo) && (vfiq_ || (hcr & kHcrVf)) && !(aif_ & kF)) return 5;
  if ((hcr & kHcrImo) && (virq_ || (hcr & kHcrVi)) && !(aif_ & kI)) return 6;
  return 0;
}

bool ArmCore::take_pending_interrupt() {
  switch (pending_interrupt()) {
    case 1:
    case 5:
      take_exception(Exception::Fiq, pc_ + 4, cpsr());
      return true;
    case 3:
    case 6:
      take_exception(Exception::Irq, pc_ + 4, cpsr());
      return true;
    case 2:
      ++hyp_exceptions_[static_cast<int>(Exception::Fiq)];
      enter_hyp(0x1C, pc_, cpsr());
      return true;
    case 4:
      ++hyp_exceptions_[static_cast<int>(Exception::Irq)];
      enter_hyp(0x18, pc_, cpsr());
      return true;
    case 7:  // a virtual (asynchronous) abort: taken once, HCR.VA clears
      sys_.hcr &= ~kHcrVa;
      sys_.dfsr = 0x1406;  // asynchronous external abort (short format: FS 10110), ExT
      take_exception(Exception::DataAbort, pc_ + 8, cpsr());
      return true;
    default:
      return false;
  }
}

void ArmCore::hvc(const Insn& in) {
  if (!system_ || mode_ == static_cast<uint8_t>(Mode::Usr)) undefined(in);
  if (!has_hyp_) {
    if (firmware_ && firmware_->hvc(*this)) return;
    undefined(in);
  }
  // HVC completes: the return address is the next instruction. From Hyp mode it takes the HVC
  // vector (0x08), from PL1 the Hyp trap vector (0x14).
  sys_.hsr = hsr_value(hsr_ec::kHvc, in.imm & 0xffff, in.len == 4);
  ++hyp_ec_[hsr_ec::kHvc];
  uint32_t offset = mode_ == kHyp ? 0x08 : 0x14;
  if (offset == 0x14) ++hyp_exceptions_[static_cast<int>(Exception::HypTrap)];
  enter_hyp(offset, next_, cpsr());
}

void ArmCore::smc(const Insn& in) {
  if (!system_ || mode_ == static_cast<uint8_t>(Mode::Usr)) undefined(in);
  if (below_hyp() && (sys_.hcr & kHcrTsc)) {
    hyp_trap(hsr_ec::kSmc, 0, in);
    return;
  }
  if (firmware_ && firmware_->smc(*this)) return;
  undefined(in);
}

void ArmCore::wfi(const Insn& in) {
  if (!system_) return;  // syscall emulation: a NOP
  // A pending wake-up event (an interrupt, masked or not; a virtual one only where HCR routes
  // it) completes WFI at once; HCR.TWI/TWE trap only a WFI/WFE that would suspend execution
  // (ARM ARM B1.14.9; QEMU does the same).
  const uint32_t hcr = below_hyp() ? sys_.hcr : 0;
  const bool wake = irq_ || fiq_ || ((hcr & kHcrImo) && (virq_ || (hcr & kHcrVi))) ||
                    ((hcr & kHcrFmo) && (vfiq_ || (hcr & kHcrVf))) ||
                    ((hcr & kHcrAmo) && (hcr & kHcrVa));
  if (wake) return;
  if (below_hyp() && (sys_.hcr & (in.sub ? kHcrTwe : kHcrTwi))) {
    hyp_trap(hsr_ec::kWfiWfe, trap_cond(in) | in.sub, in);
    return;
  }
  // WFE waits as WFI does (one core: no event from another).
  wfi_ = true;
  update_attention();
}

void ArmCore::eret(const Insn& in) {
  if (!system_ || bank_of(mode_) == 0) undefined(in);
  if (mode_ == kHyp) {
    exception_return(elr_hyp_);
    return;
  }
  exception_return(r_[14]);  // elsewhere ERET is SUBS PC, LR, #0
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
    if (target == mode_ || target == kHyp) return nullptr;
    return &spsr_[bank_of(target)];
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
    if (mode_ != kHyp) return nullptr;
    return &elr_hyp_;
  } else {
    return nullptr;  // Monitor mode's, and SP_hyp (accessible from Monitor mode only)
  }
  if (target == mode_ || (target == 0x10 && mode_ == 0x1F)) return nullptr;
  if (target == 0x10 && mode_ != 0x11 && n < 13) return nullptr;  // r8-r12_usr are the current
  if (target == 0x11 && mode_ == 0x11) return nullptr;
  if (n >= 8 && n <= 12) return target == 0x11 ? &fiq_hi_[n - 8] : &usr_hi_[n - 8];
  if (n == 13) return &bank_sp_[bank_of(target)];
  // LR: Hyp mode's LR is LR_usr, which in Hyp mode is the current r14.
  if (target == 0x10 && mode_ == kHyp) return &r_[14];
  return &bank_lr_[lr_bank_of(target)];
}

void ArmCore::mrs_banked(const Insn& in) {
  if (!system_ || !privileged()) undefined(in);
  bool is_spsr;
  uint32_t* reg = banked_register(in.imm, is_spsr);
  if (!reg) undefined(in);
  r_[in.rd] = *reg;
}

void ArmCore::msr_banked(const Insn& in) {
  if (!system_ || !privileged()) undefined(in);
  bool is_spsr;
  uint32_t* reg = banked_register(in.imm, is_spsr);
  if (!reg) undefined(in);
  *reg = r_[in.rm];
}

uint64_t ArmCore::retired_in_mode(Mode m) const {
  uint8_t i = static_cast<uint8_t>(m) & 31;
  uint64_t n = mode_retired_[i];
  if (i == mode_) n += retired() - mode_start_;
  return n;
}

void ArmCore::add_breakpoint(uint32_t va) {
  if (std::find(breakpoints_.begin(), breakpoints_.end(), va) == breakpoints_.end()) {
    breakpoints_.push_back(va);
  }
  if (bp_pages_.empty()) bp_pages_.resize(GuestMemory::kPages);
  bp_pages_[va >> GuestMemory::kPageBits] = 1;
}

void ArmCore::remove_breakpoint(uint32_t va) {
  breakpoints_.erase(std::remove(breakpoints_.begin(), breakpoints_.end(), va), breakpoints_.end());
  if (bp_pages_.empty()) return;
  const uint32_t page = va >> GuestMemory::kPageBits;
  bp_pages_[page] = std::any_of(breakpoints_.begin(), breakpoints_.end(),
                                [&](uint32_t b) { return b >> GuestMemory::kPageBits == page; });
}

bool ArmCore::debug_read(uint32_t va, void* dst, uint32_t len) {
  auto* out = static_cast<uint8_t*>(dst);
  for (uint32_t i = 0; i < len; ++i) {
    uint32_t pa;
    if (!debug_translate(va + i, pa)) return false;
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
    if (!debug_translate(va + i, pa)) return false;
    try {
      mem_.write8(pa, in[i]);
    } catch (const GuestFault&) {
      return false;
    }
  }
  return true;
}

}  // namespace vtoe::cpu::iss
