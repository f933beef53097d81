// Bench for cpu::MemoryTraffic: software's copies booked on the memory system. A copy whose bursts
// the memory serves within its cycles costs only the cycles; a slow (or busy) memory stalls the
// core for the rest, charged as busy; posted writes never stall; booking leaves memory contents
// as they were.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <systemc>
#include <vector>

#include "models/cpu/core.h"
#include "models/cpu/memory_traffic.h"
#include "models/mem/dram.h"
#include "tests/support/bench.h"

using vtoe::core::TimePs;
using vtoe::cpu::Core;
using vtoe::cpu::CoreParams;
using vtoe::cpu::CycleClass;
using vtoe::cpu::MemoryTraffic;
using vtoe::mem::Dram;
using vtoe::mem::DramParams;
using vtoe::test::counter;
using vtoe::test::Proc;

namespace {

constexpr TimePs kNs = 1000;

struct Port : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Port> out{"out"};
  explicit Port(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
};

DramParams dram(double bps) {
  DramParams p;
  p.size = 1 << 20;
  p.bandwidth_bps = bps;
  p.latency_ps = 50 * kNs;
  return p;
}

TimePs now() { return sc_core::sc_time_stamp().value(); }

}  // namespace

TEST(MemoryTraffic, AFastMemoryCostsOnlyTheCycles) {
  Core core("core", CoreParams{});  // 2 GHz
  auto& ctx = core.add_context("proc", 2);
  Dram mem("dram", dram(64e9));
  Port port("port");
  port.out.bind(mem.in);
  MemoryTraffic traffic("traffic", port.out, core, 4096);
  TimePs done = 0;
  Proc p("p", [&] {
    traffic.work(ctx, 20000, CycleClass::GuestKernel, true, 0x1000, 8000);  // 10 us of work
    done = now();
  });
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_US));
  EXPECT_EQ(done, 10'000 * kNs);
  EXPECT_EQ(counter(traffic.stats(), "transactions"), 2u);
  EXPECT_EQ(counter(traffic.stats(), "bytes_written"), 8000u);
  EXPECT_EQ(counter(traffic.stats(), "stall_ps"), 0u);
  EXPECT_EQ(counter(mem.stats(), "bytes_written"), 8000u);
}

TEST(MemoryTraffic, ASlowMemoryStallsTheCoreAndTheStallIsBusyTime) {
  Core core("core", CoreParams{});
  auto& ctx = core.add_context("proc", 2);
  Dram mem("dram", dram(1e9));  // 8000 B take 64 us
  Port port("port");
  port.out.bind(mem.in);
  MemoryTraffic traffic("traffic", port.out, core, 4096);
  TimePs done = 0;
  Proc p("p", [&] {
    traffic.work(ctx, 20000, CycleClass::GuestKernel, false, 0x1000, 8000);
    done = now();
  });
  sc_core::sc_start(sc_core::sc_time(200, sc_core::SC_US));
  // Bursts of 4096 and 3904 bytes back to back on the channel, then the access latency.
  const TimePs expected = vtoe::core::transfer_time_ps(8000, 1e9) + 50 * kNs;
  EXPECT_EQ(done, expected);
  EXPECT_EQ(counter(traffic.stats(), "stall_ps"), expected - 10'000 * kNs);
  EXPECT_EQ(core.busy_ps(0, CycleClass::GuestKernel), expected);
  EXPECT_EQ(counter(mem.stats(), "bytes_read"), 8000u);
}

TEST(MemoryTraffic, PostedWritesBookTheMemoryWithoutStallingAndKeepItsContents) {
  Core core("core", CoreParams{});
  auto& ctx = core.add_context("proc", 2);
  Dram mem("dram", dram(1e9));
  std::vector<std::uint8_t> data(256);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7);
  mem.write(0x2000, data.data(), data.size());
  Port port("port");
  port.out.bind(mem.in);
  MemoryTraffic traffic("traffic", port.out, core, 64);
  TimePs done = 1;
  Proc p("p", [&] {
    traffic.work(ctx, 0, CycleClass::GuestKernel, true, 0x2000, 256, /*stall=*/false);
    done = now();
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_US));
  EXPECT_EQ(done, 0u);
  EXPECT_EQ(counter(traffic.stats(), "transactions"), 4u);  // 64-byte bursts
  EXPECT_GT(mem.busy_until(), 0u);
  std::vector<std::uint8_t> back(256);
  mem.read(0x2000, back.data(), back.size());
  EXPECT_EQ(back, data);
}

VTOE_TEST_MAIN
