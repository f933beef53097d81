// The ISS's timing-only level-1 caches (models/cpu/iss/cache.h), no SystemC: one cache array
// (hits, misses, LRU replacement, dirty victims, maintenance by address and by set/way, snoops),
// the pair with a recording bus (which line fills and write-backs a run of accesses issues, the
// last-line filter, the DMA's snoops, CCSIDR), and the core using them (loads, stores and fetches
// looked up only when the MMU and SCTLR.C/I say so; CP15's maintenance reaching the tags).
#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "models/cpu/iss/arm_core.h"
#include "models/cpu/iss/cache.h"

using vtoe::cpu::iss::ArmCore;
using vtoe::cpu::iss::Cache;
using vtoe::cpu::iss::CacheGeometry;
using vtoe::cpu::iss::CacheOp;
using vtoe::cpu::iss::check_geometry;
using vtoe::cpu::iss::L1Caches;
using vtoe::cpu::iss::LineBus;
using vtoe::cpu::iss::PagedMemory;

namespace {

// 32 KiB, 64-byte lines, 2 ways: 256 sets, so addresses 16 KiB apart share a set.
constexpr uint32_t kWay = 16 * 1024;

TEST(IssCache, GeometryIsChecked) {
  EXPECT_NO_THROW(check_geometry(CacheGeometry{}, "d"));
  EXPECT_EQ(CacheGeometry{}.sets(), 256u);
  EXPECT_THROW(check_geometry(CacheGeometry{32 * 1024, 48, 2}, "d"), std::invalid_argument);
  EXPECT_THROW(check_geometry(CacheGeometry{32 * 1024, 64, 3}, "d"), std::invalid_argument);
  EXPECT_THROW(check_geometry(CacheGeometry{24 * 1024, 64, 2}, "d"), std::invalid_argument);
  EXPECT_THROW(check_geometry(CacheGeometry{64, 64, 2}, "d"), std::invalid_argument);
  EXPECT_NO_THROW(check_geometry(CacheGeometry{4096, 64, 1}, "d"));
}

TEST(IssCache, MissThenHitWithinTheLine) {
  Cache c(CacheGeometry{});
  uint32_t victim = 0;
  EXPECT_FALSE(c.access(0x40001008, false, victim));
  EXPECT_EQ(victim, Cache::kNone);
  EXPECT_TRUE(c.access(0x40001000, false, victim));
  EXPECT_TRUE(c.access(0x4000103f, true, victim));
  EXPECT_FALSE(c.access(0x40001040, false, victim));  // the next line
  EXPECT_EQ(c.reads(), 3u);
  EXPECT_EQ(c.writes(), 1u);
  EXPECT_EQ(c.read_misses(), 2u);
  EXPECT_EQ(c.write_misses(), 0u);
  EXPECT_TRUE(c.dirty(0x40001000));
  EXPECT_FALSE(c.dirty(0x40001040));
  EXPECT_EQ(c.valid_lines(), 2u);
}

TEST(IssCache, LeastRecentlyUsedWayIsReplaced) {
  Cache c(CacheGeometry{});
  uint32_t v;
  const uint32_t a = 0x40000100, b = a + kWay, d = a + 2 * kWay;  // one set
  c.access(a, false, v);
  c.access(b, false, v);
  c.access(a, false, v);  // b is now the least recently used
  EXPECT_FALSE(c.access(d, false, v));
  EXPECT_TRUE(c.holds(a));
  EXPECT_FALSE(c.holds(b));
  EXPECT_TRUE(c.holds(d));
  // And again: a is older than d now.
  EXPECT_FALSE(c.access(b, false, v));
  EXPECT_FALSE(c.holds(a));
  EXPECT_TRUE(c.holds(d));
  // Other sets are untouched by all this.
  EXPECT_FALSE(c.access(a + 64, false, v));
  EXPECT_TRUE(c.holds(d));
}

TEST(IssCache, DirtyVictimIsReportedForWriteBack) {
  Cache c(CacheGeometry{});
  uint32_t v;
  const uint32_t a = 0x40000200, b = a + kWay, d = a + 2 * kWay;
  c.access(a + 4, true, v);  // a dirty
  c.access(b, false, v);     // b clean
  EXPECT_FALSE(c.access(d, false, v));
  EXPECT_EQ(v, a);  // the line's address, dirty
  EXPECT_EQ(c.evictions_dirty(), 1u);
  EXPECT_FALSE(c.access(a, false, v));  // replaces b, which was clean
  EXPECT_EQ(v, Cache::kNone);
  EXPECT_FALSE(c.dirty(a));  // a read allocation is clean
}

TEST(IssCache, MaintenanceByAddressAndBySetWay) {
  Cache c(CacheGeometry{});
  uint32_t v;
  c.access(0x40000000, true, v);
  c.access(0x40000040, true, v);
  c.access(0x40000080, false, v);
  EXPECT_TRUE(c.clean(0x40000010));  // dirty -> clean, still there
  EXPECT_FALSE(c.dirty(0x40000000));
  EXPECT_TRUE(c.holds(0x40000000));
  EXPECT_FALSE(c.clean(0x40000000));  // nothing left to clean
  EXPECT_TRUE(c.clean_invalidate(0x40000040));
  EXPECT_FALSE(c.holds(0x40000040));
  c.invalidate(0x40000080);
  EXPECT_FALSE(c.holds(0x40000080));
  // Set 3 (0x400000c0): find its way by trying both.
  c.access(0x400000c0, true, v);
  uint32_t victim = 0;
  bool cleaned = false;
  for (uint32_t way = 0; way < 2; ++way) cleaned |= c.clean_set_way(3, way, victim) && true;
  EXPECT_TRUE(cleaned);
  EXPECT_TRUE(c.holds(0x400000c0));
  EXPECT_FALSE(c.dirty(0x400000c0));
  for (uint32_t way = 0; way < 2; ++way) c.invalidate_set_way(3, way);
  EXPECT_FALSE(c.holds(0x400000c0));
  c.invalidate_set_way(999, 0);  // out of range: nothing
  c.invalidate_all();
  EXPECT_EQ(c.valid_lines(), 0u);
}

TEST(IssCache, DmaWritesInvalidateAndReadsClean) {
  Cache c(CacheGeometry{});
  uint32_t v;
  for (uint32_t a = 0x40010000; a < 0x40010100; a += 64) c.access(a, true, v);  // 4 dirty
  c.access(0x40020000, true, v);
  // A read of two lines cleans them (the data comes from the cache).
  c.snoop(0x40010010, 0x50, false);
  EXPECT_FALSE(c.dirty(0x40010000));
  EXPECT_FALSE(c.dirty(0x40010040));
  EXPECT_TRUE(c.dirty(0x40010080));
  EXPECT_EQ(c.snoop_cleans(), 2u);
  // A write drops every line it touches, dirty or not.
  c.snoop(0x40010000, 0xc0, true);
  EXPECT_FALSE(c.holds(0x40010000));
  EXPECT_FALSE(c.holds(0x40010080));
  EXPECT_TRUE(c.holds(0x400100c0));
  EXPECT_EQ(c.snoop_invalidations(), 3u);
  // A transfer longer than the cache takes the other path.
  c.snoop(0x40000000, 0x100000, true);
  EXPECT_FALSE(c.holds(0x40020000));
  EXPECT_FALSE(c.holds(0x400100c0));
  EXPECT_EQ(c.valid_lines(), 0u);
}

// Records the bus transfers of the caches.
struct RecordingBus : LineBus {
  std::vector<std::pair<char, uint32_t>> log;  // 'f' fill (data), 'i' fill (fetch), 'w' back
  void fill(uint32_t pa, uint32_t len, bool fetch) override {
    EXPECT_EQ(len, 64u);
    log.emplace_back(fetch ? 'i' : 'f', pa);
  }
  void write_back(uint32_t pa, uint32_t len) override {
    EXPECT_EQ(len, 64u);
    log.emplace_back('w', pa);
  }
};

TEST(IssL1Caches, FillsAndWriteBacksGoToTheBus) {
  RecordingBus bus;
  L1Caches l1(CacheGeometry{}, CacheGeometry{}, bus);
  std::vector<uint8_t> ram(0x10000);
  l1.map_host(ram.data(), ram.size(), 0x40000000);
  l1.data(ram.data() + 0x100, 4, true);   // miss: fill
  l1.data(ram.data() + 0x104, 4, true);   // the last line again
  l1.data(ram.data() + 0x13c, 8, false);  // across two lines: a hit and a miss
  uint8_t other[8] = {};
  l1.data(other, 4, false);  // host memory outside every region: not cached
  const std::vector<std::pair<char, uint32_t>> want1 = {{'f', 0x40000100}, {'f', 0x40000140}};
  EXPECT_EQ(bus.log, want1);
  bus.log.clear();
  // Two more lines of set 4: the dirty one (0x100) goes.
  l1.data_pa(0x40000100 + kWay, 4, false);
  l1.data_pa(0x40000100 + 2 * kWay, 4, false);
  const std::vector<std::pair<char, uint32_t>> want2 = {
      {'f', 0x40004100}, {'w', 0x40000100}, {'f', 0x40008100}};
  EXPECT_EQ(bus.log, want2);
  EXPECT_EQ(l1.write_backs(), 1u);
  EXPECT_EQ(l1.fills(), 4u);
  EXPECT_EQ(l1.dcache().accesses(), 6u);
  EXPECT_EQ(l1.dcache().misses(), 4u);
}

TEST(IssL1Caches, FetchesUseTheInstructionCache) {
  RecordingBus bus;
  L1Caches l1(CacheGeometry{}, CacheGeometry{}, bus);
  l1.fetch(0x40000000, 16);
  l1.fetch(0x40000010, 48);
  l1.fetch(0x40000030, 32);  // into the next line
  const std::vector<std::pair<char, uint32_t>> want = {{'i', 0x40000000}, {'i', 0x40000040}};
  EXPECT_EQ(bus.log, want);
  EXPECT_EQ(l1.icache().misses(), 2u);
  EXPECT_EQ(l1.dcache().accesses(), 0u);
  l1.maintain(CacheOp::IcInvalidateAll, 0);
  l1.fetch(0x40000000, 4);
  EXPECT_EQ(l1.icache().misses(), 3u);
}

TEST(IssL1Caches, TheLastLineFilterForgetsWhatASnoopDropped) {
  RecordingBus bus;
  L1Caches l1(CacheGeometry{}, CacheGeometry{}, bus);
  l1.data_pa(0x40000000, 4, true);
  l1.snoop(0x40000000, 64, true);   // the DMA wrote the line
  l1.data_pa(0x40000000, 4, true);  // a miss again, not a filtered hit
  EXPECT_EQ(l1.dcache().misses(), 2u);
  EXPECT_EQ(l1.dcache().snoop_invalidations(), 1u);
  // A read by the DMA cleans: the line is not written back when it goes.
  l1.snoop(0x40000000, 64, false);
  l1.data_pa(0x40000000 + kWay, 4, false);
  l1.data_pa(0x40000000 + 2 * kWay, 4, false);
  for (const auto& e : bus.log) EXPECT_NE(e.first, 'w');
  // A DMA write over code drops it from the instruction cache too.
  l1.fetch(0x40001000, 4);
  l1.snoop(0x40001000, 4, true);
  l1.fetch(0x40001000, 4);
  EXPECT_EQ(l1.icache().misses(), 2u);
}

TEST(IssL1Caches, SetWayOperandsFollowTheArchitecture) {
  RecordingBus bus;
  L1Caches l1(CacheGeometry{}, CacheGeometry{}, bus);
  // Two dirty lines in set 5, one per way.
  l1.data_pa(0x40000140, 4, true);
  l1.data_pa(0x40000140 + kWay, 4, true);
  // DCCSW: way in bit 31 (2 ways), set in bits 13:6, level 0 in bits 3:1.
  for (uint32_t way = 0; way < 2; ++way) l1.maintain(CacheOp::DcCleanSetWay, way << 31 | 5 << 6);
  EXPECT_EQ(l1.write_backs(), 2u);
  EXPECT_TRUE(l1.dcache().holds(0x40000140));
  // Level 1 (bits 3:1 = 1) is not this cache: nothing happens.
  for (uint32_t way = 0; way < 2; ++way)
    l1.maintain(CacheOp::DcInvalidateSetWay, way << 31 | 5 << 6 | 1 << 1);
  EXPECT_TRUE(l1.dcache().holds(0x40000140));
  for (uint32_t way = 0; way < 2; ++way)
    l1.maintain(CacheOp::DcCleanInvalidateSetWay, way << 31 | 5 << 6);
  EXPECT_FALSE(l1.dcache().holds(0x40000140));
  EXPECT_FALSE(l1.dcache().holds(0x40000140 + kWay));
  EXPECT_EQ(l1.write_backs(), 2u);  // they were clean already
  // By address: clean writes back a dirty line once.
  l1.data_pa(0x40002000, 4, true);
  l1.maintain(CacheOp::DcCleanMva, 0x40002010);
  l1.maintain(CacheOp::DcCleanMva, 0x40002010);
  EXPECT_EQ(l1.write_backs(), 3u);
  l1.data_pa(0x40002000, 4, true);
  l1.maintain(CacheOp::DcInvalidateMva, 0x40002000);  // dropped, not written
  EXPECT_EQ(l1.write_backs(), 3u);
  EXPECT_FALSE(l1.dcache().holds(0x40002000));
}

TEST(IssL1Caches, CcsidrDescribesTheGeometry) {
  RecordingBus bus;
  L1Caches a(CacheGeometry{}, CacheGeometry{}, bus);
  EXPECT_EQ(a.ccsidr(false), 0x701fe00au);  // the Cortex-A15's L1 D (TRM)
  EXPECT_EQ(a.ccsidr(true), 0x201fe00au);   // and L1 I
  L1Caches b(CacheGeometry{16 * 1024, 32, 4}, CacheGeometry{64 * 1024, 128, 8}, bus);
  EXPECT_EQ(b.ccsidr(true), (0x2u << 28) | (127u << 13) | (3u << 3) | 1u);
  EXPECT_EQ(b.ccsidr(false), (0x7u << 28) | (63u << 13) | (7u << 3) | 3u);
}

// The core: an identity-mapped section over 1 MiB of RAM whose pages the caches know.
class IssCoreCaches : public ::testing::Test {
 protected:
  static constexpr uint32_t kCode = 0x10000, kData = 0x20000, kTable = 0x40000;
  static constexpr uint32_t kSvc = 0x13, kAif = 0x1c0;
  void SetUp() override {
    mem.map(0, 0x100000);
    for (uint32_t p = 0; p < 0x100; ++p)
      l1.map_host(mem.host_page(p), PagedMemory::kPageSize, p << PagedMemory::kPageBits);
    mem.write32(0x3000, 0xeafffffe);  // vectors: loop
    core.reset_system(false);
    core.set_cpsr(kSvc | kAif);
    core.set_vbar(0x3000);
    mem.write32(kTable, 0x00000c02);  // VA 0 -> PA 0, section, AP RW
    core.set_cp15(2, 0, 0, 0, kTable);
    core.set_cp15(2, 0, 0, 2, 0);
    core.set_cp15(3, 0, 0, 0, 1);  // DACR: domain 0 client
    core.set_caches(&l1);
  }
  void sctlr(uint32_t set) { core.set_cp15(1, 0, 0, 0, core.sctlr() | set); }
  // Runs `insns` from kCode with r0 = kData.
  void run(std::initializer_list<uint32_t> insns) {
    uint32_t a = kCode;
    for (uint32_t i : insns) {
      mem.write32(a, i);
      a += 4;
    }
    core.set_reg(0, kData);
    core.set_pc(kCode);
    for (size_t i = 0; i < insns.size(); ++i) core.step();
  }
  static constexpr uint32_t kLdr = 0xe5901000;    // ldr r1, [r0]
  static constexpr uint32_t kStr4 = 0xe5801004;   // str r1, [r0, #4]
  static constexpr uint32_t kLdr64 = 0xe5901040;  // ldr r1, [r0, #64]
  static constexpr uint32_t kStm = 0xe880000e;    // stm r0, {r1-r3}

  RecordingBus bus;
  L1Caches l1{CacheGeometry{}, CacheGeometry{}, bus};
  PagedMemory mem;
  ArmCore core{mem};
};

TEST_F(IssCoreCaches, MmuOffOrCacheDisabledLooksNothingUp) {
  run({kLdr, kStr4});
  EXPECT_EQ(l1.dcache().accesses(), 0u);  // MMU off: Strongly-ordered, uncached
  EXPECT_EQ(l1.icache().accesses(), 0u);  // SCTLR.I clear
  sctlr(1);                               // MMU on, C clear
  run({kLdr, kStr4});
  EXPECT_EQ(l1.dcache().accesses(), 0u);
}

TEST_F(IssCoreCaches, LoadsStoresAndFetchesAreLookedUp) {
  sctlr(1 | 1 << 2 | 1 << 12);  // M, C, I
  run({kLdr, kStr4, kLdr64, kStm});
  EXPECT_EQ(l1.dcache().reads(), 2u);
  EXPECT_EQ(l1.dcache().writes(), 2u);
  EXPECT_EQ(l1.dcache().misses(), 2u);  // kData and kData + 64
  EXPECT_TRUE(l1.dcache().dirty(kData));
  EXPECT_EQ(l1.icache().misses(), 1u);  // the four instructions share a line
  EXPECT_EQ(l1.icache().accesses(), 4u);
  const std::vector<std::pair<char, uint32_t>> want = {
      {'i', kCode}, {'f', kData}, {'f', kData + 64}};
  EXPECT_EQ(bus.log, want);
}

TEST_F(IssCoreCaches, Cp15MaintenanceReachesTheTags) {
  sctlr(1 | 1 << 2 | 1 << 12);
  run({kStr4});
  EXPECT_TRUE(l1.dcache().dirty(kData));
  core.set_cp15(7, 0, 10, 1, kData + 8);  // DCCMVAC
  EXPECT_FALSE(l1.dcache().dirty(kData));
  EXPECT_EQ(l1.write_backs(), 1u);
  core.set_cp15(7, 0, 6, 1, kData);  // DCIMVAC
  EXPECT_FALSE(l1.dcache().holds(kData));
  EXPECT_TRUE(l1.icache().holds(kCode));
  core.set_cp15(7, 0, 5, 0, 0);  // ICIALLU
  EXPECT_FALSE(l1.icache().holds(kCode));
  // CCSIDR through CSSELR.
  core.set_cp15(0, 2, 0, 0, 0);
  EXPECT_EQ(core.cp15(0, 1, 0, 0), 0x701fe00au);
  core.set_cp15(0, 2, 0, 0, 1);
  EXPECT_EQ(core.cp15(0, 1, 0, 0), 0x201fe00au);
}

}  // namespace

// Plain C++: no SystemC kernel, so GoogleTest's own main.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
