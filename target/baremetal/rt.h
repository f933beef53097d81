// The bare-metal runtime (ARM target code, built with -ffreestanding -nostdlib): start code and
// vectors (start.S), PL011 output, PSCI, exception and Hyp-trap hooks. The system tests' programs
// (tests/system/target) are built on it. Device addresses and register offsets come from the
// generated headers only (target/include/vtoe/, from the devices' descriptions).
#pragma once

#include <stdint.h>

#include "vtoe/gic.h"
#include "vtoe/pl011.h"
#include "vtoe/virt.h"

#define UART_BASE VIRT_UART_BASE
#define GICD_BASE VIRT_GIC_DISTRIBUTOR_BASE
#define GICC_BASE VIRT_GIC_CPU_INTERFACE_BASE
#define GICH_BASE VIRT_GIC_HYP_INTERFACE_BASE
#define GICV_BASE VIRT_GIC_VIRTUAL_CPU_INTERFACE_BASE

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
#define CP15(name, op1, crn, crm, op2)                                              \
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
