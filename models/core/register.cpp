#include "models/core/register.h"

#include <algorithm>
#include <stdexcept>

namespace vtoe::core {

RegisterBase::RegisterBase(RegisterBank& bank, const RegisterInfo& info) : info_(info) {
  bank.add(this);
}

void RegisterBank::add(RegisterBase* reg) {
  words_built_ = false;
  words_.clear();
  const auto at = std::upper_bound(regs_.begin(), regs_.end(), reg,
                                   [](const RegisterBase* a, const RegisterBase* b) {
                                     return a->info().offset < b->info().offset;
                                   });
  regs_.insert(at, reg);
}

void RegisterBank::build_word_table() const {
  words_built_ = true;
  std::uint64_t end = 0;
  for (const RegisterBase* r : regs_) {
    const RegisterInfo& in = r->info();
    const std::uint64_t stride = in.stride ? in.stride : in.bytes;
    if (in.bytes != 4 || in.offset % 4 != 0 || stride % 4 != 0) return;  // the search serves it
    end = std::max(end, in.offset + (in.count - 1) * stride + in.bytes);
  }
  if (end / 4 > 65536) return;
  words_.assign(end / 4, WordEntry{nullptr, 0});
  for (RegisterBase* r : regs_) {
    const RegisterInfo& in = r->info();
    const std::uint64_t stride = in.stride ? in.stride : in.bytes;
    for (unsigned i = 0; i < in.count; ++i) words_[(in.offset + i * stride) / 4] = {r, i};
  }
}

RegisterBank::Location RegisterBank::locate(std::uint64_t offset) const {
  if (!words_built_) build_word_table();
  if (!words_.empty()) {
    if (offset / 4 >= words_.size()) return {};
    const WordEntry& w = words_[offset / 4];
    return {w.reg, w.index, static_cast<unsigned>(offset % 4)};
  }
  return search(offset);
}

RegisterBank::Location RegisterBank::search(std::uint64_t offset) const {
  // The last register starting at or before the offset; arrays are searched by their extent.
  auto it =
      std::upper_bound(regs_.begin(), regs_.end(), offset,
                       [](std::uint64_t o, const RegisterBase* r) { return o < r->info().offset; });
  while (it != regs_.begin()) {
    --it;
    const RegisterInfo& in = (*it)->info();
    const std::uint64_t rel = offset - in.offset;
    const std::uint64_t stride = in.stride ? in.stride : in.bytes;
    const std::uint64_t index = rel / stride;
    if (index >= in.count) {
      // Past this array; an earlier strided array may still interleave with the ones after it.
      if (stride <= in.bytes) break;
      continue;
    }
    const std::uint64_t within = rel % stride;
    if (within >= in.bytes) continue;  // a gap of a strided array
    return {*it, static_cast<unsigned>(index), static_cast<unsigned>(within)};
  }
  return {};
}

RegisterHit RegisterBank::find(std::uint64_t offset, unsigned bytes, bool write) const {
  RegisterHit hit;
  const Location at = locate(offset);
  if (!at.reg) {
    hit.error = "no register at this offset";
    return hit;
  }
  const RegisterInfo& in = at.reg->info();
  hit.index = at.index;
  if (at.within + bytes > in.bytes) {
    hit.error = "access straddles the register's end";
    return hit;
  }
  if (!(in.access & access_bit(bytes))) {
    hit.error = "access size the register does not take";
    return hit;
  }
  if (at.within % bytes != 0) {
    hit.error = "unaligned access";
    return hit;
  }
  if (write ? !in.writable : !in.readable) {
    hit.error = write ? "write to a read-only register" : "read of a write-only register";
    return hit;
  }
  hit.reg = at.reg;
  hit.shift = at.within * 8;
  return hit;
}

void RegisterBank::reset() {
  for (RegisterBase* r : regs_) r->reset();
}

unsigned RegisterBank::debug_read(std::uint64_t offset, std::uint8_t* data, unsigned n) const {
  unsigned hits = 0;
  for (unsigned i = 0; i < n; ++i) {
    // Any byte of any register, whatever the sizes and direction the bus may use.
    const Location at = locate(offset + i);
    data[i] = at.reg ? static_cast<std::uint8_t>(at.reg->peek(at.index) >> (8 * at.within)) : 0;
    if (!at.reg) continue;
    ++hits;
  }
  return hits;
}

unsigned RegisterBank::debug_write(std::uint64_t offset, const std::uint8_t* data, unsigned n) {
  unsigned hits = 0;
  for (unsigned i = 0; i < n; ++i) {
    const Location at = locate(offset + i);
    if (!at.reg) continue;
    const unsigned shift = 8 * at.within;
    const std::uint64_t v = at.reg->peek(at.index);
    at.reg->poke(at.index,
                 (v & ~(std::uint64_t{0xff} << shift)) | (std::uint64_t{data[i]} << shift));
    ++hits;
  }
  return hits;
}

void RegisterBank::expect_all(const RegisterInfo* const* table, std::size_t n) const {
  for (std::size_t i = 0; i < n; ++i) {
    const bool found = std::any_of(regs_.begin(), regs_.end(),
                                   [&](const RegisterBase* r) { return &r->info() == table[i]; });
    if (!found)
      throw std::logic_error(name_ + ": register " + table[i]->name +
                             " is in the description but has no field in the model");
  }
}

}  // namespace vtoe::core
