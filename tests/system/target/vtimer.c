// The virtual timer through the vGIC, as KVM runs a guest's timer: the guest arms CNTV; its
// PPI (27) is routed to Hyp (HCR.IMO), which acknowledges it at GICC with split EOI (priority
// drop only) and injects it into a list register with the HW bit; the guest takes the virtual
// IRQ at its own vectors, masks the timer and ends the interrupt at GICV, which deactivates
// the physical PPI.
#include "rt.h"

static volatile int hyp_irqs, guest_irqs;

static uint32_t cntv_ctl(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 0, %0, c14, c3, 1" : "=r"(v));
  return v;
}
static void set_cntv_ctl(uint32_t v) {
  __asm__ volatile("mcr p15, 0, %0, c14, c3, 1; isb" ::"r"(v));
}
static void set_cntv_tval(uint32_t v) { __asm__ volatile("mcr p15, 0, %0, c14, c3, 0" ::"r"(v)); }

void on_hyp_irq(void) {
  ++hyp_irqs;
  const uint32_t iar = rd32(GICC_BASE + GICC_IAR);
  show("hyp irq", iar);
  wr32(GICC_BASE + GICC_EOIR, iar);  // EOImode 1: priority drop only, 27 stays active
  show("  isactiver0 bit 27", (rd32(GICD_BASE + GICD_ISACTIVER) >> 27) & 1);
  // LR0: pending, HW, physical ID = virtual ID = 27, priority 0xa0.
  wr32(GICH_BASE + GICH_LR, (1u << 31) | (1u << 28) | (0xA0u >> 3 << 23) | (iar << 10) | iar);
}

uint32_t on_hyp_trap(uint32_t hsr, uint32_t elr, uint32_t spsr) {
  (void)elr;
  (void)spsr;
  show("hyp trap hsr", hsr);
  show("  isactiver0 bit 27", (rd32(GICD_BASE + GICD_ISACTIVER) >> 27) & 1);
  show("  gich_lr0 state", rd32(GICH_BASE + GICH_LR) >> 28);
  show("  hyp irqs", (uint32_t)hyp_irqs);
  power_off();
}

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  if (kind != EXC_IRQ) {
    show("unexpected guest exception", (uint32_t)kind);
    show("lr", lr);
    show("spsr", spsr);
    return 0;
  }
  ++guest_irqs;
  const uint32_t iar = rd32(GICV_BASE + GICV_IAR);
  show("guest irq", iar);
  show("  cntv_ctl", cntv_ctl());  // enabled, condition met
  set_cntv_ctl(3);                 // masked: the PPI goes low
  wr32(GICV_BASE + GICV_EOIR, iar);     // HW LR: deactivates the physical 27 too
  return 0;
}

static void guest_main(void) {
  puts_("guest arms the virtual timer\n");
  set_cntv_tval(2000);
  set_cntv_ctl(1);
  // Printed later: on QEMU the timer runs in host time and may fire while this line prints.
  const uint32_t armed = cntv_ctl() & 3;
  irq_enable();
  for (int i = 0; i < 10000000 && guest_irqs < 1; ++i) {
  }
  show("  cntv_ctl when armed", armed);
  show("guest irqs", (uint32_t)guest_irqs);
  __asm__ volatile("hvc #0" ::: "memory");
  for (;;) {
  }
}

static uint32_t guest_stack[1024] __attribute__((aligned(8)));
static uint32_t guest_irq_stack[256] __attribute__((aligned(8)));

int main(void) {
  show("mode", start_cpsr & 0x1f);
  uint32_t svc_sp = (uint32_t)&guest_stack[1024], irq_sp = (uint32_t)&guest_irq_stack[256];
  __asm__ volatile("msr sp_svc, %0; msr sp_irq, %1; msr sp_und, %1; msr sp_abt, %1" ::"r"(svc_sp),
                   "r"(irq_sp));
  extern char vectors[];
  __asm__ volatile("mcr p15, 0, %0, c12, c0, 0" ::"r"(vectors));
  // CNTVOFF resets to 0 (QEMU and the ISS); a guest reads CNTVCT = CNTPCT.
  wr32(GICD_BASE + GICD_CTLR, 1);
  *(volatile uint8_t*)(GICD_BASE + GICD_IPRIORITYR + 0x1b) = 0xA0;
  wr32(GICD_BASE + GICD_ISENABLER, 1u << 27);
  wr32(GICC_BASE + GICC_PMR, 0xF0);
  wr32(GICC_BASE + GICC_CTLR, 1u | (1u << 9));  // enable, EOImode: split priority drop / deactivate
  wr32(GICH_BASE + GICH_HCR, 1);
  wr32(GICV_BASE + GICV_PMR, 0xF8);
  wr32(GICV_BASE + GICV_CTLR, 1);
  __asm__ volatile("mcr p15, 4, %0, c1, c1, 0; isb" ::"r"(1u << 4));  // HCR.IMO
  __asm__ volatile("cpsie i");                                        // Hyp takes the routed IRQs
  __asm__ volatile("msr elr_hyp, %0; msr spsr_cxsf, %1; eret" ::"r"(guest_main), "r"(0x1d3u)
                   : "memory");
  return 1;
}
