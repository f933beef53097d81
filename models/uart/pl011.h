// ARM PrimeCell PL011 UART (as QEMU's virt machine has at 0x0900_0000, SPI 1 = ID 33), the
// console of the system platform.
//
// Registers (docs/registers.md, from pl011.regs.yaml; PL011 TRM, 3.2): DR, RSR/ECR, FR, ILPR,
// IBRD, FBRD, LCR_H, CR, IFLS, IMSC, RIS, MIS, ICR, DMACR and the peripheral and PrimeCell ID
// registers Linux's amba bus reads when it probes the device (0xFE0-0xFFC: 0x00141011,
// 0xB105F00D). A write to DR sends the character at once (no baud-rate timing) to the output sink
// and raises the transmit interrupt (TXRIS) as QEMU's model does; the transmit FIFO never fills,
// so FR reads TXFE and never TXFF or BUSY. Input is optional: receive() puts a character into the
// receive FIFO (16 deep with LCR_H.FEN, else 1), which raises RXRIS; reading DR takes it out.
// `irq` is RIS & IMSC != 0.
//
// Bad accesses (no register at the offset, a write to a read-only one) read as zero or are
// ignored, counted and warned (core::Peripheral), as QEMU does; they never stop the simulator.
// Register accesses take no simulated time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <systemc>

#include "models/core/peripheral.h"
#include "models/uart/pl011_regs.h"

namespace vtoe::uart {

constexpr std::uint64_t kPl011Size = reg::kUartSize;

class Pl011 : public core::Peripheral {
 public:
  Socket in;
  sc_core::sc_out<bool> irq;

  SC_HAS_PROCESS(Pl011);
  // `output` receives every character written to DR (the platform sends it to standard output).
  Pl011(const sc_core::sc_module_name& name, std::function<void(char)> output);

  // A character arrives on the serial line (dropped, with the overrun bit, when the FIFO is full).
  void receive(char c);
  // A terminal on the serial line types `text`: a character every `char_time` (86.8 us at
  // 115200 baud, 8N1), each held back while the receive FIFO is full (flow control: nothing
  // is lost). During the simulation.
  void type(const std::string& text, sc_core::sc_time char_time);

  // Register access as a 32-bit bus access at `offset` (tests and tools).
  std::uint32_t read(std::uint32_t offset);
  void write(std::uint32_t offset, std::uint32_t value);
  std::uint32_t raw_interrupts() const { return ris_; }
  std::uint64_t transmitted() const { return tx_count_; }

 private:
  void reset_state() override;
  void update();  // RIS/FR changed: drive `irq` (one delta later, from drive_irq)
  void drive_irq();
  void type_next();  // SC_METHOD: the next typed character, when the FIFO has room
  unsigned fifo_depth() const;
  std::uint32_t flags() const;

  std::function<void(char)> output_;
  std::deque<std::uint8_t> rx_;
  std::uint32_t ris_ = 0;
  std::uint64_t tx_count_ = 0;
  core::RegisterBank regs_;
  core::Reg<std::uint32_t> dr_, rsr_, fr_, ilpr_, ibrd_, fbrd_, lcr_h_, cr_, ifls_, imsc_, ris_reg_,
      mis_, icr_, dmacr_, periph_id_, pcell_id_;
  sc_core::sc_event changed_;
  std::deque<char> typed_;
  sc_core::sc_time char_time_;
  sc_core::sc_event type_event_;
  core::Counter& chars_out_;
  core::Counter& chars_in_;
};

}  // namespace vtoe::uart
