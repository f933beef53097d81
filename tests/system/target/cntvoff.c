// CNTVOFF (Hyp): written with MCRR and read back with MRRC; the virtual count follows it.
// (The vGIC's virtual-timer test, vtimer.c, leaves CNTVOFF at its reset value.)
#include "rt.h"

int main(void) {
  show("mode", start_cpsr & 0x1f);
  __asm__ volatile("mcrr p15, 4, %0, %1, c14" ::"r"(0x12345678u), "r"(0x9u));
  uint32_t lo, hi;
  __asm__ volatile("mrrc p15, 4, %0, %1, c14" : "=r"(lo), "=r"(hi));
  show("cntvoff lo", lo);
  show("cntvoff hi", hi);
  uint32_t plo, phi, vlo, vhi;
  __asm__ volatile("isb; mrrc p15, 0, %0, %1, c14" : "=r"(plo), "=r"(phi));  // CNTPCT
  __asm__ volatile("isb; mrrc p15, 1, %0, %1, c14" : "=r"(vlo), "=r"(vhi));  // CNTVCT
  // CNTVCT = CNTPCT - CNTVOFF: the high word wraps below zero for a young counter.
  show("cntvct hi is cntpct hi - 9 - borrow", (phi - hi - (plo < lo ? 1u : 0u)) == vhi);
  // The same register for both halves (allowed for MCRR; only MRRC forbids Rt == Rt2).
  __asm__ volatile("mcrr p15, 4, %0, %0, c14" ::"r"(0u));
  __asm__ volatile("mrrc p15, 4, %0, %1, c14" : "=r"(lo), "=r"(hi));
  show("cntvoff after mcrr with rt == rt2", lo | hi);
  return 0;
}
