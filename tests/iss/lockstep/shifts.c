/* The barrel shifter and the flags: every flag-setting data-processing instruction with operands
   shifted by immediates and (A32) by registers of 0, 1, 31, 32, 33 and 255, carry in clear and
   set, through inline assembly; then loads and stores in every addressing mode. The lock-step
   trace compares the registers and N Z C V after each instruction. */
#include "lockstep.h"

static u32 seed = 0x1234567;
static u32 next(void) {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

/* Sets C from `cin`, runs one instruction, returns its result and folds the flags in. */
#define DP(insn, operand2)                                                                      \
  __asm__ volatile("cmp %3, #1\n" insn " %0, %1, " operand2 "\n mrs %2, APSR"                 \
                   : "=&r"(r), "+r"(a), "=&r"(fl) : "r"(cin), "r"(b), "r"(s) : "cc");        \
  acc = acc * 31 + r + fl;
#define CMP(insn, operand2)                                                                     \
  __asm__ volatile("cmp %2, #1\n" insn " %0, " operand2 "\n mrs %1, APSR"                     \
                   : "+r"(a), "=&r"(fl) : "r"(cin), "r"(b), "r"(s) : "cc");                   \
  acc = acc * 31 + fl;

#define ALL_IMM(insn)                                                            \
  DP(insn, "%4") DP(insn, "%4, lsl #1") DP(insn, "%4, lsl #31")                 \
  DP(insn, "%4, lsr #1") DP(insn, "%4, lsr #32") DP(insn, "%4, asr #7")         \
  DP(insn, "%4, asr #32") DP(insn, "%4, ror #13") DP(insn, "%4, rrx")
#define ALL_REG(insn) \
  DP(insn, "%4, lsl %5") DP(insn, "%4, lsr %5") DP(insn, "%4, asr %5") DP(insn, "%4, ror %5")

static u32 words[64];

int main(void) {
  static const u32 amounts[] = {0, 1, 31, 32, 33, 255, 0x100, 17};
  u32 acc = 0, r, fl;
  for (int i = 0; i < 16; i++) {
    u32 a0 = next(), b = next(), s = amounts[i % 8];
    if (i % 5 == 3) b = 0x80000000u;
    if (i % 5 == 4) a0 = 0xffffffffu;
    for (u32 cin = 0; cin < 3; cin += 2) {  /* cmp cin, #1: C clear for 0, set for 2 */
      u32 a = a0;
      ALL_IMM("ands") ALL_IMM("eors") ALL_IMM("subs") ALL_IMM("rsbs") ALL_IMM("adds")
      ALL_IMM("adcs") ALL_IMM("sbcs") ALL_IMM("orrs") ALL_IMM("bics")
      CMP("tst", "%3, ror #3") CMP("teq", "%3, lsl #4") CMP("cmp", "%3, asr #2")
      CMP("cmn", "%3, lsr #5") CMP("tst", "#0xff000000") CMP("teq", "#0x80000000")
      __asm__ volatile("cmp %2, #1\n movs %0, %1, lsl #3\n mrs %1, APSR"
                       : "=&r"(r), "+r"(a) : "r"(cin) : "cc");
      acc = acc * 31 + r + a;
#ifndef __thumb__
      ALL_REG("ands") ALL_REG("subs") ALL_REG("rsbs") ALL_REG("adcs") ALL_REG("sbcs")
      ALL_REG("rscs") ALL_REG("orrs") ALL_REG("eors")
      DP("rscs", "%4") DP("rscs", "%4, rrx")
      __asm__ volatile("cmp %2, #1\n movs %0, %1, ror %3\n mrs %1, APSR"
                       : "=&r"(r), "+r"(a) : "r"(cin), "r"(s) : "cc");
      acc = acc * 31 + r + a;
#else
      __asm__ volatile("cmp %2, #1\n lsls %0, %1, %3\n mrs %1, APSR"
                       : "=&r"(r), "+r"(a) : "r"(cin), "r"(s) : "cc");
      acc = acc * 31 + r + a;
      __asm__ volatile("cmp %2, #1\n rors %0, %1, %3\n mrs %1, APSR"
                       : "=&r"(r), "+r"(a) : "r"(cin), "r"(s) : "cc");
      acc = acc * 31 + r + a;
#endif
    }
  }
  /* addressing modes */
  for (int i = 0; i < 64; i++) words[i] = next();
  u32 *p = words + 8, v, k = 3;
  __asm__ volatile("ldr %0, [%1, #4]!" : "=r"(v), "+r"(p)); acc += v + (u32)p;
  __asm__ volatile("ldr %0, [%1], #-8" : "=r"(v), "+r"(p)); acc += v + (u32)p;
  __asm__ volatile("ldr %0, [%1, %2, lsl #2]" : "=r"(v) : "r"(p), "r"(k)); acc += v;
  __asm__ volatile("ldrh %0, [%1, #6]" : "=r"(v) : "r"(p)); acc += v;
  __asm__ volatile("ldrsh %0, [%1, #2]" : "=r"(v) : "r"(p)); acc += v;
  __asm__ volatile("ldrsb %0, [%1, #-3]" : "=r"(v) : "r"(p)); acc += v;
  __asm__ volatile("ldrb %0, [%1, %2]" : "=r"(v) : "r"(p), "r"(k)); acc += v;
  __asm__ volatile("ldrd r4, r5, [%0, #8]!\n add %1, r4, r5" : "+r"(p), "=r"(v) : : "r4", "r5");
  acc += v + (u32)p;
  __asm__ volatile("mov r4, %1\n mov r5, %2\n strd r4, r5, [%0], #16"
                   : "+r"(p) : "r"(v), "r"(acc) : "r4", "r5", "memory");
  acc += (u32)p;
  __asm__ volatile("strh %1, [%0, #-2]!" : "+r"(p) : "r"(acc) : "memory"); acc += (u32)p;
  __asm__ volatile("strb %1, [%0], #1" : "+r"(p) : "r"(acc) : "memory"); acc += (u32)p;
  __asm__ volatile("ldr %0, [%1, #1]" : "=r"(v) : "r"(words + 4)); acc += v;  /* unaligned LDR */
#ifndef __thumb__
  __asm__ volatile("ldr %0, [%1, -%2, asr #1]" : "=r"(v) : "r"(words + 30), "r"(k * 8)); acc += v;
  __asm__ volatile("ldrsh %0, [%1, -%2]!" : "=r"(v), "+r"(p) : "r"(k)); acc += v + (u32)p;
  __asm__ volatile("ldmib %1!, {%0}" : "=r"(v), "+r"(p)); acc += v + (u32)p;
  __asm__ volatile("ldmda %1, {%0}" : "=r"(v) : "r"(p)); acc += v;
#endif
  __asm__ volatile("ldrex %0, [%1]\n strex %0, %2, [%1]" : "=&r"(v) : "r"(words + 40), "r"(acc)
                   : "memory");
  acc += v + words[40];
  for (int i = 0; i < 64; i++) acc = acc * 33 + words[i];
  return (int)(acc & 0x7f);
}
