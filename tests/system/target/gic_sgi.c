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
  last_iar = rd32(GICC_BASE + 0x0C);
  rpr_in_handler = rd32(GICC_BASE + 0x14);
  wr32(GICC_BASE + 0x10, last_iar);
  ++irqs;
  return 0;
}

static void wait_irq(int n) {
  for (int i = 0; i < 200000 && irqs < n; ++i) {
  }
}

int main(void) {
  show("gicd_ctlr", rd32(GICD_BASE + 0x000));
  show("gicd_typer", rd32(GICD_BASE + 0x004));
  show("gicd_iidr", rd32(GICD_BASE + 0x008));
  show("isenabler0", rd32(GICD_BASE + 0x100));
  show("isenabler1", rd32(GICD_BASE + 0x104));
  show("ipriorityr0", rd32(GICD_BASE + 0x400));
  show("itargetsr0", rd32(GICD_BASE + 0x800));
  show("itargetsr8", rd32(GICD_BASE + 0x820));
  show("icfgr0", rd32(GICD_BASE + 0xC00));
  show("icfgr1", rd32(GICD_BASE + 0xC04));
  show("gicd_pidr2", rd32(GICD_BASE + 0xFE8));
  show("gicc_ctlr", rd32(GICC_BASE + 0x00));
  show("gicc_pmr", rd32(GICC_BASE + 0x04));
  show("gicc_iidr", rd32(GICC_BASE + 0xFC));
  show("gicc_rpr", rd32(GICC_BASE + 0x14));

  wr32(GICD_BASE + 0x000, 1);
  wr32(GICC_BASE + 0x004, 0xF0);
  wr32(GICC_BASE + 0x000, 1);
  // Priority 0x80 for SGI 3, written as one byte.
  *(volatile uint8_t*)(GICD_BASE + 0x400 + 3) = 0x80;
  show("ipriorityr0 after", rd32(GICD_BASE + 0x400));
  show("hppir idle", rd32(GICC_BASE + 0x18));

  puts_("sgi 3 to self\n");
  wr32(GICD_BASE + 0xF00, (0u << 24) | (1u << 16) | 3u);
  show("ispendr0", rd32(GICD_BASE + 0x200));
  show("hppir", rd32(GICC_BASE + 0x18));
  irq_enable();
  wait_irq(1);
  irq_disable();
  show("irqs", (uint32_t)irqs);
  show("iar", last_iar);
  show("rpr in handler", rpr_in_handler);
  show("rpr after", rd32(GICC_BASE + 0x14));
  show("ispendr0 after", rd32(GICD_BASE + 0x200));

  puts_("masked by pmr\n");
  wr32(GICC_BASE + 0x004, 0x80);
  wr32(GICD_BASE + 0xF00, (2u << 24) | 5u);  // "this CPU only"
  *(volatile uint8_t*)(GICD_BASE + 0x400 + 5) = 0x80;
  show("hppir masked", rd32(GICC_BASE + 0x18));
  irq_enable();
  wait_irq(2);
  irq_disable();
  show("irqs", (uint32_t)irqs);
  wr32(GICC_BASE + 0x004, 0xF0);
  irq_enable();
  wait_irq(2);
  irq_disable();
  show("irqs unmasked", (uint32_t)irqs);
  show("iar", last_iar);

  puts_("other cpus only\n");
  wr32(GICD_BASE + 0xF00, (1u << 24) | 6u);
  show("ispendr0", rd32(GICD_BASE + 0x200));
  show("iar empty", rd32(GICC_BASE + 0x0C));
  return 0;
}
