// Unaligned loads and stores and LDM/STM across a page boundary into a page that faults
// (issue 43: the fault status, WnR and address as QEMU 7.2 reports them): the fault address is
// the first byte of the faulting page, a store that faults writes nothing of its first page,
// and an STM that faults on its second page has written its first word (as QEMU).
#include "rt.h"
static uint32_t l1[4096] __attribute__((aligned(16384)));
static uint32_t l2[256] __attribute__((aligned(1024)));
uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  uint32_t fsr, far;
  if (kind == EXC_DABT) {
    __asm__ volatile("mrc p15, 0, %0, c5, c0, 0" : "=r"(fsr));
    __asm__ volatile("mrc p15, 0, %0, c6, c0, 0" : "=r"(far));
    show("data abort dfsr", fsr & ~(1u << 12));
    show("dfar", far);
    return lr;
  }
  show("unexpected exception", (uint32_t)kind);
  show("spsr", spsr);
  return 0;
}
int main(void) {
  for (uint32_t i = 0; i < 4096; ++i) l1[i] = 0;
  l1[UART_BASE >> 20] = (UART_BASE) | (3u << 10) | (1u << 4) | 2;
  for (uint32_t i = 0x400; i < 0x410; ++i) l1[i] = (i << 20) | (3u << 10) | 2;
  l1[0x900] = ((uint32_t)l2 & ~0x3ffu) | 1;
  l2[0] = 0x40100000u | (3u << 4) | 2;              // RW
  l2[1] = 0x40101000u | (2u << 4) | (1u << 9) | 2;  // APX=1 AP=10: PL1 RO
  // l2[2] missing: translation fault
  l2[3] = 0x40103000u | (3u << 4) | 2;
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 0" ::"r"(l1));
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 2" ::"r"(0));
  __asm__ volatile("mcr p15, 0, %0, c3, c0, 0" ::"r"(0x1u));
  __asm__ volatile("mcr p15, 0, %0, c8, c7, 0" ::"r"(0));
  uint32_t sctlr;
  __asm__ volatile("mrc p15, 0, %0, c1, c0, 0" : "=r"(sctlr));
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 0\n isb" ::"r"(sctlr | 1) : "memory");
  puts_("str across into RO\n");
  *(volatile uint32_t*)0x90000ffeu = 0x11223344;
  show("first page bytes", *(volatile uint16_t*)0x90000ffeu);
  puts_("strh across into RO\n");
  *(volatile uint16_t*)0x90000fffu = 0x5566;
  puts_("ldr across into missing\n");
  (void)*(volatile uint32_t*)0x90001ffdu;
  puts_("str across from RO into missing\n");
  *(volatile uint32_t*)0x90001ffeu = 1;
  puts_("stm across into RO\n");
  __asm__ volatile("mov r0, %0\n mov r1, #7\n mov r2, #8\n stmia r0, {r1, r2}" ::"r"(0x90000ffcu)
                   : "r0", "r1", "r2", "memory");
  show("first word", *(volatile uint32_t*)0x90000ffcu);
  puts_("ldm across into missing\n");
  __asm__ volatile("mov r0, %0\n ldmia r0, {r1, r2}" ::"r"(0x90001ffcu)
                   : "r0", "r1", "r2", "memory");
  puts_("done\n");
  return 0;
}
