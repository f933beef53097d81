// ISS core in system mode (no SystemC): processor modes and banked registers, exceptions taken
// to the vectors with their LR and SPSR, exception return, IRQ/FIQ at instruction boundaries
// (inside an IT block too), WFI, CP15 VBAR/SCTLR/fault registers, and what user mode may not do.
// Encodings from arm-linux-gnueabihf-as -march=armv7-a.
#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "models/cpu/iss/arm_core.h"

using vtoe::cpu::iss::ArmCore;
using vtoe::cpu::iss::Exception;
using vtoe::cpu::iss::GuestFault;
using vtoe::cpu::iss::InsnClass;
using vtoe::cpu::iss::Mode;
using vtoe::cpu::iss::PagedMemory;
using vtoe::cpu::iss::UndefinedInstruction;

namespace {

constexpr uint32_t kCode = 0x10000;
constexpr uint32_t kStack = 0x20000;
constexpr uint32_t kUsr = 0x10, kFiq = 0x11, kIrq = 0x12, kSvc = 0x13, kAbt = 0x17, kUnd = 0x1b;
constexpr uint32_t kT = 0x20, kF = 0x40, kI = 0x80, kA = 0x100;

class IssSystem : public ::testing::Test {
 protected:
  void SetUp() override {
    mem.map(0, 0x1000);  // the vectors
    mem.map(kCode, 0x1000);
    mem.map(kStack, 0x1000);
    core.set_system_mode(true);
  }
  void a32_at(uint32_t addr, std::initializer_list<uint32_t> code) {
    for (uint32_t w : code) {
      mem.write32(addr, w);
      addr += 4;
    }
  }
  void t32_at(uint32_t addr, std::initializer_list<uint16_t> code) {
    for (uint16_t h : code) {
      mem.write16(addr, h);
      addr += 2;
    }
  }
  uint32_t mode() const { return core.cpsr() & 0x1f; }

  PagedMemory mem;
  ArmCore core{mem};
};

TEST_F(IssSystem, ResetStateIsSvcWithEverythingMasked) {
  EXPECT_EQ(core.mode(), Mode::Svc);
  EXPECT_EQ(core.cpsr() & 0x1ff, kA | kI | kF | kSvc);
  ArmCore user(mem);
  EXPECT_EQ(user.cpsr() & 0x1ff, kUsr);  // syscall emulation: user mode, nothing masked
  core.set_pc(kCode | 1);
  core.set_system_mode(false);  // back to user mode, Thumb state kept
  EXPECT_EQ(core.cpsr() & 0x1ff, kUsr | kT);
  EXPECT_FALSE(core.system_mode());
}

TEST_F(IssSystem, BankedSpLrAndFiqRegisters) {
  core.set_reg(13, 0x1313);
  core.set_reg(14, 0x1414);
  core.set_reg(8, 0x88);
  a32_at(kCode, {0xf1020012,    // cps #0x12 (IRQ)
                 0xe3a0d0aa,    // mov sp, #0xaa
                 0xf1020011,    // cps #0x11 (FIQ)
                 0xe3a080f8,    // mov r8, #0xf8
                 0xf1020013});  // cps #0x13 (SVC)
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(mode(), kIrq);
  EXPECT_EQ(core.reg(13), 0u);  // IRQ's own SP
  core.step();
  core.step();
  EXPECT_EQ(mode(), kFiq);
  EXPECT_EQ(core.reg(8), 0u);  // FIQ's own r8
  core.step();
  core.step();
  EXPECT_EQ(mode(), kSvc);
  EXPECT_EQ(core.reg(13), 0x1313u);
  EXPECT_EQ(core.reg(14), 0x1414u);
  EXPECT_EQ(core.reg(8), 0x88u);
  EXPECT_EQ(core.banked_reg(Mode::Irq, 13), 0xaau);
  EXPECT_EQ(core.banked_reg(Mode::Fiq, 8), 0xf8u);
  EXPECT_EQ(core.banked_reg(Mode::Svc, 13), 0x1313u);
}

TEST_F(IssSystem, SvcFromUserArmAndReturnWithMovsPcLr) {
  core.set_cpsr(kUsr | 0x80000000u);        // user mode, N set
  a32_at(kCode, {0xef000005, 0xe2811001});  // svc #5; add r1, r1, #1
  a32_at(0x08, {0xe1b0f00e});               // movs pc, lr
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(core.pc(), 0x08u);
  EXPECT_EQ(mode(), kSvc);
  EXPECT_EQ(core.reg(14), kCode + 4);
  EXPECT_EQ(core.spsr(), kUsr | 0x80000000u);
  EXPECT_EQ(core.cpsr() & (kI | kA | kF), kI);  // SVC entry masks IRQ only
  EXPECT_EQ(core.exceptions(Exception::Svc), 1u);
  core.step();  // movs pc, lr
  EXPECT_EQ(core.pc(), kCode + 4);
  EXPECT_EQ(core.cpsr(), kUsr | 0x80000000u);
  core.step();
  EXPECT_EQ(core.reg(1), 1u);
}

TEST_F(IssSystem, SvcFromThumbReturnsToThumb) {
  core.set_cpsr(kUsr);
  t32_at(kCode, {0xdf05, 0x3101});  // svc 5; adds r1, #1
  a32_at(0x08, {0xe1b0f00e});       // movs pc, lr (ARM handler: SCTLR.TE = 0)
  core.set_pc(kCode | 1);
  core.step();
  EXPECT_EQ(core.pc(), 0x08u);
  EXPECT_FALSE(core.thumb());
  EXPECT_EQ(core.reg(14), kCode + 2);  // the next instruction, bit 0 clear
  EXPECT_EQ(core.spsr(), kUsr | kT);
  core.step();
  EXPECT_TRUE(core.thumb());
  EXPECT_EQ(core.pc(), kCode + 2);
  core.step();
  EXPECT_EQ(core.reg(1), 1u);
}

TEST_F(IssSystem, UndefinedInstructionTakenToItsVector) {
  a32_at(kCode, {0xe7f000f0});  // udf #0
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(core.pc(), 0x04u);
  EXPECT_EQ(mode(), kUnd);
  EXPECT_EQ(core.reg(14), kCode + 4);
  EXPECT_EQ(core.spsr(Mode::Und) & 0x1ff, kA | kI | kF | kSvc);
  EXPECT_EQ(core.exceptions(Exception::Undefined), 1u);
  // Thumb: LR = the instruction + 2.
  t32_at(kCode + 0x100, {0xde00});  // udf #0
  core.set_cpsr(kSvc);
  core.set_pc((kCode + 0x100) | 1);
  core.step();
  EXPECT_EQ(core.pc(), 0x04u);
  EXPECT_EQ(core.reg(14), kCode + 0x102);
}

TEST_F(IssSystem, AbortsRecordTheAddress) {
  core.set_reg(1, 0x0badc0de);
  a32_at(kCode, {0xe5910000});             // ldr r0, [r1]
  a32_at(0x10, {0xee162f10, 0xee153f10});  // mrc p15 DFAR -> r2; DFSR -> r3
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(core.pc(), 0x10u);
  EXPECT_EQ(mode(), kAbt);
  EXPECT_EQ(core.reg(14), kCode + 8);
  EXPECT_EQ(core.cpsr() & (kA | kI | kF), kA | kI | kF);
  core.step();
  core.step();
  EXPECT_EQ(core.reg(2), 0x0badc0deu);
  EXPECT_EQ(core.reg(3), 0x8u);  // synchronous external abort, read
  EXPECT_EQ(core.exceptions(Exception::DataAbort), 1u);
  // A fetch from nowhere: prefetch abort.
  core.set_cpsr(kSvc);
  core.set_pc(0x30000000);
  core.step();
  EXPECT_EQ(core.pc(), 0x0cu);
  EXPECT_EQ(core.reg(14), 0x30000004u);
  EXPECT_EQ(core.exceptions(Exception::PrefetchAbort), 1u);
}

// The run loop counts a basic block's instructions when it ends: whatever reads the count from
// inside one (the counter, mode statistics at an exception entry, a fault) sees each instruction
// before the current one, and none after.
TEST_F(IssSystem, ReadersInsideABasicBlockSeeTheExactRetiredCount) {
  // The counter (CNTVCT = retired() without a counter source) read by the 4th instruction.
  a32_at(kCode, {0xe3a00001,    // mov r0, #1
                 0xe2800001,    // add r0, r0, #1
                 0xe5840000,    // str r0, [r4]
                 0xec532f1e});  // mrrc p15, 1, r2, r3, c14 (CNTVCT)
  core.set_reg(4, kStack);
  core.set_pc(kCode);
  EXPECT_EQ(core.run(4), 4u);
  EXPECT_EQ(core.reg(2), 3u);
  EXPECT_EQ(core.retired(InsnClass::Alu), 2u);
  EXPECT_EQ(core.retired(InsnClass::Store), 1u);
  // Thumb, 16- and 32-bit instructions: the same at the 4th.
  t32_at(kCode + 0x100, {0x2001,            // movs r0, #1
                         0xf100, 0x0001,    // add.w r0, r0, #1
                         0x3001,            // adds r0, #1
                         0xec53, 0x2f1e});  // mrrc p15, 1, r2, r3, c14 (CNTVCT)
  core.set_pc((kCode + 0x100) | 1);
  EXPECT_EQ(core.run(4), 4u);
  EXPECT_EQ(core.reg(2), 7u);
  EXPECT_EQ(core.retired(), 8u);
  // A fault in the middle of a block: the two before it retired, in SVC mode; it did not.
  a32_at(kCode + 0x200, {0xe2800001,    // add r0, r0, #1
                         0xe2800001,    // add r0, r0, #1
                         0xe5910000});  // ldr r0, [r1] (nowhere: data abort)
  core.set_reg(1, 0x0badc0de);
  core.set_pc(kCode + 0x200);
  EXPECT_EQ(core.run(3), 2u);  // the entry uses one of the 3
  EXPECT_EQ(mode(), kAbt);
  EXPECT_EQ(core.retired(), 10u);
  EXPECT_EQ(core.retired_in_mode(Mode::Svc), 10u);
  EXPECT_EQ(core.retired(InsnClass::Load), 0u);
  // An exception entry by the block's last instruction (SVC from user mode): the instructions
  // before it count in user mode, the SVC itself in SVC mode (as when counted one by one).
  a32_at(kCode + 0x300, {0xe2800001,    // add r0, r0, #1
                         0xe2800001,    // add r0, r0, #1
                         0xef000005});  // svc #5
  core.set_cpsr(kUsr);
  core.set_pc(kCode + 0x300);
  EXPECT_EQ(core.run(3), 3u);
  EXPECT_EQ(mode(), kSvc);
  EXPECT_EQ(core.retired_in_mode(Mode::Usr), 2u);
  EXPECT_EQ(core.retired_in_mode(Mode::Svc), 11u);
  EXPECT_EQ(core.retired(InsnClass::System), 3u);  // the two MRRCs and the SVC
}

TEST_F(IssSystem, IrqAtInstructionBoundaryWhenUnmasked) {
  a32_at(kCode, {0xe2811001, 0xe2811001, 0xe2811001});  // add r1, r1, #1 (x3)
  a32_at(0x18, {0xe25ef004});                           // subs pc, lr, #4
  core.set_cpsr(kSvc | kA | kF);                        // I clear
  core.set_pc(kCode);
  core.step();
  core.set_irq(true);
  core.step();  // the entry
  EXPECT_EQ(core.pc(), 0x18u);
  EXPECT_EQ(mode(), kIrq);
  core.step();  // subs pc, lr, #4
  EXPECT_EQ(mode(), kSvc);
  EXPECT_EQ(core.pc(), kCode + 4);  // returned to the interrupted instruction
  EXPECT_EQ(core.banked_reg(Mode::Irq, 14), kCode + 8);
  EXPECT_EQ(core.spsr(Mode::Irq), kSvc | kA | kF);
  EXPECT_EQ(core.exceptions(Exception::Irq), 1u);
  core.set_irq(false);
  EXPECT_EQ(core.run(2), 2u);
  EXPECT_EQ(core.reg(1), 3u);
  EXPECT_EQ(core.exceptions(Exception::Irq), 1u);
}

TEST_F(IssSystem, MaskedIrqWaitsForCpsie) {
  a32_at(kCode, {0xe2811001, 0xf1080080, 0xe2811001});  // add; cpsie i; add
  a32_at(0x18, {0xe25ef004});
  core.set_pc(kCode);
  core.set_irq(true);
  EXPECT_EQ(core.run(2), 2u);  // masked since reset: not taken
  EXPECT_EQ(core.exceptions(Exception::Irq), 0u);
  core.step();  // unmasked now: taken before the next add
  EXPECT_EQ(core.exceptions(Exception::Irq), 1u);
  EXPECT_EQ(core.pc(), 0x18u);
  EXPECT_EQ(core.banked_reg(Mode::Irq, 14), kCode + 12);
}

TEST_F(IssSystem, FiqBeforeIrq) {
  a32_at(kCode, {0xe1a00000});
  a32_at(0x1c, {0xe1a00000});
  core.set_cpsr(kSvc);
  core.set_pc(kCode);
  core.set_irq(true);
  core.set_fiq(true);
  core.step();
  EXPECT_EQ(mode(), kFiq);
  EXPECT_EQ(core.pc(), 0x1cu);
  EXPECT_EQ(core.cpsr() & (kA | kI | kF), kA | kI | kF);
  EXPECT_EQ(core.exceptions(Exception::Fiq), 1u);
  EXPECT_EQ(core.exceptions(Exception::Irq), 0u);
}

TEST_F(IssSystem, IrqInsideAnItBlockKeepsTheItState) {
  // cmp r0, r0; itte eq; addeq r1, #1; addeq r2, #1; addne r3, #1; adds r4, #1
  t32_at(kCode, {0x4280, 0xbf06, 0x3101, 0x3201, 0x3301, 0x3401});
  a32_at(0x18, {0xe25ef004});  // subs pc, lr, #4
  core.set_cpsr(kSvc | kT);
  core.set_pc(kCode | 1);
  core.run(3);  // cmp, itte, addeq r1
  core.set_irq(true);
  core.step();                                        // IRQ entry
  core.step();                                        // subs pc, lr, #4
  EXPECT_NE(core.spsr(Mode::Irq) & 0x0600fc00u, 0u);  // IT bits saved
  EXPECT_EQ(core.pc(), kCode + 6);
  core.set_irq(false);
  core.run(3);
  EXPECT_EQ(core.reg(1), 1u);
  EXPECT_EQ(core.reg(2), 1u);  // still conditional on EQ after the return
  EXPECT_EQ(core.reg(3), 0u);  // the else slot did not run
  EXPECT_EQ(core.reg(4), 1u);
}

TEST_F(IssSystem, ExceptionReturnWithLdmAndUserRegisters) {
  // IRQ mode with SPSR = user; return through ldmfd sp!, {r0, pc}^.
  core.set_cpsr(kIrq | kI);
  core.set_reg(13, kStack);
  mem.write32(kStack, 0x1234);
  mem.write32(kStack + 4, kCode + 0x40);
  a32_at(kCode, {0xe16ff000, 0xe8fd8001});  // msr spsr_fsxc, r0; ldmfd sp!, {r0, pc}^
  core.set_reg(0, kUsr);
  core.set_pc(kCode);
  core.run(2);
  EXPECT_EQ(mode(), kUsr);
  EXPECT_EQ(core.reg(0), 0x1234u);
  EXPECT_EQ(core.pc(), kCode + 0x40);
  EXPECT_EQ(core.banked_reg(Mode::Irq, 13), kStack + 8);
  // SVC: stmia/ldmia with ^ move the user SP and LR.
  core.set_cpsr(kSvc);
  core.set_reg(13, 0x5555);
  core.set_reg(0, kStack + 0x100);
  mem.write32(kStack + 0x100, 0xaaaa);
  mem.write32(kStack + 0x104, 0xbbbb);
  a32_at(kCode + 0x80, {0xe8d06000});  // ldm r0, {sp, lr}^
  core.set_pc(kCode + 0x80);
  core.step();
  EXPECT_EQ(core.reg(13), 0x5555u);  // SVC's own SP untouched
  EXPECT_EQ(core.banked_reg(Mode::Usr, 13), 0xaaaau);
  EXPECT_EQ(core.banked_reg(Mode::Usr, 14), 0xbbbbu);
  core.set_reg(0, kStack + 0x200);
  a32_at(kCode + 0x84, {0xe8c06000});  // stmia r0, {sp, lr}^
  core.step();
  EXPECT_EQ(mem.read32(kStack + 0x200), 0xaaaau);
  EXPECT_EQ(mem.read32(kStack + 0x204), 0xbbbbu);
}

TEST_F(IssSystem, MsrMrsOfCpsrAndSpsr) {
  core.set_reg(0, 0x600001d0);
  // msr spsr_fsxc, r0; mrs r1, spsr; msr cpsr_c, #0xd2; mrs r2, cpsr
  a32_at(kCode, {0xe16ff000, 0xe14f1000, 0xe321f0d2, 0xe10f2000});
  core.set_pc(kCode);
  core.run(4);
  EXPECT_EQ(core.reg(1), 0x600001d0u);
  EXPECT_EQ(mode(), kIrq);
  EXPECT_EQ(core.reg(2) & 0x1ff, 0x1d2u);  // A unchanged (x field not written)
  // T32: mrs r0, spsr (IRQ's, still 0); msr spsr_fc, r0 with r0 = 0x80000013; msr cpsr_c, r0
  t32_at(kCode + 0x100, {0xf3ff, 0x8000, 0xf390, 0x8900, 0xf380, 0x8100});
  core.set_cpsr(kIrq | kT | kA | kI | kF);
  core.set_pc((kCode + 0x100) | 1);
  core.step();
  EXPECT_EQ(core.reg(0), 0u);
  core.set_reg(0, 0x80000013);
  core.step();
  EXPECT_EQ(core.spsr(Mode::Irq), 0x80000013u);
  core.step();
  EXPECT_EQ(mode(), kSvc);
  EXPECT_TRUE(core.thumb());  // MSR never writes T
}

TEST_F(IssSystem, WfiSleepsUntilAnInterruptLineRises) {
  a32_at(kCode, {0xe320f003, 0xe2811001});  // wfi; add r1, r1, #1
  core.set_pc(kCode);
  EXPECT_EQ(core.run(10), 1u);
  EXPECT_TRUE(core.waiting_for_interrupt());
  EXPECT_EQ(core.run(10), 0u);
  core.set_irq(true);  // masked (reset state): wakes the core, not taken
  EXPECT_FALSE(core.waiting_for_interrupt());
  EXPECT_EQ(core.run(1), 1u);
  EXPECT_EQ(core.reg(1), 1u);
  EXPECT_EQ(core.exceptions(Exception::Irq), 0u);
}

TEST_F(IssSystem, VbarHighVectorsAndThumbEntry) {
  mem.map(0x30000, 0x1000);
  core.set_reg(0, 0x30000);
  a32_at(kCode, {0xee0c0f10, 0xef000000});  // mcr p15 VBAR, r0; svc #0
  core.set_pc(kCode);
  core.run(2);
  EXPECT_EQ(core.pc(), 0x30008u);
  EXPECT_EQ(core.vbar(), 0x30000u);
  // SCTLR.V: 0xffff0000; SCTLR.TE: the handler runs in Thumb.
  mem.map(0xffff0000, 0x1000);
  core.set_reg(0, core.sctlr() | (1u << 13) | (1u << 30));
  a32_at(kCode + 0x100, {0xee010f10, 0xef000000});  // mcr p15 SCTLR, r0; svc #0
  core.set_cpsr(kSvc);
  core.set_pc(kCode + 0x100);
  core.run(2);
  EXPECT_EQ(core.pc(), 0xffff0008u);
  EXPECT_TRUE(core.thumb());
}

TEST(IssUserMode, PrivilegedOperationsAreRefused) {
  PagedMemory mem;
  mem.map(kCode, 0x1000);
  ArmCore core(mem);  // syscall emulation: user mode
  auto run_one = [&](uint32_t w) {
    mem.write32(kCode, w);
    core.set_pc(kCode);
    core.step();
  };
  EXPECT_THROW(run_one(0xe14f0000), UndefinedInstruction);  // mrs r0, spsr
  EXPECT_THROW(run_one(0xe1b0f00e), UndefinedInstruction);  // movs pc, lr
  EXPECT_THROW(run_one(0xe8fd8001), UndefinedInstruction);  // ldmfd sp!, {r0, pc}^
  EXPECT_THROW(run_one(0xee0c0f10), UndefinedInstruction);  // mcr p15 VBAR
  EXPECT_THROW(run_one(0xef000000), UndefinedInstruction);  // svc without a handler
  run_one(0xf1020013);                                      // cps #0x13: a NOP in user mode
  EXPECT_EQ(core.cpsr() & 0x1ff, kUsr);
  core.set_reg(0, 0xf00001d3);
  run_one(0xe129f000);  // msr cpsr_fc, r0: only the flags change
  EXPECT_EQ(core.cpsr(), 0xf0000010u);
  run_one(0xe320f003);  // wfi: a NOP
  EXPECT_FALSE(core.waiting_for_interrupt());
  // A data fault is thrown, not taken.
  core.set_reg(1, 0x0badc0de);
  EXPECT_THROW(run_one(0xe5910000), GuestFault);
}

// PagedMemory as a DMI cache: attached host memory, a backend for the rest, detach.
class RecordingBackend : public vtoe::cpu::iss::MemoryBackend {
 public:
  bool read(uint32_t addr, void* dst, uint32_t len, bool fetch) override {
    if (addr >= 0x40000) return false;
    log.push_back({addr, len, fetch ? 'f' : 'r'});
    std::memset(dst, 0xab, len);
    return true;
  }
  bool write(uint32_t addr, const void*, uint32_t len) override {
    log.push_back({addr, len, 'w'});
    return addr < 0x40000;
  }
  struct Access {
    uint32_t addr, len;
    char kind;
  };
  std::vector<Access> log;
};

TEST(IssPagedMemory, AttachedPagesBackendAndDetach) {
  PagedMemory mem;
  RecordingBackend bus;
  mem.set_backend(&bus);
  mem.map(0x1000, 0x1000);  // a page of its own
  mem.write32(0x1000, 0x11111111);
  std::vector<uint8_t> host(0x3000, 0);
  host[0x2000] = 0x5a;
  EXPECT_EQ(mem.attach(0, 0x3000, host.data()), 2u);  // pages 0 and 2; page 1 stays its own
  EXPECT_EQ(mem.attached_pages(), 2u);
  EXPECT_EQ(mem.read8(0x2000), 0x5a);  // the right offset after the skipped page
  EXPECT_EQ(mem.read32(0x1000), 0x11111111u);
  mem.write32(0x10, 0xdeadbeef);
  EXPECT_EQ(host[0x10], 0xef);
  EXPECT_TRUE(bus.log.empty());
  // Across the end of attached memory: two bytes direct, two from the bus.
  EXPECT_EQ(mem.read32(0x2ffe) >> 16, 0xababu);
  ASSERT_EQ(bus.log.size(), 1u);
  EXPECT_EQ(bus.log[0].addr, 0x3000u);
  EXPECT_EQ(bus.log[0].len, 2u);
  mem.write16(0x5000, 7);
  EXPECT_EQ(bus.log.back().kind, 'w');
  EXPECT_THROW(mem.read32(0x40000), GuestFault);  // the bus answers nothing there
  mem.detach(0x2000, 1);
  EXPECT_EQ(mem.attached_pages(), 1u);
  EXPECT_EQ(mem.read8(0x2000), 0xab);  // from the bus now
  mem.unmap(0, 0x1000);                // an attached page: forgotten, not freed
  EXPECT_EQ(mem.attached_pages(), 0u);
  EXPECT_EQ(host[0x10], 0xef);
}

TEST(IssPagedMemory, DetachDropsDecodedCode) {
  PagedMemory mem;
  RecordingBackend bus;
  mem.set_backend(&bus);
  std::vector<uint8_t> host(0x1000, 0);
  const uint32_t add_r1 = 0xe2811001, add_r2 = 0xe2822001;  // add r1/r2, #1
  std::memcpy(host.data(), &add_r1, 4);
  mem.attach(0x10000, 0x1000, host.data());
  ArmCore core(mem);
  core.set_pc(0x10000);
  core.step();
  EXPECT_EQ(core.reg(1), 1u);
  std::memcpy(host.data(), &add_r2, 4);  // behind the core's back (another master)
  core.set_pc(0x10000);
  core.step();
  EXPECT_EQ(core.reg(1), 2u);  // the decoded instruction is still the old one
  mem.detach(0x10000, 0x1000);
  mem.attach(0x10000, 0x1000, host.data());  // granted again: decode anew
  core.set_pc(0x10000);
  core.step();
  EXPECT_EQ(core.reg(2), 1u);
  core.invalidate_decoded(0x10000, 4);  // the explicit way, same effect
  std::memcpy(host.data(), &add_r1, 4);
  core.set_pc(0x10000);
  core.step();
  EXPECT_EQ(core.reg(1), 3u);
}

}  // namespace

// The ISS is plain C++: no SystemC kernel, so GoogleTest's own main.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// ArmState is the whole architectural state: a core restored to a saved one runs on from there
// exactly as it did the first time (banked registers and the mode included).
TEST_F(IssSystem, RestoredStateRunsOnAsTheSavedOne) {
  a32_at(kCode, {0xf1020012,    // cps #0x12 (IRQ)
                 0xe3a0d0aa,    // mov sp, #0xaa
                 0xf1020013,    // cps #0x13 (SVC)
                 0xe2800001,    // add r0, r0, #1
                 0xe2800001});  // add r0, r0, #1
  core.set_pc(kCode);
  core.step();
  core.step();
  const vtoe::cpu::iss::ArmState saved = core.state();
  for (int i = 0; i < 3; ++i) core.step();
  EXPECT_EQ(core.reg(0), 2u);
  EXPECT_EQ(mode(), kSvc);
  core.restore_state(saved);
  EXPECT_EQ(mode(), kIrq);
  EXPECT_EQ(core.reg(13), 0xaau);
  EXPECT_EQ(core.reg(0), 0u);
  EXPECT_EQ(core.pc(), kCode + 8);
  for (int i = 0; i < 3; ++i) core.step();
  EXPECT_EQ(core.reg(0), 2u);
  EXPECT_EQ(mode(), kSvc);
  EXPECT_EQ(core.banked_reg(Mode::Irq, 13), 0xaau);
}

// run(max) counts instructions retired and exception entries together, interrupts included: an
// interrupt that stays asserted is taken again at every return and still cannot keep it going.
TEST_F(IssSystem, RunCountsInterruptEntriesAgainstItsBound) {
  a32_at(kCode, {0xe2811001, 0xe2811001, 0xe2811001});  // add r1, r1, #1 (x3)
  a32_at(0x18, {0xe25ef004});                           // subs pc, lr, #4
  core.set_cpsr(kSvc | kA | kF);                        // I clear
  core.set_pc(kCode);
  core.set_irq(true);          // never acknowledged: taken after every return
  EXPECT_EQ(core.run(1), 0u);  // the entry alone
  EXPECT_EQ(core.exception_entries(), 1u);
  EXPECT_EQ(core.pc(), 0x18u);
  EXPECT_EQ(core.run(7), 4u);  // return, entry, return, entry, return, entry, return
  EXPECT_EQ(core.exception_entries(), 4u);
  EXPECT_EQ(core.retired() + core.exception_entries(), 8u);
  EXPECT_EQ(core.reg(1), 0u);  // the interrupted code never ran
}

// The same synchronous exception at the same instruction again and again with nothing retired
// between (a vector table of UDF): run() ends with ExceptionLoop naming the exception, the
// instruction and the vector, after ExceptionEntry::kStormEntries entries, whatever its bound.
TEST_F(IssSystem, AnExceptionStormEndsTheRunWithWhereItIs) {
  for (uint32_t v = 0; v < 0x20; v += 4) a32_at(v, {0xe7f000f0});  // udf #0 everywhere
  a32_at(kCode, {0xe7f000f0});
  core.set_pc(kCode);
  try {
    core.run(1'000'000);
    FAIL() << "no ExceptionLoop";
  } catch (const vtoe::cpu::iss::ExceptionLoop& e) {
    EXPECT_EQ(std::string(e.what()),
              "exception loop with no progress: undefined from the instruction at 0x00000004 "
              "(A32 0xe7f000f0, und mode) to the vector at 0x00000004 (und mode), 10000 times "
              "in a row");
  }
  EXPECT_EQ(core.exception_entries(), vtoe::cpu::iss::ExceptionEntry::kStormEntries + 1);
  EXPECT_EQ(core.retired(), 0u);
}

// A handler that does some work each time (more than kStormGap instructions) before it returns
// to an instruction that faults again is no storm: run(max) ends it at its bound.
TEST_F(IssSystem, AHandlerThatWorksBetweenFaultsIsNoStorm) {
  a32_at(0x04, {0xe2822001, 0xe2822001, 0xe2822001, 0xe2822001, 0xe2822001,  // add r2, #1 (x5)
                0xe1b0f00e});                                                // movs pc, lr
  a32_at(kCode, {0xe7f000f0});      // udf #0, returned to for ever (LR = the next: but the
  a32_at(kCode + 4, {0xeafffffd});  // b kCode: ... which branches back)
  core.set_pc(kCode);
  EXPECT_NO_THROW(core.run(200'000));
  EXPECT_EQ(core.retired() + core.exception_entries(), 200'000u);
  EXPECT_GT(core.exceptions(Exception::Undefined), 20'000u);
}
