// SCTLR.A (issue 43): with it set, every load and store needs its size's alignment (an
// alignment fault, DFSR 0x001 with WnR; 0x221 in the long-descriptor format, TTBCR.EAE); with it
// clear, LDR/STR/LDRH/STRH may be unaligned. A32 and T32, MMU off. Also the status of an
// external abort in the long-descriptor format.
#include "rt.h"

static volatile uint8_t buf[32] __attribute__((aligned(8)));

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  uint32_t fsr, far;
  if (kind != EXC_DABT) {
    show("unexpected exception", (uint32_t)kind);
    show("spsr", spsr);
    return 0;
  }
  __asm__ volatile("mrc p15, 0, %0, c5, c0, 0" : "=r"(fsr));
  __asm__ volatile("mrc p15, 0, %0, c6, c0, 0" : "=r"(far));
  show("data abort dfsr", fsr & ~(1u << 12));  // ExT is IMPLEMENTATION DEFINED
  show("dfar offset", far - (uint32_t)buf);
  return lr;
}

static uint32_t sctlr(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 0, %0, c1, c0, 0" : "=r"(v));
  return v;
}
static void set_sctlr(uint32_t v) {
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 0\n isb" ::"r"(v) : "memory");
}

static uint32_t __attribute__((noinline, target("thumb"))) t32_accesses(void) {
  uint32_t v = *(volatile uint32_t*)(buf + 6);  // 16-bit LDR encoding may be used
  *(volatile uint16_t*)(buf + 9) = 5;
  v += *(volatile uint16_t*)(buf + 10);
  return v;
}

static void accesses(void) {
  uint32_t v = 0;
  v += *(volatile uint32_t*)(buf + 1);
  v += *(volatile uint32_t*)(buf + 2);
  v += *(volatile uint16_t*)(buf + 3);
  v += *(volatile int16_t*)(buf + 5);
  v += *(volatile uint8_t*)(buf + 7);
  *(volatile uint32_t*)(buf + 13) = v;
  *(volatile uint16_t*)(buf + 17) = (uint16_t)v;
  *(volatile uint32_t*)(buf + 20) = v;  // aligned
  v += t32_accesses();
  (void)v;
}

int main(void) {
  const uint32_t s = sctlr();
  show("sctlr.a at reset", s & 2);
  puts_("alignment checks on\n");
  set_sctlr(s | 2);
  accesses();
  puts_("long-descriptor format\n");
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 2\n isb" ::"r"(1u << 31));  // TTBCR.EAE
  (void)*(volatile uint32_t*)(buf + 1);
  *(volatile uint16_t*)(buf + 3) = 1;
  set_sctlr(s);
  puts_("external abort, long format\n");
  (void)*(volatile uint32_t*)0x0b000000u;
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 2\n isb" ::"r"(0));
  puts_("alignment checks off\n");
  accesses();
  puts_("done\n");
  return 0;
}
