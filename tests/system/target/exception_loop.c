// A runaway guest: VBAR points at a vector table of UDF instructions and the program executes
// one, so every exception entry takes an Undefined Instruction exception at once, for ever (on
// qemu-system-arm too). vtoe must end the run (tests/system/test_runaway.py): by its storm
// detection, naming the vector, the mode and the instruction, or at --max-instructions, exactly.
#include "rt.h"

__asm__(
    "  .balign 32\n"
    "udf_vectors:\n"
    "  .rept 8\n"
    "  .word 0xe7f000f0\n"  // udf #0
    "  .endr\n");
extern uint32_t udf_vectors[];

int main(void) {
  puts_("udf vectors\n");
  __asm__ volatile("mcr p15, 0, %0, c12, c0, 0\n isb" ::"r"(udf_vectors) : "memory");
  __asm__ volatile(".word 0xe7f000f0" ::: "memory");  // udf #0: into the loop
  return 0;
}
