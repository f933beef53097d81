// The ARMv7 generic timer of one core (ARM ARM B8): the physical, virtual and Hyp timers with
// their CTL/CVAL/TVAL registers, CNTVOFF, CNTFRQ, CNTKCTL and CNTHCTL.
//
// Architecturally these are CP15 registers, so they live in the core (the CP15 table reads and
// writes them, with the access checks and Hyp traps of the other registers), not in a SystemC
// device. The count itself is not the core's: every read is given the current physical count
// (ArmCore's counter source: simulated time x CNTFRQ from the SystemC wrapper), and the outputs
// and the next deadline are computed from it, so that the wrapper can schedule one wake-up and
// drive the GIC's PPIs (26 Hyp, 27 virtual, 30 physical non-secure) without polling.
#pragma once

#include <cstdint>
#include <optional>

namespace vtoe::cpu::iss {

enum class TimerKind : uint8_t { Physical, Virtual, Hyp };
const char* to_string(TimerKind k);

class GenericTimer {
 public:
  static constexpr uint32_t kDefaultFrequency = 62500000;  // QEMU virt's 62.5 MHz
  // CNTx_CTL bits.
  static constexpr uint32_t kEnable = 1, kImask = 2, kIstatus = 4;

  void reset();

  // Counts as the timer sees them: physical = `count`, virtual = count - CNTVOFF.
  uint64_t count(TimerKind k, uint64_t physical) const {
    return k == TimerKind::Virtual ? physical - cntvoff : physical;
  }
  uint32_t ctl(TimerKind k, uint64_t physical) const;
  void set_ctl(TimerKind k, uint32_t v) { ctl_[idx(k)] = v & (kEnable | kImask); }
  uint64_t cval(TimerKind k) const { return cval_[idx(k)]; }
  void set_cval(TimerKind k, uint64_t v) { cval_[idx(k)] = v; }
  // TVAL: the signed 32-bit distance from the count to CVAL.
  uint32_t tval(TimerKind k, uint64_t physical) const {
    return static_cast<uint32_t>(cval_[idx(k)] - count(k, physical));
  }
  void set_tval(TimerKind k, uint32_t v, uint64_t physical) {
    cval_[idx(k)] = count(k, physical) + static_cast<uint64_t>(int64_t{static_cast<int32_t>(v)});
  }
  // The interrupt output: enabled, condition met (count >= CVAL), not masked.
  bool output(TimerKind k, uint64_t physical) const;
  // The physical count at which the next output rises, among the enabled and unmasked timers
  // whose condition is not met yet.
  std::optional<uint64_t> next_deadline(uint64_t physical) const;

  uint32_t cntfrq = kDefaultFrequency;
  uint32_t cntkctl = 0;  // PL0 access: PL0PCTEN 0, PL0VCTEN 1, PL0VTEN 8, PL0PTEN 9
  // PL1 access to the physical counter (PL1PCTEN 0) and timer (PL1PCEN 1); both allowed at reset,
  // as in QEMU 7.2 (the value is UNKNOWN at reset).
  uint32_t cnthctl = 3;
  uint64_t cntvoff = 0;

 private:
  static int idx(TimerKind k) { return static_cast<int>(k); }
  uint32_t ctl_[3] = {};
  uint64_t cval_[3] = {};
};

}  // namespace vtoe::cpu::iss
