// ECN (RFC 3168): negotiation in the handshake, ECT(0) on new data only, CE -> ECE until CWR at
// the receiver, one congestion response per window at the sender (no retransmission). Two
// engines over the harness link; a filter marks chosen segments CE as a router would.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/unit/tcpip/harness.h"

namespace vtoe::tcpip::test {
namespace {

using namespace tcp_flags;


std::uint8_t ecn_of(const FrameView& v) { return v.ip.tos & ecn::kMask; }


// ------------------------------------------------------------------------------ negotiation

struct Handshake {
  std::uint8_t syn_flags = 0, synack_flags = 0;
  bool a_ok = false, b_ok = false;
  std::uint64_t a_negotiated = 0, b_negotiated = 0;
  std::uint64_t a_data = 0, a_ect0 = 0, a_other_ecn = 0;
  bool data_ok = false, checksums_ok = true;
};

// A connects to B and sends 200 kB; what the SYN, the SYN-ACK and A's data frames carried.
Handshake handshake(EcnMode a, EcnMode b) {
  StackConfig ca = config_a(), cb = config_b();
  ca.ecn = a;
  cb.ecn = b;
  Net net(ca, cb);
  net.ps_per_byte = kGbit;
  warm_arp(net);
  Handshake r;
  net.on_send = [&](int from, const Frame& f, std::uint64_t) {
    FrameView v;
    if (!decode_frame(f.data(), f.size(), v) || !v.is_tcp) return;
    r.checksums_ok = r.checksums_ok && v.checksums_ok;
    if (from == 0 && (v.tcp.flags & kSyn)) r.syn_flags = v.tcp.flags;
    if (from == 1 && (v.tcp.flags & kSyn)) r.synack_flags = v.tcp.flags;
    if (from == 0 && v.payload_len > 0) {
      ++r.a_data;
      if (ecn_of(v) == ecn::kEct0) ++r.a_ect0;
      if (ecn_of(v) != ecn::kEct0 && ecn_of(v) != ecn::kNotEct) ++r.a_other_ecn;
    }
  };
  Transfer t(net, 200000, 0);
  t.start();
  EXPECT_TRUE(net.run_until([&] { return t.data_done(); }, 10 * kSec));
  r.data_ok = t.sb.data_ok;
  r.a_ok = net.a.stack->info(t.sa.conn).ecn_ok;
  r.b_ok = net.b.stack->info(t.sb.conn).ecn_ok;
  r.a_negotiated = net.a.stack->stats().ecn_negotiated;
  r.b_negotiated = net.b.stack->stats().ecn_negotiated;
  return r;
}

TEST(Ecn, NegotiationInEveryCombinationOfModes) {
  const EcnMode modes[] = {EcnMode::Off, EcnMode::Passive, EcnMode::On};
  for (EcnMode a : modes) {
    for (EcnMode b : modes) {
      SCOPED_TRACE(std::string("A ") + to_string(a) + ", B " + to_string(b));
      const Handshake r = handshake(a, b);
      // Only an end set to `on` asks; any end not `off` agrees to a peer that asks.
      const bool asks = a == EcnMode::On;
      const bool agreed = asks && b != EcnMode::Off;
      EXPECT_TRUE(r.data_ok);
      EXPECT_TRUE(r.checksums_ok);
      EXPECT_EQ((r.syn_flags & (kEce | kCwr)) == (kEce | kCwr), asks);
      EXPECT_EQ(r.syn_flags & (kEce | kCwr), asks ? (kEce | kCwr) : 0);
      EXPECT_EQ(r.synack_flags & (kEce | kCwr), agreed ? kEce : 0);  // never CWR
      EXPECT_EQ(r.a_ok, agreed);
      EXPECT_EQ(r.b_ok, agreed);
      EXPECT_EQ(r.a_negotiated, agreed ? 1u : 0u);
      EXPECT_EQ(r.b_negotiated, agreed ? 1u : 0u);
      ASSERT_GT(r.a_data, 100u);
      EXPECT_EQ(r.a_ect0, agreed ? r.a_data : 0u);  // no loss here: every data frame is new
      EXPECT_EQ(r.a_other_ecn, 0u);
    }
  }
}

TEST(Ecn, RetransmittedSynFallsBackToNoEcn) {
  // As Linux (tcp_ecn_fallback): the SYN sent again after a timeout is not ECN-setup, so a
  // path that drops ECN-setup SYNs still connects; the answer to it does not agree to ECN.
  StackConfig ca = config_a(), cb = config_b();
  ca.ecn = cb.ecn = EcnMode::On;
  Net net(ca, cb);
  warm_arp(net);
  std::vector<std::uint8_t> syns;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    FrameView fv;
    if (from == 0 && decode_frame(f.data(), f.size(), fv) && fv.is_tcp && (fv.tcp.flags & kSyn)) {
      syns.push_back(fv.tcp.flags);
      v.drop = syns.size() == 1;
    }
    return v;
  };
  Transfer t(net, 10000, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.data_done(); }, 10 * kSec));
  ASSERT_EQ(syns.size(), 2u);
  EXPECT_EQ(syns[0] & (kEce | kCwr), kEce | kCwr);
  EXPECT_EQ(syns[1] & (kEce | kCwr), 0);
  EXPECT_FALSE(net.a.stack->info(t.sa.conn).ecn_ok);
  EXPECT_FALSE(net.b.stack->info(t.sb.conn).ecn_ok);
}

TEST(Ecn, SynAckWithEceAndCwrIsNotAnAgreement) {
  // RFC 3168 section 6.1.1: ECE and CWR both set in a SYN-ACK come from a reflecting
  // middlebox, not an ECN-capable peer. B answers with ECE; the link adds CWR.
  StackConfig ca = config_a(), cb = config_b();
  ca.ecn = cb.ecn = EcnMode::On;
  Net net(ca, cb);
  warm_arp(net);
  int rewritten = 0;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    FrameView fv;
    if (from == 1 && decode_frame(f.data(), f.size(), fv) && fv.is_tcp && (fv.tcp.flags & kSyn) &&
        (fv.tcp.flags & kAck)) {
      Frame g = f;
      g[kEthHeaderLen + 20 + 13] |= kCwr;  // the TCP flags byte
      std::uint8_t* t = g.data() + kEthHeaderLen + 20;
      const std::size_t n = fv.ip.total_len - 20;
      t[16] = t[17] = 0;
      store_be16(t + 16, transport_checksum(fv.ip.src, fv.ip.dst, kIpProtoTcp, t, n));
      net.inject(0, g, net.now + net.delay);
      ++rewritten;
      Verdict v;
      v.drop = true;
      return v;
    }
    return Verdict{};
  };
  Transfer t(net, 10000, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.data_done(); }, 10 * kSec));
  EXPECT_EQ(rewritten, 1);
  EXPECT_FALSE(net.a.stack->info(t.sa.conn).ecn_ok);
  EXPECT_EQ(net.a.stack->stats().ecn_negotiated, 0u);
}

// ------------------------------------------------------------------------------ data path

// A -> B with ECN on both ends over 1 Gbit/s; the filter marks A's first transmissions whose
// index is in `marks` CE (and drops those in `drops`). Records per frame what the ends sent.
struct Flow {
  StackStats a, b;
  std::uint32_t cwnd_before = 0, ssthresh_after = 0, cwnd_after = 0, ssthresh_last = 0;
  // The first ECE reduction (CWR): where it began (snd_una, snd_max), cwnd when it ended, and
  // snd_una when new data first went out during it.
  bool cwr_seen = false, cwr_done = false, cwr_sent_new = false;
  std::uint32_t cwr_una0 = 0, cwr_high = 0, cwr_cwnd_end = 0, cwr_ssthresh_end = 0;
  std::uint32_t cwr_first_send_una = 0;
  bool data_ok = false;
  std::uint64_t ce_marked = 0;
  // B's ACKs sent after a CE arrived and before a CWR did (must carry ECE), and the others
  // (must not), from the order in which frames arrived at B.
  std::uint64_t acks_owing_ece = 0, acks_owing_ece_without = 0;
  std::uint64_t acks_clear = 0, acks_clear_with_ece = 0;
  std::uint64_t ce_arrived = 0, cwr_arrived = 0;
  // A's frames by kind: new data (ECT(0) expected), retransmitted data, no data (SYN, pure ACK,
  // FIN): how many and how many were ECT.
  std::uint64_t new_data = 0, new_data_ect0 = 0, rtx_data = 0, rtx_data_ect = 0;
  std::uint64_t no_data = 0, no_data_ect = 0, b_ect = 0;
  std::uint64_t cwr_frames = 0, cwr_on_rtx_or_no_data = 0;
  bool checksums_ok = true;
};

Flow transfer(const std::set<std::int64_t>& marks, const std::set<std::int64_t>& drops,
              CongestionControl cc = CongestionControl::NewReno, bool mark_first_cwr = false) {
  StackConfig ca = config_a(), cb = config_b();
  ca.ecn = EcnMode::On;
  cb.ecn = EcnMode::Passive;
  ca.congestion = cc;
  ca.send_buffer = cb.recv_buffer = 1 << 20;
  Net net(ca, cb);
  net.ps_per_byte = kGbit;
  warm_arp(net);
  FirstSends idx;
  std::set<std::uint32_t> sent_seqs;
  Transfer t(net, 4 << 20, 0);
  t.sa.close_after_send = t.sb.close_after_send = true;  // a FIN each way too
  Flow r;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    if (from != 0) return v;
    const std::int64_t i = idx.classify(f);
    v.ce = marks.count(i) > 0;
    FrameView fv;
    if (mark_first_cwr && decode_frame(f.data(), f.size(), fv) && fv.is_tcp &&
        (fv.tcp.flags & kCwr) && !(fv.tcp.flags & kSyn)) {
      v.ce = true;  // the segment that ends the echo is marked itself
      mark_first_cwr = false;
    }
    v.drop = drops.count(i) > 0;
    return v;
  };
  bool echo = false;  // the test's own model of RFC 3168 section 6.1.3 at B
  net.on_deliver = [&](int to, const Frame& f) {
    FrameView v;
    if (to != 1 || !decode_frame(f.data(), f.size(), v) || !v.is_tcp || (v.tcp.flags & kSyn))
      return;
    if (v.tcp.flags & kCwr) {
      echo = false;
      ++r.cwr_arrived;
    }
    if (ecn_of(v) == ecn::kCe) {
      echo = true;
      ++r.ce_arrived;
    }
  };
  net.on_send = [&](int from, const Frame& f, std::uint64_t) {
    FrameView v;
    if (!decode_frame(f.data(), f.size(), v) || !v.is_tcp) return;
    r.checksums_ok = r.checksums_ok && v.checksums_ok;
    const std::uint8_t e = ecn_of(v);
    if (from == 1) {
      if (e != ecn::kNotEct) ++r.b_ect;
      if (v.tcp.flags & kSyn) return;
      const bool ece = (v.tcp.flags & kEce) != 0;
      if (echo) {
        ++r.acks_owing_ece;
        if (!ece) ++r.acks_owing_ece_without;
      } else {
        ++r.acks_clear;
        if (ece) ++r.acks_clear_with_ece;
      }
      return;
    }
    const bool cwr = (v.tcp.flags & kCwr) && !(v.tcp.flags & kSyn);
    if (v.payload_len == 0) {
      ++r.no_data;
      if (e != ecn::kNotEct) ++r.no_data_ect;
      if (cwr) ++r.cwr_on_rtx_or_no_data;
    } else if (sent_seqs.insert(v.tcp.seq).second) {
      ++r.new_data;
      if (e == ecn::kEct0) ++r.new_data_ect0;
    } else {
      ++r.rtx_data;
      if (e != ecn::kNotEct) ++r.rtx_data_ect;
      if (cwr) ++r.cwr_on_rtx_or_no_data;
    }
    if (cwr) ++r.cwr_frames;
  };
  t.start();
  const StackStats& sa = net.a.stack->stats();
  EXPECT_TRUE(net.run_until(
      [&] {
        if (t.sa.conn != 0) {
          const ConnectionInfo i = net.a.stack->info(t.sa.conn);
          if (i.valid) r.ssthresh_last = i.ssthresh;
          if (i.valid && i.in_cwr && !r.cwr_seen) {
            r.cwr_seen = true;
            r.cwr_una0 = i.snd_una;
            r.cwr_high = i.snd_max;
          } else if (i.valid && r.cwr_seen && !r.cwr_done) {
            if (!r.cwr_sent_new && i.snd_max != r.cwr_high) {
              r.cwr_sent_new = true;
              r.cwr_first_send_una = i.snd_una;
            }
            if (!i.in_cwr) {
              r.cwr_done = true;
              r.cwr_cwnd_end = i.cwnd;
              r.cwr_ssthresh_end = i.ssthresh;
            }
          }
          if (sa.ecn_reductions == 0 && sa.fast_retransmits == 0) {
            r.cwnd_before = i.cwnd;
          } else if (r.ssthresh_after == 0) {
            r.ssthresh_after = i.ssthresh;
            r.cwnd_after = i.cwnd;
          }
        }
        return t.data_done() && t.sb.peer_closed;
      },
      60 * kSec));
  net.run_for(100 * kMs);
  r.a = sa;
  r.b = net.b.stack->stats();
  r.data_ok = t.sb.data_ok;
  r.ce_marked = net.ce_marked[0];
  return r;
}

TEST(Ecn, CeMarkIsEchoedWithEceUntilCwrArrives) {
  const Flow r = transfer({300}, {});
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.ce_marked, 1u);
  EXPECT_EQ(r.ce_arrived, 1u);
  EXPECT_EQ(r.b.ce_received, 1u);
  // Every ACK between the CE and the CWR carries ECE, none before or after.
  EXPECT_GT(r.acks_owing_ece, 0u);
  EXPECT_EQ(r.acks_owing_ece_without, 0u);
  EXPECT_GT(r.acks_clear, 100u);
  EXPECT_EQ(r.acks_clear_with_ece, 0u);
  EXPECT_GE(r.a.ece_received, 1u);
  EXPECT_EQ(r.a.ecn_reductions, 1u);
  // The sender answered with one CWR, on new data; it reached B.
  EXPECT_EQ(r.a.cwr_sent, 1u);
  EXPECT_EQ(r.cwr_frames, 1u);
  EXPECT_EQ(r.cwr_on_rtx_or_no_data, 0u);
  EXPECT_EQ(r.cwr_arrived, 1u);
  EXPECT_EQ(r.b.cwr_received, 1u);
}

TEST(Ecn, CeOnTheCwrSegmentKeepsTheEchoGoing) {
  // RFC 3168 section 6.1.3: CWR ends the echo, a CE on the same segment starts the next one; the
  // ACKs beyond the first reduction's data then carry ECE: a second reduction, a second CWR.
  const Flow r = transfer({300}, {}, CongestionControl::NewReno, true);
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.ce_marked, 2u);
  EXPECT_EQ(r.b.ce_received, 2u);
  EXPECT_EQ(r.b.cwr_received, 2u);
  EXPECT_EQ(r.a.ecn_reductions, 2u);
  EXPECT_EQ(r.a.cwr_sent, 2u);
  EXPECT_EQ(r.acks_owing_ece_without, 0u);
  EXPECT_EQ(r.acks_clear_with_ece, 0u);
  EXPECT_EQ(r.a.retransmits, 0u);
}

TEST(Ecn, SenderReducesOncePerWindowAndDoesNotRetransmit) {
  // Ten marks in a row: one window, one reduction, as for one loss (NewReno: half the flight).
  const Flow r = transfer({300, 301, 302, 303, 304, 305, 306, 307, 308, 309}, {});
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.b.ce_received, 10u);
  EXPECT_GE(r.a.ece_received, 2u);
  EXPECT_EQ(r.a.ecn_reductions, 1u);
  EXPECT_EQ(r.a.retransmits, 0u);
  EXPECT_EQ(r.a.fast_retransmits, 0u);
  EXPECT_EQ(r.a.rto_timeouts, 0u);
  EXPECT_EQ(r.a.cwr_sent, 1u);
  ASSERT_GT(r.cwnd_before, 20u * 1448);  // the ten marked segments lie within one window
  EXPECT_NEAR(static_cast<double>(r.ssthresh_after) / r.cwnd_before, 0.5, 0.05);
  RecordProperty("cwnd_before", std::to_string(r.cwnd_before));
  RecordProperty("ssthresh_after", std::to_string(r.ssthresh_after));
  // Proportional Rate Reduction (RFC 6937), as Linux's CWR state: cwnd is not cut to ssthresh
  // at once but comes down with the data delivered, so new data keeps going out from the first
  // ACKs of the round trip (a one-step cut sends nothing until half the window is acknowledged);
  // when everything sent before the reduction is acknowledged, cwnd = ssthresh.
  EXPECT_GT(r.cwnd_after, r.ssthresh_after);
  EXPECT_LE(r.cwnd_after, r.cwnd_before);
  ASSERT_TRUE(r.cwr_seen && r.cwr_done && r.cwr_sent_new);
  EXPECT_LT(r.cwr_first_send_una - r.cwr_una0, (r.cwr_high - r.cwr_una0) / 4);
  EXPECT_EQ(r.cwr_cwnd_end, r.cwr_ssthresh_end);
  EXPECT_EQ(r.cwr_ssthresh_end, r.ssthresh_after);
  // Marks a window apart are two congestion events.
  const Flow two = transfer({300, 2500}, {});
  EXPECT_TRUE(two.data_ok);
  EXPECT_EQ(two.a.ecn_reductions, 2u);
  EXPECT_EQ(two.a.cwr_sent, 2u);
  EXPECT_EQ(two.a.retransmits, 0u);
}

TEST(Ecn, LossAndCeInOneWindowReduceOnce) {
  // Segment 300 lost, 301 marked: the ECE (on the first duplicate ACK) reduces the window; the
  // loss found a little later is in the window that reduction covers and is repaired without
  // reducing again (as Linux: recovery entered from CWR keeps ssthresh). CUBIC, whose second
  // reduction would compound (0.7 of 0.7), where NewReno's half of the same flight would not.
  const Flow r = transfer({301}, {300}, CongestionControl::Cubic);
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.a.fast_retransmits, 1u);
  EXPECT_GE(r.a.retransmits, 1u);
  EXPECT_EQ(r.b.ce_received, 1u);
  EXPECT_EQ(r.a.ecn_reductions, 1u);
  EXPECT_EQ(r.a.cwr_sent, 1u);
  ASSERT_GT(r.cwnd_before, 0u);
  EXPECT_NEAR(static_cast<double>(r.ssthresh_last) / r.cwnd_before, 0.7, 0.03);
  EXPECT_EQ(r.acks_owing_ece_without, 0u);
  EXPECT_EQ(r.acks_clear_with_ece, 0u);
}

TEST(Ecn, CubicBacksOffToSeventyPercentOnEce) {
  const Flow r = transfer({300}, {}, CongestionControl::Cubic);
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.a.ecn_reductions, 1u);
  EXPECT_EQ(r.a.retransmits, 0u);
  ASSERT_GT(r.cwnd_before, 0u);
  EXPECT_NEAR(static_cast<double>(r.ssthresh_after) / r.cwnd_before, 0.7, 0.02);
}

TEST(Ecn, EctOnlyOnNewDataAndChecksumsHold) {
  // One loss: its retransmission must go out Not-ECT (RFC 3168 6.1.5); SYNs, pure ACKs and
  // FINs without data too (6.1.1, 6.1.4). The loss reduction is announced with CWR on new data.
  const Flow r = transfer({}, {300});
  EXPECT_TRUE(r.data_ok);
  EXPECT_TRUE(r.checksums_ok);
  EXPECT_EQ(r.a.ecn_negotiated, 1u);
  ASSERT_GT(r.new_data, 2000u);
  EXPECT_EQ(r.new_data_ect0, r.new_data);
  ASSERT_GE(r.rtx_data, 1u);
  EXPECT_EQ(r.rtx_data_ect, 0u);
  ASSERT_GE(r.no_data, 3u);  // SYN, the handshake ACK, the ACK of B's FIN
  EXPECT_EQ(r.no_data_ect, 0u);
  EXPECT_EQ(r.b_ect, 0u);  // B sends no data: nothing of B's is ECT
  EXPECT_EQ(r.a.cwr_sent, 1u);
  EXPECT_EQ(r.cwr_on_rtx_or_no_data, 0u);
  EXPECT_EQ(r.a.ecn_reductions, 0u);  // no mark, no ECE
  EXPECT_EQ(r.b.ce_received, 0u);
}

TEST(Ecn, RouterMarkKeepsAValidHeaderChecksum) {
  // The CE the link sets (header checksum recomputed) is accepted, not dropped as corrupt.
  const Flow r = transfer({100, 1000, 2000}, {});
  EXPECT_EQ(r.ce_marked, 3u);
  EXPECT_EQ(r.b.ce_received, 3u);
  EXPECT_EQ(r.b.drop_bad_ip_checksum, 0u);
  EXPECT_TRUE(r.data_ok);
}

// Threshold marking at a drop-tail queue: without ECN the queue overflows and the sender
// retransmits; with it the marks hold the queue below the limit.
struct QueueRun {
  StackStats a;
  std::uint64_t queue_drops = 0, ce_marked = 0;
  bool data_ok = false;
};

QueueRun through_queue(EcnMode mode) {
  StackConfig ca = config_a(), cb = config_b();
  ca.ecn = mode;
  cb.ecn = mode;
  ca.send_buffer = cb.recv_buffer = 1 << 20;
  Net net(ca, cb);
  net.ps_per_byte = kGbit;
  net.queue_limit_bytes = 150000;
  net.ecn_mark_bytes = 30000;
  warm_arp(net);
  Transfer t(net, 8 << 20, 0);
  t.start();
  EXPECT_TRUE(net.run_until([&] { return t.data_done(); }, 60 * kSec));
  QueueRun q;
  q.a = net.a.stack->stats();
  q.queue_drops = net.queue_drops[0];
  q.ce_marked = net.ce_marked[0];
  q.data_ok = t.sb.data_ok;
  return q;
}

TEST(Ecn, ThresholdMarkingReplacesQueueDrops) {
  const QueueRun off = through_queue(EcnMode::Passive);  // nobody asks: Not-ECT, drop-tail
  const QueueRun on = through_queue(EcnMode::On);
  EXPECT_TRUE(off.data_ok);
  EXPECT_TRUE(on.data_ok);
  EXPECT_EQ(off.ce_marked, 0u);
  EXPECT_GT(off.queue_drops, 0u);
  EXPECT_GT(off.a.retransmits, 0u);
  EXPECT_GT(on.ce_marked, 0u);
  EXPECT_GT(on.a.ecn_reductions, 0u);
  EXPECT_EQ(on.queue_drops, 0u);
  EXPECT_EQ(on.a.retransmits, 0u);
  RecordProperty("off_queue_drops", std::to_string(off.queue_drops));
  RecordProperty("off_retransmits", std::to_string(off.a.retransmits));
  RecordProperty("on_ce_marked", std::to_string(on.ce_marked));
  RecordProperty("on_ecn_reductions", std::to_string(on.a.ecn_reductions));
}

}  // namespace
}  // namespace vtoe::tcpip::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
