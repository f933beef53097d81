// (Written with the ISS as hyp_guest.c, renamed here.) Hyp mode runs a guest in SVC under
// stage 2 (the processor's part of issue 28): HVC with its
// HSR and ELR_hyp, WFI trapped by HCR.TWI, a load from an unmapped IPA emulated as MMIO from
// the syndrome (ISV, SRT) with HDFAR and HPFAR, a store to a read-only IPA (stage-2 permission
// fault), a CP15 access trapped by HSTR, and a virtual IRQ (HCR.VI) taken by the guest at VBAR.
#include "rt.h"

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  show("guest exception", (uint32_t)kind);
  show("lr", lr);
  show("spsr", spsr & 0x1ff);
  if (kind == EXC_IRQ) {  // the virtual IRQ: the hypervisor's HCR.VI stays until an HVC clears it
    __asm__ volatile("hvc #2" ::: "memory");
  }
  return 0;
}

static uint64_t s2_l1[4] __attribute__((aligned(32)));
static uint64_t s2_l2[512] __attribute__((aligned(4096)));
static uint32_t guest_stack[512] __attribute__((aligned(8)));

static uint32_t hsr(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 4, %0, c5, c2, 0" : "=r"(v));
  return v;
}
static void set_hcr(uint32_t v) { __asm__ volatile("mcr p15, 4, %0, c1, c1, 0\n isb" ::"r"(v)); }
static uint32_t get_hcr(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 4, %0, c1, c1, 0" : "=r"(v));
  return v;
}

// Called by the Hyp trap vector with the guest's r0-r12 saved at regs.
void hyp_trap(uint32_t* regs) {
  uint32_t s = hsr(), elr, hdfar, hpfar;
  __asm__ volatile("mrs %0, ELR_hyp" : "=r"(elr));
  show("hsr", s);
  show("elr", elr);
  switch (s >> 26) {
    case 0x12:  // HVC: ELR_hyp is already the next instruction
      if ((s & 0xffff) == 1) power_off();
      if ((s & 0xffff) == 2) set_hcr(get_hcr() & ~(1u << 7));  // VI off
      break;
    case 0x01:  // WFI: skip it
      elr += 4;
      break;
    case 0x03:  // a CP15 access trapped by HSTR: a read returns 0x5a5a, both are skipped
      if (s & 1) regs[(s >> 5) & 15] = 0x5a5a;
      elr += 4;
      break;
    case 0x24:  // stage-2 data abort from the guest
      __asm__ volatile("mrc p15, 4, %0, c6, c0, 0" : "=r"(hdfar));
      __asm__ volatile("mrc p15, 4, %0, c6, c0, 4" : "=r"(hpfar));
      show("hdfar", hdfar);
      show("hpfar", hpfar);
      if ((s & (1u << 24)) && !(s & (1u << 6))) regs[(s >> 16) & 15] = 0x1234abcd;  // MMIO read
      elr += 4;
      break;
    default:
      puts_("unexpected\n");
      power_off();
  }
  __asm__ volatile("msr ELR_hyp, %0" ::"r"(elr));
}

void guest_show(uint32_t v) { show("guest sees", v); }

static volatile int expect_undef;

// The Hyp vectors but the trap one: an undefined instruction the program asked for is skipped.
uint32_t hyp_unexpected_at(uint32_t elr) {
  show(expect_undef ? "undefined in hyp, hsr" : "unexpected hyp exception, hsr", hsr());
  show("elr", elr);
  if (!expect_undef) power_off();
  expect_undef = 0;
  return elr + 4;
}

extern char s2_hyp_vectors[], guest[];

__asm__(
    "        .balign 32\n"
    "s2_hyp_vectors:\n"
    "        b .\n b hyp_unexpected\n b hyp_unexpected\n b hyp_unexpected\n"
    "        b hyp_unexpected\n b hyp_trap_entry\n b hyp_unexpected\n b hyp_unexpected\n"
    "hyp_unexpected:\n"
    "        push {r0-r12, lr}\n"
    "        mrs r0, ELR_hyp\n"
    "        bl hyp_unexpected_at\n"
    "        msr ELR_hyp, r0\n"
    "        pop {r0-r12, lr}\n"
    "        eret\n"
    "hyp_trap_entry:\n"
    "        push {r0-r12, lr}\n"
    "        mov r0, sp\n"
    "        bl hyp_trap\n"
    "        pop {r0-r12, lr}\n"
    "        eret\n"
    // The guest, in SVC with the MMU off (VA = IPA), stage 2 on.
    "guest:\n"
    "        hvc #0x42\n"
    "        wfi\n"
    "        ldr r5, =0x40400010\n"
    "        ldr r6, [r5]\n"             // no stage-2 mapping: emulated, r6 = 0x1234abcd
    "        mov r0, r6\n"
    "        bl guest_show\n"
    "        ldr r5, =0x40600000\n"
    "        strh r6, [r5, #6]\n"        // read-only at stage 2: skipped
    "        mrc p15, 0, r7, c1, c0, 0\n"  // SCTLR, trapped by HSTR.T1: r7 = 0x5a5a
    "        mov r0, r7\n"
    "        bl guest_show\n"
    "        cpsie i\n"                  // HCR.VI: the virtual IRQ is taken here
    "        nop\n"
    "        hvc #1\n"
    "        .ltorg\n");

// Before anything the compiler might do with VFP registers (64-bit constants): an undefined
// instruction on purpose (VFP with FPEXC.EN clear: HSR EC 0, IL 0), then VFP on.
static void __attribute__((noinline)) setup_hyp(void) {
  __asm__ volatile("mcr p15, 4, %0, c12, c0, 0\n isb" ::"r"(s2_hyp_vectors) : "memory");  // HVBAR
  expect_undef = 1;
  __asm__ volatile("vmrs r0, fpscr" ::: "r0", "memory");
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 2\n isb" ::"r"(0x00f00000u));  // CPACR: cp10/11
  __asm__ volatile("vmsr fpexc, %0" ::"r"(1u << 30));                     // FPEXC.EN
}

static void __attribute__((noinline)) setup_stage2(void) {
  const uint64_t af = 1u << 10, rw = 3u << 6, ro = 1u << 6, normal = (0xfu << 2) | (3u << 8);
  s2_l1[0] = 0x00000000u | af | rw | (1u << 2) | 1;  // IPA 0-1 GiB: devices, identity
  s2_l1[1] = (uint32_t)s2_l2 | 3;                      // IPA 1-2 GiB: 2 MiB blocks
  for (uint32_t i = 0; i < 512; ++i) {
    uint64_t pa = 0x40000000u + (i << 21);
    if (i == 2) s2_l2[i] = 0;                          // 0x40400000: unmapped
    else s2_l2[i] = pa | af | (i == 3 ? ro : rw) | normal | 1;
  }
  __asm__ volatile("mcr p15, 4, %0, c2, c1, 2" ::"r"((1u << 31) | (1u << 6)));  // VTCR: SL0 = 1
  __asm__ volatile("mcrr p15, 6, %0, %1, c2" ::"r"((uint32_t)s2_l1), "r"(0));  // VTTBR
  __asm__ volatile("mcr p15, 4, %0, c1, c1, 3" ::"r"(1u << 1));                // HSTR.T1
  __asm__ volatile("mcr p15, 4, %0, c8, c7, 4\n dsb\n isb" ::"r"(0) : "memory");  // TLBIALLNSNH
}

int main(void) {
  show("mode", start_cpsr & 0x1f);
  setup_hyp();
  setup_stage2();
  // HCR: VM, TWI, IMO, VI (a virtual IRQ pending for the guest).
  set_hcr((1u << 0) | (1u << 13) | (1u << 4) | (1u << 7));
  extern char vectors[];
  __asm__ volatile("mcr p15, 0, %0, c12, c0, 0" ::"r"(vectors));  // the guest's VBAR
  // The guest's stacks (start.S sets only Hyp's when started in Hyp mode).
  __asm__ volatile("msr SP_svc, %0" ::"r"(guest_stack + 512));
  __asm__ volatile("msr SP_irq, %0" ::"r"(guest_stack + 384));
  __asm__ volatile("msr SP_abt, %0" ::"r"(guest_stack + 256));
  __asm__ volatile("msr SP_und, %0" ::"r"(guest_stack + 128));
  // SPSR_hyp by its banked name is Monitor mode's (undefined here): the current mode's SPSR.
  __asm__ volatile("msr spsr_fsxc, %0" ::"r"(0x1d3u));  // SVC, A I F masked
  __asm__ volatile("msr ELR_hyp, %0\n eret" ::"r"(guest) : "memory");
  return 0;
}
