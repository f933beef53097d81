// ISS core in system mode with the Virtualization Extensions (no SystemC): reset into Hyp or SVC,
// exception entry to Hyp mode with HSR/ELR_hyp/SPSR_hyp (HVC, traps, undefined, routed IRQs),
// ERET, the banked MRS/MSR forms, CPS/MSR restrictions, CP15 (IDs, VPIDR, 64-bit forms, HSTR and
// HCR traps with their ISS, undefined encodings), virtual interrupts, the generic timer,
// firmware calls, breakpoints and statistics. Expected values from the ARM ARM (B1.8, B3.13.6,
// B4.1, B8); encodings from arm-linux-gnueabihf-as -march=armv7ve.
#include <gtest/gtest.h>

#include <initializer_list>

#include "models/cpu/iss/arm_core.h"

using vtoe::cpu::iss::ArmCore;
using vtoe::cpu::iss::Exception;
using vtoe::cpu::iss::FirmwareCall;
using vtoe::cpu::iss::Mode;
using vtoe::cpu::iss::PagedMemory;
using vtoe::cpu::iss::TimerKind;
namespace hsr_ec = vtoe::cpu::iss::hsr_ec;

namespace {

constexpr uint32_t kCode = 0x10000, kGuest = 0x11000, kHvbar = 0x2000, kVbar = 0x3000;
constexpr uint32_t kSvc = 0x13, kHyp = 0x1a, kUnd = 0x1b, kIrq = 0x12;
constexpr uint32_t kT = 0x20, kF = 0x40, kI = 0x80, kA = 0x100;
constexpr uint32_t kIl = 1u << 25;

// Encodings.
constexpr uint32_t kMcrHvbar = 0xee8c0f10;   // mcr p15, 4, r0, c12, c0, 0
constexpr uint32_t kMcrHcr = 0xee810f11;     // mcr p15, 4, r0, c1, c1, 0
constexpr uint32_t kMcrHstr = 0xee810f71;    // mcr p15, 4, r0, c1, c1, 3
constexpr uint32_t kMsrElrHyp = 0xe12ef300;  // msr elr_hyp, r0
constexpr uint32_t kMsrSpsr = 0xe16ff002;    // msr spsr_fsxc, r2 (SPSR_hyp in Hyp mode)
constexpr uint32_t kEret = 0xe160006e;
constexpr uint32_t kNop = 0xe320f000;
constexpr uint32_t kLoop = 0xeafffffe;  // b .

class IssHyp : public ::testing::Test {
 protected:
  void SetUp() override {
    mem.map(0, 0x1000);
    mem.map(kHvbar, 0x1000);
    mem.map(kVbar, 0x1000);
    mem.map(kCode, 0x2000);
    for (uint32_t a = kHvbar; a < kHvbar + 0x20; a += 4) mem.write32(a, kLoop);
    for (uint32_t a = kVbar; a < kVbar + 0x20; a += 4) mem.write32(a, kLoop);
    core.reset_system(true);
    core.set_vbar(kVbar);
  }
  void a32_at(uint32_t addr, std::initializer_list<uint32_t> code) {
    for (uint32_t w : code) {
      mem.write32(addr, w);
      addr += 4;
    }
  }
  void steps(int n) {
    for (int i = 0; i < n; ++i) core.step();
  }
  // From Hyp mode: HVBAR = kHvbar, HCR = hcr, HSTR = hstr, then ERET to kGuest in SVC with
  // the given CPSR mask bits.
  void enter_guest(uint32_t hcr, uint32_t hstr = 0, uint32_t guest_cpsr = kSvc | kA | kI | kF) {
    a32_at(kCode, {kMcrHvbar, 0xe1a00003 /* mov r0, r3 */, kMcrHcr, 0xe1a00004 /* mov r0, r4 */,
                   kMcrHstr, 0xe1a00005 /* mov r0, r5 */, kMsrElrHyp, kMsrSpsr, kEret});
    core.set_reg(0, kHvbar);
    core.set_reg(3, hcr);
    core.set_reg(4, hstr);
    core.set_reg(5, kGuest);
    core.set_reg(2, guest_cpsr);
    core.set_pc(kCode);
    steps(9);
    ASSERT_EQ(core.pc(), kGuest);
    ASSERT_EQ(core.mode(), Mode::Svc);
  }
  uint32_t ec() const { return core.hsr() >> 26; }
  uint32_t iss() const { return core.hsr() & 0x1ffffff; }

  PagedMemory mem;
  ArmCore core{mem};
};

TEST_F(IssHyp, ResetIntoHypOrSvc) {
  EXPECT_EQ(core.mode(), Mode::Hyp);
  EXPECT_EQ(core.cpsr() & 0x1ff, kA | kI | kF | kHyp);
  EXPECT_TRUE(core.has_hyp());
  EXPECT_EQ(core.cp15(0, 0, 0, 0), 0x414fc0f0u);  // MIDR: Cortex-A15 r4p0 (QEMU 7.2)
  EXPECT_EQ(core.cp15(0, 0, 0, 5), 0x80000000u);  // MPIDR
  EXPECT_EQ(core.cp15(0, 0, 1, 1), 0x00011001u);  // ID_PFR1: virtualization, no security
  EXPECT_EQ(core.cp15(1, 0, 0, 0), 0x00c50078u);  // SCTLR: MMU off
  EXPECT_EQ(core.cp15(14, 0, 0, 0), 62500000u);   // CNTFRQ
  core.reset_system(false);
  EXPECT_EQ(core.mode(), Mode::Svc);
  EXPECT_EQ(core.cpsr() & 0x1ff, kA | kI | kF | kSvc);
  EXPECT_EQ(core.cp15(0, 0, 1, 1), 0x00010001u);
  EXPECT_FALSE(core.cp15(15, 0, 0, 0).has_value());
  // The reserved identification space reads as zero (Xen's identify_cpu reads ID_PFR2 there).
  EXPECT_EQ(core.cp15(0, 0, 3, 4), 0u);
  EXPECT_EQ(core.cp15(0, 0, 2, 7), 0u);
  // 154 registers and operations (the PMU's 12 in c9 among them), PMEVCNTR0-5 and PMEVTYPER0-5,
  // and the 42 reserved identification encodings (docs/iss.md).
  EXPECT_EQ(ArmCore::cp15_register_names().size(), 208u);
  // SCTLR and HSCTLR keep what is written, RES1 bits included, as QEMU 7.2.
  ASSERT_TRUE(core.set_cp15(1, 0, 0, 0, 0x60));
  EXPECT_EQ(core.cp15(1, 0, 0, 0), 0x60u);
  ASSERT_TRUE(core.set_cp15(1, 4, 0, 0, 0x30c5187a));
  EXPECT_EQ(core.cp15(1, 4, 0, 0), 0x30c5187au);
}

TEST_F(IssHyp, EretToGuestAndHvcTakesTheHypTrapVector) {
  enter_guest(0);
  EXPECT_EQ(core.cpsr() & 0x1ff, kSvc | kA | kI | kF);
  a32_at(kGuest, {0xe1412374});  // hvc #0x1234
  core.step();
  EXPECT_EQ(core.mode(), Mode::Hyp);
  EXPECT_EQ(core.pc(), kHvbar + 0x14);
  EXPECT_EQ(core.hsr(), (hsr_ec::kHvc << 26) | kIl | 0x1234);
  EXPECT_EQ(core.elr_hyp(), kGuest + 4);  // HVC completes: the next instruction
  EXPECT_EQ(core.spsr(Mode::Hyp) & 0x1f, kSvc);
  EXPECT_EQ(core.hyp_entries(hsr_ec::kHvc), 1u);
  // HVC in Hyp mode: the HVC vector (0x08).
  a32_at(kCode, {0xe1412374});
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(core.pc(), kHvbar + 0x08);
  EXPECT_EQ(core.spsr(Mode::Hyp) & 0x1f, kHyp);
}

TEST_F(IssHyp, ThumbHvcAndThumbEntryWithHsctlrTe) {
  enter_guest(0);
  // HSCTLR.TE: Hyp handlers in Thumb. Set it with the debugger-free path: MCR from Hyp.
  core.set_pc(kCode);
  core.set_reg(0, 0x30c50818u | (1u << 30));
  a32_at(kCode + 0x100, {0xee810f10});  // mcr p15, 4, r0, c1, c0, 0 (HSCTLR)
  core.set_cpsr(kHyp | kA | kI | kF);
  core.set_pc(kCode + 0x100);
  core.step();
  core.set_cpsr(kSvc | kA | kI | kF);
  mem.write16(kGuest, 0xf7e1);  // hvc #0x1234 (T32)
  mem.write16(kGuest + 2, 0x8234);
  core.set_pc(kGuest | 1);
  core.step();
  EXPECT_EQ(core.pc(), kHvbar + 0x14);
  EXPECT_TRUE(core.thumb());
  EXPECT_EQ(core.hsr(), (hsr_ec::kHvc << 26) | kIl | 0x1234);
  EXPECT_EQ(core.spsr(Mode::Hyp) & (kT | 0x1f), kT | kSvc);
  // T32 ERET (SUBS PC, LR, #0) in Hyp mode returns to ELR_hyp with SPSR_hyp.
  mem.write16(kHvbar + 0x14, 0xf3de);
  mem.write16(kHvbar + 0x16, 0x8f00);
  core.step();
  EXPECT_EQ(core.pc(), kGuest + 4);
  EXPECT_EQ(core.mode(), Mode::Svc);
  EXPECT_TRUE(core.thumb());
}

TEST_F(IssHyp, HvcWithoutHypGoesToTheFirmwareSmcIsUndefined) {
  struct Psci : FirmwareCall {
    bool smc(ArmCore& c) override {
      c.set_reg(0, 0x5c);
      return answer;
    }
    bool hvc(ArmCore& c) override {
      c.set_reg(0, 0x4c);
      return answer;
    }
    bool answer = true;
  } psci;
  core.reset_system(false);
  core.set_vbar(kVbar);
  core.set_firmware(&psci);
  a32_at(kCode, {0xe1412374, 0xe1600070, 0xe1412374});  // hvc, smc, hvc
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(core.reg(0), 0x4cu);
  EXPECT_EQ(core.pc(), kCode + 4);
  // Without Hyp mode the conduit is HVC (QEMU's virt): SMC, with no Monitor mode, is undefined.
  core.step();
  EXPECT_EQ(core.reg(0), 0x4cu);
  EXPECT_EQ(core.mode(), Mode::Und);
  EXPECT_EQ(core.pc(), kVbar + 0x04);
  EXPECT_EQ(core.reg(14), kCode + 8);
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kCode + 8);
  psci.answer = false;  // a call the firmware declines: undefined
  core.step();
  EXPECT_EQ(core.mode(), Mode::Und);
  EXPECT_EQ(core.pc(), kVbar + 0x04);
  EXPECT_EQ(core.reg(14), kCode + 12);
}

TEST_F(IssHyp, SmcTrappedByHcrTscAndWfiByTwiWfeNever) {
  enter_guest((1u << 19) | (1u << 13) | (1u << 14));     // TSC, TWI, TWE
  a32_at(kGuest, {0xe1600070, 0xe320f003, 0x0320f002});  // smc #0; wfi; wfeeq
  core.step();
  EXPECT_EQ(ec(), hsr_ec::kSmc);
  EXPECT_EQ(core.elr_hyp(), kGuest);  // a trap: the instruction itself
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest + 4);
  core.step();
  EXPECT_EQ(core.pc(), kHvbar + 0x14);
  EXPECT_EQ(core.hsr(), (hsr_ec::kWfiWfe << 26) | kIl | (1u << 24) | (0xEu << 20));
  EXPECT_FALSE(core.waiting_for_interrupt());
  // WFE is a hint that completes at once, never trapped by HCR.TWE (as QEMU 7.2 runs it).
  core.set_cpsr(kSvc | kA | kI | kF | (1u << 30));  // Z: EQ passes
  core.set_pc(kGuest + 8);
  core.step();
  EXPECT_EQ(core.pc(), kGuest + 12);
  EXPECT_EQ(core.mode(), Mode::Svc);
  EXPECT_FALSE(core.waiting_for_interrupt());
}

TEST_F(IssHyp, Cp15TrapsCarryTheirSyndrome) {
  // HSTR.T1 traps c1 (SCTLR); HCR.TVM would too; TID3 the ID registers; TTLB the TLB ops.
  enter_guest((1u << 18) | (1u << 25), 1u << 1);
  a32_at(kGuest, {0xee110f10,    // mrc p15, 0, r0, c1, c0, 0 (SCTLR)
                  0xee105f11,    // mrc p15, 0, r5, c0, c1, 0 (ID_PFR0)
                  0xee080f17,    // mcr p15, 0, r0, c8, c7, 0 (TLBIALL)
                  0xee105f10});  // mrc p15, 0, r5, c0, c0, 0 (MIDR: VPIDR, not trapped)
  core.step();
  EXPECT_EQ(ec(), hsr_ec::kMcrMrcCp15);
  // CV, COND=E, Opc2 0, Opc1 0, CRn 1, Rt 0, CRm 0, read.
  EXPECT_EQ(iss(), (1u << 24) | (0xEu << 20) | (1u << 10) | 1u);
  EXPECT_EQ(core.elr_hyp(), kGuest);
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest + 4);
  core.set_reg(5, 0x5555);
  core.step();
  EXPECT_EQ(iss(), (1u << 24) | (0xEu << 20) | (5u << 5) | (1u << 1) | 1u);  // CRm 1, Rt 5
  EXPECT_EQ(core.reg(5), 0x5555u);  // a trapped read writes no register
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest + 8);
  core.step();
  EXPECT_EQ(iss(), (1u << 24) | (0xEu << 20) | (8u << 10) | (7u << 1));
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest + 12);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Svc);
  EXPECT_EQ(core.reg(5), 0x414fc0f0u);  // VPIDR, never written: it resets to MIDR
}

TEST_F(IssHyp, HypRegistersAreUndefinedBelowHypAndUnknownCp15IsUndefined) {
  enter_guest(0);
  a32_at(kGuest, {kMcrHcr});
  core.step();
  EXPECT_EQ(core.mode(), Mode::Und);
  EXPECT_EQ(core.pc(), kVbar + 0x04);
  core.set_cpsr(kSvc | kA | kI | kF);
  a32_at(kGuest + 4, {0xee1f0f10});  // mrc p15, 0, r0, c15, c0, 0: not implemented
  core.set_pc(kGuest + 4);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Und);
  // Undefined in Hyp mode: HVBAR + 0x04, EC 0.
  core.set_cpsr(kHyp | kA | kI | kF);
  core.set_pc(kGuest + 4);
  core.step();
  EXPECT_EQ(core.pc(), kHvbar + 0x04);
  EXPECT_EQ(core.hsr(), 0u);  // EC 0, IL UNK/SBZP in ARMv7 (0, as QEMU)
  EXPECT_EQ(core.elr_hyp(), kGuest + 4);
}

TEST_F(IssHyp, BankedMrsMsrAndModeRestrictions) {
  a32_at(kCode, {0xe12ef300,    // msr elr_hyp, r0
                 0xe10e1300,    // mrs r1, elr_hyp
                 0xe162f302,    // msr spsr_svc, r2
                 0xe1033300,    // mrs r3, sp_svc
                 0xf102001a});  // cps #0x1a (already Hyp: stays)
  core.set_reg(0, 0x1230);
  core.set_reg(2, 0x600001d3);
  core.set_pc(kCode);
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_reg(13, 0x5550);  // SP_svc
  core.set_cpsr(kHyp | kA | kI | kF);
  steps(5);
  EXPECT_EQ(core.elr_hyp(), 0x1230u);
  EXPECT_EQ(core.reg(1), 0x1230u);
  EXPECT_EQ(core.spsr(Mode::Svc), 0x600001d3u);
  EXPECT_EQ(core.reg(3), 0x5550u);
  EXPECT_EQ(core.mode(), Mode::Hyp);
  // SPSR_hyp by its banked name is Monitor mode's: undefined in Hyp mode (as qemu-system-arm).
  core.set_cp15(12, 4, 0, 0, kHvbar);
  a32_at(kCode + 0x20, {0xe16ef302});  // msr spsr_hyp, r2
  core.set_pc(kCode + 0x20);
  core.step();
  EXPECT_EQ(core.pc(), kHvbar + 0x04);

  // From SVC: ELR_hyp is not accessible, and neither CPS nor MSR enter Hyp mode.
  core.set_cpsr(kSvc | kA | kI | kF);
  a32_at(kGuest, {0xf102001a, 0xe121f000, 0xe10e1300});  // cps #0x1a; msr cpsr_c, r0; mrs elr
  core.set_reg(0, kHyp | kA | kI | kF);
  core.set_pc(kGuest);
  steps(2);
  EXPECT_EQ(core.mode(), Mode::Svc);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Und);
  // From Hyp mode MSR does not leave it either; ERET does.
  core.set_cpsr(kHyp | kA | kI | kF);
  core.set_reg(0, kSvc);
  a32_at(kCode, {0xe121f000});
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Hyp);
}

TEST_F(IssHyp, IrqRoutingByHcrImoAndVirtualInterrupts) {
  enter_guest(1u << 4, 0, kSvc | kA | kI | kF);  // IMO; the guest masks IRQs
  a32_at(kGuest, {kNop, kNop, kNop});
  core.set_irq(true);  // physical IRQ with IMO: to Hyp mode whatever CPSR.I says
  core.step();
  EXPECT_EQ(core.mode(), Mode::Hyp);
  EXPECT_EQ(core.pc(), kHvbar + 0x18);
  EXPECT_EQ(core.elr_hyp(), kGuest);
  EXPECT_EQ(core.hyp_interrupts(Exception::Irq), 1u);
  core.step();  // in Hyp mode with I masked: not taken again
  EXPECT_EQ(core.pc(), kHvbar + 0x18);
  core.set_irq(false);
  // A virtual IRQ: only outside Hyp mode, masked by the guest's CPSR.I, taken at VBAR.
  core.set_virq(true);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Hyp);
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest);
  core.step();
  EXPECT_EQ(core.pc(), kGuest + 4);  // masked
  core.set_cpsr(kSvc | kA | kF);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Irq);
  EXPECT_EQ(core.pc(), kVbar + 0x18);
  EXPECT_EQ(core.reg(14), kGuest + 8);
  EXPECT_EQ(core.exceptions(Exception::Irq), 1u);
  EXPECT_EQ(core.cp15(12, 0, 1, 0).value_or(0), kI);  // ISR shows the virtual IRQ
}

TEST_F(IssHyp, GenericTimerOutputsDeadlineAndAccessChecks) {
  uint64_t count = 1000;
  int changes = 0;
  core.set_counter_source([&] { return count; });
  core.set_timer_listener([&] { ++changes; });
  // Hyp: CNTVOFF = 100, CNTHCTL = 0 (PL1 physical access traps); guest: CNTV_CVAL = 1500,
  // CNTV_CTL = enable; then read CNTVCT and CNTPCT (trapped).
  // mcrr p15, 4, r7, r7, c14 (Rt = Rt2 is allowed for MCRR: Linux's hyp stub zeroes CNTVOFF so)
  a32_at(kCode + 0x100, {0xec477f4e, 0xec410f4e});  // then mcrr p15, 4, r0, r1, c14
  core.set_cp15(14, 4, 1, 0, 0);  // CNTHCTL resets to 3 (PL1 access allowed), as in QEMU 7.2
  core.set_reg(7, 5);
  core.set_reg(0, 100);
  core.set_reg(1, 0);
  core.set_pc(kCode + 0x100);
  core.step();
  EXPECT_EQ(core.cp15_64(4, 14), 0x500000005u);
  core.step();
  enter_guest(0);
  a32_at(kGuest, {0xec410f3e,    // mcrr p15, 3, r0, r1, c14 (CNTV_CVAL)
                  0xee0e0f33,    // mcr p15, 0, r0, c14, c3, 1 (CNTV_CTL)
                  0xec532f1e,    // mrrc p15, 1, r2, r3, c14 (CNTVCT)
                  0xec532f0e});  // mrrc p15, 0, r2, r3, c14 (CNTPCT: trapped by CNTHCTL)
  core.set_reg(0, 1500);
  core.set_reg(1, 0);
  steps(1);
  core.set_reg(0, 1);
  steps(2);
  EXPECT_EQ(core.reg(2), 900u);
  EXPECT_EQ(core.reg(3), 0u);
  EXPECT_GE(changes, 2);
  EXPECT_FALSE(core.timer_output(TimerKind::Virtual));
  EXPECT_EQ(core.next_timer_deadline(), std::optional<uint64_t>(1600));
  count = 1600;
  EXPECT_TRUE(core.timer_output(TimerKind::Virtual));
  EXPECT_FALSE(core.next_timer_deadline().has_value());
  EXPECT_EQ(core.cp15(14, 0, 3, 1), 5u);  // ENABLE | ISTATUS
  core.step();
  EXPECT_EQ(core.pc(), kHvbar + 0x14);
  EXPECT_EQ(ec(), hsr_ec::kMcrrMrrcCp15);
  // CV, COND E, Opc1 0, Rt2 3, Rt 2, CRm 14, read.
  EXPECT_EQ(iss(), (1u << 24) | (0xEu << 20) | (3u << 10) | (2u << 5) | (14u << 1) | 1u);
}

TEST_F(IssHyp, VfpNeedsCpacrAndFpexcAndHcptrTrapsIt) {
  core.reset_system(true);
  core.set_vbar(kVbar);
  core.set_cpsr(kSvc | kA | kI | kF);
  a32_at(kCode, {0xee310b02,    // vadd.f64 d0, d1, d2
                 0xeef71a10,    // vmrs r1, mvfr0
                 0xeee80a10,    // vmsr fpexc, r0
                 0xee310b02});  // vadd.f64 d0, d1, d2
  core.set_pc(kCode);
  core.step();  // CPACR denies cp10/cp11 at reset: undefined
  EXPECT_EQ(core.mode(), Mode::Und);
  core.set_cp15(1, 0, 0, 2, 0x00f00000);  // CPACR: full access
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kCode);
  core.step();  // FPEXC.EN clear: still undefined
  EXPECT_EQ(core.mode(), Mode::Und);
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_reg(0, 1u << 30);
  core.set_dreg(1, 0x3ff0000000000000ull);  // 1.0
  core.set_dreg(2, 0x4000000000000000ull);  // 2.0
  core.set_pc(kCode + 4);
  steps(3);                             // MVFR0 and FPEXC need no FPEXC.EN; then the add runs
  EXPECT_EQ(core.reg(1), 0x10110221u);  // VFPv3-D16, what the ISS implements
  EXPECT_EQ(core.dreg(0), 0x4008000000000000ull);  // 3.0
  // HCPTR.TCP10/TCP11: a Hyp trap with EC 0x07 and coproc 10.
  core.set_cp15(12, 4, 0, 0, kHvbar);
  core.set_cp15(1, 4, 1, 2, 3u << 10);
  core.set_pc(kCode + 12);
  core.step();
  EXPECT_EQ(core.pc(), kHvbar + 0x14);
  EXPECT_EQ(core.hsr(), (uint32_t{hsr_ec::kCp10} << 26) | kIl | (1u << 24) | (0xEu << 20) | 0xa);
}

TEST_F(IssHyp, DebugRegistersAsLinuxProbesThem) {
  core.set_cpsr(kSvc | kA | kI | kF);
  a32_at(kCode, {0xee100e10,    // mrc p14, 0, r0, c0, c0, 0 (DBGDIDR)
                 0xe3a02902,    // mov r2, #0x8000 (MDBGEN)
                 0xee002e52,    // mcr p14, 0, r2, c0, c2, 2 (DBGDSCRext)
                 0xee101e11});  // mrc p14, 0, r1, c0, c1, 0 (DBGDSCRint)
  core.set_pc(kCode);
  steps(4);
  EXPECT_EQ(core.reg(0), 0x3515f021u);  // QEMU's cortex-a15: 6 BRPs, 4 WRPs, v7.1
  EXPECT_EQ(core.reg(1), 0x8000u);
  core.set_cpsr(0x10);  // user mode reads DBGDIDR (as in QEMU 7.2), not DBGDSCRint
  core.set_reg(0, 0);
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Usr);
  EXPECT_EQ(core.reg(0), 0x3515f021u);
  core.set_pc(kCode + 12);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Und);
  // ThumbEE's TEEHBR, which Linux switches per thread: PL0 may use it while TEECR.XED is clear.
  a32_at(kCode + 0x40, {0xeec12e10,    // mcr p14, 6, r2, c1, c0, 0 (TEEHBR)
                        0xeed13e10});  // mrc p14, 6, r3, c1, c0, 0
  core.set_cpsr(0x10);
  core.set_reg(2, 0x12345678);
  core.set_pc(kCode + 0x40);
  steps(2);
  EXPECT_EQ(core.reg(3), 0x12345678u & ~3u);
  EXPECT_EQ(core.mode(), Mode::Usr);
}

// HDCR.TDA, TDRA and TDOSA trap PL1's debug register accesses to Hyp mode with EC 0x05 (Xen
// sets all three for its guests and emulates DBGDIDR, DBGDSCR and the breakpoints).
TEST_F(IssHyp, HdcrTrapsDebugRegisterAccessesWithEc05) {
  constexpr uint32_t kTde = 1u << 8, kTda = 1u << 9, kTdosa = 1u << 10, kTdra = 1u << 11;
  enter_guest(0);
  a32_at(kGuest, {0xee100e10,    // mrc p14, 0, r0, c0, c0, 0 (DBGDIDR)
                  0xee002e52,    // mcr p14, 0, r2, c0, c2, 2 (DBGDSCRext)
                  0xee111e10,    // mrc p14, 0, r1, c1, c0, 0 (DBGDRAR: TDRA)
                  0xee113e91});  // mrc p14, 0, r3, c1, c1, 4 (DBGOSLSR: TDOSA)
  core.set_cp15(1, 4, 1, 1, kTda);
  core.set_reg(0, 0x1234);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Hyp);
  EXPECT_EQ(ec(), hsr_ec::kMcrMrcCp14);
  EXPECT_EQ(iss(), (1u << 24) | (0xEu << 20) | 1u);  // CV, COND, all fields 0, Rt 0, read
  EXPECT_EQ(core.elr_hyp(), kGuest);
  EXPECT_EQ(core.reg(0), 0x1234u);
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest + 4);
  core.step();
  EXPECT_EQ(ec(), hsr_ec::kMcrMrcCp14);
  EXPECT_EQ(iss(), (1u << 24) | (0xEu << 20) | (2u << 17) | (2u << 5) | (2u << 1));  // write
  // DBGDRAR and DBGOSLSR are TDRA's and TDOSA's, not TDA's.
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest + 8);
  core.set_reg(1, 7);
  core.set_reg(3, 7);
  steps(2);
  EXPECT_EQ(core.mode(), Mode::Svc);
  EXPECT_EQ(core.reg(1), 0u);
  EXPECT_EQ(core.reg(3), 0u);
  core.set_cp15(1, 4, 1, 1, kTdra | kTdosa);
  core.set_pc(kGuest + 8);
  core.step();
  EXPECT_EQ(iss(), (1u << 24) | (0xEu << 20) | (1u << 10) | (1u << 5) | 1u);
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest + 12);
  core.step();
  EXPECT_EQ(iss(),
            (1u << 24) | (0xEu << 20) | (4u << 17) | (1u << 10) | (3u << 5) | (1u << 1) | 1u);
  // TDE traps them all; Hyp mode itself is never trapped.
  core.set_cp15(1, 4, 1, 1, kTde);
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest);
  core.step();
  EXPECT_EQ(ec(), hsr_ec::kMcrMrcCp14);
  core.set_pc(kGuest);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Hyp);
  EXPECT_EQ(core.reg(0), 0x3515f021u);
}

// HCR.TID3 traps VMRS of MVFR0/MVFR1 and HCR.TID0 of FPSID from PL1 (EC 0x08, as QEMU 7.2
// reports it: the MRC p10, 7 form, COND 0xE); Xen sets TID3 for dom0.
TEST_F(IssHyp, HcrTid0AndTid3TrapVmrsOfTheVfpIdRegisters) {
  enter_guest((1u << 18) | (1u << 15));   // TID3, TID0
  core.set_cp15(1, 0, 0, 2, 0x00f00000);  // CPACR: full access
  a32_at(kGuest, {0xeef62a10,             // vmrs r2, mvfr1
                  0xeef04a10,             // vmrs r4, fpsid
                  0xee106f93});  // mrc p15, 0, r6, c0, c3, 4 (ID_PFR2's encoding: reserved)
  core.set_reg(2, 0x2222);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Hyp);
  EXPECT_EQ(ec(), hsr_ec::kMrcCp10Id);
  EXPECT_EQ(iss(), (1u << 24) | (0xEu << 20) | (7u << 14) | (6u << 10) | (2u << 5) | 1u);
  EXPECT_EQ(core.reg(2), 0x2222u);  // not written
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest + 4);
  core.step();
  EXPECT_EQ(iss(), (1u << 24) | (0xEu << 20) | (7u << 14) | (4u << 5) | 1u);
  // The reserved identification space is not ID group 3 in ARMv7: read as zero, not trapped.
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest + 8);
  core.set_reg(6, 0x6666);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Svc);
  EXPECT_EQ(core.reg(6), 0u);
  // Without the traps the guest reads them.
  core.set_cp15(1, 4, 1, 0, 0);
  core.set_cpsr(kSvc | kA | kI | kF);
  core.set_pc(kGuest);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Svc);
  EXPECT_EQ(core.reg(2), 0u);  // MVFR1
}

TEST_F(IssHyp, BreakpointsStopRunBeforeTheInstruction) {
  a32_at(kCode, {0xe2800001, 0xe2800001, 0xe2800001, 0xe2800001});  // add r0, r0, #1 (x4)
  core.set_reg(0, 0);
  core.set_pc(kCode);
  core.add_breakpoint(kCode + 8);
  EXPECT_EQ(core.run(100), 2u);
  EXPECT_TRUE(core.at_breakpoint());
  EXPECT_EQ(core.pc(), kCode + 8);
  core.remove_breakpoint(kCode + 8);
  core.add_breakpoint(kCode + 12);
  core.add_breakpoint(kCode + 8);
  EXPECT_EQ(core.run(100), 1u);  // resumes from the breakpoint it stopped at
  EXPECT_EQ(core.pc(), kCode + 12);
  uint32_t word = 0;
  EXPECT_TRUE(core.debug_read(kCode, &word, 4));
  EXPECT_EQ(word, 0xe2800001u);
  EXPECT_FALSE(core.debug_read(0x7000000, &word, 4));
  EXPECT_EQ(core.retired_in_mode(Mode::Hyp), 3u);
}

}  // namespace

// The ISS is plain C++: no SystemC kernel, so GoogleTest's own main.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
