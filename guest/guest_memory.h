// The guest's view of its RAM for software models: untimed backdoor access (the time it takes is
// charged as CPU cycles by the code that does it, and booked on the memory system when a
// MemoryTraffic is set) plus the guest kernel's allocator for socket
// buffers and rings inside the guest's region. On the platform the RAM is a window of the DRAM
// (mem::DramWindow); a bench may hand any access function.
#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include "models/cpu/memory_traffic.h"
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

  // The physical address of guest address `addr` (the window's; identity without one).
  std::uint64_t physical(std::uint64_t addr) const { return pa_ + (addr - base_); }
  // Where software's cache misses and write-backs to this memory are booked
  // (platform.cpu_memory_traffic: on); null = they cost only their cycles.
  void set_traffic(cpu::MemoryTraffic* traffic) { traffic_ = traffic; }
  cpu::MemoryTraffic* traffic() const { return traffic_; }

  void read(std::uint64_t addr, void* dst, std::size_t len) const {
    access_(addr, dst, len, false);
  }
  void write(std::uint64_t addr, const void* src, std::size_t len) const {
    access_(addr, const_cast<void*>(src), len, true);
  }

 private:
  std::uint64_t base_, size_;
  std::uint64_t pa_;
  Access access_;
  cpu::MemoryTraffic* traffic_ = nullptr;
  std::map<std::uint64_t, std::uint64_t> free_;  // start -> length
  std::map<std::uint64_t, std::uint64_t> used_;  // start -> length
  std::uint64_t in_use_ = 0;
};

}  // namespace vtoe::guest
