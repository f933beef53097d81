// The virtual TOE manager of device emulation on the smallest platform that has one: a VM drives
// its trapped TOE channel by hand (toe::HostRingDriver through its register port) and checks
// what comes back: contexts translated and carried out by the real toe::Toe, bad contexts refused
// with error completions, completions forwarded with the guest's socket ids and cookies.
#include "hypervisor/virtual_toe_manager.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "config/config.h"
#include "models/tcpip/types.h"
#include "models/toe/host_ring_driver.h"
#include "platform/platform.h"
#include "tests/support/bench.h"

namespace vtoe {
namespace {

using toe::EventType;
using toe::Ring;
using toe::Status;

constexpr std::uint32_t kEntries = 64;
constexpr int kVm = 1;

// VM 0 runs the peer's RPC client workload (so the peer serves port 6000 and the physical
// socket ids are shared); VM 1 is the one under test, its own workload idle. Tickle off, as in
// the isolation test: the helper's wake-ups would otherwise keep preempting the tester's VM.
const char* kScenario =
    "seed: 3\nduration: 20ms\nwarmup: 5ms\narchitecture: de\n"
    "hypervisor: {scheduler: {tickle: false}}\n"
    "vms:\n"
    "  - {name: helper, workload: {type: rpc, port: 6000, message_size: 100, response_size: "
    "2000}}\n"
    "  - {name: tester, workload: {type: cpu, stop: 1ms, port: 5002}}\n";

struct Tester : toe::HostRingDriver::Access {
  platform::Platform& p;
  cpu::Core::Context& ctx;
  toe::HostRingDriver rings{kEntries};
  std::vector<toe::EcqDesc> events;

  explicit Tester(platform::Platform& plat)
      : p(plat), ctx(plat.core().add_context("tester.driver", 1, kVm)) {}

  void write_reg(std::uint64_t off, std::uint32_t v) override {
    p.hypervisor()->register_port(kVm).access(ctx, true, platform::kToeRegBase + off, v);
  }
  std::uint32_t read_reg(std::uint64_t off) override {
    std::uint32_t v = 0;
    p.hypervisor()->register_port(kVm).access(ctx, false, platform::kToeRegBase + off, v);
    return v;
  }
  void read_mem(std::uint64_t a, void* d, std::size_t n) override {
    p.guest(kVm).memory().read(a, d, n);
  }
  void write_mem(std::uint64_t a, const void* s, std::size_t n) override {
    p.guest(kVm).memory().write(a, s, n);
  }
  void wait_for_space() override { poll(); }

  void spin() { p.core().execute(ctx, 40000, cpu::CycleClass::GuestKernel); }
  void poll() {
    toe::EcqDesc d;
    bool any = false;
    while (rings.next_completion(*this, d)) {
      events.push_back(d);
      any = true;
    }
    if (any) rings.release_completions(*this);
  }
  const toe::EcqDesc* find(EventType t, std::uint32_t cookie) const {
    for (const auto& e : events)
      if (e.type == static_cast<std::uint8_t>(t) && e.cookie == cookie) return &e;
    return nullptr;
  }
  const toe::EcqDesc* wait_for(EventType t, std::uint32_t cookie) {
    for (int i = 0; i < 500 && !find(t, cookie); ++i) {
      spin();
      poll();
    }
    return find(t, cookie);
  }
};

TEST(VirtualToeManager, TranslatesRefusesAndForwardsForATrappedVm) {
  const config::Config cfg = config::Config::from_string(kScenario, "vtoe_manager.yaml");
  platform::Platform p(cfg);
  Tester t(p);
  test::Proc proc("proc", [&] {
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS));
    auto& mem = p.guest(kVm).memory();
    std::array<std::uint64_t, toe::kRings> ring_addr{};
    for (auto& a : ring_addr) a = mem.allocate(kEntries * toe::kDescBytes, 4096);
    t.rings.start(t, ring_addr);

    // A send on a socket the VM never opened: refused by the manager at once.
    toe::SendDesc s{};
    s.sock = 9;
    s.length = 100;
    s.addr = mem.allocate(4096);
    s.cookie = 11;
    t.rings.post(t, Ring::Send, &s);
    const toe::EcqDesc* e = t.wait_for(EventType::Error, 11);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->status, static_cast<std::int32_t>(Status::BadSocket));
    EXPECT_EQ(e->sock, 9);

    // A connection on guest socket 77 (its rx buffer an IPA the manager translates).
    toe::CmdDesc c{};
    c.opcode = static_cast<std::uint8_t>(toe::CmdOp::Connect);
    c.sock = 77;
    c.ip = tcpip::parse_ipv4("10.0.0.2");
    c.port = 6000;
    c.rx_size = 16 * 1024;
    c.rx_addr = mem.allocate(16 * 1024, 4096);
    t.rings.post(t, Ring::Cmd, &c);
    bool connected = false;
    for (int i = 0; i < 500 && !connected; ++i) {
      for (const auto& ev : t.events)
        connected |= ev.type == static_cast<std::uint8_t>(EventType::Connected) && ev.sock == 77;
      t.spin();
      t.poll();
    }
    ASSERT_TRUE(connected) << "no Connected for guest socket 77";

    // Malformed sends on it: zero length, and an address outside the VM.
    s.sock = 77;
    s.length = 0;
    s.cookie = 21;
    t.rings.post(t, Ring::Send, &s);
    s.length = 4000;
    s.addr = 0x1'0000'0000ull;
    s.cookie = 22;
    t.rings.post(t, Ring::Send, &s);
    e = t.wait_for(EventType::Error, 21);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->status, static_cast<std::int32_t>(Status::BadDescriptor));
    e = t.wait_for(EventType::Error, 22);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->status, static_cast<std::int32_t>(Status::DmaFault));

    // A good request: the TOE sends it; its SendDone comes back with the guest's cookie and
    // socket, and the peer's response arrives as RxData on guest socket 77.
    std::vector<std::uint8_t> req(100, 0x77);
    const std::uint64_t rbuf = mem.allocate(4096);
    mem.write(rbuf, req.data(), req.size());
    s.length = 100;
    s.addr = rbuf;
    s.cookie = 0x1234;
    t.rings.post(t, Ring::Send, &s);
    e = t.wait_for(EventType::SendDone, 0x1234);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->sock, 77);
    bool rx = false;
    for (int i = 0; i < 500 && !rx; ++i) {
      for (const auto& ev : t.events)
        rx |= ev.type == static_cast<std::uint8_t>(EventType::RxData) && ev.sock == 77;
      t.spin();
      t.poll();
    }
    EXPECT_TRUE(rx) << "no response data forwarded to guest socket 77";
  });
  sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_MS));
  EXPECT_TRUE(proc.done) << "stopped at " << sc_core::sc_time_stamp() << " with " << t.events.size()
                         << " completions";
}

// The longest single trap a guest can cause (fuzz_guest bounds an input by it): one doorbell on
// a full 65,536-entry SendQ of contexts for a socket the VM never opened, its ECQ outside its
// memory so that the refusals are dropped rather than held (holding would stop the loop at
// toe.completion_queue). The manager refuses every context inside the one trap, at
// hypervisor.costs.vtoe_context each, charged to the VM; the credit scheduler still runs VM 0
// while the trapping VM's vCPU works.
TEST(VirtualToeManager, ADoorbellOnAFullRingOfBadContextsIsOneLongTrapTheVmPaysFor) {
  const config::Config cfg = config::Config::from_string(kScenario, "vtoe_manager.yaml");
  platform::Platform p(cfg);
  Tester t(p);
  constexpr std::uint32_t kBig = 65536;
  const auto ring_reg = &toe::HostRingDriver::ring_reg;
  sc_core::sc_time trap;
  std::uint64_t vm0_interrupts_during = 0;
  std::uint32_t status = 0;
  test::Proc proc("proc", [&] {
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS));
    auto& mem = p.guest(kVm).memory();
    const std::uint64_t send_ring = mem.allocate(kBig * toe::kDescBytes, 4096);
    toe::SendDesc s{};
    s.sock = 9;  // never opened
    s.length = 100;
    s.addr = mem.allocate(4096);
    for (std::uint32_t i = 0; i + 1 < kBig; ++i) {
      s.cookie = i;
      mem.write(send_ring + static_cast<std::uint64_t>(i) * toe::kDescBytes, &s, sizeof s);
    }
    t.write_reg(ring_reg(Ring::Send, toe::reg::kRingAddrLo), static_cast<std::uint32_t>(send_ring));
    t.write_reg(ring_reg(Ring::Send, toe::reg::kRingAddrHi),
                static_cast<std::uint32_t>(send_ring >> 32));
    t.write_reg(ring_reg(Ring::Send, toe::reg::kRingSize), kBig);
    // An ECQ at an IPA past the VM's memory: configured, but every completion write is refused.
    t.write_reg(ring_reg(Ring::Ecq, toe::reg::kRingAddrLo), 0);
    t.write_reg(ring_reg(Ring::Ecq, toe::reg::kRingAddrHi), 1);
    t.write_reg(ring_reg(Ring::Ecq, toe::reg::kRingSize), 64);
    t.write_reg(toe::reg::kCtrl, toe::reg::kCtrlEnable);
    const std::uint64_t irqs_before = p.guest(0).driver().interrupts();
    const sc_core::sc_time t0 = sc_core::sc_time_stamp();
    t.write_reg(ring_reg(Ring::Send, toe::reg::kRingTail), kBig - 1);
    trap = sc_core::sc_time_stamp() - t0;
    vm0_interrupts_during = p.guest(0).driver().interrupts() - irqs_before;
    status = t.read_reg(toe::reg::kStatus);
  });
  sc_core::sc_start(sc_core::sc_time(200, sc_core::SC_MS));
  ASSERT_TRUE(proc.done) << "the doorbell's trap had not returned at " << sc_core::sc_time_stamp();
  const core::StatGroup& manager = p.vtoe_manager()->stats();
  EXPECT_EQ(test::counter(manager, "bad_contexts"), kBig - 1);
  EXPECT_EQ(test::counter(manager, "ecq_overflows"), 0u);  // refused, not held
  EXPECT_EQ(status & 1u, 1u) << "the refused ECQ writes latch the channel's error bit";
  // At least every context's cost, and within twice it (what fuzz_guest allows per operation).
  const double per_context_s = p.hypervisor()->costs().vtoe_context / p.core().freq_hz();
  EXPECT_GE(trap.to_seconds(), (kBig - 1) * per_context_s);
  EXPECT_LE(trap.to_seconds(), 2 * (kBig - 1) * per_context_s);
  EXPECT_GT(vm0_interrupts_during, 0u) << "VM 0 did not run while VM 1 sat in its trap";
}

}  // namespace
}  // namespace vtoe

VTOE_TEST_MAIN
