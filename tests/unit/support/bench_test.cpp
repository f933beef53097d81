// The shared test bench itself: the clock, the initiator's register helpers against the backing
// memory, the IRQ sink, and the statistics lookups.
#include "tests/support/bench.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "models/core/module.h"

using namespace vtoe;
using namespace sc_core;

TEST(Bench, ClockConvertsCyclesToTime) {
  test::Clock clk(400e6);
  EXPECT_EQ(clk.period_ps(), 2500u);
  EXPECT_EQ(clk.cycles(4), sc_time(10, SC_NS));
}

TEST(Bench, InitiatorRegisterHelpersReachTheMemoryAndWaitForItsLatency) {
  test::Memory mem("mem", 4096, sc_time(20, SC_NS));
  std::uint64_t t_after_write = 0;
  test::Initiator cpu("cpu", [&](test::Initiator& self) {
    self.write32(0x10, 0xdeadbeef);
    t_after_write = core::now_ps();
    EXPECT_EQ(self.read32(0x10), 0xdeadbeefu);
    std::uint8_t b[8] = {};
    sc_time d = SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, 4092, b, 8, d), tlm::TLM_ADDRESS_ERROR_RESPONSE);
  });
  cpu.socket.bind(mem.in);
  sc_start();
  EXPECT_EQ(t_after_write, 20'000u);
  EXPECT_EQ(sc_time_stamp(), sc_time(40, SC_NS));
  EXPECT_EQ(mem.peek32(0x10), 0xdeadbeefu);
  EXPECT_EQ(mem.reads(), 1u);
  EXPECT_EQ(mem.writes(), 1u);
  EXPECT_THROW(mem.peek32(4094), std::out_of_range);
}

TEST(Bench, IrqSinkCountsRisingEdgesWithTheirTimes) {
  sc_signal<bool> line("line");
  test::IrqSink sink("sink");
  sink.irq(line);
  bool seen_high = false;
  test::Proc driver("driver", [&] {
    wait(5, SC_NS);
    line.write(true);
    wait(5, SC_NS);
    line.write(false);
    wait(5, SC_NS);
    line.write(true);
  });
  test::Proc waiter("waiter", [&] { seen_high = sink.wait_high(sc_time(1, SC_US)); });
  sc_start();
  EXPECT_TRUE(seen_high);
  EXPECT_EQ(sink.edges(), 2u);
  EXPECT_EQ(sink.times_ps(), (std::vector<core::TimePs>{5'000, 15'000}));
}

TEST(Bench, StatisticLookupsFailOnAnUnknownName) {
  static core::StatGroup g("group");  // static: the failure-expectation macros need it
  g.counter("hits", "things hit") += 3;
  EXPECT_EQ(test::counter(g, "hits"), 3u);
  EXPECT_NONFATAL_FAILURE(test::counter(g, "hitz"), "no counter hitz in group");
  EXPECT_NONFATAL_FAILURE(test::accumulator(g, "size"), "no accumulator size in group");
}

VTOE_TEST_MAIN
