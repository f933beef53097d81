#include "hypervisor/virtual_channel.h"

namespace vtoe::hypervisor {

namespace reg = toe::reg;
using toe::Ring;

namespace {
bool ring_offset(std::uint64_t offset, Ring* ring, std::uint64_t* sub) {
  if (offset < reg::kRingBase || offset >= reg::kRingBase + toe::kRings * reg::kRingStride)
    return false;
  *ring = static_cast<Ring>((offset - reg::kRingBase) / reg::kRingStride);
  *sub = (offset - reg::kRingBase) % reg::kRingStride;
  return true;
}
}  // namespace

VirtualChannel::Effect VirtualChannel::write(std::uint64_t offset, std::uint32_t value,
                                             Ring* ring_out) {
  if (offset == reg::kCtrl) {
    ctrl_ = value;
    return Effect::None;
  }
  if (offset == reg::kStatus) {  // write 1 to clear
    status_ &= ~value;
    return Effect::None;
  }
  Ring r;
  std::uint64_t sub = 0;
  if (!ring_offset(offset, &r, &sub)) {
    latch_error();
    return Effect::None;
  }
  // The host owns the tail of host->TOE rings and the head of the ECQ, as on the real channel.
  const bool ecq = r == Ring::Ecq;
  if ((sub == reg::kRingHead && !ecq) || (sub == reg::kRingTail && ecq)) {
    latch_error();
    return Effect::None;
  }
  if (!ring(r).write_register(sub, value, nullptr)) {
    latch_error();
    return Effect::None;
  }
  if (ring_out) *ring_out = r;
  if (sub == reg::kRingTail) return Effect::Doorbell;
  if (sub == reg::kRingHead) return Effect::EcqFreed;
  return Effect::None;
}

std::uint32_t VirtualChannel::read(std::uint64_t offset) {
  if (offset == reg::kCtrl) return ctrl_;
  if (offset == reg::kStatus) return status_;
  Ring r;
  std::uint64_t sub = 0;
  if (!ring_offset(offset, &r, &sub)) {
    latch_error();  // a read of a register that does not exist is an error too
    return 0;
  }
  return ring(r).read_register(sub);
}

}  // namespace vtoe::hypervisor
