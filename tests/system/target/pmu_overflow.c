// The PMU's overflow interrupt through the GIC (PPI 7 = ID 23 on QEMU virt): the cycle counter
// set just below its 32-bit wrap, then an event counter on SW_INCR wrapped by PMSWINC. Only
// what both simulators agree on is printed (the counts themselves are each one's own time).
#include "rt.h"

#define PMU_PPI VIRT_PMU_PPI

static volatile int irqs;
static volatile uint32_t last_iar, ovs_in_handler;

static inline uint32_t pmovsr(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 0, %0, c9, c12, 3" : "=r"(v));
  return v;
}
#define PMU_WRITE(crm, op2, v) __asm__ volatile("mcr p15, 0, %0, c9, " #crm ", " #op2 ::"r"(v))

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  if (kind != EXC_IRQ) {
    show("unexpected exception", (uint32_t)kind);
    show("lr", lr);
    show("spsr", spsr);
    return 0;
  }
  last_iar = rd32(GICC_BASE + GICC_IAR);
  ovs_in_handler = pmovsr();
  PMU_WRITE(c12, 3, ovs_in_handler);  // PMOVSR: write 1 to clear, the line falls
  wr32(GICC_BASE + GICC_EOIR, last_iar);
  ++irqs;
  return 0;
}

// Reading PMCCNTR brings the cycle counter up to date, its overflow included, on both
// simulators (QEMU otherwise raises the line from a host timer, whose latency would make the
// output depend on the host).
static void wait_irq(int n) {
  for (int i = 0; i < 200000 && irqs < n; ++i) {
    uint32_t v;
    __asm__ volatile("mrc p15, 0, %0, c9, c13, 0" : "=r"(v));
  }
}

int main(void) {
  CP15("pmcr", 0, c9, c12, 0);
  CP15("pmcntenset", 0, c9, c12, 1);
  CP15("pmovsr", 0, c9, c12, 3);
  CP15("pmintenset", 0, c9, c14, 1);
  CP15("pmuserenr", 0, c9, c14, 0);

  wr32(GICD_BASE + GICD_CTLR, 1);
  wr32(GICC_BASE + GICC_PMR, 0xF0);
  wr32(GICC_BASE + GICC_CTLR, 1);
  *(volatile uint8_t*)(GICD_BASE + GICD_IPRIORITYR + PMU_PPI) = 0x80;
  wr32(GICD_BASE + GICD_ISENABLER, 1u << PMU_PPI);

  puts_("cycle counter overflow\n");
  PMU_WRITE(c13, 0, 0xffffff00u);  // PMCCNTR: 256 cycles from the wrap
  PMU_WRITE(c14, 1, 1u << 31);     // PMINTENSET: the cycle counter
  PMU_WRITE(c12, 1, 1u << 31);     // PMCNTENSET
  irq_enable();
  PMU_WRITE(c12, 0, 1u);  // PMCR.E
  wait_irq(1);
  irq_disable();
  PMU_WRITE(c12, 0, 0u);
  show("irqs", (uint32_t)irqs);
  show("iar", last_iar);
  show("pmovsr in handler", ovs_in_handler);
  show("pmovsr after", pmovsr());

  puts_("sw_incr overflow\n");
  PMU_WRITE(c12, 5, 0u);           // PMSELR: counter 0
  PMU_WRITE(c13, 1, 0u);           // PMXEVTYPER: SW_INCR
  PMU_WRITE(c13, 2, 0xfffffffeu);  // PMXEVCNTR
  PMU_WRITE(c14, 2, 1u << 31);     // PMINTENCLR: not the cycle counter
  PMU_WRITE(c14, 1, 1u);           // PMINTENSET: counter 0
  PMU_WRITE(c12, 2, 1u << 31);     // PMCNTENCLR: the cycle counter stops
  PMU_WRITE(c12, 1, 1u);           // PMCNTENSET: counter 0
  PMU_WRITE(c12, 0, 1u);           // PMCR.E
  PMU_WRITE(c12, 4, 1u);           // PMSWINC: 0xffffffff
  CP15("pmxevcntr", 0, c9, c13, 2);
  show("pmovsr before", pmovsr());
  irq_enable();
  PMU_WRITE(c12, 4, 1u);  // PMSWINC: wraps to 0
  wait_irq(2);
  irq_disable();
  show("irqs", (uint32_t)irqs);
  show("iar", last_iar);
  show("pmovsr in handler", ovs_in_handler);
  CP15("pmxevcntr", 0, c9, c13, 2);
  CP15("pmcr", 0, c9, c12, 0);
  CP15("pmcntenset", 0, c9, c12, 1);
  CP15("pmintenset", 0, c9, c14, 1);
  puts_("power off\n");
  power_off();
}
