// The CCB as a cache of connection records: hits cost the on-chip latency, misses fetch the
// record from host memory over the DMA path and write the least recently used one back.
#include "models/toe/ccb.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_target_socket.h>

#include <systemc>
#include <utility>
#include <vector>

#include "tests/support/bench.h"

using namespace vtoe;

namespace {

// Host memory as the CCB sees it: records every transaction and answers after 100 ns.
struct RecordMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<RecordMemory> in{"in"};
  struct Seen {
    tlm::tlm_command cmd;
    std::uint64_t addr;
    unsigned len;
    std::uint32_t stream;
  };
  std::vector<Seen> seen;
  bool fail = false;
  explicit RecordMemory(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
    in.register_b_transport(this, &RecordMemory::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    auto* sb = gp.get_extension<core::SidebandExtension>();
    seen.push_back({gp.get_command(), gp.get_address(), gp.get_data_length(),
                    sb ? sb->stream_id : 0xffffffffu});
    delay += sc_core::sc_time(100, sc_core::SC_NS);
    gp.set_response_status(fail ? tlm::TLM_ADDRESS_ERROR_RESPONSE : tlm::TLM_OK_RESPONSE);
  }
};

struct Bench {
  toe::Ccb ccb;
  RecordMemory memory{"memory"};
  explicit Bench(toe::CcbParams p) : ccb("ccb", p) {
    ccb.dma.bind(memory.in);
    core::SidebandExtension sb;
    sb.stream_id = 0x100;
    ccb.set_backing(0x10000, sb);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate: the socket is bound
  }
};

toe::CcbParams params(std::uint32_t capacity, std::uint32_t cache) {
  toe::CcbParams p;
  p.capacity = capacity;
  p.cache_entries = cache;
  p.access_latency_ps = 10'000;
  p.record_bytes = 128;
  return p;
}

}  // namespace

TEST(CcbCache, MissesFetchRecordsAndEvictLeastRecentlyUsed) {
  Bench b(params(8, 2));
  toe::CcbEntry* e0 = b.ccb.create(0, 1);
  toe::CcbEntry* e1 = b.ccb.create(0, 2);
  toe::CcbEntry* e2 = b.ccb.create(0, 3);
  ASSERT_TRUE(e0 && e1 && e2);
  EXPECT_EQ(b.ccb.cache_entries(), 2u);
  // New records are made on chip: nothing to fetch.
  EXPECT_EQ(b.ccb.touch(*e0), 10'000u);
  EXPECT_EQ(b.ccb.touch(*e1), 10'000u);
  EXPECT_EQ(b.ccb.touch(*e0), 10'000u);  // hit; e1 is now least recently used
  EXPECT_TRUE(b.memory.seen.empty());
  // The third record displaces e1: a 128-byte write-back of e1's own record.
  EXPECT_EQ(b.ccb.touch(*e2), 10'000u + 100'000u);
  ASSERT_EQ(b.memory.seen.size(), 1u);
  EXPECT_EQ(b.memory.seen[0].cmd, tlm::TLM_WRITE_COMMAND);
  EXPECT_EQ(b.memory.seen[0].addr, 0x10000u + 128u * e1->record);
  EXPECT_EQ(b.memory.seen[0].len, 128u);
  EXPECT_EQ(b.memory.seen[0].stream, 0x100u);
  EXPECT_EQ(b.ccb.touch(*e0), 10'000u);  // still on chip
  // e1 is in host memory now: e2 is written back and e1 read.
  EXPECT_EQ(b.ccb.touch(*e1), 10'000u + 2 * 100'000u);
  ASSERT_EQ(b.memory.seen.size(), 3u);
  EXPECT_EQ(b.memory.seen[1].cmd, tlm::TLM_WRITE_COMMAND);
  EXPECT_EQ(b.memory.seen[1].addr, 0x10000u + 128u * e2->record);
  EXPECT_EQ(b.memory.seen[2].cmd, tlm::TLM_READ_COMMAND);
  EXPECT_EQ(b.memory.seen[2].addr, 0x10000u + 128u * e1->record);
  EXPECT_EQ(test::counter(b.ccb.stats(), "record_misses"), 1u);
  EXPECT_EQ(test::counter(b.ccb.stats(), "record_hits"), 5u);
  EXPECT_EQ(test::counter(b.ccb.stats(), "record_writebacks"), 2u);
}

TEST(CcbCache, EveryRecordOnChipNeverTouchesMemory) {
  Bench b(params(4, 0));
  toe::CcbEntry* e = b.ccb.create(1, 7);
  ASSERT_TRUE(e);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(b.ccb.touch(*e), 10'000u);
  EXPECT_TRUE(b.memory.seen.empty());
  EXPECT_EQ(b.ccb.cache_entries(), 4u);
}

TEST(CcbCache, RecordsAreDistinctAndReusedAfterRemoval) {
  Bench b(params(3, 1));
  toe::CcbEntry* a = b.ccb.create(0, 1);
  toe::CcbEntry* c = b.ccb.create(0, 2);
  toe::CcbEntry* d = b.ccb.create(1, 1);
  ASSERT_TRUE(a && c && d);
  EXPECT_NE(a->record, c->record);
  EXPECT_NE(c->record, d->record);
  EXPECT_NE(a->record, d->record);
  EXPECT_EQ(b.ccb.create(1, 2), nullptr);  // all three records in use
  const std::uint32_t freed = c->record;
  b.ccb.touch(*c);
  b.ccb.remove(*c);  // forgotten on chip: nothing written back
  toe::CcbEntry* n = b.ccb.create(2, 9);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->record, freed);
  EXPECT_EQ(b.ccb.touch(*a), 10'000u);  // the one on-chip entry was freed with c
  EXPECT_TRUE(b.memory.seen.empty());
  // The reused record is new again: displacing a costs a write-back, and n is not fetched.
  EXPECT_EQ(b.ccb.touch(*n), 110'000u);
  ASSERT_EQ(b.memory.seen.size(), 1u);
  EXPECT_EQ(b.memory.seen[0].cmd, tlm::TLM_WRITE_COMMAND);
  EXPECT_EQ(b.memory.seen[0].addr, 0x10000u + 128u * a->record);
}

TEST(CcbCache, ARefusedRecordTransferIsCountedAndTakesItsTime) {
  Bench b(params(4, 1));
  b.memory.fail = true;
  toe::CcbEntry* e = b.ccb.create(0, 1);
  toe::CcbEntry* f = b.ccb.create(0, 2);
  ASSERT_TRUE(e && f);
  EXPECT_EQ(b.ccb.touch(*e), 10'000u);
  EXPECT_EQ(b.ccb.touch(*f), 110'000u);  // e's write-back, refused
  EXPECT_EQ(test::counter(b.ccb.stats(), "record_faults"), 1u);
}

// Connections that stay open count for as long as they are open (it was sampled at creates only:
// four open connections read mean 0, max 0 after a baseline). Last in the file: it advances
// simulated time, after which no bench can be built.
TEST(CcbOccupancy, IsTimeWeightedOverOpenConnections) {
  Bench b(params(8, 8));
  std::vector<toe::CcbEntry*> open;
  for (std::uint16_t s = 1; s <= 4; ++s) open.push_back(b.ccb.create(0, s));
  core::StatRegistry::instance().mark_baseline(core::now_ps());
  const core::TimePs t0 = core::now_ps();
  sc_core::sc_start(core::ps(1'000'000));
  b.ccb.remove(*open.back());  // three open for the second microsecond
  sc_core::sc_start(core::ps(1'000'000));
  const core::Accumulator& occ = b.ccb.stats().accumulator("occupancy");
  EXPECT_DOUBLE_EQ(occ.mean(core::now_ps()), 3.5);
  EXPECT_DOUBLE_EQ(occ.max(), 4.0);
  EXPECT_EQ(core::now_ps() - t0, 2'000'000u);
}

VTOE_TEST_MAIN
