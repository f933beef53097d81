// netvp::IngressWire: frames handed over in one batch (as the port drains a tick's worth from the
// real interface) reach the MAC one after another at the line rate, in order, each when its last
// bit arrives; a frame handed over while the wire is idle takes only its own time; beyond its
// bound the wire drops and counts; a frame that waited longer than max_wait of wall-clock time
// when its turn comes is dropped (stale) and the wire goes on with the next.
#include "netvp/ingress_wire.h"

#include <gtest/gtest.h>

#include "models/net/ethernet_mac.h"
#include "tests/support/sc_test_main.h"
#include "tests/unit/net/net_bench.h"

using vtoe::core::TimePs;
using vtoe::core::transfer_time_ps;
using vtoe::net::EthernetMac;
using vtoe::test::Collector;
using vtoe::test::Driver;
using vtoe::test::make_frame;
using vtoe::test::tag_of;

namespace {
const vtoe::test::Mac kDst{0x02, 0, 0, 0, 0, 0x01};
constexpr double kRate = 10e9;
}  // namespace

TEST(IngressWire, ABatchArrivesAtTheLineRateInOrder) {
  vtoe::netvp::IngressWire wire("wire", kRate, 16u << 20);
  Collector sink;
  wire.out.bind(sink);
  constexpr int kFrames = 1000;  // more than a 256 KiB FIFO holds (about 170 of 1514 bytes)
  Driver driver("driver", [&] {
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    for (int i = 0; i < kFrames; ++i) wire.in->receive_frame(make_frame(kDst, 1514, i));
    EXPECT_EQ(wire.queued(), static_cast<std::size_t>(kFrames));
  });
  sc_core::sc_start();
  const TimePs each = transfer_time_ps(EthernetMac::wire_bytes(1514), kRate);  // 1230.4 ns
  ASSERT_EQ(sink.arrivals.size(), static_cast<std::size_t>(kFrames));
  for (int i = 0; i < kFrames; ++i) {
    const auto& a = sink.arrivals[static_cast<std::size_t>(i)];
    EXPECT_EQ(tag_of(a.frame), static_cast<std::uint32_t>(i));
    EXPECT_EQ(a.time, 1'000'000 + static_cast<TimePs>(i + 1) * each) << "frame " << i;
  }
  EXPECT_EQ(wire.queued(), 0u);
}

TEST(IngressWire, AFrameOnAnIdleWireTakesOnlyItsOwnTime) {
  vtoe::netvp::IngressWire wire("wire", kRate, 16u << 20);
  Collector sink;
  wire.out.bind(sink);
  Driver driver("driver", [&] {
    wire.in->receive_frame(make_frame(kDst, 60, 1));  // the wire is busy 67.2 ns
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_US));
    wire.in->receive_frame(make_frame(kDst, 1514, 2));
  });
  sc_core::sc_start();
  ASSERT_EQ(sink.arrivals.size(), 2u);
  EXPECT_EQ(sink.arrivals[0].time, transfer_time_ps(EthernetMac::wire_bytes(60), kRate));
  EXPECT_EQ(sink.arrivals[1].time,
            10'000'000 + transfer_time_ps(EthernetMac::wire_bytes(1514), kRate));
}
TEST(IngressWire, BeyondItsBoundTheWireDropsAndCounts) {
  vtoe::netvp::IngressWire wire("wire", kRate, 100 * 1514);
  Collector sink;
  wire.out.bind(sink);
  Driver driver("driver", [&] {
    for (int i = 0; i < 150; ++i) wire.in->receive_frame(make_frame(kDst, 1514, i));
  });
  sc_core::sc_start();
  ASSERT_EQ(sink.arrivals.size(), 100u);
  EXPECT_EQ(tag_of(sink.arrivals.back().frame), 99u);  // the first 100 kept, in order
  EXPECT_EQ(wire.drops(), 50u);
}

TEST(IngressWire, AFrameThatWaitedTooLongInWallTimeIsDroppedWhenItsTurnComes) {
  using std::chrono::milliseconds;
  vtoe::netvp::IngressWire wire("wire", kRate, 16u << 20, milliseconds(1));
  std::chrono::steady_clock::time_point wall{};  // the test's wall clock
  wire.set_clock([&] { return wall; });
  Collector sink;
  wire.out.bind(sink);
  const TimePs each = transfer_time_ps(EthernetMac::wire_bytes(1514), kRate);
  Driver driver("driver", [&] {
    for (int i = 0; i < 3; ++i) wire.in->receive_frame(make_frame(kDst, 1514, i));
    // Frame 0 is on the wire; the simulation then falls 5 ms of wall time behind before frame 0
    // has arrived, so frames 1 and 2 are stale when their turn comes.
    wall += milliseconds(5);
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_US));
    wire.in->receive_frame(make_frame(kDst, 1514, 3));  // fresh: onto the wire at once
    wire.in->receive_frame(make_frame(kDst, 1514, 4));
    wall += std::chrono::microseconds(900);  // frame 4 will have waited 0.9 ms: not stale
  });
  sc_core::sc_start();
  ASSERT_EQ(sink.arrivals.size(), 3u);
  EXPECT_EQ(tag_of(sink.arrivals[0].frame), 0u);
  EXPECT_EQ(sink.arrivals[0].time, each);
  EXPECT_EQ(tag_of(sink.arrivals[1].frame), 3u);
  EXPECT_EQ(sink.arrivals[1].time, 10'000'000 + each);  // the dropped frames took no wire time
  EXPECT_EQ(tag_of(sink.arrivals[2].frame), 4u);
  EXPECT_EQ(sink.arrivals[2].time, 10'000'000 + 2 * each);
  EXPECT_EQ(wire.stale_drops(), 2u);
  EXPECT_EQ(wire.drops(), 0u);
  EXPECT_EQ(wire.queued(), 0u);
}

VTOE_TEST_MAIN
