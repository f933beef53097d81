// The guest's view of its RAM for software models: untimed backdoor access (the time it takes is
// charged as CPU cycles by the code that does it) plus the guest kernel's allocator for socket
// buffers and rings inside the guest's region. On the platform the RAM is a window of the DRAM
// (mem::DramWindow); a bench may hand any access function.
#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include "models/mem/dram_window.h"

namespace vtoe::guest {

class GuestMemory {
 public:
  using Access = std::function<void(std::uint64_t addr, void* data, std::size_t len, bool write)>;

  GuestMemory(std::uint64_t base, std::uint64_t size, Access access);
  explicit GuestMemory(const mem::DramWindow& window);

  std::uint64_t base() const { return base_; }
  std::uint64_t size() const { return size_; }

  // First fit, lowest address first (deterministic). Throws std::runtime_error when no free
  // block is large enough, naming the key that sizes the memory.
  std::uint64_t allocate(std::uint64_t bytes, std::uint64_t align = 64);
  // Gives back a block allocate() returned; neighbouring free blocks merge. Throws
  // std::logic_error for an address that is not an allocated block (a model bug).
  void release(std::uint64_t addr);
  std::uint64_t bytes_in_use() const { return in_use_; }
  std::size_t blocks_in_use() const { return used_.size(); }

  void read(std::uint64_t addr, void* dst, std::size_t len) const {
    access_(addr, dst, len, false);
  }
  void write(std::uint64_t addr, const void* src, std::size_t len) const {
    access_(addr, const_cast<void*>(src), len, true);
  }

 private:
  std::uint64_t base_, size_;
  Access access_;
  std::map<std::uint64_t, std::uint64_t> free_;  // start -> length
  std::map<std::uint64_t, std::uint64_t> used_;  // start -> length
  std::uint64_t in_use_ = 0;
};

}  // namespace vtoe::guest
