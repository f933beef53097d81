// Aborts and BKPT taken in Hyp mode (issue 43), as QEMU 7.2 takes them: a data abort enters the
// Hyp vector at 0x10 with HSR EC 0x25 and, for a single load or store without write-back, ISV
// with its size, sign extension and register (IL from the instruction), HDFAR the address; a
// BKPT enters 0x0C with EC 0x21, IFSC 0x22 ("debug event"), HIFAR 0.
#include "rt.h"

uint32_t on_hyp_trap(uint32_t hsr, uint32_t elr, uint32_t spsr) {
  uint32_t hdfar, hifar;
  __asm__ volatile("mrc p15, 4, %0, c6, c0, 0" : "=r"(hdfar));
  __asm__ volatile("mrc p15, 4, %0, c6, c0, 2" : "=r"(hifar));
  show("hsr", hsr);
  show("spsr", spsr);
  show("hdfar", hdfar);
  show("hifar", hifar);
  const int thumb = spsr & 0x20;
  // Resume after the instruction: a BKPT (EC 0x21) by the state (QEMU sets IL for the 16-bit
  // one too), a data abort by HSR.IL when ISV says it is valid, else by the state.
  const int bkpt = (hsr >> 26) == 0x21, isv = (hsr >> 24) & 1;
  const uint32_t len = bkpt ? (thumb ? 2 : 4) : isv ? ((hsr >> 25) & 1 ? 4 : 2) : thumb ? 2 : 4;
  return elr + len + (thumb ? 1 : 0);
}

static void __attribute__((noinline, target("thumb"))) t32_cases(void) {
  uint32_t v;
  __asm__ volatile("ldr %0, [%1]" : "=r"(v) : "l"(0x0b000020u) : "memory");          // 16-bit
  __asm__ volatile("ldrsh.w %0, [%1, #2]" : "=r"(v) : "r"(0x0b000020u) : "memory");  // 32-bit
  __asm__ volatile("bkpt #0x78" ::: "memory");
  (void)v;
}

int main(void) {
  show("mode", cpsr() & 0x1f);
  __asm__ volatile("mcr p15, 4, %0, c6, c0, 2" ::"r"(0x1234u));  // HIFAR: BKPT writes 0
  puts_("ldr\n");
  (void)*(volatile uint32_t*)0x0b000000u;
  puts_("str\n");
  *(volatile uint32_t*)0x0b000010u = 1;
  puts_("ldrb, strh, ldrsb\n");
  (void)*(volatile uint8_t*)0x0b000001u;
  *(volatile uint16_t*)0x0b000002u = 1;
  (void)*(volatile int8_t*)0x0b000003u;
  puts_("ldr with write-back: no ISV\n");
  uint32_t a = 0x0b000004u, v;
  __asm__ volatile("ldr %0, [%1, #4]!" : "=r"(v), "+r"(a) : : "memory");
  puts_("bkpt\n");
  __asm__ volatile("bkpt #0x34" ::: "memory");
  puts_("t32\n");
  t32_cases();
  puts_("done\n");
  return 0;
}
