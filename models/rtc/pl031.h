// ARM PrimeCell PL031 real-time clock (as QEMU's virt machine has at 0x0901_0000, SPI 2 = ID 34).
//
// Registers (docs/registers.md, from pl031.regs.yaml; PL031 TRM, 3.2): DR, MR, LR, CR, IMSC, RIS,
// MIS, ICR and the peripheral and PrimeCell ID registers Linux's amba bus and kvm-unit-tests'
// pl031 test read (0x00141031, 0xB105F00D). The count is seconds of simulated time plus an offset:
// DR = start + floor(time) until LR sets it. The match interrupt (RIS bit 0) rises when the
// count reaches MR, as QEMU's does: at once when they are equal on a write of MR or LR, else at
// the second the count gets there (counts wrap). CR reads 1 and ignores writes (QEMU's). `irq`
// is RIS & IMSC.
//
// The start is a parameter (0 by default) rather than the host's clock, so that runs stay
// deterministic. Bad accesses read as zero or are ignored, counted and warned (core::Peripheral).
#pragma once

#include <cstdint>
#include <systemc>

#include "models/core/peripheral.h"
#include "models/rtc/pl031_regs.h"

namespace vtoe::rtc {

constexpr std::uint64_t kPl031Size = reg::kRtcSize;

class Pl031 : public core::Peripheral {
 public:
  Socket in;
  sc_core::sc_out<bool> irq;

  SC_HAS_PROCESS(Pl031);
  // `start`: the count at simulated time zero (seconds).
  Pl031(const sc_core::sc_module_name& name, std::uint32_t start = 0);

  // Register access as a 32-bit bus access at `offset` (tests and tools).
  std::uint32_t read(std::uint32_t offset);
  void write(std::uint32_t offset, std::uint32_t value);
  std::uint32_t count() const;

 private:
  void reset_state() override;
  void set_alarm();  // MR or the count changed: the match now, or its time
  void match();      // SC_METHOD: the count reached MR
  void update();     // RIS/IMSC changed: drive `irq` (one delta later, from drive_irq)
  void drive_irq();

  std::uint32_t start_;
  std::uint32_t offset_;  // DR = offset_ + whole seconds of simulated time
  std::uint32_t ris_ = 0;
  core::RegisterBank regs_;
  core::Reg<std::uint32_t> dr_, mr_, lr_, cr_, imsc_, ris_reg_, mis_, icr_, periph_id_, pcell_id_;
  sc_core::sc_event changed_, match_event_;
  core::Counter& matches_;
};

}  // namespace vtoe::rtc
