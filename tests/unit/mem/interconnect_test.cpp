// mem::Interconnect: decoding, rebasing, errors, hop latency, sideband pass-through, nb paths.
#include "models/mem/interconnect.h"

#include <gtest/gtest.h>
#include <tlm_utils/peq_with_get.h>
#include <tlm_utils/simple_target_socket.h>

#include <stdexcept>

#include "models/core/sideband.h"
#include "models/mem/dram.h"
#include "tests/support/bench.h"

using namespace sc_core;
using vtoe::core::SidebandExtension;
using vtoe::mem::Dram;
using vtoe::mem::DramParams;
using vtoe::mem::Interconnect;
using vtoe::test::counter;
using vtoe::test::Initiator;
using vtoe::test::pattern;

namespace {

constexpr std::uint64_t kBaseA = 0x1000'0000;
constexpr std::uint64_t kBaseB = 0x8000'0000;
constexpr std::uint64_t kSize = 1 << 20;

DramParams small() {
  DramParams p;
  p.size = kSize;
  return p;
}

// Records what a target sees and answers after a fixed delay.
class Probe : public sc_module {
 public:
  tlm_utils::simple_target_socket<Probe> in;
  std::uint64_t seen_address = ~0ull;
  const SidebandExtension* seen_ext = nullptr;

  explicit Probe(const sc_module_name& name) : sc_module(name), in("in") {
    in.register_b_transport(this, &Probe::b_transport);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_time& delay) {
    seen_address = trans.get_address();
    trans.get_extension(seen_ext);
    delay += sc_time::from_value(1000);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// A target speaking the full four-phase base protocol: END_REQ and BEGIN_RESP come later on the
// backward path.
class FourPhaseTarget : public sc_module {
 public:
  tlm_utils::simple_target_socket<FourPhaseTarget> in;
  std::uint64_t seen_address = ~0ull;
  bool got_end_resp = false;

  SC_HAS_PROCESS(FourPhaseTarget);
  explicit FourPhaseTarget(const sc_module_name& name) : sc_module(name), in("in"), peq_("peq") {
    in.register_nb_transport_fw(this, &FourPhaseTarget::nb_transport_fw);
    SC_THREAD(respond);
  }

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_time& delay) {
    if (phase == tlm::BEGIN_REQ) {
      seen_address = trans.get_address();
      peq_.notify(trans, delay + sc_time::from_value(20'000));
      return tlm::TLM_ACCEPTED;
    }
    if (phase == tlm::END_RESP) got_end_resp = true;
    return tlm::TLM_COMPLETED;
  }
  void respond() {
    for (;;) {
      wait(peq_.get_event());
      while (tlm::tlm_generic_payload* trans = peq_.get_next_transaction()) {
        tlm::tlm_phase phase = tlm::END_REQ;
        sc_time delay = SC_ZERO_TIME;
        in->nb_transport_bw(*trans, phase, delay);
        trans->set_response_status(tlm::TLM_OK_RESPONSE);
        phase = tlm::BEGIN_RESP;
        in->nb_transport_bw(*trans, phase, delay);
      }
    }
  }
  tlm_utils::peq_with_get<tlm::tlm_generic_payload> peq_;
};

}  // namespace

TEST(Interconnect, DecodesAndRebasesToTwoTargets) {
  Interconnect ic("ic");
  Dram a("a", small());
  Dram b("b", small());
  ic.map(kBaseB, kSize, b.in, "b");  // out of order on purpose
  ic.map(kBaseA, kSize, a.in, "a");
  Initiator init("init", [&](Initiator& self) {
    auto da = pattern(100, 1);
    auto db = pattern(100, 2);
    sc_time delay = SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, kBaseA + 0x10, da.data(), 100, delay),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, kBaseB + kSize - 100, db.data(), 100, delay),
              tlm::TLM_OK_RESPONSE);
  });
  init.socket.bind(ic.in);
  sc_start();
  std::vector<std::uint8_t> got(100);
  a.read(0x10, got.data(), 100);
  EXPECT_EQ(got, pattern(100, 1));
  b.read(kSize - 100, got.data(), 100);
  EXPECT_EQ(got, pattern(100, 2));
  EXPECT_EQ(counter(ic.stats(), "transactions"), 2u);
}

TEST(Interconnect, UnmappedAndStraddlingAddressesGetAddressError) {
  Interconnect ic("ic");
  Dram a("a", small());
  ic.map(kBaseA, kSize, a.in, "a");
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(16);
    sc_time delay = SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, 0, buf.data(), 16, delay),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, kBaseA - 8, buf.data(), 16, delay),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, kBaseA + kSize - 8, buf.data(), 16, delay),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, kBaseA + kSize, buf.data(), 16, delay),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    tlm::tlm_generic_payload trans;
    Initiator::setup(trans, tlm::TLM_READ_COMMAND, 0x10, buf.data(), 16);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    EXPECT_EQ(self.socket->nb_transport_fw(trans, phase, delay), tlm::TLM_COMPLETED);
    EXPECT_EQ(trans.get_response_status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    Initiator::setup(trans, tlm::TLM_READ_COMMAND, 0x10, buf.data(), 16);
    EXPECT_EQ(self.socket->transport_dbg(trans), 0u);
  });
  init.socket.bind(ic.in);
  sc_start();
  EXPECT_EQ(counter(ic.stats(), "decode_errors"), 5u);
  EXPECT_EQ(counter(a.stats(), "transactions"), 0u);
}

TEST(Interconnect, OverlappingRegionsThrowAtElaboration) {
  Interconnect ic("ic");
  Dram a("a", small());
  Dram b("b", small());
  Dram c("c", small());
  ic.map(kBaseA, kSize, a.in, "a");
  EXPECT_THROW(ic.map(kBaseA + kSize - 1, kSize, b.in, "b"), std::invalid_argument);
  EXPECT_THROW(ic.map(kBaseA - 0x100, 0x101, b.in, "b"), std::invalid_argument);
  EXPECT_THROW(ic.map(0, 0, b.in, "b"), std::invalid_argument);
  EXPECT_THROW(ic.map(~0ull, 2, b.in, "b"), std::invalid_argument);
  try {
    ic.map(kBaseA + 0x10, 0x10, c.in, "c");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'a'"), std::string::npos) << e.what();
  }
  // Adjacent regions are fine.
  ic.map(kBaseA + kSize, kSize, b.in, "b");
  ic.map(kBaseA - kSize, kSize, c.in, "c");
  EXPECT_EQ(ic.regions(), 3u);
}

TEST(Interconnect, AddsHopLatencyAndForwardsSidebandUntouched) {
  Interconnect ic("ic", 5'000);
  Probe probe("probe");
  Dram a("a", small());
  ic.map(0x4000, 0x1000, probe.in, "probe regs");  // name with a space: sanitised socket name
  ic.map(kBaseA, kSize, a.in, "a");
  SidebandExtension ext;
  ext.vm_id = 3;
  ext.channel = 7;
  ext.stream_id = 42;
  Initiator init("init", [&](Initiator& self) {
    std::uint8_t buf[4] = {};
    tlm::tlm_generic_payload trans;
    Initiator::setup(trans, tlm::TLM_WRITE_COMMAND, 0x4010, buf, 4);
    trans.set_extension(&ext);
    sc_time delay = sc_time::from_value(100);
    self.socket->b_transport(trans, delay);
    EXPECT_EQ(delay.value(), 100u + 5'000 + 1'000);
    EXPECT_EQ(trans.get_address(), 0x4010u);
    SidebandExtension* back = nullptr;
    trans.get_extension(back);
    EXPECT_EQ(back, &ext);
    trans.clear_extension(&ext);

    // Through to the DRAM: hop + 4 bytes at 6.4 Gbit/s (5 ns) + 50 ns.
    delay = SC_ZERO_TIME;
    self.access(tlm::TLM_READ_COMMAND, kBaseA, buf, 4, delay);
    EXPECT_EQ(delay.value(), 5'000u + 5'000 + 50'000);
  });
  init.socket.bind(ic.in);
  sc_start();
  EXPECT_EQ(probe.seen_address, 0x10u);
  ASSERT_NE(probe.seen_ext, nullptr);
  EXPECT_EQ(probe.seen_ext->vm_id, 3);
  EXPECT_EQ(probe.seen_ext->channel, 7);
  EXPECT_EQ(probe.seen_ext->stream_id, 42u);
  EXPECT_NE(sc_find_object("ic.out_probe_regs"), nullptr);
}

TEST(Interconnect, ManyInitiatorsNbTransportAndDebug) {
  Interconnect ic("ic", 2'000);
  Dram a("a", small());
  Dram b("b", small());
  ic.map(kBaseA, kSize, a.in, "a");
  ic.map(kBaseB, kSize, b.in, "b");
  b.write(0x20, pattern(32, 9).data(), 32);
  Initiator i0("i0", [&](Initiator& self) {
    auto data = pattern(1000, 4);
    tlm::tlm_generic_payload trans;
    Initiator::setup(trans, tlm::TLM_WRITE_COMMAND, kBaseA + 0x100, data.data(), 1000);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_time delay = SC_ZERO_TIME;
    EXPECT_EQ(self.socket->nb_transport_fw(trans, phase, delay), tlm::TLM_COMPLETED);
    EXPECT_EQ(trans.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(trans.get_address(), kBaseA + 0x100);
    EXPECT_EQ(delay.value(), 2'000u + 1'250'000 + 50'000);
  });
  Initiator i1("i1", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(64);
    tlm::tlm_generic_payload trans;
    // Debug reads are truncated at the end of the region.
    Initiator::setup(trans, tlm::TLM_READ_COMMAND, kBaseB + kSize - 8, buf.data(), 64);
    EXPECT_EQ(self.socket->transport_dbg(trans), 8u);
    EXPECT_EQ(trans.get_data_length(), 64u);
    Initiator::setup(trans, tlm::TLM_READ_COMMAND, kBaseB + 0x20, buf.data(), 32);
    EXPECT_EQ(self.socket->transport_dbg(trans), 32u);
    EXPECT_EQ(trans.get_address(), kBaseB + 0x20);
    buf.resize(32);
    EXPECT_EQ(buf, pattern(32, 9));
  });
  i0.socket.bind(ic.in);
  i1.socket.bind(ic.in);
  sc_start();
  std::vector<std::uint8_t> got(1000);
  a.read(0x100, got.data(), 1000);
  EXPECT_EQ(got, pattern(1000, 4));
}

namespace {

// An initiator that completes BEGIN_RESP on the backward path.
class NbInitiator : public sc_module {
 public:
  tlm_utils::simple_initiator_socket<NbInitiator> socket;
  std::uint64_t resp_address = 0;
  sc_time resp_time;
  bool got_end_req = false;

  SC_HAS_PROCESS(NbInitiator);
  explicit NbInitiator(const sc_module_name& name) : sc_module(name), socket("socket") {
    socket.register_nb_transport_bw(this, &NbInitiator::nb_transport_bw);
    SC_THREAD(run);
  }

 private:
  void run() {
    std::uint8_t buf[4] = {};
    Initiator::setup(trans_, tlm::TLM_READ_COMMAND, 0x9000'0040, buf, 4);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_time delay = SC_ZERO_TIME;
    EXPECT_EQ(socket->nb_transport_fw(trans_, phase, delay), tlm::TLM_ACCEPTED);
    wait(done_);
  }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_time& /*delay*/) {
    if (phase == tlm::END_REQ) {
      got_end_req = true;
      return tlm::TLM_ACCEPTED;
    }
    EXPECT_EQ(phase, tlm::BEGIN_RESP);
    resp_address = trans.get_address();
    resp_time = sc_time_stamp();
    done_.notify();
    return tlm::TLM_COMPLETED;
  }
  tlm::tlm_generic_payload trans_;
  sc_event done_;
};

}  // namespace

TEST(Interconnect, RoutesFourPhaseTransactionsBack) {
  Interconnect ic("ic", 1'000);
  FourPhaseTarget t("t");
  ic.map(0x9000'0000, 0x1000, t.in, "t");
  NbInitiator init("init");
  init.socket.bind(ic.in);
  sc_start();
  EXPECT_EQ(t.seen_address, 0x40u);
  EXPECT_TRUE(init.got_end_req);
  EXPECT_EQ(init.resp_address, 0x9000'0040u);
  EXPECT_EQ(init.resp_time.value(), 21'000u);
}

VTOE_TEST_MAIN
