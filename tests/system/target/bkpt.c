// BKPT in A32 and T32 from SVC mode, taken as QEMU 7.2 takes it (issue 43): a Prefetch Abort
// with IFSR "debug event" (0x002; 0x222 with TTBCR.EAE), IFAR 0 and LR_abt = the BKPT + 4.
#include "rt.h"

static volatile uint32_t resume_at;

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  uint32_t fsr, far;
  if (kind != EXC_PABT) {
    show("unexpected exception", (uint32_t)kind);
    return 0;
  }
  __asm__ volatile("mrc p15, 0, %0, c5, c0, 1" : "=r"(fsr));
  __asm__ volatile("mrc p15, 0, %0, c6, c0, 2" : "=r"(far));
  show("prefetch abort ifsr", fsr);
  show("ifar", far);
  show("lr offset", lr - resume_at);
  show("spsr", spsr);
  return resume_at + 4;
}

static void __attribute__((noinline, target("thumb"))) t32_bkpt(void) {
  __asm__ volatile(
      "adr r0, 1f\n add r0, r0, #1\n str r0, [%0]\n bkpt #0x56\n .balign 4\n1:\n" ::"r"(&resume_at)
      : "r0", "memory");
}

int main(void) {
  __asm__ volatile("mcr p15, 0, %0, c6, c0, 2" ::"r"(0x1234u));  // IFAR: BKPT writes 0
  puts_("a32 bkpt\n");
  __asm__ volatile("adr r0, 1f\n str r0, [%0]\n bkpt #0x12\n1:\n" ::"r"(&resume_at)
                   : "r0", "memory");
  puts_("t32 bkpt\n");
  t32_bkpt();
  puts_("a32 bkpt, long-descriptor format\n");
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 2\n isb" ::"r"(1u << 31));  // TTBCR.EAE
  __asm__ volatile("adr r0, 1f\n str r0, [%0]\n bkpt #0x34\n1:\n" ::"r"(&resume_at)
                   : "r0", "memory");
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 2\n isb" ::"r"(0));
  puts_("done\n");
  return 0;
}
