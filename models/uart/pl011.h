// ARM PrimeCell PL011 UART (as QEMU's virt machine has at 0x0900_0000, SPI 1 = ID 33), the
// console of the system platform.
//
// Registers (PL011 TRM, 3.2): DR, RSR/ECR, FR, ILPR, IBRD, FBRD, LCR_H, CR, IFLS, IMSC, RIS,
// MIS, ICR, DMACR and the peripheral and PrimeCell ID registers Linux's amba bus reads when it
// probes the device (0xFE0-0xFFC: 0x00141011, 0xB105F00D). A write to DR sends the character at
// once (no baud-rate timing) to the output sink and raises the transmit interrupt (TXRIS) as
// QEMU's model does; the transmit FIFO never fills, so FR reads TXFE and never TXFF or BUSY.
// Input is optional: receive() puts a character into the receive FIFO (16 deep with LCR_H.FEN,
// else 1), which raises RXRIS; reading DR takes it out. `irq` is RIS & IMSC != 0.
//
// Bad accesses (no register at the offset, a write to a read-only one) read as zero or are
// ignored, counted and logged with the offset, as QEMU does; they never stop the simulator.
// Register accesses take no simulated time.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <systemc>
#include <tlm>

#include "models/core/module.h"

namespace vtoe::uart {

constexpr std::uint64_t kPl011Size = 0x1000;

class Pl011 : public core::Module {
 public:
  tlm_utils::simple_target_socket<Pl011> in;
  sc_core::sc_out<bool> irq;

  SC_HAS_PROCESS(Pl011);
  // `output` receives every character written to DR (the platform sends it to standard output).
  Pl011(const sc_core::sc_module_name& name, std::function<void(char)> output);

  // A character arrives on the serial line (dropped, with the overrun bit, when the FIFO is full).
  void receive(char c);

  std::uint32_t read(std::uint32_t offset);
  void write(std::uint32_t offset, std::uint32_t value);
  std::uint32_t raw_interrupts() const { return ris_; }
  std::uint64_t transmitted() const { return tx_count_; }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  void update();  // RIS/FR changed: drive `irq` (one delta later, from drive_irq)
  void drive_irq();
  unsigned fifo_depth() const;

  std::function<void(char)> output_;
  std::deque<std::uint8_t> rx_;
  std::uint32_t ris_ = 0, imsc_ = 0, rsr_ = 0;
  std::uint32_t ilpr_ = 0, ibrd_ = 0, fbrd_ = 0, lcr_h_ = 0, cr_ = 0x300, ifls_ = 0x12, dmacr_ = 0;
  std::uint64_t tx_count_ = 0;
  sc_core::sc_event changed_;
  core::Counter& chars_out_;
  core::Counter& chars_in_;
  core::Counter& bad_accesses_;
};

}  // namespace vtoe::uart
