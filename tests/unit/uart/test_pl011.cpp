// Bench for uart::Pl011: identification as Linux's amba bus reads it, output, the transmit and
// receive interrupts through IMSC/RIS/MIS/ICR, the receive FIFO, and bad offsets.
#include <gtest/gtest.h>

#include <string>
#include <systemc>

#include "models/uart/pl011.h"
#include "tests/support/bench.h"

using vtoe::uart::Pl011;

namespace {

struct Bench {
  Bench() : uart("uart", [this](char c) { out += c; }), irq("irq") { uart.irq(irq); }
  std::string out;
  Pl011 uart;
  sc_core::sc_signal<bool> irq;
};

}  // namespace

TEST(Pl011, IdentifiesAsAPrimeCellAndWritesCharacters) {
  Bench b;
  vtoe::test::Initiator cpu("cpu", [&](vtoe::test::Initiator& self) {
    const std::uint32_t ids[8] = {0x11, 0x10, 0x14, 0x00, 0x0d, 0xf0, 0x05, 0xb1};
    for (int i = 0; i < 8; ++i) EXPECT_EQ(self.read32(0xFE0 + 4 * i), ids[i]);
    EXPECT_EQ(self.read32(0x018), 0x90u);   // FR: TXFE, RXFE
    EXPECT_EQ(self.read32(0x030), 0x300u);  // CR: TXE, RXE
    self.write32(0x000, 'h');
    std::uint8_t byte = 'i';  // Linux writes DR with writeb
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, 0x000, &byte, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(self.read32(0x03C), 0x20u);  // RIS: TX
    EXPECT_EQ(self.read32(0x040), 0u);     // MIS: masked
    EXPECT_EQ(self.read32(0x050), 0u);     // no register here
  });
  cpu.socket.bind(b.uart.in);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_EQ(b.out, "hi");
  EXPECT_EQ(b.uart.stats().counter("bad_accesses").value(), 1u);
}

TEST(Pl011, InterruptsFollowImscAndIcr) {
  Bench b;
  vtoe::test::Initiator cpu("cpu", [&](vtoe::test::Initiator& self) {
    self.write32(0x000, 'x');
    self.write32(0x038, 0x20);  // IMSC: TX
    sc_core::wait(1, sc_core::SC_NS);
    EXPECT_TRUE(b.irq.read());
    self.write32(0x044, 0x20);  // ICR
    sc_core::wait(1, sc_core::SC_NS);
    EXPECT_FALSE(b.irq.read());
    // Receive: one character without FIFOs, the second overruns.
    self.write32(0x038, 0x10);
    b.uart.receive('a');
    b.uart.receive('b');
    sc_core::wait(1, sc_core::SC_NS);
    EXPECT_TRUE(b.irq.read());
    EXPECT_EQ(self.read32(0x018) & 0x50, 0x40u);    // RXFF, not RXFE
    EXPECT_EQ(self.read32(0x03C) & 0x410, 0x410u);  // RX and overrun
    EXPECT_EQ(self.read32(0x000), std::uint32_t{'a'});
    EXPECT_EQ(self.read32(0x018) & 0x10, 0x10u);  // empty again
    sc_core::wait(1, sc_core::SC_NS);
    EXPECT_FALSE(b.irq.read());
    // With FIFOs (LCR_H.FEN) sixteen characters fit.
    self.write32(0x02C, 0x10);
    for (char c = 'A'; c < 'A' + 16; ++c) b.uart.receive(c);
    std::string got;
    while (!(self.read32(0x018) & 0x10)) got += static_cast<char>(self.read32(0x000));
    EXPECT_EQ(got, "ABCDEFGHIJKLMNOP");
  });
  cpu.socket.bind(b.uart.in);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
}

VTOE_TEST_MAIN
