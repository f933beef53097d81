// The architectural state of one ARMv7-A core: what a snapshot must copy and what another core
// does not share. The registers of every mode (banked SP, LR, SPSR, FIQ's r8-r12), the CPSR's
// fields, VFP, the CP15 and CP14 registers, the generic timer's and the PMU's registers, the
// exclusive monitor
// and the interrupt inputs. Plain data: ArmCore executes on it, the MMU (mmu.h) translates with
// its CP15 registers, Cp15 (cp15.h) reads and writes them, ExceptionEntry (exception_entry.h)
// takes exceptions on it. What the core only caches (decoded instructions, the TLB) and its
// statistics are not here.
#pragma once

#include <cstdint>

#include "models/cpu/iss/generic_timer.h"
#include "models/cpu/iss/pmu.h"

namespace vtoe::cpu::iss {

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

// The CP15 registers (non-secure state; the generic timer's are in ArmState::timer). Reset
// values in ArmCore::reset_system.
struct Cp15Regs {
  uint32_t sctlr, actlr, cpacr, ttbcr, dacr, prrr, nmrr, amair0, amair1;
  uint64_t ttbr0, ttbr1, par;
  uint32_t dfsr, ifsr, dfar, ifar, adfsr, aifsr, contextidr, csselr;
  uint32_t tpidrurw, tpidrprw, vbar, fpexc;
  uint32_t hcr, hdcr, hcptr, hstr, hacr, hsctlr, htcr, vtcr, hmair0, hmair1, hamair0, hamair1;
  uint64_t httbr, vttbr;
  uint32_t vpidr, vmpidr, hsr, hdfar, hifar, hpfar, hvbar, htpidr, hadfsr, haifsr;
};

// CP14: the debug registers a kernel probes (breakpoint and watchpoint value/control pairs, DSCR,
// VCR, OSDLR; no debug event is raised from them) and ThumbEE's two registers.
struct Cp14Regs {
  uint32_t bvr[6], bcr[6], wvr[4], wcr[4];
  uint32_t dscr, vcr, osdlr;
  uint32_t teecr, teehbr;
};

struct ArmState {
  // The hot part first (the run loop and the executors touch it per instruction).
  // r[15] holds the PC as instructions read it (address + 8 or + 4); r[16] is where an
  // exception return's data-processing result goes before it becomes the PC.
  uint32_t r[17] = {};
  uint32_t pc = 0;    // address of the current instruction
  uint32_t next = 0;  // address of the next one (branches write it)
  bool thumb = false;
  uint32_t nzcv = 0;  // CPSR.NZCV >> 28, packed as the condition table's index
  uint32_t q = 0, ge = 0;
  uint8_t itstate = 0;
  bool in_it = false;
  uint8_t it_at_start = 0;  // ITSTATE of the instruction in an IT block (for a fault in it)
  uint8_t mode = static_cast<uint8_t>(Mode::Usr);
  uint32_t aif = 0;  // CPSR bits E, A, I, F in place (9..6)

  // System mode: which modes exist, the banks, the interrupt inputs and WFI.
  bool system = false;
  bool has_hyp = false;
  bool irq = false, fiq = false, virq = false, vfiq = false;
  bool wfi = false;
  // Banks of SP, LR and SPSR: 0 USR/SYS, 1 SVC, 2 ABT, 3 UND, 4 IRQ, 5 FIQ, 6 HYP.
  uint32_t bank_sp[7] = {}, bank_lr[7] = {}, spsr[7] = {};
  uint32_t elr_hyp = 0;
  uint32_t usr_hi[5] = {}, fiq_hi[5] = {};  // r8-r12 of the mode not current (FIQ or others)

  // MPIDR: which core of the cluster this is (not changed by a reset).
  uint32_t mpidr = 0x80000000;
  bool monitor = false;  // local exclusive monitor
  uint32_t monitor_addr = 0;
  uint32_t tls = 0;  // TPIDRURO

  // VFP: s0-s31 (d0-d15) and FPSCR (its cumulative flags live in the host's while the guest runs,
  // in fp_flags between runs).
  uint32_t s[32] = {};
  uint32_t fpscr = 0;
  int fp_flags = 0;  // host FE_* flags of the guest between runs

  Cp15Regs cp15 = {};
  Cp14Regs cp14 = {};
  GenericTimer timer;
  Pmu pmu;
};

}  // namespace vtoe::cpu::iss
