// toe::DmaHub: several DMA masters, each with its own socket, reach one memory through the hub
// (and a parent's socket, bound hierarchically as inside the TOE) with no added delay, in the
// order they issue, with their sideband untouched.
#include "models/toe/dma_hub.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/core/sideband.h"
#include "models/core/sim_time.h"
#include "tests/support/bench.h"

using namespace sc_core;
using vtoe::core::SidebandExtension;
using vtoe::test::Initiator;
using vtoe::toe::DmaHub;

namespace {

constexpr std::uint64_t kMemoryDelayPs = 7'000;

// Records every transaction and answers after a fixed annotated delay.
class Memory : public sc_module {
 public:
  struct Seen {
    std::uint64_t addr;
    std::uint64_t delay_in_ps;
    int stream;
  };
  tlm_utils::simple_target_socket<Memory> in;
  std::vector<Seen> seen;
  int debug_calls = 0;

  explicit Memory(const sc_module_name& name) : sc_module(name), in("in") {
    in.register_b_transport(this, &Memory::b_transport);
    in.register_transport_dbg(this, &Memory::transport_dbg);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    SidebandExtension* ext = nullptr;
    gp.get_extension(ext);
    seen.push_back({gp.get_address(), delay.value(), ext ? static_cast<int>(ext->stream_id) : -1});
    delay += sc_time::from_value(kMemoryDelayPs);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload& gp) {
    ++debug_calls;
    return gp.get_data_length();
  }
};

// The TOE's arrangement: a parent with one outward socket and the hub inside.
class Parent : public sc_module {
 public:
  tlm::tlm_initiator_socket<> dma;
  DmaHub hub;
  explicit Parent(const sc_module_name& name) : sc_module(name), dma("dma"), hub("hub") {
    hub.out.bind(dma);
  }
};

// One tagged write of 4 bytes; returns the delay that came back.
std::uint64_t tagged_write(Initiator& m, std::uint64_t addr, std::uint32_t stream,
                           std::uint64_t delay_in_ps) {
  std::uint8_t data[4] = {};
  tlm::tlm_generic_payload gp;
  Initiator::setup(gp, tlm::TLM_WRITE_COMMAND, addr, data, 4);
  SidebandExtension ext;
  ext.stream_id = stream;
  gp.set_extension(&ext);
  sc_time delay = sc_time::from_value(delay_in_ps);
  m.socket->b_transport(gp, delay);
  gp.clear_extension(&ext);
  EXPECT_TRUE(gp.is_response_ok());
  return delay.value();
}

}  // namespace

TEST(DmaHub, PassesTransactionsThroughWithoutDelayInIssueOrder) {
  Parent parent("toe");
  Memory memory("memory");
  parent.dma.bind(memory.in);
  struct Issued {
    std::uint64_t at_ps, delay_in_ps, delay_out_ps;
  };
  std::vector<Issued> issued;
  auto body = [&](std::uint64_t base, std::uint32_t stream, std::uint64_t step) {
    return [&, base, stream, step](Initiator& m) {
      for (std::uint64_t i = 0; i < 3; ++i) {
        const std::uint64_t at = vtoe::core::now_ps();
        issued.push_back({at, 100 * i, tagged_write(m, base + i, stream, 100 * i)});
        wait(sc_time::from_value(step));
      }
    };
  };
  Initiator a("a", body(0x1000, 1, 10'000));
  Initiator b("b", body(0x2000, 2, 15'000));
  a.socket.bind(parent.hub.in);
  b.socket.bind(parent.hub.in);
  sc_start();
  // a at 0, 10, 20 ns; b at 0, 15, 30 ns: the memory sees them in that order.
  const std::vector<std::uint64_t> want_addr = {0x1000, 0x2000, 0x1001, 0x2001, 0x1002, 0x2002};
  ASSERT_EQ(memory.seen.size(), want_addr.size());
  for (std::size_t i = 0; i < want_addr.size(); ++i) {
    EXPECT_EQ(memory.seen[i].addr, want_addr[i]) << i;
    EXPECT_EQ(memory.seen[i].stream, want_addr[i] < 0x2000 ? 1 : 2) << "sideband lost, " << i;
    EXPECT_EQ(memory.seen[i].delay_in_ps, 100 * (want_addr[i] & 0xf)) << i;
  }
  // The delay that comes back is the caller's plus the memory's: the hub adds none.
  ASSERT_EQ(issued.size(), 6u);
  for (const Issued& t : issued) EXPECT_EQ(t.delay_out_ps, t.delay_in_ps + kMemoryDelayPs);
  EXPECT_EQ(issued[1].at_ps, 0u);  // b's first write went at time 0 too
}

TEST(DmaHub, ForwardsDebugTransport) {
  DmaHub hub("hub");
  Memory memory("memory");
  hub.out.bind(memory.in);
  unsigned int got = 0;
  Initiator m("m", [&](Initiator& self) {
    std::uint8_t data[8] = {};
    tlm::tlm_generic_payload gp;
    Initiator::setup(gp, tlm::TLM_READ_COMMAND, 0x40, data, 8);
    got = self.socket->transport_dbg(gp);
  });
  m.socket.bind(hub.in);
  sc_start();
  EXPECT_EQ(got, 8u);
  EXPECT_EQ(memory.debug_calls, 1);
  EXPECT_TRUE(memory.seen.empty());
}

TEST(DmaHub, UnboundOutputFailsElaboration) {
  Parent parent("toe");  // parent.dma left unbound
  Initiator m("m", [](Initiator&) {});
  m.socket.bind(parent.hub.in);
  try {
    sc_start();
    FAIL() << "elaboration passed with the TOE's dma socket unbound";
  } catch (const sc_report& r) {
    EXPECT_NE(std::string(r.what()).find("not bound"), std::string::npos) << r.what();
  }
}

VTOE_TEST_MAIN
