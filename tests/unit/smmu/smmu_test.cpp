// smmu::Smmu on a bench: initiator -> SMMU -> interconnect -> DRAM. Translation, splitting of
// bursts at PA discontinuities, TLB timing, VM isolation under hostile DMA, faults, bypass,
// debug transport and the four-phase path.
#include "models/smmu/smmu.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "models/core/sideband.h"
#include "models/mem/dram.h"
#include "models/mem/interconnect.h"
#include "tests/support/bench.h"

using namespace sc_core;
using vtoe::core::SidebandExtension;
using vtoe::mem::Dram;
using vtoe::mem::DramParams;
using vtoe::mem::Interconnect;
using vtoe::smmu::Fault;
using vtoe::smmu::FaultKind;
using vtoe::smmu::kPageSize;
using vtoe::smmu::Perm;
using vtoe::smmu::Smmu;
using vtoe::smmu::SmmuParams;
using vtoe::smmu::Stage2Table;
using vtoe::test::counter;
using vtoe::test::Initiator;
using vtoe::test::pattern;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kDramSize = 64 * kMiB;
constexpr std::uint64_t kGuestIpa = 0x8000'0000;  // every guest's RAM starts here (outside DRAM)

SidebandExtension sideband(std::uint32_t stream, std::uint16_t vm) {
  SidebandExtension s;
  s.stream_id = stream;
  s.vm_id = vm;
  s.channel = static_cast<std::uint16_t>(stream);
  return s;
}

// Initiator -> SMMU -> interconnect -> DRAM at [0, 64 MiB). The body runs in the initiator's
// thread.
struct Bench {
  Dram dram;
  Interconnect bus;
  Smmu smmu;
  Initiator init;

  Bench(const SmmuParams& params, std::function<void(Bench&)> body)
      : dram("dram", dram_params()),
        bus("bus"),
        smmu("smmu", params),
        init("init", [this, body = std::move(body)](Initiator&) { body(*this); }) {
    init.socket.bind(smmu.upstream);
    smmu.downstream.bind(bus.in);
    bus.map(0, kDramSize, dram.in, "dram");
  }

  static DramParams dram_params() {
    DramParams p;
    p.size = kDramSize;
    return p;
  }

  // One DMA through the SMMU, tagged with `sb` if given. Checks that the payload comes back as it
  // went in (address, data pointer, length, byte enables).
  tlm::tlm_response_status dma(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                               unsigned len, sc_time& delay,
                               std::optional<SidebandExtension> sb = std::nullopt,
                               std::uint8_t* be = nullptr, unsigned be_len = 0) {
    tlm::tlm_generic_payload gp;
    Initiator::setup(gp, cmd, addr, data, len);
    gp.set_byte_enable_ptr(be);
    gp.set_byte_enable_length(be_len);
    SidebandExtension ext;
    if (sb) {
      ext = *sb;
      gp.set_extension(&ext);
    }
    init.socket->b_transport(gp, delay);
    if (sb) gp.clear_extension(&ext);
    EXPECT_EQ(gp.get_address(), addr) << "address not restored";
    EXPECT_EQ(gp.get_data_ptr(), data) << "data pointer not restored";
    EXPECT_EQ(gp.get_data_length(), len) << "length not restored";
    EXPECT_EQ(gp.get_byte_enable_ptr(), be) << "byte enables not restored";
    return gp.get_response_status();
  }

  // Same, waiting for the delay afterwards; returns the delay.
  std::uint64_t dma_wait(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, unsigned len,
                         std::optional<SidebandExtension> sb, tlm::tlm_response_status expect) {
    sc_time delay = SC_ZERO_TIME;
    EXPECT_EQ(dma(cmd, addr, data, len, delay, sb), expect) << "at 0x" << std::hex << addr;
    wait(delay);
    return delay.value();
  }

  unsigned dbg(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, unsigned len,
               std::optional<SidebandExtension> sb) {
    tlm::tlm_generic_payload gp;
    Initiator::setup(gp, cmd, addr, data, len);
    SidebandExtension ext;
    if (sb) {
      ext = *sb;
      gp.set_extension(&ext);
    }
    const unsigned n = init.socket->transport_dbg(gp);
    if (sb) gp.clear_extension(&ext);
    EXPECT_EQ(gp.get_address(), addr);
    EXPECT_EQ(gp.get_data_length(), len);
    return n;
  }

  std::vector<std::uint8_t> backdoor(std::uint64_t pa, std::size_t len) const {
    std::vector<std::uint8_t> v(len);
    dram.read(pa, v.data(), len);
    return v;
  }
};

std::shared_ptr<Stage2Table> guest_table(const char* name, std::uint64_t pa, std::uint64_t size) {
  auto t = std::make_shared<Stage2Table>(name);
  t->map(kGuestIpa, pa, size, Perm::rw());
  return t;
}

}  // namespace

TEST(Smmu, TranslatesDmaToThePhysicalAddress) {
  bool ran = false;
  Bench bench(SmmuParams{}, [&](Bench& b) {
    b.smmu.set_context(1, guest_table("vm1", 0x10'0000, kMiB), 1);
    auto data = pattern(64, 3);
    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa + 0x123, data.data(), 64, sideband(1, 1),
               tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.backdoor(0x10'0123, 64), data) << "data must land at the PA";
    EXPECT_EQ(b.backdoor(0x123, 64), std::vector<std::uint8_t>(64, 0));

    std::vector<std::uint8_t> back(64, 0xee);
    b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa + 0x123, back.data(), 64, sideband(1, 1),
               tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(back, data);
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
  EXPECT_EQ(counter(bench.smmu.stats(), "transactions"), 2u);
  EXPECT_EQ(counter(bench.smmu.stats(), "pieces"), 2u);
  EXPECT_EQ(counter(bench.smmu.stats(), "bytes"), 128u);
  EXPECT_EQ(counter(bench.dram.stats(), "bytes_written"), 64u);
  EXPECT_TRUE(bench.smmu.faults().empty());
}

TEST(Smmu, SplitsABurstAtAPhysicalDiscontinuity) {
  bool ran = false;
  Bench bench(SmmuParams{}, [&](Bench& b) {
    auto t = std::make_shared<Stage2Table>("vm1");
    t->map(kGuestIpa, 0x30'0000, kPageSize, Perm::rw());               // page 0 -> high
    t->map(kGuestIpa + 0x1000, 0x10'0000, 2 * kPageSize, Perm::rw());  // pages 1-2 -> low
    b.smmu.set_context(1, t, 1);

    // 0x2000 bytes from IPA +0x800: 0x800 bytes to 0x30'0800, then 0x1800 bytes to 0x10'0000.
    auto data = pattern(0x2000, 9);
    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa + 0x800, data.data(), 0x2000, sideband(1, 1),
               tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.backdoor(0x30'0800, 0x800),
              std::vector<std::uint8_t>(data.begin(), data.begin() + 0x800));
    EXPECT_EQ(b.backdoor(0x10'0000, 0x1800),
              std::vector<std::uint8_t>(data.begin() + 0x800, data.end()));
    EXPECT_EQ(counter(b.dram.stats(), "transactions"), 2u) << "one per contiguous piece";
    EXPECT_EQ(counter(b.smmu.stats(), "pieces"), 2u);

    std::vector<std::uint8_t> back(0x2000);
    b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa + 0x800, back.data(), 0x2000, sideband(1, 1),
               tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(back, data);

    // The delay of a split burst is the sum of its pieces: more than one DRAM latency.
    sc_time delay = SC_ZERO_TIME;
    b.dma(tlm::TLM_READ_COMMAND, kGuestIpa + 0xff0, back.data(), 0x20, delay, sideband(1, 1));
    EXPECT_GE(delay.value(), 2 * Bench::dram_params().latency_ps);
    wait(delay);

    // Byte enables survive the split: a repeating 4-byte pattern and a full-length one.
    std::vector<std::uint8_t> ones(32, 0xff);
    std::uint8_t be4[4] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED, TLM_BYTE_DISABLED,
                           TLM_BYTE_ENABLED};
    delay = SC_ZERO_TIME;
    // 32 bytes from IPA +0xff2: 14 to 0x30'0ff2, 18 to 0x10'0000 (overwriting the pattern).
    const auto before_hi = b.backdoor(0x30'0ff2, 14);
    const auto before_lo = b.backdoor(0x10'0000, 18);
    EXPECT_EQ(b.dma(tlm::TLM_WRITE_COMMAND, kGuestIpa + 0xff2, ones.data(), 32, delay,
                    sideband(1, 1), be4, 4),
              tlm::TLM_OK_RESPONSE);
    wait(delay);
    const auto hi = b.backdoor(0x30'0ff2, 14);
    const auto lo = b.backdoor(0x10'0000, 18);
    for (unsigned i = 0; i < 32; ++i) {
      const bool enabled = (i % 4 == 0) || (i % 4 == 3);
      const std::uint8_t got = i < 14 ? hi[i] : lo[i - 14];
      const std::uint8_t old = i < 14 ? before_hi[i] : before_lo[i - 14];
      EXPECT_EQ(got, enabled ? 0xff : old) << "byte " << i;
    }
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
}

TEST(Smmu, TlbMissCostsAWalkAndAHitDoesNot) {
  SmmuParams p;
  p.walk_latency_ps = 100'000;
  p.hit_latency_ps = 2'000;
  bool ran = false;
  Bench bench(p, [&](Bench& b) {
    auto t = guest_table("vm1", 0x10'0000, kMiB);
    b.smmu.set_context(1, t, 1);
    std::uint8_t buf[8] = {};
    const auto miss =
        b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa, buf, 8, sideband(1, 1), tlm::TLM_OK_RESPONSE);
    wait(1, SC_US);  // let the DRAM go idle so both accesses see the same memory timing
    const auto hit = b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa + 8, buf, 8, sideband(1, 1),
                                tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(miss - hit, 100'000u - 2'000u);
    EXPECT_EQ(counter(b.smmu.stats(), "tlb_misses"), 1u);
    EXPECT_EQ(counter(b.smmu.stats(), "tlb_hits"), 1u);

    // A burst over two fresh pages walks twice.
    wait(1, SC_US);
    const auto two = b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa + 0x1ffc, buf, 8, sideband(1, 1),
                                tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(two - hit, 2 * 100'000u - 2'000u);

    // set_context flushes the TLB: the first page misses again.
    b.smmu.set_context(1, t, 1);
    EXPECT_EQ(b.smmu.tlb_occupancy(1), 0u);
    wait(1, SC_US);
    const auto again =
        b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa, buf, 8, sideband(1, 1), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(again, miss);
    // So does tlb_invalidate.
    b.smmu.tlb_invalidate(1);
    wait(1, SC_US);
    EXPECT_EQ(
        b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa, buf, 8, sideband(1, 1), tlm::TLM_OK_RESPONSE),
        miss);
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
}

TEST(Smmu, WalksThroughMemoryReadTwoDescriptorsAndContendForTheDram) {
  SmmuParams p;
  p.walk_latency_ps = 1;  // not used once walks read memory
  bool ran = false;
  Bench bench(p, [&](Bench& b) {
    b.smmu.set_walk_memory(8 * kMiB, kMiB);
    b.smmu.set_context(1, guest_table("vm1", 0x10'0000, kMiB), 1);
    std::uint8_t buf[8] = {};
    const auto miss =
        b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa, buf, 8, sideband(1, 1), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(counter(b.smmu.stats(), "walk_reads"), 2u);
    EXPECT_EQ(counter(b.dram.stats(), "transactions"), 3u);  // two descriptors, then the data
    wait(1, SC_US);
    const auto hit = b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa + 8, buf, 8, sideband(1, 1),
                                tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(counter(b.smmu.stats(), "walk_reads"), 2u);
    // The walk costs two dependent DRAM reads: each one the DRAM latency at least.
    EXPECT_GE(miss - hit, 2 * Bench::dram_params().latency_ps);

    // A DRAM kept busy by another master makes the walk slower too.
    wait(1, SC_US);
    b.smmu.set_context(1, guest_table("vm1", 0x10'0000, kMiB), 1);  // flush
    std::vector<std::uint8_t> big(64 * 1024);
    sc_time busy = SC_ZERO_TIME;
    b.dma(tlm::TLM_READ_COMMAND, kGuestIpa + 0x8'0000, big.data(), 64 * 1024, busy, sideband(1, 1));
    const auto contended =
        b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa, buf, 8, sideband(1, 1), tlm::TLM_OK_RESPONSE);
    EXPECT_GT(contended, miss);
    ran = true;
  });
  sc_start();
  EXPECT_TRUE(ran);
}

TEST(Smmu, TlbEvictsTheLeastRecentlyUsedEntry) {
  SmmuParams p;
  p.tlb_entries = 2;
  bool ran = false;
  Bench bench(p, [&](Bench& b) {
    b.smmu.set_context(1, guest_table("vm1", 0x10'0000, kMiB), 1);
    std::uint8_t buf[4] = {};
    auto touch = [&](unsigned page) {
      b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa + page * kPageSize, buf, 4, sideband(1, 1),
                 tlm::TLM_OK_RESPONSE);
    };
    auto misses = [&] { return counter(b.smmu.stats(), "tlb_misses"); };
    touch(0);  // miss
    touch(1);  // miss
    touch(0);  // hit: 1 is now least recently used
    touch(2);  // miss, evicts 1
    EXPECT_EQ(misses(), 3u);
    touch(0);  // hit
    EXPECT_EQ(misses(), 3u);
    touch(1);  // miss, evicts 2
    EXPECT_EQ(misses(), 4u);
    touch(2);  // miss
    EXPECT_EQ(misses(), 5u);
    EXPECT_EQ(counter(b.smmu.stats(), "tlb_hits"), 2u);
    EXPECT_EQ(b.smmu.tlb_occupancy(1), 2u);
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
}

// Two VMs with disjoint memory. VM A (stream 1) attacks VM B (stream 2): nothing of B's memory
// changes, nothing of B's memory is read, every attempt faults and is reported.
TEST(Smmu, IsolatesVmsUnderHostileDma) {
  constexpr std::uint64_t kPaA = 0x100'0000;
  constexpr std::uint64_t kPaB = 0x200'0000;
  constexpr std::uint64_t kAlias = 0x9000'0000;  // in B's table only
  constexpr std::uint32_t kStreamA = 1, kStreamB = 2;
  constexpr std::uint16_t kVmA = 1, kVmB = 2;
  std::vector<Fault> reported;
  std::size_t expected_faults = 0;
  bool ran = false;

  Bench bench(SmmuParams{}, [&](Bench& b) {
    auto table_a = guest_table("vm1", kPaA, kMiB);
    auto table_b = guest_table("vm2", kPaB, kMiB);
    table_b->map(kAlias, kPaB, kMiB, Perm::rw());
    b.smmu.set_context(kStreamA, table_a, kVmA);
    b.smmu.set_context(kStreamB, table_b, kVmB);
    b.smmu.set_fault_callback([&](const Fault& f) { reported.push_back(f); });

    const auto fill_a = pattern(kMiB, 0x11);
    const auto fill_b = pattern(kMiB, 0x5a);
    b.dram.write(kPaA, fill_a.data(), kMiB);
    b.dram.write(kPaB, fill_b.data(), kMiB);

    // B reaches its own memory through both of its IPAs.
    std::uint8_t probe[16];
    b.dma_wait(tlm::TLM_READ_COMMAND, kAlias + 0x40, probe, 16, sideband(kStreamB, kVmB),
               tlm::TLM_OK_RESPONSE);
    EXPECT_TRUE(std::equal(probe, probe + 16, fill_b.begin() + 0x40));

    // A: an IPA unmapped in its table.
    std::vector<std::uint8_t> junk(256, 0xcc);
    b.dma_wait(tlm::TLM_WRITE_COMMAND, 0x7000'0000, junk.data(), 256, sideband(kStreamA, kVmA),
               tlm::TLM_ADDRESS_ERROR_RESPONSE);
    ++expected_faults;
    auto f = b.smmu.pop_fault();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->stream, kStreamA);
    EXPECT_EQ(f->vm, kVmA);
    EXPECT_EQ(f->address, 0x7000'0000u);
    EXPECT_EQ(f->fault_address, 0x7000'0000u);
    EXPECT_EQ(f->length, 256u);
    EXPECT_TRUE(f->write);
    EXPECT_EQ(f->kind, FaultKind::Unmapped);
    EXPECT_EQ(f->time_ps, vtoe::core::now_ps())
        << "detected after the walk, at the end of the delay";

    // A: the IPA at which B's table maps B's memory.
    b.dma_wait(tlm::TLM_WRITE_COMMAND, kAlias + 0x100, junk.data(), 256, sideband(kStreamA, kVmA),
               tlm::TLM_ADDRESS_ERROR_RESPONSE);
    ++expected_faults;
    f = b.smmu.pop_fault();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->stream, kStreamA);
    EXPECT_EQ(f->vm, kVmA);
    EXPECT_EQ(f->address, kAlias + 0x100);
    EXPECT_EQ(f->kind, FaultKind::Unmapped);

    // The storm: 1000 random hostile DMAs from A, reads and writes.
    std::mt19937_64 rng(2024);
    auto uni = [&](std::uint64_t lo, std::uint64_t hi) {
      return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
    };
    std::vector<std::uint8_t> buf(8192);
    for (int i = 0; i < 1000; ++i) {
      const unsigned len = static_cast<unsigned>(uni(1, 8192));
      std::uint64_t addr = 0;
      std::uint64_t first_fault = 0;
      switch (uni(0, 5)) {
        case 0:  // B's memory through B's alias IPA
          addr = kAlias + uni(0, kMiB - 1);
          first_fault = addr;
          break;
        case 1:  // B's memory by its PA, used as an IPA
          addr = kPaB + uni(0, kMiB - 1);
          first_fault = addr;
          break;
        case 2:  // from the end of A's RAM into what follows
          addr = kGuestIpa + kMiB - uni(1, len > 1 ? len - 1 : 1);
          if (len == 1) addr = kGuestIpa + kMiB;
          first_fault = kGuestIpa + kMiB;
          break;
        case 3:  // from below A's RAM into it
          addr = kGuestIpa - uni(1, 4096);
          first_fault = addr;
          break;
        case 4:  // anywhere in the IPA space but A's RAM
          do {
            addr = rng();
          } while (addr + len > kGuestIpa && addr < kGuestIpa + kMiB);
          first_fault = addr;
          break;
        default:  // DRAM-looking addresses, A's own PA included
          addr = uni(0, kDramSize - 1);
          first_fault = addr;
          break;
      }
      const bool write = uni(0, 2) != 0;
      std::fill(buf.begin(), buf.begin() + len, static_cast<std::uint8_t>(0xe0 + i % 16));
      const std::uint32_t before = static_cast<std::uint32_t>(expected_faults);
      b.dma_wait(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, addr, buf.data(), len,
                 sideband(kStreamA, kVmA), tlm::TLM_ADDRESS_ERROR_RESPONSE);
      ++expected_faults;
      ASSERT_EQ(reported.size(), before + 1u) << "DMA " << i << " at 0x" << std::hex << addr;
      const Fault& r = reported.back();
      EXPECT_EQ(r.stream, kStreamA);
      EXPECT_EQ(r.vm, kVmA);
      EXPECT_EQ(r.address, addr);
      EXPECT_EQ(r.write, write);
      EXPECT_EQ(r.kind, FaultKind::Unmapped);
      if (addr + len > addr) {
        EXPECT_EQ(r.fault_address, first_fault) << "DMA " << i;
      }
      if (!write) {  // a faulting read returns nothing
        EXPECT_TRUE(std::all_of(buf.begin(), buf.begin() + len,
                                [&](std::uint8_t v) { return v == 0xe0 + i % 16; }))
            << "DMA " << i;
      }
    }

    EXPECT_EQ(b.backdoor(kPaB, kMiB), fill_b) << "VM B's memory changed";
    EXPECT_EQ(b.backdoor(kPaA, kMiB), fill_a) << "a faulting burst wrote part of VM A's memory";
    EXPECT_EQ(counter(b.dram.stats(), "bytes_written"), 0u) << "a faulting DMA reached DRAM";
    EXPECT_EQ(counter(b.dram.stats(), "bytes_read"), 16u) << "only B's own probe read DRAM";
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
  EXPECT_EQ(reported.size(), expected_faults);
  EXPECT_EQ(counter(bench.smmu.stats(), "faults_unmapped"), expected_faults);
  EXPECT_EQ(counter(bench.smmu.stats(), "transactions"), 1u);
  // The queue keeps the oldest records up to its depth (2 were popped above).
  const std::size_t depth = SmmuParams{}.fault_queue_depth;
  EXPECT_EQ(bench.smmu.faults().size(), depth);
  EXPECT_EQ(counter(bench.smmu.stats(), "fault_records_dropped"), expected_faults - 2 - depth);
}

TEST(Smmu, WriteToAReadOnlyMappingIsAPermissionFault) {
  bool ran = false;
  Bench bench(SmmuParams{}, [&](Bench& b) {
    auto t = std::make_shared<Stage2Table>("vm1");
    t->map(kGuestIpa, 0x10'0000, kPageSize, Perm::rw());
    t->map(kGuestIpa + kPageSize, 0x10'1000, kPageSize, Perm::ro());
    b.smmu.set_context(3, t, 4);
    const auto fill = pattern(2 * kPageSize, 1);
    b.dram.write(0x10'0000, fill.data(), fill.size());

    std::vector<std::uint8_t> data(64, 0xab);
    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa + kPageSize + 8, data.data(), 64, sideband(3, 4),
               tlm::TLM_ADDRESS_ERROR_RESPONSE);
    auto f = b.smmu.pop_fault();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FaultKind::Permission);
    EXPECT_EQ(f->stream, 3u);
    EXPECT_EQ(f->vm, 4u);
    EXPECT_TRUE(f->write);
    EXPECT_EQ(f->fault_address, kGuestIpa + kPageSize + 8);

    // A burst from the writable page into the read-only one is refused whole.
    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa + kPageSize - 32, data.data(), 64, sideband(3, 4),
               tlm::TLM_ADDRESS_ERROR_RESPONSE);
    f = b.smmu.pop_fault();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FaultKind::Permission);
    EXPECT_EQ(f->address, kGuestIpa + kPageSize - 32);
    EXPECT_EQ(f->fault_address, kGuestIpa + kPageSize);
    EXPECT_EQ(b.backdoor(0x10'0000, fill.size()), fill);

    // Reading the read-only page is fine, and the cached entry keeps refusing writes.
    b.dma_wait(tlm::TLM_READ_COMMAND, kGuestIpa + kPageSize + 8, data.data(), 64, sideband(3, 4),
               tlm::TLM_OK_RESPONSE);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), fill.begin() + kPageSize + 8));
    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa + kPageSize, data.data(), 4, sideband(3, 4),
               tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_GT(counter(b.smmu.stats(), "tlb_hits"), 0u);
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
  EXPECT_EQ(counter(bench.smmu.stats(), "faults_permission"), 3u);
  EXPECT_EQ(counter(bench.smmu.stats(), "faults_unmapped"), 0u);
  EXPECT_EQ(counter(bench.dram.stats(), "bytes_written"), 0u);
}

TEST(Smmu, NoSidebandOrNoContextIsAFault) {
  bool ran = false;
  Bench bench(SmmuParams{}, [&](Bench& b) {
    b.smmu.set_context(1, guest_table("vm1", 0x10'0000, kMiB), 1);
    std::uint8_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};

    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa, buf, 8, std::nullopt,
               tlm::TLM_ADDRESS_ERROR_RESPONSE);
    auto f = b.smmu.pop_fault();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FaultKind::NoSideband);
    EXPECT_EQ(f->stream, Fault::kNoStream);
    EXPECT_EQ(f->vm, SidebandExtension::kHost);

    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa, buf, 8, sideband(7, 9),
               tlm::TLM_ADDRESS_ERROR_RESPONSE);
    f = b.smmu.pop_fault();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FaultKind::NoContext);
    EXPECT_EQ(f->stream, 7u);
    EXPECT_EQ(f->vm, 9u) << "without a context, the sideband's VM is reported";

    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa, buf, 8, sideband(1, 1), tlm::TLM_OK_RESPONSE);
    b.smmu.clear_context(1);
    EXPECT_FALSE(b.smmu.has_context(1));
    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa, buf, 8, sideband(1, 1),
               tlm::TLM_ADDRESS_ERROR_RESPONSE);
    f = b.smmu.pop_fault();
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, FaultKind::NoContext);
    EXPECT_FALSE(b.smmu.pop_fault());
    EXPECT_THROW(b.smmu.set_context(2, nullptr, 2), std::invalid_argument);
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
  EXPECT_EQ(counter(bench.smmu.stats(), "faults_no_sideband"), 1u);
  EXPECT_EQ(counter(bench.smmu.stats(), "faults_no_context"), 2u);
  EXPECT_EQ(counter(bench.dram.stats(), "bytes_written"), 8u);
}

TEST(Smmu, BypassIsIdentity) {
  bool ran = false;
  Bench bench(SmmuParams{}, [&](Bench& b) {
    b.smmu.set_bypass(true);
    auto data = pattern(100, 5);
    const auto d = b.dma_wait(tlm::TLM_WRITE_COMMAND, 0x1234, data.data(), 100, std::nullopt,
                              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.backdoor(0x1234, 100), data);
    // Identity even for a stream with no context, across pages, and no walk latency.
    b.dma_wait(tlm::TLM_WRITE_COMMAND, 0x2ff0, data.data(), 100, sideband(5, 5),
               tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.backdoor(0x2ff0, 100), data);
    wait(1, SC_US);
    const auto d2 = b.dma_wait(tlm::TLM_WRITE_COMMAND, 0x1234, data.data(), 100, std::nullopt,
                               tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(d2, d);
    // Exactly the DRAM's own time (the bus adds none): 100 bytes at 6.4 Gbit/s plus its latency.
    EXPECT_EQ(d, vtoe::core::transfer_time_ps(100, 6.4e9) + Bench::dram_params().latency_ps);
    std::uint8_t out[4] = {};
    EXPECT_EQ(b.dbg(tlm::TLM_READ_COMMAND, 0x1234, out, 4, std::nullopt), 4u);
    EXPECT_TRUE(std::equal(out, out + 4, data.begin()));
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
  EXPECT_EQ(counter(bench.smmu.stats(), "bypassed"), 3u);
  EXPECT_EQ(counter(bench.smmu.stats(), "tlb_misses"), 0u);
  EXPECT_TRUE(bench.smmu.faults().empty());
}

TEST(Smmu, DebugTransportTranslatesWithoutTiming) {
  bool ran = false;
  Bench bench(SmmuParams{}, [&](Bench& b) {
    auto t = std::make_shared<Stage2Table>("vm1");
    t->map(kGuestIpa, 0x30'0000, kPageSize, Perm::rw());
    t->map(kGuestIpa + kPageSize, 0x10'0000, kPageSize, Perm::rw());
    b.smmu.set_context(1, t, 1);
    auto data = pattern(0x100, 7);
    EXPECT_EQ(b.dbg(tlm::TLM_WRITE_COMMAND, kGuestIpa + 0xf80, data.data(), 0x100, sideband(1, 1)),
              0x100u);
    EXPECT_EQ(b.backdoor(0x30'0f80, 0x80),
              std::vector<std::uint8_t>(data.begin(), data.begin() + 0x80));
    EXPECT_EQ(b.backdoor(0x10'0000, 0x80),
              std::vector<std::uint8_t>(data.begin() + 0x80, data.end()));
    std::vector<std::uint8_t> back(0x100);
    EXPECT_EQ(b.dbg(tlm::TLM_READ_COMMAND, kGuestIpa + 0xf80, back.data(), 0x100, sideband(1, 1)),
              0x100u);
    EXPECT_EQ(back, data);
    // Unmapped: nothing; running into unmapped: the translatable prefix only.
    EXPECT_EQ(b.dbg(tlm::TLM_READ_COMMAND, 0x1000, back.data(), 16, sideband(1, 1)), 0u);
    EXPECT_EQ(b.dbg(tlm::TLM_READ_COMMAND, kGuestIpa + 0x1ff0, back.data(), 0x40, sideband(1, 1)),
              0x10u);
    EXPECT_EQ(b.dbg(tlm::TLM_READ_COMMAND, kGuestIpa, back.data(), 16, std::nullopt), 0u);
    EXPECT_EQ(vtoe::core::now_ps(), 0u);
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
  EXPECT_EQ(counter(bench.smmu.stats(), "tlb_misses"), 0u);
  EXPECT_EQ(counter(bench.smmu.stats(), "transactions"), 0u);
  EXPECT_EQ(counter(bench.dram.stats(), "transactions"), 0u);
  EXPECT_TRUE(bench.smmu.faults().empty()) << "debug accesses leave no fault records";
}

TEST(Smmu, FaultQueueIsBoundedAndFifo) {
  SmmuParams p;
  p.fault_queue_depth = 4;
  int callbacks = 0;
  bool ran = false;
  Bench bench(p, [&](Bench& b) {
    b.smmu.set_fault_callback([&](const Fault&) { ++callbacks; });
    b.smmu.set_context(1, guest_table("vm1", 0x10'0000, kMiB), 1);
    std::uint8_t buf[4] = {};
    for (std::uint64_t i = 0; i < 6; ++i) {
      b.dma_wait(tlm::TLM_READ_COMMAND, 0x1000 * i, buf, 4, sideband(1, 1),
                 tlm::TLM_ADDRESS_ERROR_RESPONSE);
    }
    EXPECT_EQ(b.smmu.faults().size(), 4u);
    for (std::uint64_t i = 0; i < 4; ++i) {
      auto f = b.smmu.pop_fault();
      ASSERT_TRUE(f);
      EXPECT_EQ(f->address, 0x1000 * i);
      EXPECT_FALSE(f->write);
    }
    EXPECT_FALSE(b.smmu.pop_fault());
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
  EXPECT_EQ(callbacks, 6);
  EXPECT_EQ(counter(bench.smmu.stats(), "fault_records_dropped"), 2u);
  EXPECT_EQ(counter(bench.smmu.stats(), "faults_unmapped"), 6u);
}

// The hypervisor changes a table the SMMU is using: a cached translation is never used after it.
TEST(Smmu, TableChangesAreSeenThroughTheTlb) {
  bool ran = false;
  Bench bench(SmmuParams{}, [&](Bench& b) {
    auto t = guest_table("vm1", 0x10'0000, kPageSize);
    b.smmu.set_context(1, t, 1);
    auto data = pattern(16, 2);
    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa, data.data(), 16, sideband(1, 1),
               tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.smmu.tlb_occupancy(1), 1u);
    t->unmap(kGuestIpa, kPageSize);
    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa, data.data(), 16, sideband(1, 1),
               tlm::TLM_ADDRESS_ERROR_RESPONSE);
    t->map(kGuestIpa, 0x20'0000, kPageSize, Perm::rw());
    b.dma_wait(tlm::TLM_WRITE_COMMAND, kGuestIpa, data.data(), 16, sideband(1, 1),
               tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.backdoor(0x20'0000, 16), data);
    ran = true;
  });
  sc_start();
  ASSERT_TRUE(ran);
  EXPECT_EQ(counter(bench.smmu.stats(), "faults_unmapped"), 1u);
}

namespace {

// An initiator speaking the non-blocking base protocol.
class NbInitiator : public sc_module {
 public:
  tlm_utils::simple_initiator_socket<NbInitiator> socket;
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  std::uint64_t response_time = 0;
  tlm::tlm_sync_enum sync = tlm::TLM_ACCEPTED;

  SC_HAS_PROCESS(NbInitiator);
  NbInitiator(const sc_module_name& name, std::uint64_t addr, std::vector<std::uint8_t> data,
              std::uint32_t stream = 1)
      : sc_module(name), socket("socket"), addr_(addr), data_(std::move(data)), stream_(stream) {
    socket.register_nb_transport_bw(this, &NbInitiator::nb_transport_bw);
    SC_THREAD(run);
  }

 private:
  void run() {
    tlm::tlm_generic_payload gp;
    Initiator::setup(gp, tlm::TLM_WRITE_COMMAND, addr_, data_.data(),
                     static_cast<unsigned>(data_.size()));
    SidebandExtension ext = sideband(stream_, 1);
    gp.set_extension(&ext);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_time delay = SC_ZERO_TIME;
    sync = socket->nb_transport_fw(gp, phase, delay);
    if (sync == tlm::TLM_COMPLETED) {  // early completion: the response is due after `delay`
      response_time = sc_time_stamp().value() + delay.value();
    } else {
      wait(done_);
    }
    status = gp.get_response_status();
    EXPECT_EQ(gp.get_address(), addr_);
    gp.clear_extension(&ext);
  }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase& phase,
                                     sc_time& delay) {
    EXPECT_EQ(phase, tlm::BEGIN_RESP);
    response_time = sc_time_stamp().value() + delay.value();
    done_.notify(delay);
    phase = tlm::END_RESP;
    return tlm::TLM_COMPLETED;
  }

  std::uint64_t addr_;
  std::vector<std::uint8_t> data_;
  std::uint32_t stream_;
  sc_event done_;
};

}  // namespace

TEST(Smmu, NbTransportTranslatesAndPassesThePhasesThrough) {
  Dram dram("dram", Bench::dram_params());
  Interconnect bus("bus");
  Smmu smmu("smmu");
  const auto data = pattern(32, 4);
  NbInitiator init("init", kGuestIpa + 0x40, data);
  init.socket.bind(smmu.upstream);
  smmu.downstream.bind(bus.in);
  bus.map(0, kDramSize, dram.in, "dram");
  smmu.set_context(1, guest_table("vm1", 0x10'0000, kMiB), 1);
  sc_start();
  // The loosely timed DRAM completes at BEGIN_REQ; the SMMU passes that answer back.
  EXPECT_EQ(init.sync, tlm::TLM_COMPLETED);
  EXPECT_EQ(init.status, tlm::TLM_OK_RESPONSE);
  std::vector<std::uint8_t> got(32);
  dram.read(0x10'0040, got.data(), 32);
  EXPECT_EQ(got, data);
  EXPECT_GE(init.response_time, SmmuParams{}.walk_latency_ps);
  EXPECT_EQ(counter(smmu.stats(), "transactions"), 1u);
}

TEST(Smmu, NbTransportFaultCompletesAtOnceWithNothingForwarded) {
  Dram dram("dram", Bench::dram_params());
  Interconnect bus("bus");
  Smmu smmu("smmu");
  NbInitiator init("init", kGuestIpa + 2 * kMiB, pattern(32, 9));  // outside the VM's 1 MiB
  init.socket.bind(smmu.upstream);
  smmu.downstream.bind(bus.in);
  bus.map(0, kDramSize, dram.in, "dram");
  smmu.set_context(1, guest_table("vm1", 0x10'0000, kMiB), 1);
  sc_start();
  EXPECT_EQ(init.sync, tlm::TLM_COMPLETED);
  EXPECT_EQ(init.status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(counter(dram.stats(), "transactions"), 0u);
  EXPECT_EQ(counter(smmu.stats(), "faults_unmapped"), 1u);
  ASSERT_EQ(smmu.faults().size(), 1u);
  EXPECT_EQ(smmu.faults().front().stream, 1u);
}

VTOE_TEST_MAIN
