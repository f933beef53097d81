// Congestion control: NewReno / CUBIC (RFC 9438) back-off and growth, Proportional Rate
// Reduction (RFC 6937) during SACK recovery. Two engines over the harness link.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/unit/tcpip/harness.h"

namespace vtoe::tcpip::test {
namespace {


struct Backoff {
  std::uint32_t cwnd_before = 0, ssthresh = 0;
  std::uint64_t sent_in_recovery = 0, acks_in_recovery = 0;
  bool data_ok = false;
};

// One loss (A's 300th data segment) in a 1 Gbit/s transfer: the window just before recovery,
// the ssthresh chosen, and what A sent against what B ACKed while recovering.
Backoff one_loss(CongestionControl cc) {
  StackConfig ca = config_a(), cb = config_b();
  ca.congestion = cc;
  ca.send_buffer = cb.recv_buffer = 1 << 20;
  Net net(ca, cb);
  net.ps_per_byte = kGbit;
  warm_arp(net);
  Transfer t(net, 8 << 20, 0);
  std::map<std::uint32_t, int> seen;
  std::uint64_t data_frames = 0;
  Backoff b;
  bool recovered = false;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    FrameView fv;
    if (from == 0 && is_tcp_data(f, &fv) && seen[fv.tcp.seq]++ == 0 && ++data_frames == 300)
      v.drop = true;
    return v;
  };
  net.on_send = [&](int from, const Frame& f, std::uint64_t) {
    if (t.sa.conn == 0 || recovered) return;
    const ConnectionInfo i = net.a.stack->info(t.sa.conn);
    if (!i.in_recovery) {
      if (b.ssthresh != 0) {
        recovered = true;
        return;
      }
      if (from == 0) b.cwnd_before = i.cwnd;
      return;
    }
    if (b.ssthresh == 0) b.ssthresh = i.ssthresh;
    FrameView fv;
    if (from == 0 && is_tcp_data(f, &fv) && seen.count(fv.tcp.seq) == 0) ++b.sent_in_recovery;
    if (from == 1) ++b.acks_in_recovery;
  };
  t.start();
  EXPECT_TRUE(net.run_until([&] { return t.data_done(); }, 60 * kSec));
  b.data_ok = t.sb.data_ok;
  EXPECT_EQ(net.a.stack->stats().fast_retransmits, 1u);
  EXPECT_EQ(net.a.stack->stats().rto_timeouts, 0u);
  return b;
}

TEST(Congestion, NewRenoHalvesCubicBacksOffToSeventyPercent) {
  const Backoff reno = one_loss(CongestionControl::NewReno);
  const Backoff cubic = one_loss(CongestionControl::Cubic);
  EXPECT_TRUE(reno.data_ok);
  EXPECT_TRUE(cubic.data_ok);
  ASSERT_GT(reno.cwnd_before, 0u);
  ASSERT_GT(cubic.cwnd_before, 0u);
  // NewReno: FlightSize / 2 (the flight is the window here); CUBIC: 0.7 cwnd (RFC 9438 4.6).
  EXPECT_NEAR(static_cast<double>(reno.ssthresh) / reno.cwnd_before, 0.5, 0.05);
  EXPECT_NEAR(static_cast<double>(cubic.ssthresh) / cubic.cwnd_before, 0.7, 0.02);
}

TEST(Congestion, PrrSendsAboutSsthreshOverFlightPerAckDuringRecovery) {
  // PRR (RFC 6937): while pipe > ssthresh, new data leaves in proportion to the data the ACKs
  // deliver, ssthresh / RecoverFS: about one segment for two ACKed with NewReno, rather than
  // a pause until pipe falls below cwnd and then a burst (RFC 6675 alone).
  const Backoff reno = one_loss(CongestionControl::NewReno);
  ASSERT_GT(reno.acks_in_recovery, 20u);
  const double ratio = static_cast<double>(reno.sent_in_recovery) / reno.acks_in_recovery;
  EXPECT_GT(ratio, 0.35);
  EXPECT_LT(ratio, 0.65);
  const Backoff cubic = one_loss(CongestionControl::Cubic);
  const double cratio = static_cast<double>(cubic.sent_in_recovery) / cubic.acks_in_recovery;
  EXPECT_GT(cratio, 0.55);  // 0.7 of the delivered data
  EXPECT_LT(cratio, 0.85);
}

// A transfer over a long path (RTT 10 ms, 1 Gbit/s) with a loss every `every` segments.
double goodput_mbps(CongestionControl cc, std::uint64_t every, std::uint64_t bytes) {
  StackConfig ca = config_a(), cb = config_b();
  ca.congestion = cc;
  ca.send_buffer = cb.recv_buffer = 8 << 20;
  ca.window_scale = cb.window_scale = 9;
  Net net(ca, cb);
  net.ps_per_byte = kGbit;
  net.delay = 5 * kMs;
  warm_arp(net);
  std::uint64_t n = 0;
  net.filter = [&](int from, const Frame& f, std::uint64_t) {
    Verdict v;
    v.drop = from == 0 && is_tcp_data(f) && ++n % every == 0;
    return v;
  };
  Transfer t(net, bytes, 0);
  const TimePs t0 = net.now;
  t.start();
  EXPECT_TRUE(net.run_until([&] { return t.data_done(); }, 600 * kSec));
  EXPECT_TRUE(t.sb.data_ok);
  return static_cast<double>(bytes) * 8 / (static_cast<double>(net.now - t0) * 1e-12) / 1e6;
}

TEST(Congestion, CubicOutrunsNewRenoOnALongPathWithPeriodicLoss) {
  // One loss in 3000 segments, 10 ms RTT: NewReno halves and regains one segment per RTT;
  // CUBIC backs off to 0.7 and grows along its cubic. Deterministic losses, same for both.
  const double reno = goodput_mbps(CongestionControl::NewReno, 3000, 24 << 20);
  const double cubic = goodput_mbps(CongestionControl::Cubic, 3000, 24 << 20);
  RecordProperty("newreno_mbps", std::to_string(reno));
  RecordProperty("cubic_mbps", std::to_string(cubic));
  EXPECT_GT(cubic, reno * 1.05);
}

}  // namespace
}  // namespace vtoe::tcpip::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
