// The bare-metal test programs' runtime: PL011 output, PSCI, GIC register access (ARM target
// code, built with -ffreestanding -nostdlib).
#pragma once

#include <stdint.h>

#define UART_BASE 0x09000000u
#define GICD_BASE 0x08000000u
#define GICC_BASE 0x08010000u
#define GICH_BASE 0x08030000u
#define GICV_BASE 0x08040000u

static inline uint32_t rd32(uint32_t a) { return *(volatile uint32_t*)a; }
static inline void wr32(uint32_t a, uint32_t v) { *(volatile uint32_t*)a = v; }

void putch(char c);
void puts_(const char* s);
void puthex(uint32_t v);  // 0x%08x
// "name=0x........\n"
void show(const char* name, uint32_t v);

// PSCI over SMC when started in Hyp, HVC otherwise (QEMU virt's conduits).
uint32_t psci(uint32_t fn, uint32_t a1, uint32_t a2, uint32_t a3);
void power_off(void) __attribute__((noreturn));

// Kinds passed to on_exception.
enum { EXC_UND = 1, EXC_SVC = 2, EXC_PABT = 3, EXC_DABT = 4, EXC_IRQ = 6, EXC_FIQ = 7 };
// Returns 0 for the architectural return, else where to resume. The weak default (rt.c) reports
// the exception as unexpected; programs that expect exceptions define their own.
uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr);

// Prints "name=0x........" for a CP15 register read with MRC.
#define CP15(name, op1, crn, crm, op2)                                               \
  do {                                                                              \
    uint32_t v;                                                                     \
    __asm__ volatile("mrc p15, " #op1 ", %0, " #crn ", " #crm ", " #op2 : "=r"(v)); \
    show(name, v);                                                                  \
  } while (0)

// Hyp programs define it (a weak default reports the trap and resumes at ELR_hyp): returns 0
// to resume at ELR_hyp, else the address to resume at.
uint32_t on_hyp_trap(uint32_t hsr, uint32_t elr, uint32_t spsr);

// An IRQ or FIQ taken to Hyp mode (HCR.IMO/FMO); the weak default reports it.
void on_hyp_irq(void);

extern uint32_t start_cpsr;
static inline uint32_t cpsr(void) {
  uint32_t v;
  __asm__ volatile("mrs %0, cpsr" : "=r"(v));
  return v;
}
static inline void irq_enable(void) { __asm__ volatile("cpsie i" ::: "memory"); }
static inline void irq_disable(void) { __asm__ volatile("cpsid i" ::: "memory"); }
