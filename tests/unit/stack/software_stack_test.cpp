// stack::SoftwareStack: each frame of a VM waits for its stack work on its lane's core (and
// the virtual switch's), frames of no VM pass at once, a flow keeps its order, a full lane drops.
#include "models/stack/software_stack.h"

#include <gtest/gtest.h>

#include "tests/unit/net/net_bench.h"

using namespace sc_core;
using vtoe::cpu::Core;
using vtoe::cpu::CoreParams;
using vtoe::cpu::CycleClass;
using vtoe::net::Frame;
using vtoe::stack::SoftwareStack;
using vtoe::stack::SoftwareStackParams;
using vtoe::test::Collector;
using vtoe::test::Driver;
using vtoe::test::Mac;
using vtoe::test::tag_of;

namespace {

const Mac kVm{0x02, 0, 0, 0, 0, 0x10};
const Mac kPeer{0x02, 0, 0, 0, 0, 0x20};
const Mac kBroadcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
constexpr vtoe::core::TimePs kCyclePs = 500;  // 2 GHz

Frame frame(const Mac& dst, const Mac& src, std::size_t len, std::uint32_t tag) {
  Frame f = vtoe::test::make_frame(dst, len, tag);
  for (int i = 0; i < 6; ++i) f[6 + i] = src[i];
  return f;
}

vtoe::tcpip::MacAddr mac(const Mac& m) {
  vtoe::tcpip::MacAddr a;
  a.b = m;
  return a;
}

SoftwareStackParams costs() {
  SoftwareStackParams p;
  p.tx_cycles = 1000;
  p.rx_cycles = 2000;
  p.cycles_per_byte = 1;
  p.vswitch_cycles = 400;
  p.vswitch_cycles_per_byte = 0.5;
  return p;
}

// A stack between a collector on the MAC side and one on the wire side, on core `cpu0` (the
// stack's lane) and `cpu1` (the virtual switch's, when asked for).
struct Bench {
  explicit Bench(const SoftwareStackParams& p, bool vswitch = false)
      : cpu0("cpu0", CoreParams{}), cpu1("cpu1", CoreParams{}), stack("stack", p) {
    const int lane = stack.add_lane(cpu0, cpu0.add_context("stack.vm0", 1, 0, true),
                                    CycleClass::GuestKernel, -1);
    stack.add_vm(mac(kVm), {lane});
    if (vswitch)
      stack.set_vswitch(
          stack.add_lane(cpu1, cpu1.add_context("vswitch", 1, 0), CycleClass::Hypervisor, -1));
    stack.to_mac.bind(at_mac);
    stack.to_wire.bind(at_wire);
  }
  Core cpu0, cpu1;
  SoftwareStack stack;
  Collector at_mac, at_wire;
};

std::uint64_t counter(SoftwareStack& s, const char* name) {
  return vtoe::test::counter(s.stats(), name);
}

}  // namespace

TEST(SoftwareStack, FramesWaitForTheirStackWorkOnTheCore) {
  Bench b(costs());
  Driver drv("drv", [&] {
    b.stack.from_wire->receive_frame(frame(kVm, kPeer, 100, 1));  // in: 2000 + 100 cycles
    wait(sc_time::from_value(10'000'000));                        // 10 us
    b.stack.from_mac->receive_frame(frame(kPeer, kVm, 200, 2));   // out: 1000 + 200 cycles
  });
  sc_start();
  ASSERT_EQ(b.at_mac.arrivals.size(), 1u);
  EXPECT_EQ(b.at_mac.arrivals[0].time, 2100 * kCyclePs);
  ASSERT_EQ(b.at_wire.arrivals.size(), 1u);
  EXPECT_EQ(b.at_wire.arrivals[0].time, 10'000'000 + 1200 * kCyclePs);
  EXPECT_EQ(tag_of(b.at_wire.arrivals[0].frame), 2u);
  EXPECT_EQ(counter(b.stack, "frames_rx"), 1u);
  EXPECT_EQ(counter(b.stack, "frames_tx"), 1u);
  EXPECT_EQ(counter(b.stack, "lane0_frames"), 2u);
  // The core was busy exactly that long, charged to the guest kernel.
  EXPECT_EQ(b.cpu0.busy_ps(0, CycleClass::GuestKernel), 3300 * kCyclePs);
  EXPECT_EQ(b.stack.busy_ps(), 3300 * kCyclePs);
}

TEST(SoftwareStack, FramesOfNoVmPassAtOnce) {
  Bench b(costs());
  Driver drv("drv", [&] {
    wait(sc_time::from_value(1000));
    b.stack.from_wire->receive_frame(frame(kBroadcast, kPeer, 60, 7));
    b.stack.from_mac->receive_frame(frame(kPeer, kPeer, 60, 8));  // not the VM's source
  });
  sc_start();
  ASSERT_EQ(b.at_mac.arrivals.size(), 1u);
  EXPECT_EQ(b.at_mac.arrivals[0].time, 1000u);
  ASSERT_EQ(b.at_wire.arrivals.size(), 1u);
  EXPECT_EQ(b.at_wire.arrivals[0].time, 1000u);
  EXPECT_EQ(counter(b.stack, "passed"), 2u);
}

TEST(SoftwareStack, TheVirtualSwitchCopiesBeforeTheStackOnTheWayIn) {
  Bench b(costs(), /*vswitch=*/true);
  Driver drv("drv", [&] {
    for (std::uint32_t t = 1; t <= 3; ++t)
      b.stack.from_wire->receive_frame(frame(kVm, kPeer, 100, t));
  });
  sc_start();
  // Switch: 400 + 50 cycles per frame; stack: 2100. The stack is the slower stage, so frame n
  // leaves at 450 + n * 2100 cycles, in order.
  ASSERT_EQ(b.at_mac.arrivals.size(), 3u);
  for (std::size_t n = 0; n < 3; ++n) {
    EXPECT_EQ(tag_of(b.at_mac.arrivals[n].frame), n + 1);
    EXPECT_EQ(b.at_mac.arrivals[n].time, (450 + (n + 1) * 2100) * kCyclePs);
  }
  EXPECT_EQ(b.cpu1.busy_ps(0, CycleClass::Hypervisor), 3 * 450 * kCyclePs);
}

TEST(SoftwareStack, AFullLaneDrops) {
  SoftwareStackParams p = costs();
  p.queue_frames = 2;
  Bench b(p);
  Driver drv("drv", [&] {
    for (std::uint32_t t = 1; t <= 5; ++t)
      b.stack.from_wire->receive_frame(frame(kVm, kPeer, 100, t));
  });
  sc_start();
  EXPECT_EQ(b.at_mac.arrivals.size(), 2u);
  EXPECT_EQ(counter(b.stack, "drops"), 3u);
}

VTOE_TEST_MAIN
