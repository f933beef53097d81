// Every CP15 identification register the ISS implements, and CCSIDR of each cache CSSELR
// selects, as QEMU's cortex-a15 reports them (the processor's part of issue 28). MVFR0/1 are
// not printed: the ISS describes its VFPv3-D16 there on purpose (docs/iss.md).
#include "rt.h"

int main(void) {
  CP15("midr", 0, c0, c0, 0);
  CP15("ctr", 0, c0, c0, 1);
  CP15("tcmtr", 0, c0, c0, 2);
  CP15("tlbtr", 0, c0, c0, 3);
  CP15("mpidr", 0, c0, c0, 5);
  CP15("revidr", 0, c0, c0, 6);
  CP15("id_pfr0", 0, c0, c1, 0);
  CP15("id_pfr1", 0, c0, c1, 1);
  CP15("id_dfr0", 0, c0, c1, 2);
  CP15("id_afr0", 0, c0, c1, 3);
  CP15("id_mmfr0", 0, c0, c1, 4);
  CP15("id_mmfr1", 0, c0, c1, 5);
  CP15("id_mmfr2", 0, c0, c1, 6);
  CP15("id_mmfr3", 0, c0, c1, 7);
  CP15("id_isar0", 0, c0, c2, 0);
  CP15("id_isar1", 0, c0, c2, 1);
  CP15("id_isar2", 0, c0, c2, 2);
  CP15("id_isar3", 0, c0, c2, 3);
  CP15("id_isar4", 0, c0, c2, 4);
  CP15("id_isar5", 0, c0, c2, 5);
  // The reserved rest of the identification space reads as zero (ID_MMFR4, ID_ISAR6, ID_PFR2,
  // ID_DFR1, ID_MMFR5 in later architectures; Xen's identify_cpu reads them).
  CP15("id_mmfr4", 0, c0, c2, 6);
  CP15("id_isar6", 0, c0, c2, 7);
  CP15("c0_c3_0", 0, c0, c3, 0);
  CP15("id_pfr2", 0, c0, c3, 4);
  CP15("id_dfr1", 0, c0, c3, 5);
  CP15("id_mmfr5", 0, c0, c3, 6);
  CP15("c0_c7_7", 0, c0, c7, 7);
  CP15("clidr", 1, c0, c0, 1);
  CP15("aidr", 1, c0, c0, 7);
  for (uint32_t sel = 0; sel < 3; ++sel) {
    __asm__ volatile("mcr p15, 2, %0, c0, c0, 0\n isb" ::"r"(sel));
    CP15("ccsidr", 1, c0, c0, 0);
  }
  CP15("sctlr", 0, c1, c0, 0);
  // SCTLR keeps what is written, RES1 bits included, as QEMU 7.2 keeps it.
  uint32_t sctlr;
  __asm__ volatile("mrc p15, 0, %0, c1, c0, 0" : "=r"(sctlr));
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 0\n isb" ::"r"(0x60u));
  CP15("sctlr written 0x60", 0, c1, c0, 0);
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 0\n isb" ::"r"(sctlr));
  CP15("cntfrq", 0, c14, c0, 0);
  return 0;
}
