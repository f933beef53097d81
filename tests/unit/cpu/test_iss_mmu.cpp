// ISS MMU (no SystemC): translation tables built in PagedMemory, then loads, stores and fetches
// through them, checking the architectural results (ARM ARM B3): short-descriptor sections,
// pages, domains and AP; the long-descriptor format with its access flag; stage 2 with the HSR
// syndrome (ISV, SRT, WnR, DFSC), HPFAR and HDFAR; the address translation operations; TLB
// invalidation; that a change of mapping does not run stale decoded code.
#include <gtest/gtest.h>

#include <initializer_list>

#include "models/cpu/iss/arm_core.h"

using vtoe::cpu::iss::ArmCore;
using vtoe::cpu::iss::Exception;
using vtoe::cpu::iss::Mode;
using vtoe::cpu::iss::PagedMemory;
namespace hsr_ec = vtoe::cpu::iss::hsr_ec;

namespace {

constexpr uint32_t kVbar = 0x3000, kHvbar = 0x2000, kCode = 0x10000;
constexpr uint32_t kL1 = 0x40000, kL2 = 0x44000;  // short-format tables
constexpr uint32_t kLdr = 0xe5901000;             // ldr r1, [r0]
constexpr uint32_t kStr = 0xe5801000;             // str r1, [r0]
constexpr uint32_t kLoop = 0xeafffffe;
constexpr uint32_t kSvc = 0x13, kUsr = 0x10, kAif = 0x1c0;

// Short-descriptor entries.
uint32_t section(uint32_t pa, uint32_t ap, uint32_t domain) {
  return (pa & 0xfff00000u) | ((ap & 3) << 10) | ((ap >> 2) << 15) | (domain << 5) | 2;
}
uint32_t page_table(uint32_t l2, uint32_t domain) { return (l2 & ~0x3ffu) | (domain << 5) | 1; }
uint32_t small_page(uint32_t pa, uint32_t ap) {
  return (pa & ~0xfffu) | ((ap >> 2) << 9) | ((ap & 3) << 4) | 2;
}

class IssMmu : public ::testing::Test {
 protected:
  void SetUp() override {
    mem.map(0, 0x200000);  // 2 MiB of "RAM"
    for (uint32_t a = kVbar; a < kVbar + 0x20; a += 4) mem.write32(a, kLoop);
    for (uint32_t a = kHvbar; a < kHvbar + 0x20; a += 4) mem.write32(a, kLoop);
    core.reset_system(true);
    core.set_cpsr(kSvc | kAif);
    core.set_vbar(kVbar);
    core.set_cp15(12, 4, 0, 0, kHvbar);
  }
  void short_tables() {
    mem.write32(kL1 + 0 * 4, section(0, 3, 0));             // VA 0: identity, RW RW
    mem.write32(kL1 + 0x800 * 4, section(0x100000, 1, 0));  // 0x80000000: PL1 only
    mem.write32(kL1 + 0x900 * 4, page_table(kL2, 0));       // 0x90000000: pages
    mem.write32(kL2 + 1 * 4, small_page(0x102000, 5));      // 0x90001000: PL1 RO
    mem.write32(kL1 + 0xb00 * 4, section(0x100000, 3, 1));  // 0xb0000000: domain 1
    mem.write32(kL1 + 0xc00 * 4, section(0x100000, 0, 2));  // 0xc0000000: manager
    core.set_cp15(2, 0, 0, 0, kL1);                         // TTBR0
    core.set_cp15(2, 0, 0, 2, 0);                           // TTBCR: N = 0, short
    core.set_cp15(3, 0, 0, 0, 0x31);              // DACR: domain 0 client, 1 no access, 2 manager
    core.set_cp15(1, 0, 0, 0, core.sctlr() | 1);  // M
  }
  // One instruction at kCode with r0 = address.
  void access(uint32_t insn, uint32_t addr, uint32_t mode = kSvc) {
    mem.write32(kCode, insn);
    core.set_cpsr(mode | kAif);
    core.set_reg(0, addr);
    core.set_pc(kCode);
    core.step();
  }

  PagedMemory mem;
  ArmCore core{mem};
};

TEST_F(IssMmu, CodeAtTwoVirtualAddressesBranchesWithinEach) {
  // One physical page at 0x80000000 and at 0xc0000000: a branch's target is relative to where
  // it runs, though decoding resolves it to an address.
  short_tables();
  mem.write32(0x100000, 0xea000000);  // b .+8
  core.set_pc(0x80000000);
  core.step();
  EXPECT_EQ(core.pc(), 0x80000008u);
  core.set_pc(0xc0000000);
  core.step();
  EXPECT_EQ(core.pc(), 0xc0000008u);
  core.set_pc(0x80000000);
  core.step();
  EXPECT_EQ(core.pc(), 0x80000008u);
}

TEST_F(IssMmu, ShortDescriptorSectionsPagesDomainsAndPermissions) {
  short_tables();
  mem.write32(0x100000, 0xcafe0001);
  mem.write32(0x102234, 0xcafe0002);
  access(kLdr, 0x80000000);
  EXPECT_EQ(core.reg(1), 0xcafe0001u);
  EXPECT_EQ(core.pc(), kCode + 4);
  access(kLdr, 0x90001234);
  EXPECT_EQ(core.reg(1), 0xcafe0002u);
  // Unmapped: translation fault, section (FS 0b00101), DFAR = the VA.
  access(kLdr, 0xa0000010);
  EXPECT_EQ(core.mode(), Mode::Abt);
  EXPECT_EQ(core.pc(), kVbar + 0x10);
  EXPECT_EQ(core.dfsr(), 0x5u);
  EXPECT_EQ(core.dfar(), 0xa0000010u);
  EXPECT_EQ(core.reg(14), kCode + 8);
  // A store to a read-only page: permission fault, page (0b01111), WnR.
  access(kStr, 0x90001000);
  EXPECT_EQ(core.dfsr(), 0x80fu);
  // Domain 1 has no access: domain fault, section (0b01001), domain in DFSR[7:4].
  access(kLdr, 0xb0000000);
  EXPECT_EQ(core.dfsr(), 0x19u);
  // Manager domain: AP 0 would allow nothing, manager allows everything.
  access(kLdr, 0xc0000000);
  EXPECT_EQ(core.reg(1), 0xcafe0001u);
  // User mode may not read the PL1-only section: permission fault, section.
  access(kLdr, 0x80000000, kUsr);
  EXPECT_EQ(core.mode(), Mode::Abt);
  EXPECT_EQ(core.dfsr(), 0xdu);
  // A fetch from nowhere: prefetch abort, IFSR translation fault, IFAR.
  core.set_cpsr(kSvc | kAif);
  core.set_pc(0xa0000000);
  core.step();
  EXPECT_EQ(core.pc(), kVbar + 0x0c);
  EXPECT_EQ(core.ifsr(), 0x5u);
  EXPECT_EQ(core.ifar(), 0xa0000000u);
  // With the vectors unmapped too, the abort cannot be taken: the run ends with the fault
  // (never a loop of exception entries).
  core.set_vbar(0xa0000000);
  core.set_cpsr(kSvc | kAif);
  core.set_pc(0xa0001000);
  EXPECT_THROW(core.run(10), vtoe::cpu::iss::MmuAbort);
  core.set_vbar(kVbar);
  // A data abort handler that faults again at once: run() still ends after its budget.
  mem.write32(kVbar + 0x10, kLdr);  // r0 still points at nothing mapped
  access(kLdr, 0xa0000000);
  EXPECT_EQ(core.run(1000), 0u);
  mem.write32(kVbar + 0x10, kLoop);
  // ATS1CPR: PAR holds the physical page; ATS1CPW on the read-only page faults into PAR.
  core.set_cp15(7, 0, 8, 0, 0x90001234);
  EXPECT_EQ(core.cp15(7, 0, 4, 0), 0x00102000u | (1u << 9));  // PA, NS
  core.set_cp15(7, 0, 8, 1, 0x90001234);
  EXPECT_EQ(core.cp15(7, 0, 4, 0), (0xfu << 1) | 1u);
  EXPECT_GT(core.tlb_misses(), 0u);
}

TEST_F(IssMmu, TlbInvalidationAndNoStaleCodeAfterARemap) {
  short_tables();
  // VA 0x80000000 runs code from PA 0x100000; remapping the section to PA 0x200000 - 1 MiB...
  mem.write32(0x100000, 0xe3a02001);  // mov r2, #1
  mem.write32(0x100004, kLoop);
  mem.write32(0x180000, 0xe3a02002);  // mov r2, #2 (at PA 0x180000)
  mem.write32(0x180004, kLoop);
  mem.write32(kL1 + 0x801 * 4, section(0x100000, 1, 0));  // 0x80100000 -> PA 0x100000
  core.set_cpsr(kSvc | kAif);
  core.set_pc(0x80100000);
  core.step();
  EXPECT_EQ(core.reg(2), 1u);
  // The OS changes the mapping to a page table whose page is at PA 0x180000 and invalidates.
  mem.write32(kL1 + 0x801 * 4, page_table(kL2 + 0x400, 0));
  mem.write32(kL2 + 0x400, small_page(0x180000, 1));
  core.set_cp15(8, 0, 7, 0, 0);  // TLBIALL
  core.set_pc(0x80100000);
  core.step();
  EXPECT_EQ(core.reg(2), 2u);  // the new mapping's code, not the decoded old one
  EXPECT_GE(core.tlb_flushes(), 1u);
}

TEST_F(IssMmu, DecodedCodeIsPerPhysicalPageAndAStoreThroughAnAliasIsSeen) {
  short_tables();
  mem.write32(kL1 + 0x801 * 4, section(0x100000, 1, 0));  // 0x80100000 -> PA 0x100000 (PL1)
  mem.write32(kL1 + 0x802 * 4, section(0x100000, 1, 0));  // 0x80200000 -> the same PA
  mem.write32(0x100000, 0xe2822001);                      // add r2, r2, #1
  mem.write32(0x100004, kLoop);
  auto run_at = [&](uint32_t va) {
    core.set_cpsr(kSvc | kAif);
    core.set_pc(va);
    core.step();
  };
  core.set_reg(2, 0);
  run_at(0x80100000);
  run_at(0x80200000);  // another virtual address of the same code: decoded for it (the decoded
                       // form holds absolute targets; see CodeAtTwoVirtualAddresses...)
  const uint64_t decoded = core.decoded();
  core.set_cp15(8, 0, 7, 0, 0);  // TLBIALL: the mappings are looked up again, not the decode
  run_at(0x80200000);
  EXPECT_EQ(core.reg(2), 3u);
  EXPECT_EQ(core.decoded(), decoded);
  // A store through one alias (the software TLB's inline path) into the code another alias
  // runs: the new instruction runs there.
  core.set_reg(0, 0x80200000);
  core.set_reg(1, 0xe2822010);  // add r2, r2, #16
  mem.write32(kCode, kStr);
  run_at(kCode);
  run_at(0x80100000);
  EXPECT_EQ(core.reg(2), 19u);
  EXPECT_EQ(core.decoded(), decoded + 2);  // the str, and the new add
}

TEST_F(IssMmu, TlbimvaDropsThatPageAndTheBlockCoveringItOnly) {
  short_tables();
  mem.write32(kL2 + 2 * 4, small_page(0x103000, 1));  // 0x90002000, PL1 RW
  access(kLdr, 0x90001000);
  access(kLdr, 0x90002000);
  access(kLdr, 0x80000000);  // a section: a block entry
  const uint64_t misses = core.tlb_misses();
  core.set_cp15(8, 0, 7, 1, 0x90001000);  // TLBIMVA
  // Another page's entry stays, and so do the sections (the code's identity section, 0x80000000's):
  // none covers the invalidated address.
  access(kLdr, 0x90002000);
  access(kLdr, 0x80000000);
  EXPECT_EQ(core.tlb_misses(), misses);
  access(kLdr, 0x90001000);  // walked again
  EXPECT_EQ(core.tlb_misses(), misses + 1);
  // An address inside the section drops its entries, whichever 4 KiB page they were made for.
  core.set_cp15(8, 0, 7, 1, 0x800ff000);  // TLBIMVA
  access(kLdr, 0x80000000);
  EXPECT_EQ(core.tlb_misses(), misses + 2);
  access(kLdr, 0x90002000);  // not in it: still there
  EXPECT_EQ(core.tlb_misses(), misses + 2);
}

TEST_F(IssMmu, LongDescriptorBlocksPagesAndAccessFlag) {
  // TTBCR.EAE, T0SZ = 0: level 1 (1 GiB entries) -> level 2 (2 MiB) -> level 3 (4 KiB).
  constexpr uint32_t l1 = 0x50000, l2 = 0x51000, l2b = 0x52000, l3 = 0x53000;
  auto wr64 = [&](uint32_t a, uint64_t v) {
    mem.write32(a, static_cast<uint32_t>(v));
    mem.write32(a + 4, static_cast<uint32_t>(v >> 32));
  };
  const uint64_t af = 1u << 10, table = 3, block = 1, page = 3;
  wr64(l1 + 0 * 8, l2 | table);
  wr64(l2 + 0 * 8, 0x000000 | af | (1u << 6) | block);  // VA 0-2 MiB: identity, RW RW
  wr64(l1 + 2 * 8, l2b | table);                        // VA 0x80000000
  wr64(l2b + 0 * 8, l3 | table);
  wr64(l3 + 1 * 8, 0x102000 | af | page);              // 0x80001000: PL1 RW
  wr64(l3 + 2 * 8, 0x103000 | page);                   // 0x80002000: AF clear
  wr64(l3 + 3 * 8, 0x104000 | af | (2u << 6) | page);  // 0x80003000: PL1 RO
  mem.write32(0x102010, 0xbeef);
  core.set_cp15_64(0, 2, l1);           // TTBR0
  core.set_cp15(2, 0, 0, 2, 1u << 31);  // TTBCR.EAE
  core.set_cp15(1, 0, 0, 0, core.sctlr() | 1);
  access(kLdr, 0x80001010);
  EXPECT_EQ(core.reg(1), 0xbeefu);
  access(kLdr, 0x80002000);
  EXPECT_EQ(core.mode(), Mode::Abt);
  EXPECT_EQ(core.dfsr(), (1u << 9) | 0x0bu);  // LPAE format, access flag fault level 3
  access(kStr, 0x80003000);
  EXPECT_EQ(core.dfsr(), (1u << 11) | (1u << 9) | 0x0fu);  // permission fault level 3, WnR
  access(kLdr, 0xc0000000);
  EXPECT_EQ(core.dfsr(), (1u << 9) | 0x05u);                          // translation fault level 1
  core.set_cp15(7, 0, 8, 0, 0x80001010);                              // ATS1CPR: long-format PAR
  EXPECT_EQ(core.cp15_64(0, 7), 0x102000u | (1u << 11) | (1u << 9));  // PA, LPAE, NS
}

TEST_F(IssMmu, Stage2FaultsGoToHypWithSyndromeAndHpfar) {
  // Stage 2: VTCR.T0SZ = 0 (32-bit IPA), SL0 = 1 (start at level 1).
  constexpr uint32_t s2l1 = 0x60000, s2l2 = 0x61000;
  auto wr64 = [&](uint32_t a, uint64_t v) {
    mem.write32(a, static_cast<uint32_t>(v));
    mem.write32(a + 4, static_cast<uint32_t>(v >> 32));
  };
  const uint64_t af = 1u << 10;
  wr64(s2l1 + 0, s2l2 | 3);
  wr64(s2l2 + 0 * 8, 0x000000 | af | (3u << 6) | 1);  // IPA 0-2 MiB -> PA 0, RW
  wr64(s2l2 + 1 * 8, 0x000000 | af | (1u << 6) | 1);  // IPA 2-4 MiB -> PA 0, read-only
  mem.write32(0x1234, 0x5a5a);
  core.set_cp15(2, 4, 1, 2, 1u << 6);  // VTCR: SL0 = 1
  core.set_cp15_64(6, 2, s2l1);        // VTTBR
  core.set_cp15(1, 4, 1, 0, 1);        // HCR.VM
  access(kLdr, 0x201234);              // IPA 0x201234 -> PA 0x1234 (stage 1 off: VA = IPA)
  EXPECT_EQ(core.mode(), Mode::Svc);
  EXPECT_EQ(core.reg(1), 0x5a5au);
  // A store to the read-only IPA range: stage 2 permission fault, level 2.
  mem.write32(kCode, 0xe1c030b4);  // strh r3, [r0, #4]
  core.set_reg(0, 0x201000);
  core.set_pc(kCode);
  core.step();
  EXPECT_EQ(core.mode(), Mode::Hyp);
  EXPECT_EQ(core.pc(), kHvbar + 0x14);
  EXPECT_EQ(core.elr_hyp(), kCode);
  // EC 0x24, IL, ISV, SAS = halfword, SRT = r3, WnR, DFSC = permission level 2.
  EXPECT_EQ(core.hsr(), (uint32_t{hsr_ec::kDataAbortLower} << 26) | (1u << 25) | (1u << 24) |
                            (1u << 22) | (3u << 16) | (1u << 6) | 0x0eu);
  EXPECT_EQ(core.hdfar(), 0x201004u);
  EXPECT_EQ(core.hpfar(), (0x201004u >> 12) << 4);
  // Unmapped IPA: translation fault level 1 (beyond the level-1 table's first entry).
  access(kLdr, 0x40000000);
  EXPECT_EQ(core.mode(), Mode::Hyp);
  EXPECT_EQ(core.hsr() & 0x3f, 0x05u);
  EXPECT_EQ(core.hsr() >> 24 & 1, 1u);  // ISV: LDR
  EXPECT_EQ(core.hpfar(), 0x40000u << 4);
  EXPECT_EQ(core.hyp_entries(hsr_ec::kDataAbortLower), 2u);
}

TEST_F(IssMmu, Stage2FaultInsideABasicBlockNamesItsInstruction) {
  // run() executes straight-line code as a basic block, which keeps no next_ per instruction: a
  // stage-2 fault on its second instruction still returns to that instruction, with IL from its
  // own length (A32 and a 16-bit T32 STRH), after the first one retired.
  constexpr uint32_t s2l1 = 0x60000, s2l2 = 0x61000;
  auto wr64 = [&](uint32_t a, uint64_t v) {
    mem.write32(a, static_cast<uint32_t>(v));
    mem.write32(a + 4, static_cast<uint32_t>(v >> 32));
  };
  const uint64_t af = 1u << 10;
  wr64(s2l1 + 0, s2l2 | 3);
  wr64(s2l2 + 0 * 8, 0x000000 | af | (3u << 6) | 1);  // IPA 0-2 MiB -> PA 0, RW
  wr64(s2l2 + 1 * 8, 0x000000 | af | (1u << 6) | 1);  // IPA 2-4 MiB -> PA 0, read-only
  core.set_cp15(2, 4, 1, 2, 1u << 6);                 // VTCR: SL0 = 1
  core.set_cp15_64(6, 2, s2l1);                       // VTTBR
  core.set_cp15(1, 4, 1, 0, 1);                       // HCR.VM
  // ISV, SAS = halfword, SRT = r3, WnR, DFSC = permission level 2 (EC 0x24).
  const uint32_t syndrome = (uint32_t{hsr_ec::kDataAbortLower} << 26) | (1u << 24) | (1u << 22) |
                            (3u << 16) | (1u << 6) | 0x0eu;
  struct Case {
    bool thumb;
    uint32_t at;
    std::initializer_list<uint16_t> halfwords;  // little-endian order
    uint32_t il;
  };
  const Case cases[] = {
      // mov r1, #7; strh r3, [r0, #4]; b .
      {false, kCode, {0x1007, 0xe3a0, 0x30b4, 0xe1c0, 0xfffe, 0xeaff}, 1u << 25},
      // movs r1, #7; strh r3, [r0, #4]; b .
      {true, kCode + 0x100, {0x2107, 0x8083, 0xe7fe}, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.thumb ? "T32" : "A32");
    uint32_t a = c.at;
    for (uint16_t h : c.halfwords) {
      mem.write16(a, h);
      a += 2;
    }
    core.set_cpsr(kSvc | kAif);
    core.set_reg(0, 0x201000);
    core.set_reg(1, 0);
    core.set_pc(c.at | (c.thumb ? 1u : 0u));
    const uint64_t before = core.retired();
    core.run(2);  // the first instruction, then the fault's entry
    EXPECT_EQ(core.retired() - before, 1u);
    EXPECT_EQ(core.reg(1), 7u);
    EXPECT_EQ(core.mode(), Mode::Hyp);
    EXPECT_EQ(core.pc(), kHvbar + 0x14);
    EXPECT_EQ(core.elr_hyp(), c.at + (c.thumb ? 2u : 4u));
    EXPECT_EQ(core.hsr(), syndrome | c.il);
    EXPECT_EQ(core.hdfar(), 0x201004u);
  }
}

}  // namespace

// The ISS is plain C++: no SystemC kernel, so GoogleTest's own main.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
