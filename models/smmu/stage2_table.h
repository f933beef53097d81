// Stage-2 translation table of one VM: intermediate physical address (IPA) -> physical address
// (PA), page-granular (4 KiB), with access permissions and memory attributes. Plain C++, no
// SystemC: the hypervisor uses it for the CPU's stage 2 (guest accesses) and the SystemMMU for
// device DMA (ARM SMMUs share the stage-2 format with the CPU).
//
// Storage: a sorted map of regions keyed by IPA, not one entry per page. A region is a run of
// pages with contiguous IPA and PA and the same permissions and attributes; map() and protect()
// merge neighbours that line up, so mapping 128 MiB (at once or page by page) is one region.
// Lookups are O(log n) in the number of regions.
//
// Errors: map/unmap/protect with an address or size that is not page-aligned, a size of 0, or a
// range wrapping around 2^64 throw std::invalid_argument; map() over an existing mapping throws
// std::invalid_argument naming both ranges; protect() of a range with unmapped pages throws
// std::invalid_argument naming the first hole. The table is unchanged after any throw.
//
// Translation faults are not exceptions: translate()/translate_range() return std::nullopt and,
// if asked, say why (FaultKind::Unmapped or FaultKind::Permission) and at which IPA.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace vtoe::smmu {

inline constexpr unsigned kPageBits = 12;
inline constexpr std::uint64_t kPageSize = std::uint64_t{1} << kPageBits;  // 4 KiB
inline constexpr std::uint64_t kPageMask = kPageSize - 1;

// Stage-2 access permission (S2AP): which accesses the mapping allows.
struct Perm {
  bool read = false;
  bool write = false;

  static constexpr Perm none() { return {false, false}; }
  static constexpr Perm ro() { return {true, false}; }
  static constexpr Perm wo() { return {false, true}; }
  static constexpr Perm rw() { return {true, true}; }
  bool allows(bool is_write) const { return is_write ? write : read; }
  friend bool operator==(Perm a, Perm b) { return a.read == b.read && a.write == b.write; }
  friend bool operator!=(Perm a, Perm b) { return !(a == b); }
};

// Stage-2 memory attribute: normal memory (DRAM) or device (MMIO registers, e.g. a TOE channel).
enum class MemAttr : std::uint8_t { Normal, Device };

// Why an access did not translate. The table reports Unmapped and Permission; the SystemMMU adds
// NoContext (no table for the transaction's stream) and NoSideband (no SidebandExtension).
enum class FaultKind : std::uint8_t { Unmapped, Permission, NoContext, NoSideband };
const char* to_string(FaultKind kind);
const char* to_string(MemAttr attr);

struct TranslationFault {
  FaultKind kind = FaultKind::Unmapped;
  std::uint64_t ipa = 0;  // first faulting byte
};

struct Translation {
  std::uint64_t pa = 0;
  Perm perm;
  MemAttr attr = MemAttr::Normal;
};

struct RangeTranslation {
  std::uint64_t pa = 0;              // PA of the first byte
  std::uint64_t contiguous_len = 0;  // bytes from the first one that are contiguous in PA
  bool contiguous = false;           // contiguous_len covers the whole range
  MemAttr attr = MemAttr::Normal;    // attribute of the first byte
};

// One mapped run, as listed by regions().
struct Region {
  std::uint64_t ipa = 0;
  std::uint64_t pa = 0;
  std::uint64_t size = 0;
  Perm perm;
  MemAttr attr = MemAttr::Normal;
};

class Stage2Table {
 public:
  // `name` prefixes error messages (e.g. "vm1.stage2").
  explicit Stage2Table(std::string name = "stage2") : name_(std::move(name)) {}

  // Maps [ipa, ipa + size) to [pa, pa + size). All three page-aligned, size > 0.
  void map(std::uint64_t ipa, std::uint64_t pa, std::uint64_t size, Perm perm,
           MemAttr attr = MemAttr::Normal);
  // Removes every mapping inside [ipa, ipa + size) (page-aligned, size > 0), splitting regions
  // that straddle the ends. Holes are allowed; returns the number of bytes that were mapped.
  std::uint64_t unmap(std::uint64_t ipa, std::uint64_t size);
  // Changes the permissions of [ipa, ipa + size), which must be entirely mapped.
  void protect(std::uint64_t ipa, std::uint64_t size, Perm perm);
  void clear();

  // Translates one byte address for a read (write = false) or write.
  std::optional<Translation> translate(std::uint64_t ipa, bool write,
                                       TranslationFault* fault = nullptr) const;
  // Checks every page of [ipa, ipa + len) (len 0 counts as 1) for the access; on success returns
  // the PA of the first byte and how far the range stays contiguous in PA. A caller issuing a
  // burst splits it at contiguous_len (always a page boundary) when !contiguous.
  std::optional<RangeTranslation> translate_range(std::uint64_t ipa, std::uint64_t len, bool write,
                                                  TranslationFault* fault = nullptr) const;

  // The region containing `ipa`, if any.
  std::optional<Region> region_at(std::uint64_t ipa) const;
  std::vector<Region> regions() const;  // sorted by IPA
  std::size_t region_count() const { return regions_.size(); }
  std::uint64_t mapped_bytes() const { return mapped_bytes_; }
  bool empty() const { return regions_.empty(); }
  const std::string& name() const { return name_; }
  // Incremented by every change; TLBs caching this table compare it to drop stale entries.
  std::uint64_t generation() const { return generation_; }

 private:
  struct Entry {
    std::uint64_t size;
    std::uint64_t pa;
    Perm perm;
    MemAttr attr;
  };
  using Map = std::map<std::uint64_t, Entry>;  // key: first IPA of the region

  void check_range(const char* op, std::uint64_t ipa, std::uint64_t size) const;
  // Region containing `ipa`, or end().
  Map::const_iterator find(std::uint64_t ipa) const;
  // Makes `ipa` the start of a region if a region covers it.
  void split_at(std::uint64_t ipa);
  // Merges the region at `it` with its neighbours where they line up.
  void merge_around(Map::iterator it);

  std::string name_;
  Map regions_;
  std::uint64_t mapped_bytes_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace vtoe::smmu
