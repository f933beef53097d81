// Timing-only level-1 caches of one core: tags, valid and dirty bits and LRU order, no data.
//
// The data stays in RAM (the core reads and writes it through DMI as without caches), so the
// caches are coherent by construction; what they add is time. Every load, store and instruction
// fetch of the core looks its line up; a miss allocates the line (read and write allocate, write
// back), costs a line fill through the LineBus (the core's TLM socket: the interconnect and the
// memory, with their delays and their contention with the TOE's DMA) and, when the victim was
// dirty, a write-back of it first. Cache maintenance (by address and by set/way) and snoops from
// other bus masters (the TOE's DMA: a write drops the lines, a read cleans a dirty line) act on
// the tags. Geometry: Cortex-A15 by default (docs/caches.md has the sources): 32 KiB, 64-byte
// lines, 2-way, physically indexed and tagged, for instructions and for data alike.
//
// Plain C++ (no SystemC); docs/caches.md states what the model includes and leaves out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vtoe::cpu::iss {

struct CacheGeometry {
  uint32_t size = 32 * 1024;  // bytes
  uint32_t line = 64;         // bytes
  uint32_t ways = 2;
  uint32_t sets() const { return size / (line * ways); }
};

// Throws std::invalid_argument (naming `what`) unless line is a power of two from 16 to 2048,
// ways a power of two from 1 to 16, and size = sets x ways x line with a power-of-two number
// of sets.
void check_geometry(const CacheGeometry& g, const std::string& what);

// One cache array.
class Cache {
 public:
  static constexpr uint32_t kNone = ~0u;  // no victim to write back

  explicit Cache(const CacheGeometry& g);

  const CacheGeometry& geometry() const { return g_; }
  uint32_t line_shift() const { return line_shift_; }

  // Looks up the line holding physical address `pa`. A hit refreshes its LRU age (and a write
  // marks it dirty) and returns true. A miss allocates the line in place of the set's least
  // recently used way and returns false; `victim` is then the address of the line it replaced
  // if that one was dirty (a write-back is due), else kNone.
  bool access(uint32_t pa, bool write, uint32_t& victim);
  // A hit on the line accessed last (the caller knows it is still there: LineFilter).
  void count_hit(bool write) { ++(write ? writes_ : reads_); }

  bool holds(uint32_t pa) const { return find(pa >> line_shift_) != nullptr; }
  bool dirty(uint32_t pa) const {
    const Line* l = find(pa >> line_shift_);
    return l && l->dirty;
  }
  uint32_t valid_lines() const;

  // Maintenance by physical address; clean and clean_invalidate return whether the line was
  // dirty (the caller writes it back).
  bool clean(uint32_t pa);
  void invalidate(uint32_t pa);
  bool clean_invalidate(uint32_t pa);
  // By set and way (DCCSW, DCISW, DCCISW); out-of-range sets or ways do nothing. `victim` gets
  // the line's address when it was dirty and cleaned.
  bool clean_set_way(uint32_t set, uint32_t way, uint32_t& victim);
  void invalidate_set_way(uint32_t set, uint32_t way);
  bool clean_invalidate_set_way(uint32_t set, uint32_t way, uint32_t& victim);
  void invalidate_all();

  // Another master's access to [pa, pa + len): a write drops every line it touches (counted as
  // snoop_invalidations), a read cleans the dirty ones (snoop_cleans: the data reaches the
  // master from the cache, no write-back on the bus).
  void snoop(uint32_t pa, uint32_t len, bool write);

  uint64_t reads() const { return reads_; }
  uint64_t writes() const { return writes_; }
  uint64_t accesses() const { return reads_ + writes_; }
  uint64_t read_misses() const { return read_misses_; }
  uint64_t write_misses() const { return write_misses_; }
  uint64_t misses() const { return read_misses_ + write_misses_; }
  uint64_t evictions_dirty() const { return evictions_dirty_; }
  uint64_t snoop_invalidations() const { return snoop_invalidations_; }
  uint64_t snoop_cleans() const { return snoop_cleans_; }

 private:
  struct Line {
    uint32_t tag = kNone;  // the line number (pa >> line_shift); kNone: invalid
    uint32_t age = 0;      // the set's clock when last used (LRU: the smallest)
    bool dirty = false;
  };
  Line* set_of(uint32_t lineno) { return &lines_[(lineno & set_mask_) * g_.ways]; }
  const Line* find(uint32_t lineno) const;
  Line* find(uint32_t lineno) {
    return const_cast<Line*>(static_cast<const Cache*>(this)->find(lineno));
  }
  Line* at(uint32_t set, uint32_t way);

  CacheGeometry g_;
  uint32_t line_shift_ = 6;
  uint32_t set_mask_ = 0;
  uint32_t clock_ = 0;
  std::vector<Line> lines_;
  uint64_t reads_ = 0, writes_ = 0, read_misses_ = 0, write_misses_ = 0;
  uint64_t evictions_dirty_ = 0, snoop_invalidations_ = 0, snoop_cleans_ = 0;
};

// Where line fills and write-backs go (the core's bus). Both may take simulated time.
class LineBus {
 public:
  virtual ~LineBus() = default;
  virtual void fill(uint32_t pa, uint32_t len, bool fetch) = 0;
  virtual void write_back(uint32_t pa, uint32_t len) = 0;
};

// The cache maintenance operations of CP15 c7 (the MVA forms take a physical address here).
enum class CacheOp {
  IcInvalidateAll,          // ICIALLU, ICIALLUIS
  IcInvalidateMva,          // ICIMVAU
  DcInvalidateMva,          // DCIMVAC
  DcInvalidateSetWay,       // DCISW
  DcCleanMva,               // DCCMVAC, DCCMVAU (the only level: the point of unification too)
  DcCleanSetWay,            // DCCSW
  DcCleanInvalidateMva,     // DCCIMVAC
  DcCleanInvalidateSetWay,  // DCCISW
};

// A core's instruction and data caches with their bus. The core calls data() with the host
// address its fast paths found (DMI memory: map_host says which physical addresses it holds;
// other host memory is not cached) and fetch() with the physical address of code it runs.
class L1Caches {
 public:
  L1Caches(const CacheGeometry& icache, const CacheGeometry& dcache, LineBus& bus);

  Cache& icache() { return i_; }
  Cache& dcache() { return d_; }
  const Cache& icache() const { return i_; }
  const Cache& dcache() const { return d_; }

  // Host memory [host, host + len) holds physical [pa, pa + len) (a DMI grant).
  void map_host(const uint8_t* host, uint64_t len, uint32_t pa);

  // A load or store of `len` bytes at host address `host`.
  void data(const uint8_t* host, uint32_t len, bool write) {
    const uintptr_t off = reinterpret_cast<uintptr_t>(host) - host0_;
    if (__builtin_expect(off < len0_, 1)) {
      data_pa(pa0_ + static_cast<uint32_t>(off), len, write);
    } else {
      data_other(host, len, write);
    }
  }
  void data_pa(uint32_t pa, uint32_t len, bool write) {
    const uint32_t first = pa >> d_shift_;
    if (__builtin_expect(
            first == d_last_ && ((pa + len - 1) >> d_shift_) == first && (!write || d_last_dirty_),
            1)) {
      d_.count_hit(write);
      return;
    }
    data_lines(pa, len, write);
  }
  // An instruction fetch of [pa, pa + len).
  void fetch(uint32_t pa, uint32_t len) {
    const uint32_t first = pa >> i_shift_;
    if (__builtin_expect(first == i_last_ && ((pa + len - 1) >> i_shift_) == first, 1)) {
      i_.count_hit(false);
      return;
    }
    fetch_lines(pa, len);
  }

  // A maintenance operation: `arg` is the physical address (MVA forms) or the set/way word
  // (SW forms; level in bits 3:1, only level 0 exists).
  void maintain(CacheOp op, uint32_t arg);
  // Another master's access (the TOE's DMA): see Cache::snoop.
  void snoop(uint64_t pa, uint64_t len, bool write);

  // Both caches' lines invalid, without write-backs (the data is in memory: a snapshot's point,
  // IssCpu::settle).
  void invalidate_all() {
    i_.invalidate_all();
    d_.invalidate_all();
    forget_last();
    d_last_dirty_ = false;
  }

  // Write-backs issued (dirty victims and maintenance cleans), line fills issued.
  uint64_t write_backs() const { return write_backs_; }
  uint64_t fills() const { return fills_; }
  // CCSIDR for CSSELR's level 0 data (false) or instruction (true) cache.
  uint32_t ccsidr(bool instruction) const;

 private:
  void data_other(const uint8_t* host, uint32_t len, bool write);
  void data_lines(uint32_t pa, uint32_t len, bool write);
  void fetch_lines(uint32_t pa, uint32_t len);
  void write_back(uint32_t line_pa);
  void forget_last() { d_last_ = i_last_ = Cache::kNone; }

  struct Region {
    uintptr_t host;
    uint64_t len;
    uint32_t pa;
  };

  Cache i_, d_;
  LineBus& bus_;
  uint32_t i_shift_, d_shift_;
  // The line of the last access (a hit again, while nothing else touched the caches).
  uint32_t d_last_ = Cache::kNone, i_last_ = Cache::kNone;
  bool d_last_dirty_ = false;
  // The first region inline (the RAM), the others in a list.
  uintptr_t host0_ = 0;
  uint64_t len0_ = 0;
  uint32_t pa0_ = 0;
  std::vector<Region> regions_;
  uint64_t write_backs_ = 0, fills_ = 0;
};

}  // namespace vtoe::cpu::iss
