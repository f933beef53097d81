// Stage-1 translation in the long-descriptor (LPAE) format, as an LPAE kernel sets it up
// (TTBCR.EAE = 1): a 1 GiB block for the devices, 2 MiB blocks and 4 KiB pages for RAM through
// a level-2 and a level-3 table, TTBR1 for the top of the address space (TTBCR.T1SZ), MAIR
// attributes; the faults with their long-format DFSR/IFSR (translation, access flag and
// permission at each level), DFAR/IFAR, the 64-bit PAR of ATS1CP*, TLBIMVA after a remap.
#include "rt.h"

static uint64_t l1[4] __attribute__((aligned(32)));      // TTBR0: 0-2 GiB (T0SZ = 1)
static uint64_t l1_hi[4] __attribute__((aligned(32)));   // TTBR1: 2-4 GiB (T1SZ = 1)
static uint64_t l2[512] __attribute__((aligned(4096)));  // 0x40000000-0x7fffffff
static uint64_t l3[512] __attribute__((aligned(4096)));  // 0x7fe00000-0x7fffffff
static volatile uint32_t resume_at;

// Lower attributes: AttrIndx (MAIR index), NS, AP[2:1], SH, AF; upper: PXN, XN.
#define ATTR(idx) ((uint64_t)(idx) << 2)
#define AP_RW_PL1 (0ull << 6)
#define AP_RW_ANY (1ull << 6)
#define AP_RO_PL1 (2ull << 6)
#define SH_INNER (3ull << 8)
#define AF (1ull << 10)
#define XN (1ull << 54)

static uint64_t block(uint64_t pa, uint64_t attrs) { return pa | attrs | 1; }  // level 1/2
static uint64_t table(const void* t) { return (uint32_t)t | 3; }               // level 1/2
static uint64_t page(uint64_t pa, uint64_t attrs) { return pa | attrs | 3; }   // level 3

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  uint32_t fsr, far;
  if (kind == EXC_DABT) {
    __asm__ volatile("mrc p15, 0, %0, c5, c0, 0" : "=r"(fsr));
    __asm__ volatile("mrc p15, 0, %0, c6, c0, 0" : "=r"(far));
    show("data abort dfsr", fsr & ~(1u << 12));  // ExT is IMPLEMENTATION DEFINED
    show("dfar", far);
    return lr;  // resume after the access
  }
  if (kind == EXC_PABT) {
    __asm__ volatile("mrc p15, 0, %0, c5, c0, 1" : "=r"(fsr));
    __asm__ volatile("mrc p15, 0, %0, c6, c0, 2" : "=r"(far));
    show("prefetch abort ifsr", fsr & ~(1u << 12));
    show("ifar", far);
    return resume_at + 4;
  }
  show("unexpected exception", (uint32_t)kind);
  show("lr", lr);
  show("spsr", spsr);
  power_off();
}

// ATS1CPR/ATS1CPW, then the 64-bit PAR (long format: PA[39:12], SH, NS, LPAE bit 11, F, FST).
static void show_par(const char* name, uint32_t va, int write) {
  uint32_t lo, hi;
  if (write)
    __asm__ volatile("mcr p15, 0, %0, c7, c8, 1\n isb" ::"r"(va));
  else
    __asm__ volatile("mcr p15, 0, %0, c7, c8, 0\n isb" ::"r"(va));
  __asm__ volatile("mrrc p15, 0, %0, %1, c7" : "=r"(lo), "=r"(hi));
  show(name, lo);
  show("  par high", hi);  // ATTR (the MAIR byte) in bits 31:24
}

static void __attribute__((noinline)) returned_here(void) { puts_("resumed after the abort\n"); }

int main(void) {
  const uint64_t normal = ATTR(0) | SH_INNER | AF, device = ATTR(1) | AF | XN;
  l1[0] = block(0x00000000u, device | AP_RW_PL1);  // 1 GiB of devices: GIC, UART, identity
  l1[1] = table(l2);                               // RAM through level 2
  for (uint32_t i = 0; i < 511; ++i) l2[i] = block(0x40000000u + (i << 21), normal | AP_RW_PL1);
  l2[511] = table(l3);                             // 0x7fe00000: pages
  l3[0] = page(0x40010000u, normal | AP_RW_PL1);   // 0x7fe00000 -> the program's first page
  l3[1] = page(0x40010000u, normal | AP_RO_PL1);   // read-only alias
  l3[2] = page(0x40010000u, ATTR(0) | AP_RW_PL1);  // access flag clear
  l3[3] = page((uint32_t)returned_here & ~0xfffu, normal | AP_RW_PL1 | XN);  // its code, XN
  l3[4] = page(0x40010000u, normal | AP_RW_ANY);                             // PL0 too
  // l3[5]: invalid (translation fault, level 3). l2 and l1_hi entries left 0 are level 2/1 ones.
  l1_hi[0] = block(0x40000000u, normal | AP_RO_PL1);  // 0x80000000: RAM, read-only, via TTBR1
  l1_hi[1] = table(l2);                               // 0xc0000000: RAM again, shared level 2
  __asm__ volatile(
      "mcr p15, 0, %0, c10, c2, 0" ::"r"(0x000000ffu));      // MAIR0: 0 normal WB, 1 device
  __asm__ volatile("mcr p15, 0, %0, c10, c2, 1" ::"r"(0u));  // MAIR1
  __asm__ volatile("mcrr p15, 0, %0, %1, c2" ::"r"((uint32_t)l1), "r"(0u));     // TTBR0, ASID 0
  __asm__ volatile("mcrr p15, 1, %0, %1, c2" ::"r"((uint32_t)l1_hi), "r"(0u));  // TTBR1
  // TTBCR: EAE, T0SZ = 1 (TTBR0 below 2 GiB), T1SZ = 1, inner shareable write-back walks.
  const uint32_t ttbcr = (1u << 31) | (1u << 16) | 1u | (3u << 12) | (1u << 10) | (1u << 8);
  __asm__ volatile("mcr p15, 0, %0, c2, c0, 2" ::"r"(ttbcr));
  __asm__ volatile("mcr p15, 0, %0, c3, c0, 0" ::"r"(0x55555555u));    // DACR: ignored with EAE
  __asm__ volatile("mcr p15, 0, %0, c8, c7, 0\n dsb\n isb" ::"r"(0));  // TLBIALL
  uint32_t sctlr;
  __asm__ volatile("mrc p15, 0, %0, c1, c0, 0" : "=r"(sctlr));
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 0\n isb" ::"r"(sctlr | 1) : "memory");
  puts_("mmu on (lpae)\n");
  CP15("ttbcr", 0, c2, c0, 2);
  const uint32_t first = *(volatile uint32_t*)0x40010000u;
  show("page word", *(volatile uint32_t*)0x7fe00000u == first);
  show("ttbr1 block word", *(volatile uint32_t*)0x80010000u == first);
  show("ttbr1 table word", *(volatile uint32_t*)0xc0010000u == first);
  *(volatile uint32_t*)0x7fe01000u = 1;    // read-only page: permission fault, level 3
  *(volatile uint32_t*)0x80000100u = 1;    // read-only block via TTBR1: permission fault, level 1
  (void)*(volatile uint32_t*)0x7fe02000u;  // access flag fault, level 3
  (void)*(volatile uint32_t*)0x7fe05000u;  // invalid page: translation fault, level 3
  l2[300] = 0;                             // 0x65800000: invalid block
  __asm__ volatile("dsb\n mcr p15, 0, %0, c8, c7, 1\n dsb\n isb" ::"r"(0x65800000u) : "memory");
  (void)*(volatile uint32_t*)0x65800010u;  // translation fault, level 2
  show_par("par 0x7fe04234 read", 0x7fe04234u, 0);
  show_par("par 0x7fe01000 write", 0x7fe01000u, 1);
  show_par("par 0x7fe05000 read", 0x7fe05000u, 0);
  show_par("par 0xc0123456 read", 0xc0123456u, 0);
  show_par("par 0x09000000 read", UART_BASE, 0);  // device memory
  // Remap 0x7fe00000 to the next page; TLBIMVA; read through it again.
  l3[0] = page(0x40011000u, normal | AP_RW_PL1);
  __asm__ volatile("dsb\n mcr p15, 0, %0, c8, c7, 1\n dsb\n isb" ::"r"(0x7fe00000u) : "memory");
  show("remapped word", *(volatile uint32_t*)0x7fe00004u == *(volatile uint32_t*)0x40011004u);
  // Execute from the execute-never alias of returned_here's page: a prefetch abort (permission,
  // level 3), resumed at the identity-mapped function.
  resume_at = (uint32_t)returned_here;
  void (*xn_alias)(void) = (void (*)(void))(0x7fe03000u + ((uint32_t)returned_here & 0xfffu));
  xn_alias();
  __asm__ volatile("mcr p15, 0, %0, c1, c0, 0\n isb" ::"r"(sctlr) : "memory");
  puts_("mmu off\n");
  return 0;
}
