// The PPM's frame pipelines: engines in parallel, frames leaving in arrival order, and the cost
// of a frame per frame plus per byte on the device clock.
#include <gtest/gtest.h>

#include "models/net/ethernet_mac.h"
#include "models/toe/ccb.h"
#include "models/toe/ppm.h"
#include "tests/support/bench.h"

using namespace vtoe;
using toe::PpmPipeline;

TEST(PpmPipeline, OneEngineSerialisesFrames) {
  PpmPipeline p(1);
  EXPECT_EQ(p.admit(0, 100), 100u);
  EXPECT_EQ(p.admit(0, 100), 200u);   // waits for the engine
  EXPECT_EQ(p.admit(500, 100), 600u);  // engine idle since 200
  EXPECT_EQ(p.busy_ps(), 300u);
}

TEST(PpmPipeline, EnginesWorkInParallelButFramesLeaveInOrder) {
  PpmPipeline p(2);
  EXPECT_EQ(p.admit(0, 1000), 1000u);
  // A short frame on the second engine finishes at 10 but may not overtake the first.
  EXPECT_EQ(p.admit(0, 10), 1000u);
  // The second engine is free again at 10: this frame is done at 110, still after 1000.
  EXPECT_EQ(p.admit(0, 100), 1000u);
  EXPECT_EQ(p.admit(0, 1000), 1110u);  // the second engine again, free at 110
  EXPECT_EQ(p.admit(0, 1), 1110u);     // the first engine, free at 1000: in order
  EXPECT_EQ(p.busy_ps(), 2111u);
  EXPECT_EQ(p.engines(), 2u);
}

TEST(PpmPipeline, TwoEnginesDoubleTheThroughputOfEqualFrames) {
  PpmPipeline one(1), two(2);
  core::TimePs last1 = 0, last2 = 0;
  for (int i = 0; i < 100; ++i) {
    last1 = one.admit(0, 50);
    last2 = two.admit(0, 50);
  }
  EXPECT_EQ(last1, 5000u);
  EXPECT_EQ(last2, 2500u);
}

TEST(PpmPipeline, ZeroEnginesMeansOne) { EXPECT_EQ(PpmPipeline(0).engines(), 1u); }

TEST(Ppm, FrameCostIsPerFramePlusPerDatapathWordOnTheDeviceClock) {
  toe::PpmParams pp;
  pp.device_freq_hz = 100e6;  // 10 ns per cycle
  pp.tx_cycles_per_frame = 64;
  pp.rx_cycles_per_frame = 32;
  pp.datapath_bytes = 8;
  net::EthernetMacParams mp;
  net::EthernetMac mac("mac", mp);
  toe::Ccb ccb("ccb", toe::CcbParams{});
  tcpip::StackConfig sc;
  toe::Ppm ppm("ppm", pp, sc, ccb, mac, {});
  EXPECT_EQ(ppm.tx_frame_ps(0), 640'000u);
  EXPECT_EQ(ppm.tx_frame_ps(1514), (64 + 190) * 10'000u);  // ceil(1514 / 8) = 190
  EXPECT_EQ(ppm.rx_frame_ps(64), (32 + 8) * 10'000u);
  EXPECT_EQ(ppm.rx_frame_ps(65), (32 + 9) * 10'000u);
  EXPECT_EQ(ppm.engines(), 1u);
}

// The receive FIFO between the MAC and the engines holds toe.ppm.rx_fifo bytes: a burst beyond it
// is dropped and counted (a PPM slower than the wire must not queue without limit), and the FIFO
// takes frames again once the engines have drained it.
TEST(Ppm, ReceiveFifoDropsWhatDoesNotFitAndTakesFramesAgainOnceDrained) {
  toe::PpmParams pp;
  pp.device_freq_hz = 100e6;  // 10 ns per cycle
  pp.rx_cycles_per_frame = 32;
  pp.datapath_bytes = 8;
  pp.rx_fifo_bytes = 3 * 1514;
  net::EthernetMacParams mp;
  net::EthernetMac mac("mac", mp);
  toe::Ccb ccb("ccb", toe::CcbParams{});
  tcpip::StackConfig sc;
  toe::Ppm ppm("ppm", pp, sc, ccb, mac, {});
  test::Memory records("records", 1 << 16);
  ccb.dma.socket.bind(records.in);
  struct Wire : sc_core::sc_module, net::FrameSink {
    explicit Wire(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
    void receive_frame(net::Frame&&) override {}
  } wire("wire");
  mac.to_wire.bind(wire);
  mac.upper.bind(ppm);
  const core::TimePs per_frame = ppm.rx_frame_ps(1514) + ccb.access_latency_ps();
  std::uint64_t taken_mid_burst = 0;
  test::Proc driver("driver", [&] {
    for (int i = 0; i < 10; ++i) ppm.receive_frame(net::Frame(1514, 0));  // not a valid frame:
    // the stack drops it after the engine's time; only the FIFO's bookkeeping matters here.
    sc_core::wait(core::ps(per_frame));  // the first frame has left: room for one more
    taken_mid_burst = test::counter(ppm.stats(), "frames_rx");
    ppm.receive_frame(net::Frame(1514, 0));
    ppm.receive_frame(net::Frame(1514, 0));  // no room: two are still waiting
    sc_core::wait(core::ps(10 * per_frame));
    ppm.receive_frame(net::Frame(1514, 0));
  });
  sc_core::sc_start();
  ASSERT_TRUE(driver.done);
  EXPECT_EQ(taken_mid_burst, 1u);
  EXPECT_EQ(test::counter(ppm.stats(), "rx_fifo_drops"), 7u + 1u);
  EXPECT_EQ(test::counter(ppm.stats(), "frames_rx"), 3u + 1u + 1u);
  EXPECT_LE(test::accumulator(ppm.stats(), "rx_fifo_bytes")->max(), 3.0 * 1514);
}

VTOE_TEST_MAIN
