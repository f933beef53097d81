// SACK (RFC 2018), D-SACK (RFC 2883), RFC 6675 recovery, timestamps and PAWS (RFC 7323),
// RACK-TLP (RFC 8985): negotiation, what the receiver reports, how the sender recovers from the
// loss of chosen segments. Two engines over the harness link; a filter drops or duplicates
// chosen frames. Every transfer checks the bytes.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "tests/unit/tcpip/harness.h"

namespace vtoe::tcpip::test {
namespace {

constexpr std::uint32_t kMss = 1448;  // 1460 less the timestamps option

/// Index of A's first-transmission data segments, by sequence number.
struct DataSegIndex {
  std::map<std::uint32_t, std::uint64_t> first_seen;
  std::uint64_t next = 0;
  std::int64_t classify(const Frame& f) {
    FrameView v;
    if (!is_tcp_data(f, &v)) return -1;
    if (first_seen.count(v.tcp.seq)) return -1;
    first_seen[v.tcp.seq] = next;
    return static_cast<std::int64_t>(next++);
  }
};

/// Times at which A sent a data segment whose sequence number it had sent before.
std::vector<TimePs> retransmission_times(const Net& net) {
  std::set<std::uint32_t> seen;
  std::vector<TimePs> t;
  for (const auto& lf : net.log) {
    FrameView v;
    if (lf.from != 0 || !is_tcp_data(lf.f, &v)) continue;
    if (!seen.insert(v.tcp.seq).second) t.push_back(lf.t);
  }
  return t;
}

/// A transfer of `bytes` from A to B losing A's first transmissions listed in `losses`.
struct LossRun {
  std::uint64_t dropped = 0;
  TimePs first_drop = 0;
  TimePs done = 0;  ///< when B had every byte
  StackStats a, b;
  bool data_ok = false;
  std::vector<TimePs> rtx;
};
LossRun run_losses(const StackConfig& ca, const StackConfig& cb, std::uint64_t bytes,
                   const std::set<std::int64_t>& losses) {
  Net net(ca, cb);
  warm_arp(net);
  net.keep_log = true;
  DataSegIndex idx;
  LossRun r;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    if (from == 0 && losses.count(idx.classify(f))) {
      v.drop = true;
      if (r.dropped++ == 0) r.first_drop = net.now;
    }
    return v;
  };
  Transfer t(net, bytes, 0);
  t.start();
  EXPECT_TRUE(net.run_until([&] { return t.data_done(); }, 60 * kSec));
  r.done = net.now;
  net.run_for(10 * kMs);  // the last ACKs reach A
  r.a = net.a.stack->stats();
  r.b = net.b.stack->stats();
  r.data_ok = t.sb.data_ok && t.sb.received == bytes;
  r.rtx = retransmission_times(net);
  return r;
}

// ---------------------------------------------------------------- negotiation

struct Negotiated {
  bool syn_sack = false, syn_ts = false, synack_sack = false, synack_ts = false;
  ConnectionInfo ia, ib;
};
Negotiated negotiate(const StackConfig& ca, const StackConfig& cb) {
  Net net(ca, cb);
  net.keep_log = true;
  Negotiated n;
  Transfer t(net, 0, 0);
  t.start();
  EXPECT_TRUE(net.run_until([&] { return t.sb.conn != 0; }, kSec));
  for (const auto& lf : net.log) {
    FrameView v;
    if (!decode_frame(lf.f.data(), lf.f.size(), v) || !v.is_tcp) continue;
    if (v.tcp.flags == tcp_flags::kSyn) {
      n.syn_sack = v.tcp_opts.sack_permitted;
      n.syn_ts = v.tcp_opts.has_timestamps;
    } else if (v.tcp.flags == (tcp_flags::kSyn | tcp_flags::kAck)) {
      n.synack_sack = v.tcp_opts.sack_permitted;
      n.synack_ts = v.tcp_opts.has_timestamps;
    }
  }
  n.ia = net.a.stack->info(t.sa.conn);
  n.ib = net.b.stack->info(t.sb.conn);
  return n;
}

TEST(Negotiation, SackAndTimestampsAreOfferedAndAgreed) {
  const Negotiated n = negotiate(config_a(), config_b());
  EXPECT_TRUE(n.syn_sack && n.syn_ts && n.synack_sack && n.synack_ts);
  EXPECT_TRUE(n.ia.sack_ok && n.ib.sack_ok && n.ia.ts_ok && n.ib.ts_ok);
  EXPECT_EQ(n.ia.snd_mss, kMss);
}

TEST(Negotiation, AnEndWithoutThemNegotiatesNeither) {
  StackConfig off = config_b();
  off.sack = off.timestamps = false;
  // The passive end does not want them: its SYN-ACK leaves them out although the SYN offered.
  const Negotiated n = negotiate(config_a(), off);
  EXPECT_TRUE(n.syn_sack && n.syn_ts);
  EXPECT_FALSE(n.synack_sack || n.synack_ts);
  EXPECT_FALSE(n.ia.sack_ok || n.ib.sack_ok || n.ia.ts_ok || n.ib.ts_ok);
  EXPECT_EQ(n.ia.snd_mss, 1460u);  // no option space taken from the payload
  // The active end does not want them: its SYN does not offer them, the SYN-ACK cannot.
  StackConfig a_off = config_a();
  a_off.sack = a_off.timestamps = false;
  const Negotiated m = negotiate(a_off, config_b());
  EXPECT_FALSE(m.syn_sack || m.syn_ts || m.synack_sack || m.synack_ts);
  EXPECT_FALSE(m.ia.sack_ok || m.ib.sack_ok || m.ia.ts_ok || m.ib.ts_ok);
  // One without the other.
  StackConfig ts_only = config_a();
  ts_only.sack = false;
  const Negotiated k = negotiate(ts_only, config_b());
  EXPECT_FALSE(k.ia.sack_ok || k.ib.sack_ok);
  EXPECT_TRUE(k.ia.ts_ok && k.ib.ts_ok);
}

TEST(Timestamps, ClockIsSimulatedMillisecondsAndEchoed) {
  Net net;
  warm_arp(net);
  net.keep_log = true;
  Transfer t(net, 0, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.sb.conn != 0; }, kSec));
  const std::uint8_t d[10] = {};
  net.a.stack->send(t.sa.conn, d, sizeof d, net.now);
  net.run_for(5 * kMs);
  net.a.stack->send(t.sa.conn, d, sizeof d, net.now);
  net.run_for(50 * kMs);
  std::vector<FrameView> from_a, from_b;
  std::vector<TimePs> at_a;
  for (const auto& lf : net.log) {
    FrameView v;
    if (!decode_frame(lf.f.data(), lf.f.size(), v) || !v.is_tcp) continue;
    EXPECT_TRUE(v.tcp_opts.has_timestamps) << "every segment carries TSopt";
    if (lf.from == 0) {
      from_a.push_back(v);
      at_a.push_back(lf.t);
    } else {
      from_b.push_back(v);
    }
  }
  ASSERT_GE(from_a.size(), 4u);  // SYN, ACK, data, data
  ASSERT_GE(from_b.size(), 2u);
  EXPECT_EQ(from_b[0].tcp_opts.ts_ecr, from_a[0].tcp_opts.ts_val);  // the SYN-ACK echoes
  // TSval advances by one per millisecond of simulated time.
  const std::size_t last = from_a.size() - 1;
  EXPECT_EQ(from_a[last].tcp_opts.ts_val - from_a[0].tcp_opts.ts_val,
            static_cast<std::uint32_t>(at_a[last] / kMs - at_a[0] / kMs));
  EXPECT_EQ(from_a[last].payload_len, 10u);
  // The ACK of the last data segment echoes its TSval.
  EXPECT_EQ(from_b.back().tcp_opts.ts_ecr, from_a[last].tcp_opts.ts_val);
}

TimePs srtt_after_delay_change(bool timestamps) {
  StackConfig ca = config_a(), cb = config_b();
  ca.timestamps = cb.timestamps = timestamps;
  Net net(ca, cb);
  warm_arp(net);
  Transfer t(net, 64 << 20, 0);
  t.start();
  net.run_for(20 * kMs);  // SRTT settles at 100 us
  EXPECT_LT(net.a.stack->info(t.sa.conn).srtt, 200 * kUs);
  net.delay = 2 * kMs;  // the path's RTT becomes 4 ms
  net.run_for(3 * 4 * kMs + 4 * kMs);
  return net.a.stack->info(t.sa.conn).srtt;
}

TEST(Timestamps, EveryAckFeedsTheRttEstimator) {
  // RTT 0.1 ms, then 4 ms. With timestamps every ACK that advances is a sample and SRTT
  // follows within about two round trips; one timed segment per round trip is much slower.
  const TimePs with_ts = srtt_after_delay_change(true);
  const TimePs without = srtt_after_delay_change(false);
  RecordProperty("srtt_us_with_ts", std::to_string(with_ts / kUs));
  RecordProperty("srtt_us_without_ts", std::to_string(without / kUs));
  EXPECT_GT(with_ts, 3500 * kUs);
  EXPECT_LT(without, 2500 * kUs);
}

TimePs srtt_change_from_retransmission_ack(bool timestamps) {
  // A lone segment is lost once; the ACK of its retransmission is the only RTT information.
  StackConfig ca = config_a(), cb = config_b();
  ca.timestamps = cb.timestamps = timestamps;
  Net net(ca, cb);
  warm_arp(net);
  Transfer t(net, 0, 0);
  t.start();
  EXPECT_TRUE(net.run_until([&] { return t.sb.conn != 0; }, kSec));
  int data = 0;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    v.drop = from == 0 && is_tcp_data(f) && data++ == 0;
    return v;
  };
  const TimePs before = net.a.stack->info(t.sa.conn).srtt;
  const std::uint8_t d[100] = {};
  net.a.stack->send(t.sa.conn, d, sizeof d, net.now);
  net.run_for(1 * kSec);
  EXPECT_EQ(t.sb.received, 100u);
  EXPECT_EQ(net.a.stack->info(t.sa.conn).snd_una, net.a.stack->info(t.sa.conn).snd_max);
  const TimePs after = net.a.stack->info(t.sa.conn).srtt;
  return after > before ? after - before : before - after;
}

TEST(Timestamps, TheAckOfARetransmissionIsASampleThroughTsecr) {
  // Karn's rule forbids the sample without timestamps; TSecr names the transmission that was
  // ACKed (RFC 7323 section 4), so with them it is taken.
  EXPECT_GT(srtt_change_from_retransmission_ack(true), 0u);
  EXPECT_EQ(srtt_change_from_retransmission_ack(false), 0u);
}

// ---------------------------------------------------------------- PAWS

TEST(Paws, ASegmentWithAnOldTimestampIsDropped) {
  Net net;
  warm_arp(net);
  net.keep_log = true;
  Transfer t(net, 0, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.sb.conn != 0; }, kSec));
  t.sb.reading = false;  // what B holds shows what it accepted
  const std::uint8_t d[100] = {};
  net.a.stack->send(t.sa.conn, d, sizeof d, net.now);
  net.run_for(10 * kMs);
  const ConnectionInfo ia = net.a.stack->info(t.sa.conn), ib = net.b.stack->info(t.sb.conn);
  ASSERT_TRUE(ib.ts_ok);
  ASSERT_EQ(ib.readable, 100u);
  // A segment in the window, at rcv_nxt, but with a timestamp older than TS.Recent: a
  // duplicate from an earlier trip round the sequence space.
  auto inject = [&](std::uint32_t ts_val, std::uint8_t fill) {
    TcpHeader h;
    h.src_port = ia.local_port;
    h.dst_port = ia.remote_port;
    h.seq = ib.rcv_nxt;
    h.ack = ia.rcv_nxt;
    h.flags = tcp_flags::kAck | tcp_flags::kPsh;
    h.window = 1000;
    TcpOptions o;
    o.has_timestamps = true;
    o.ts_val = ts_val;
    o.ts_ecr = 0;
    const std::vector<std::uint8_t> payload(50, fill);
    net.inject(1,
               build_tcp_frame(config_a().mac, config_b().mac, kIpA, kIpB, h, o, payload.data(),
                               payload.size()),
               net.now + 1 * kUs);
    net.run_for(1 * kMs);
  };
  const std::size_t frames_before = net.log.size();
  inject(ib.ts_recent - 1000, 0xAA);
  EXPECT_EQ(net.b.stack->stats().drop_paws, 1u);
  EXPECT_EQ(net.b.stack->info(t.sb.conn).readable, 100u);  // not delivered
  // ... answered with an ACK (RFC 7323 section 5.3 R1).
  bool acked = false;
  for (std::size_t i = frames_before; i < net.log.size(); ++i) {
    FrameView v;
    if (net.log[i].from == 1 && decode_frame(net.log[i].f.data(), net.log[i].f.size(), v) &&
        v.is_tcp && v.tcp.ack == ib.rcv_nxt)
      acked = true;
  }
  EXPECT_TRUE(acked);
  // The same segment with a current timestamp is data.
  inject(ib.ts_recent + 1, 0xBB);
  EXPECT_EQ(net.b.stack->stats().drop_paws, 1u);
  EXPECT_EQ(net.b.stack->info(t.sb.conn).readable, 150u);
}

TEST(Paws, OffWithoutTimestamps) {
  StackConfig ca = config_a(), cb = config_b();
  ca.timestamps = cb.timestamps = false;
  Net net(ca, cb);
  warm_arp(net);
  Transfer t(net, 1 << 20, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.data_done(); }, 60 * kSec));
  EXPECT_TRUE(t.sb.data_ok);
  EXPECT_EQ(net.b.stack->stats().drop_paws, 0u);
  EXPECT_FALSE(net.a.stack->info(t.sa.conn).ts_ok);
}

// ---------------------------------------------------------------- receiver: SACK blocks

TEST(SackReceiver, BlocksReportTheHolesMostRecentFirst) {
  // Crafted segments into B (as if from A) at chosen offsets from rcv_nxt; each out-of-order
  // one is answered at once, and the SACK blocks of that ACK are checked exactly.
  Net net;
  warm_arp(net);
  net.keep_log = true;
  Transfer t(net, 0, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.sb.conn != 0; }, kSec));
  net.run_for(1 * kMs);
  const ConnectionInfo ia = net.a.stack->info(t.sa.conn);
  const std::uint32_t r = net.b.stack->info(t.sb.conn).rcv_nxt;
  using Blocks = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
  auto send = [&](std::uint32_t from, std::uint32_t to) -> Blocks {
    TcpHeader h;
    h.src_port = ia.local_port;
    h.dst_port = ia.remote_port;
    h.seq = r + from;
    h.ack = ia.rcv_nxt;
    h.flags = tcp_flags::kAck;
    h.window = 1000;
    TcpOptions o;
    o.has_timestamps = true;
    o.ts_val = net.b.stack->info(t.sb.conn).ts_recent + 1;
    const std::vector<std::uint8_t> payload(to - from, 0x5A);
    const std::size_t before = net.log.size();
    net.inject(1,
               build_tcp_frame(config_a().mac, config_b().mac, kIpA, kIpB, h, o, payload.data(),
                               payload.size()),
               net.now + 1 * kUs);
    net.run_for(10 * kUs);
    Blocks b;
    for (std::size_t i = before; i < net.log.size(); ++i) {
      FrameView v;
      if (net.log[i].from != 1 || !decode_frame(net.log[i].f.data(), net.log[i].f.size(), v))
        continue;
      b.clear();
      for (std::size_t k = 0; k < v.tcp_opts.sack_blocks; ++k)
        b.emplace_back(v.tcp_opts.sack[k].first - r, v.tcp_opts.sack[k].second - r);
    }
    return b;
  };
  EXPECT_EQ(send(1000, 2000), (Blocks{{1000, 2000}}));
  EXPECT_EQ(send(3000, 4000), (Blocks{{3000, 4000}, {1000, 2000}}));
  EXPECT_EQ(send(5000, 6000), (Blocks{{5000, 6000}, {3000, 4000}, {1000, 2000}}));
  // Three blocks at most beside timestamps: the oldest report drops out.
  EXPECT_EQ(send(7000, 8000), (Blocks{{7000, 8000}, {5000, 6000}, {3000, 4000}}));
  // A segment that joins two ranges: the merged range goes first; the one left out last time
  // is reported again.
  EXPECT_EQ(send(2000, 3000), (Blocks{{1000, 4000}, {7000, 8000}, {5000, 6000}}));
  // A duplicate of held data: a D-SACK first, then the range that holds it (RFC 2883 4.2).
  EXPECT_EQ(send(5000, 6000), (Blocks{{5000, 6000}, {5000, 6000}, {1000, 4000}}));
  EXPECT_EQ(net.b.stack->stats().dsacks_sent, 1u);
  // The hole at the front fills: the ACK moves to 4000, the two ranges above remain.
  EXPECT_EQ(send(0, 1000), (Blocks{{5000, 6000}, {7000, 8000}}));
  EXPECT_EQ(net.b.stack->info(t.sb.conn).rcv_nxt, r + 4000);
}

TEST(SackReceiver, DuplicateSegmentEarnsADsack) {
  Net net;
  warm_arp(net);
  net.keep_log = true;
  DataSegIndex idx;
  std::uint32_t dup_seq = 0;
  std::size_t dup_len = 0;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    FrameView fv;
    if (from == 0 && idx.classify(f) == 15 && is_tcp_data(f, &fv)) {
      v.copies = 2;  // arrives twice
      dup_seq = fv.tcp.seq;
      dup_len = fv.payload_len;
    }
    return v;
  };
  Transfer t(net, 100 * kMss, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.data_done(); }, 10 * kSec));
  EXPECT_TRUE(t.sb.data_ok);
  ASSERT_NE(dup_len, 0u);
  bool saw = false;
  for (const auto& lf : net.log) {
    FrameView v;
    if (lf.from != 1 || !decode_frame(lf.f.data(), lf.f.size(), v) || !v.is_tcp) continue;
    if (v.tcp_opts.sack_blocks == 0) continue;
    const auto& b0 = v.tcp_opts.sack[0];
    // RFC 2883: the first block names the duplicate, below the cumulative ACK.
    if (b0.first == dup_seq && b0.second == dup_seq + dup_len && seq_le(b0.second, v.tcp.ack))
      saw = true;
  }
  EXPECT_TRUE(saw);
  EXPECT_EQ(net.b.stack->stats().dsacks_sent, 1u);
  EXPECT_EQ(net.a.stack->stats().dsacks_in, 1u);
  EXPECT_EQ(net.a.stack->stats().retransmits, 0u);
}

// ---------------------------------------------------------------- sender: recovery

TEST(SackRecovery, LossOfTheFirstSegmentOfAWindow) {
  const LossRun r = run_losses(config_a(), config_b(), 100 * kMss, {0});
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.dropped, 1u);
  EXPECT_EQ(r.a.retransmits, 1u);
  EXPECT_EQ(r.a.fast_retransmits, 1u);
  EXPECT_EQ(r.a.rto_timeouts, 0u);
  EXPECT_EQ(r.b.old_duplicates + r.b.drop_paws, 0u);
}

TEST(SackRecovery, LossOfAMiddleSegment) {
  const LossRun r = run_losses(config_a(), config_b(), 200 * kMss, {35});
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.a.retransmits, 1u);
  EXPECT_EQ(r.a.fast_retransmits, 1u);
  EXPECT_EQ(r.a.rto_timeouts, 0u);
  EXPECT_EQ(r.a.tlp_probes, 0u);
  EXPECT_GE(r.a.sack_lost_marks, 1u);
}

TEST(SackRecovery, LossOfTheLastSegmentIsRepairedByAProbeNotAnRto) {
  // 21 segments: B ACKs every second one, so when the last is lost A still waits for two
  // (the 20th's ACK is delayed): the probe timeout is 2 SRTT, far below the 200 ms RTO.
  const LossRun r = run_losses(config_a(), config_b(), 21 * kMss, {20});
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.dropped, 1u);
  EXPECT_EQ(r.a.rto_timeouts, 0u);
  EXPECT_EQ(r.a.tlp_probes, 1u);
  EXPECT_EQ(r.a.dsacks_in, 0u);  // the probe was no duplicate: it repaired a real loss
  EXPECT_EQ(r.a.retransmits, 1u);
  ASSERT_EQ(r.rtx.size(), 1u);
  EXPECT_LT(r.rtx[0] - r.first_drop, 2 * kMs);
  EXPECT_LT(r.done - r.first_drop, 200 * kMs);  // < RTO (rto_min)
}

TEST(SackRecovery, AFinBehindALossIsSackedAndTheLossRepairedWithoutAnRto) {
  // A closes right after its last write, so the FIN rides on the last, short segment; the
  // segment before it is lost. B holds the FIN out of order: its SACK block must cover the
  // FIN's sequence number too (as Linux's does), or A, which marks a segment SACKed only when
  // a block covers all of it, sees nothing delivered and waits for the 200 ms RTO (found in
  // the study's CCB sweep: the tail of a client's 64 KiB stalled there).
  Net net;
  warm_arp(net);
  net.keep_log = true;
  DataSegIndex idx;
  TimePs first_drop = 0;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    if (from == 0 && idx.classify(f) == 19) {
      v.drop = true;
      first_drop = net.now;
    }
    return v;
  };
  Transfer t(net, 20 * kMss + 500, 0);
  t.sa.close_after_send = true;
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.data_done() && t.sb.peer_closed; }, 10 * kSec));
  EXPECT_TRUE(t.sb.data_ok);
  ASSERT_NE(first_drop, 0u);
  const StackStats a = net.a.stack->stats();
  EXPECT_EQ(a.rto_timeouts, 0u);
  EXPECT_EQ(a.fast_retransmits, 1u);
  EXPECT_EQ(a.retransmits, 1u);  // the hole only: the FIN's segment was not sent again
  EXPECT_EQ(a.dsacks_in, 0u);
  EXPECT_LT(net.now - first_drop, 2 * kMs);
  // B's ACK for the FIN's segment: one block, from that segment's first byte to past the FIN.
  std::uint32_t fin_seq = 0, fin_start = 0;
  bool sacked_fin = false;
  for (const auto& lf : net.log) {
    FrameView v;
    if (!decode_frame(lf.f.data(), lf.f.size(), v) || !v.is_tcp) continue;
    if (lf.from == 0 && (v.tcp.flags & tcp_flags::kFin)) {
      fin_start = v.tcp.seq;
      fin_seq = v.tcp.seq + static_cast<std::uint32_t>(v.payload_len);
    }
    if (lf.from == 1 && fin_seq != 0 && v.tcp_opts.sack_blocks > 0)
      sacked_fin = sacked_fin || (v.tcp_opts.sack[0].first == fin_start &&
                                  v.tcp_opts.sack[0].second == fin_seq + 1);
  }
  EXPECT_TRUE(sacked_fin);
}

TEST(SackReceiver, AFinAloneOutOfOrderIsSacked) {
  // A FIN without data, ahead of a hole, is a block of its own: [FIN, FIN + 1).
  Net net;
  warm_arp(net);
  net.keep_log = true;
  Transfer t(net, 0, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.sb.conn != 0; }, kSec));
  net.run_for(1 * kMs);
  const ConnectionInfo ia = net.a.stack->info(t.sa.conn);
  const std::uint32_t r = net.b.stack->info(t.sb.conn).rcv_nxt;
  TcpHeader h;
  h.src_port = ia.local_port;
  h.dst_port = ia.remote_port;
  h.seq = r + 1000;  // bytes [0, 1000) never arrive
  h.ack = ia.rcv_nxt;
  h.flags = tcp_flags::kAck | tcp_flags::kFin;
  h.window = 1000;
  TcpOptions o;
  o.has_timestamps = true;
  o.ts_val = net.b.stack->info(t.sb.conn).ts_recent + 1;
  const std::size_t before = net.log.size();
  net.inject(1, build_tcp_frame(config_a().mac, config_b().mac, kIpA, kIpB, h, o, nullptr, 0),
             net.now + 1 * kUs);
  net.run_for(10 * kUs);
  bool saw = false;
  for (std::size_t i = before; i < net.log.size(); ++i) {
    FrameView v;
    if (net.log[i].from != 1 || !decode_frame(net.log[i].f.data(), net.log[i].f.size(), v))
      continue;
    saw = saw || (v.tcp.ack == r && v.tcp_opts.sack_blocks == 1 &&
                  v.tcp_opts.sack[0].first == r + 1000 && v.tcp_opts.sack[0].second == r + 1001);
  }
  EXPECT_TRUE(saw);
}

TEST(SackRecovery, WithoutRackTheLastSegmentWaitsForTheRto) {
  // The same loss with RACK-TLP off: nothing but the RTO can repair it.
  StackConfig ca = config_a();
  ca.rack = false;
  const LossRun r = run_losses(ca, config_b(), 21 * kMss, {20});
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.a.tlp_probes, 0u);
  EXPECT_EQ(r.a.rto_timeouts, 1u);
  EXPECT_GE(r.done - r.first_drop, 200 * kMs);
}

TEST(SackRecovery, SeveralLossesInOneWindowAreRepairedInAboutOneRoundTrip) {
  const std::set<std::int64_t> losses = {28, 31, 35, 38};
  const LossRun sack = run_losses(config_a(), config_b(), 1 << 20, losses);
  EXPECT_TRUE(sack.data_ok);
  EXPECT_EQ(sack.dropped, 4u);
  EXPECT_EQ(sack.a.fast_retransmits, 1u);  // one recovery episode
  EXPECT_EQ(sack.a.retransmits, 4u);       // only the holes
  EXPECT_EQ(sack.a.partial_acks, 0u);
  EXPECT_EQ(sack.a.rto_timeouts, 0u);
  ASSERT_EQ(sack.rtx.size(), 4u);
  // All four holes go out within one round trip (100 us) of the first repair.
  EXPECT_LT(sack.rtx.back() - sack.rtx.front(), 100 * kUs);
  // NewReno, for comparison, repairs one hole per round trip.
  StackConfig ca = config_a(), cb = config_b();
  ca.sack = cb.sack = false;
  const LossRun reno = run_losses(ca, cb, 1 << 20, losses);
  EXPECT_TRUE(reno.data_ok);
  ASSERT_EQ(reno.rtx.size(), 4u);
  EXPECT_GE(reno.rtx.back() - reno.rtx.front(), 3 * 100 * kUs);
}

TEST(SackRecovery, WithoutRackDupThreshMarksTheLosses) {
  StackConfig ca = config_a();
  ca.rack = false;
  const LossRun r = run_losses(ca, config_b(), 1 << 20, {28, 31, 35});
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.a.fast_retransmits, 1u);
  EXPECT_EQ(r.a.retransmits, 3u);
  EXPECT_EQ(r.a.rto_timeouts, 0u);
  EXPECT_GE(r.a.sack_lost_marks, 3u);
}

TEST(SackRecovery, LostRetransmissionIsDetectedByRack) {
  // Segment 30 is lost, and so is its first retransmission: RACK sees later segments
  // delivered after the retransmission and marks it lost again, without an RTO.
  Net net;
  warm_arp(net);
  std::uint32_t seq30 = 0;
  int copies_of_30 = 0;
  DataSegIndex idx;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    FrameView fv;
    if (from != 0 || !is_tcp_data(f, &fv)) return v;
    if (idx.classify(f) == 30) seq30 = fv.tcp.seq;
    if (seq30 != 0 && fv.tcp.seq == seq30 && copies_of_30++ < 2) v.drop = true;
    return v;
  };
  Transfer t(net, 1 << 20, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.data_done(); }, 60 * kSec));
  EXPECT_TRUE(t.sb.data_ok);
  EXPECT_EQ(copies_of_30, 3);
  EXPECT_EQ(net.a.stack->stats().rto_timeouts, 0u);
  EXPECT_EQ(net.a.stack->stats().retransmits, 2u);
}

TEST(SackRecovery, AckLossCostsNothing) {
  // Every third ACK from B is lost: cumulative ACKs cover for them.
  Net net;
  warm_arp(net);
  std::uint64_t acks_dropped = 0;
  net.filter = [&](int from, const Frame& f, std::uint64_t i) {
    Verdict v;
    FrameView fv;
    if (from == 1 && i % 3 == 0 && decode_frame(f.data(), f.size(), fv) && fv.is_tcp &&
        fv.payload_len == 0 && !(fv.tcp.flags & tcp_flags::kSyn)) {
      v.drop = true;
      ++acks_dropped;
    }
    return v;
  };
  Transfer t(net, 2 << 20, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.data_done(); }, 60 * kSec));
  EXPECT_TRUE(t.sb.data_ok);
  EXPECT_GT(acks_dropped, 100u);
  EXPECT_EQ(net.a.stack->stats().retransmits, 0u);
  EXPECT_EQ(net.a.stack->stats().rto_timeouts, 0u);
}

TEST(SackRecovery, RandomLossBothWaysKeepsDataIntactAndRarelyTimesOut) {
  // 2 % loss each way on a 1 Gbit/s link: SACK + RACK-TLP repair nearly everything without
  // the RTO. Deterministic (seeded).
  for (bool sack : {true, false}) {
    StackConfig ca = config_a(), cb = config_b();
    ca.sack = cb.sack = sack;
    Net net(ca, cb);
    net.ps_per_byte = 8000;
    std::uint64_t x = 12345;
    net.filter = [&](int, const Frame&, std::uint64_t) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      Verdict v;
      v.drop = (x >> 33) % 100 < 2;
      return v;
    };
    Transfer t(net, 4 << 20, 0);
    t.start();
    ASSERT_TRUE(net.run_until([&] { return t.data_done(); }, 600 * kSec));
    EXPECT_TRUE(t.sb.data_ok);
    const auto& s = net.a.stack->stats();
    RecordProperty(sack ? "sack_time_ms" : "newreno_time_ms", std::to_string(net.now / kMs));
    RecordProperty(sack ? "sack_rto" : "newreno_rto", std::to_string(s.rto_timeouts));
    if (sack) {
      EXPECT_LE(s.rto_timeouts * 20, s.fast_retransmits + s.tlp_probes);
    }
  }
}

TEST(SackRecovery, LossReorderingAndDuplicationBothWaysManySeeds) {
  // Hostile link for the scoreboard: loss, reordering and duplicates in both directions, data
  // both ways, through the close. Every byte arrives, each end terminates once, and the
  // scoreboard's byte counts return to zero.
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    StackConfig ca = config_a(), cb = config_b();
    ca.rack = cb.rack = seed % 3 != 0;  // every third seed: DupThresh only
    Net net(ca, cb);
    net.ps_per_byte = 800;  // 10 Gbit/s
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull;
    auto rnd = [&] {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      return (x >> 33) % 1000;
    };
    net.filter = [&](int, const Frame&, std::uint64_t) {
      Verdict v;
      const auto r = rnd();
      v.drop = r < 30;                                           // 3 %
      if (r >= 30 && r < 60) v.extra_delay = rnd() * 100 * kNs;  // up to 100 us late
      if (r >= 60 && r < 70) v.copies = 2;
      return v;
    };
    Transfer t(net, 3 << 20, 1 << 20);
    t.sa.close_after_send = t.sb.close_after_send = true;
    t.start();
    ASSERT_TRUE(net.run_until([&] { return t.data_done(); }, 600 * kSec)) << seed;
    EXPECT_TRUE(t.sa.data_ok && t.sb.data_ok) << seed;
    const ConnectionInfo ia = net.a.stack->info(t.sa.conn);
    if (ia.valid && ia.snd_una == ia.snd_max) {
      EXPECT_EQ(ia.sacked_bytes, 0u) << seed;
      EXPECT_EQ(ia.lost_bytes, 0u) << seed;
    }
    ASSERT_TRUE(net.run_until([&] { return t.sa.terminal == 1 && t.sb.terminal == 1; }, 600 * kSec))
        << seed;
    EXPECT_GT(net.a.stack->stats().sack_lost_marks, 0u) << seed;
  }
}

TEST(SackRecovery, LyingSackBlocksCannotStallTheTransfer) {
  // Forged ACKs from B's address whose SACK blocks claim data B never got (and nonsense
  // edges), on a link that loses 2 % of A's data: A must not wait for ever on data it
  // believes delivered. The second RTO in a row
  // forgets the SACK marks (RFC 2018 section 8) and the data is sent again.
  Net net;
  warm_arp(net);
  Transfer t(net, 8 << 20, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.sa.conn != 0 && t.sb.conn != 0; }, kSec));
  std::uint64_t x = 77;
  auto rnd = [&] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(x >> 33);
  };
  std::uint64_t y = 5;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {  // 2 % of A's data lost
    y = y * 6364136223846793005ull + 1442695040888963407ull;
    Verdict v;
    v.drop = from == 0 && is_tcp_data(f) && (y >> 33) % 100 < 2;
    return v;
  };
  int forged = 0;
  while (!t.data_done() && net.now < 120 * kSec) {
    net.run_for(50 * kUs);
    const ConnectionInfo ia = net.a.stack->info(t.sa.conn);
    if (!ia.valid || ia.snd_una == ia.snd_max || forged >= 3000) continue;
    TcpHeader h;
    h.src_port = ia.remote_port;
    h.dst_port = ia.local_port;
    h.seq = ia.rcv_nxt;
    h.ack = ia.snd_una;
    h.flags = tcp_flags::kAck;
    h.window = 0xffff;
    TcpOptions o;
    o.has_timestamps = true;
    o.ts_val = net.b.stack->info(t.sb.conn).ts_recent;
    o.ts_ecr = 0;
    o.sack_blocks = static_cast<std::uint8_t>(1 + rnd() % 3);
    const std::uint32_t span = ia.snd_max - ia.snd_una;
    for (std::size_t b = 0; b < o.sack_blocks; ++b) {
      const std::uint32_t from = ia.snd_una + rnd() % (span + 1);
      o.sack[b] = {from, from + rnd() % (span + 3000)};  // may reach beyond snd_max
    }
    net.inject(0, build_tcp_frame(config_b().mac, config_a().mac, kIpB, kIpA, h, o, nullptr, 0),
               net.now + 1 * kUs);
    ++forged;
  }
  ASSERT_TRUE(t.data_done());
  EXPECT_TRUE(t.sb.data_ok);
  EXPECT_GT(forged, 200);
  RecordProperty("rto_timeouts", std::to_string(net.a.stack->stats().rto_timeouts));
}

}  // namespace
}  // namespace vtoe::tcpip::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
