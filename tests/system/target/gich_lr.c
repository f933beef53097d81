// Hyp mode: the GIC's virtual interface seen through its registers. A list register made
// pending through GICH is acknowledged and ended through GICV; the LR states, the active
// priorities, ELRSR/EISR and the maintenance status follow (no virtual IRQ is taken: the guest
// side is read from Hyp mode).
#include "rt.h"

int main(void) {
  show("mode", start_cpsr & 0x1f);
  show("gich_vtr", rd32(GICH_BASE + GICH_VTR));
  show("gich_hcr", rd32(GICH_BASE + GICH_HCR));
  show("gich_elrsr0", rd32(GICH_BASE + GICH_ELRSR0));
  wr32(GICH_BASE + GICH_LR, (1u << 28) | (0x80u >> 3 << 23) | (1u << 19) | 5u);  // pending, EOI
  wr32(GICH_BASE + GICH_LR + 4, (1u << 28) | (0x40u >> 3 << 23) | 9u);
  wr32(GICH_BASE + GICH_HCR, 1);  // En
  wr32(GICV_BASE + GICV_PMR, 0xF8);
  wr32(GICV_BASE + GICV_CTLR, 1);
  show("gich_vmcr", rd32(GICH_BASE + GICH_VMCR));
  show("gich_elrsr0", rd32(GICH_BASE + GICH_ELRSR0));
  show("gicv_hppir", rd32(GICV_BASE + GICV_HPPIR));
  uint32_t iar = rd32(GICV_BASE + GICV_IAR);
  show("gicv_iar", iar);
  show("gicv_rpr", rd32(GICV_BASE + GICV_RPR));
  show("gich_apr", rd32(GICH_BASE + GICH_APR));
  show("gich_lr1", rd32(GICH_BASE + GICH_LR + 4));
  show("gicv_hppir", rd32(GICV_BASE + GICV_HPPIR));
  wr32(GICV_BASE + GICV_EOIR, iar);
  show("gich_lr1 after eoi", rd32(GICH_BASE + GICH_LR + 4));
  show("gich_apr", rd32(GICH_BASE + GICH_APR));
  iar = rd32(GICV_BASE + GICV_IAR);
  show("gicv_iar", iar);
  wr32(GICV_BASE + GICV_EOIR, iar);
  show("gich_lr0", rd32(GICH_BASE + GICH_LR));
  show("gich_elrsr0", rd32(GICH_BASE + GICH_ELRSR0));
  show("gich_eisr0", rd32(GICH_BASE + GICH_EISR0));
  show("gich_misr", rd32(GICH_BASE + GICH_MISR));
  show("gicv_iar empty", rd32(GICV_BASE + GICV_IAR));
  return 0;
}
