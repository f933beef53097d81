// Stage-1 permissions as QEMU 7.2 reports them (issue 43): the unprivileged loads and stores
// (LDRT, STRT, LDRBT, STRHT, LDRSHT, ... in A32 and T32) from PL1 checked against PL0's
// permissions, stores to read-only sections (status, WnR, address), execute-never on the fetch
// of a small page (XN) and of a section (PXN).
#include "rt.h"

static uint32_t l1[4096] __attribute__((aligned(16384)));
static uint32_t l2[256] __attribute__((aligned(1024)));
static volatile uint32_t resume_at;

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  uint32_t fsr, far;
  if (kind == EXC_DABT) {
    __asm__ volatile("mrc p15, 0, %0, c5, c0, 0" : "=r"(fsr));
    __asm__ volatile("mrc p15, 0, %0, c6, c0, 0" : "=r"(far));
    show("data abort dfsr", fsr & ~(1u << 12));
    show("dfar", far);
    show("lr", lr);
    return lr;
  }
  if (kind == EXC_PABT) {
    __asm__ volatile("mrc p15, 0, %0, c5, c0, 1" : "=r"(fsr));
    __asm__ volatile("mrc p15, 0, %0, c6, c0, 2" : "=r"(far));
    show("prefetch abort ifsr", fsr & ~(1u << 12));
    show("ifar", far);
    show("lr", lr);
    show("spsr", spsr);
    return resume_at + 4;
  }
  show("unexpected exception", (uint32_t)kind);
  show("lr", lr);
  return 0;
}

static uint32_t section(uint32_t pa, uint32_t ap, uint32_t domain, uint32_t xn, uint32_t pxn) {
  return (pa & 0xfff00000u) | ((ap & 3) << 10) | ((ap >> 2) << 15) | (domain << 5) | (xn << 4) |
         pxn | 2;
}

static void __attribute__((noinline)) ret_fn(void) {}

static void __attribute__((noinline, target("thumb"))) t32_unprivileged(void) {
  uint32_t v = 0;
  __asm__ volatile("ldrt %0, [%1, #4]" : "=r"(v) : "r"(0x80000300u) : "memory");
  __asm__ volatile("strt %0, [%1, #8]" ::"r"(v), "r"(0x81000300u) : "memory");
  __asm__ volatile("ldrbt %0, [%1, #1]" : "=r"(v) : "r"(0x80000300u) : "memory");
  __asm__ volatile("ldrsht %0, [%1, #2]" : "=r"(v) : "r"(0x81000300u) : "memory");  // allowed
}

int main(void) {
  // The words the test addresses map (RAM's first page holds QEMU's or vtoe's own device tree,
  // which differ): a known pattern, so that a register-by-register comparison holds too.
  for (uint32_t i = 0x100; i < 0x400; i += 4)
    *(volatile uint32_t*)(0x40000000u + i) = i * 0x01010101u;
  for (uint32_t i = 0; i < 4096; ++i) l1[i] = 0;
  l1[UART_BASE >> 20] = section(UART_BASE, 3, 0, 1, 0);
  for (uint32_t i = 0x400; i < 0x410; ++i) l1[i] = section(i << 20, 3, 0, 0, 0);
  l1[0x800] = section(0x40000000u, 1, 0, 0, 0);  // PL1 RW, PL0 none
  l1[0x810] = section(0x40000000u, 2, 0, 0, 0);  // PL1 RW, PL0 RO
  l1[0x820] = section(0x40000000u, 5, 0, 0, 0);  // PL1 RO
  l1[0x830] = section(0x40000000u, 3, 0, 0, 1);  // PXN
  l1[0x900] = ((uint32_t)l2 & ~0x3ffu) | 1;
  l2[0x10] = 0x40010000u | (3u << 4) | 2 | 1;  // 0x90010000: small page, XN
  l2[0x11] = 0x40011000u | (3u << 4) | 2 | 1;
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 0" ::"r"(l1));
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 2" ::"r"(0));
  __asm__ volatile("mcr p15, 0, %0, c3, c0, 0" ::"r"(0x1u));
  __asm__ volatile("mcr p15, 0, %0, c8, c7, 0" ::"r"(0));
  uint32_t sctlr;
  __asm__ volatile("mrc p15, 0, %0, c1, c0, 0" : "=r"(sctlr));
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 0\n isb" ::"r"(sctlr | 1) : "memory");
  puts_("mmu on\n");
  uint32_t v = 0;
  puts_("ldrt from PL1 on PL1-only\n");
  __asm__ volatile("ldrt %0, [%1]" : "=r"(v) : "r"(0x80000100u) : "memory");
  puts_("strt from PL1 on PL0-RO\n");
  __asm__ volatile("strt %0, [%1]" ::"r"(v), "r"(0x81000100u) : "memory");
  puts_("ldrbt ok on PL0-RO\n");
  __asm__ volatile("ldrbt %0, [%1]" : "=r"(v) : "r"(0x81000100u) : "memory");
  puts_("ldrht, ldrsbt, ldrsht on PL1-only\n");
  uint32_t a = 0x80000200u;
  __asm__ volatile("ldrht %0, [%1], #2" : "=r"(v), "+r"(a) : : "memory");
  __asm__ volatile("ldrsbt %0, [%1], #1" : "=r"(v), "+r"(a) : : "memory");
  __asm__ volatile("ldrsht %0, [%1], #2" : "=r"(v), "+r"(a) : : "memory");
  show("base after", a);
  puts_("strht, strbt on PL0-RO\n");
  a = 0x81000202u;
  __asm__ volatile("strht %1, [%0], #2" : "+r"(a) : "r"(v) : "memory");
  __asm__ volatile("strbt %1, [%0], #1" : "+r"(a) : "r"(v) : "memory");
  show("base after", a);
  puts_("t32 ldrt, strt, ldrbt\n");
  t32_unprivileged();
  puts_("ldrt on PL0-RO works\n");
  __asm__ volatile("ldrt %0, [%1]" : "=r"(v) : "r"(0x81000100u) : "memory");
  show("word", v == *(volatile uint32_t*)0x40000100u);
  puts_("str on PL1-RO\n");
  *(volatile uint32_t*)0x82000104u = 1;
  puts_("strb on PL1-RO\n");
  *(volatile uint8_t*)0x82000107u = 1;
  // Execute-never: a small page with XN, a section with PXN.
  uint32_t fn = (uint32_t)&ret_fn - 0x40010000u;
  puts_("exec XN page\n");
  __asm__ volatile("adr r0, 1f\n str r0, [%0]\n blx %1\n1:" ::"r"(&resume_at), "r"(0x90010000u + fn)
                   : "r0", "r1", "r2", "r3", "r12", "lr", "memory");
  puts_("exec PXN section\n");
  __asm__ volatile("adr r0, 1f\n str r0, [%0]\n blx %1\n1:" ::"r"(&resume_at), "r"(0x83010000u + fn)
                   : "r0", "r1", "r2", "r3", "r12", "lr", "memory");
  puts_("done\n");
  return 0;
}
