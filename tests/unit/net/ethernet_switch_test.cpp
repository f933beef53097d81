// net::EthernetSwitch: learning and flooding, given forwarding, store-and-forward timing, per-port
// output buffers with their drop counters.
#include "models/net/ethernet_switch.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "tests/unit/net/net_bench.h"

using namespace sc_core;
using vtoe::net::EthernetMac;
using vtoe::net::EthernetSwitch;
using vtoe::net::EthernetSwitchParams;
using vtoe::net::Forwarding;
using vtoe::net::Frame;
using vtoe::test::Collector;
using vtoe::test::Driver;
using vtoe::test::Mac;
using vtoe::test::tag_of;

namespace {

const Mac kA{0x02, 0, 0, 0, 0, 0x0a};
const Mac kB{0x02, 0, 0, 0, 0, 0x0b};
const Mac kC{0x02, 0, 0, 0, 0, 0x0c};
const Mac kBroadcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

Frame frame(const Mac& dst, const Mac& src, std::size_t len, std::uint32_t tag) {
  Frame f = vtoe::test::make_frame(dst, len, tag);
  for (int i = 0; i < 6; ++i) f[6 + i] = src[i];
  return f;
}

EthernetSwitchParams three_ports(double rate = 1e9, std::size_t buffer = 1 << 20) {
  EthernetSwitchParams p;
  p.ports.resize(3);
  for (auto& port : p.ports) {
    port.rate_bps = rate;
    port.buffer_bytes = buffer;
  }
  return p;
}

// A switch with a collector on every output.
struct Bench {
  explicit Bench(const EthernetSwitchParams& p) : sw("sw", p), at(p.ports.size()) {
    for (std::size_t i = 0; i < at.size(); ++i) sw.out[i].bind(at[i]);
  }
  EthernetSwitch sw;
  std::vector<Collector> at;
};

}  // namespace

TEST(EthernetSwitch, FloodsUnknownThenForwardsToTheLearnedPortOnly) {
  Bench b(three_ports());
  Driver drv("drv", [&] {
    b.sw.in[0]->receive_frame(frame(kB, kA, 100, 1));  // B unknown: flooded to 1 and 2
    wait(sc_time::from_value(10'000'000));
    b.sw.in[1]->receive_frame(frame(kA, kB, 100, 2));  // A learned on port 0: there only
    wait(sc_time::from_value(10'000'000));
    b.sw.in[0]->receive_frame(frame(kB, kA, 100, 3));  // B learned on port 1: there only
  });
  sc_start();
  ASSERT_EQ(b.at[0].arrivals.size(), 1u);
  EXPECT_EQ(tag_of(b.at[0].arrivals[0].frame), 2u);
  ASSERT_EQ(b.at[1].arrivals.size(), 2u);
  EXPECT_EQ(tag_of(b.at[1].arrivals[0].frame), 1u);
  EXPECT_EQ(tag_of(b.at[1].arrivals[1].frame), 3u);
  ASSERT_EQ(b.at[2].arrivals.size(), 1u);
  EXPECT_EQ(tag_of(b.at[2].arrivals[0].frame), 1u);
  EXPECT_EQ(b.sw.lookup(kA), 0);
  EXPECT_EQ(b.sw.lookup(kB), 1);
  EXPECT_EQ(b.sw.lookup(kC), -1);
  EXPECT_EQ(b.sw.frames(), 3u);
  EXPECT_EQ(b.sw.forwarded(), 4u);
  EXPECT_EQ(b.sw.drops(), 0u);
}

TEST(EthernetSwitch, StoreAndForwardTimingIsLatencyPlusOneSerialisationPerFrame) {
  EthernetSwitchParams p = three_ports(1e9);
  p.latency_ps = 2'000'000;  // 2 us
  p.table[kB] = 1;
  Bench b(p);
  Driver drv("drv", [&] {
    // Two back-to-back 1000-byte frames: the second waits for the first's slot.
    b.sw.in[0]->receive_frame(frame(kB, kA, 1000, 1));
    b.sw.in[0]->receive_frame(frame(kB, kA, 1000, 2));
  });
  sc_start();
  ASSERT_EQ(b.at[1].arrivals.size(), 2u);
  const vtoe::core::TimePs slot = vtoe::core::transfer_time_ps(EthernetMac::wire_bytes(1000), 1e9);
  EXPECT_EQ(slot, 8'192'000u);  // 1024 wire bytes at 1 Gbit/s
  EXPECT_EQ(b.at[1].arrivals[0].time, 2'000'000 + slot);
  EXPECT_EQ(b.at[1].arrivals[1].time, 2'000'000 + 2 * slot);
  EXPECT_TRUE(b.at[2].arrivals.empty());  // a given entry: no flooding
}

TEST(EthernetSwitch, AFullOutputBufferDropsAndCountsPerPort) {
  // Two inputs converge on port 2, whose buffer holds three 1000-byte frames.
  EthernetSwitchParams p = three_ports(1e9, 3000);
  p.table[kC] = 2;
  Bench b(p);
  Driver drv("drv", [&] {
    for (std::uint32_t i = 0; i < 3; ++i) {
      b.sw.in[0]->receive_frame(frame(kC, kA, 1000, i));
      b.sw.in[1]->receive_frame(frame(kC, kB, 1000, 10 + i));
    }
  });
  sc_start();
  EXPECT_EQ(b.at[2].arrivals.size(), 3u);
  EXPECT_EQ(b.sw.port_drops(2), 3u);
  EXPECT_EQ(b.sw.port_drops(0), 0u);
  EXPECT_EQ(b.sw.drops(), 3u);
  EXPECT_EQ(b.sw.port_tx_frames(2), 3u);
  EXPECT_EQ(b.sw.port_queue_bytes(2), 0u);  // drained
  EXPECT_EQ(b.sw.stats().counter("port2_drops").value(), 3u);
}

TEST(EthernetSwitch, OutputBufferOccupancyIsATimeWeightedLevelWithAPeak) {
  // Three 1000-byte frames reach port 2 (1 Gbit/s) at once: 3000, 2000, 1000 bytes queued while
  // each of them leaves, 8.192 us a frame ((1000 + 24) * 8 bits at 1 Gbit/s), then empty.
  EthernetSwitchParams p = three_ports(1e9);
  p.table[kC] = 2;
  Bench b(p);
  const vtoe::core::TimePs slot = 8'192'000;  // ps per frame on the wire
  Driver drv("drv", [&] {
    for (std::uint32_t i = 0; i < 3; ++i) b.sw.in[0]->receive_frame(frame(kC, kA, 1000, i));
    wait(sc_time::from_value(slot / 2));
    EXPECT_EQ(b.sw.port_queue_bytes(2), 3000u);
    EXPECT_EQ(b.sw.port_queue_frames(2), 3u);
    EXPECT_EQ(b.sw.take_port_queue_peak(2), 3000u);
    wait(sc_time::from_value(6 * slot));
    // The peak since the last take: the level at the take (3000), then lower.
    EXPECT_EQ(b.sw.take_port_queue_peak(2), 3000u);
    EXPECT_EQ(b.sw.take_port_queue_peak(2), 0u);
  });
  sc_start();
  ASSERT_EQ(b.at[2].arrivals.size(), 3u);
  const vtoe::core::Accumulator& qb = b.sw.port_queue_bytes_level(2);
  const vtoe::core::Accumulator& qf = b.sw.port_queue_frames_level(2);
  EXPECT_EQ(qb.max(), 3000.0);
  EXPECT_EQ(qf.max(), 3.0);
  // Area: 3000 + 2000 + 1000 bytes for one slot each; frames 3 + 2 + 1.
  const vtoe::core::TimePs end = 7 * slot;
  EXPECT_NEAR(qb.area(end), 6000.0 * static_cast<double>(slot), 1e-6 * 6000.0 * slot);
  EXPECT_NEAR(qf.area(end), 6.0 * static_cast<double>(slot), 1e-6 * 6.0 * slot);
  EXPECT_NEAR(qb.mean(end), 6000.0 / 7, 1.0);
  EXPECT_EQ(b.sw.port_queue_bytes_level(0).max(), 0.0);  // nothing queued there
  EXPECT_EQ(b.sw.port_tx_frames_counter(2).value(), 3u);
  EXPECT_EQ(b.sw.port_drops_counter(2).value(), 0u);
}

TEST(EthernetSwitch, GivenForwardingDropsUnknownUnicastAndFloodsBroadcast) {
  EthernetSwitchParams p = three_ports();
  p.forwarding = Forwarding::Given;
  p.table[kA] = 0;
  Bench b(p);
  Driver drv("drv", [&] {
    b.sw.in[1]->receive_frame(frame(kC, kB, 100, 1));          // no entry: dropped
    b.sw.in[1]->receive_frame(frame(kBroadcast, kB, 100, 2));  // broadcast: 0 and 2
    b.sw.in[2]->receive_frame(frame(kB, kC, 100, 3));          // B was not learned: dropped
    b.sw.in[1]->receive_frame(frame(kA, kB, 100, 4));          // given: port 0
  });
  sc_start();
  EXPECT_EQ(b.sw.no_route(), 2u);
  EXPECT_EQ(b.sw.lookup(kB), -1);
  ASSERT_EQ(b.at[0].arrivals.size(), 2u);
  EXPECT_EQ(tag_of(b.at[0].arrivals[0].frame), 2u);
  EXPECT_EQ(tag_of(b.at[0].arrivals[1].frame), 4u);
  ASSERT_EQ(b.at[2].arrivals.size(), 1u);
  EXPECT_EQ(tag_of(b.at[2].arrivals[0].frame), 2u);
  EXPECT_TRUE(b.at[1].arrivals.empty());
}

TEST(EthernetSwitch, NeverSendsAFrameBackOutOfItsIngressPort) {
  Bench b(three_ports());
  Driver drv("drv", [&] {
    b.sw.in[0]->receive_frame(frame(kB, kA, 100, 1));  // learns A on 0
    wait(sc_time::from_value(10'000'000));
    b.sw.in[0]->receive_frame(frame(kA, kC, 100, 2));  // to A, arriving on A's own port
  });
  sc_start();
  EXPECT_TRUE(b.at[0].arrivals.empty());
  EXPECT_EQ(b.at[1].arrivals.size(), 1u);
  EXPECT_EQ(b.sw.lookup(kC), 0);
}

TEST(EthernetSwitch, RejectsTooFewPortsAndEntriesPastTheLastPort) {
  EthernetSwitchParams one;
  one.ports.resize(1);
  EXPECT_THROW(EthernetSwitch("one", one), std::invalid_argument);
  EthernetSwitchParams bad = three_ports();
  bad.table[kA] = 3;
  EXPECT_THROW(EthernetSwitch("bad", bad), std::invalid_argument);
}

VTOE_TEST_MAIN
