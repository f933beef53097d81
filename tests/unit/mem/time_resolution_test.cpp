// The models keep their timing at a time resolution other than SystemC's default 1 ps: a small
// platform (initiator -> interconnect -> DRAM) elaborated at 1 ns, as many virtual platforms set.
#include <gtest/gtest.h>

#include "models/core/sim_time.h"
#include "models/mem/dram.h"
#include "models/mem/interconnect.h"
#include "tests/support/bench.h"

using namespace sc_core;
using vtoe::test::Initiator;

namespace {
// 4 KiB at 6.4 Gbit/s: 32768 bits / 6.4e9 = 5.12 us, plus 50 ns DRAM latency, plus 10 ns bus hop.
constexpr std::uint64_t kDramPs = 5'120'000 + 50'000;
constexpr std::uint64_t kBusPs = 10'000;
}  // namespace

TEST(TimeResolution, FourKiBWriteThroughTheBusTakesItsTimeAt1ns) {
  ASSERT_EQ(sc_get_time_resolution(), sc_time(1, SC_NS));
  vtoe::mem::Dram dram("dram");
  vtoe::mem::Interconnect bus("bus", kBusPs);
  bus.map(0, dram.params().size, dram.in, "dram");
  EXPECT_EQ(vtoe::core::resolution_ps(), 1000u);
  std::uint64_t delay_ps = 0, end_ps = 0;
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(4096, 0x5a);
    sc_time delay = SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, 0x1000, buf.data(), 4096, delay),
              tlm::TLM_OK_RESPONSE);
    delay_ps = vtoe::core::to_ps(delay);
    wait(delay);
    end_ps = vtoe::core::now_ps();
  });
  init.socket.bind(bus.in);
  sc_start();
  EXPECT_EQ(delay_ps, kDramPs + kBusPs);
  EXPECT_EQ(end_ps, kDramPs + kBusPs);
  EXPECT_EQ(sc_time_stamp(), sc_time(5180, SC_NS));
}

TEST(TimeResolution, PicosecondsRoundToTheNearestNanosecond) {
  (void)sc_time(1, SC_NS);  // freezes the resolution
  vtoe::mem::Dram dram("dram");  // a model reads the resolution at elaboration
  EXPECT_EQ(vtoe::core::ps(1'499), sc_time(1, SC_NS));
  EXPECT_EQ(vtoe::core::ps(1'500), sc_time(2, SC_NS));
  EXPECT_EQ(vtoe::core::to_ps(sc_time(3, SC_US)), 3'000'000u);
}

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  sc_set_time_resolution(1, SC_NS);
  sc_report_handler::set_actions(SC_WARNING, SC_THROW);
  return RUN_ALL_TESTS();
}
