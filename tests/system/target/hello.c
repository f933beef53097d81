// The UART and the state at entry: the mode and masks QEMU's ELF boot leaves.
#include "rt.h"

uint32_t on_exception(int kind, uint32_t lr, uint32_t spsr) {
  show("unexpected exception", (uint32_t)kind);
  show("lr", lr);
  show("spsr", spsr);
  return 0;
}

int main(void) {
  puts_("hello from the system platform\n");
  show("mode", start_cpsr & 0x1f);
  show("masks", start_cpsr & 0x1c0);
  show("thumb", start_cpsr & 0x20);
  return 0;
}
