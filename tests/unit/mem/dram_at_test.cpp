// mem::Dram in approximately-timed mode: row hits and misses, bank parallelism, refresh,
// back-pressure (END_REQ withheld), response exclusion, data through the four-phase protocol,
// b_transport contending with four-phase traffic; and the LT mode's numbers unchanged.
#include <gtest/gtest.h>

#include <vector>

#include "models/mem/dram.h"
#include "tests/support/bench.h"
#include "tests/support/nb_initiator.h"

using namespace sc_core;
using vtoe::mem::Dram;
using vtoe::mem::DramParams;
using vtoe::test::counter;
using vtoe::test::Initiator;
using vtoe::test::NbInitiator;
using vtoe::test::pattern;

namespace {

constexpr std::uint64_t kNs = 1000;  // ps
constexpr std::uint64_t kRow = 2048;
constexpr std::uint64_t kBanks = 8;
// 64 bytes at 6.4 Gbit/s: 80 ns on the data bus.
constexpr std::uint64_t k64B = 80 * kNs;
constexpr std::uint64_t kHit = 15 * kNs;
constexpr std::uint64_t kMiss = 45 * kNs;

DramParams at_params() {
  DramParams p;
  p.size = 64ull << 20;
  p.at = true;
  return p;
}

// Address of `row` (rows interleave over the banks: bank = row % 8).
constexpr std::uint64_t row_addr(std::uint64_t row) { return row * kRow; }

}  // namespace

TEST(DramAt, RowHitIsCheaperThanRowMiss) {
  Dram dram("dram", at_params());
  NbInitiator init("init", [&](NbInitiator& self) {
    std::vector<std::uint8_t> buf(64);
    // Each request after the previous one's response: no queueing, latency = row access + burst.
    for (std::uint64_t addr : {row_addr(0), row_addr(0) + 64, row_addr(kBanks)}) {
      self.issue(tlm::TLM_READ_COMMAND, addr, buf.data(), 64);
      self.wait_all();
    }
  });
  init.socket.bind(dram.in);
  sc_start();
  const auto& r = init.records();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].begin_resp - r[0].begin_req, kMiss + k64B);  // closed bank: miss
  EXPECT_EQ(r[1].begin_resp - r[1].begin_req, kHit + k64B);   // same row: hit
  EXPECT_EQ(r[2].begin_resp - r[2].begin_req, kMiss + k64B);  // same bank, other row: miss
  for (const auto& rec : r) {
    EXPECT_EQ(rec.end_req, rec.begin_req);  // accept delay 0, queue empty
    EXPECT_EQ(rec.status, tlm::TLM_OK_RESPONSE);
  }
  EXPECT_EQ(counter(dram.stats(), "row_hits"), 1u);
  EXPECT_EQ(counter(dram.stats(), "row_misses"), 2u);
  EXPECT_EQ(counter(dram.stats(), "transactions"), 3u);
  EXPECT_EQ(counter(dram.stats(), "busy_ps"), 3 * k64B);
  EXPECT_EQ(init.pool().in_use(), 0u);  // the DRAM released every payload it acquired
  bool has_peq = false;
  for (const sc_object* child : dram.get_child_objects()) {
    has_peq |= std::string(child->basename()).find("peq_with_cb") != std::string::npos;
  }
  EXPECT_TRUE(has_peq);
}

TEST(DramAt, TwoBanksOverlapWhileOneBankSerialises) {
  Dram other("other", at_params());
  Dram same("same", at_params());
  std::vector<std::uint8_t> a(64), b(64), c(64), d(64);
  NbInitiator i_other("i_other", [&](NbInitiator& self) {
    self.issue(tlm::TLM_READ_COMMAND, row_addr(0), a.data(), 64);
    self.issue(tlm::TLM_READ_COMMAND, row_addr(1), b.data(), 64);  // bank 1
    self.wait_all();
  });
  NbInitiator i_same("i_same", [&](NbInitiator& self) {
    self.issue(tlm::TLM_READ_COMMAND, row_addr(0), c.data(), 64);
    self.issue(tlm::TLM_READ_COMMAND, row_addr(kBanks), d.data(), 64);  // bank 0, other row
    self.wait_all();
  });
  i_other.socket.bind(other.in);
  i_same.socket.bind(same.in);
  sc_start();
  // Bank 1 activates while bank 0's data is on the bus; its burst follows bank 0's on the bus.
  EXPECT_EQ(i_other.records()[0].begin_resp, kMiss + k64B);
  EXPECT_EQ(i_other.records()[1].begin_resp, kMiss + 2 * k64B);
  // Bank 0 starts its second row only when its first burst is out.
  EXPECT_EQ(i_same.records()[0].begin_resp, kMiss + k64B);
  EXPECT_EQ(i_same.records()[1].begin_resp, 2 * (kMiss + k64B));
  EXPECT_LT(i_other.records()[1].begin_resp, i_same.records()[1].begin_resp);
}

TEST(DramAt, AFourKiBBurstCostsAboutWhatLtCosts) {
  // The defaults: a 4 KiB burst spans two rows (two banks), the second activates during the first
  // row's transfer: miss + transfer = 45 ns + 5.12 us, against LT's 5.12 us + 50 ns.
  Dram at("at", at_params());
  DramParams lt_p;
  lt_p.size = 64ull << 20;
  Dram lt("lt", lt_p);
  sc_time d_at = SC_ZERO_TIME, d_lt = SC_ZERO_TIME;
  Initiator i_at("i_at", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(4096);
    self.access(tlm::TLM_READ_COMMAND, 0, buf.data(), 4096, d_at);
  });
  Initiator i_lt("i_lt", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(4096);
    self.access(tlm::TLM_READ_COMMAND, 0, buf.data(), 4096, d_lt);
  });
  i_at.socket.bind(at.in);
  i_lt.socket.bind(lt.in);
  sc_start();
  EXPECT_EQ(d_at.value(), kMiss + 5'120 * kNs);
  EXPECT_EQ(d_lt.value(), 5'120 * kNs + 50 * kNs);
  EXPECT_EQ(counter(at.stats(), "row_misses"), 2u);
}

TEST(DramAt, RefreshDelaysARequestInItsWindowAndClosesTheRow) {
  // Refresh every 7.8 us for 350 ns (the defaults): the first window is [7.8 us, 8.15 us).
  Dram dram("dram", at_params());
  NbInitiator init("init", [&](NbInitiator& self) {
    std::vector<std::uint8_t> buf(64);
    self.issue(tlm::TLM_READ_COMMAND, 0, buf.data(), 64);  // opens row 0 at t = 0
    self.wait_all();
    wait(sc_time::from_value(7'900 * kNs) - sc_time_stamp());
    self.issue(tlm::TLM_READ_COMMAND, 64, buf.data(), 64);  // row 0 again, inside the window
    self.wait_all();
    self.issue(tlm::TLM_READ_COMMAND, 128, buf.data(), 64);  // after it: the row is open again
    self.wait_all();
  });
  init.socket.bind(dram.in);
  sc_start();
  const auto& r = init.records();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[1].begin_req, 7'900 * kNs);
  // Waits for the window's end, then misses: the refresh closed row 0.
  EXPECT_EQ(r[1].begin_resp, 8'150 * kNs + kMiss + k64B);
  EXPECT_EQ(r[2].begin_resp - r[2].begin_req, kHit + k64B);
  EXPECT_EQ(counter(dram.stats(), "refreshes"), 1u);
  EXPECT_EQ(counter(dram.stats(), "row_misses"), 2u);
  EXPECT_EQ(counter(dram.stats(), "row_hits"), 1u);
}

TEST(DramAt, NoRefreshWhenTheIntervalIsZero) {
  DramParams p = at_params();
  p.refresh_interval_ps = 0;
  Dram dram("dram", p);
  NbInitiator init("init", [&](NbInitiator& self) {
    std::vector<std::uint8_t> buf(64);
    self.issue(tlm::TLM_READ_COMMAND, 0, buf.data(), 64);
    self.wait_all();
    wait(sc_time::from_value(7'900 * kNs) - sc_time_stamp());
    self.issue(tlm::TLM_READ_COMMAND, 64, buf.data(), 64);
    self.wait_all();
  });
  init.socket.bind(dram.in);
  sc_start();
  EXPECT_EQ(init.records()[1].begin_resp - init.records()[1].begin_req, kHit + k64B);
  EXPECT_EQ(counter(dram.stats(), "refreshes"), 0u);
}

TEST(DramAt, EndReqIsWithheldWhenTheQueueIsFull) {
  DramParams p = at_params();
  p.queue_depth = 2;
  Dram dram("dram", p);
  std::vector<std::vector<std::uint8_t>> bufs(4, std::vector<std::uint8_t>(64));
  NbInitiator init("init", [&](NbInitiator& self) {
    for (std::uint64_t i = 0; i < 4; ++i) {
      self.issue(tlm::TLM_READ_COMMAND, row_addr(i), bufs[i].data(), 64);  // banks 0..3
    }
    self.wait_all();
  });
  init.socket.bind(dram.in);
  sc_start();
  const auto& r = init.records();
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].end_req, 0u);
  EXPECT_EQ(r[1].end_req, 0u);
  EXPECT_EQ(r[2].begin_req, 0u);
  // The third is accepted only when the first's response begins, the fourth (sent after the
  // third's END_REQ) when the second's does.
  EXPECT_EQ(r[0].begin_resp, kMiss + k64B);
  EXPECT_EQ(r[2].end_req, r[0].begin_resp);
  EXPECT_EQ(r[1].begin_resp, kMiss + 2 * k64B);
  EXPECT_EQ(r[3].begin_req, r[2].end_req);
  EXPECT_EQ(r[3].end_req, r[1].begin_resp);
  // Accepted late, so activated late: the third's bank opens at 125 ns, its burst follows the
  // second's on the bus; the fourth's bank opens at 205 ns and its burst follows the third's.
  EXPECT_EQ(r[2].begin_resp, kMiss + 3 * k64B);
  EXPECT_EQ(r[3].begin_resp, kMiss + 4 * k64B);
  EXPECT_EQ(counter(dram.stats(), "backpressure"), 2u);
  const auto* q = vtoe::test::accumulator(dram.stats(), "queue_depth");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->count(), 4u);
  EXPECT_DOUBLE_EQ(q->max(), 2.0);
}

TEST(DramAt, OneResponseAtATimeUntilEndResp) {
  Dram dram("dram", at_params());
  std::vector<std::uint8_t> a(64), b(64);
  NbInitiator init("init", [&](NbInitiator& self) {
    self.respond(NbInitiator::Respond::Accepted, sc_time::from_value(100 * kNs));
    self.issue(tlm::TLM_READ_COMMAND, row_addr(0), a.data(), 64);
    self.issue(tlm::TLM_READ_COMMAND, row_addr(1), b.data(), 64);
    self.wait_all();
  });
  init.socket.bind(dram.in);
  sc_start();
  // The second's data is done at 205 ns, but its BEGIN_RESP waits for the first's END_RESP.
  EXPECT_EQ(init.records()[0].begin_resp, kMiss + k64B);
  EXPECT_EQ(init.records()[1].begin_resp, kMiss + k64B + 100 * kNs);
  EXPECT_EQ(init.pool().in_use(), 0u);
}

TEST(DramAt, DataSurvivesTheFourPhaseProtocol) {
  DramParams p = at_params();
  p.accept_delay_ps = 3 * kNs;
  p.response_delay_ps = 7 * kNs;
  Dram dram("dram", p);
  constexpr int kBursts = 12;
  std::vector<std::vector<std::uint8_t>> out(kBursts), in(kBursts);
  NbInitiator init("init", [&](NbInitiator& self) {
    self.respond(NbInitiator::Respond::Updated);
    for (int i = 0; i < kBursts; ++i) {
      out[i] = pattern(4096, static_cast<std::uint8_t>(i));
      self.issue(tlm::TLM_WRITE_COMMAND, 0x10'0000 + 4096ull * i, out[i].data(), 4096);
    }
    for (int i = kBursts - 1; i >= 0; --i) {  // reads right behind the writes, reverse order
      in[i].assign(4096, 0);
      self.issue(tlm::TLM_READ_COMMAND, 0x10'0000 + 4096ull * i, in[i].data(), 4096);
    }
    self.wait_all();
  });
  init.socket.bind(dram.in);
  sc_start();
  for (int i = 0; i < kBursts; ++i) {
    EXPECT_EQ(in[i], out[i]) << "burst " << i;
    std::vector<std::uint8_t> back(4096);
    dram.read(0x10'0000 + 4096ull * i, back.data(), 4096);
    EXPECT_EQ(back, out[i]) << "burst " << i;
  }
  const auto& r = init.records();
  ASSERT_EQ(r.size(), 2u * kBursts);
  EXPECT_EQ(r[0].end_req, 3 * kNs);  // accept delay
  // The first write: miss (two rows activate at once), 5.12 us of data, then the response delay.
  EXPECT_EQ(r[0].begin_resp, 3 * kNs + kMiss + 5'120 * kNs + 7 * kNs);
  for (const auto& rec : r) EXPECT_EQ(rec.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(counter(dram.stats(), "bytes_written"), 4096u * kBursts);
  EXPECT_EQ(counter(dram.stats(), "bytes_read"), 4096u * kBursts);
  EXPECT_GT(counter(dram.stats(), "backpressure"), 0u);  // 24 requests, 8 slots
  EXPECT_EQ(init.pool().in_use(), 0u);
}

TEST(DramAt, RefusedRequestsCompleteEarlyWithTheirError) {
  Dram dram("dram", at_params());
  NbInitiator init("init", [&](NbInitiator& self) {
    std::vector<std::uint8_t> buf(64);
    self.issue(tlm::TLM_READ_COMMAND, (64ull << 20) - 32, buf.data(), 64);
    self.issue(tlm::TLM_WRITE_COMMAND, 0, nullptr, 64);
    self.wait_all();
  });
  init.socket.bind(dram.in);
  sc_start();
  EXPECT_EQ(init.records()[0].status, tlm::TLM_ADDRESS_ERROR_RESPONSE);
  EXPECT_EQ(init.records()[1].status, tlm::TLM_GENERIC_ERROR_RESPONSE);
  EXPECT_EQ(counter(dram.stats(), "address_errors"), 1u);
  EXPECT_EQ(counter(dram.stats(), "transactions"), 0u);
}

TEST(DramAt, BTransportContendsWithFourPhaseTraffic) {
  Dram dram("dram", at_params());
  sc_time lt_delay = SC_ZERO_TIME;
  std::vector<std::uint8_t> big(4096), small(64);
  NbInitiator init("init", [&](NbInitiator& self) {
    // A blocking 4 KiB write (banks 2 and 3), as a CPU would, then a four-phase read of bank 4.
    tlm::tlm_generic_payload t;
    Initiator::setup(t, tlm::TLM_WRITE_COMMAND, row_addr(2), big.data(), 4096);
    self.socket->b_transport(t, lt_delay);
    EXPECT_EQ(t.get_response_status(), tlm::TLM_OK_RESPONSE);
    wait(1, SC_NS);
    self.issue(tlm::TLM_READ_COMMAND, row_addr(4), small.data(), 64);
    self.wait_all();
  });
  init.socket.bind(dram.in);
  sc_start();
  EXPECT_EQ(lt_delay.value(), kMiss + 5'120 * kNs);
  // Its bank is ready at 46 ns, but the data bus is booked for the write until 5.165 us.
  EXPECT_EQ(init.records()[0].begin_resp, kMiss + 5'120 * kNs + k64B);
}

TEST(DramAt, LtModeKeepsItsNumbersAndCounters) {
  // at = false: the loosely-timed formula (busy-until channel, latency after the last byte) and
  // only the LT counters, whatever the AT parameters say.
  DramParams p;
  p.size = 64ull << 20;
  p.banks = 1;
  p.row_hit_ps = 1;
  p.queue_depth = 1;
  Dram dram("dram", p);
  std::vector<std::uint64_t> delays;
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(1000);
    sc_time d = SC_ZERO_TIME;
    self.access(tlm::TLM_READ_COMMAND, 0, buf.data(), 4, d);
    delays.push_back(d.value());
    d = SC_ZERO_TIME;
    self.access(tlm::TLM_WRITE_COMMAND, 0x1000, buf.data(), 1000, d);
    delays.push_back(d.value());
    tlm::tlm_generic_payload t;
    Initiator::setup(t, tlm::TLM_READ_COMMAND, 0x2000, buf.data(), 100);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    d = SC_ZERO_TIME;
    EXPECT_EQ(self.socket->nb_transport_fw(t, phase, d), tlm::TLM_COMPLETED);
    delays.push_back(d.value());
    wait(10, SC_US);  // idle: the channel is free again
    d = sc_time(5, SC_NS);
    self.access(tlm::TLM_READ_COMMAND, 0, buf.data(), 64, d);
    delays.push_back(d.value());
  });
  init.socket.bind(dram.in);
  sc_start();
  // 4 B: 5 ns + 50 ns; 1000 B queues behind it: (5 ns + 1.25 us) + 50 ns; 100 B behind that:
  // (1.255 us + 125 ns) + 50 ns; after idling, 64 B from 10.005 us: 5 ns + 80 ns + 50 ns.
  EXPECT_EQ(delays, (std::vector<std::uint64_t>{55'000, 1'305'000, 1'430'000, 135'000}));
  std::vector<std::string> names;
  for (const auto& c : dram.stats().counters()) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"bytes_read", "bytes_written", "transactions",
                                             "busy_ps", "address_errors"}));
  EXPECT_TRUE(dram.stats().accumulators().empty());
  for (const sc_object* child : dram.get_child_objects()) {  // no AT machinery (peq) either
    EXPECT_EQ(std::string(child->basename()).find("peq_with_cb"), std::string::npos)
        << child->name();
  }
}

TEST(DramAt, BadAtParametersThrow) {
  DramParams p = at_params();
  p.refresh_time_ps = p.refresh_interval_ps;
  EXPECT_THROW(Dram("d1", p), std::invalid_argument);
  p = at_params();
  p.banks = 0;
  EXPECT_THROW(Dram("d2", p), std::invalid_argument);
  p = at_params();
  p.queue_depth = 0;
  EXPECT_THROW(Dram("d3", p), std::invalid_argument);
}

VTOE_TEST_MAIN
