// The MMU of one core: the table walker and the software TLB (mmu.h).
#include "models/cpu/iss/mmu.h"

#include <algorithm>
#include <cstdio>

namespace vtoe::cpu::iss {

namespace {

std::string mmu_text(uint32_t va, bool write, bool fetch, const MmuFault& f) {
  static const char* const kKinds[] = {"translation",    "access flag",
                                       "domain",         "permission",
                                       "external abort", "external abort on table walk"};
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s%s fault (level %u) on %s of 0x%08x",
                f.stage2 ? "stage 2 " : "", kKinds[f.kind], f.level,
                fetch   ? "fetch"
                : write ? "write"
                        : "read",
                va);
  return buf;
}

constexpr uint64_t kPaLimit = uint64_t{1} << 32;  // highmem=off: nothing above 4 GiB
constexpr uint8_t kHyp = static_cast<uint8_t>(Mode::Hyp);
constexpr uint8_t kUsr = static_cast<uint8_t>(Mode::Usr);
constexpr uint32_t kHcrVm = 1u << 0;

}  // namespace

MmuAbort::MmuAbort(uint32_t v, bool w, bool fe, const MmuFault& f)
    : std::runtime_error(mmu_text(v, w, fe, f)), va(v), write(w), fetch(fe), fault(f) {}

Mmu::Mmu(PagedMemory& mem, const ArmState& state) : mem_(mem), st_(state) {
  cur_fast_ = fast_storage_.data();
}

uint32_t Mmu::update() {
  const bool hyp = st_.mode == kHyp;
  on_ =
      st_.system && (hyp ? (st_.cp15.hsctlr & 1) != 0 : ((st_.cp15.sctlr & 1) || stage2_enabled()));
  const uint32_t regime = hyp ? kRegimeHyp : st_.mode == kUsr ? kRegimePl0 : kRegimePl1;
  cur_fast_ = fast_storage_.data() + regime * kTlbSize;  // PL1, PL0, Hyp
  return regime;
}

bool Mmu::stage2_enabled() const { return st_.has_hyp && (st_.cp15.hcr & kHcrVm); }

void Mmu::flush() {
  // A fast entry is filled only with its TLB entry (translate), so these are all there are.
  for (uint32_t i : filled_) {
    tlb_storage_[i].va_page = ~0u;
    fast_invalidate(i);
    listed_[i] = 0;
  }
  filled_.clear();
  ++flushes_;
}

void Mmu::flush_va(uint32_t va) {
  // The page's entry, and every entry that came from a block covering `va` (a section fills one
  // entry per 4 KiB page it is used at). No ASIDs are kept, so every ASID's entry goes.
  const uint32_t page = va >> PagedMemory::kPageBits;
  size_t kept = 0;
  for (uint32_t i : filled_) {  // every valid entry is among them
    TlbEntry& e = tlb_storage_[i];
    // The page, or a block that covers it (its entries are one per 4 KiB page used).
    const unsigned k = e.block_bits - PagedMemory::kPageBits;
    if ((e.va_page >> k) == (page >> k)) {
      e.va_page = ~0u;
      fast_invalidate(i);
      listed_[i] = 0;
    } else {
      filled_[kept++] = i;
    }
  }
  filled_.resize(kept);
  ++flushes_;
}

void Mmu::forget_host() { std::fill(fast_storage_.begin(), fast_storage_.end(), FastTlbEntry{}); }

void Mmu::protect_code(uint32_t pa_page) {
  for (size_t i = 0; i < tlb_storage_.size(); ++i) {
    if (tlb_storage_[i].pa_page != pa_page) continue;
    if (i < kTlbSize) {
      fast_storage_[i].write_va = ~0u;
      fast_storage_[kTlbSize + i].write_va = ~0u;
    } else {
      fast_storage_[kTlbSize + i].write_va = ~0u;
    }
  }
}

bool Mmu::read_desc(uint64_t addr, bool is64, uint64_t& v, Walk& w, bool stage2_on) {
  uint64_t pa = addr;
  if (stage2_on) {  // stage-1 tables are at IPAs
    Walk s2;
    if (!stage2(addr, s2, true) || !(s2.s2perms & kPermR)) {
      w.fault = s2.ok ? s2.fault : s2.fault;
      if (s2.ok) {  // no read permission at stage 2
        w.fault.kind = MmuFault::Permission;
        w.fault.level = s2.level;
      }
      w.fault.stage2 = true;
      w.fault.s1ptw = true;
      w.fault.long_format = true;
      w.fault.ipa = addr;
      return false;
    }
    pa = s2.pa;
  }
  if (pa + (is64 ? 8 : 4) > kPaLimit) {
    w.fault.kind = MmuFault::WalkExternal;
    return false;
  }
  try {
    v = is64 ? mem_.read64(static_cast<uint32_t>(pa)) : mem_.read32(static_cast<uint32_t>(pa));
  } catch (const GuestFault&) {
    w.fault.kind = MmuFault::WalkExternal;
    return false;
  }
  return true;
}

// Stage 2 (B3.6.1, long format): VTCR.T0SZ (4-bit signed) and SL0 give the IPA size and the
// starting level.
bool Mmu::stage2(uint64_t ipa, Walk& w, bool s1ptw) {
  w.fault = MmuFault{};
  w.fault.stage2 = true;
  w.fault.long_format = true;
  w.fault.s1ptw = s1ptw;
  w.fault.ipa = ipa;
  const uint32_t vtcr = st_.cp15.vtcr;
  int t0sz = static_cast<int>(vtcr & 0xf);
  if (t0sz & 8) t0sz -= 16;
  const int ipa_bits = 32 - t0sz;
  const int start = (vtcr >> 6) & 1 ? 1 : 2;  // SL0: 0 level 2, 1 level 1
  if (ipa >> ipa_bits) {
    w.fault.level = static_cast<uint8_t>(start);
    return false;
  }
  // The top level resolves bits [ipa_bits-1 : 30] (level 1) or [ipa_bits-1 : 21] (level 2).
  uint64_t table = st_.cp15.vttbr & 0x000000fffffffff0ull;  // the first table may be < 4 KiB
  for (int level = start; level <= 3; ++level) {
    const int shift = 39 - 9 * level;  // 30, 21, 12
    uint64_t index =
        (ipa >> shift) & (level == start ? (uint64_t{1} << (ipa_bits - shift)) - 1 : 0x1ff);
    uint64_t d;
    const uint64_t da = (level == start ? table : table & ~0xfffull) + index * 8;
    if (da + 8 > kPaLimit) {
      w.fault.kind = MmuFault::WalkExternal;
      w.fault.level = static_cast<uint8_t>(level);
      return false;
    }
    try {
      d = mem_.read64(static_cast<uint32_t>(da));
    } catch (const GuestFault&) {
      w.fault.kind = MmuFault::WalkExternal;
      w.fault.level = static_cast<uint8_t>(level);
      return false;
    }
    w.level = static_cast<uint8_t>(level);
    w.fault.level = static_cast<uint8_t>(level);
    if (!(d & 1) || (level == 3 && !(d & 2))) return false;  // invalid: translation fault
    if (level < 3 && (d & 2)) {                              // a table
      table = d & 0x000000fffffff000ull;
      continue;
    }
    if (!(d & (1u << 10))) {  // AF
      w.fault.kind = MmuFault::AccessFlag;
      return false;
    }
    const uint64_t mask = (uint64_t{1} << shift) - 1;
    w.pa = (d & 0x000000fffffff000ull & ~mask) | (ipa & mask);
    const uint32_t s2ap = (d >> 6) & 3;  // bit 0 read, bit 1 write
    uint8_t p = 0;
    if (s2ap & 1) p |= kPermR;
    if (s2ap & 2) p |= kPermW;
    if (!((d >> 54) & 1) && (s2ap & 1)) p |= kPermX;
    w.s2perms = static_cast<uint8_t>(p | (p << 3));
    w.ok = true;
    return true;
  }
  return false;
}

Mmu::Walk Mmu::walk_short(uint32_t va, bool stage2_on) {
  Walk w;
  w.fault.long_format = false;
  const uint32_t ttbcr = st_.cp15.ttbcr;
  const uint32_t n = ttbcr & 7;
  uint32_t ttbr;
  uint32_t index;
  if (n == 0 || (va >> (32 - n)) == 0) {
    if (ttbcr & (1u << 4)) return w;  // PD0: translation fault, level 1
    ttbr = static_cast<uint32_t>(st_.cp15.ttbr0) & ~((1u << (14 - n)) - 1);
    index = (va << n) >> (n + 20);
  } else {
    if (ttbcr & (1u << 5)) return w;  // PD1
    ttbr = static_cast<uint32_t>(st_.cp15.ttbr1) & ~0x3fffu;
    index = va >> 20;
  }
  uint64_t d1;
  if (!read_desc(ttbr + index * 4, false, d1, w, stage2_on)) return w;
  const uint32_t l1 = static_cast<uint32_t>(d1);
  uint32_t ap, xn, pxn = 0, domain;
  uint64_t pa;
  if ((l1 & 3) == 0) return w;  // translation fault, section
  if ((l1 & 3) == 1) {          // a second-level table
    domain = (l1 >> 5) & 15;
    pxn = (l1 >> 2) & 1;
    w.domain = static_cast<uint8_t>(domain);
    w.fault.domain = w.domain;
    uint64_t d2;
    w.level = 2;
    w.fault.level = 2;
    if (!read_desc((l1 & ~0x3ffu) + ((va >> 12) & 0xff) * 4, false, d2, w, stage2_on)) return w;
    const uint32_t l2 = static_cast<uint32_t>(d2);
    if ((l2 & 3) == 0) return w;  // translation fault, page
    if ((l2 & 3) == 1) {          // large page, 64 KiB
      w.block = true;
      w.block_bits = 16;
      pa = (l2 & 0xffff0000u) | (va & 0xffffu);
      xn = (l2 >> 15) & 1;
    } else {  // small page, 4 KiB
      pa = (l2 & 0xfffff000u) | (va & 0xfffu);
      xn = l2 & 1;
    }
    ap = ((l2 >> 4) & 3) | (((l2 >> 9) & 1) << 2);
  } else {
    w.block = true;  // section or supersection
    w.block_bits = (l1 & (1u << 18)) ? 24 : 20;
    pxn = l1 & 1;
    xn = (l1 >> 4) & 1;
    ap = ((l1 >> 10) & 3) | (((l1 >> 15) & 1) << 2);
    if (l1 & (1u << 18)) {  // supersection, 16 MiB, domain 0
      domain = 0;
      pa = (uint64_t{l1 & 0xff000000u}) | (uint64_t{(l1 >> 20) & 15} << 32) |
           (uint64_t{(l1 >> 5) & 15} << 36) | (va & 0x00ffffffu);
    } else {
      domain = (l1 >> 5) & 15;
      pa = (l1 & 0xfff00000u) | (va & 0x000fffffu);
    }
    w.domain = static_cast<uint8_t>(domain);
    w.fault.domain = w.domain;
  }
  // The domain: no access (and the reserved value) faults any access; manager skips the
  // permission checks (XN too, as QEMU); client checks them.
  const uint32_t dom = (st_.cp15.dacr >> (2 * domain)) & 3;
  uint8_t perms;
  if (dom == 0 || dom == 2) {
    w.s1_domain_no_access = true;
    perms = 0;
  } else if (dom == 3) {
    perms = 0x3f;
  } else {
    uint8_t pl1 = 0, pl0 = 0;
    const bool afe = st_.cp15.sctlr & (1u << 29);
    if (afe) {  // the simplified model: AP[0] is the access flag
      if (!(ap & 1)) {
        w.fault.kind = MmuFault::AccessFlag;
        return w;
      }
      switch (ap >> 1) {
        case 0:
          pl1 = kPermR | kPermW;
          break;
        case 1:
          pl1 = pl0 = kPermR | kPermW;
          break;
        case 2:
          pl1 = kPermR;
          break;
        default:
          pl1 = pl0 = kPermR;
          break;
      }
    } else {
      switch (ap) {
        case 1:
          pl1 = kPermR | kPermW;
          break;
        case 2:
          pl1 = kPermR | kPermW;
          pl0 = kPermR;
          break;
        case 3:
          pl1 = pl0 = kPermR | kPermW;
          break;
        case 5:
          pl1 = kPermR;
          break;
        case 6:
        case 7:
          pl1 = pl0 = kPermR;
          break;
        default:
          break;  // no access (0, and the reserved 4)
      }
    }
    const bool wxn = st_.cp15.sctlr & (1u << 19), uwxn = st_.cp15.sctlr & (1u << 20);
    if (pl1 && !xn && !pxn && !(wxn && (pl1 & kPermW)) && !(uwxn && (pl0 & kPermW))) {
      pl1 |= kPermX;
    }
    if (pl0 && !xn && !(wxn && (pl0 & kPermW))) pl0 |= kPermX;
    perms = static_cast<uint8_t>(pl1 | (pl0 << 3));
  }
  w.s1perms = perms;
  finish(w, pa, stage2_on, false);
  return w;
}

Mmu::Walk Mmu::walk_long(uint32_t va, bool hyp_regime, bool stage2_on) {
  Walk w;
  w.fault.long_format = true;
  uint64_t ttbr;
  int tsz;
  if (hyp_regime) {
    tsz = static_cast<int>(st_.cp15.htcr & 7);
    if (tsz && (va >> (32 - tsz))) return w;
    ttbr = st_.cp15.httbr;
  } else {
    const uint32_t ttbcr = st_.cp15.ttbcr;
    const int t0sz = static_cast<int>(ttbcr & 7), t1sz = static_cast<int>((ttbcr >> 16) & 7);
    const bool in0 = t0sz == 0 ? (t1sz == 0 || (va >> (32 - t1sz)) != (0xffffffffu >> (32 - t1sz)))
                               : (va >> (32 - t0sz)) == 0;
    const bool in1 = !in0 && (t1sz == 0 || (va >> (32 - t1sz)) == (0xffffffffu >> (32 - t1sz)));
    if (in0) {
      if (ttbcr & (1u << 7)) return w;  // EPD0
      ttbr = st_.cp15.ttbr0;
      tsz = t0sz;
    } else if (in1) {
      if (ttbcr & (1u << 23)) return w;  // EPD1
      ttbr = st_.cp15.ttbr1;
      tsz = t1sz;
    } else {
      return w;  // in neither region: translation fault, level 1
    }
  }
  const int start = tsz <= 1 ? 1 : 2;
  const int region_bits = 32 - tsz;
  uint64_t table = ttbr & 0x000000fffffffff8ull;
  bool ap_no_pl0 = false, ap_ro = false, xn_table = false, pxn_table = false;
  for (int level = start; level <= 3; ++level) {
    const int shift = 39 - 9 * level;
    const uint64_t index =
        (va >> shift) & (level == start ? (uint64_t{1} << (region_bits - shift)) - 1 : 0x1ffu);
    w.level = static_cast<uint8_t>(level);
    w.fault.level = static_cast<uint8_t>(level);
    uint64_t d;
    const uint64_t base = level == start ? table & ~uint64_t{7} : table & ~0xfffull;
    if (!read_desc(base + index * 8, true, d, w, stage2_on && !hyp_regime)) return w;
    if (!(d & 1) || (level == 3 && !(d & 2))) return w;  // translation fault
    if (level < 3 && (d & 2)) {
      table = d & 0x000000fffffff000ull;
      if (!hyp_regime) {
        pxn_table |= (d >> 59) & 1;
        ap_no_pl0 |= (d >> 61) & 1;
      }
      xn_table |= (d >> 60) & 1;
      ap_ro |= (d >> 62) & 1;
      continue;
    }
    if (!(d & (1u << 10))) {
      w.fault.kind = MmuFault::AccessFlag;
      return w;
    }
    const uint64_t mask = (uint64_t{1} << shift) - 1;
    w.block = level < 3;
    w.block_bits = static_cast<uint8_t>(shift);
    const uint32_t attr_index = (d >> 2) & 7;
    const uint32_t mair = hyp_regime ? (attr_index < 4 ? st_.cp15.hmair0 : st_.cp15.hmair1)
                                     : (attr_index < 4 ? st_.cp15.prrr : st_.cp15.nmrr);
    w.attr = static_cast<uint8_t>(mair >> (8 * (attr_index & 3)));
    w.sh = static_cast<uint8_t>((d >> 8) & 3);
    uint64_t pa = (d & 0x000000fffffff000ull & ~mask) | (va & mask);
    const uint32_t ap = (d >> 6) & 3;  // AP[2:1]
    const bool xn = ((d >> 54) & 1) || xn_table;
    const bool pxn = ((d >> 53) & 1) || pxn_table;
    uint8_t pl1 = kPermR, pl0 = 0;
    if (hyp_regime) {
      if (!(ap & 2) && !ap_ro) pl1 |= kPermW;  // AP[2]: read-only; AP[1] ignored
      if (!xn && !((st_.cp15.hsctlr & (1u << 19)) && (pl1 & kPermW))) pl1 |= kPermX;
      pl0 = pl1;  // Hyp has no PL0: the core only asks with the PL1 bits in Hyp mode
    } else {
      const bool ro = (ap & 2) || ap_ro;
      if (!ro) pl1 |= kPermW;
      if ((ap & 1) && !ap_no_pl0) pl0 = ro ? kPermR : kPermR | kPermW;
      const bool wxn = st_.cp15.sctlr & (1u << 19), uwxn = st_.cp15.sctlr & (1u << 20);
      if (!xn && !pxn && !(wxn && (pl1 & kPermW)) && !(uwxn && (pl0 & kPermW))) pl1 |= kPermX;
      if (pl0 && !xn && !(wxn && (pl0 & kPermW))) pl0 |= kPermX;
    }
    w.s1perms = static_cast<uint8_t>(pl1 | (pl0 << 3));
    finish(w, pa, stage2_on && !hyp_regime, true);
    return w;
  }
  return w;
}

void Mmu::finish(Walk& w, uint64_t pa, bool stage2_on, bool long_format) {
  if (stage2_on) {
    Walk s2;
    if (!stage2(pa, s2, false)) {
      w.fault = s2.fault;
      return;
    }
    w.s2perms = s2.s2perms;
    pa = s2.pa;
  }
  if (pa >= kPaLimit) {
    w.fault = MmuFault{};
    w.fault.kind = MmuFault::External;
    w.fault.long_format = long_format;
    return;
  }
  w.pa = pa;
  w.ok = true;
}

Mmu::Walk Mmu::walk(uint32_t va, bool hyp_regime, bool stage2_on) {
  if (hyp_regime) {
    if (!(st_.cp15.hsctlr & 1)) {
      Walk w;
      w.pa = va;
      w.ok = true;
      return w;
    }
    return walk_long(va, true, false);
  }
  if (!(st_.cp15.sctlr & 1)) {  // stage 1 off: VA = IPA
    Walk w;
    w.fault.long_format = long_format_stage1();
    finish(w, va, stage2_on, w.fault.long_format);
    return w;
  }
  return (st_.cp15.ttbcr >> 31) ? walk_long(va, false, stage2_on) : walk_short(va, stage2_on);
}

uint32_t Mmu::translate(uint32_t va, uint8_t need, bool pl0) {
  const bool hyp = st_.mode == kHyp;
  const bool user = pl0 || st_.mode == kUsr;
  const uint8_t bits = static_cast<uint8_t>(user ? need << 3 : need);
  TlbEntry* tlb = hyp ? tlb_hyp_ : tlb_;
  const uint32_t page = va >> PagedMemory::kPageBits;
  TlbEntry& e = tlb[page % kTlbSize];
  if (e.va_page == page && (e.perms & bits) == bits) {
    return (e.pa_page << PagedMemory::kPageBits) | (va & (PagedMemory::kPageSize - 1));
  }
  ++misses_;
  const bool s2 = !hyp && stage2_enabled();
  Walk w = walk(va, hyp, s2);
  const bool write = need & kPermW, fetch = need & kPermX;
  if (!w.ok) throw MmuAbort(va, write, fetch, w.fault);
  // Stage 1 permissions first (a fault to PL1, or to Hyp mode for Hyp's own regime), then
  // stage 2's (to Hyp mode).
  if ((w.s1perms & bits) != bits) {
    MmuFault f;
    f.kind = w.s1_domain_no_access ? MmuFault::Domain : MmuFault::Permission;
    f.level = w.level;
    f.domain = w.domain;
    f.long_format = hyp || ((st_.cp15.ttbcr >> 31) & 1);
    throw MmuAbort(va, write, fetch, f);
  }
  if ((w.s2perms & bits) != bits) {
    Walk s2;
    uint64_t ipa = (st_.cp15.sctlr & 1) ? 0 : va;
    // The IPA of the access: stage 1's output, found again without stage 2.
    if (st_.cp15.sctlr & 1) {
      Walk s1 = (st_.cp15.ttbcr >> 31) ? walk_long(va, false, false) : walk_short(va, false);
      ipa = s1.pa;
    }
    MmuFault f;
    f.kind = MmuFault::Permission;
    f.stage2 = true;
    f.long_format = true;
    f.ipa = ipa;
    stage2(ipa, s2, false);
    f.level = s2.level;
    throw MmuAbort(va, write, fetch, f);
  }
  if (const size_t i = static_cast<size_t>(&e - tlb_storage_.data()); !listed_[i]) {
    listed_[i] = 1;
    filled_.push_back(static_cast<uint32_t>(i));
  }
  e.va_page = page;
  e.pa_page = static_cast<uint32_t>(w.pa >> PagedMemory::kPageBits);
  e.perms = static_cast<uint8_t>(w.s1perms & w.s2perms);
  e.block = w.block;
  e.block_bits = w.block ? w.block_bits : 12;
  // Its fast entries: Hyp's regime has one (PL2 uses the PL1 bits), PL1&0's one per privilege.
  uint8_t* const host = mem_.host_page(e.pa_page);
  const bool writable = host && !mem_.is_code(e.pa_page);
  const size_t i = static_cast<size_t>(&e - tlb_storage_.data());
  const auto fill = [&](FastTlbEntry& f, uint8_t p) {
    f.read_va = host && (p & kPermR) ? page : ~0u;
    f.write_va = writable && (p & kPermW) ? page : ~0u;
    f.host = host;
  };
  if (hyp) {
    fill(fast_storage_[kTlbSize + i], e.perms);
  } else {
    fill(fast_storage_[i], e.perms);
    fill(fast_storage_[kTlbSize + i], static_cast<uint8_t>(e.perms >> 3));
  }
  return static_cast<uint32_t>(w.pa);
}

template <typename T>
T Mmu::read(uint32_t a, bool pl0) {
  const uint32_t off = a & (PagedMemory::kPageSize - 1);
  if (off > PagedMemory::kPageSize - sizeof(T)) {  // across two pages: byte by byte
    T v = 0;
    for (uint32_t i = 0; i < sizeof(T); ++i) {
      v = static_cast<T>(v | (T{read<uint8_t>(a + i, pl0)} << (8 * i)));
    }
    return v;
  }
  const uint32_t pa = translate(a, kPermR, pl0);
  if (dcache_ && mem_.host_page(pa >> PagedMemory::kPageBits))
    dcache_->data_pa(pa, sizeof(T), false);
  try {
    if constexpr (sizeof(T) == 1)
      return mem_.read8(pa);
    else if constexpr (sizeof(T) == 2)
      return mem_.read16(pa);
    else
      return mem_.read32(pa);
  } catch (const GuestFault&) {
    MmuFault f;
    f.kind = MmuFault::External;
    f.long_format = st_.mode == kHyp || long_format_stage1();
    throw MmuAbort(a, false, false, f);
  }
}

template <typename T>
void Mmu::write(uint32_t a, T v, bool pl0) {
  const uint32_t off = a & (PagedMemory::kPageSize - 1);
  if (off > PagedMemory::kPageSize - sizeof(T)) {
    // Both pages are checked before either is written, as an access is all or nothing.
    // A fault on the second page is reported at its first byte, as QEMU 7.2 does.
    translate(a, kPermW, pl0);
    translate((a + sizeof(T) - 1) & ~(PagedMemory::kPageSize - 1), kPermW, pl0);
    for (uint32_t i = 0; i < sizeof(T); ++i) {
      write<uint8_t>(a + i, static_cast<uint8_t>(v >> (8 * i)), pl0);
    }
    return;
  }
  const uint32_t pa = translate(a, kPermW, pl0);
  if (dcache_ && mem_.host_page(pa >> PagedMemory::kPageBits))
    dcache_->data_pa(pa, sizeof(T), true);
  try {
    if constexpr (sizeof(T) == 1)
      mem_.write8(pa, v);
    else if constexpr (sizeof(T) == 2)
      mem_.write16(pa, v);
    else
      mem_.write32(pa, v);
  } catch (const GuestFault&) {
    MmuFault f;
    f.kind = MmuFault::External;
    f.long_format = st_.mode == kHyp || long_format_stage1();
    throw MmuAbort(a, true, false, f);
  }
}

template uint8_t Mmu::read<uint8_t>(uint32_t, bool);
template uint16_t Mmu::read<uint16_t>(uint32_t, bool);
template uint32_t Mmu::read<uint32_t>(uint32_t, bool);
template void Mmu::write<uint8_t>(uint32_t, uint8_t, bool);
template void Mmu::write<uint16_t>(uint32_t, uint16_t, bool);
template void Mmu::write<uint32_t>(uint32_t, uint32_t, bool);

// DFSR/IFSR (short format: FS[4] at bit 10, domain 7:4; long format: LPAE bit 9, STATUS 5:0),
// also the DFSC/IFSC of HSR (long format, bits 5:0).
uint32_t Mmu::fault_status(const MmuFault& f, bool write) {
  uint32_t v;
  if (f.long_format) {
    const uint32_t lvl = f.level & 3;
    switch (f.kind) {
      case MmuFault::Translation:
        v = 0x04 | lvl;
        break;
      case MmuFault::AccessFlag:
        v = 0x08 | lvl;
        break;
      case MmuFault::Permission:
        v = 0x0c | lvl;
        break;
      case MmuFault::Domain:
        v = 0x3c | lvl;
        break;  // the long format has no domains
      case MmuFault::WalkExternal:
        v = 0x14 | lvl;
        break;
      default:
        v = 0x10;
        break;  // synchronous external abort
    }
    v |= 1u << 9;
  } else {
    const bool page = f.level == 2;
    uint32_t fs;
    switch (f.kind) {
      case MmuFault::Translation:
        fs = page ? 0x07 : 0x05;
        break;
      case MmuFault::AccessFlag:
        fs = page ? 0x06 : 0x03;
        break;
      case MmuFault::Domain:
        fs = page ? 0x0b : 0x09;
        break;
      case MmuFault::Permission:
        fs = page ? 0x0f : 0x0d;
        break;
      case MmuFault::WalkExternal:
        fs = page ? 0x0e : 0x0c;
        break;
      default:
        fs = 0x08;
        break;
    }
    v = (fs & 15) | ((fs >> 4) << 10) | (uint32_t{f.domain} << 4);
  }
  if (write) v |= 1u << 11;
  return v;
}

uint64_t Mmu::address_translate(uint32_t va, int kind) {
  // kind: 0-3 ATS1C{PR,PW,UR,UW} (stage 1 of the current PL1&0 regime), 4-7 ATS12NSO{PR,PW,UR,
  // UW} (both stages), 8-9 ATS1H{R,W}.
  const bool write = kind & 1;
  const bool user = (kind & 2) && kind < 8;
  const bool hyp = kind >= 8;
  const bool both = kind >= 4 && kind < 8;
  const bool s2 = both && stage2_enabled();
  const bool long_par = hyp || both || ((st_.cp15.ttbcr >> 31) & 1);
  Walk w = walk(va, hyp, s2);
  const uint8_t need = static_cast<uint8_t>((write ? kPermR | kPermW : kPermR) << (user ? 3 : 0));
  MmuFault f = w.fault;
  bool ok = w.ok;
  if (ok && (w.s1perms & need) != need) {
    ok = false;
    f = MmuFault{};
    f.kind = w.s1_domain_no_access ? MmuFault::Domain : MmuFault::Permission;
    f.level = w.level;
    f.domain = w.domain;
  } else if (ok && (w.s2perms & need) != need) {
    ok = false;
    f = MmuFault{};
    f.kind = MmuFault::Permission;
    f.stage2 = true;
  }
  if (long_par) {
    f.long_format = true;
    // NS (bit 9) is set: every translation here is non-secure (UNKNOWN in the ARM ARM; QEMU
    // sets it). ATTR (the MAIR byte) and SH are stage 1's descriptor's, as QEMU 7.2 reports them
    // (Device memory too: ARMv8 would say outer shareable); 0 from the short format, whose
    // TEX/C/B are not interpreted, and for stage 2's attributes (not modelled).
    const uint64_t attrs = (uint64_t{w.attr} << 56) | (uint64_t{w.sh} << 7);
    return ok ? (w.pa & 0x000000fffffff000ull) | attrs | (1u << 11) | (1u << 9)
              : (1u << 11) | ((fault_status(f, false) & 0x3f) << 1) | (f.stage2 ? 1u << 9 : 0u) |
                    (f.s1ptw ? 1u << 8 : 0u) | 1u;
  } else {
    f.long_format = false;
    uint32_t fs = fault_status(f, false);
    return ok ? (static_cast<uint32_t>(w.pa) & 0xfffff000u) | (1u << 9)
              : ((fs & 15) << 1) | (((fs >> 10) & 1) << 5) | 1u;
  }
}

bool Mmu::debug_translate(uint32_t va, uint32_t& pa) {
  if (!on_) {
    pa = va;
    return true;
  }
  const bool hyp = st_.mode == kHyp;
  Walk w = walk(va, hyp, !hyp && stage2_enabled());
  if (!w.ok) return false;
  pa = static_cast<uint32_t>(w.pa);
  return true;
}

}  // namespace vtoe::cpu::iss
