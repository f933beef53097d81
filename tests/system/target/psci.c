// PSCI as QEMU's virt answers it for one core (over HVC from SVC, over SMC from Hyp).
#include "rt.h"

int main(void) {
  show("version", psci(0x84000000u, 0, 0, 0));
  show("features(system_off)", psci(0x8400000Au, 0x84000008u, 0, 0));
  show("features(0x8400001f)", psci(0x8400000Au, 0x8400001Fu, 0, 0));
  show("migrate_info_type", psci(0x84000006u, 0, 0, 0));
  show("affinity_info(0)", psci(0x84000004u, 0, 0, 0));
  show("cpu_on(0)", psci(0x84000003u, 0, 0x40010000u, 0));
  show("cpu_on(1)", psci(0x84000003u, 1, 0x40010000u, 0));
  show("unknown", psci(0x8400001Fu, 0, 0, 0));
  return 0;
}
