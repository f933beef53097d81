// ISS core on hand-assembled encodings (from arm-linux-gnueabihf-as): flags, shifts and their
// carry, overflow, multiplies and divides, media instructions, loads and stores, interworking,
// IT blocks and table branches, VFP, undefined encodings, the decoded-instruction cache.
#include <gtest/gtest.h>

#include <cfenv>
#include <cstring>
#include <initializer_list>
#include <string>

#include "models/cpu/iss/arm_core.h"

using vtoe::cpu::iss::ArmCore;
using vtoe::cpu::iss::GuestFault;
using vtoe::cpu::iss::PagedMemory;
using vtoe::cpu::iss::InsnClass;
using vtoe::cpu::iss::SupervisorCall;
using vtoe::cpu::iss::UndefinedInstruction;

namespace {

constexpr uint32_t kCode = 0x10000;
constexpr uint32_t kData = 0x20000;
constexpr uint32_t N = 8, Z = 4, C = 2, V = 1;

class Iss : public ::testing::Test {
 protected:
  void SetUp() override {
    mem.map(kCode, 0x1000);
    mem.map(kData, 0x2000);
  }
  // Runs A32 encodings placed at kCode, one step each.
  void a32(std::initializer_list<uint32_t> code) {
    uint32_t a = kCode;
    for (uint32_t w : code) {
      mem.write32(a, w);
      a += 4;
    }
    core.set_pc(kCode);
    for (size_t i = 0; i < code.size(); ++i) core.step();
  }
  // Places T32 halfwords at kCode and runs `steps` instructions.
  void t32(std::initializer_list<uint16_t> code, int steps) {
    uint32_t a = kCode;
    for (uint16_t h : code) {
      mem.write16(a, h);
      a += 2;
    }
    core.set_pc(kCode | 1);
    for (int i = 0; i < steps; ++i) core.step();
  }
  uint32_t nzcv() const { return core.cpsr() >> 28; }
  void set_nzcv(uint32_t f) { core.set_nzcv(f << 28); }
  void regs(uint32_t r0, uint32_t r1, uint32_t r2 = 0, uint32_t r3 = 0) {
    core.set_reg(0, r0);
    core.set_reg(1, r1);
    core.set_reg(2, r2);
    core.set_reg(3, r3);
  }
  uint32_t r(int n) const { return core.reg(n); }
  void set_d(int n, double d) {
    uint64_t b;
    std::memcpy(&b, &d, 8);
    core.set_dreg(n, b);
  }
  double d(int n) const {
    uint64_t b = core.dreg(n);
    double v;
    std::memcpy(&v, &b, 8);
    return v;
  }

  PagedMemory mem;
  ArmCore core{mem};
};

TEST_F(Iss, AddSubFlags) {
  regs(0x7fffffff, 1);
  a32({0xe0902001});  // adds r2, r0, r1
  EXPECT_EQ(r(2), 0x80000000u);
  EXPECT_EQ(nzcv(), N | V);
  regs(0xffffffff, 1);
  a32({0xe0902001});
  EXPECT_EQ(r(2), 0u);
  EXPECT_EQ(nzcv(), Z | C);
  regs(0, 1);
  a32({0xe0502001});  // subs r2, r0, r1
  EXPECT_EQ(r(2), 0xffffffffu);
  EXPECT_EQ(nzcv(), N);  // borrow: C clear
  regs(0x80000000, 1);
  a32({0xe0502001});
  EXPECT_EQ(r(2), 0x7fffffffu);
  EXPECT_EQ(nzcv(), C | V);
  regs(5, 5);
  a32({0xe1500001});  // cmp r0, r1
  EXPECT_EQ(nzcv(), Z | C);
  regs(3, 10);
  a32({0xe0702001});  // rsbs r2, r0, r1
  EXPECT_EQ(r(2), 7u);
  EXPECT_EQ(nzcv(), C);
}

TEST_F(Iss, CarryChains) {
  regs(0xffffffff, 0);
  set_nzcv(C);
  a32({0xe0b02001});  // adcs r2, r0, r1
  EXPECT_EQ(r(2), 0u);
  EXPECT_EQ(nzcv(), Z | C);
  regs(5, 3);
  set_nzcv(0);
  a32({0xe0d02001});  // sbcs r2, r0, r1: 5 - 3 - 1
  EXPECT_EQ(r(2), 1u);
  EXPECT_EQ(nzcv(), C);
}

TEST_F(Iss, ImmediateShiftsAndCarry) {
  regs(0x80000001, 0);
  set_nzcv(C);
  a32({0xe1b02000});  // movs r2, r0 (LSL #0: carry unchanged)
  EXPECT_EQ(r(2), 0x80000001u);
  EXPECT_EQ(nzcv(), N | C);
  set_nzcv(0);
  a32({0xe1b02020});  // lsrs r2, r0, #32
  EXPECT_EQ(r(2), 0u);
  EXPECT_EQ(nzcv(), Z | C);
  set_nzcv(0);
  a32({0xe1b02040});  // asrs r2, r0, #32
  EXPECT_EQ(r(2), 0xffffffffu);
  EXPECT_EQ(nzcv(), N | C);
  set_nzcv(C);
  a32({0xe1b02260});  // rors r2, r0, #4
  EXPECT_EQ(r(2), 0x18000000u);
  EXPECT_EQ(nzcv(), 0u);
  set_nzcv(0);
  a32({0xe1b02060});  // rrxs r2, r0
  EXPECT_EQ(r(2), 0x40000000u);
  EXPECT_EQ(nzcv(), C);
}

TEST_F(Iss, RegisterShiftsUseTheBottomByte) {
  struct Case {
    uint32_t insn, amount, result, flags;
  };
  const Case cases[] = {
      {0xe1b02110, 0, 0x80000001, N | C},  // lsls by 0: value and carry unchanged
      {0xe1b02110, 32, 0, Z | C},          // lsls by 32: carry = bit 0
      {0xe1b02110, 33, 0, Z},              // lsls by 33: carry 0
      {0xe1b02110, 257, 2, C},             // only the bottom byte counts: by 1
      {0xe1b02130, 32, 0, Z | C},          // lsrs by 32: carry = bit 31
      {0xe1b02150, 200, 0xffffffff, N | C},  // asrs by 200
      {0xe1b02170, 32, 0x80000001, N | C},   // rors by 32: carry = bit 31
  };
  for (const Case& c : cases) {
    regs(0x80000001, c.amount);
    set_nzcv(C);
    a32({c.insn});
    EXPECT_EQ(r(2), c.result) << std::hex << c.insn << " by " << std::dec << c.amount;
    EXPECT_EQ(nzcv(), c.flags) << std::hex << c.insn << " by " << std::dec << c.amount;
  }
}

TEST_F(Iss, RotatedImmediateSetsCarry) {
  set_nzcv(0);
  a32({0xe3b02106});  // movs r2, #0x80000001
  EXPECT_EQ(r(2), 0x80000001u);
  EXPECT_EQ(nzcv(), N | C);
  regs(0x1ff, 0);
  set_nzcv(C | V);
  a32({0xe21020ff});  // ands r2, r0, #255: unrotated, carry and overflow unchanged
  EXPECT_EQ(r(2), 0xffu);
  EXPECT_EQ(nzcv(), C | V);
}

TEST_F(Iss, Multiplies) {
  regs(0xffffffff, 0xffffffff);
  a32({0xe0832190});  // umull r2, r3, r0, r1
  EXPECT_EQ(r(2), 1u);
  EXPECT_EQ(r(3), 0xfffffffeu);
  regs(static_cast<uint32_t>(-2), 3);
  a32({0xe0c32190});  // smull
  EXPECT_EQ(r(2), static_cast<uint32_t>(-6));
  EXPECT_EQ(r(3), 0xffffffffu);
  regs(static_cast<uint32_t>(-2), 3, 1, 0);
  a32({0xe0e32190});  // smlal: (0:1) + -6
  EXPECT_EQ(r(2), static_cast<uint32_t>(-5));
  EXPECT_EQ(r(3), 0xffffffffu);
  regs(6, 7, 0, 100);
  a32({0xe0223190});  // mla r2, r0, r1, r3
  EXPECT_EQ(r(2), 142u);
  a32({0xe0623190});  // mls r2, r0, r1, r3
  EXPECT_EQ(r(2), 58u);
  regs(0x00030004, 0xfffe0005);
  a32({0xe1620180});  // smulbb: 4 * 5
  EXPECT_EQ(r(2), 20u);
  regs(0x40000000, 0x40000000);
  a32({0xe752f110});  // smmul: high word of 2^60
  EXPECT_EQ(r(2), 0x10000000u);
}

// SMMLA/SMMLS keep bits 63:32 of (Ra << 32) +/- Rn * Rm: the sum wraps modulo 2^64. Computed in
// int64_t it overflowed (undefined behaviour; the sanitizer build stops on it).
TEST_F(Iss, MostSignificantWordMultiplyAccumulateWraps) {
  regs(0x40000000, 0x40000000, 0, 0x7fffffff);
  a32({0xe7523110});  // smmla r2, r0, r1, r3: 0x7fffffff'00000000 + 2^60
  EXPECT_EQ(r(2), 0x8fffffffu);
  regs(0x40000000, 0x40000000, 0, 0x80000000);
  a32({0xe75231d0});  // smmls r2, r0, r1, r3: 0x80000000'00000000 - 2^60
  EXPECT_EQ(r(2), 0x70000000u);
  regs(0x40000000, 0x40000000, 0, 0x7fffffff);
  a32({0xe7523130});  // smmlar: the same plus the rounding constant 0x80000000
  EXPECT_EQ(r(2), 0x8fffffffu);
}

TEST_F(Iss, DivideEdgeCases) {
  regs(7, static_cast<uint32_t>(-2));
  a32({0xe712f110});  // sdiv r2, r0, r1
  EXPECT_EQ(r(2), static_cast<uint32_t>(-3));
  regs(7, 0);
  a32({0xe712f110});
  EXPECT_EQ(r(2), 0u);  // divide by zero gives 0 (no trap on ARMv7-A)
  regs(0x80000000, 0xffffffff);
  a32({0xe712f110});
  EXPECT_EQ(r(2), 0x80000000u);
  regs(0xffffffff, 2);
  a32({0xe732f110});  // udiv
  EXPECT_EQ(r(2), 0x7fffffffu);
}

TEST_F(Iss, BitManipulation) {
  regs(0x00010000, 0);
  a32({0xe16f2f10});  // clz
  EXPECT_EQ(r(2), 15u);
  regs(0, 0);
  a32({0xe16f2f10});
  EXPECT_EQ(r(2), 32u);
  regs(0x12345678, 0);
  a32({0xe6bf2f30});
  EXPECT_EQ(r(2), 0x78563412u);  // rev
  a32({0xe6bf2fb0});
  EXPECT_EQ(r(2), 0x34127856u);  // rev16
  a32({0xe7e72250});
  EXPECT_EQ(r(2), 0x67u);  // ubfx r2, r0, #4, #8
  a32({0xe6ef2470});
  EXPECT_EQ(r(2), 0x56u);  // uxtb r2, r0, ror #8
  regs(0x12345680, 0);
  a32({0xe6ff2fb0});
  EXPECT_EQ(r(2), 0xffff8056u);  // revsh
  regs(1, 0);
  a32({0xe6ff2f30});
  EXPECT_EQ(r(2), 0x80000000u);  // rbit
  regs(0xf80, 0);
  a32({0xe7a72250});
  EXPECT_EQ(r(2), 0xfffffff8u);  // sbfx r2, r0, #4, #8
  regs(0xabc, 0, 0xffffffff);
  a32({0xe7d32410});
  EXPECT_EQ(r(2), 0xfffabcffu);  // bfi r2, r0, #8, #12
  regs(0, 0, 0xffffffff);
  a32({0xe7d3221f});
  EXPECT_EQ(r(2), 0xfff0000fu);  // bfc r2, #4, #16
  regs(0x00018000, 0);
  a32({0xe6bf2070});
  EXPECT_EQ(r(2), 0xffff8000u);  // sxth
  regs(0x1ff, 1000);
  a32({0xe6e12070});
  EXPECT_EQ(r(2), 1255u);  // uxtab r2, r1, r0
  a32({0xe3012234, 0xe34a2bcd});  // movw, movt
  EXPECT_EQ(r(2), 0xabcd1234u);
}

TEST_F(Iss, SaturationSetsQ) {
  regs(1000, 0);
  a32({0xe6a72010});  // ssat r2, #8, r0
  EXPECT_EQ(r(2), 127u);
  EXPECT_TRUE(core.cpsr() & (1u << 27));
  regs(static_cast<uint32_t>(-5), 0);
  a32({0xe6e82010});  // usat r2, #8, r0
  EXPECT_EQ(r(2), 0u);
  regs(0x7fffffff, 1);
  a32({0xe1012050});  // qadd r2, r0, r1
  EXPECT_EQ(r(2), 0x7fffffffu);
}

TEST_F(Iss, ParallelAddAndSelect) {
  regs(0x80ff0102, 0x80010203);
  a32({0xe6502f91});  // uadd8 r2, r0, r1
  EXPECT_EQ(r(2), 0x00000305u);
  EXPECT_EQ((core.cpsr() >> 16) & 15, 0xcu);  // GE from the carries of lanes 2 and 3
  a32({0xe6802fb1});  // sel r2, r0, r1
  EXPECT_EQ(r(2), 0x80ff0203u);
}

TEST_F(Iss, LoadStoreAddressing) {
  for (uint32_t i = 0; i < 16; ++i) mem.write32(kData + 4 * i, 0x1000 + i);
  regs(kData, 0);
  a32({0xe5b02004});  // ldr r2, [r0, #4]!
  EXPECT_EQ(r(2), 0x1001u);
  EXPECT_EQ(r(0), kData + 4);
  a32({0xe4102004});  // ldr r2, [r0], #-4
  EXPECT_EQ(r(2), 0x1001u);
  EXPECT_EQ(r(0), kData);
  regs(kData, 3);
  a32({0xe7902101});  // ldr r2, [r0, r1, lsl #2]
  EXPECT_EQ(r(2), 0x1003u);
  regs(kData, 0xab);
  a32({0xe5c01001});  // strb r1, [r0, #1]
  EXPECT_EQ(mem.read32(kData), 0xab00u);
  mem.write16(kData + 2, 0x8001);
  a32({0xe1d020f2});  // ldrsh r2, [r0, #2]
  EXPECT_EQ(r(2), 0xffff8001u);
  a32({0xe1c020d0});  // ldrd r2, r3, [r0]
  EXPECT_EQ(r(2), mem.read32(kData));
  EXPECT_EQ(r(3), 0x1001u);
  regs(kData + 64, 0, 0x11, 0x22);
  a32({0xe16020f8});  // strd r2, r3, [r0, #-8]!
  EXPECT_EQ(r(0), kData + 56);
  EXPECT_EQ(mem.read64(kData + 56), 0x0000002200000011ull);
}

TEST_F(Iss, UnalignedAccessAcrossPages) {
  mem.write32(kData + 0xffe, 0xdeadbeef);
  regs(kData + 0xffe, 0);
  a32({0xe5902000});  // ldr r2, [r0]
  EXPECT_EQ(r(2), 0xdeadbeefu);
}

TEST_F(Iss, MultipleAcrossAPageAndIntoDecodedCode) {
  // Words on two pages: not for the one-page fast path of LDM/STM.
  regs(kData + 0xff8, 0x11111111, 0x22222222, 0x33333333);
  core.set_reg(4, 0x44444444);
  a32({0xe880001e,    // stm r0, {r1-r4}
       0xe89001e0});  // ldm r0, {r5-r8}
  EXPECT_EQ(mem.read32(kData + 0xffc), 0x22222222u);
  EXPECT_EQ(mem.read32(kData + 0x1000), 0x33333333u);
  EXPECT_EQ(r(5), 0x11111111u);
  EXPECT_EQ(r(6), 0x22222222u);
  EXPECT_EQ(r(7), 0x33333333u);
  EXPECT_EQ(r(8), 0x44444444u);
  // An STM over an instruction already decoded: the new one runs, not the decoded one.
  mem.write32(kCode, 0xe8800002);      // stm r0, {r1}
  mem.write32(kCode + 4, 0xe3a09001);  // mov r9, #1
  regs(kCode + 4, 0xe3a09007);         // mov r9, #7
  core.set_pc(kCode + 4);
  core.step();
  EXPECT_EQ(r(9), 1u);
  core.set_pc(kCode);
  core.step();
  core.step();
  EXPECT_EQ(r(9), 7u);
}

TEST_F(Iss, AlignmentFaults) {
  regs(kData + 2, 0);
  a32({0xe5902000});  // ldr r2, [r0]: unaligned LDR is allowed
  for (uint32_t insn : {0xe1c020d0u /* ldrd */, 0xe8b0000cu /* ldm */, 0xe1902f9fu /* ldrex */,
                        0xed900b02u /* vldr */}) {
    mem.write32(kCode, insn);
    core.set_pc(kCode);
    regs(kData + 2, 0);
    try {
      core.step();
      FAIL() << std::hex << insn << ": no fault";
    } catch (const vtoe::cpu::iss::AlignmentFault& e) {
      EXPECT_EQ(e.addr & ~15u, kData) << std::hex << insn;
    }
  }
}

TEST_F(Iss, MultipleAndPopToThumb) {
  core.set_reg(13, kData + 0x100);
  core.set_reg(14, kCode + 0x801);  // a Thumb return address
  regs(0x11, 0x22);
  mem.write16(kCode + 0x800, 0xbf00);  // nop
  a32({0xe92d4003});  // push {r0, r1, lr}
  EXPECT_EQ(r(13), kData + 0x100 - 12);
  EXPECT_EQ(mem.read32(kData + 0x100 - 4), kCode + 0x801);
  mem.write32(kCode, 0xe8bd800c);  // pop {r2, r3, pc}
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(r(2), 0x11u);
  EXPECT_EQ(r(3), 0x22u);
  EXPECT_EQ(r(13), kData + 0x100);
  EXPECT_TRUE(core.thumb());
  EXPECT_EQ(core.pc(), kCode + 0x800);
  regs(kData + 0x100 - 12, 0);
  a32({0xe8b0000c});  // ldm r0!, {r2, r3}
  EXPECT_EQ(r(0), kData + 0x100 - 4);
  EXPECT_EQ(r(2), 0x11u);
  EXPECT_EQ(core.retired(InsnClass::LoadMulti), 2u);
}

TEST_F(Iss, ExclusiveMonitor) {
  regs(kData, 7);
  a32({0xe1803f91});  // strex r3, r1, [r0] without ldrex: fails
  EXPECT_EQ(r(3), 1u);
  EXPECT_EQ(mem.read32(kData), 0u);
  a32({0xe1902f9f, 0xe1803f91});  // ldrex, strex
  EXPECT_EQ(r(3), 0u);
  EXPECT_EQ(mem.read32(kData), 7u);
}

TEST_F(Iss, BlxInterworks) {
  regs(kCode + 0x101, 0);
  mem.write16(kCode + 0x100, 0x2201);  // movs r2, #1
  a32({0xe12fff30});  // blx r0
  EXPECT_TRUE(core.thumb());
  EXPECT_EQ(core.pc(), kCode + 0x100);
  EXPECT_EQ(r(14), kCode + 4);
  core.step();
  EXPECT_EQ(r(2), 1u);
}

TEST_F(Iss, ThumbFlagsInsideAndOutsideIt) {
  regs(0xffffffff, 1);
  t32({0x1842}, 1);  // adds r2, r0, r1 (outside IT: sets flags)
  EXPECT_EQ(nzcv(), Z | C);
  regs(2, 3);
  set_nzcv(Z);
  t32({0xbf08, 0x1842}, 2);  // it eq; addeq r2, r0, r1 (inside IT: no flags)
  EXPECT_EQ(r(2), 5u);
  EXPECT_EQ(nzcv(), Z);
  set_nzcv(0);
  t32({0xbf14, 0x2201, 0x2202}, 3);  // ite ne; movne r2, #1; moveq r2, #2
  EXPECT_EQ(r(2), 1u);
  set_nzcv(Z);
  t32({0xbf14, 0x2201, 0x2202}, 3);
  EXPECT_EQ(r(2), 2u);
  EXPECT_EQ(core.pc(), kCode + 6);
}

TEST_F(Iss, ThumbCbzAndTableBranch) {
  regs(0, 0);
  t32({0xb100, 0xbf00, 0xbf00}, 1);  // cbz r0, +4
  EXPECT_EQ(core.pc(), kCode + 4);
  regs(1, 0);
  t32({0xb100, 0xbf00, 0xbf00}, 1);
  EXPECT_EQ(core.pc(), kCode + 2);
  regs(0, 2);
  // tbb [pc, r1]; table {1, 3, 5, 7} after it: entry 2 -> kCode + 4 + 10
  t32({0xe8df, 0xf001, 0x0301, 0x0705}, 1);
  EXPECT_EQ(core.pc(), kCode + 14);
  regs(0, 1);
  // tbh [pc, r1, lsl #1]; table {2, 6}
  t32({0xe8df, 0xf011, 0x0002, 0x0006}, 1);
  EXPECT_EQ(core.pc(), kCode + 16);
}

TEST_F(Iss, ThumbWideInstructions) {
  regs(1, 2);
  t32({0xeb00, 0x02c1}, 1);  // add.w r2, r0, r1, lsl #3
  EXPECT_EQ(r(2), 17u);
  regs(0xff01ff01, 0);
  t32({0xf110, 0x12ff}, 1);  // adds.w r2, r0, #0x00ff00ff
  EXPECT_EQ(r(2), 0x00010000u);
  EXPECT_EQ(nzcv(), C);
  t32({0xf04f, 0x4200}, 1);  // mov.w r2, #0x80000000
  EXPECT_EQ(r(2), 0x80000000u);
  regs(static_cast<uint32_t>(-9), 2);
  t32({0xfb90, 0xf2f1}, 1);  // sdiv r2, r0, r1
  EXPECT_EQ(r(2), static_cast<uint32_t>(-4));
  mem.write32(kData + 0x100, 0x55);
  regs(kData + 0x104, 0);
  t32({0xf850, 0x2d04}, 1);  // ldr.w r2, [r0, #-4]!
  EXPECT_EQ(r(2), 0x55u);
  EXPECT_EQ(r(0), kData + 0x100);
  regs(0xffffffff, 0xffffffff);
  t32({0xfba0, 0x2301}, 1);  // umull r2, r3, r0, r1
  EXPECT_EQ(r(3), 0xfffffffeu);
  t32({0xf000, 0xf800}, 1);  // bl to the next instruction
  EXPECT_EQ(r(14), (kCode + 4) | 1);
  EXPECT_EQ(core.pc(), kCode + 4);
}

TEST_F(Iss, ThumbPushPop) {
  core.set_reg(13, kData + 0x200);
  core.set_reg(4, 44);
  core.set_reg(14, kCode + 0x41);
  t32({0xb510}, 1);  // push {r4, lr}
  EXPECT_EQ(r(13), kData + 0x1f8);
  core.set_reg(4, 0);
  t32({0xbd10}, 1);  // pop {r4, pc}
  EXPECT_EQ(r(4), 44u);
  EXPECT_EQ(core.pc(), kCode + 0x40);
  EXPECT_TRUE(core.thumb());
}

TEST_F(Iss, TlsRegister) {
  core.set_tls(0xcafe0000);
  a32({0xee1d2f70});  // mrc p15, 0, r2, c13, c0, 3
  EXPECT_EQ(r(2), 0xcafe0000u);
  core.set_reg(2, 0);
  t32({0xee1d, 0x2f70}, 1);
  EXPECT_EQ(r(2), 0xcafe0000u);
}

TEST_F(Iss, VfpArithmeticAndCompare) {
  set_d(0, 1.5);
  set_d(1, 2.25);
  a32({0xee302b01});  // vadd.f64 d2, d0, d1
  EXPECT_EQ(d(2), 3.75);
  a32({0xee202b01});  // vmul.f64
  EXPECT_EQ(d(2), 3.375);
  set_d(2, 1.0);
  a32({0xee002b01});  // vmla.f64 d2, d0, d1
  EXPECT_EQ(d(2), 4.375);
  a32({0xeeb40b41, 0xeef1fa10});  // vcmp.f64 d0, d1; vmrs APSR_nzcv, fpscr
  EXPECT_EQ(nzcv(), N);
  set_d(1, 1.5);
  a32({0xeeb40b41, 0xeef1fa10});
  EXPECT_EQ(nzcv(), Z | C);
  t32({0xee30, 0x2b01}, 1);  // vadd.f64 in T32
  EXPECT_EQ(d(2), 3.0);
  a32({0xeeb71b08});  // vmov.f64 d1, #1.5
  EXPECT_EQ(d(1), 1.5);
}

TEST_F(Iss, VfpConversionsSaturate) {
  struct Case {
    double in;
    uint32_t out;
  };
  const Case cases[] = {{-3.7, static_cast<uint32_t>(-3)}, {1e10, 0x7fffffff}, {-1e10, 0x80000000},
                        {0.0 / 0.0 * 0, 0}};
  for (const Case& c : cases) {
    set_d(0, c.in);
    a32({0xeebd2bc0});  // vcvt.s32.f64 s4, d0
    EXPECT_EQ(core.sreg(4), c.out) << c.in;
  }
  core.set_sreg(0, static_cast<uint32_t>(-7));
  a32({0xeeb82bc0});  // vcvt.f64.s32 d2, s0
  EXPECT_EQ(d(2), -7.0);
  float f = -1.0f;
  uint32_t fb;
  std::memcpy(&fb, &f, 4);
  core.set_sreg(0, fb);
  a32({0xeebc2ac0});  // vcvt.u32.f32 s4, s0: negative saturates to 0
  EXPECT_EQ(core.sreg(4), 0u);
}

TEST_F(Iss, VfpFixedPointConversions) {
  core.set_sreg(0, 0x8000);
  a32({0xeeba0ae8});  // vcvt.f32.s32 s0, s0, #15: 32768 / 2^15
  EXPECT_EQ(core.sreg(0), 0x3f800000u);  // 1.0f
  a32({0xeebe0ae8});  // vcvt.s32.f32 s0, s0, #15: back
  EXPECT_EQ(core.sreg(0), 0x8000u);
  set_d(1, -2.75);
  a32({0xeebf1b44});  // vcvt.u16.f64 d1, d1, #8: negative saturates to 0
  EXPECT_EQ(core.dreg(1), 0u);
  set_d(1, 300.5);
  a32({0xeebf1b44});
  EXPECT_EQ(core.dreg(1), 0xffffu);  // 300.5 * 256 saturates at 65535
  a32({0xeebb1b44});  // vcvt.f64.u16 d1, d1, #8
  EXPECT_EQ(d(1), 65535.0 / 256);
  float f = -3.3f;
  uint32_t fb;
  std::memcpy(&fb, &f, 4);
  core.set_sreg(2, fb);
  a32({0xeebe1a46});  // vcvt.s16.f32 s2, s2, #4: trunc(-52.8), sign-extended
  EXPECT_EQ(core.sreg(2), static_cast<uint32_t>(-52));
}

TEST_F(Iss, VfpCumulativeExceptionFlags) {
  set_d(0, 1.0);
  set_d(1, 0.0);
  a32({0xee802b01});  // vdiv.f64 d2, d0, d1: 1/0
  EXPECT_EQ(core.fpscr() & 0x9f, 0x02u);  // DZC
  set_d(1, 3.0);
  a32({0xee802b01});  // 1/3
  EXPECT_EQ(core.fpscr() & 0x9f, 0x12u);  // IXC added, DZC kept (cumulative)
  core.set_fpscr(0);
  set_d(0, -1.0);
  a32({0xeeb12bc0});  // vsqrt.f64 d2, d0
  EXPECT_EQ(core.fpscr() & 0x9f, 0x01u);  // IOC
  core.set_fpscr(0);
  set_d(0, 1e300);
  set_d(1, 1e300);
  a32({0xee202b01});  // vmul.f64: overflow
  EXPECT_EQ(core.fpscr() & 0x9f, 0x14u);  // OFC, IXC
  core.set_fpscr(0);
  set_d(0, 2.5);
  a32({0xeebd2bc0});  // vcvt.s32.f64 s4, d0
  EXPECT_EQ(core.fpscr() & 0x9f, 0x10u);  // IXC
  core.set_fpscr(0);
  set_d(0, 1e10);
  a32({0xeebd2bc0});
  EXPECT_EQ(core.fpscr() & 0x9f, 0x01u);  // saturated: IOC only
}

TEST_F(Iss, HostFloatingPointEnvironmentIsRestored) {
  std::feclearexcept(FE_ALL_EXCEPT);
  regs(3u << 22, 0);  // round toward zero
  set_d(0, 1.0);
  set_d(1, 0.0);
  a32({0xeee10a10, 0xee802b01});  // vmsr fpscr, r0; vdiv.f64 d2, d0, d1
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);   // the host's mode is back
  EXPECT_FALSE(std::fetestexcept(FE_DIVBYZERO));  // and its flags are its own
  EXPECT_EQ(core.fpscr() & 0x9f, 0x02u);          // the guest's DZC
  EXPECT_EQ((core.fpscr() >> 22) & 3, 3u);
  a32({0xee802b01});  // a later run keeps the guest's flags
  EXPECT_EQ(core.fpscr() & 0x9f, 0x02u);
}

TEST_F(Iss, VfpDefaultNanIsArms) {
  set_d(0, -1.0);
  a32({0xeeb12bc0});  // vsqrt.f64 d2, d0
  EXPECT_EQ(core.dreg(2), 0x7ff8000000000000ull);  // x86 would give the negative 0xfff8...
  set_d(0, 0.0);
  set_d(1, 0.0);
  a32({0xee802b01});  // vdiv.f64 d2, d0, d1
  EXPECT_EQ(core.dreg(2), 0x7ff8000000000000ull);
  set_d(0, 1.0);
  core.set_dreg(1, 0x7ff8000000000001ull);
  a32({0xee302b41});  // vsub.f64 d2, d0, d1: the NaN operand as it is, not negated
  EXPECT_EQ(core.dreg(2), 0x7ff8000000000001ull);
  core.set_dreg(1, 0x7ff0000000000001ull);  // signalling: quietened
  a32({0xee302b41});
  EXPECT_EQ(core.dreg(2), 0x7ff8000000000001ull);
}

TEST_F(Iss, VfpTransfersAndMemory) {
  regs(kData, 0, 0x11111111, 0x22222222);
  a32({0xec432b10});  // vmov d0, r2, r3
  EXPECT_EQ(core.dreg(0), 0x2222222211111111ull);
  regs(kData, 0);
  a32({0xec532b10});  // vmov r2, r3, d0
  EXPECT_EQ(r(2), 0x11111111u);
  EXPECT_EQ(r(3), 0x22222222u);
  mem.write64(kData + 8, 0x400c000000000000ull);  // 3.5
  a32({0xed900b02});  // vldr d0, [r0, #8]
  EXPECT_EQ(d(0), 3.5);
  core.set_reg(13, kData + 0x100);
  set_d(8, 1.0);
  set_d(9, 2.0);
  a32({0xed2d8b04});  // vpush {d8-d9}
  EXPECT_EQ(r(13), kData + 0xf0);
  set_d(8, 0);
  set_d(9, 0);
  a32({0xecbd8b04});  // vpop {d8-d9}
  EXPECT_EQ(d(8), 1.0);
  EXPECT_EQ(d(9), 2.0);
  EXPECT_EQ(r(13), kData + 0x100);
}

TEST_F(Iss, UndefinedNamesAddressAndEncoding) {
  mem.write32(kCode, 0xe7f123f4);  // udf
  core.set_pc(kCode);
  try {
    core.step();
    FAIL() << "no exception";
  } catch (const UndefinedInstruction& e) {
    EXPECT_EQ(e.addr, kCode);
    EXPECT_NE(std::string(e.what()).find("0x00010000"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0xe7f123f4"), std::string::npos) << e.what();
  }
  mem.write16(kCode, 0xde00);  // T32 udf
  core.set_pc(kCode | 1);
  EXPECT_THROW(core.step(), UndefinedInstruction);
  mem.write32(kCode, 0xf2000d40);  // an Advanced SIMD encoding (not on this core)
  core.set_pc(kCode);
  EXPECT_THROW(core.step(), UndefinedInstruction);
}

TEST_F(Iss, FaultsNameTheAddress) {
  regs(0x0badc0de, 0);
  mem.write32(kCode, 0xe5902000);  // ldr r2, [r0]
  core.set_pc(kCode);
  try {
    core.step();
    FAIL() << "no fault";
  } catch (const GuestFault& e) {
    EXPECT_EQ(e.addr, 0x0badc0deu);
    EXPECT_FALSE(e.write);
  }
  core.set_pc(0x12345678);
  try {
    core.step();
    FAIL() << "no fault";
  } catch (const GuestFault& e) {
    EXPECT_EQ(e.addr, 0x12345678u);
    EXPECT_TRUE(e.fetch);
  }
}

TEST_F(Iss, WritesToCodeDropDecodedInstructions) {
  a32({0xe3a00001});  // mov r0, #1
  EXPECT_EQ(r(0), 1u);
  uint64_t decoded = core.decoded();
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(core.decoded(), decoded);  // cached
  regs(kCode, 0xe3a00002);             // mov r0, #2, stored over the first instruction
  mem.write32(kCode + 4, 0xe5801000);  // str r1, [r0]
  core.set_pc(kCode + 4);
  core.step();
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(r(0), 2u);
}

// The run loop runs basic blocks (decoded once, then the instructions one after the other): a
// store into the block it is running ends the block, and the rest is decoded again.
TEST_F(Iss, StoreIntoTheRunningBlockIsSeenByItsNextInstruction) {
  // str r1, [r0]; mov r2, #1; mov r2, #7 (the second run stores over it); add r3, r2, #0
  const uint32_t code[] = {0xe5801000u, 0xe3a02001u, 0xe3a02007u, 0xe2823000u};
  for (uint32_t i = 0; i < 4; ++i) mem.write32(kCode + 4 * i, code[i]);
  regs(kData, 0);
  core.set_pc(kCode);
  EXPECT_EQ(core.run(4), 4u);  // the block is formed with mov r2, #7 in it
  EXPECT_EQ(r(3), 7u);
  regs(kCode + 8, 0xe3a02002);  // mov r2, #2, stored over mov r2, #7
  core.set_pc(kCode);
  EXPECT_EQ(core.run(4), 4u);
  EXPECT_EQ(r(2), 2u);
  EXPECT_EQ(r(3), 2u);
}

// --max-instructions stops inside a block at exactly N, and the next run goes on from there.
TEST_F(Iss, RunStopsInsideABlockAtExactlyTheLimit) {
  const uint32_t code[] = {0xe3a00001u, 0xe3a01002u, 0xe3a02003u, 0xe3a03004u, 0xe3a04005u};
  for (uint32_t i = 0; i < 5; ++i) mem.write32(kCode + 4 * i, code[i]);  // mov r0..r4, #1..#5
  core.set_pc(kCode);
  EXPECT_EQ(core.run(3), 3u);
  EXPECT_EQ(core.pc(), kCode + 12);
  EXPECT_EQ(r(2), 3u);
  EXPECT_EQ(r(3), 0u);
  EXPECT_EQ(core.run(2), 2u);
  EXPECT_EQ(r(4), 5u);
  EXPECT_EQ(core.retired(InsnClass::Alu), 5u);
}

class RecordingSvc : public SupervisorCall {
 public:
  void svc(ArmCore& core, uint32_t imm) override {
    number = core.reg(7);
    this->imm = imm;
    core.set_reg(0, 42);
  }
  uint32_t number = 0, imm = 0;
};

TEST_F(Iss, SvcGoesToTheHandler) {
  RecordingSvc h;
  core.set_svc_handler(&h);
  core.set_reg(7, 4);
  a32({0xef000000});
  EXPECT_EQ(h.number, 4u);
  EXPECT_EQ(r(0), 42u);
  EXPECT_EQ(core.pc(), kCode + 4);
}

}  // namespace

// The ISS is plain C++: no SystemC kernel, so GoogleTest's own main.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
