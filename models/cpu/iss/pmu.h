// The Performance Monitors of one core (ARM ARM C12, PMUv2), as QEMU 7.2's cortex-a15 has them:
// PMCR (N = 6 event counters, implementer 'A', ID 0x0f), the cycle counter PMCCNTR with its filter
// (PMXEVTYPER with PMSELR = 31), six event counters behind PMSELR/PMXEVTYPER/PMXEVCNTR (and the
// ARMv8 names PMEVCNTRn/PMEVTYPERn, which QEMU defines on every core), PMCNTENSET/CLR, PMOVSR,
// PMSWINC, PMUSERENR and PMINTENSET/CLR. The overflow interrupt is the level
// PMCR.E && (PMINTEN & PMOVSR), a PPI (ID 23 on QEMU virt).
//
// Architecturally CP15 registers, so plain data in the core's state (as GenericTimer). The counts
// are not the PMU's: each operation is given the core's running totals (cycles, instructions
// retired) and the mode it runs in, and a counter that counts holds its value as an offset from
// them, as QEMU does (pmccntr_op_start/finish): `sync` brings the values up to date before a
// change of what counts (a register write, a mode change, an HDCR write), `rebase` after it.
// Events: SW_INCR (0x00), INST_RETIRED (0x08; QEMU counts it with -icount), CPU_CYCLES (0x11),
// STALL_FRONTEND and STALL_BACKEND (0x23, 0x24: never count). A counter set to another event
// does not count.
#pragma once

#include <cstdint>

namespace vtoe::cpu::iss {

class Pmu {
 public:
  static constexpr int kCounters = 6;
  static constexpr int kCycle = 31;  // the cycle counter's index in the bit masks and PMSELR
  // PMCR bits.
  static constexpr uint32_t kE = 1, kP = 2, kC = 4, kD = 8, kX = 16, kDp = 32, kLc = 64;
  static constexpr uint32_t kPmcrReset = 0x410f3000;  // IMP 'A', IDCODE 0x0f, N = 6
  // HDCR fields that decide what counts.
  static constexpr uint32_t kHdcrHpmn = 0x1f, kHdcrTpmcr = 1u << 5, kHdcrTpm = 1u << 6,
                            kHdcrHpme = 1u << 7;

  // What the counters count from and who is running.
  struct Context {
    uint64_t cycles;
    uint64_t instructions;
    bool pl0;
    bool hyp;
    bool has_hyp;  // the Virtualization Extensions (HDCR exists)
    uint32_t hdcr;
  };

  void reset() { *this = Pmu(); }

  // Anything could count (a mode change or an HDCR write needs a sync/rebase pair only then).
  bool active(uint32_t hdcr) const { return (pmcr_ & kE) || (hdcr & kHdcrHpme); }
  void sync(const Context& c);
  void rebase(const Context& c);

  // The registers. Reads of counters sync first; writes are wrapped in sync/rebase.
  uint32_t pmcr() const { return pmcr_; }
  void set_pmcr(uint32_t v, const Context& c);
  uint32_t cnten() const { return cnten_; }
  void set_cnten(uint32_t v, bool set, const Context& c);
  uint32_t ovs() const { return ovs_; }
  void clear_ovs(uint32_t v) { ovs_ &= ~(v & mask()); }
  void swinc(uint32_t v, const Context& c);
  uint32_t selr() const { return selr_; }
  void set_selr(uint32_t v) { selr_ = v & 0x1f; }
  uint32_t ccnt(const Context& c);
  void set_ccnt(uint32_t v, const Context& c);
  uint64_t ccnt64(const Context& c);
  void set_ccnt64(uint64_t v, const Context& c);
  // PMXEVTYPER/PMEVTYPERn and PMXEVCNTR/PMEVCNTRn by counter index (31: the cycle counter's
  // filter for the type, RAZ/WI for the count; beyond N: RAZ/WI, QEMU's choice).
  uint32_t evtyper(uint32_t n) const;
  void set_evtyper(uint32_t n, uint32_t v, const Context& c);
  uint32_t evcnt(uint32_t n, const Context& c);
  void set_evcnt(uint32_t n, uint32_t v, const Context& c);
  uint32_t userenr() const { return userenr_; }
  void set_userenr(uint32_t v) { userenr_ = v & 1; }
  uint32_t inten() const { return inten_; }
  void set_inten(uint32_t v, bool set) { inten_ = set ? inten_ | (v & mask()) : inten_ & ~v; }

  // The overflow interrupt's level.
  bool irq() const { return (pmcr_ & kE) && (inten_ & ovs_); }

 private:
  uint32_t mask() const { return (1u << kCycle) | ((1u << kCounters) - 1); }
  bool counting(int n, const Context& c) const;
  static bool supported(uint32_t event) {
    return event == 0x00 || event == 0x08 || event == 0x11 || event == 0x23 || event == 0x24;
  }
  static uint64_t source(uint32_t event, const Context& c);
  void sync_cycles(const Context& c);
  void rebase_cycles(const Context& c);
  void sync_event(int n, const Context& c);
  void rebase_event(int n, const Context& c);

  uint32_t pmcr_ = kPmcrReset;
  uint32_t cnten_ = 0, ovs_ = 0, inten_ = 0, selr_ = 0, userenr_ = 0, ccfiltr_ = 0;
  uint64_t ccnt_ = 0, ccnt_delta_ = 0;
  uint32_t evcnt_[kCounters] = {}, evtyper_[kCounters] = {};
  uint64_t evcnt_delta_[kCounters] = {};
};

}  // namespace vtoe::cpu::iss
