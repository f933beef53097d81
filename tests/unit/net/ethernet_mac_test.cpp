// net::EthernetMac: serialisation timing, padding, queue overflow, tx-ready, rx filtering, ECN
// threshold marking.
#include "models/net/ethernet_mac.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "models/net/ethernet_link.h"
#include "models/tcpip/checksum.h"
#include "models/tcpip/headers.h"
#include "tests/unit/net/net_bench.h"

using namespace sc_core;
using vtoe::net::EthernetLink;
using vtoe::net::EthernetLinkParams;
using vtoe::net::EthernetMac;
using vtoe::net::EthernetMacParams;
using vtoe::net::Frame;
using vtoe::net::kBroadcastMac;
using vtoe::test::Collector;
using vtoe::test::Driver;
using vtoe::test::make_frame;
using vtoe::test::tag_of;

namespace {

const vtoe::net::MacAddress kOwn{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
const vtoe::net::MacAddress kOther{0x02, 0x00, 0x00, 0x00, 0x00, 0x02};

// (1514 + 4 + 8 + 12) bytes * 8 / 10 Gbit/s = 1230.4 ns.
constexpr vtoe::core::TimePs kFullSlot10G = 1'230'400;
// (60 + 4 + 8 + 12) bytes * 8 / 10 Gbit/s = 67.2 ns.
constexpr vtoe::core::TimePs kMinSlot10G = 67'200;

}  // namespace

TEST(EthernetMac, FullFramesLeaveAtLineRateBackToBack) {
  EthernetMac mac("mac");
  Collector wire;
  Collector up;  // nothing arrives: every port must be bound all the same
  mac.to_wire.bind(wire);
  mac.upper.bind(up);
  Driver drv("drv", [&] {
    for (std::uint32_t i = 0; i < 3; ++i) EXPECT_TRUE(mac.send(make_frame(kOther, 1514, i)));
    EXPECT_EQ(mac.tx_queue_frames(), 3u);
    EXPECT_EQ(mac.tx_queue_bytes(), 3u * 1514);
    wait(sc_time::from_value(kFullSlot10G));
    EXPECT_EQ(mac.tx_queue_bytes(), 2u * 1514);
    // A frame sent long after the queue drained starts at once.
    wait(sc_time::from_value(10'000'000));
    mac.send(make_frame(kOther, 1514, 3));
  });
  sc_start();
  EXPECT_EQ(mac.wire_time_ps(1514), kFullSlot10G);
  ASSERT_EQ(wire.arrivals.size(), 4u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(wire.arrivals[i].time, (i + 1) * kFullSlot10G) << i;
    EXPECT_EQ(tag_of(wire.arrivals[i].frame), i);
    EXPECT_EQ(wire.arrivals[i].frame.size(), 1514u);
  }
  EXPECT_EQ(wire.arrivals[3].time, kFullSlot10G + 10'000'000 + kFullSlot10G);
  EXPECT_EQ(mac.tx_frames(), 4u);
  EXPECT_EQ(mac.tx_bytes(), 4u * 1514);
  EXPECT_EQ(mac.tx_queue_bytes(), 0u);
}

TEST(EthernetMac, ShortFramesAreTimedAsPadded) {
  EthernetMacParams p;
  p.pad_short_frames = true;
  EthernetMac plain("plain");
  EthernetMac padding("padding", p);
  Collector w1;
  Collector w2;
  Collector up;
  plain.to_wire.bind(w1);
  padding.to_wire.bind(w2);
  plain.upper.bind(up);
  padding.upper.bind(up);
  Driver drv("drv", [&] {
    plain.send(make_frame(kBroadcastMac, 42, 1, 0x0806));  // an ARP request is 42 bytes
    plain.send(make_frame(kBroadcastMac, 42, 2, 0x0806));
    padding.send(make_frame(kBroadcastMac, 42, 1, 0x0806));
  });
  sc_start();
  ASSERT_EQ(w1.arrivals.size(), 2u);
  EXPECT_EQ(w1.arrivals[0].time, kMinSlot10G);
  EXPECT_EQ(w1.arrivals[1].time, 2 * kMinSlot10G);
  EXPECT_EQ(w1.arrivals[0].frame.size(), 42u);
  ASSERT_EQ(w2.arrivals.size(), 1u);
  EXPECT_EQ(w2.arrivals[0].time, kMinSlot10G);
  ASSERT_EQ(w2.arrivals[0].frame.size(), 60u);
  for (std::size_t i = 42; i < 60; ++i) EXPECT_EQ(w2.arrivals[0].frame[i], 0) << i;
}

TEST(EthernetMac, OneGigabitRate) {
  EthernetMacParams p;
  p.rate_bps = 1e9;
  EthernetMac mac("mac", p);
  Collector wire;
  Collector up;  // nothing arrives: every port must be bound all the same
  mac.to_wire.bind(wire);
  mac.upper.bind(up);
  Driver drv("drv", [&] { mac.send(make_frame(kOther, 1514)); });
  sc_start();
  ASSERT_EQ(wire.arrivals.size(), 1u);
  EXPECT_EQ(wire.arrivals[0].time, 12'304'000u);
}

TEST(EthernetMac, QueueOverflowIsCountedAsTxDrops) {
  EthernetMacParams p;
  p.tx_queue_frames = 4;
  EthernetMac mac("mac", p);
  Collector wire;
  Collector up;  // nothing arrives: every port must be bound all the same
  mac.to_wire.bind(wire);
  mac.upper.bind(up);
  Driver drv("drv", [&] {
    for (std::uint32_t i = 0; i < 6; ++i) {
      EXPECT_EQ(mac.send(make_frame(kOther, 100, i)), i < 4) << i;
    }
    // One slot later there is room for one more.
    wait(sc_time::from_value(mac.wire_time_ps(100)));
    EXPECT_TRUE(mac.send(make_frame(kOther, 100, 6)));
    EXPECT_FALSE(mac.send(make_frame(kOther, 100, 7)));
  });
  sc_start();
  EXPECT_EQ(mac.tx_drops(), 3u);
  ASSERT_EQ(wire.arrivals.size(), 5u);
  const std::uint32_t want[5] = {0, 1, 2, 3, 6};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(tag_of(wire.arrivals[i].frame), want[i]);
}

TEST(EthernetMac, TxReadyCallbackFiresWhenQueueDrainsBelowThreshold) {
  EthernetMacParams p;
  p.tx_queue_frames = 8;
  EthernetMac mac("mac", p);
  Collector wire;
  Collector up;  // nothing arrives: every port must be bound all the same
  mac.to_wire.bind(wire);
  mac.upper.bind(up);
  std::vector<vtoe::core::TimePs> calls;
  std::uint32_t next = 0;
  mac.set_tx_ready_callback(
      [&] {
        calls.push_back(vtoe::core::now_ps());
        EXPECT_EQ(mac.tx_queue_frames(), 3u);
        // Refill from inside the callback, as a producer would.
        if (calls.size() == 1) {
          while (mac.send(make_frame(kOther, 1514, next))) ++next;
        }
      },
      4);
  Driver drv("drv", [&] {
    while (mac.send(make_frame(kOther, 1514, next))) ++next;
  });
  sc_start();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], 5 * kFullSlot10G);        // 8 -> 3 after the fifth frame left
  EXPECT_EQ(calls[1], (5 + 5) * kFullSlot10G);  // refilled to 8, drained to 3 again
  EXPECT_EQ(next, 13u);
  ASSERT_EQ(wire.arrivals.size(), 13u);
  for (std::uint32_t i = 0; i < 13; ++i) {
    EXPECT_EQ(tag_of(wire.arrivals[i].frame), i);
    EXPECT_EQ(wire.arrivals[i].time, (i + 1) * kFullSlot10G);
  }
  EXPECT_EQ(mac.tx_drops(), 2u);  // the two failed sends that found the queue full
}

TEST(EthernetMac, ReceiveFiltersByDestinationAndLength) {
  EthernetMacParams pp;
  pp.promiscuous = true;
  EthernetMac mac("mac");
  EthernetMac promisc("promisc", pp);
  Collector up;
  Collector up_p;
  Collector wire;
  mac.upper.bind(up);
  promisc.upper.bind(up_p);
  mac.to_wire.bind(wire);
  promisc.to_wire.bind(wire);
  Driver drv("drv", [&] {
    for (EthernetMac* m : {&mac, &promisc}) {
      auto& in = m->from_wire;
      in->receive_frame(make_frame(kOwn, 60, 1));
      in->receive_frame(make_frame(kBroadcastMac, 42, 2));
      in->receive_frame(make_frame(kOther, 60, 3));
      in->receive_frame(make_frame({0x01, 0x00, 0x5e, 0, 0, 1}, 60, 4));  // multicast
      in->receive_frame(Frame(13, 0xff));                                 // runt
      in->receive_frame(make_frame(kOwn, 1518, 5));                       // longest accepted
      in->receive_frame(make_frame(kOwn, 1519, 6));                       // too long
    }
  });
  sc_start();
  ASSERT_EQ(up.arrivals.size(), 3u);
  EXPECT_EQ(tag_of(up.arrivals[0].frame), 1u);
  EXPECT_EQ(tag_of(up.arrivals[1].frame), 2u);
  EXPECT_EQ(tag_of(up.arrivals[2].frame), 5u);
  EXPECT_EQ(mac.rx_frames(), 3u);
  EXPECT_EQ(mac.rx_bytes(), 60u + 42 + 1518);
  EXPECT_EQ(mac.rx_errors(), 2u);
  EXPECT_EQ(mac.rx_filtered(), 2u);
  EXPECT_EQ(up_p.arrivals.size(), 5u);
  EXPECT_EQ(promisc.rx_errors(), 2u);
  EXPECT_EQ(promisc.rx_filtered(), 0u);
}

TEST(EthernetMac, TwoMacsOverALink) {
  EthernetMacParams pa;
  pa.address = kOwn;
  EthernetMacParams pb;
  pb.address = kOther;
  EthernetMac a("a", pa);
  EthernetMac b("b", pb);
  EthernetLinkParams lp;
  lp.delay_ps = 500'000;
  EthernetLink link("link", lp);
  a.to_wire.bind(link.a_in);
  b.to_wire.bind(link.b_in);
  link.a_out.bind(a.from_wire);
  link.b_out.bind(b.from_wire);
  Collector up_a;
  Collector up_b;
  a.upper.bind(up_a);
  b.upper.bind(up_b);
  Driver drv("drv", [&] {
    a.send(make_frame(kOther, 1514, 1));
    a.send(make_frame(kOther, 1514, 2));
    b.send(make_frame(kOwn, 64, 3));
  });
  sc_start();
  ASSERT_EQ(up_b.arrivals.size(), 2u);
  EXPECT_EQ(up_b.arrivals[0].time, kFullSlot10G + 500'000);
  EXPECT_EQ(up_b.arrivals[1].time, 2 * kFullSlot10G + 500'000);
  ASSERT_EQ(up_a.arrivals.size(), 1u);
  EXPECT_EQ(up_a.arrivals[0].time, b.wire_time_ps(64) + 500'000);
  EXPECT_EQ(link.frames(), 3u);
  EXPECT_EQ(link.bytes(), 2u * 1514 + 64);
}

// A link end without a capture takes frames ahead of time: the MAC hands each frame over when it
// is queued, with the time its last bit leaves, and schedules no event of its own. Receivers see
// the same frames at the same times as through a link that records a capture (which takes them
// as they leave), and the counters move at the departures, not before.
TEST(EthernetMac, FramesHandedAheadArriveAsIfTheyLeftOneByOne) {
  struct Pair {
    Pair(const char* tag)
        : a((std::string(tag) + "_a").c_str(), params(kOwn)),
          b((std::string(tag) + "_b").c_str(), params(kOther)),
          link((std::string(tag) + "_link").c_str(), link_params()) {
      a.to_wire.bind(link.a_in);
      b.to_wire.bind(link.b_in);
      link.a_out.bind(a.from_wire);
      link.b_out.bind(b.from_wire);
      a.upper.bind(up_a);
      b.upper.bind(up_b);
    }
    static EthernetMacParams params(const vtoe::net::MacAddress& address) {
      EthernetMacParams p;
      p.address = address;
      p.tx_queue_frames = 3;
      return p;
    }
    static EthernetLinkParams link_params() {
      EthernetLinkParams lp;
      lp.delay_ps = 500'000;
      return lp;
    }
    EthernetMac a, b;
    EthernetLink link;
    Collector up_a, up_b;
  };
  Pair ahead("ahead");
  Pair leaving("leaving");
  leaving.link.enable_pcap(::testing::TempDir() + "mac_ahead_test.pcap");
  auto traffic = [](Pair& p, bool check) {
    // Four full frames into a queue of three: the fourth is dropped, as the queue is full then.
    for (std::uint32_t i = 0; i < 4; ++i) p.a.send(make_frame(kOther, 1514, i));
    p.b.send(make_frame(kOwn, 64, 10));
    if (check) {
      EXPECT_EQ(p.a.tx_queue_frames(), 3u);
      EXPECT_EQ(p.a.tx_drops(), 1u);
      EXPECT_EQ(p.a.tx_frames(), 0u);  // nothing has left yet
      EXPECT_EQ(p.link.frames(), 0u);
    }
    wait(sc_time::from_value(kFullSlot10G));
    if (check) {
      EXPECT_EQ(p.a.tx_frames(), 1u);
      EXPECT_EQ(p.a.tx_queue_frames(), 2u);
      EXPECT_EQ(p.link.frames(), 2u);  // a's first and b's short frame
    }
    // Once a slot is free again, a frame is taken; one sent later starts when it is sent.
    EXPECT_TRUE(p.a.send(make_frame(kOther, 1514, 4)));
    wait(sc_time::from_value(20'000'000));
    p.a.send(make_frame(kOther, 100, 5));
  };
  Driver drv_ahead("drv_ahead", [&] { traffic(ahead, true); });
  Driver drv_leaving("drv_leaving", [&] { traffic(leaving, false); });
  sc_start();
  EXPECT_TRUE(ahead.a.sends_ahead());
  EXPECT_FALSE(leaving.a.sends_ahead());
  ASSERT_EQ(ahead.up_b.arrivals.size(), 5u);
  ASSERT_EQ(leaving.up_b.arrivals.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(ahead.up_b.arrivals[i].time, leaving.up_b.arrivals[i].time) << i;
    EXPECT_EQ(tag_of(ahead.up_b.arrivals[i].frame), tag_of(leaving.up_b.arrivals[i].frame)) << i;
  }
  EXPECT_EQ(ahead.up_b.arrivals[0].time, kFullSlot10G + 500'000);
  EXPECT_EQ(tag_of(ahead.up_b.arrivals[3].frame), 4u);
  ASSERT_EQ(ahead.up_a.arrivals.size(), 1u);
  EXPECT_EQ(ahead.up_a.arrivals[0].time, leaving.up_a.arrivals[0].time);
  EXPECT_EQ(ahead.a.tx_frames(), 5u);
  EXPECT_EQ(ahead.a.tx_drops(), 1u);
  EXPECT_EQ(ahead.a.tx_bytes(), leaving.a.tx_bytes());
  EXPECT_EQ(ahead.link.frames(), leaving.link.frames());
  EXPECT_EQ(ahead.link.bytes(), leaving.link.bytes());
  EXPECT_EQ(ahead.a.tx_queue_frames(), 0u);
}

// A frame queued for a later time (a pipeline in front of the MAC) leaves when it is ready or
// when the frame before it has left, whichever is later; without a wire that takes frames ahead
// a later time is refused.
TEST(EthernetMac, SendAtALaterTimeNeedsAWireThatTakesFramesAhead) {
  EthernetMac a("a");
  EthernetMac b("b", [] {
    EthernetMacParams p;
    p.address = kOther;
    return p;
  }());
  EthernetLink link("link");
  a.to_wire.bind(link.a_in);
  b.to_wire.bind(link.b_in);
  link.a_out.bind(a.from_wire);
  link.b_out.bind(b.from_wire);
  Collector up_a, up_b;
  a.upper.bind(up_a);
  b.upper.bind(up_b);
  EthernetMac lone("lone");
  Collector wire, up;
  lone.to_wire.bind(wire);
  lone.upper.bind(up);
  Driver drv("drv", [&] {
    EXPECT_TRUE(a.send_at(make_frame(kOther, 1514, 1), 1'000'000));
    EXPECT_TRUE(a.send_at(make_frame(kOther, 1514, 2), 1'500'000));  // waits for the first
    EXPECT_EQ(a.tx_queue_frames(), 0u);                              // neither is ready yet
    EXPECT_THROW(lone.send_at(make_frame(kOther, 64), 1'000), std::logic_error);
  });
  sc_start();
  ASSERT_EQ(up_b.arrivals.size(), 2u);
  EXPECT_EQ(up_b.arrivals[0].time, 1'000'000 + kFullSlot10G + 1'000'000);
  EXPECT_EQ(up_b.arrivals[1].time, 1'000'000 + 2 * kFullSlot10G + 1'000'000);
}

// Wiring is checked by SystemC: a MAC whose wire port is left unbound does not start.
TEST(EthernetMac, UnboundWirePortFailsElaboration) {
  EthernetMac mac("mac");
  Collector up;
  mac.upper.bind(up);  // to_wire left unbound: an unplugged cable is a wiring mistake
  try {
    sc_start();
    FAIL() << "elaboration passed with mac.to_wire unbound";
  } catch (const sc_report& r) {
    const std::string what = r.what();
    EXPECT_NE(what.find("port not bound"), std::string::npos) << what;
    EXPECT_NE(what.find("mac.to_wire"), std::string::npos) << what;
  }
}

TEST(EthernetMac, UnboundUpperPortFailsElaboration) {
  EthernetMac mac("mac");
  Collector wire;
  mac.to_wire.bind(wire);
  try {
    sc_start();
    FAIL() << "elaboration passed with mac.upper unbound";
  } catch (const sc_report& r) {
    EXPECT_NE(std::string(r.what()).find("mac.upper"), std::string::npos) << r.what();
  }
}

// The same MAC, bound, passes frames both ways through its ports.
TEST(EthernetMac, BoundPortsPassFramesBothWays) {
  EthernetMac mac("mac");
  Collector wire;
  Collector up;
  mac.to_wire.bind(wire);
  mac.upper.bind(up);
  Driver drv("drv", [&] {
    mac.send(make_frame(kOther, 100, 7));
    mac.from_wire->receive_frame(make_frame(kOwn, 100, 8));
  });
  sc_start();
  ASSERT_EQ(wire.arrivals.size(), 1u);
  EXPECT_EQ(tag_of(wire.arrivals[0].frame), 7u);
  ASSERT_EQ(up.arrivals.size(), 1u);
  EXPECT_EQ(tag_of(up.arrivals[0].frame), 8u);
}

namespace {

// A TCP/IPv4 frame to kOther with the given IP ECN field, id and TTL (checksums correct).
Frame tcp_frame(std::uint8_t ecn, std::uint16_t id, std::uint8_t ttl = 64) {
  namespace tcpip = vtoe::tcpip;
  tcpip::MacAddr dst;
  dst.b = kOther;
  tcpip::TcpHeader h;
  h.src_port = 5000;
  h.dst_port = 80;
  h.seq = 1000u + id;
  h.flags = tcpip::tcp_flags::kAck;
  const std::uint8_t data[100] = {1, 2, 3};
  Frame f = tcpip::build_tcp_frame(tcpip::MacAddr::local(1), dst, 0x0A000001, 0x0A000002, h, {},
                                   data, sizeof data, id);
  f[15] = static_cast<std::uint8_t>((f[15] & ~3) | ecn);
  f[22] = ttl;
  f[24] = f[25] = 0;
  tcpip::store_be16(f.data() + 24, tcpip::internet_checksum(f.data() + 14, 20));
  return f;
}

std::uint8_t ecn_of(const Frame& f) { return f[15] & 3; }

}  // namespace

TEST(EthernetMac, MarkCeSetsCeOnEctOnlyAndKeepsTheChecksumRight) {
  // Many ids and TTLs: the incremental update (RFC 1624) must hold for every carry pattern.
  for (std::uint32_t i = 0; i < 4096; ++i) {
    const std::uint16_t id = static_cast<std::uint16_t>(i * 7919);
    const std::uint8_t ttl = static_cast<std::uint8_t>(1 + i % 255);
    for (std::uint8_t e : {std::uint8_t{1}, std::uint8_t{2}}) {
      Frame f = tcp_frame(e, id, ttl);
      ASSERT_TRUE(EthernetMac::mark_ce(f));
      EXPECT_EQ(ecn_of(f), 3);
      vtoe::tcpip::FrameView v;
      ASSERT_TRUE(vtoe::tcpip::decode_frame(f.data(), f.size(), v));
      ASSERT_TRUE(v.checksums_ok) << "id " << id << " ttl " << int(ttl) << " ecn " << int(e);
    }
    Frame not_ect = tcp_frame(0, id, ttl), ce = tcp_frame(3, id, ttl);
    const Frame a = not_ect, b = ce;
    EXPECT_FALSE(EthernetMac::mark_ce(not_ect));
    EXPECT_FALSE(EthernetMac::mark_ce(ce));
    EXPECT_EQ(not_ect, a);
    EXPECT_EQ(ce, b);
  }
  Frame other = make_frame(kOther, 100);  // not IPv4
  const Frame o = other;
  EXPECT_FALSE(EthernetMac::mark_ce(other));
  EXPECT_EQ(other, o);
}

TEST(EthernetMac, EcnThresholdMarksEctFramesQueuedBehindTheThreshold) {
  EthernetMacParams p;
  p.ecn_mark_frames = 3;
  EthernetMac mac("mac", p);
  Collector wire, up;
  mac.to_wire.bind(wire);
  mac.upper.bind(up);
  Driver drv("drv", [&] {
    // Six ECT(0) frames and one Not-ECT at once: the 4th frame onwards finds 3 queued.
    for (std::uint16_t i = 0; i < 6; ++i) mac.send(tcp_frame(2, i));
    mac.send(tcp_frame(0, 6));
  });
  sc_start();
  ASSERT_EQ(wire.arrivals.size(), 7u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(ecn_of(wire.arrivals[i].frame), i < 3 ? 2 : 3) << i;
  EXPECT_EQ(ecn_of(wire.arrivals[6].frame), 0);  // Not-ECT is never marked
  EXPECT_EQ(mac.ce_marks(), 3u);
  for (const auto& a : wire.arrivals) {
    vtoe::tcpip::FrameView v;
    ASSERT_TRUE(vtoe::tcpip::decode_frame(a.frame.data(), a.frame.size(), v));
    EXPECT_TRUE(v.checksums_ok);
  }
}

VTOE_TEST_MAIN
