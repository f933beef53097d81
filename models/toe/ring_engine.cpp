#include "models/toe/ring_engine.h"

namespace vtoe::toe {

bool RingEngine::write_register(std::uint64_t offset, std::uint32_t value, std::string* error) {
  switch (offset) {
    case reg::kRingAddrLo:
      addr_ = (addr_ & 0xffffffff00000000ull) | value;
      head_ = tail_ = 0;
      ++generation_;
      return true;
    case reg::kRingAddrHi:
      addr_ = (addr_ & 0xffffffffull) | (static_cast<std::uint64_t>(value) << 32);
      head_ = tail_ = 0;
      ++generation_;
      return true;
    case reg::kRingSize:
      if (value < 2 || (value & (value - 1)) != 0 || value > (1u << 16)) {
        if (error)
          *error = "ring size " + std::to_string(value) + " is not a power of two in [2, 65536]";
        return false;
      }
      size_ = value;
      head_ = tail_ = 0;
      ++generation_;
      return true;
    case reg::kRingHead:
    case reg::kRingTail:
      if (!configured() || value >= size_) {
        if (error)
          *error =
              "ring index " + std::to_string(value) + " outside a ring of " + std::to_string(size_);
        return false;
      }
      (offset == reg::kRingHead ? head_ : tail_) = value;
      return true;
    default:
      if (error) *error = "no ring register at offset " + std::to_string(offset);
      return false;
  }
}

std::uint32_t RingEngine::read_register(std::uint64_t offset) const {
  switch (offset) {
    case reg::kRingAddrLo:
      return static_cast<std::uint32_t>(addr_);
    case reg::kRingAddrHi:
      return static_cast<std::uint32_t>(addr_ >> 32);
    case reg::kRingSize:
      return size_;
    case reg::kRingHead:
      return head_;
    case reg::kRingTail:
      return tail_;
    default:
      return 0;
  }
}

std::uint32_t RingEngine::pending_contiguous() const {
  const std::uint32_t n = pending();
  const std::uint32_t to_end = size_ - head_;
  return n < to_end ? n : to_end;
}

}  // namespace vtoe::toe
