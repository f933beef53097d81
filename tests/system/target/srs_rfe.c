// SRS and RFE in A32 and T32: every addressing mode (DA, DB, IA, IB) with and without
// write-back, SRS to another mode's stack, RFE into a mode and state given by the loaded CPSR,
// and an Undefined Instruction handler that begins with SRSDB and returns with RFEIA, as many
// exception handlers do (issue 43: without SRS it looped for ever).
#include "rt.h"

static uint32_t buf[16];

static void dump(const char* what, uint32_t sp) {
  puts_(what);
  putch('\n');
  show("  sp offset", sp - (uint32_t)buf);
  for (int i = 0; i < 16; ++i) {
    if (buf[i]) {
      show("  word", (uint32_t)i);
      show("  value", buf[i]);
    }
    buf[i] = 0;
  }
}

// In SVC mode with SP at `sp` and LR/SPSR set: one SRS form, returns SP after it.
#define SRS_A32(form)                                                                    \
  static uint32_t __attribute__((noinline, target("arm"))) srs_a32_##form(uint32_t sp) { \
    uint32_t out;                                                                        \
    __asm__ volatile(                                                                    \
        "mov r4, sp\n mov r5, lr\n mov sp, %1\n ldr lr, =0x11112222\n"                   \
        "ldr r6, =0x600001d3\n msr spsr_fsxc, r6\n" form                                 \
        "\n"                                                                             \
        "mov %0, sp\n mov sp, r4\n mov lr, r5\n"                                         \
        : "=r"(out)                                                                      \
        : "r"(sp)                                                                        \
        : "r4", "r5", "r6", "memory");                                                   \
    return out;                                                                          \
  }
#define SRS_T32(form)                                                                      \
  static uint32_t __attribute__((noinline, target("thumb"))) srs_t32_##form(uint32_t sp) { \
    uint32_t out;                                                                          \
    __asm__ volatile(                                                                      \
        "mov r4, sp\n mov r5, lr\n mov sp, %1\n ldr lr, =0x33334444\n"                     \
        "ldr r6, =0x800001d3\n msr spsr_fsxc, r6\n" form                                   \
        "\n"                                                                               \
        "mov %0, sp\n mov sp, r4\n mov lr, r5\n"                                           \
        : "=r"(out)                                                                        \
        : "r"(sp)                                                                          \
        : "r4", "r5", "r6", "memory");                                                     \
    return out;                                                                            \
  }

#define F_DA "srsda sp!, #0x13"
#define F_DB "srsdb sp, #0x13"
#define F_IA "srsia sp!, #0x13"
#define F_IB "srsib sp, #0x13"
SRS_A32(F_DA)
SRS_A32(F_DB)
SRS_A32(F_IA)
SRS_A32(F_IB)
#define F_TDB "srsdb sp!, #0x13"
#define F_TIA "srsia sp, #0x13"
SRS_T32(F_TDB)
SRS_T32(F_TIA)

// RFE from a frame at `frame` (target, CPSR): returns the CPSR at the target and Rn after it.
static uint32_t __attribute__((noinline, target("arm"))) rfe_a32(uint32_t* frame, uint32_t* rn) {
  uint32_t cpsr_at, r;
  __asm__ volatile(
      "adr r1, 1f\n str r1, [%2, #4]\n ldr r1, =0x800001d3\n str r1, [%2, #8]\n"
      "add r0, %2, #12\n rfedb r0!\n nop\n nop\n"
      "1: mrs %0, cpsr\n mov %1, r0\n"
      : "=r"(cpsr_at), "=r"(r)
      : "r"(frame)
      : "r0", "r1", "memory", "cc");
  *rn = r - (uint32_t)frame;
  return cpsr_at;
}
static uint32_t __attribute__((noinline, target("arm"))) rfe_a32_to_thumb(uint32_t* frame) {
  uint32_t cpsr_at;
  __asm__ volatile(
      "adr r1, 1f\n str r1, [%1]\n ldr r1, =0x400001f3\n str r1, [%1, #4]\n"
      "mov r0, %1\n rfeia r0\n nop\n"
      ".thumb\n1: mrs %0, cpsr\n adr r1, 2f\n bx r1\n .balign 4\n .arm\n2:\n"
      : "=r"(cpsr_at)
      : "r"(frame)
      : "r0", "r1", "memory", "cc");
  return cpsr_at;
}
static uint32_t __attribute__((noinline, target("thumb"))) rfe_t32(uint32_t* frame, uint32_t* rn) {
  uint32_t cpsr_at, r;
  __asm__ volatile(
      "adr r1, 1f\n str r1, [%2]\n ldr r1, =0x200001f3\n str r1, [%2, #4]\n"
      "mov r0, %2\n rfeia r0!\n nop\n .balign 4\n"
      "1: mrs %0, cpsr\n mov %1, r0\n"
      : "=r"(cpsr_at), "=r"(r)
      : "r"(frame)
      : "r0", "r1", "memory", "cc");
  *rn = r - (uint32_t)frame;
  return cpsr_at;
}

// An Undefined Instruction handler in the style of many kernels: SRSDB onto SVC's stack, work in
// SVC mode, RFEIA back (LR_und is the next instruction: no adjustment).
static volatile uint32_t und_count;
__asm__(
    "  .arm\n"
    "  .balign 32\n"
    "srs_vectors:\n"
    "  b .\n"
    "  b srs_und\n"
    "  b .\n  b .\n  b .\n  b .\n  b .\n  b .\n"
    "srs_und:\n"
    "  srsdb sp!, #0x13\n"
    "  cps #0x13\n"
    "  push {r0-r3, r12, lr}\n"
    "  ldr r0, [sp, #24]\n"  // the return address SRS stored
    "  ldr r1, [sp, #28]\n"  // and the SPSR
    "  bl on_srs_und\n"
    "  pop {r0-r3, r12, lr}\n"
    "  rfeia sp!\n");
extern uint32_t srs_vectors[];

void on_srs_und(uint32_t lr, uint32_t spsr) {
  ++und_count;
  show("und handler lr offset", lr - (uint32_t)&srs_vectors);
  show("und handler spsr", spsr);
  show("und handler mode", cpsr() & 0x1f);
}

int main(void) {
  uint32_t* end = buf + 8;
  dump("srsda sp!", srs_a32_F_DA((uint32_t)end));
  dump("srsdb sp", srs_a32_F_DB((uint32_t)end));
  dump("srsia sp!", srs_a32_F_IA((uint32_t)end));
  dump("srsib sp", srs_a32_F_IB((uint32_t)end));
  dump("t32 srsdb sp!", srs_t32_F_TDB((uint32_t)end));
  dump("t32 srsia sp", srs_t32_F_TIA((uint32_t)end));
  // SRS onto IRQ mode's stack from SVC: SP_irq moves, SVC's does not.
  uint32_t irq_sp;
  __asm__ volatile(
      "cps #0x12\n mov r7, sp\n mov sp, %1\n cps #0x13\n"
      "mov r5, lr\n ldr lr, =0x55556666\n ldr r6, =0x100001d3\n msr spsr_fsxc, r6\n"
      "srsdb sp!, #0x12\n mov lr, r5\n"
      "cps #0x12\n mov %0, sp\n mov sp, r7\n cps #0x13\n"
      : "=r"(irq_sp)
      : "r"(end)
      : "r5", "r6", "r7", "memory");
  dump("srsdb sp!, #irq", irq_sp);
  uint32_t rn;
  show("rfedb r0! cpsr", rfe_a32(buf, &rn));
  show("rfedb r0! rn offset", rn);
  show("rfeia to thumb cpsr", rfe_a32_to_thumb(buf));
  show("t32 rfeia r0! cpsr", rfe_t32(buf, &rn));
  show("t32 rfeia r0! rn offset", rn);
  // The handler that starts with SRS.
  uint32_t vbar;
  __asm__ volatile("mrc p15, 0, %0, c12, c0, 0" : "=r"(vbar));
  __asm__ volatile("mcr p15, 0, %0, c12, c0, 0\n isb" ::"r"(srs_vectors) : "memory");
  __asm__ volatile(".word 0xe7f000f0" ::: "memory");  // udf #0
  __asm__ volatile(".word 0xe7f000f0" ::: "memory");
  __asm__ volatile("mcr p15, 0, %0, c12, c0, 0\n isb" ::"r"(vbar) : "memory");
  show("und count", und_count);
  return 0;
}
