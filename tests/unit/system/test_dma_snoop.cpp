// platform::system::DmaSnoop: passes a DMA master's transactions through to the memory
// (b_transport, debug, DMI) and reports each read and write's range before it goes on.
#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "models/mem/ram.h"
#include "platform/system/dma_snoop.h"
#include "tests/support/bench.h"

using namespace sc_core;
using vtoe::mem::Ram;
using vtoe::platform::system::DmaSnoop;
using vtoe::test::Initiator;

TEST(DmaSnoop, ReportsReadsAndWritesAndPassesThemThrough) {
  std::vector<std::tuple<std::uint64_t, std::uint64_t, bool>> seen;
  Ram ram("ram", 1 << 16);
  DmaSnoop snoop("snoop",
                 [&](std::uint64_t a, std::uint64_t n, bool w) { seen.emplace_back(a, n, w); });
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> out(200, 0x5a), in(200, 0);
    sc_time d = SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, 0x1010, out.data(), 200, d),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, 0x1010, in.data(), 200, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(in, out);
    // Debug access is not a bus access: not reported.
    tlm::tlm_generic_payload t;
    Initiator::setup(t, tlm::TLM_READ_COMMAND, 0x1010, in.data(), 4);
    EXPECT_EQ(self.socket->transport_dbg(t), 4u);
  });
  init.socket.bind(snoop.in);
  snoop.out.bind(ram.in);
  sc_start();
  const std::vector<std::tuple<std::uint64_t, std::uint64_t, bool>> want = {{0x1010, 200, true},
                                                                            {0x1010, 200, false}};
  EXPECT_EQ(seen, want);
  EXPECT_EQ(snoop.snooped(), 2u);
}

VTOE_TEST_MAIN
