// Hyp mode: the GIC's virtual interface seen through its registers. A list register made
// pending through GICH is acknowledged and ended through GICV; the LR states, the active
// priorities, ELRSR/EISR and the maintenance status follow (no virtual IRQ is taken: the guest
// side is read from Hyp mode).
#include "rt.h"

int main(void) {
  show("mode", start_cpsr & 0x1f);
  show("gich_vtr", rd32(GICH_BASE + 0x04));
  show("gich_hcr", rd32(GICH_BASE + 0x00));
  show("gich_elrsr0", rd32(GICH_BASE + 0x30));
  wr32(GICH_BASE + 0x100, (1u << 28) | (0x80u >> 3 << 23) | (1u << 19) | 5u);  // pending, EOI
  wr32(GICH_BASE + 0x104, (1u << 28) | (0x40u >> 3 << 23) | 9u);
  wr32(GICH_BASE + 0x00, 1);  // En
  wr32(GICV_BASE + 0x04, 0xF8);
  wr32(GICV_BASE + 0x00, 1);
  show("gich_vmcr", rd32(GICH_BASE + 0x08));
  show("gich_elrsr0", rd32(GICH_BASE + 0x30));
  show("gicv_hppir", rd32(GICV_BASE + 0x18));
  uint32_t iar = rd32(GICV_BASE + 0x0C);
  show("gicv_iar", iar);
  show("gicv_rpr", rd32(GICV_BASE + 0x14));
  show("gich_apr", rd32(GICH_BASE + 0xF0));
  show("gich_lr1", rd32(GICH_BASE + 0x104));
  show("gicv_hppir", rd32(GICV_BASE + 0x18));
  wr32(GICV_BASE + 0x10, iar);
  show("gich_lr1 after eoi", rd32(GICH_BASE + 0x104));
  show("gich_apr", rd32(GICH_BASE + 0xF0));
  iar = rd32(GICV_BASE + 0x0C);
  show("gicv_iar", iar);
  wr32(GICV_BASE + 0x10, iar);
  show("gich_lr0", rd32(GICH_BASE + 0x100));
  show("gich_elrsr0", rd32(GICH_BASE + 0x30));
  show("gich_eisr0", rd32(GICH_BASE + 0x20));
  show("gich_misr", rd32(GICH_BASE + 0x10));
  show("gicv_iar empty", rd32(GICV_BASE + 0x0C));
  return 0;
}
