// CP15 identification registers as a kernel reads them at boot (Cortex-A15 values).
#include "rt.h"

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  show("unexpected exception", (uint32_t)kind);
  show("lr", lr);
  show("spsr", spsr);
  return 0;
}

#define CP15(name, op1, crn, crm, op2)                                              \
  do {                                                                              \
    uint32_t v;                                                                     \
    __asm__ volatile("mrc p15, " #op1 ", %0, " #crn ", " #crm ", " #op2 : "=r"(v)); \
    show(name, v);                                                                  \
  } while (0)

int main(void) {
  CP15("midr", 0, c0, c0, 0);
  CP15("ctr", 0, c0, c0, 1);
  CP15("mpidr", 0, c0, c0, 5);
  CP15("id_pfr0", 0, c0, c1, 0);
  CP15("id_pfr1", 0, c0, c1, 1);
  CP15("id_mmfr0", 0, c0, c1, 4);
  CP15("id_isar0", 0, c0, c2, 0);
  CP15("clidr", 1, c0, c0, 1);
  return 0;
}
