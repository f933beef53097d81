// Stage 2: the hypervisor maps the guest's IPA space with LPAE stage-2 tables (VTTBR, VTCR,
// HCR.VM), leaving the 2 MiB at 0x0c000000 (the platform-bus window, where the TOE goes)
// unmapped; the guest's load and store there take stage-2 data aborts to Hyp with HSR (ISV,
// access size, register, WnR, fault status), HDFAR and HPFAR, which the hypervisor emulates:
// a load gets a value written into the guest's register, a store is recorded.
#include "rt.h"

static uint64_t level1[4] __attribute__((aligned(32)));
static uint64_t level2[512] __attribute__((aligned(4096)));
static volatile uint32_t emulated_store;

#define S2_BLOCK 1ull
#define S2_TABLE 3ull
#define S2_DEVICE (1ull << 2)    // MemAttr 0b0001: Device-nGnRE
#define S2_NORMAL (0xFull << 2)  // MemAttr 0b1111: Normal write-back
#define S2_RW (3ull << 6)        // S2AP read/write
#define S2_ISH (3ull << 8)
#define S2_AF (1ull << 10)

static uint32_t hdfar(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 4, %0, c6, c0, 0" : "=r"(v));
  return v;
}
static uint32_t hpfar(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 4, %0, c6, c0, 4" : "=r"(v));
  return v;
}

// The guest's registers as the trap entry pushed them (r0-r3, r12, lr) are not reachable from
// C here, so the load below uses r4/r5 and the emulation writes the value the guest expects in
// a global it reads back.
static volatile uint32_t load_result;

uint32_t on_hyp_trap(uint32_t hsr, uint32_t elr, uint32_t spsr) {
  show("hyp trap hsr", hsr);
  show("  elr", elr);
  show("  spsr", spsr);
  const uint32_t ec = hsr >> 26;
  if (ec == 0x24) {
    show("  hdfar", hdfar());
    show("  hpfar", hpfar());
    if (hsr & (1u << 6))
      emulated_store = 1;  // WnR: a write
    else
      load_result = 0xfeedf00d;
    return elr + 4;  // emulated: skip the access
  }
  if (ec == 0x12 && (hsr & 0xffff) == 3) power_off();
  return 0;
}

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  show("unexpected guest exception", (uint32_t)kind);
  show("lr", lr);
  show("spsr", spsr);
  return 0;
}

static void guest_main(void) {
  puts_("guest loads from 0x0c000010\n");
  register uint32_t addr __asm__("r5") = 0x0c000010;
  register uint32_t value __asm__("r4") = 0;
  __asm__ volatile("ldr %0, [%1]" : "+r"(value) : "r"(addr) : "memory");
  show("guest load emulated as", load_result);
  puts_("guest stores to 0x0c000024\n");
  addr = 0x0c000024;
  __asm__ volatile("str %0, [%1]" ::"r"(value), "r"(addr) : "memory");
  show("hyp saw the store", emulated_store);
  show("guest reads its RAM through stage 2", rd32((uint32_t)&emulated_store));
  __asm__ volatile("hvc #3" ::: "memory");
  for (;;) {
  }
}

static uint32_t guest_stack[1024] __attribute__((aligned(8)));

int main(void) {
  show("mode", start_cpsr & 0x1f);
  for (uint64_t i = 0; i < 512; ++i) {
    const uint64_t pa = i << 21;
    level2[i] = pa == 0x0c000000 ? 0 : pa | S2_BLOCK | S2_DEVICE | S2_RW | S2_AF;
  }
  level1[0] = (uint64_t)(uint32_t)level2 | S2_TABLE;
  level1[1] = 0x40000000ull | S2_BLOCK | S2_NORMAL | S2_RW | S2_ISH | S2_AF;
  const uint32_t vtcr = (1u << 31) | (1u << 6);  // T0SZ 0 (32-bit IPA), SL0 1: start at level 1
  __asm__ volatile("mcr p15, 4, %0, c2, c1, 2" ::"r"(vtcr));
  __asm__ volatile("mcrr p15, 6, %0, %1, c2" ::"r"((uint32_t)level1), "r"(1u << 16));  // VMID 1
  __asm__ volatile("mcr p15, 4, %0, c1, c1, 0; isb" ::"r"(1u));                        // HCR.VM
  uint32_t svc_sp = (uint32_t)&guest_stack[1024], exc_sp = (uint32_t)&guest_stack[256];
  __asm__ volatile("msr sp_svc, %0; msr sp_abt, %1; msr sp_und, %1" ::"r"(svc_sp), "r"(exc_sp));
  extern char vectors[];
  __asm__ volatile("mcr p15, 0, %0, c12, c0, 0" ::"r"(vectors));
  __asm__ volatile("msr elr_hyp, %0; msr spsr_cxsf, %1; eret" ::"r"(guest_main), "r"(0x1d3u)
                   : "memory");
  return 1;
}
