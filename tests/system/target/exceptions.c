// Synchronous exceptions in SVC mode: SVC from A32 and T32, undefined instructions in both
// states, a data abort and a prefetch abort at 0x0b000000 (unmapped on both machines; the
// platform-bus window after it holds the TOE on vtoe), with LR, SPSR and the fault registers as
// the handler sees them.
#include "rt.h"

static volatile uint32_t resume;
static volatile int count;

static uint32_t dfsr(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 0, %0, c5, c0, 0" : "=r"(v));
  return v;
}
static uint32_t dfar(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 0, %0, c6, c0, 0" : "=r"(v));
  return v;
}
static uint32_t ifsr(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 0, %0, c5, c0, 1" : "=r"(v));
  return v;
}
static uint32_t ifar(void) {
  uint32_t v;
  __asm__ volatile("mrc p15, 0, %0, c6, c0, 2" : "=r"(v));
  return v;
}

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  ++count;
  show("exception", (uint32_t)kind);
  show("  mode", cpsr() & 0x1f);
  show("  masks", cpsr() & 0x1c0);
  show("  lr", lr);
  show("  spsr", spsr);
  if (kind == EXC_DABT) {
    // Status (FS) and WnR; ExT is IMPLEMENTATION DEFINED and left out.
    show("  dfsr", dfsr() & 0xc0f);
    show("  dfar", dfar());
  }
  if (kind == EXC_PABT) {
    show("  ifsr", ifsr() & 0x40f);
    show("  ifar", ifar());
    return resume;
  }
  return 0;
}

__attribute__((target("thumb"), noinline)) static void thumb_svc(void) {
  __asm__ volatile("svc #7" ::: "memory", "lr");  // SVC mode: LR_svc is the return
}
__attribute__((target("thumb"), noinline)) static void thumb_undef(void) {
  __asm__ volatile(".hword 0xde01" ::: "memory");  // UDF #1 (T1)
}
__attribute__((target("arm"), noinline)) static void arm_undef(void) {
  __asm__ volatile(".word 0xe7f000f1" ::: "memory");  // UDF #1 (A1)
}

static void after_pabt(void) {
  show("resumed after the prefetch abort", count);
  power_off();
}

int main(void) {
  puts_("svc from A32\n");
  __asm__ volatile("svc #0x42" ::: "memory", "lr");
  puts_("svc from T32\n");
  thumb_svc();
  puts_("undefined in A32\n");
  arm_undef();
  puts_("undefined in T32\n");
  thumb_undef();
  puts_("data abort (read)\n");
  show("read value", rd32(0x0b000010));
  puts_("data abort (write)\n");
  wr32(0x0b000024, 1);
  puts_("prefetch abort\n");
  resume = (uint32_t)after_pabt;
  ((void (*)(void))0x0b000100)();
  return 1;
}
