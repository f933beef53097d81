// The GIC distributor and CPU interface as a driver sees them: identification and reset values,
// an SGI to itself taken as an IRQ (IAR, running priority, EOI), priority masking and the
// spurious ID.
#include "rt.h"

static volatile int irqs;
static volatile uint32_t last_iar, rpr_in_handler;

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  if (kind != EXC_IRQ) {
    show("unexpected exception", (uint32_t)kind);
    show("lr", lr);
    show("spsr", spsr);
    return 0;
  }
  last_iar = rd32(GICC_BASE + GICC_IAR);
  rpr_in_handler = rd32(GICC_BASE + GICC_RPR);
  wr32(GICC_BASE + GICC_EOIR, last_iar);
  ++irqs;
  return 0;
}

static void wait_irq(int n) {
  for (int i = 0; i < 200000 && irqs < n; ++i) {
  }
}

int main(void) {
  show("gicd_ctlr", rd32(GICD_BASE + GICD_CTLR));
  show("gicd_typer", rd32(GICD_BASE + GICD_TYPER));
  show("gicd_iidr", rd32(GICD_BASE + GICD_IIDR));
  show("isenabler0", rd32(GICD_BASE + GICD_ISENABLER));
  show("isenabler1", rd32(GICD_BASE + GICD_ISENABLER + 4));
  show("ipriorityr0", rd32(GICD_BASE + GICD_IPRIORITYR));
  show("itargetsr0", rd32(GICD_BASE + GICD_ITARGETSR));
  show("itargetsr8", rd32(GICD_BASE + GICD_ITARGETSR + 0x20));
  show("icfgr0", rd32(GICD_BASE + GICD_ICFGR));
  show("icfgr1", rd32(GICD_BASE + GICD_ICFGR + 4));
  show("gicd_pidr2", rd32(GICD_BASE + GICD_ID + 0x18));
  show("gicc_ctlr", rd32(GICC_BASE + GICC_CTLR));
  show("gicc_pmr", rd32(GICC_BASE + GICC_PMR));
  show("gicc_iidr", rd32(GICC_BASE + GICC_IIDR));
  show("gicc_rpr", rd32(GICC_BASE + GICC_RPR));

  wr32(GICD_BASE + GICD_CTLR, 1);
  wr32(GICC_BASE + GICC_PMR, 0xF0);
  wr32(GICC_BASE + GICC_CTLR, 1);
  // Priority 0x80 for SGI 3, written as one byte.
  *(volatile uint8_t*)(GICD_BASE + GICD_IPRIORITYR + 3) = 0x80;
  show("ipriorityr0 after", rd32(GICD_BASE + GICD_IPRIORITYR));
  show("hppir idle", rd32(GICC_BASE + GICC_HPPIR));

  puts_("sgi 3 to self\n");
  wr32(GICD_BASE + GICD_SGIR, (0u << 24) | (1u << 16) | 3u);
  show("ispendr0", rd32(GICD_BASE + GICD_ISPENDR));
  show("hppir", rd32(GICC_BASE + GICC_HPPIR));
  irq_enable();
  wait_irq(1);
  irq_disable();
  show("irqs", (uint32_t)irqs);
  show("iar", last_iar);
  show("rpr in handler", rpr_in_handler);
  show("rpr after", rd32(GICC_BASE + GICC_RPR));
  show("ispendr0 after", rd32(GICD_BASE + GICD_ISPENDR));

  puts_("masked by pmr\n");
  wr32(GICC_BASE + GICC_PMR, 0x80);
  wr32(GICD_BASE + GICD_SGIR, (2u << 24) | 5u);  // "this CPU only"
  *(volatile uint8_t*)(GICD_BASE + GICD_IPRIORITYR + 5) = 0x80;
  show("hppir masked", rd32(GICC_BASE + GICC_HPPIR));
  irq_enable();
  wait_irq(2);
  irq_disable();
  show("irqs", (uint32_t)irqs);
  wr32(GICC_BASE + GICC_PMR, 0xF0);
  irq_enable();
  wait_irq(2);
  irq_disable();
  show("irqs unmasked", (uint32_t)irqs);
  show("iar", last_iar);

  puts_("other cpus only\n");
  wr32(GICD_BASE + GICD_SGIR, (1u << 24) | 6u);
  show("ispendr0", rd32(GICD_BASE + GICD_ISPENDR));
  show("iar empty", rd32(GICC_BASE + GICC_IAR));
  return 0;
}
