// Two cores (QEMU -smp 2, vtoe --smp 2): PSCI CPU_ON, AFFINITY_INFO and CPU_OFF; each core's
// MPIDR and banked GIC registers; SGIs from one core to the other through GICD_SGIR; LDREX/STREX
// across cores (a reservation broken by the other core's store or STREX, and a shared counter
// that both cores increment). Only core 0 prints (the console would interleave otherwise); core
// 1 leaves its findings in memory. Interrupts stay masked: the cores poll GICC_IAR.
#include "rt.h"

#define CPU_ON 0x84000003u
#define CPU_OFF 0x84000002u
#define AFFINITY_INFO 0x84000004u
#define INCREMENTS 100000u

// Core 1's state at entry, and what it found.
static volatile uint32_t sec_r0, sec_cpsr, sec_mpidr, sec_itargetsr0, sec_iar, sec_strex;
// Steps of the conversation between the cores (each waits for the other's next value).
static volatile uint32_t step0, step1;
static volatile uint32_t word = 5;
static volatile uint32_t counter;
static uint8_t sec_stack[4096] __attribute__((aligned(16)));

void secondary_entry(void);
__asm__(
    "  .text\n"
    "  .arm\n"
    "  .global secondary_entry\n"
    "secondary_entry:\n"
    "  mov sp, r0\n"  // the context id is the stack's top
    "  b secondary_main\n");

static inline void dmb(void) { __asm__ volatile("dmb" ::: "memory"); }
static inline void sev(void) { __asm__ volatile("dsb\n sev" ::: "memory"); }
static inline uint32_t mpidr(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 0, %0, c0, c0, 5" : "=r"(v));
  return v;
}
static inline uint32_t ldrex(volatile uint32_t* p) {
  uint32_t v;
  __asm__ volatile("ldrex %0, [%1]" : "=r"(v) : "r"(p) : "memory");
  return v;
}
static inline uint32_t strex(volatile uint32_t* p, uint32_t v) {
  uint32_t fail;
  __asm__ volatile("strex %0, %2, [%1]" : "=&r"(fail) : "r"(p), "r"(v) : "memory");
  return fail;
}
static void atomic_inc(volatile uint32_t* p) {
  uint32_t v;
  do {
    v = ldrex(p) + 1;
  } while (strex(p, v));
}
static void wait_for(volatile uint32_t* flag, uint32_t value) {
  while (*flag != value) __asm__ volatile("wfe" ::: "memory");
  dmb();
}
static void post(volatile uint32_t* flag, uint32_t value) {
  dmb();
  *flag = value;
  sev();
}
static uint32_t poll_iar(void) {
  for (;;) {
    const uint32_t iar = rd32(GICC_BASE + GICC_IAR);
    if ((iar & 0x3ff) != 1023) return iar;
  }
}

void secondary_main(uint32_t r0);
void secondary_main(uint32_t r0) {
  sec_r0 = r0;
  sec_cpsr = cpsr();
  sec_mpidr = mpidr();
  sec_itargetsr0 = rd32(GICD_BASE + GICD_ITARGETSR);
  wr32(GICC_BASE + GICC_PMR, 0xF0);
  wr32(GICC_BASE + GICC_CTLR, 1);
  post(&step1, 1);  // up
  // An SGI from core 0 (interrupts masked: the CPU interface signals it, the core polls).
  sec_iar = poll_iar();
  wr32(GICC_BASE + GICC_EOIR, sec_iar);
  // ... and one to every core but this one.
  wr32(GICD_BASE + GICD_SGIR, (1u << 24) | 5u);
  post(&step1, 2);
  // Core 0 holds a reservation of `word`: a plain store breaks it.
  wait_for(&step0, 3);
  word = 6;
  post(&step1, 3);
  // Core 0 holds a reservation again: this core's LDREX/STREX pair succeeds and breaks it.
  wait_for(&step0, 4);
  const uint32_t v = ldrex(&word);
  sec_strex = strex(&word, v + 1);
  post(&step1, 4);
  // Both increment the counter.
  wait_for(&step0, 5);
  for (uint32_t i = 0; i < INCREMENTS; ++i) atomic_inc(&counter);
  post(&step1, 5);
  psci(CPU_OFF, 0, 0, 0);
  for (;;) {
  }
}

int main(void) {
  show("mpidr", mpidr());
  show("itargetsr0", rd32(GICD_BASE + GICD_ITARGETSR));
  show("affinity_info(1) before", psci(AFFINITY_INFO, 1, 0, 0));
  show("cpu_on(7)", psci(CPU_ON, 7, (uint32_t)secondary_entry, 0));
  show("cpu_on(0)", psci(CPU_ON, 0, (uint32_t)secondary_entry, 0));
  wr32(GICD_BASE + GICD_CTLR, 1);
  wr32(GICC_BASE + GICC_PMR, 0xF0);
  wr32(GICC_BASE + GICC_CTLR, 1);
  show("cpu_on(1)",
       psci(CPU_ON, 1, (uint32_t)secondary_entry, (uint32_t)(sec_stack + sizeof sec_stack)));
  wait_for(&step1, 1);
  show("core 1 r0 is its stack top", sec_r0 == (uint32_t)(sec_stack + sizeof sec_stack));
  show("core 1 cpsr", sec_cpsr & 0x1ff);
  show("core 1 mpidr", sec_mpidr);
  show("core 1 itargetsr0", sec_itargetsr0);
  show("cpu_on(1) again", psci(CPU_ON, 1, (uint32_t)secondary_entry, 0));
  show("affinity_info(1) on", psci(AFFINITY_INFO, 1, 0, 0));
  show("affinity_info(1, level 1)", psci(AFFINITY_INFO, 1, 1, 0));

  puts_("sgi 3 to core 1\n");
  wr32(GICD_BASE + GICD_SGIR, (0u << 24) | (2u << 16) | 3u);
  wait_for(&step1, 2);
  show("core 1 iar", sec_iar);
  const uint32_t iar = poll_iar();
  wr32(GICC_BASE + GICC_EOIR, iar);
  show("core 0 iar", iar);
  show("core 0 iar after eoi", rd32(GICC_BASE + GICC_IAR));

  uint32_t v = ldrex(&word);
  post(&step0, 3);
  wait_for(&step1, 3);
  show("strex after the other core's store", strex(&word, v + 1));
  show("word", word);
  v = ldrex(&word);
  post(&step0, 4);
  wait_for(&step1, 4);
  show("strex after the other core's strex", strex(&word, v + 10));
  show("core 1 strex", sec_strex);
  show("word", word);

  post(&step0, 5);
  for (uint32_t i = 0; i < INCREMENTS; ++i) atomic_inc(&counter);
  wait_for(&step1, 5);
  show("counter", counter);
  while (psci(AFFINITY_INFO, 1, 0, 0) != 1) {
  }
  puts_("core 1 off\n");
  return 0;
}
