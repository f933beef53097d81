#include "models/toe/host_ring_driver.h"

#include <vector>

namespace vtoe::toe {

void HostRingDriver::start(Access& access, const std::array<std::uint64_t, kRings>& ring_addr) {
  if (started_) return;
  addr_ = ring_addr;
  const std::vector<std::uint8_t> zero(static_cast<std::size_t>(entries_) * kDescBytes, 0);
  for (int r = 0; r < kRings; ++r) {
    const auto ring = static_cast<Ring>(r);
    access.write_mem(addr_[r], zero.data(), zero.size());
    access.write_reg(ring_reg(ring, reg::kRingSize), entries_);
    access.write_reg(ring_reg(ring, reg::kRingAddrLo), static_cast<std::uint32_t>(addr_[r]));
    access.write_reg(ring_reg(ring, reg::kRingAddrHi), static_cast<std::uint32_t>(addr_[r] >> 32));
  }
  access.write_reg(reg::kCtrl, reg::kCtrlEnable | reg::kCtrlIrqEnable);
  started_ = true;
}

std::uint32_t HostRingDriver::post(Access& access, Ring ring, const void* desc) {
  const int r = static_cast<int>(ring);
  std::uint32_t waits = 0;
  // Full when advancing the tail would meet the head the TOE last reported.
  while (full(r)) {
    head_[r] = access.read_reg(ring_reg(ring, reg::kRingHead));
    if (!full(r)) break;
    ++waits;
    access.wait_for_space();
  }
  access.write_mem(addr_[r] + static_cast<std::uint64_t>(tail_[r]) * kDescBytes, desc, kDescBytes);
  tail_[r] = (tail_[r] + 1) & (entries_ - 1);
  access.posted();
  access.write_reg(ring_reg(ring, reg::kRingTail), tail_[r]);
  return waits;
}

bool HostRingDriver::next_completion(Access& access, EcqDesc& out) {
  const int e = static_cast<int>(Ring::Ecq);
  const std::uint64_t at = addr_[e] + static_cast<std::uint64_t>(head_[e]) * kDescBytes;
  access.read_mem(at, &out, sizeof out);
  if (!out.valid) return false;
  out.valid = 0;
  access.write_mem(at, &out, sizeof out);
  head_[e] = (head_[e] + 1) & (entries_ - 1);
  return true;
}

void HostRingDriver::release_completions(Access& access) {
  access.write_reg(ring_reg(Ring::Ecq, reg::kRingHead), head_[static_cast<int>(Ring::Ecq)]);
}

}  // namespace vtoe::toe
