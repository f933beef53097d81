/* The v6 media, saturating, parallel and DSP-multiply instructions that compilers rarely emit,
   each through inline assembly on pseudo-random operands (the lock-step trace compares every
   register, Q and GE after each one). */
#include "lockstep.h"

static u32 seed = 0x9e3779b9;
static u32 next(void) {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

#define OP3(insn)                                                     \
  __asm__ volatile(insn " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); \
  acc = acc * 31 + r;
#define OP4(insn)                                                              \
  __asm__ volatile(insn " %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(c)); \
  acc = acc * 31 + r;
#define OP2(insn)                                        \
  __asm__ volatile(insn " %0, %1" : "=r"(r) : "r"(a)); \
  acc = acc * 31 + r;
#define PAR(pre)                                      \
  OP3(#pre "add16") OP3(#pre "asx") OP3(#pre "sax") \
  OP3(#pre "sub16") OP3(#pre "add8") OP3(#pre "sub8") OP3("sel")

int main(void) {
  u32 acc = 0, r, lo, hi;
  for (int i = 0; i < 24; i++) {
    u32 a = next(), b = next(), c = next();
    if (i % 4 == 1) a = 0x7fff8000u ^ (a & 0x00ff00ffu);  /* near the saturation edges */
    if (i % 4 == 2) b = 0x80007fffu;
    __asm__ volatile("msr APSR_nzcvq, %0" ::"r"(0u));
    PAR(s) PAR(q) PAR(sh) PAR(u) PAR(uq) PAR(uh)
    OP3("qadd") OP3("qsub") OP3("qdadd") OP3("qdsub")
    OP3("smulbb") OP3("smulbt") OP3("smultb") OP3("smultt") OP3("smulwb") OP3("smulwt")
    OP4("smlabb") OP4("smlatt") OP4("smlawb") OP4("smlawt")
    OP3("smuad") OP3("smuadx") OP3("smusd") OP3("smusdx")
    OP4("smlad") OP4("smladx") OP4("smlsd") OP4("smlsdx")
    OP3("smmul") OP3("smmulr") OP4("smmla") OP4("smmlar") OP4("smmls") OP4("smmlsr")
    OP3("usad8") OP4("usada8") OP3(".arch_extension idiv\n sdiv") OP3(".arch_extension idiv\n udiv")
    OP2("clz") OP2("rev") OP2("rev16") OP2("revsh") OP2("rbit")
    OP2("sxtb16") OP2("uxtb16") OP2("sxtb") OP2("sxth") OP2("uxtb") OP2("uxth")
    OP3("sxtab") OP3("sxtah") OP3("uxtab") OP3("uxtah") OP3("sxtab16") OP3("uxtab16")
    __asm__ volatile("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(a)); acc = acc * 31 + r;
    __asm__ volatile("sxtah %0, %1, %2, ror #16" : "=r"(r) : "r"(a), "r"(b)); acc = acc * 31 + r;
    __asm__ volatile("pkhbt %0, %1, %2, lsl #7" : "=r"(r) : "r"(a), "r"(b)); acc = acc * 31 + r;
    __asm__ volatile("pkhtb %0, %1, %2, asr #11" : "=r"(r) : "r"(a), "r"(b)); acc = acc * 31 + r;
    __asm__ volatile("ssat %0, #9, %1, lsl #3" : "=r"(r) : "r"(a)); acc = acc * 31 + r;
    __asm__ volatile("usat %0, #13, %1, asr #5" : "=r"(r) : "r"(a)); acc = acc * 31 + r;
    __asm__ volatile("ssat16 %0, #7, %1" : "=r"(r) : "r"(a)); acc = acc * 31 + r;
    __asm__ volatile("usat16 %0, #5, %1" : "=r"(r) : "r"(b)); acc = acc * 31 + r;
    __asm__ volatile("ubfx %0, %1, #5, #19" : "=r"(r) : "r"(a)); acc = acc * 31 + r;
    __asm__ volatile("sbfx %0, %1, #9, #13" : "=r"(r) : "r"(a)); acc = acc * 31 + r;
    r = c;
    __asm__ volatile("bfi %0, %1, #3, #17" : "+r"(r) : "r"(a)); acc = acc * 31 + r;
    __asm__ volatile("bfc %0, #11, #9" : "+r"(r)); acc = acc * 31 + r;
    lo = a, hi = b;
    __asm__ volatile("umaal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(c), "r"(a));
    __asm__ volatile("smlalbt %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(c), "r"(b));
    __asm__ volatile("smlald %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(a), "r"(b));
    acc = acc * 31 + lo + hi;
    /* flags: carries and overflow through add/subtract with carry */
    __asm__ volatile("adds %0, %1, %2\n adcs %0, %0, %1\n sbcs %0, %0, %2\n rsbs %0, %0, #0\n"
                     "mrs %0, APSR" : "=r"(r) : "r"(a), "r"(b) : "cc");
    acc = acc * 31 + r;
#ifndef __thumb__
    __asm__ volatile("adds %0, %1, %2, ror %3\n rscs %0, %0, %1, lsr %3\n movs %0, %0, asr %3\n"
                     "mrs %0, APSR" : "=&r"(r) : "r"(a), "r"(b), "r"(c & 0x3f) : "cc");
    acc = acc * 31 + r;
#endif
  }
  return (int)(acc & 0x7f);
}
