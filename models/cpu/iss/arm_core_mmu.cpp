// Address translation. Today: the MMU is not modelled (SCTLR.M, HSCTLR.M and HCR.VM are
// accepted, addresses stay physical); the TLB operations have nothing to flush, and the address
// translation operations report the identity mapping.
#include "models/cpu/iss/arm_core.h"

namespace vtoe::cpu::iss {

void ArmCore::tlb_flush() {}

void ArmCore::tlb_flush_va(uint32_t) {}

void ArmCore::address_translate(uint32_t va, int) {
  // PAR in the short-descriptor format (TTBCR.EAE = 0): PA[31:12], F = 0; long format (EAE):
  // bit 11 (LPAE) set, PA[39:12].
  if (sys_.ttbcr & (1u << 31)) {
    sys_.par = (uint64_t{va} & ~0xfffull) | (1u << 11);
  } else {
    sys_.par = va & ~0xfffu;
  }
}

bool ArmCore::debug_translate(uint32_t va, uint32_t& pa) {
  pa = va;
  return true;
}

}  // namespace vtoe::cpu::iss
