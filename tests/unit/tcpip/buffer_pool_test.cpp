// The shared local buffer memory (StackConfig::shared_buffer, a TOE's SRAM): what every
// connection holds counts against one pool; a full pool closes receive windows (zero window,
// never a loss) and holds writers back, and freed space reopens them.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "models/tcpip/buffer_pool.h"
#include "tests/unit/tcpip/harness.h"

namespace vtoe::tcpip::test {
namespace {

TEST(BufferPool, AdjustMovesAHoldersShareAndKeepsThePeak) {
  BufferPool p(1000);
  std::size_t a = 0, b = 0;
  p.adjust(a, 600);
  p.adjust(b, 300);
  EXPECT_EQ(p.used(), 900u);
  EXPECT_EQ(p.free(), 100u);
  p.adjust(a, 100);
  EXPECT_EQ(p.used(), 400u);
  EXPECT_EQ(a, 100u);
  EXPECT_EQ(p.peak(), 900u);
  p.adjust(b, 950);  // over the capacity: free() is 0, never negative
  EXPECT_EQ(p.free(), 0u);
}

TEST(BufferPool, AFullReceivePoolClosesTheWindowAndLosesNothing) {
  StackConfig cb = config_b();
  cb.recv_buffer = 256 * 1024;
  cb.shared_buffer = 24 * 1024;  // far less than one connection's receive buffer
  Net net(config_a(), cb);
  warm_arp(net);
  Transfer t(net, 1 << 20, 0);
  t.sb.reading = false;  // the host does not read: the pool fills with unread data
  t.start();
  const BufferPool* pool = net.b.stack->buffer_pool();
  ASSERT_NE(pool, nullptr);
  std::size_t most = 0;
  net.run_until(
      [&] {
        most = std::max(most, pool->used());
        return false;
      },
      3 * kSec);
  // The window closed once unread data filled the pool: the sender waits on a zero window.
  EXPECT_LE(most, pool->capacity());
  EXPECT_LE(t.sb.received, 0u);
  EXPECT_GT(net.a.stack->stats().persist_probes, 0u);
  // Nothing the window allowed is dropped: only the bytes of zero-window probes beyond it.
  // Nothing the window allowed is dropped: only zero-window probes, answered with an ACK.
  const auto& sb = net.b.stack->stats();
  EXPECT_EQ(sb.total_drops(), sb.drop_out_of_window);
  EXPECT_LE(sb.drop_out_of_window, net.a.stack->stats().persist_probes);
  const std::uint64_t held = net.b.stack->info(t.sb.conn).readable;
  EXPECT_GT(held, 20u * 1024);
  EXPECT_LE(held, 24u * 1024);
  // The host reads again: the window reopens and every byte arrives intact.
  t.sb.reading = true;
  t.drain(net.b, t.sb);
  ASSERT_TRUE(net.run_until([&] { return t.data_done(); }, 30 * kSec));
  EXPECT_TRUE(t.sb.data_ok);
  EXPECT_EQ(t.sb.received, 1u << 20);
  EXPECT_LE(pool->peak(), pool->capacity());
}

TEST(BufferPool, ConnectionsShareThePoolAndAllFinish) {
  StackConfig ca = config_a();
  ca.send_buffer = 64 * 1024;
  ca.shared_buffer = 48 * 1024;  // four connections of 64 KiB send buffers: 48 KiB in all
  Net net(ca, config_b());
  warm_arp(net);
  constexpr int kConns = 4;
  constexpr std::uint64_t kBytes = 256 * 1024;
  std::vector<Side> a(kConns), b(kConns);
  std::uint8_t buf[8192];
  auto pump = [&](int i) {
    while (a[i].conn && a[i].sent < kBytes) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, kBytes - a[i].sent));
      for (std::size_t k = 0; k < n; ++k) buf[k] = pattern(a[i].sent + k, 10 + i);
      const std::size_t sent = net.a.stack->send(a[i].conn, buf, n, net.now);
      a[i].sent += sent;
      if (sent < n) break;
    }
  };
  auto side_of = [&](std::vector<Side>& v, ConnId c) -> Side* {
    for (auto& s : v)
      if (s.conn == c) return &s;
    return nullptr;
  };
  net.a.on_event = [&](Event ev, const EventInfo& info) {
    if (ev == Event::Connected || ev == Event::SendAcked || ev == Event::Writable)
      for (int i = 0; i < kConns; ++i)
        if (a[i].conn == info.conn) pump(i);
  };
  int accepted = 0;
  net.b.on_event = [&](Event ev, const EventInfo& info) {
    if (ev == Event::Accepted) b[accepted++].conn = info.conn;
    if (ev == Event::Readable || ev == Event::Accepted) {
      Side* s = side_of(b, info.conn);
      if (!s) return;
      for (;;) {
        const std::size_t n = net.b.stack->recv(s->conn, buf, sizeof buf, net.now);
        if (n == 0) break;
        s->received += n;
      }
    }
  };
  net.b.stack->listen(5000, 16, net.now);
  for (int i = 0; i < kConns; ++i) a[i].conn = net.a.stack->connect(kIpB, 5000, 0, net.now);
  const BufferPool* pool = net.a.stack->buffer_pool();
  ASSERT_NE(pool, nullptr);
  std::size_t most = 0;
  auto all_done = [&] {
    most = std::max(most, pool->used());
    std::uint64_t got = 0;
    for (auto& s : b) got += s.received;
    return got == kConns * kBytes;
  };
  const bool done = net.run_until(all_done, 30 * kSec);
  ASSERT_TRUE(done);
  EXPECT_LE(most, pool->capacity());
  EXPECT_EQ(pool->peak(), pool->capacity()) << "the writers filled the pool";
  for (int i = 0; i < kConns; ++i) EXPECT_EQ(a[i].sent, kBytes);
  EXPECT_EQ(net.a.stack->stats().total_drops(), 0u);
}

}  // namespace
}  // namespace vtoe::tcpip::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
