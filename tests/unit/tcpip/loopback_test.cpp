// StackConfig::loopback: a connection between two of one stack's addresses (two guests behind one
// TOE) carries its bytes through StackListener::loop_back and never through transmit(); without
// it, such a connect() is refused at once and a frame from a local source is a martian.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <vector>

#include "tests/unit/tcpip/harness.h"

namespace vtoe::tcpip::test {
namespace {

const Ipv4 kAlias = 0x0A00000B;  // 10.0.0.11

// A listener that feeds looped frames back into its own stack after a small delay.
class LoopHost : public StackListener {
 public:
  explicit LoopHost(bool loopback) {
    StackConfig c = config_a();
    c.aliases = {{kAlias, MacAddr::local(11)}};
    c.loopback = loopback;
    stack = std::make_unique<Stack>(c, *this);
  }
  void transmit(Frame&& f) override { wire.push_back(std::move(f)); }
  void loop_back(Frame&& f) override { looped.push_back(std::move(f)); }
  void tcp_event(Event ev, const EventInfo& info) override { events.emplace_back(ev, info); }
  // Delivers looped frames (1 us each) and runs timers until `limit`.
  void run(TimePs limit) {
    while (now < limit) {
      if (!looped.empty()) {
        Frame f = std::move(looped.front());
        looped.pop_front();
        now += kUs;
        ++delivered;
        stack->receive_frame(f.data(), f.size(), now);
        continue;
      }
      const TimePs t = stack->next_deadline();
      if (t == kNever || t > limit) break;
      now = std::max(now, t);
      stack->poll(now);
    }
  }
  ConnId conn_of(Event ev) const {
    for (auto& e : events)
      if (e.first == ev) return e.second.conn;
    return 0;
  }
  std::unique_ptr<Stack> stack;
  std::deque<Frame> looped;
  std::vector<Frame> wire;
  std::vector<std::pair<Event, EventInfo>> events;
  TimePs now = 0;
  int delivered = 0;
};

TEST(Loopback, BytesBetweenTwoLocalAddressesNeverReachTheWire) {
  LoopHost h(true);
  ASSERT_NE(h.stack->listen(80, 4, 0, kAlias), 0u);
  const ConnId c = h.stack->connect(kAlias, 80, 0, 0, kIpA);
  ASSERT_NE(c, 0u);
  h.run(10 * kMs);
  const ConnId s = h.conn_of(Event::Accepted);
  ASSERT_NE(s, 0u);
  EXPECT_EQ(h.conn_of(Event::Connected), c);
  std::vector<std::uint8_t> data(20000), got(20000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7);
  std::size_t sent = 0, read = 0;
  while (read < data.size() && h.now < kSec) {
    sent += h.stack->send(c, data.data() + sent, data.size() - sent, h.now);
    h.run(h.now + kMs);
    read += h.stack->recv(s, got.data() + read, got.size() - read, h.now);
  }
  EXPECT_EQ(read, data.size());
  EXPECT_EQ(got, data);
  EXPECT_TRUE(h.wire.empty());  // no ARP, no segment on the wire
  EXPECT_GT(h.delivered, 10);
  EXPECT_EQ(h.stack->stats().drop_martian, 0u);
}

TEST(Loopback, OffRefusesTheConnectAndDropsLocalSources) {
  LoopHost h(false);
  ASSERT_NE(h.stack->listen(80, 4, 0, kAlias), 0u);
  EXPECT_EQ(h.stack->connect(kAlias, 80, 0, 0, kIpA), 0u);
  // A frame that claims one of our addresses as its source is a martian.
  LoopHost on(true);
  ASSERT_NE(on.stack->listen(80, 4, 0, kAlias), 0u);
  ASSERT_NE(on.stack->connect(kAlias, 80, 0, 0, kIpA), 0u);
  ASSERT_FALSE(on.looped.empty());
  const Frame syn = on.looped.front();
  h.stack->receive_frame(syn.data(), syn.size(), 1);
  EXPECT_EQ(h.stack->stats().drop_martian, 1u);
  EXPECT_TRUE(h.wire.empty());
}

}  // namespace
}  // namespace vtoe::tcpip::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
