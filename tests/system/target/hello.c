// The UART and the state at entry: the mode and masks QEMU's ELF boot leaves.
#include "rt.h"

int main(void) {
  puts_("hello from the system platform\n");
  show("mode", start_cpsr & 0x1f);
  show("masks", start_cpsr & 0x1c0);
  show("thumb", start_cpsr & 0x20);
  return 0;
}
