// Bench for core::Peripheral and core::Reg: decode, masks, narrow and bad accesses under both
// responses, strided arrays, callbacks, debug access without side effects, reset.
#include "models/core/peripheral.h"

#include <iterator>

#include "tests/support/bench.h"

namespace {

using vtoe::core::BadAccessResponse;
using vtoe::core::kAccess16;
using vtoe::core::kAccess32;
using vtoe::core::kAccess8;
using vtoe::core::RegisterInfo;

// A description as regmap.py generates them: a control register with a read-only field, a
// write-1-to-clear status, a byte-accessible array, a strided group (two registers, 3 times every
// 0x10) and a FIFO data register whose read has a side effect.
constexpr RegisterInfo kCtrl{"CTRL", 0x00, 4, 1, 4, 0x5, 0xff000000, 0, kAccess32, true, true, ""};
constexpr RegisterInfo kStatus{"STATUS", 0x04, 4, 1, 4, 0x3, 0, 0x3, kAccess32, true, true, ""};
constexpr RegisterInfo kPrio{"PRIO", 0x08, 4, 2, 4, 0, 0, 0, kAccess8 | kAccess16 | kAccess32,
                             true,   true, ""};
constexpr RegisterInfo kQAddr{"Q_ADDR", 0x40, 4, 3, 0x10, 0, 0, 0, kAccess32, true, true, ""};
constexpr RegisterInfo kQSize{"Q_SIZE", 0x44, 4, 3, 0x10, 0, 0, 0, kAccess32, true, true, ""};
constexpr RegisterInfo kData{"DATA", 0x80, 4, 1, 4, 0, 0, 0, kAccess32, true, false, ""};
constexpr RegisterInfo kId{"ID", 0x84, 4, 1, 4, 0xabcd, 0, 0, kAccess32, true, false, ""};
constexpr RegisterInfo kKick{"KICK", 0x88, 4, 1, 4, 0, 0, 0, kAccess32, false, true, ""};
constexpr const RegisterInfo* kBank[] = {&kCtrl,  &kStatus, &kPrio, &kQAddr,
                                         &kQSize, &kData,   &kId,   &kKick};

vtoe::core::PeripheralParams params(BadAccessResponse r) {
  vtoe::core::PeripheralParams p;
  p.bad_response = r;
  p.access_latency_ps = 3000;
  p.access_stat = "accesses";
  p.warn_limit = 2;
  return p;
}

class Device : public vtoe::core::Peripheral {
 public:
  Socket in;
  vtoe::core::RegisterBank bank{"device.regs"};
  vtoe::core::Reg<std::uint32_t> ctrl{bank, kCtrl}, status{bank, kStatus}, prio{bank, kPrio},
      q_addr{bank, kQAddr}, q_size{bank, kQSize}, data{bank, kData}, id{bank, kId},
      kick{bank, kKick};
  std::vector<std::uint32_t> fifo{7, 8, 9};
  std::vector<std::pair<unsigned, std::uint32_t>> kicks;  // (value, mask)
  int resets = 0;

  // The name arrives as an sc_module_name: the module's hierarchy lasts until its members exist.
  Device(const sc_core::sc_module_name& name, BadAccessResponse r)
      : Peripheral(name, params(r)), in("in") {
    serve(in);
    map(in, bank, 0x1000, 0x100);
    bank.expect_all(kBank, std::size(kBank));
    data.on_read([this](unsigned) {
      const std::uint32_t v = fifo.empty() ? 0 : fifo.front();
      if (!fifo.empty()) fifo.erase(fifo.begin());
      return v;
    });
    data.on_peek([this](unsigned) { return fifo.empty() ? 0u : fifo.front(); });
    kick.on_write(
        [this](unsigned, std::uint32_t v, std::uint32_t mask) { kicks.emplace_back(v, mask); });
  }
  void reset_state() override { ++resets; }
};

TEST(Peripheral, MasksArraysCallbacksAndLatency) {
  Device dev("device", BadAccessResponse::ReadAsZero);
  vtoe::test::Initiator cpu("cpu", [&](vtoe::test::Initiator& self) {
    EXPECT_EQ(self.read32(0x1000), 0x5u);  // reset value
    self.write32(0x1000, 0xffffffff);      // the read-only byte stays
    EXPECT_EQ(self.read32(0x1000), 0x00ffffffu);
    EXPECT_EQ(self.read32(0x1004), 0x3u);
    self.write32(0x1004, 0x1);  // write 1 to clear bit 0 only
    EXPECT_EQ(self.read32(0x1004), 0x2u);
    // Byte and halfword writes change only their bytes.
    self.write32(0x100c, 0x11223344);
    std::uint8_t b = 0xaa;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, 0x100d, &b, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(self.read32(0x100c), 0x1122aa44u);
    std::uint16_t h = 0;
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, 0x100e, reinterpret_cast<std::uint8_t*>(&h), 2, d),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(h, 0x1122u);
    // The strided group: element 2 of each register.
    self.write32(0x1060, 0xdead);
    self.write32(0x1064, 64);
    EXPECT_EQ(dev.q_addr.get(2), 0xdeadu);
    EXPECT_EQ(dev.q_size.get(2), 64u);
    EXPECT_EQ(dev.q_addr.get(1), 0u);
    // A read callback with a side effect.
    EXPECT_EQ(self.read32(0x1080), 7u);
    EXPECT_EQ(self.read32(0x1080), 8u);
    self.write32(0x1088, 0x5a);
    // Every access took the latency.
    const sc_core::sc_time before = sc_core::sc_time_stamp();
    (void)self.read32(0x1084);
    EXPECT_EQ(sc_core::sc_time_stamp() - before, sc_core::sc_time(3, sc_core::SC_NS));
  });
  cpu.socket.bind(dev.in);
  sc_core::sc_start();
  ASSERT_EQ(dev.kicks.size(), 1u);
  EXPECT_EQ(dev.kicks[0].first, 0x5au);
  EXPECT_EQ(dev.kicks[0].second, 0xffffffffu);
  EXPECT_EQ(dev.bad_accesses(), 0u);
  EXPECT_EQ(vtoe::test::counter(dev.stats(), "accesses"), 16u);
}

TEST(Peripheral, BadAccessesReadAsZeroAndAreCounted) {
  Device dev("device", BadAccessResponse::ReadAsZero);
  vtoe::test::Initiator cpu("cpu", [&](vtoe::test::Initiator& self) {
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    std::uint8_t b = 0xff;
    // A byte read of a word-only register, a gap, a strided array's gap, outside the bank,
    // a write to a read-only register, a read of a write-only one, an unaligned halfword.
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, 0x1000, &b, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b, 0u);
    EXPECT_EQ(self.read32(0x1020), 0u);
    EXPECT_EQ(self.read32(0x1048), 0u);
    EXPECT_EQ(self.read32(0x0), 0u);
    self.write32(0x1084, 1);
    EXPECT_EQ(self.read32(0x1088), 0u);
    std::uint16_t h = 0;
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, 0x100d, reinterpret_cast<std::uint8_t*>(&h), 2, d),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(self.read32(0x1084), 0xabcdu);  // the read-only register was not written
  });
  cpu.socket.bind(dev.in);
  sc_core::sc_start();
  EXPECT_EQ(dev.bad_accesses(), 7u);
  EXPECT_TRUE(dev.kicks.empty());
}

TEST(Peripheral, BadAccessesAnswerAnAddressErrorWhenAsked) {
  Device dev("device", BadAccessResponse::AddressError);
  vtoe::test::Initiator cpu("cpu", [&](vtoe::test::Initiator& self) {
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    std::uint32_t v = 0;
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, 0x1020, reinterpret_cast<std::uint8_t*>(&v), 4, d),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(
        self.access(tlm::TLM_WRITE_COMMAND, 0x1084, reinterpret_cast<std::uint8_t*>(&v), 4, d),
        tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, 0x1000, reinterpret_cast<std::uint8_t*>(&v), 4, d),
              tlm::TLM_OK_RESPONSE);
  });
  cpu.socket.bind(dev.in);
  sc_core::sc_start();
  EXPECT_EQ(dev.bad_accesses(), 2u);
}

TEST(Peripheral, DebugAccessHasNoSideEffectsAndResetRestores) {
  Device dev("device", BadAccessResponse::AddressError);
  vtoe::test::Initiator cpu("cpu", [&](vtoe::test::Initiator& self) {
    tlm::tlm_generic_payload gp;
    std::uint8_t buf[12] = {};
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(0x107c);  // a gap, DATA, ID
    gp.set_data_ptr(buf);
    gp.set_data_length(12);
    gp.set_streaming_width(12);
    EXPECT_EQ(self.socket->transport_dbg(gp), 12u);
    std::uint32_t words[3];
    std::memcpy(words, buf, sizeof words);
    EXPECT_EQ(words[0], 0u);
    EXPECT_EQ(words[1], 7u);  // peeked, not popped
    EXPECT_EQ(words[2], 0xabcdu);
    // A debugger writes a read-only register's stored value.
    const std::uint32_t id = 0x1234;
    std::memcpy(buf, &id, 4);
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(0x1084);
    gp.set_data_length(4);
    gp.set_streaming_width(4);
    EXPECT_EQ(self.socket->transport_dbg(gp), 4u);
    EXPECT_EQ(self.read32(0x1084), 0x1234u);
    self.write32(0x1000, 0x77);
  });
  cpu.socket.bind(dev.in);
  sc_core::sc_start();
  EXPECT_EQ(dev.fifo.size(), 3u);
  EXPECT_EQ(dev.bad_accesses(), 0u);
  EXPECT_EQ(dev.ctrl.get(), 0x77u);
  dev.reset();
  EXPECT_EQ(dev.ctrl.get(), 0x5u);
  EXPECT_EQ(dev.id.get(), 0xabcdu);
  EXPECT_EQ(dev.resets, 1);
}

// Half-word registers (no word table: the bank searches) decode the same way.
constexpr RegisterInfo kHalf{"HALF", 0x02, 2, 3, 8, 0x1234, 0, 0, vtoe::core::kAccess16,
                             true,   true, ""};

TEST(Peripheral, NarrowRegistersDecodeThroughTheSearch) {
  vtoe::core::RegisterBank bank("narrow");
  vtoe::core::Reg<std::uint16_t> half(bank, kHalf);
  std::uint8_t b[2] = {0x78, 0x56};
  EXPECT_EQ(bank.debug_write(0x0a, b, 2), 2u);  // element 1
  EXPECT_EQ(half.get(1), 0x5678u);
  EXPECT_EQ(half.get(0), 0x1234u);
  const vtoe::core::RegisterHit hit = bank.find(0x12, 2, true);  // element 2
  ASSERT_NE(hit.reg, nullptr);
  EXPECT_EQ(hit.index, 2u);
  EXPECT_EQ(bank.find(0x04, 2, false).reg, nullptr);  // the gap of the stride
  EXPECT_STREQ(bank.find(0x04, 2, false).error, "no register at this offset");
  EXPECT_STREQ(bank.find(0x02, 4, false).error, "access straddles the register's end");
  EXPECT_STREQ(bank.find(0x02, 1, false).error, "access size the register does not take");
}

TEST(Peripheral, AModelMissingADescribedRegisterIsRefused) {
  vtoe::core::RegisterBank bank("partial");
  vtoe::core::Reg<std::uint32_t> ctrl(bank, kCtrl);
  try {
    bank.expect_all(kBank, std::size(kBank));
    FAIL() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("partial: register STATUS"), std::string::npos)
        << e.what();
  }
}

}  // namespace

VTOE_TEST_MAIN
