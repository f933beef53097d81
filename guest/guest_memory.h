// The guest's view of its RAM for software models: untimed backdoor access (the time it takes is
// charged as CPU cycles by the code that does it) plus a bump allocator for kernel buffers and
// rings inside the guest's region. On the platform the RAM is a window of the DRAM
// (mem::DramWindow); a bench may hand any access function.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "models/mem/dram_window.h"

namespace vtoe::guest {

class GuestMemory {
 public:
  using Access = std::function<void(std::uint64_t addr, void* data, std::size_t len, bool write)>;

  GuestMemory(std::uint64_t base, std::uint64_t size, Access access)
      : base_(base), size_(size), next_(base), access_(std::move(access)) {}
  explicit GuestMemory(const mem::DramWindow& window)
      : GuestMemory(window.base(), window.size(),
                    [window](std::uint64_t addr, void* data, std::size_t len, bool write) {
                      if (write)
                        window.write(addr, data, len);
                      else
                        window.read(addr, data, len);
                    }) {}

  std::uint64_t base() const { return base_; }
  std::uint64_t size() const { return size_; }

  std::uint64_t allocate(std::uint64_t bytes, std::uint64_t align = 64) {
    const std::uint64_t at = (next_ + align - 1) & ~(align - 1);
    if (at + bytes > base_ + size_)
      throw std::runtime_error("guest memory exhausted: " + std::to_string(size_) +
                               " bytes are not enough (raise platform.guest_memory)");
    next_ = at + bytes;
    return at;
  }
  void read(std::uint64_t addr, void* dst, std::size_t len) const {
    access_(addr, dst, len, false);
  }
  void write(std::uint64_t addr, const void* src, std::size_t len) const {
    access_(addr, const_cast<void*>(src), len, true);
  }

 private:
  std::uint64_t base_, size_, next_;
  Access access_;
};

}  // namespace vtoe::guest
