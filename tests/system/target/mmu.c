// Stage-1 translation in the short-descriptor format, as a kernel sets it up (the processor's
// part of issue 28): sections and small pages, an alias, domains, AP/APX and XN, and the faults
// with their DFSR/DFAR and IFSR/IFAR, the ATS1CP* operations into PAR, TLBIMVA after a remap.
#include "rt.h"

static uint32_t l1[4096] __attribute__((aligned(16384)));
static uint32_t l2[256] __attribute__((aligned(1024)));
static volatile uint32_t resume_at;

static uint32_t cp15_dfsr(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 0, %0, c5, c0, 0" : "=r"(v));
  return v;
}

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  uint32_t fsr, far;
  if (kind == EXC_DABT) {
    fsr = cp15_dfsr();
    __asm__ volatile("mrc p15, 0, %0, c6, c0, 0" : "=r"(far));
    show("data abort dfsr", fsr & ~(1u << 12));  // ExT is IMPLEMENTATION DEFINED
    show("dfar", far);
    return lr;  // resume after the access (the entry returns to this - 4)
  }
  if (kind == EXC_PABT) {
    __asm__ volatile("mrc p15, 0, %0, c5, c0, 1" : "=r"(fsr));
    __asm__ volatile("mrc p15, 0, %0, c6, c0, 2" : "=r"(far));
    show("prefetch abort ifsr", fsr & ~(1u << 12));
    show("ifar", far);
    return resume_at + 4;
  }
  show("unexpected exception", (uint32_t)kind);
  show("lr", lr);
  show("spsr", spsr);
  power_off();
}

static uint32_t section(uint32_t pa, uint32_t ap, uint32_t domain, uint32_t xn) {
  return (pa & 0xfff00000u) | ((ap & 3) << 10) | ((ap >> 2) << 15) | (domain << 5) | (xn << 4) | 2;
}

static uint32_t par_of(uint32_t va, int write) {
  uint32_t par;
  if (write) __asm__ volatile("mcr p15, 0, %0, c7, c8, 1\n isb" ::"r"(va));
  else __asm__ volatile("mcr p15, 0, %0, c7, c8, 0\n isb" ::"r"(va));
  __asm__ volatile("mrc p15, 0, %0, c7, c4, 0" : "=r"(par));
  return par;
}

static void __attribute__((noinline)) returned_here(void) { puts_("resumed after the abort\n"); }

int main(void) {
  for (uint32_t i = 0; i < 4096; ++i) l1[i] = 0;
  l1[UART_BASE >> 20] = section(UART_BASE, 3, 0, 1);  // the UART, identity, XN
  for (uint32_t i = 0x400; i < 0x410; ++i) l1[i] = section(i << 20, 3, 0, 0);  // RAM, identity
  l1[0x800] = section(0x40000000u, 5, 0, 0);  // 0x80000000: RAM alias, PL1 read-only
  l1[0x900] = ((uint32_t)l2 & ~0x3ffu) | 1;   // 0x90000000: small pages, domain 0
  l2[1] = 0x40010000u | (1u << 4) | 2;        // 0x90001000 -> 0x40010000, PL1 RW (AP 01)
  l1[0xa00] = section(0x40000000u, 3, 1, 0);  // 0xa0000000: domain 1 (no access)
  l1[0xb00] = section(0x40000000u, 3, 0, 1);  // 0xb0000000: execute-never
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 0" ::"r"(l1));     // TTBR0
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 2" ::"r"(0));      // TTBCR: N = 0, short format
  __asm__ volatile("mcr p15, 0, %0, c3, c0, 0" ::"r"(0x1u));   // DACR: 0 client, 1 no access
  __asm__ volatile("mcr p15, 0, %0, c8, c7, 0" ::"r"(0));      // TLBIALL
  uint32_t sctlr;
  __asm__ volatile("mrc p15, 0, %0, c1, c0, 0" : "=r"(sctlr));
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 0\n isb" ::"r"(sctlr | 1) : "memory");
  puts_("mmu on\n");
  volatile uint32_t* alias = (volatile uint32_t*)0x80010000u;
  show("alias word", *alias == *(volatile uint32_t*)0x40010000u);
  show("page word", *(volatile uint32_t*)0x90001004u == *(volatile uint32_t*)0x40010004u);
  *(volatile uint32_t*)0x80000100u = 1;                 // read-only: permission fault, section
  (void)*(volatile uint32_t*)0x90002000u;               // no page: translation fault, page
  (void)*(volatile uint32_t*)0xa0000010u;               // domain 1: domain fault
  (void)*(volatile uint32_t*)0xc0000000u;               // nothing: translation fault, section
  show("par 0x90001234 read", par_of(0x90001234u, 0));
  show("par 0x80000000 write", par_of(0x80000000u, 1));
  show("par 0xc0000000 read", par_of(0xc0000000u, 0));
  // Remap 0x90001000 to the next page, invalidate by MVA, read through it again.
  l2[1] = 0x40011000u | (1u << 4) | 2;
  __asm__ volatile("dsb\n mcr p15, 0, %0, c8, c7, 1\n dsb\n isb" ::"r"(0x90001000u) : "memory");
  show("remapped word", *(volatile uint32_t*)0x90001004u == *(volatile uint32_t*)0x40011004u);
  // Execute from the execute-never alias of returned_here: a prefetch abort, resumed at the
  // identity-mapped function.
  resume_at = (uint32_t)returned_here;
  void (*xn_alias)(void) = (void (*)(void))((uint32_t)returned_here - 0x40000000u + 0xb0000000u);
  xn_alias();
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 0\n isb" ::"r"(sctlr) : "memory");
  puts_("mmu off\n");
  return 0;
}
