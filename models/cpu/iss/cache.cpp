#include "models/cpu/iss/cache.h"

#include <stdexcept>

namespace vtoe::cpu::iss {

namespace {
bool pow2(uint32_t v) { return v && !(v & (v - 1)); }
uint32_t log2u(uint32_t v) { return static_cast<uint32_t>(__builtin_ctz(v)); }
}  // namespace

void check_geometry(const CacheGeometry& g, const std::string& what) {
  if (!pow2(g.line) || g.line < 16 || g.line > 2048)
    throw std::invalid_argument(what + ": line " + std::to_string(g.line) +
                                " bytes: a power of two from 16 to 2048");
  if (!pow2(g.ways) || g.ways > 16)
    throw std::invalid_argument(what + ": " + std::to_string(g.ways) +
                                " ways: a power of two from 1 to 16");
  const uint64_t way_bytes = uint64_t{g.line} * g.ways;
  if (g.size < way_bytes || g.size % way_bytes != 0 ||
      !pow2(g.size / static_cast<uint32_t>(way_bytes)))
    throw std::invalid_argument(what + ": size " + std::to_string(g.size) +
                                " bytes is not a power-of-two number of sets of " +
                                std::to_string(g.ways) + " ways x " + std::to_string(g.line) +
                                "-byte lines");
}

Cache::Cache(const CacheGeometry& g) : g_(g) {
  check_geometry(g, "cache");
  line_shift_ = log2u(g.line);
  set_mask_ = g.sets() - 1;
  lines_.resize(size_t{g.sets()} * g.ways);
}

const Cache::Line* Cache::find(uint32_t lineno) const {
  const Line* s = &lines_[(lineno & set_mask_) * g_.ways];
  for (uint32_t w = 0; w < g_.ways; ++w) {
    if (s[w].tag == lineno) return &s[w];
  }
  return nullptr;
}

Cache::Line* Cache::at(uint32_t set, uint32_t way) {
  if (set > set_mask_ || way >= g_.ways) return nullptr;
  return &lines_[set * g_.ways + way];
}

bool Cache::access(uint32_t pa, bool write, uint32_t& victim) {
  const uint32_t lineno = pa >> line_shift_;
  Line* s = set_of(lineno);
  ++(write ? writes_ : reads_);
  ++clock_;
  Line* lru = &s[0];
  for (uint32_t w = 0; w < g_.ways; ++w) {
    Line& l = s[w];
    if (l.tag == lineno) {
      l.age = clock_;
      l.dirty = l.dirty || write;
      victim = kNone;
      return true;
    }
    // An invalid way first, else the least recently used.
    if (lru->tag != kNone && (l.tag == kNone || l.age < lru->age)) lru = &l;
  }
  ++(write ? write_misses_ : read_misses_);
  victim = kNone;
  if (lru->tag != kNone && lru->dirty) {
    victim = lru->tag << line_shift_;
    ++evictions_dirty_;
  }
  lru->tag = lineno;
  lru->age = clock_;
  lru->dirty = write;
  return false;
}

uint32_t Cache::valid_lines() const {
  uint32_t n = 0;
  for (const Line& l : lines_) n += l.tag != kNone;
  return n;
}

bool Cache::clean(uint32_t pa) {
  Line* l = find(pa >> line_shift_);
  if (!l || !l->dirty) return false;
  l->dirty = false;
  return true;
}

void Cache::invalidate(uint32_t pa) {
  if (Line* l = find(pa >> line_shift_)) *l = Line{};
}

bool Cache::clean_invalidate(uint32_t pa) {
  Line* l = find(pa >> line_shift_);
  if (!l) return false;
  const bool was = l->dirty;
  *l = Line{};
  return was;
}

bool Cache::clean_set_way(uint32_t set, uint32_t way, uint32_t& victim) {
  Line* l = at(set, way);
  victim = kNone;
  if (!l || l->tag == kNone || !l->dirty) return false;
  victim = l->tag << line_shift_;
  l->dirty = false;
  return true;
}

void Cache::invalidate_set_way(uint32_t set, uint32_t way) {
  if (Line* l = at(set, way)) *l = Line{};
}

bool Cache::clean_invalidate_set_way(uint32_t set, uint32_t way, uint32_t& victim) {
  const bool was = clean_set_way(set, way, victim);
  invalidate_set_way(set, way);
  return was;
}

void Cache::invalidate_all() {
  for (Line& l : lines_) l = Line{};
  clock_ = 0;  // as built: the LRU order starts afresh
}

void Cache::snoop(uint32_t pa, uint32_t len, bool write) {
  if (len == 0) return;
  const uint32_t first = pa >> line_shift_;
  const uint32_t last = static_cast<uint32_t>((uint64_t{pa} + len - 1) >> line_shift_);
  // A long transfer against a small cache: look at each valid line once instead.
  if (last - first > lines_.size()) {
    for (Line& l : lines_) {
      if (l.tag == kNone || l.tag < first || l.tag > last) continue;
      if (write) {
        l = Line{};
        ++snoop_invalidations_;
      } else if (l.dirty) {
        l.dirty = false;
        ++snoop_cleans_;
      }
    }
    return;
  }
  for (uint32_t n = first;; ++n) {
    if (Line* l = find(n)) {
      if (write) {
        *l = Line{};
        ++snoop_invalidations_;
      } else if (l->dirty) {
        l->dirty = false;
        ++snoop_cleans_;
      }
    }
    if (n == last) break;
  }
}

L1Caches::L1Caches(const CacheGeometry& icache, const CacheGeometry& dcache, LineBus& bus)
    : i_(icache), d_(dcache), bus_(bus), i_shift_(i_.line_shift()), d_shift_(d_.line_shift()) {}

void L1Caches::map_host(const uint8_t* host, uint64_t len, uint32_t pa) {
  const auto h = reinterpret_cast<uintptr_t>(host);
  if (len0_ == 0) {
    host0_ = h;
    len0_ = len;
    pa0_ = pa;
    return;
  }
  if (h == host0_ && pa == pa0_) {
    if (len > len0_) len0_ = len;
    return;
  }
  for (Region& r : regions_) {
    if (r.host == h && r.pa == pa) {
      if (len > r.len) r.len = len;
      return;
    }
  }
  regions_.push_back(Region{h, len, pa});
}

void L1Caches::data_other(const uint8_t* host, uint32_t len, bool write) {
  const auto h = reinterpret_cast<uintptr_t>(host);
  for (const Region& r : regions_) {
    if (h - r.host < r.len) {
      data_pa(r.pa + static_cast<uint32_t>(h - r.host), len, write);
      return;
    }
  }
  // Host memory that no grant lent (the core's own pages): not cached.
}

void L1Caches::write_back(uint32_t line_pa) {
  ++write_backs_;
  bus_.write_back(line_pa, d_.geometry().line);
}

void L1Caches::data_lines(uint32_t pa, uint32_t len, bool write) {
  const uint32_t last = static_cast<uint32_t>((uint64_t{pa} + len - 1) >> d_shift_);
  for (uint32_t n = pa >> d_shift_;; ++n) {
    uint32_t victim;
    const bool hit = d_.access(n << d_shift_, write, victim);
    // The filter first: a snoop during the bus transfers below forgets it again.
    d_last_ = n;
    d_last_dirty_ = write || d_.dirty(n << d_shift_);
    if (!hit) {
      if (victim != Cache::kNone) write_back(victim);
      ++fills_;
      bus_.fill(n << d_shift_, d_.geometry().line, false);
    }
    if (n == last) break;
  }
}

void L1Caches::fetch_lines(uint32_t pa, uint32_t len) {
  const uint32_t last = static_cast<uint32_t>((uint64_t{pa} + len - 1) >> i_shift_);
  for (uint32_t n = pa >> i_shift_;; ++n) {
    uint32_t victim;
    const bool hit = i_.access(n << i_shift_, false, victim);
    i_last_ = n;
    if (!hit) {
      ++fills_;
      bus_.fill(n << i_shift_, i_.geometry().line, true);
    }
    if (n == last) break;
  }
}

void L1Caches::maintain(CacheOp op, uint32_t arg) {
  forget_last();
  // Set/way: the way in the top log2(ways) bits, the set above the line offset, the level in
  // bits 3:1 (ARM ARM B4.2.1); this model has level 0 only.
  const CacheGeometry& g = d_.geometry();
  const uint32_t way_bits = log2u(g.ways);
  const uint32_t way = way_bits ? arg >> (32 - way_bits) : 0;
  const uint32_t set = (arg >> d_shift_) & (g.sets() - 1);
  const bool level0 = ((arg >> 1) & 7) == 0;
  uint32_t victim = Cache::kNone;
  switch (op) {
    case CacheOp::IcInvalidateAll:
      i_.invalidate_all();
      break;
    case CacheOp::IcInvalidateMva:
      i_.invalidate(arg);
      break;
    case CacheOp::DcInvalidateMva:
      d_.invalidate(arg);
      break;
    case CacheOp::DcInvalidateSetWay:
      if (level0) d_.invalidate_set_way(set, way);
      break;
    case CacheOp::DcCleanMva:
      if (d_.clean(arg)) write_back(arg & ~(g.line - 1));
      break;
    case CacheOp::DcCleanSetWay:
      if (level0 && d_.clean_set_way(set, way, victim)) write_back(victim);
      break;
    case CacheOp::DcCleanInvalidateMva:
      if (d_.clean_invalidate(arg)) write_back(arg & ~(g.line - 1));
      break;
    case CacheOp::DcCleanInvalidateSetWay:
      if (level0 && d_.clean_invalidate_set_way(set, way, victim)) write_back(victim);
      break;
  }
}

void L1Caches::snoop(uint64_t pa, uint64_t len, bool write) {
  if (len == 0 || pa > 0xffffffffu) return;
  if (len > 0xffffffffull - pa) len = 0xffffffffull - pa;  // up to the last byte but one
  forget_last();
  // Code the DMA overwrites is stale in the instruction cache too.
  if (write) i_.snoop(static_cast<uint32_t>(pa), static_cast<uint32_t>(len), true);
  d_.snoop(static_cast<uint32_t>(pa), static_cast<uint32_t>(len), write);
}

uint32_t L1Caches::ccsidr(bool instruction) const {
  // WT/WB/RA/WA as the Cortex-A15 reports them (TRM 4.3.22): data WB, RA, WA; instruction RA.
  const CacheGeometry& g = (instruction ? i_ : d_).geometry();
  const uint32_t flags = instruction ? 0x2u : 0x7u;
  return (flags << 28) | ((g.sets() - 1) << 13) | ((g.ways - 1) << 3) | (log2u(g.line) - 4);
}

}  // namespace vtoe::cpu::iss
