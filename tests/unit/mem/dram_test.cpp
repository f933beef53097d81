// mem::Dram: timing with contention, TLM/backdoor data paths, sparse storage, errors, debug.
#include "models/mem/dram.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>

#include "tests/support/bench.h"

using namespace sc_core;
using vtoe::mem::Dram;
using vtoe::mem::DramParams;
using vtoe::test::counter;
using vtoe::test::Initiator;
using vtoe::test::pattern;

namespace {

constexpr std::uint64_t kLatency = 50'000;  // default, ps

// 1000 bytes at 6.4 Gbit/s: 8000 bits / 6.4e9 = 1.25 us.
constexpr std::uint64_t k1000B = 1'250'000;

}  // namespace

TEST(Dram, ReadOf1000BytesTakesTransferPlusLatency) {
  Dram dram("dram");
  std::uint64_t elapsed = 0;
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(1000);
    sc_time delay = SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, 0x100, buf.data(), 1000, delay),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(delay.value(), k1000B + kLatency);
    wait(delay);
    elapsed = sc_time_stamp().value();
  });
  init.socket.bind(dram.in);
  sc_start();
  EXPECT_EQ(elapsed, k1000B + kLatency);
  EXPECT_EQ(counter(dram.stats(), "bytes_read"), 1000u);
  EXPECT_EQ(counter(dram.stats(), "transactions"), 1u);
  EXPECT_EQ(counter(dram.stats(), "busy_ps"), k1000B);
  EXPECT_DOUBLE_EQ(dram.utilisation(2 * k1000B), 0.5);
}

TEST(Dram, BackToBackTransactionsQueueOnTheChannel) {
  DramParams p;
  p.accept_delay_ps = 10'000;
  Dram dram("dram", p);
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(1000);
    sc_time d1 = SC_ZERO_TIME;
    sc_time d2 = SC_ZERO_TIME;
    self.access(tlm::TLM_WRITE_COMMAND, 0, buf.data(), 1000, d1);
    self.access(tlm::TLM_READ_COMMAND, 4096, buf.data(), 1000, d2);
    EXPECT_EQ(d1.value(), 10'000 + k1000B + kLatency);
    // The second starts when the first leaves the channel: later by exactly one transfer time.
    EXPECT_EQ(d2.value(), d1.value() + k1000B);
    EXPECT_EQ(dram.busy_until(), 10'000 + 2 * k1000B);

    // After the channel drained, a request sees no queueing.
    wait(sc_time::from_value(10'000'000));
    sc_time d3 = SC_ZERO_TIME;
    self.access(tlm::TLM_READ_COMMAND, 0, buf.data(), 1000, d3);
    EXPECT_EQ(d3.value(), 10'000 + k1000B + kLatency);

    // An annotated delay places the request in the future: its own start is respected.
    sc_time d4 = sc_time::from_value(5'000'000);
    self.access(tlm::TLM_READ_COMMAND, 0, buf.data(), 1000, d4);
    EXPECT_EQ(d4.value(), 5'000'000 + 10'000 + k1000B + kLatency);
  });
  init.socket.bind(dram.in);
  sc_start();
}

TEST(Dram, TlmWritesAreVisibleToBackdoorAndViceVersa) {
  Dram dram("dram");
  // Both ranges straddle a 64 KiB page boundary.
  const std::uint64_t a = Dram::kPageSize - 100;
  const std::uint64_t b = 3 * Dram::kPageSize - 7;
  const auto data_a = pattern(300, 1);
  const auto data_b = pattern(5000, 9);
  dram.write(b, data_b.data(), data_b.size());
  Initiator init("init", [&](Initiator& self) {
    auto buf = data_a;
    sc_time delay = SC_ZERO_TIME;
    ASSERT_EQ(self.access(tlm::TLM_WRITE_COMMAND, a, buf.data(), 300, delay), tlm::TLM_OK_RESPONSE);
    std::vector<std::uint8_t> back(5000, 0xee);
    ASSERT_EQ(self.access(tlm::TLM_READ_COMMAND, b, back.data(), 5000, delay),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(back, data_b);
  });
  init.socket.bind(dram.in);
  sc_start();
  std::vector<std::uint8_t> got(300);
  dram.read(a, got.data(), got.size());
  EXPECT_EQ(got, data_a);
}

TEST(Dram, SparseGibibyteCostsOnlyTouchedPages) {
  DramParams p;
  p.size = 1ull << 30;
  Dram dram("dram", p);
  EXPECT_EQ(dram.pages_allocated(), 0u);
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(8, 0x5a);
    sc_time delay = SC_ZERO_TIME;
    ASSERT_EQ(self.access(tlm::TLM_WRITE_COMMAND, p.size - 8, buf.data(), 8, delay),
              tlm::TLM_OK_RESPONSE);
    // Never-written memory reads as zeros and allocates nothing.
    std::vector<std::uint8_t> zeros(4096, 0xff);
    ASSERT_EQ(self.access(tlm::TLM_READ_COMMAND, 512ull << 20, zeros.data(), 4096, delay),
              tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(zeros, std::vector<std::uint8_t>(4096, 0));
  });
  init.socket.bind(dram.in);
  sc_start();
  EXPECT_EQ(dram.pages_allocated(), 1u);
  std::uint8_t last[8];
  dram.read(p.size - 8, last, 8);
  EXPECT_EQ(last[7], 0x5a);
}

TEST(Dram, OutOfRangeGetsAddressErrorAndBackdoorThrows) {
  DramParams p;
  p.size = 1 << 20;
  Dram dram("dram", p);
  // Checked before sc_start: SystemC's coroutines (not annotated for ASan) make exceptions thrown
  // on the main stack after a simulation report false positives under VTOE_SANITIZE.
  std::uint8_t b[16] = {};
  EXPECT_THROW(dram.read(p.size - 8, b, 16), std::out_of_range);
  EXPECT_THROW(dram.write(~0ull, b, 2), std::out_of_range);
  try {
    dram.write(p.size, b, 1);
    FAIL() << "no exception";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("dram"), std::string::npos) << e.what();
  }
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> buf(8);
    sc_time delay = SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, p.size - 4, buf.data(), 8, delay),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, ~0ull - 2, buf.data(), 8, delay),
              tlm::TLM_ADDRESS_ERROR_RESPONSE);
    EXPECT_EQ(self.access(tlm::TLM_READ_COMMAND, p.size - 8, buf.data(), 8, delay),
              tlm::TLM_OK_RESPONSE);
  });
  init.socket.bind(dram.in);
  sc_start();
  EXPECT_EQ(counter(dram.stats(), "address_errors"), 2u);
}

TEST(Dram, DebugTransportMovesDataWithoutTimeOrStats) {
  DramParams p;
  p.size = 1 << 20;
  Dram dram("dram", p);
  Initiator init("init", [&](Initiator& self) {
    auto data = pattern(64, 3);
    tlm::tlm_generic_payload trans;
    Initiator::setup(trans, tlm::TLM_WRITE_COMMAND, 0x4000, data.data(), 64);
    EXPECT_EQ(self.socket->transport_dbg(trans), 64u);
    // Truncated at the end of memory.
    std::vector<std::uint8_t> tail(64);
    Initiator::setup(trans, tlm::TLM_READ_COMMAND, p.size - 16, tail.data(), 64);
    EXPECT_EQ(self.socket->transport_dbg(trans), 16u);
    Initiator::setup(trans, tlm::TLM_READ_COMMAND, p.size, tail.data(), 4);
    EXPECT_EQ(self.socket->transport_dbg(trans), 0u);
    EXPECT_EQ(sc_time_stamp(), SC_ZERO_TIME);
  });
  init.socket.bind(dram.in);
  sc_start();
  std::vector<std::uint8_t> got(64);
  dram.read(0x4000, got.data(), 64);
  EXPECT_EQ(got, pattern(64, 3));
  EXPECT_EQ(counter(dram.stats(), "transactions"), 0u);
  EXPECT_EQ(dram.busy_until(), 0u);
}

TEST(Dram, NbTransportCompletesEarlyWithTheSameTiming) {
  Dram dram("dram");
  Initiator init("init", [&](Initiator& self) {
    auto data = pattern(1000, 5);
    tlm::tlm_generic_payload trans;
    Initiator::setup(trans, tlm::TLM_WRITE_COMMAND, 0x2000, data.data(), 1000);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_time delay = SC_ZERO_TIME;
    EXPECT_EQ(self.socket->nb_transport_fw(trans, phase, delay), tlm::TLM_COMPLETED);
    EXPECT_EQ(trans.get_response_status(), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(delay.value(), k1000B + kLatency);
  });
  init.socket.bind(dram.in);
  sc_start();
  std::vector<std::uint8_t> got(1000);
  dram.read(0x2000, got.data(), got.size());
  EXPECT_EQ(got, pattern(1000, 5));
}

TEST(Dram, ByteEnablesAndStreamingWidth) {
  Dram dram("dram");
  std::vector<std::uint8_t> init_data(16, 0x11);
  dram.write(0, init_data.data(), 16);
  Initiator init("init", [&](Initiator& self) {
    std::vector<std::uint8_t> data(8, 0xab);
    std::uint8_t be[2] = {TLM_BYTE_ENABLED, TLM_BYTE_DISABLED};
    tlm::tlm_generic_payload trans;
    Initiator::setup(trans, tlm::TLM_WRITE_COMMAND, 0, data.data(), 8);
    trans.set_byte_enable_ptr(be);
    trans.set_byte_enable_length(2);
    sc_time delay = SC_ZERO_TIME;
    self.socket->b_transport(trans, delay);
    EXPECT_EQ(trans.get_response_status(), tlm::TLM_OK_RESPONSE);
    // Streaming width 4: a FIFO-like 4-byte window written twice; the last beat wins.
    std::vector<std::uint8_t> beats = {1, 2, 3, 4, 5, 6, 7, 8};
    Initiator::setup(trans, tlm::TLM_WRITE_COMMAND, 8, beats.data(), 8);
    trans.set_streaming_width(4);
    self.socket->b_transport(trans, delay);
    EXPECT_EQ(trans.get_response_status(), tlm::TLM_OK_RESPONSE);
  });
  init.socket.bind(dram.in);
  sc_start();
  std::uint8_t got[16];
  dram.read(0, got, 16);
  const std::uint8_t want[16] = {0xab, 0x11, 0xab, 0x11, 0xab, 0x11, 0xab, 0x11,
                                 5,    6,    7,    8,    0x11, 0x11, 0x11, 0x11};
  EXPECT_EQ(0, std::memcmp(got, want, 16));
}

TEST(Dram, RandomTrafficMatchesAReferenceArray) {
  // Differential: the same random writes/reads through TLM and into a flat reference array.
  DramParams p;
  p.size = 4 * Dram::kPageSize;
  Dram dram("dram", p);
  std::vector<std::uint8_t> ref(p.size, 0);
  Initiator init("init", [&](Initiator& self) {
    std::mt19937_64 rng(7);
    sc_time delay = SC_ZERO_TIME;
    for (int i = 0; i < 2000; ++i) {
      const unsigned len = 1 + static_cast<unsigned>(rng() % 3000);
      const std::uint64_t addr = rng() % (p.size - len);
      std::vector<std::uint8_t> buf(len);
      if (rng() % 2) {
        for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
        ASSERT_EQ(self.access(tlm::TLM_WRITE_COMMAND, addr, buf.data(), len, delay),
                  tlm::TLM_OK_RESPONSE);
        std::memcpy(&ref[addr], buf.data(), len);
      } else {
        ASSERT_EQ(self.access(tlm::TLM_READ_COMMAND, addr, buf.data(), len, delay),
                  tlm::TLM_OK_RESPONSE);
        ASSERT_EQ(0, std::memcmp(&ref[addr], buf.data(), len)) << "at " << addr;
      }
    }
  });
  init.socket.bind(dram.in);
  sc_start();
}

TEST(Dram, RejectsZeroSize) {
  DramParams p;
  p.size = 0;
  EXPECT_THROW(Dram("dram", p), std::invalid_argument);
}

VTOE_TEST_MAIN
