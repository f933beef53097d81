// The MMU of one core (ARM ARM B3): the table walker and the software TLB.
//
// Stage 1 of the PL1&0 regime in the short-descriptor format (sections, supersections, large and
// small pages, domains, AP/APX with and without the access flag, XN/PXN, WXN/UWXN) and the
// long-descriptor format (TTBCR.EAE: T0SZ/T1SZ, up to 3 levels, hierarchical APTable/XNTable/
// PXNTable), Hyp mode's stage 1 (HTTBR/HTCR, long format) and stage 2 (VTTBR/VTCR, IPA up to 40
// bits, S2AP, XN) when HCR.VM is set. Both stage-1 walks end in one tail: stage 2 of the output
// address, then the physical limit. Memory attributes (TEX, C, B, MAIR, SH) do not matter to a
// model without caches and are not interpreted.
//
// A direct-mapped software TLB per regime (PL1&0, Hyp) caches virtual page -> physical page with
// the permissions of both stages combined; a miss, or a hit without the permission, walks the
// tables again, so that a fault is always reported by the stage and level that found it. Each
// entry has a fast mirror per privilege (FastTlbEntry) that the core's loads and stores look at
// inline. Physical addresses above 4 GiB are external aborts (QEMU's virt with highmem=off).
//
// The MMU reads the translation registers from the core's ArmState and never writes it: a fault
// is thrown as MmuAbort and the core's exception entry reports it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "models/cpu/iss/arm_state.h"
#include "models/cpu/iss/cache.h"
#include "models/cpu/iss/paged_memory.h"

namespace vtoe::cpu::iss {

// A translation fault, access-flag, domain or permission fault, or an external abort on a
// table walk, found by the MMU (system mode): taken as a data or prefetch abort to PL1 (stage 1)
// or to Hyp mode (stage 2, or Hyp's own stage 1).
struct MmuFault {
  enum Kind : uint8_t { Translation, AccessFlag, Domain, Permission, External, WalkExternal };
  Kind kind = Translation;
  uint8_t level = 1;    // 1-3 (short format: 1 section, 2 page)
  uint8_t domain = 0;   // short format
  bool stage2 = false;  // found by stage 2 (IPA -> PA)
  bool s1ptw = false;   // stage 2 fault on a stage-1 table walk
  bool long_format = false;
  uint64_t ipa = 0;  // stage 2 faults: the IPA
};
class MmuAbort : public std::runtime_error {
 public:
  MmuAbort(uint32_t va, bool write, bool fetch, const MmuFault& f);
  uint32_t va;
  bool write, fetch;
  MmuFault fault;
};

class Mmu {
 public:
  static constexpr uint32_t kTlbSize = 1024;
  // Access kinds (and permission bits: PL1's in bits 0-2, PL0's in 3-5).
  static constexpr uint8_t kPermR = 1, kPermW = 2, kPermX = 4;
  // Translation regimes, also the code cache's context tag.
  static constexpr uint32_t kRegimePl1 = 0, kRegimePl0 = 1, kRegimeHyp = 2;

  // What the loads and stores look at first, one per TLB entry and privilege: the virtual page
  // when a read (a write) at that privilege is served from `host`, the page's host memory (a
  // RAM page the privilege may read; a write also needs it not to hold decoded code), else ~0u.
  // One compare instead of the page, the permissions and the host pointer; 16 bytes.
  struct FastTlbEntry {
    uint32_t read_va = ~0u;
    uint32_t write_va = ~0u;
    uint8_t* host = nullptr;
  };

  Mmu(PagedMemory& mem, const ArmState& state);
  Mmu(const Mmu&) = delete;
  Mmu& operator=(const Mmu&) = delete;

  // Whether the current regime translates (SCTLR.M, HSCTLR.M in Hyp mode, HCR.VM).
  bool on() const { return on_; }
  // The current privilege's fast entry for a virtual page.
  const FastTlbEntry& fast(uint32_t page) const { return cur_fast_[page % kTlbSize]; }
  // Looks at the state again after a change of mode or of a translation register; returns the
  // current regime.
  uint32_t update();

  // VA -> PA for an access of `need` (kPermR/W/X) at the current privilege (with `pl0`, PL0's:
  // LDRT and the other unprivileged forms from PL1); throws MmuAbort.
  uint32_t translate(uint32_t va, uint8_t need, bool pl0 = false);
  // Loads and stores by virtual address that the fast entries did not serve; throw MmuAbort.
  template <typename T>
  T read(uint32_t va, bool pl0 = false);
  template <typename T>
  void write(uint32_t va, T v, bool pl0 = false);
  // The ATS* operations: kind 0-3 ATS1C{P,U}{R,W}, 4-7 ATS12NSO{P,U}{R,W}, 8-9 ATS1H{R,W};
  // returns PAR.
  uint64_t address_translate(uint32_t va, int kind);
  // The debugger's translation with the current regime: no fault, no TLB fill.
  bool debug_translate(uint32_t va, uint32_t& pa);

  // TLB maintenance: everything, or one page and every block entry (the architecture allows
  // more than asked).
  void flush();
  void flush_va(uint32_t va);
  // The fast entries when host memory goes away, or a physical page starts holding code.
  void forget_host();
  void protect_code(uint32_t pa_page);

  // DFSR/IFSR (short or long format) and HSR's DFSC/IFSC for a fault.
  static uint32_t fault_status(const MmuFault& f, bool write);

  uint64_t misses() const { return misses_; }
  uint64_t flushes() const { return flushes_; }
  // The data cache the loads and stores here look up (the core's fast paths look up the rest):
  // null while data caching is off (ArmCore::update_cache_hooks).
  void set_data_cache(L1Caches* c) { dcache_ = c; }

 private:
  // A software TLB entry: virtual page -> physical page, with the combined stage 1 and stage 2
  // permissions (bits 0-2 PL1 read/write/execute, 3-5 PL0, as kPermR << shift); `block` says the
  // stage-1 mapping is larger than a page (TLBIMVA drops it whatever the page).
  struct TlbEntry {
    uint32_t va_page = ~0u;
    uint32_t pa_page = 0;
    uint8_t perms = 0;
    bool block = false;
    uint8_t block_bits = 12;  // log2 of the stage-1 mapping's size (12: a page)
  };
  // The result of a walk: the output address and the permissions of each stage.
  struct Walk {
    uint64_t pa = 0;
    uint8_t s1perms = 0x3f, s2perms = 0x3f;
    bool s1_domain_no_access = false;  // short format: a domain with no access
    MmuFault fault;
    bool ok = false;
    uint8_t level = 1;
    uint8_t domain = 0;
    bool block = false;       // stage 1 mapped a section, supersection, large page or LPAE block
    uint8_t block_bits = 12;  // log2 of that mapping's size
    // Long format, stage 1: the MAIR attribute byte and SH of the mapping (for PAR only).
    uint8_t attr = 0, sh = 0;
  };
  // The full walk for a regime; never throws.
  Walk walk(uint32_t va, bool hyp_regime, bool stage2_on);
  Walk walk_short(uint32_t va, bool stage2_on);
  Walk walk_long(uint32_t va, bool hyp_regime, bool stage2_on);
  // The tail every walk ends with: stage 2 of stage 1's output `pa` (when on), then the
  // physical limit. Fills w.pa and w.ok, or w.fault.
  void finish(Walk& w, uint64_t pa, bool stage2_on, bool long_format);
  bool stage2(uint64_t ipa, Walk& w, bool s1ptw);
  bool read_desc(uint64_t addr, bool is64, uint64_t& v, Walk& w, bool stage2_on);
  bool stage2_enabled() const;
  bool long_format_stage1() const { return (st_.cp15.ttbcr >> 31) & 1; }
  void fast_invalidate(size_t i) {
    if (i < kTlbSize) {
      fast_storage_[i] = FastTlbEntry{};
      fast_storage_[kTlbSize + i] = FastTlbEntry{};
    } else {
      fast_storage_[kTlbSize + i] = FastTlbEntry{};
    }
  }

  PagedMemory& mem_;
  const ArmState& st_;
  bool on_ = false;
  FastTlbEntry* cur_fast_ = nullptr;  // the current privilege's
  // The PL1&0 regime's TLB, then Hyp's (on the heap: the core's hot fields stay together).
  std::vector<TlbEntry> tlb_storage_ = std::vector<TlbEntry>(2 * kTlbSize);
  TlbEntry* const tlb_ = tlb_storage_.data();
  TlbEntry* const tlb_hyp_ = tlb_ + kTlbSize;
  // The fast entries of tlb_ at PL1 and at PL0, then of tlb_hyp_ (index i mirrors tlb_[i]).
  std::vector<FastTlbEntry> fast_storage_ = std::vector<FastTlbEntry>(3 * kTlbSize);
  // The valid entries' indices (each once: `listed_`), so that a flush (Linux asks for tens per
  // system call: TLBIASID, TLBIMVAA over a range) visits those, not all 2048.
  std::vector<uint32_t> filled_;
  std::vector<uint8_t> listed_ = std::vector<uint8_t>(2 * kTlbSize);
  uint64_t misses_ = 0, flushes_ = 0;
  L1Caches* dcache_ = nullptr;
};

}  // namespace vtoe::cpu::iss
