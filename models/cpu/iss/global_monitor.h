// The global exclusive monitor of a cluster of cores (ARM ARM A3.4): what each core's LDREX
// reserved, checked by every core's STREX. Plain C++, no SystemC.
//
// The cores run in turn (one quantum each), so a reservation can only be broken by another
// core between two of its core's quanta. Model choice, as QEMU 7.2's TCG: a STREX succeeds when
// its core still holds a reservation of that address and the memory still holds the bytes its
// LDREX read (a plain store of another core that changed them breaks it; one that wrote the same
// bytes does not, as on QEMU); a successful STREX clears every core's reservation in its granule,
// so that two cores cannot both succeed from one value. Addresses are host addresses of the
// shared RAM (DMI), so every core names a physical location alike whatever its mapping.
#pragma once

#include <array>
#include <cstdint>

namespace vtoe::cpu::iss {

class GlobalMonitor {
 public:
  static constexpr int kMaxCores = 8;
  // The exclusive reservation granule (Cortex-A15's CTR.ERG: 16 words).
  static constexpr std::uintptr_t kGranule = 64;

  explicit GlobalMonitor(int cores);

  int cores() const { return cores_; }
  // LDREX of `len` bytes (1, 2, 4 or 8) at `host` by `core`: reserves it, with the bytes now there.
  void reserve(int core, const std::uint8_t* host, unsigned len);
  // STREX of `len` bytes at `host` by `core`, before its store: whether it may store. Either way
  // the core's reservation is gone; on success so are the other cores' in the same granule.
  bool claim(int core, const std::uint8_t* host, unsigned len);
  // CLREX (and a STREX to an address the core's local monitor does not hold).
  void clear(int core) { at(core).valid = false; }
  bool holds(int core) const { return slots_[static_cast<std::size_t>(core)].valid; }

  std::uint64_t claims() const { return claims_; }      // STREX that succeeded
  std::uint64_t failures() const { return failures_; }  // STREX that failed here

 private:
  struct Slot {
    bool valid = false;
    const std::uint8_t* host = nullptr;
    unsigned len = 0;
    std::uint64_t value = 0;  // the bytes LDREX read
  };
  Slot& at(int core);
  static std::uintptr_t granule(const std::uint8_t* p) {
    return reinterpret_cast<std::uintptr_t>(p) & ~(kGranule - 1);
  }

  int cores_;
  std::array<Slot, kMaxCores> slots_{};
  std::uint64_t claims_ = 0, failures_ = 0;
};

}  // namespace vtoe::cpu::iss
