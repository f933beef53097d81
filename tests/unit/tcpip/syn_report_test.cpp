// Stack::report_syns (a listener learns of a connection when its SYN arrives, before the
// handshake completes: what a split-TCP proxy with early SYN forwarding needs) and
// StackConfig::linux_slow_start (cwnd grows by everything an ACK acknowledges).
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/tcpip/harness.h"

namespace vtoe::tcpip::test {
namespace {

TEST(SynReport, AReportingListenerHearsOfTheSynBeforeTheHandshakeCompletes) {
  Net net;
  const ConnId l = net.b.stack->listen(80, 4, 0);
  net.b.stack->report_syns(l, true);
  const ConnId c = net.a.stack->connect(kIpB, 80, 0, 0);
  // The SYN reaches B after the ARP exchange; the handshake completes one RTT later.
  ASSERT_TRUE(net.run_until([&] { return !net.b.syns.empty(); }, kSec));
  ASSERT_EQ(net.b.syns.size(), 1u);
  EXPECT_EQ(net.b.syns[0].listener, l);
  EXPECT_EQ(net.b.syn_states[0], TcpState::SynReceived);
  EXPECT_EQ(net.b.count(Event::Accepted), 0);
  const TimePs syn_at = net.now;
  ASSERT_TRUE(net.run_until([&] { return net.b.count(Event::Accepted) > 0; }, kSec));
  EXPECT_EQ(net.now - syn_at, 2 * net.delay);                      // SYN-ACK out and the ACK back
  EXPECT_EQ(net.b.events.back().second.conn, net.b.syns[0].conn);  // the same connection
  EXPECT_EQ(net.a.count(Event::Connected, c), 1);
}

TEST(SynReport, OffByDefaultAndTheBacklogIsStillReleased) {
  Net net;
  const ConnId l = net.b.stack->listen(80, 1, 0);  // one half-open connection at most
  for (int i = 0; i < 3; ++i) {
    if (i == 1) net.b.stack->report_syns(l, true);
    net.a.stack->connect(kIpB, 80, 0, net.now);
    ASSERT_TRUE(net.run_until([&] { return net.b.count(Event::Accepted) == i + 1; }, kSec)) << i;
  }
  EXPECT_EQ(net.b.syns.size(), 2u);  // the first SYN came before the listener asked
  EXPECT_EQ(net.b.stack->stats().drop_listen_overflow, 0u);
}

// Data segments A sends in each RTT-long round of a bulk transfer's slow start.
std::vector<int> rounds_of(bool linux_growth) {
  StackConfig ca = config_a();
  ca.linux_slow_start = linux_growth;
  ca.hystart = false;
  StackConfig cb = config_b();
  cb.recv_buffer = 4 << 20;
  Net net(ca, cb);
  net.delay = 10 * kMs;
  net.keep_log = true;
  net.b.stack->listen(80, 4, 0);
  const ConnId c = net.a.stack->connect(kIpB, 80, 0, 0);
  EXPECT_TRUE(net.run_until([&] { return net.a.count(Event::Connected, c) > 0; }, kSec));
  const TimePs start = net.now;
  std::vector<std::uint8_t> data(2 << 20, 0x5a);
  net.a.stack->send(c, data.data(), data.size(), net.now);
  net.run_for(4 * 2 * net.delay + kMs);
  std::vector<int> per_round(4, 0);
  for (const LoggedFrame& f : net.log) {
    FrameView v;
    if (f.from != 0 || f.t < start || !decode_frame(f.f.data(), f.f.size(), v)) continue;
    if (!v.is_tcp || v.payload_len == 0) continue;
    const auto round = static_cast<std::size_t>((f.t - start) / (2 * net.delay));
    if (round < per_round.size()) ++per_round[round];
  }
  return per_round;
}

TEST(LinuxSlowStart, DoublesPerRoundWhereRfc5681GrowsByHalf) {
  // An ACK every second segment: RFC 5681 adds one SMSS per ACK (x1.5 per round), Linux adds
  // what the ACK covers (x2).
  EXPECT_EQ(rounds_of(true), (std::vector<int>{10, 20, 40, 80}));
  const std::vector<int> rfc = rounds_of(false);
  EXPECT_EQ(rfc[0], 10);
  EXPECT_EQ(rfc[1], 15);
  EXPECT_LT(rfc[3], 60);
}

}  // namespace
}  // namespace vtoe::tcpip::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
