#include "rt.h"

uint32_t start_cpsr;

void putch(char c) {
  while (rd32(UART_BASE + PL011_FR) & PL011_FR_TXFF) {
  }
  wr32(UART_BASE + PL011_DR, (uint8_t)c);
}

void puts_(const char* s) {
  while (*s) putch(*s++);
}

void puthex(uint32_t v) {
  puts_("0x");
  for (int i = 28; i >= 0; i -= 4) putch("0123456789abcdef"[(v >> i) & 15]);
}

void show(const char* name, uint32_t v) {
  puts_(name);
  putch('=');
  puthex(v);
  putch('\n');
}

uint32_t psci(uint32_t fn, uint32_t a1, uint32_t a2, uint32_t a3) {
  register uint32_t r0 __asm__("r0") = fn;
  register uint32_t r1 __asm__("r1") = a1;
  register uint32_t r2 __asm__("r2") = a2;
  register uint32_t r3 __asm__("r3") = a3;
  if ((start_cpsr & 0x1f) == 0x1a) {
    __asm__ volatile("smc #0" : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3) : : "memory");
  } else {
    __asm__ volatile("hvc #0" : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3) : : "memory");
  }
  return r0;
}

void power_off(void) {
  puts_("power off\n");
  psci(0x84000008u, 0, 0, 0);  // SYSTEM_OFF
  for (;;) {
  }
}

__attribute__((weak)) uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  show("unexpected exception", (uint32_t)kind);
  show("lr", lr);
  show("spsr", spsr);
  return 0;
}

__attribute__((weak)) uint32_t on_hyp_trap(uint32_t hsr, uint32_t elr, uint32_t spsr) {
  show("unexpected hyp trap, hsr", hsr);
  show("elr", elr);
  show("spsr", spsr);
  return 0;
}

__attribute__((weak)) void on_hyp_irq(void) { puts_("unexpected irq in hyp mode\n"); }
