// Hyp mode as a hypervisor uses it: ERET to a guest in SVC; the guest's HVC, a WFI trapped by
// HCR.TWI and an SMC trapped by HCR.TSC reach Hyp with their HSR, ELR_hyp and SPSR_hyp; a
// virtual IRQ asserted by HCR.VI and one from a GIC list register are taken by the guest at its
// own vectors (HCR.IMO), the second acknowledged and ended through GICV. HDCR.TDA traps the
// guest's debug register read (EC 0x05; the register keeps its value) and HCR.TID3 its VMRS of
// MVFR0 (EC 0x08), as Xen sets them for dom0; GICV_APR1 reads as zero.
#include "rt.h"

static volatile int phase, guest_irqs;

static uint32_t hcr_read(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 4, %0, c1, c1, 0" : "=r"(v));
  return v;
}
static void hcr_write(uint32_t v) { __asm__ volatile("mcr p15, 4, %0, c1, c1, 0; isb" ::"r"(v)); }

#define HCR_IMO (1u << 4)
#define HCR_VI (1u << 7)
#define HCR_TWI (1u << 13)
#define HCR_TID3 (1u << 18)
#define HCR_TSC (1u << 19)

uint32_t on_hyp_trap(uint32_t hsr, uint32_t elr, uint32_t spsr) {
  show("hyp trap hsr", hsr);
  show("  elr", elr);
  show("  spsr", spsr);
  show("  mode", cpsr() & 0x1f);
  const uint32_t ec = hsr >> 26;
  if (ec == 0x12) {  // HVC: the guest's requests
    switch (hsr & 0xffff) {
      case 1:  // the virtual IRQ was taken: drop HCR.VI
        hcr_write(hcr_read() & ~HCR_VI);
        break;
      case 2:  // a virtual interrupt through the GIC: LR0 = pending, ID 42, priority 0x80
        wr32(GICH_BASE + GICH_LR, (1u << 28) | (0x80u >> 3 << 23) | 42u);
        wr32(GICH_BASE + GICH_HCR, 1);
        break;
      case 4:  // assert a virtual IRQ
        hcr_write(hcr_read() | HCR_VI);
        break;
      case 3:
        show("gich_lr0", rd32(GICH_BASE + GICH_LR));
        show("gich_elrsr0", rd32(GICH_BASE + GICH_ELRSR0));
        power_off();
    }
    return 0;
  }
  // WFI, SMC, CP14, VMRS of an ID register: skip it
  if (ec == 0x01 || ec == 0x13 || ec == 0x05 || ec == 0x08) return elr + 4;
  return 0;
}

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  show("guest exception", (uint32_t)kind);
  show("  lr", lr);
  show("  spsr", spsr);
  show("  mode", cpsr() & 0x1f);
  if (kind == EXC_IRQ) {
    ++guest_irqs;
    if (phase == 1) {
      __asm__ volatile("hvc #1" ::: "memory");
    } else {
      const uint32_t iar = rd32(GICV_BASE + GICV_IAR);
      show("  gicv_iar", iar);
      show("  gicv_rpr", rd32(GICV_BASE + GICV_RPR));
      wr32(GICV_BASE + GICV_EOIR, iar);
    }
  }
  return 0;
}

static void guest_main(void) {
  show("guest mode", cpsr() & 0x1f);
  __asm__ volatile("hvc #0x42" ::: "memory");
  puts_("guest wfi\n");
  __asm__ volatile("wfi" ::: "memory");
  puts_("guest smc\n");
  __asm__ volatile("mov r0, #0; smc #0" ::: "r0", "memory");
  puts_("guest writes HCR\n");
  hcr_write(0);  // a PL1 access to a Hyp register: undefined, as the architecture says
  puts_("guest reads DBGDIDR\n");
  uint32_t dbgdidr = 0x77;
  __asm__ volatile("mrc p14, 0, %0, c0, c0, 0" : "+r"(dbgdidr)::"memory");
  show("guest dbgdidr", dbgdidr);
  puts_("guest reads MVFR0\n");
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 2; isb" ::"r"(0xfu << 20));  // CPACR: cp10, cp11
  uint32_t mvfr0 = 0x88;
  __asm__ volatile("vmrs %0, mvfr0" : "+r"(mvfr0)::"memory");
  show("guest mvfr0 (trapped by HCR.TID3)", mvfr0);
  wr32(GICV_BASE + 0xd4, 0xffffffffu);
  show("guest gicv_apr1", rd32(GICV_BASE + 0xd4));
  puts_("guest enables irqs (HCR.VI)\n");
  phase = 1;
  __asm__ volatile("hvc #4" ::: "memory");
  irq_enable();
  for (int i = 0; i < 1000 && guest_irqs < 1; ++i) {
  }
  show("guest irqs", (uint32_t)guest_irqs);
  phase = 2;
  __asm__ volatile("hvc #2" ::: "memory");
  for (int i = 0; i < 100000 && guest_irqs < 2; ++i) {
  }
  show("guest irqs", (uint32_t)guest_irqs);
  __asm__ volatile("hvc #3" ::: "memory");
  for (;;) {
  }
}

static uint32_t guest_stack[1024] __attribute__((aligned(8)));
static uint32_t guest_irq_stack[256] __attribute__((aligned(8)));

int main(void) {
  show("mode", start_cpsr & 0x1f);
  // HSCTLR keeps what is written (Xen reads back its CP15BEN and bit 6), as QEMU 7.2 keeps it.
  __asm__ volatile("mcr p15, 4, %0, c1, c0, 0\n isb" ::"r"(0x30c5187au & ~2u));
  CP15("hsctlr", 4, c1, c0, 0);
  __asm__ volatile("mcr p15, 4, %0, c1, c0, 0\n isb" ::"r"(0u));
  uint32_t svc_sp = (uint32_t)&guest_stack[1024], irq_sp = (uint32_t)&guest_irq_stack[256];
  __asm__ volatile("msr sp_svc, %0; msr sp_irq, %1; msr sp_und, %1; msr sp_abt, %1" ::"r"(svc_sp),
                   "r"(irq_sp));
  extern char vectors[];
  __asm__ volatile("mcr p15, 0, %0, c12, c0, 0" ::"r"(vectors));  // the guest's VBAR
  wr32(GICV_BASE + GICV_PMR, 0xF8);
  wr32(GICV_BASE + GICV_CTLR, 1);
  hcr_write(HCR_TWI | HCR_TSC | HCR_IMO | HCR_TID3);
  __asm__ volatile("mcr p15, 4, %0, c1, c1, 1" ::"r"(1u << 9));  // HDCR.TDA
  show("hcr", hcr_read());
  __asm__ volatile("msr elr_hyp, %0; msr spsr_cxsf, %1; eret" ::"r"(guest_main), "r"(0x1d3u)
                   : "memory");
  return 1;
}
