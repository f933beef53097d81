/* Condition codes: every condition after compares of random and edge values, as conditional
   A32 instructions and as T32 IT blocks of every shape (16-bit instructions inside an IT block
   set no flags, outside they do), plus CBZ/CBNZ in Thumb. */
#include "lockstep.h"

static u32 seed = 0xdeadbeef;
static u32 next(void) {
  seed ^= seed << 13;
  seed ^= seed >> 17;
  seed ^= seed << 5;
  return seed;
}

#define COND(c)                                                                        \
  __asm__ volatile("cmp %1, %2\n mov %0, #0\n it " #c "\n mov" #c " %0, #1"             \
                   : "=&l"(r) : "l"(a), "l"(b) : "cc");                                  \
  acc = acc * 3 + r;
#define ALL_CONDS \
  COND(eq) COND(ne) COND(cs) COND(cc) COND(mi) COND(pl) COND(vs) COND(vc) COND(hi) COND(ls) \
  COND(ge) COND(lt) COND(gt) COND(le)

int main(void) {
  static const u32 edge[] = {0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 5};
  u32 acc = 0, r;
  for (int i = 0; i < 40; i++) {
    u32 a = i < 36 ? edge[i % 6] : next(), b = i < 36 ? edge[i / 6] : next();
    ALL_CONDS
#ifdef __thumb__
    /* IT blocks of four with mixed then/else, flag-setting 16-bit forms inside */
    __asm__ volatile("cmp %1, %2\n"
                     "itete hi\n addhi %0, %1, %2\n subls %0, %1, %2\n lslhi %0, %0, #1\n"
                     "lsrls %0, %0, #1\n"
                     "ittet lt\n movlt %0, #7\n addlt %0, %0, #1\n movge %0, #9\n eorlt %0, %0, %1\n"
                     "adds %0, %0, %2\n mrs %1, APSR"
                     : "=&l"(r), "+l"(a) : "l"(b) : "cc");
    acc = acc * 31 + r + a;
    __asm__ volatile("mov %0, #0\n cbz %1, 1f\n mov %0, #1\n 1: cbnz %2, 2f\n add %0, %0, #2\n"
                     "2:"
                     : "=&l"(r) : "l"(a & 1), "l"(b & 2));
    acc = acc * 31 + r;
#else
    __asm__ volatile("cmp %1, %2\n addhi %0, %1, %2\n subls %0, %1, %2\n movlt %0, #7\n"
                     "eorges %0, %0, %1\n mrs %1, APSR"
                     : "=&r"(r), "+r"(a) : "r"(b) : "cc");
    acc = acc * 31 + r + a;
#endif
  }
  return (int)(acc & 0x7f);
}
