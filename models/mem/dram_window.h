// A window of DRAM seen at another address: [base, base + size) reaches the DRAM at
// [pa, pa + size), through its untimed backdoor. A guest's RAM as its software models see it
// (stage 2 maps the RAM linearly; native guests see it at its physical address, base == pa).
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/mem/dram.h"

namespace vtoe::mem {

class DramWindow {
 public:
  DramWindow(Dram& dram, std::uint64_t base, std::uint64_t pa, std::uint64_t size)
      : dram_(&dram), base_(base), pa_(pa), size_(size) {}

  std::uint64_t base() const { return base_; }
  std::uint64_t pa() const { return pa_; }
  std::uint64_t size() const { return size_; }

  // No check against the window's end: the DRAM refuses what lies outside it.
  void read(std::uint64_t addr, void* dst, std::size_t len) const {
    dram_->read(pa_ + (addr - base_), dst, len);
  }
  void write(std::uint64_t addr, const void* src, std::size_t len) const {
    dram_->write(pa_ + (addr - base_), src, len);
  }

 private:
  Dram* dram_;
  std::uint64_t base_, pa_, size_;
};

}  // namespace vtoe::mem
