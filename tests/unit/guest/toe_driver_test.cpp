// Bench for guest::ToeDriver on a real core: the channel behind its register port is a fake that
// records accesses and plays the TOE (reports heads, writes completions, raises the interrupt),
// and guest memory is a plain byte array.
#include "guest/toe_driver.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "models/toe/host_ring_driver.h"
#include "tests/support/bench.h"

using namespace vtoe;
using toe::Ring;
namespace reg = toe::reg;

namespace {

constexpr std::uint64_t kRegs = 0x4000'0000;
constexpr std::uint64_t kRam = 0x8000'0000;
constexpr std::uint32_t kEntries = 4;  // three usable slots per ring
constexpr double kAccessCycles = 50;   // what the fake register port charges per access

struct Ram {
  std::vector<std::uint8_t> bytes = std::vector<std::uint8_t>(1 << 20);
  guest::GuestMemory memory{kRam, bytes.size(),
                            [this](std::uint64_t a, void* d, std::size_t n, bool write) {
                              std::uint8_t* at = bytes.data() + (a - kRam);
                              if (write)
                                std::memcpy(at, d, n);
                              else
                                std::memcpy(d, at, n);
                            }};
};

// The TOE's side of one channel, as far as the driver can tell.
struct FakeChannel : cpu::RegisterPort {
  cpu::Core& core;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> writes;
  std::uint32_t head[toe::kRings] = {};
  std::uint64_t ring_lo[toe::kRings] = {};
  int head_reads = 0;
  explicit FakeChannel(cpu::Core& c) : core(c) {}
  void access(cpu::Core::Context& ctx, bool write, std::uint64_t addr,
              std::uint32_t& value) override {
    core.execute(ctx, kAccessCycles, cpu::CycleClass::GuestKernel);
    const std::uint64_t off = addr - kRegs;
    const int r = static_cast<int>((off - reg::kRingBase) / reg::kRingStride);
    if (write) {
      writes.emplace_back(off, value);
      if (off >= reg::kRingBase && (off - reg::kRingBase) % reg::kRingStride == reg::kRingAddrLo)
        ring_lo[r] = value;
    } else {
      ++head_reads;
      value = head[r];
    }
  }
  std::vector<std::uint32_t> tails(Ring ring) const {
    std::vector<std::uint32_t> v;
    for (auto& [off, val] : writes)
      if (off == toe::HostRingDriver::ring_reg(ring, reg::kRingTail)) v.push_back(val);
    return v;
  }
};

struct FakeIrq : cpu::InterruptPort {
  bool level = false;
  int acks = 0, eois = 0;
  sc_core::sc_event ev;
  void raise() {
    level = true;
    ev.notify(sc_core::SC_ZERO_TIME);
  }
  bool pending() const override { return level; }
  const sc_core::sc_event& pending_event() const override { return ev; }
  int acknowledge() override {
    ++acks;
    if (!level) return 1023;
    level = false;
    return 32;
  }
  void end_of_interrupt(int id) override {
    EXPECT_EQ(id, 32);
    ++eois;
  }
};

struct Bench {
  explicit Bench(bool polled = false) : polled_(polled) {
    driver.on_completion([this](const toe::EcqDesc& d) { delivered.push_back(d); });
  }
  bool polled_;
  cpu::Core core{"core", cpu::CoreParams{}, 1};
  Ram ram;
  FakeChannel channel{core};
  FakeIrq irq;
  guest::GuestCosts costs;
  guest::ToeDriver driver{"driver", core, 0, ram.memory, costs,
                          guest::DriverParams{kRegs, kEntries, polled_}, channel, irq};
  cpu::Core::Context& app = core.add_context("app", 2, 0);
  std::vector<toe::EcqDesc> delivered;
  // The TOE writes a completion into the ECQ the driver programmed.
  void complete(std::uint32_t slot, std::uint16_t sock) {
    toe::EcqDesc e{};
    e.valid = 1;
    e.sock = sock;
    ram.memory.write(channel.ring_lo[3] + slot * toe::kDescBytes, &e, sizeof e);
  }
};

}  // namespace

TEST(ToeDriver, StartProgramsTheFourRingsInGuestMemoryThenEnables) {
  Bench b;
  test::Proc p("p", [&] { b.driver.start(b.app); });
  sc_core::sc_start();
  ASSERT_TRUE(p.done);
  ASSERT_EQ(b.channel.writes.size(), 13u);
  EXPECT_EQ(b.channel.writes.back(),
            std::make_pair(reg::kCtrl, reg::kCtrlEnable | reg::kCtrlIrqEnable));
  for (int r = 0; r < toe::kRings; ++r) {
    EXPECT_GE(b.channel.ring_lo[r], kRam);
    EXPECT_LT(b.channel.ring_lo[r], kRam + b.ram.bytes.size());
  }
  EXPECT_NE(b.channel.ring_lo[0], b.channel.ring_lo[1]);
}

TEST(ToeDriver, PostChargesTheCostWritesTheContextAndRingsTheDoorbell) {
  Bench b;
  core::TimePs before = 0, after = 0;
  test::Proc p("p", [&] {
    b.driver.start(b.app);
    toe::SendDesc s{};
    s.sock = 4;
    s.length = 8000;
    before = core::now_ps();
    b.driver.post(b.app, Ring::Send, &s);
    after = core::now_ps();
  });
  sc_core::sc_start();
  ASSERT_TRUE(p.done);
  EXPECT_EQ(b.channel.tails(Ring::Send), (std::vector<std::uint32_t>{1}));
  toe::SendDesc in_ring{};
  b.ram.memory.read(b.channel.ring_lo[1], &in_ring, sizeof in_ring);
  EXPECT_EQ(in_ring.sock, 4);
  EXPECT_EQ(in_ring.length, 8000u);
  // post_context cycles plus one register access at the core's clock.
  EXPECT_EQ(after - before, core::cycles_to_ps(b.costs.post_context + kAccessCycles,
                                               cpu::CoreParams{}.freq_hz));
  EXPECT_EQ(b.driver.stats().counter("contexts_posted").value(), 1u);
}

TEST(ToeDriver, AFullRingWaitsForACompletionBeforePostingMore) {
  Bench b;
  bool fourth_posted = false;
  test::Proc p("p", [&] {
    b.driver.start(b.app);
    toe::CmdDesc c{};
    for (int i = 0; i < 3; ++i) b.driver.post(b.app, Ring::Cmd, &c);
    b.driver.post(b.app, Ring::Cmd, &c);  // the ring is full: waits
    fourth_posted = true;
  });
  test::Proc toe("toe", [&] {
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    EXPECT_FALSE(fourth_posted);
    b.channel.head[0] = 3;  // the TOE took the three contexts and completed one
    b.complete(0, 9);
    b.irq.raise();
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_TRUE(fourth_posted);
  EXPECT_EQ(b.channel.tails(Ring::Cmd), (std::vector<std::uint32_t>{1, 2, 3, 0}));
  EXPECT_EQ(b.driver.stats().counter("ring_full_waits").value(), 1u);
}

TEST(ToeDriver, TheIsrDrainsTheEcqHandsSlotsBackAndTheKernelThreadDelivers) {
  Bench b;
  test::Proc p("p", [&] { b.driver.start(b.app); });
  test::Proc toe("toe", [&] {
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_US));
    b.complete(0, 1);
    b.complete(1, 2);
    b.irq.raise();
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    b.complete(2, 3);
    b.irq.raise();
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  ASSERT_EQ(b.delivered.size(), 3u);
  EXPECT_EQ(b.delivered[0].sock, 1);
  EXPECT_EQ(b.delivered[2].sock, 3);
  EXPECT_EQ(b.driver.interrupts(), 2u);
  EXPECT_EQ(b.irq.eois, 2);
  // Each pass handed its slots back: ECQ head 2, then 3.
  std::vector<std::uint32_t> heads;
  for (auto& [off, val] : b.channel.writes)
    if (off == toe::HostRingDriver::ring_reg(Ring::Ecq, reg::kRingHead)) heads.push_back(val);
  EXPECT_EQ(heads, (std::vector<std::uint32_t>{2, 3}));
  toe::EcqDesc slot{};
  b.ram.memory.read(b.channel.ring_lo[3], &slot, sizeof slot);
  EXPECT_EQ(slot.valid, 0) << "consumed entries are cleared";
}

TEST(ToeDriver, APolledChannelRunsWithoutItsInterruptAndItsUserDrainsTheEcq) {
  Bench b(/*polled=*/true);
  std::uint32_t first = 9, second = 0;
  test::Proc p("p", [&] {
    b.driver.start(b.app);
    first = b.driver.poll(b.app);  // nothing yet
    sc_core::wait(sc_core::sc_time(20, sc_core::SC_US));
    second = b.driver.poll(b.app);
  });
  test::Proc toe("toe", [&] {
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_US));
    b.complete(0, 5);
    b.complete(1, 6);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  ASSERT_TRUE(p.done);
  std::uint32_t ctrl = 0;
  for (auto& [off, val] : b.channel.writes)
    if (off == reg::kCtrl) ctrl = val;
  EXPECT_EQ(ctrl, reg::kCtrlEnable) << "the channel's interrupt stays disabled";
  EXPECT_EQ(first, 0u);
  EXPECT_EQ(second, 2u);
  ASSERT_EQ(b.delivered.size(), 2u);
  EXPECT_EQ(b.delivered[1].sock, 6);
  EXPECT_EQ(b.driver.interrupts(), 0u);
  EXPECT_EQ(b.irq.acks, 0);
}

VTOE_TEST_MAIN
