#include "guest/guest_memory.h"

#include <iterator>
#include <stdexcept>
#include <string>

namespace vtoe::guest {

GuestMemory::GuestMemory(std::uint64_t base, std::uint64_t size, Access access)
    : base_(base), size_(size), pa_(base), access_(std::move(access)) {
  if (size_ > 0) free_.emplace(base_, size_);
}

GuestMemory::GuestMemory(const mem::DramWindow& window)
    : GuestMemory(window.base(), window.size(),
                  [window](std::uint64_t addr, void* data, std::size_t len, bool write) {
                    if (write)
                      window.write(addr, data, len);
                    else
                      window.read(addr, data, len);
                  }) {
  pa_ = window.pa();
}

std::uint64_t GuestMemory::allocate(std::uint64_t bytes, std::uint64_t align) {
  if (align == 0 || (align & (align - 1)) != 0)
    throw std::logic_error("alignment not a power of 2");
  if (bytes == 0) bytes = 1;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const std::uint64_t start = it->first, len = it->second;
    const std::uint64_t at = (start + align - 1) & ~(align - 1);
    if (at < start || at - start > len || len - (at - start) < bytes) continue;
    free_.erase(it);
    if (at > start) free_.emplace(start, at - start);
    if (at + bytes < start + len) free_.emplace(at + bytes, start + len - (at + bytes));
    used_.emplace(at, bytes);
    in_use_ += bytes;
    return at;
  }
  throw std::runtime_error("guest memory exhausted: " + std::to_string(size_) + " bytes, " +
                           std::to_string(in_use_) + " in use, no free block of " +
                           std::to_string(bytes) + " (raise platform.guest_memory)");
}

void GuestMemory::release(std::uint64_t addr) {
  auto u = used_.find(addr);
  if (u == used_.end())
    throw std::logic_error("guest memory: release of " + std::to_string(addr) +
                           ", which is not an allocated block");
  std::uint64_t start = u->first, len = u->second;
  in_use_ -= len;
  used_.erase(u);
  // Merge with the free block after and the one before.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + len) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      len += prev->second;
      free_.erase(prev);
    }
  }
  free_.emplace(start, len);
}

}  // namespace vtoe::guest
