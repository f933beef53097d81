// Undo of spurious retransmissions (D-SACK RFC 3708, Eifel RFC 3522, response RFC 4015) and
// HyStart++ (RFC 9406). Two engines over the harness link; a filter reorders A's data or delays
// B's ACKs on a script. The suites are named Congestion* (they belong with congestion control).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "tests/unit/tcpip/harness.h"

namespace vtoe::tcpip::test {
namespace {

constexpr std::uint32_t kInf = 0x7fffffff;


/// The sender's window just before an episode and just after it was undone (or after the
/// episode's first ACKs when nothing was undone).
struct Episode {
  std::uint32_t cwnd_before = 0, ssthresh_before = 0;
  std::uint32_t cwnd_after = 0, ssthresh_after = 0;
  TimePs rto_before = 0, rto_after = 0;
  bool seen_after = false;
  StackStats a;
  bool data_ok = false;
};

void record(const Episode& e) {
  ::testing::Test::RecordProperty("cwnd_before", std::to_string(e.cwnd_before));
  ::testing::Test::RecordProperty("cwnd_after", std::to_string(e.cwnd_after));
  ::testing::Test::RecordProperty("ssthresh_before", std::to_string(e.ssthresh_before));
  ::testing::Test::RecordProperty("ssthresh_after", std::to_string(e.ssthresh_after));
  ::testing::Test::RecordProperty("rto_before_us", std::to_string(e.rto_before / kUs));
  ::testing::Test::RecordProperty("rto_after_us", std::to_string(e.rto_after / kUs));
}

// --------------------------------------------------------------- fast retransmit + D-SACK

// A's data segment `which` arrives `late` after those sent behind it: three SACKed segments
// make RACK mark it lost and A retransmits it (fast recovery). The retransmission arrives
// first, the late original is a duplicate that B reports with a D-SACK.
Episode reordered(StackConfig ca, StackConfig cb, std::int64_t which, TimePs late) {
  ca.send_buffer = cb.recv_buffer = 1 << 20;
  Net net(ca, cb);
  net.ps_per_byte = kGbit;
  warm_arp(net);
  FirstSends idx;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    if (from == 0 && idx.classify(f) == which) v.extra_delay = late;
    return v;
  };
  Transfer t(net, 4 << 20, 0);
  Episode e;
  t.start();
  const StackStats& st = net.a.stack->stats();
  EXPECT_TRUE(net.run_until(
      [&] {
        if (t.sa.conn != 0) {
          const ConnectionInfo i = net.a.stack->info(t.sa.conn);
          if (st.fast_retransmits == 0) {
            e.cwnd_before = i.cwnd;
            e.ssthresh_before = i.ssthresh;
          } else if (!e.seen_after &&
                     (st.fast_recoveries_undone > 0 || (!ca.undo && !i.in_recovery))) {
            // Right after the undo (the D-SACK may come after the recovery is over), or
            // without undo once the recovery is over.
            e.seen_after = true;
            e.cwnd_after = i.cwnd;
            e.ssthresh_after = i.ssthresh;
          }
        }
        return t.data_done();
      },
      60 * kSec));
  net.run_for(10 * kMs);
  record(e);
  e.a = st;
  e.data_ok = t.sb.data_ok;
  return e;
}

TEST(CongestionUndo, ReorderingFastRetransmitIsUndoneByDsack) {
  const Episode e = reordered(config_a(), config_b(), 300, 2 * kMs);
  EXPECT_TRUE(e.data_ok);
  EXPECT_EQ(e.a.fast_retransmits, 1u);
  EXPECT_GE(e.a.dsacks_in, 1u);
  EXPECT_EQ(e.a.fast_recoveries_undone, 1u);
  EXPECT_EQ(e.a.spurious_rto_undone, 0u);
  ASSERT_TRUE(e.seen_after);
  ASSERT_GT(e.cwnd_before, 0u);
  // The window and threshold of before the fast retransmit are back.
  EXPECT_GE(e.cwnd_after, e.cwnd_before);
  EXPECT_EQ(e.ssthresh_after, e.ssthresh_before);
}

TEST(CongestionUndo, DsackAloneUndoesWithoutTimestamps) {
  StackConfig ca = config_a(), cb = config_b();
  ca.timestamps = cb.timestamps = false;  // no Eifel: the D-SACK decides
  const Episode e = reordered(ca, cb, 300, 2 * kMs);
  EXPECT_TRUE(e.data_ok);
  EXPECT_EQ(e.a.fast_retransmits, 1u);
  EXPECT_EQ(e.a.fast_recoveries_undone, 1u);
  EXPECT_GE(e.cwnd_after, e.cwnd_before);
  EXPECT_EQ(e.ssthresh_after, e.ssthresh_before);
}

TEST(CongestionUndo, KeyOffKeepsTheReduction) {
  StackConfig ca = config_a();
  ca.undo = false;
  const Episode e = reordered(ca, config_b(), 300, 2 * kMs);
  EXPECT_TRUE(e.data_ok);
  EXPECT_EQ(e.a.fast_retransmits, 1u);
  EXPECT_GE(e.a.dsacks_in, 1u);
  EXPECT_EQ(e.a.fast_recoveries_undone, 0u);
  ASSERT_TRUE(e.seen_after);
  EXPECT_LT(e.ssthresh_after, e.cwnd_before);  // reduced (NewReno: half the flight)
  EXPECT_LT(e.cwnd_after, e.cwnd_before);
}

TEST(CongestionUndo, RealLossIsNotUndone) {
  // The segment is lost, not late: only the retransmission arrives, no D-SACK, and the ACK
  // that covers it echoes the retransmission's timestamp (a 10 ms RTT: another millisecond).
  StackConfig ca = config_a(), cb = config_b();
  ca.send_buffer = cb.recv_buffer = 1 << 20;
  Net net(ca, cb);
  net.ps_per_byte = kGbit;
  net.delay = 5 * kMs;
  warm_arp(net);
  FirstSends idx;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    v.drop = from == 0 && idx.classify(f) == 300;
    return v;
  };
  Transfer t(net, 4 << 20, 0);
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.data_done(); }, 60 * kSec));
  net.run_for(20 * kMs);
  const StackStats& st = net.a.stack->stats();
  EXPECT_EQ(st.fast_retransmits, 1u);
  EXPECT_EQ(st.rto_timeouts, 0u);
  EXPECT_EQ(st.fast_recoveries_undone, 0u);
  EXPECT_EQ(st.spurious_rto_undone, 0u);
  EXPECT_NE(net.a.stack->info(t.sa.conn).ssthresh, kInf);  // the reduction stays
}

// --------------------------------------------------------------- timeouts: Eifel

// A 10 ms RTT path whose ACKs stall: every frame B sends in [t1, t1 + 280 ms) arrives at
// t1 + 300 ms (+ the link delay), in order. A's RTO (200 ms) fires in between and retransmits
// the head; the first ACK after it acknowledges the original (Eifel: it echoes an older
// timestamp). With `lose`, A's data in [t1, t1 + 60 ms) is lost instead (a real timeout).
Episode stalled(StackConfig ca, StackConfig cb, bool lose) {
  ca.send_buffer = cb.recv_buffer = 1 << 20;
  Net net(ca, cb);
  net.ps_per_byte = kGbit;
  net.delay = 5 * kMs;
  warm_arp(net);
  TimePs t1 = kNever;
  std::uint64_t data = 0;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    if (from == 0 && is_tcp_data(f) && ++data == 400) t1 = net.now;
    if (t1 == kNever || net.now < t1) return v;
    if (!lose && from == 1 && net.now < t1 + 280 * kMs) v.extra_delay = t1 + 300 * kMs - net.now;
    if (lose && from == 0 && net.now < t1 + 60 * kMs) v.drop = true;
    return v;
  };
  Transfer t(net, 4 << 20, 0);
  Episode e;
  t.start();
  const StackStats& st = net.a.stack->stats();
  std::uint64_t acks_after = 0;
  EXPECT_TRUE(net.run_until(
      [&] {
        if (t.sa.conn != 0) {
          const ConnectionInfo i = net.a.stack->info(t.sa.conn);
          if (st.rto_timeouts == 0) {
            e.cwnd_before = i.cwnd;
            e.ssthresh_before = i.ssthresh;
            e.rto_before = i.rto;
            acks_after = net.delivered[0];
          } else if (!e.seen_after &&
                     (st.spurious_rto_undone > 0 || net.delivered[0] > acks_after + 20)) {
            // Right after the undo, or (nothing undone) 20 ACKs after the timeout.
            e.seen_after = true;
            e.cwnd_after = i.cwnd;
            e.ssthresh_after = i.ssthresh;
            e.rto_after = i.rto;
          }
        }
        return t.data_done();
      },
      60 * kSec));
  net.run_for(20 * kMs);
  record(e);
  e.a = st;
  e.data_ok = t.sb.data_ok;
  return e;
}

TEST(CongestionUndo, LateAcksAfterATimeoutAreDetectedByEifel) {
  const Episode e = stalled(config_a(), config_b(), false);
  EXPECT_TRUE(e.data_ok);
  EXPECT_EQ(e.a.rto_timeouts, 1u);
  EXPECT_EQ(e.a.spurious_rto_undone, 1u);
  EXPECT_EQ(e.a.fast_recoveries_undone, 0u);
  ASSERT_TRUE(e.seen_after);
  ASSERT_GT(e.cwnd_before, 0u);
  // RFC 4015: the old window (not one segment), and an RTO that allows for the late ACKs.
  EXPECT_GE(e.cwnd_after, e.cwnd_before);
  EXPECT_EQ(e.ssthresh_after, e.ssthresh_before);
  EXPECT_GT(e.rto_after, e.rto_before + 100 * kMs);
}

TEST(CongestionUndo, EifelAloneUndoesWithoutSack) {
  // No SACK, so no D-SACK: NewReno's go-back-N timeout, undone by the timestamps alone; A
  // then resumes with new data (RFC 4015) rather than resending what the late ACKs cover.
  StackConfig ca = config_a(), cb = config_b();
  ca.sack = cb.sack = false;
  const Episode e = stalled(ca, cb, false);
  EXPECT_TRUE(e.data_ok);
  EXPECT_EQ(e.a.rto_timeouts, 1u);
  EXPECT_EQ(e.a.spurious_rto_undone, 1u);
  EXPECT_EQ(e.a.retransmits, 1u);  // the head, once
  EXPECT_GE(e.cwnd_after, e.cwnd_before);
  EXPECT_EQ(e.ssthresh_after, e.ssthresh_before);
}

TEST(CongestionUndo, KeyOffKeepsTheTimeoutResponse) {
  StackConfig ca = config_a();
  ca.undo = false;
  const Episode e = stalled(ca, config_b(), false);
  EXPECT_TRUE(e.data_ok);
  EXPECT_EQ(e.a.rto_timeouts, 1u);
  EXPECT_EQ(e.a.spurious_rto_undone, 0u);
  ASSERT_TRUE(e.seen_after);
  EXPECT_LT(e.ssthresh_after, e.cwnd_before);
  EXPECT_LT(e.cwnd_after, e.cwnd_before);
}

TEST(CongestionUndo, RealTimeoutIsNotUndone) {
  const Episode e = stalled(config_a(), config_b(), true);
  EXPECT_TRUE(e.data_ok);
  EXPECT_GE(e.a.rto_timeouts, 1u);
  EXPECT_EQ(e.a.spurious_rto_undone, 0u);
  EXPECT_EQ(e.a.fast_recoveries_undone, 0u);
  ASSERT_TRUE(e.seen_after);
  EXPECT_LT(e.ssthresh_after, e.cwnd_before);
}

// --------------------------------------------------------------- HyStart++

struct SlowStart {
  StackStats a;
  std::uint32_t ssthresh = 0;
  bool data_ok = false;
};

// A 10 ms RTT path without a bottleneck (no queue builds up by itself). With `step`, every
// frame B sends from 55 ms on (the 5th round) takes 8 ms longer: the RTT grows to 18 ms.
SlowStart slow_start(StackConfig ca, StackConfig cb, bool step) {
  ca.send_buffer = cb.recv_buffer = 8 << 20;
  ca.window_scale = cb.window_scale = 9;
  Net net(ca, cb);
  net.delay = 5 * kMs;
  warm_arp(net);
  const TimePs t0 = net.now;
  net.filter = [&](int from, const Frame&, std::uint64_t) {
    Verdict v;
    if (step && from == 1 && net.now >= t0 + 55 * kMs) v.extra_delay = 8 * kMs;
    return v;
  };
  Transfer t(net, 4 << 20, 0);
  t.start();
  EXPECT_TRUE(net.run_until([&] { return t.data_done(); }, 60 * kSec));
  SlowStart r;
  r.a = net.a.stack->stats();
  r.ssthresh = net.a.stack->info(t.sa.conn).ssthresh;
  r.data_ok = t.sb.data_ok;
  return r;
}

TEST(CongestionHyStart, RttIncreaseLeavesSlowStartBeforeAnyLoss) {
  for (CongestionControl cc : {CongestionControl::NewReno, CongestionControl::Cubic}) {
    SCOPED_TRACE(to_string(cc));
    StackConfig ca = config_a();
    ca.congestion = cc;
    const SlowStart r = slow_start(ca, config_b(), true);
    EXPECT_TRUE(r.data_ok);
    EXPECT_EQ(r.a.retransmits, 0u);
    EXPECT_EQ(r.a.hystart_css_entries, 1u);
    EXPECT_EQ(r.a.hystart_exits, 1u);
    EXPECT_NE(r.ssthresh, kInf);  // congestion avoidance with no loss
  }
}

TEST(CongestionHyStart, SteadyRttStaysInSlowStart) {
  for (CongestionControl cc : {CongestionControl::NewReno, CongestionControl::Cubic}) {
    SCOPED_TRACE(to_string(cc));
    StackConfig ca = config_a();
    ca.congestion = cc;
    const SlowStart r = slow_start(ca, config_b(), false);
    EXPECT_TRUE(r.data_ok);
    EXPECT_EQ(r.a.hystart_css_entries, 0u);
    EXPECT_EQ(r.a.hystart_exits, 0u);
    EXPECT_EQ(r.ssthresh, kInf);
  }
}

TEST(CongestionHyStart, KeyOffIgnoresTheRttIncrease) {
  StackConfig ca = config_a();
  ca.hystart = false;
  const SlowStart r = slow_start(ca, config_b(), true);
  EXPECT_TRUE(r.data_ok);
  EXPECT_EQ(r.a.hystart_css_entries, 0u);
  EXPECT_EQ(r.a.hystart_exits, 0u);
  EXPECT_EQ(r.ssthresh, kInf);
}

// A 1 Gbit/s bottleneck with a 10 ms RTT and a drop-tail queue of 2 MB (16 ms): slow start
// overshoots the path (BDP + queue, 3.25 MB) and loses a burst. HyStart++ sees the queue grow
// by 4 ms and slows down; its five CSS rounds (x 1.25 each) still overflow this queue, but by
// far less.
StackStats bottleneck(bool hystart, CongestionControl cc) {
  StackConfig ca = config_a(), cb = config_b();
  ca.hystart = hystart;
  ca.congestion = cc;
  ca.send_buffer = cb.recv_buffer = 16 << 20;
  ca.window_scale = cb.window_scale = 9;
  Net net(ca, cb);
  net.ps_per_byte = kGbit;
  net.delay = 5 * kMs;
  net.queue_limit_bytes = 2 << 20;
  warm_arp(net);
  Transfer t(net, 32 << 20, 0);
  t.start();
  EXPECT_TRUE(net.run_until([&] { return t.data_done(); }, 60 * kSec));
  EXPECT_TRUE(t.sb.data_ok);
  return net.a.stack->stats();
}

TEST(CongestionHyStart, LeavesSlowStartBeforeTheBottleneckQueueOverflows) {
  for (CongestionControl cc : {CongestionControl::NewReno, CongestionControl::Cubic}) {
    SCOPED_TRACE(to_string(cc));
    const StackStats off = bottleneck(false, cc);
    const StackStats on = bottleneck(true, cc);
    RecordProperty(std::string(to_string(cc)) + "_retransmits_off",
                   std::to_string(off.retransmits));
    RecordProperty(std::string(to_string(cc)) + "_retransmits_on", std::to_string(on.retransmits));
    std::printf("%s: retransmits hystart off %llu, on %llu (css %llu, exits %llu)\n", to_string(cc),
                static_cast<unsigned long long>(off.retransmits),
                static_cast<unsigned long long>(on.retransmits),
                static_cast<unsigned long long>(on.hystart_css_entries),
                static_cast<unsigned long long>(on.hystart_exits));
    EXPECT_GT(off.retransmits, 0u);  // the overshoot
    EXPECT_GE(on.hystart_css_entries, 1u);
    EXPECT_LT(on.retransmits, off.retransmits);
  }
}

}  // namespace
}  // namespace vtoe::tcpip::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
