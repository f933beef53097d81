// Exception entry of one core (exception_entry.h).
#include "models/cpu/iss/exception_entry.h"

#include <cstdio>

#include "models/cpu/iss/arm_core.h"

namespace vtoe::cpu::iss {

const char* to_string(Exception e) {
  switch (e) {
    case Exception::Undefined:
      return "undefined";
    case Exception::Svc:
      return "svc";
    case Exception::PrefetchAbort:
      return "prefetch_abort";
    case Exception::DataAbort:
      return "data_abort";
    case Exception::Irq:
      return "irq";
    case Exception::Fiq:
      return "fiq";
    case Exception::HypTrap:
      return "hyp_trap";
    default:
      return "?";
  }
}

// Vector offsets, the mode each exception enters and the CPSR mask bits it sets (ARMv7-A
// non-secure PL1 modes: B1.8; exceptions to Hyp mode are enter_hyp's).
void ExceptionEntry::take_exception(Exception e, uint32_t lr, uint32_t spsr) {
  ArmCore& c = core_;
  struct Entry {
    Mode mode;
    uint32_t offset, mask;
  };
  static constexpr Entry kEntry[] = {{Mode::Und, 0x04, ArmCore::kI},
                                     {Mode::Svc, 0x08, ArmCore::kI},
                                     {Mode::Abt, 0x0C, ArmCore::kA | ArmCore::kI},
                                     {Mode::Abt, 0x10, ArmCore::kA | ArmCore::kI},
                                     {Mode::Irq, 0x18, ArmCore::kA | ArmCore::kI},
                                     {Mode::Fiq, 0x1C, ArmCore::kA | ArmCore::kI | ArmCore::kF}};
  const Entry& k = kEntry[static_cast<int>(e)];
  c.switch_mode(static_cast<uint8_t>(k.mode));
  c.st_.spsr[c.bank_of(c.st_.mode)] = spsr;
  c.st_.r[14] = lr;
  c.st_.aif = (c.st_.aif | k.mask) & ~(1u << 9);  // E = SCTLR.EE = 0: little-endian
  c.st_.itstate = 0;
  c.st_.thumb = c.st_.cp15.sctlr & ArmCore::kSctlrTe;
  uint32_t base = (c.st_.cp15.sctlr & ArmCore::kSctlrV) ? 0xffff0000u : c.st_.cp15.vbar;
  c.st_.pc = c.st_.next = base + k.offset;
  ++taken_[static_cast<int>(e)];
  ++entries_;
  c.update_attention();
}

ExceptionEntry::Site ExceptionEntry::site() const {
  return Site{core_.st_.pc, core_.st_.mode, core_.st_.thumb};
}

void ExceptionEntry::take_fault(Exception e, uint32_t addr, bool write, bool alignment) {
  const Site from = site();
  take_fault_entry(e, addr, write, alignment);
  if (e == Exception::PrefetchAbort) ++fetch_faults_;
  check_progress(from, e);
}

void ExceptionEntry::take_mmu_fault(const MmuAbort& a) {
  const Site from = site();
  take_mmu_fault_entry(a);
  if (a.fetch) ++fetch_faults_;
  const bool to_hyp = core_.st_.mode == ArmCore::kHyp;
  check_progress(from, to_hyp    ? Exception::HypTrap
                       : a.fetch ? Exception::PrefetchAbort
                                 : Exception::DataAbort);
}

void ExceptionEntry::check_progress(const Site& from, Exception kind) {
  ArmCore& c = core_;
  const uint64_t retired = c.retired();
  const bool same = have_last_ && from.pc == last_from_.pc && from.mode == last_from_.mode &&
                    kind == last_kind_ && c.st_.pc == last_vector_ &&
                    retired - last_retired_ <= kStormGap;
  repeats_ = same ? repeats_ + 1 : 1;
  have_last_ = true;
  last_from_ = from;
  last_kind_ = kind;
  last_vector_ = c.st_.pc;
  last_to_mode_ = c.st_.mode;
  last_retired_ = retired;
  if (repeats_ >= kStormEntries) {
    throw ExceptionLoop("exception loop with no progress: " + last_fault());
  }
}

std::string ExceptionEntry::last_fault() const {
  if (!have_last_) return "";
  // The faulting instruction's encoding, as the current translation reads it (if it can).
  char insn[32] = "unreadable";
  uint8_t bytes[4];
  if (last_from_.thumb) {
    if (core_.debug_read(last_from_.pc, bytes, 2)) {
      uint32_t hw1 = bytes[0] | (uint32_t{bytes[1]} << 8);
      if ((hw1 >> 11) >= 0x1D && core_.debug_read(last_from_.pc + 2, bytes + 2, 2)) {
        std::snprintf(insn, sizeof insn, "T32 0x%04x%04x", hw1, bytes[2] | (bytes[3] << 8));
      } else {
        std::snprintf(insn, sizeof insn, "T32 0x%04x", hw1);
      }
    }
  } else if (core_.debug_read(last_from_.pc, bytes, 4)) {
    std::snprintf(insn, sizeof insn, "A32 0x%08x",
                  bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (uint32_t{bytes[3]} << 24));
  }
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s from the instruction at 0x%08x (%s, %s mode) to the vector at 0x%08x (%s "
                "mode), %u time%s in a row",
                to_string(last_kind_), last_from_.pc, insn,
                to_string(static_cast<Mode>(last_from_.mode)), last_vector_,
                to_string(static_cast<Mode>(last_to_mode_)), repeats_, repeats_ == 1 ? "" : "s");
  return buf;
}

uint32_t ExceptionEntry::data_abort_iss(bool& il32) const {
  il32 = false;
  const Insn* in = core_.current_insn();
  if (!in || in->op != Op::LoadStore || in->sub == kLdrd || in->sub == kStrd ||
      !(in->flags & kFlagP) || (in->flags & kFlagW)) {
    return 0;
  }
  uint32_t sas = 2, sse = 0;
  switch (in->sub) {
    case kStrb:
    case kLdrb:
      sas = 0;
      break;
    case kLdrsb:
      sas = 0;
      sse = 1;
      break;
    case kStrh:
    case kLdrh:
      sas = 1;
      break;
    case kLdrsh:
      sas = 1;
      sse = 1;
      break;
    default:
      break;
  }
  // IL from the instruction, not the next PC: inside a basic block that is not kept per
  // instruction.
  il32 = in->len == 4;
  return (1u << 24) | (sas << 22) | (sse << 21) | (uint32_t{in->rd} << 16);
}

void ExceptionEntry::take_debug_event(bool il32) {
  ArmCore& c = core_;
  // The BKPT did not complete: its IT state is the one to return to.
  if (c.st_.in_it) c.st_.itstate = c.st_.it_at_start;
  if (c.st_.mode == ArmCore::kHyp) {
    c.st_.cp15.hifar = 0;  // the address is UNKNOWN; QEMU 7.2 writes 0
    enter_hyp_with_syndrome(hsr_ec::kPrefetchAbortHyp, 0x22, il32, 0x0C, c.st_.pc);
    return;
  }
  c.st_.cp15.ifar = 0;
  c.st_.cp15.ifsr = (c.st_.cp15.ttbcr >> 31) ? 0x222u : 0x2u;  // debug event
  take_exception(Exception::PrefetchAbort, c.st_.pc + 4, c.cpsr());
}

void ExceptionEntry::take_fault_entry(Exception e, uint32_t addr, bool write, bool alignment) {
  ArmCore& c = core_;
  if (!c.st_.system) throw;  // syscall emulation: the caller reports it
  uint32_t base = c.st_.mode == ArmCore::kHyp             ? c.st_.cp15.hvbar
                  : (c.st_.cp15.sctlr & ArmCore::kSctlrV) ? 0xffff0000u
                                                          : c.st_.cp15.vbar;
  // A fetch fault in the vector table itself would repeat for ever.
  if (e == Exception::PrefetchAbort && c.st_.pc - base < 0x20) throw;
  // The faulting instruction did not execute: its IT state is the one to return to.
  if (e != Exception::PrefetchAbort && c.st_.in_it) c.st_.itstate = c.st_.it_at_start;
  if (c.st_.mode == ArmCore::kHyp) {  // taken in Hyp mode, with a syndrome
    uint32_t iss = 0;
    uint8_t ec = hsr_ec::kUnknown;
    uint32_t offset = 0x04;
    if (e == Exception::PrefetchAbort) {
      ec = hsr_ec::kPrefetchAbortHyp;
      iss = 0x10;  // IFSC: synchronous external abort (long-descriptor format)
      c.st_.cp15.hifar = addr;
      offset = 0x0C;
    }
    // IL is UNK/SBZP in ARMv7 where the syndrome has no instruction to describe: EC 0x00,
    // prefetch aborts, data aborts without ISV (QEMU clears it there too). 0, then.
    bool il32 = false;
    if (e == Exception::DataAbort) {
      ec = hsr_ec::kDataAbortHyp;
      iss = (alignment ? 0x21u : 0x10u) | (write ? 1u << 6 : 0u) | data_abort_iss(il32);
      c.st_.cp15.hdfar = addr;
      offset = 0x10;
    }
    c.st_.cp15.hsr = hsr_value(ec, iss, il32);
    ++hyp_ec_[ec];
    enter_hyp(offset, c.st_.pc, c.cpsr());
    return;
  }
  // The status in the format TTBCR.EAE selects (whether or not the MMU is on, as QEMU): short
  // 0x8 external abort, 0x1 alignment; long (LPAE bit 9) 0x10 and 0x21.
  const bool lpae = c.st_.cp15.ttbcr >> 31;
  uint32_t lr;
  switch (e) {
    case Exception::Undefined:
      lr = c.st_.pc + (c.st_.thumb ? 2 : 4);
      break;
    case Exception::PrefetchAbort:
      lr = c.st_.pc + 4;
      c.st_.cp15.ifar = addr;
      c.st_.cp15.ifsr = lpae ? 0x210u : 0x8u;  // synchronous external abort
      break;
    default:
      lr = c.st_.pc + 8;
      c.st_.cp15.dfar = addr;
      c.st_.cp15.dfsr = (lpae ? (alignment ? 0x221u : 0x210u) : (alignment ? 0x1u : 0x8u)) |
                        (write ? 1u << 11 : 0u);
      break;
  }
  take_exception(e, lr, c.cpsr());
}

void ExceptionEntry::enter_hyp(uint32_t offset, uint32_t return_addr, uint32_t spsr) {
  ArmCore& c = core_;
  if (c.st_.mode != ArmCore::kHyp)  // (the HSR is written before, for every synchronous cause)
    c.hyp_entered(offset == 0x18   ? ArmCore::kHypCauseIrq
                  : offset == 0x1C ? ArmCore::kHypCauseFiq
                                   : static_cast<int>(c.st_.cp15.hsr >> 26));
  c.switch_mode(ArmCore::kHyp);
  c.st_.spsr[c.bank_of(ArmCore::kHyp)] = spsr;
  c.st_.elr_hyp = return_addr;
  c.st_.aif = (c.st_.aif | ArmCore::kA | ArmCore::kI | ArmCore::kF) &
              ~(1u << 9);  // no EL3: SCR.EA/FIQ/IRQ are 0; HSCTLR.EE = 0
  c.st_.itstate = 0;
  c.st_.thumb = c.st_.cp15.hsctlr & ArmCore::kSctlrTe;
  c.st_.pc = c.st_.next = c.st_.cp15.hvbar + offset;
  c.st_.wfi = false;
  // A hypervisor model takes it from here (the entry from Hyp mode itself is code's: there is
  // none with a model, so that one is the architecture's, at HVBAR).
  if (c.hyp_exits_ && c.st_.spsr[c.bank_of(ArmCore::kHyp)] % 32 != ArmCore::kHyp)
    c.hyp_exit_ = true;
  c.update_attention();
  ++entries_;
}

void ExceptionEntry::enter_hyp_with_syndrome(uint8_t ec, uint32_t iss, bool il32, uint32_t offset,
                                             uint32_t return_addr) {
  ArmCore& c = core_;
  c.st_.cp15.hsr = hsr_value(ec, iss, il32);
  ++hyp_ec_[ec];
  if (offset == 0x14) ++hyp_taken_[static_cast<int>(Exception::HypTrap)];
  enter_hyp(offset, return_addr, c.cpsr());
}

uint32_t ExceptionEntry::trap_cond(const Insn& in) const {
  ArmCore& c = core_;
  uint32_t cond = c.st_.thumb ? (c.st_.in_it ? uint32_t{c.st_.it_at_start} >> 4 : 0xEu) : in.cond;
  return (1u << 24) | ((cond & 0xF) << 20);
}

void ExceptionEntry::hyp_trap(uint8_t ec, uint32_t iss, const Insn& in, uint32_t hyp_offset) {
  ArmCore& c = core_;
  // The trapped instruction did not execute: its IT state is the one to return to.
  if (c.st_.in_it) c.st_.itstate = c.st_.it_at_start;
  enter_hyp_with_syndrome(ec, iss, in.len == 4, c.st_.mode == ArmCore::kHyp ? hyp_offset : 0x14,
                          c.st_.pc);
  // The instruction that trapped does not complete: what step_inner would make the next PC is
  // the vector.
}

// Interrupt routing (B1.8.5, B1.9.8): outside Hyp mode, HCR.FMO/IMO/AMO send the physical
// interrupts to Hyp mode whatever CPSR.F/I/A say, and enable the virtual ones (HCR.VF/VI/VA or
// the GIC's virtual lines), which CPSR masks. In Hyp mode only physical interrupts are taken,
// and CPSR masks them.
// Codes: 1 physical FIQ to FIQ mode, 2 to Hyp; 3 physical IRQ to IRQ mode, 4 to Hyp; 5 virtual
// FIQ; 6 virtual IRQ; 7 virtual abort.
int ExceptionEntry::pending_interrupt() const {
  ArmCore& c = core_;
  bool hyp = c.st_.mode == ArmCore::kHyp;
  uint32_t hcr = hyp ? 0 : c.st_.cp15.hcr;
  if (c.st_.fiq) {
    if (hyp) {
      if (!(c.st_.aif & ArmCore::kF)) return 2;
    } else if (hcr & ArmCore::kHcrFmo) {
      return 2;
    } else if (!(c.st_.aif & ArmCore::kF)) {
      return 1;
    }
  }
  if (c.st_.irq) {
    if (hyp) {
      if (!(c.st_.aif & ArmCore::kI)) return 4;
    } else if (hcr & ArmCore::kHcrImo) {
      return 4;
    } else if (!(c.st_.aif & ArmCore::kI)) {
      return 3;
    }
  }
  if (hyp) return 0;
  if ((hcr & ArmCore::kHcrAmo) && (hcr & ArmCore::kHcrVa) && !(c.st_.aif & ArmCore::kA)) return 7;
  if ((hcr & ArmCore::kHcrFmo) && (c.st_.vfiq || (hcr & ArmCore::kHcrVf)) &&
      !(c.st_.aif & ArmCore::kF))
    return 5;
  if ((hcr & ArmCore::kHcrImo) && (c.st_.virq || (hcr & ArmCore::kHcrVi)) &&
      !(c.st_.aif & ArmCore::kI))
    return 6;
  return 0;
}

bool ExceptionEntry::take_pending_interrupt() {
  ArmCore& c = core_;
  switch (pending_interrupt()) {
    case 1:
    case 5:
      take_exception(Exception::Fiq, c.st_.pc + 4, c.cpsr());
      return true;
    case 3:
    case 6:
      c.irq_entered();
      take_exception(Exception::Irq, c.st_.pc + 4, c.cpsr());
      return true;
    case 2:
      ++hyp_taken_[static_cast<int>(Exception::Fiq)];
      enter_hyp(0x1C, c.st_.pc, c.cpsr());
      return true;
    case 4:
      ++hyp_taken_[static_cast<int>(Exception::Irq)];
      enter_hyp(0x18, c.st_.pc, c.cpsr());
      return true;
    case 7:  // a virtual (asynchronous) abort: taken once, HCR.VA clears
      c.st_.cp15.hcr &= ~ArmCore::kHcrVa;
      c.st_.cp15.dfsr = 0x1406;  // asynchronous external abort (short format: FS 10110), ExT
      take_exception(Exception::DataAbort, c.st_.pc + 8, c.cpsr());
      return true;
    default:
      return false;
  }
}

void ExceptionEntry::take_mmu_fault_entry(const MmuAbort& a) {
  ArmCore& c = core_;
  const MmuFault& f = a.fault;
  const bool fetch = a.fetch;
  if (fetch) {
    // A fetch fault in the vector table the abort would enter repeats for ever (no instruction
    // ever retires): end the run with the fault instead.
    const bool to_hyp = c.st_.mode == ArmCore::kHyp || (f.stage2 && c.st_.has_hyp);
    const uint32_t base = to_hyp                                  ? c.st_.cp15.hvbar
                          : (c.st_.cp15.sctlr & ArmCore::kSctlrV) ? 0xffff0000u
                                                                  : c.st_.cp15.vbar;
    if (c.st_.pc - base < 0x20) throw a;
  }
  if (!fetch && c.st_.in_it) c.st_.itstate = c.st_.it_at_start;
  if (f.stage2 && c.st_.mode != ArmCore::kHyp) {
    // Stage 2: to Hyp mode at the Hyp trap vector, with the IPA in HPFAR.
    uint32_t iss = Mmu::fault_status(f, false) & 0x3f;
    if (f.s1ptw) iss |= 1u << 7;
    bool il32 = false;  // IL only with ISV (ARMv7: UNK/SBZP otherwise, and for prefetch aborts)
    if (!fetch) {
      if (a.write && !f.s1ptw) iss |= 1u << 6;
      // ISV and the register for single loads and stores without write-back (the emulation a
      // hypervisor does for MMIO); never on a stage-1 walk.
      if (!f.s1ptw) iss |= data_abort_iss(il32);
    }
    uint8_t ec = fetch ? hsr_ec::kPrefetchAbortLower : hsr_ec::kDataAbortLower;
    c.st_.cp15.hsr = hsr_value(ec, iss, il32);
    if (fetch)
      c.st_.cp15.hifar = a.va;
    else
      c.st_.cp15.hdfar = a.va;
    c.st_.cp15.hpfar = static_cast<uint32_t>((f.ipa >> 12) << 4);
    ++hyp_ec_[ec];
    ++hyp_taken_[static_cast<int>(Exception::HypTrap)];
    enter_hyp(0x14, c.st_.pc, c.cpsr());
    return;
  }
  if (c.st_.mode == ArmCore::kHyp) {
    MmuFault lf = f;
    lf.long_format = true;
    uint32_t iss = Mmu::fault_status(lf, false) & 0x3f;
    bool il32 = false;  // without ISV, IL is UNK/SBZP in ARMv7: 0
    if (!fetch && a.write) iss |= 1u << 6;
    if (!fetch) iss |= data_abort_iss(il32);
    uint8_t ec = fetch ? hsr_ec::kPrefetchAbortHyp : hsr_ec::kDataAbortHyp;
    c.st_.cp15.hsr = hsr_value(ec, iss, il32);
    if (fetch)
      c.st_.cp15.hifar = a.va;
    else
      c.st_.cp15.hdfar = a.va;
    ++hyp_ec_[ec];
    enter_hyp(fetch ? 0x0C : 0x10, c.st_.pc, c.cpsr());
    return;
  }
  if (fetch) {
    c.st_.cp15.ifar = a.va;
    c.st_.cp15.ifsr = Mmu::fault_status(f, false) & ~(0xfu << 4);  // IFSR has no domain field
    take_exception(Exception::PrefetchAbort, c.st_.pc + 4, c.cpsr());
  } else {
    c.st_.cp15.dfar = a.va;
    c.st_.cp15.dfsr = Mmu::fault_status(f, a.write);
    take_exception(Exception::DataAbort, c.st_.pc + 8, c.cpsr());
  }
}

}  // namespace vtoe::cpu::iss
