// mem::Interconnect in approximately-timed mode: arbitration (round robin, weighted), fabric
// occupancy, END_REQ only after the target's END_REQ, back-pressure from an AT DRAM, early
// completing targets, b_transport booking the fabric; LT mode unchanged.
#include <gtest/gtest.h>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_target_socket.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/mem/dram.h"
#include "models/mem/interconnect.h"
#include "tests/support/bench.h"
#include "tests/support/nb_initiator.h"

using namespace sc_core;
using vtoe::mem::Arbitration;
using vtoe::mem::Dram;
using vtoe::mem::DramParams;
using vtoe::mem::Interconnect;
using vtoe::mem::InterconnectParams;
using vtoe::test::counter;
using vtoe::test::Initiator;
using vtoe::test::NbInitiator;

namespace {

constexpr std::uint64_t kNs = 1000;  // ps
constexpr std::uint64_t kBase = 0x8000'0000;

InterconnectParams at_bus(std::uint64_t hop_ps = 0) {
  InterconnectParams p;
  p.hop_latency_ps = hop_ps;
  p.at = true;  // 16 B per cycle at 1 GHz: 64 B hold the fabric 4 ns
  return p;
}

// A four-phase target: accepts BEGIN_REQ after `accept` (TLM_UPDATED/END_REQ at once when 0,
// else END_REQ later on the backward path), responds `respond` after acceptance. Records the
// order and times of the requests it sees and whether anyone broke request exclusion.
class Target : public sc_module {
 public:
  tlm_utils::simple_target_socket<Target> in;
  std::vector<std::uint64_t> seen;  // addresses, in arrival order
  std::vector<std::uint64_t> seen_at;
  std::vector<std::uint64_t> end_req_at;
  bool exclusion_broken = false;

  Target(const sc_module_name& name, sc_time accept, sc_time respond)
      : sc_module(name), in("in"), peq_(this, &Target::cb), accept_(accept), respond_(respond) {
    in.register_nb_transport_fw(this, &Target::nb_transport_fw);
  }

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_time& delay) {
    if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
    if (open_ != nullptr) exclusion_broken = true;
    seen.push_back(t.get_address());
    seen_at.push_back(sc_time_stamp().value());
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    if (accept_ == SC_ZERO_TIME) {
      end_req_at.push_back(sc_time_stamp().value());
      peq_.notify(t, tlm::BEGIN_RESP, delay + respond_);
      phase = tlm::END_REQ;
      return tlm::TLM_UPDATED;
    }
    open_ = &t;
    peq_.notify(t, tlm::END_REQ, delay + accept_);
    return tlm::TLM_ACCEPTED;
  }
  void cb(tlm::tlm_generic_payload& t, const tlm::tlm_phase& phase) {
    tlm::tlm_phase p = phase;
    sc_time d = SC_ZERO_TIME;
    if (phase == tlm::END_REQ) {
      open_ = nullptr;
      end_req_at.push_back(sc_time_stamp().value());
      in->nb_transport_bw(t, p, d);
      peq_.notify(t, tlm::BEGIN_RESP, respond_);
      return;
    }
    in->nb_transport_bw(t, p, d);  // BEGIN_RESP; the initiators here answer TLM_COMPLETED
  }
  tlm_utils::peq_with_cb_and_phase<Target> peq_;
  sc_time accept_, respond_;
  tlm::tlm_generic_payload* open_ = nullptr;
};

// Sends `n` 64-byte writes back to back (each after the previous END_REQ) from `base`.
std::function<void(NbInitiator&)> saturate(std::uint64_t base, int n,
                                           std::vector<std::uint8_t>& buf) {
  return [base, n, &buf](NbInitiator& self) {
    for (int i = 0; i < n; ++i)
      self.issue(tlm::TLM_WRITE_COMMAND, base + 64ull * i, buf.data(), 64);
    self.wait_all();
  };
}

// Which initiator (0: addresses below 0x1000, 1: above) each request the target saw came from.
std::string order(const Target& t) {
  std::string s;
  for (std::uint64_t a : t.seen) s += a < 0x1000 ? '0' : '1';
  return s;
}

}  // namespace

TEST(InterconnectAt, RoundRobinAlternatesBetweenSaturatingInitiators) {
  Interconnect ic("ic", at_bus());
  Target t("t", SC_ZERO_TIME, sc_time(1, SC_NS));
  ic.map(kBase, 0x2000, t.in, "t");
  std::vector<std::uint8_t> buf(64);
  NbInitiator a("a", saturate(kBase, 20, buf));
  NbInitiator b("b", saturate(kBase + 0x1000, 20, buf));
  a.socket.bind(ic.in);
  b.socket.bind(ic.in);
  sc_start();
  EXPECT_EQ(order(t), "0101010101010101010101010101010101010101");
  EXPECT_EQ(counter(ic.stats(), "grants_0"), 20u);
  EXPECT_EQ(counter(ic.stats(), "grants_1"), 20u);
  // The fabric is never idle: a grant every 4 cycles, the first request downstream at 4 ns.
  ASSERT_EQ(t.seen_at.size(), 40u);
  for (std::size_t i = 0; i < t.seen_at.size(); ++i) EXPECT_EQ(t.seen_at[i], 4 * kNs * (i + 1));
  const auto* wait = vtoe::test::accumulator(ic.stats(), "arbitration_wait_ps");
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->count(), 40u);
  EXPECT_DOUBLE_EQ(wait->max(), 4.0 * kNs);  // each waits at most the other's grant
}

TEST(InterconnectAt, WeightedRoundRobinGivesThreeToOne) {
  InterconnectParams p = at_bus();
  p.arbitration = Arbitration::Weighted;
  p.weights = "3, 1";
  Interconnect ic("ic", p);
  Target t("t", SC_ZERO_TIME, sc_time(1, SC_NS));
  ic.map(kBase, 0x2000, t.in, "t");
  std::vector<std::uint8_t> buf(64);
  NbInitiator a("a", saturate(kBase, 30, buf));
  NbInitiator b("b", saturate(kBase + 0x1000, 30, buf));
  a.socket.bind(ic.in);
  b.socket.bind(ic.in);
  sc_start();
  const std::string o = order(t);
  // While both are saturating (the first 40 grants): 0001 repeated; then b's rest.
  EXPECT_EQ(o.substr(0, 40), "0001000100010001000100010001000100010001");
  EXPECT_EQ(o.substr(40), std::string(20, '1'));
  EXPECT_EQ(counter(ic.stats(), "grants_0"), 30u);
  EXPECT_EQ(counter(ic.stats(), "grants_1"), 30u);
}

TEST(InterconnectAt, EndReqWaitsForTheTargetsEndReq) {
  Interconnect ic("ic", at_bus(2 * kNs));
  Target t("t", sc_time(50, SC_NS), sc_time(10, SC_NS));
  ic.map(kBase, 0x2000, t.in, "t");
  std::vector<std::uint8_t> buf(64);
  NbInitiator a("a", saturate(kBase, 3, buf));
  NbInitiator b("b", saturate(kBase + 0x1000, 3, buf));
  a.socket.bind(ic.in);
  b.socket.bind(ic.in);
  sc_start();
  EXPECT_FALSE(t.exclusion_broken) << "a BEGIN_REQ reached the target before its END_REQ";
  ASSERT_EQ(t.seen.size(), 6u);
  // a's first: granted at 0, 4 ns on the fabric + 2 ns hop, accepted 50 ns later.
  EXPECT_EQ(t.seen_at[0], 6 * kNs);
  EXPECT_EQ(t.end_req_at[0], 56 * kNs);
  EXPECT_EQ(a.records()[0].end_req, 56 * kNs);  // not at the grant, not at the hop
  // b's first was granted when the target freed (56 ns): there at 62 ns.
  EXPECT_EQ(t.seen_at[1], 62 * kNs);
  EXPECT_EQ(b.records()[0].end_req, t.end_req_at[1]);
  // Each request reaches the target only after the previous one's END_REQ; each initiator
  // hears END_REQ exactly when the target sent it.
  for (std::size_t i = 1; i < t.seen.size(); ++i) EXPECT_GT(t.seen_at[i], t.end_req_at[i - 1]);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a.records()[i].end_req, t.end_req_at[2 * i]);
    EXPECT_EQ(b.records()[i].end_req, t.end_req_at[2 * i + 1]);
  }
  EXPECT_EQ(order(t), "010101");
}

TEST(InterconnectAt, DramBackPressureReachesTheInitiator) {
  Interconnect ic("ic", at_bus());
  DramParams dp;
  dp.size = 16ull << 20;
  dp.at = true;
  dp.queue_depth = 2;
  Dram dram("dram", dp);
  ic.map(kBase, dp.size, dram.in, "dram");
  std::vector<std::vector<std::uint8_t>> bufs(4, std::vector<std::uint8_t>(64));
  NbInitiator init("init", [&](NbInitiator& self) {
    for (std::uint64_t i = 0; i < 4; ++i) {
      bufs[i] = vtoe::test::pattern(64, static_cast<std::uint8_t>(i));
      self.issue(tlm::TLM_WRITE_COMMAND, kBase + 2048 * i, bufs[i].data(), 64);  // banks 0..3
    }
    self.wait_all();
    std::vector<std::uint8_t> back(64);
    self.issue(tlm::TLM_READ_COMMAND, kBase + 2048 * 3, back.data(), 64);
    self.wait_all();
    EXPECT_EQ(back, bufs[3]);
  });
  init.socket.bind(ic.in);
  sc_start();
  const auto& r = init.records();
  ASSERT_EQ(r.size(), 5u);
  // Through the fabric (4 ns) the DRAM sees the first at 4 ns: miss 45 ns + 80 ns on its bus.
  EXPECT_EQ(r[0].end_req, 4 * kNs);
  EXPECT_EQ(r[0].begin_resp, 4 * kNs + 45 * kNs + 80 * kNs);
  // The DRAM withholds the third's END_REQ until the first's response: so does the interconnect.
  EXPECT_EQ(r[2].end_req, r[0].begin_resp);
  EXPECT_EQ(counter(dram.stats(), "backpressure"), 2u);
  for (const auto& rec : r) {
    EXPECT_EQ(rec.status, tlm::TLM_OK_RESPONSE);
    EXPECT_GE(rec.addr, kBase);  // the initiator's address is restored
  }
  std::vector<std::uint8_t> got(64);
  dram.read(2048 * 2, got.data(), 64);
  EXPECT_EQ(got, bufs[2]);
}

TEST(InterconnectAt, EarlyCompletingTargetGetsItsPhasesFromTheInterconnect) {
  Interconnect ic("ic", at_bus(10 * kNs));
  DramParams dp;  // an LT DRAM: BEGIN_REQ -> TLM_COMPLETED with its delay
  dp.size = 16ull << 20;
  Dram dram("dram", dp);
  ic.map(kBase, dp.size, dram.in, "dram");
  NbInitiator init("init", [&](NbInitiator& self) {
    self.respond(NbInitiator::Respond::Accepted, sc_time(3, SC_NS));
    std::vector<std::uint8_t> buf(64);
    self.issue(tlm::TLM_READ_COMMAND, kBase + 0x40, buf.data(), 64);
    self.wait_all();
  });
  init.socket.bind(ic.in);
  sc_start();
  const auto& r = init.records()[0];
  EXPECT_EQ(r.end_req, 14 * kNs);                           // fabric 4 ns + hop 10 ns
  EXPECT_EQ(r.begin_resp, 14 * kNs + 80 * kNs + 50 * kNs);  // + the LT DRAM's delay
  EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(init.in_flight(), 0u);
}

TEST(InterconnectAt, BTransportBooksTheFabric) {
  Interconnect ic("ic", at_bus(10 * kNs));
  DramParams dp;
  dp.size = 16ull << 20;
  Dram dram("dram", dp);
  ic.map(kBase, dp.size, dram.in, "dram");
  std::vector<std::uint64_t> delays;
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(1600);
    for (int i = 0; i < 2; ++i) {
      sc_time d = SC_ZERO_TIME;
      self.access(tlm::TLM_WRITE_COMMAND, kBase + 0x10000 * i, buf.data(), 1600, d);
      delays.push_back(d.value());
    }
  });
  init.socket.bind(ic.in);
  sc_start();
  // 1600 B = 100 cycles = 100 ns on the fabric, then 10 ns hop, then the LT DRAM (2 us + 50 ns);
  // the second waits 100 ns for the fabric and then for the DRAM channel (busy until 2.11 us).
  ASSERT_EQ(delays.size(), 2u);
  EXPECT_EQ(delays[0], 100 * kNs + 10 * kNs + 2'000 * kNs + 50 * kNs);
  EXPECT_EQ(delays[1], 2 * 2'000 * kNs + 110 * kNs + 50 * kNs);
  EXPECT_EQ(counter(ic.stats(), "grants_0"), 2u);
  const auto* wait = vtoe::test::accumulator(ic.stats(), "arbitration_wait_ps");
  ASSERT_NE(wait, nullptr);
  EXPECT_DOUBLE_EQ(wait->max(), 100.0 * kNs);
}

TEST(InterconnectAt, LtModeHasNoArbitrationAndNoAtCounters) {
  InterconnectParams p;
  p.hop_latency_ps = 5 * kNs;
  p.width_bytes = 1;  // AT parameters are ignored when at is false
  Interconnect ic("ic", p);
  DramParams dp;
  dp.size = 16ull << 20;
  Dram dram("dram", dp);
  ic.map(kBase, dp.size, dram.in, "dram");
  std::vector<std::uint64_t> delays;
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(64);
    for (int i = 0; i < 2; ++i) {
      sc_time d = SC_ZERO_TIME;
      self.access(tlm::TLM_READ_COMMAND, kBase, buf.data(), 64, d);
      delays.push_back(d.value());
    }
  });
  init.socket.bind(ic.in);
  sc_start();
  EXPECT_EQ(delays,
            (std::vector<std::uint64_t>{5'000 + 80'000 + 50'000, 5'000 + 160'000 + 50'000}));
  std::vector<std::string> names;
  for (const auto& c : ic.stats().counters()) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"transactions", "decode_errors"}));
  EXPECT_TRUE(ic.stats().accumulators().empty());
}

TEST(InterconnectAt, WeightListsParseOrThrow) {
  EXPECT_EQ(vtoe::mem::parse_weights(""), (std::vector<std::uint32_t>{}));
  EXPECT_EQ(vtoe::mem::parse_weights("3, 1,2"), (std::vector<std::uint32_t>{3, 1, 2}));
  EXPECT_THROW(vtoe::mem::parse_weights("3,0"), std::invalid_argument);
  EXPECT_THROW(vtoe::mem::parse_weights("3,,1"), std::invalid_argument);
  EXPECT_THROW(vtoe::mem::parse_weights("x"), std::invalid_argument);
  EXPECT_THROW(vtoe::mem::parse_arbitration("lottery"), std::invalid_argument);
  InterconnectParams p = at_bus();
  p.weights = "1,-2";
  EXPECT_THROW(Interconnect("bad", p), std::invalid_argument);
}

VTOE_TEST_MAIN
