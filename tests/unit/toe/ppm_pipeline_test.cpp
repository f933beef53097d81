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

VTOE_TEST_MAIN
