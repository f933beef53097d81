#include "models/smmu/stage2_table.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace vtoe::smmu {

namespace {

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

std::string range_text(std::uint64_t start, std::uint64_t size) {
  std::ostringstream s;
  s << "[0x" << std::hex << start << ", 0x" << start + size << ")";
  return s.str();
}

}  // namespace

const char* to_string(FaultKind kind) {
  switch (kind) {
    case FaultKind::Unmapped:
      return "unmapped";
    case FaultKind::Permission:
      return "permission";
    case FaultKind::NoContext:
      return "no_context";
    case FaultKind::NoSideband:
      return "no_sideband";
  }
  return "?";
}

const char* to_string(MemAttr attr) { return attr == MemAttr::Device ? "device" : "normal"; }

void Stage2Table::check_range(const char* op, std::uint64_t ipa, std::uint64_t size) const {
  if (size == 0) throw std::invalid_argument(name_ + ": " + op + " of size 0");
  if (((ipa | size) & kPageMask) != 0) {
    throw std::invalid_argument(name_ + ": " + op + " " + range_text(ipa, size) +
                                " is not 4 KiB page-aligned");
  }
  if (ipa + (size - 1) < ipa) {
    throw std::invalid_argument(name_ + ": " + op + " " + range_text(ipa, size) +
                                " wraps around 2^64");
  }
}

Stage2Table::Map::const_iterator Stage2Table::find(std::uint64_t ipa) const {
  auto it = regions_.upper_bound(ipa);
  if (it == regions_.begin()) return regions_.end();
  --it;
  return (ipa - it->first < it->second.size) ? it : regions_.end();
}

void Stage2Table::split_at(std::uint64_t ipa) {
  auto it = regions_.upper_bound(ipa);
  if (it == regions_.begin()) return;
  --it;
  const std::uint64_t off = ipa - it->first;
  if (off == 0 || off >= it->second.size) return;
  Entry tail = it->second;
  tail.size -= off;
  tail.pa += off;
  it->second.size = off;
  regions_.emplace_hint(std::next(it), ipa, tail);
}

void Stage2Table::merge_around(Map::iterator it) {
  auto lines_up = [](const Map::value_type& a, const Map::value_type& b) {
    return a.first + a.second.size == b.first && a.second.pa + a.second.size == b.second.pa &&
           a.second.perm == b.second.perm && a.second.attr == b.second.attr;
  };
  if (it != regions_.begin()) {
    auto prev = std::prev(it);
    if (lines_up(*prev, *it)) {
      prev->second.size += it->second.size;
      regions_.erase(it);
      it = prev;
    }
  }
  auto next = std::next(it);
  if (next != regions_.end() && lines_up(*it, *next)) {
    it->second.size += next->second.size;
    regions_.erase(next);
  }
}

void Stage2Table::map(std::uint64_t ipa, std::uint64_t pa, std::uint64_t size, Perm perm,
                      MemAttr attr) {
  check_range("map", ipa, size);
  if ((pa & kPageMask) != 0) {
    throw std::invalid_argument(name_ + ": map " + range_text(ipa, size) + " -> PA " +
                                range_text(pa, size) + ": PA is not 4 KiB page-aligned");
  }
  if (pa + (size - 1) < pa) {
    throw std::invalid_argument(name_ + ": map " + range_text(ipa, size) + " -> PA " +
                                range_text(pa, size) + ": PA wraps around 2^64");
  }
  const std::uint64_t last = ipa + (size - 1);
  // The only candidates for overlap: the region starting at or before `ipa`, and the first one
  // starting after it.
  auto next = regions_.upper_bound(ipa);
  const Map::const_iterator hits[2] = {next == regions_.begin() ? regions_.end() : std::prev(next),
                                       next};
  for (auto it : hits) {
    if (it == regions_.end()) continue;
    const std::uint64_t r_last = it->first + (it->second.size - 1);
    if (it->first <= last && ipa <= r_last) {
      throw std::invalid_argument(name_ + ": map " + range_text(ipa, size) +
                                  " overlaps mapped IPA range " +
                                  range_text(it->first, it->second.size));
    }
  }
  auto it = regions_.emplace_hint(next, ipa, Entry{size, pa, perm, attr});
  mapped_bytes_ += size;
  ++generation_;
  merge_around(it);
}

std::uint64_t Stage2Table::unmap(std::uint64_t ipa, std::uint64_t size) {
  check_range("unmap", ipa, size);
  const std::uint64_t end = ipa + size;  // may be 0 when the range ends at 2^64
  split_at(ipa);
  if (end != 0) split_at(end);
  auto first = regions_.lower_bound(ipa);
  auto last = (end != 0) ? regions_.lower_bound(end) : regions_.end();
  std::uint64_t removed = 0;
  for (auto it = first; it != last; ++it) removed += it->second.size;
  // A split only happens inside a region that overlaps the range, so removed == 0 means the
  // table is untouched.
  if (removed == 0) return 0;
  regions_.erase(first, last);
  mapped_bytes_ -= removed;
  ++generation_;
  return removed;
}

void Stage2Table::protect(std::uint64_t ipa, std::uint64_t size, Perm perm) {
  check_range("protect", ipa, size);
  // Check first so that a failure leaves the table unchanged.
  std::uint64_t addr = ipa;
  const std::uint64_t last = ipa + (size - 1);
  while (true) {
    auto it = find(addr);
    if (it == regions_.end()) {
      throw std::invalid_argument(name_ + ": protect " + range_text(ipa, size) + ": IPA " +
                                  hex(addr) + " is not mapped");
    }
    const std::uint64_t r_last = it->first + (it->second.size - 1);
    if (r_last >= last) break;
    addr = r_last + 1;
  }
  const std::uint64_t end = ipa + size;
  split_at(ipa);
  if (end != 0) split_at(end);
  auto it = regions_.find(ipa);
  while (it != regions_.end() && it->first <= last) {
    it->second.perm = perm;
    ++it;
  }
  // Merge back: the region before the range, the changed ones and the one right after it.
  it = regions_.find(ipa);
  if (it != regions_.begin()) it = std::prev(it);
  while (it != regions_.end() && (it->first <= last || it->first == end)) {
    const std::uint64_t key = it->first;
    merge_around(it);
    it = regions_.upper_bound(key);  // valid whether or not `key` was merged away
  }
  ++generation_;
}

void Stage2Table::clear() {
  if (regions_.empty()) return;
  regions_.clear();
  mapped_bytes_ = 0;
  ++generation_;
}

std::optional<Translation> Stage2Table::translate(std::uint64_t ipa, bool write,
                                                  TranslationFault* fault) const {
  auto it = find(ipa);
  if (it == regions_.end()) {
    if (fault) *fault = {FaultKind::Unmapped, ipa};
    return std::nullopt;
  }
  if (!it->second.perm.allows(write)) {
    if (fault) *fault = {FaultKind::Permission, ipa};
    return std::nullopt;
  }
  return Translation{it->second.pa + (ipa - it->first), it->second.perm, it->second.attr};
}

std::optional<RangeTranslation> Stage2Table::translate_range(std::uint64_t ipa, std::uint64_t len,
                                                             bool write,
                                                             TranslationFault* fault) const {
  if (len == 0) len = 1;
  const std::uint64_t last = ipa + (len - 1);
  if (last < ipa) {  // wraps around 2^64: the bytes past the top cannot be mapped
    if (fault) *fault = {FaultKind::Unmapped, 0};
    return std::nullopt;
  }
  auto it = find(ipa);
  if (it == regions_.end()) {
    if (fault) *fault = {FaultKind::Unmapped, ipa};
    return std::nullopt;
  }
  RangeTranslation out;
  out.pa = it->second.pa + (ipa - it->first);
  out.attr = it->second.attr;
  bool contiguous = true;
  std::uint64_t addr = ipa;  // first byte not yet checked
  while (true) {
    if (!it->second.perm.allows(write)) {
      if (fault) *fault = {FaultKind::Permission, addr};
      return std::nullopt;
    }
    const std::uint64_t r_last = it->first + (it->second.size - 1);
    const std::uint64_t covered_last = std::min(r_last, last);
    if (contiguous) out.contiguous_len = covered_last - ipa + 1;
    if (r_last >= last) break;
    addr = r_last + 1;
    auto next = std::next(it);
    if (next == regions_.end() || next->first != addr) {
      if (fault) *fault = {FaultKind::Unmapped, addr};
      return std::nullopt;
    }
    if (contiguous && next->second.pa != it->second.pa + it->second.size) contiguous = false;
    it = next;
  }
  out.contiguous = contiguous;
  return out;
}

std::optional<Region> Stage2Table::region_at(std::uint64_t ipa) const {
  auto it = find(ipa);
  if (it == regions_.end()) return std::nullopt;
  return Region{it->first, it->second.pa, it->second.size, it->second.perm, it->second.attr};
}

std::vector<Region> Stage2Table::regions() const {
  std::vector<Region> out;
  out.reserve(regions_.size());
  for (const auto& [ipa, e] : regions_) out.push_back(Region{ipa, e.pa, e.size, e.perm, e.attr});
  return out;
}

}  // namespace vtoe::smmu
