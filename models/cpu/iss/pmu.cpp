#include "models/cpu/iss/pmu.h"

namespace vtoe::cpu::iss {

namespace {
// PMXEVTYPER: the filter bits P, U, NSK, NSU, NSH, M, MT and the event number; the cycle
// counter's filter has no event (QEMU 7.2's PMXEVTYPER_MASK and PMCCFILTR_EL0).
constexpr uint32_t kTypeMask = 0xfe00ffff, kCycleFilterMask = 0xfc000000;
constexpr uint32_t kFilterP = 1u << 31, kFilterU = 1u << 30, kFilterNsh = 1u << 27;
}  // namespace

uint64_t Pmu::source(uint32_t event, const Context& c) {
  switch (event) {
    case 0x08:
      return c.instructions;
    case 0x11:
      return c.cycles;
    default:
      return 0;  // SW_INCR counts PMSWINC writes only; the stall events never count
  }
}

// QEMU 7.2's pmu_counter_enabled, for a core in non-secure state without EL3.
bool Pmu::counting(int n, const Context& c) const {
  const uint32_t hpmn = c.has_hyp ? c.hdcr & kHdcrHpmn : 0;
  const bool below_hpmn = !c.has_hyp || static_cast<uint32_t>(n) < hpmn || n == kCycle;
  const bool e = below_hpmn ? pmcr_ & kE : c.hdcr & kHdcrHpme;
  if (!e || !(cnten_ & (1u << n))) return false;
  const uint32_t filter = n == kCycle ? ccfiltr_ : evtyper_[n];
  if (n != kCycle && !supported(filter & 0xffff)) return false;
  if (c.hyp) return c.has_hyp && (filter & kFilterNsh);  // Hyp mode counts only with NSH
  return !(filter & (c.pl0 ? kFilterU : kFilterP));
}

void Pmu::sync_cycles(const Context& c) {
  if (counting(kCycle, c)) {
    const uint64_t eff = pmcr_ & kD ? c.cycles / 64 : c.cycles;  // D: one count per 64 cycles
    const uint64_t v = eff - ccnt_delta_;
    const uint64_t top = pmcr_ & kLc ? 1ull << 63 : 1ull << 31;
    if (ccnt_ & ~v & top) ovs_ |= 1u << kCycle;
    ccnt_ = v;
  }
  ccnt_delta_ = c.cycles;
}

void Pmu::rebase_cycles(const Context& c) {
  if (counting(kCycle, c)) {
    const uint64_t prev = pmcr_ & kD ? ccnt_delta_ / 64 : ccnt_delta_;
    ccnt_delta_ = prev - ccnt_;
  }
}

void Pmu::sync_event(int n, const Context& c) {
  const uint32_t event = evtyper_[n] & 0xffff;
  const uint64_t count = supported(event) ? source(event, c) : 0;
  if (counting(n, c)) {
    const auto v = static_cast<uint32_t>(count - evcnt_delta_[n]);
    if (evcnt_[n] & ~v & 0x80000000u) ovs_ |= 1u << n;
    evcnt_[n] = v;
  }
  evcnt_delta_[n] = count;
}

void Pmu::rebase_event(int n, const Context& c) {
  if (counting(n, c)) evcnt_delta_[n] -= evcnt_[n];
}

void Pmu::sync(const Context& c) {
  sync_cycles(c);
  for (int n = 0; n < kCounters; ++n) sync_event(n, c);
}

void Pmu::rebase(const Context& c) {
  rebase_cycles(c);
  for (int n = 0; n < kCounters; ++n) rebase_event(n, c);
}

void Pmu::set_pmcr(uint32_t v, const Context& c) {
  sync(c);
  if (v & kC) ccnt_ = 0;
  if (v & kP) {
    for (uint32_t& e : evcnt_) e = 0;
  }
  // C and P are actions (read as zero); N, IDCODE and IMP are read-only.
  constexpr uint32_t kWritable = kLc | kDp | kX | kD | kE;
  pmcr_ = (pmcr_ & ~kWritable) | (v & kWritable);
  rebase(c);
}

void Pmu::set_cnten(uint32_t v, bool set, const Context& c) {
  sync(c);
  cnten_ = set ? cnten_ | (v & mask()) : cnten_ & ~v;
  rebase(c);
}

void Pmu::swinc(uint32_t v, const Context& c) {
  for (int n = 0; n < kCounters; ++n) {
    if (!(v & (1u << n)) || !counting(n, c) || (evtyper_[n] & 0xffff) != 0) continue;
    sync_event(n, c);
    const uint32_t next = evcnt_[n] + 1;
    if (evcnt_[n] & ~next & 0x80000000u) ovs_ |= 1u << n;
    evcnt_[n] = next;
    rebase_event(n, c);
  }
}

uint64_t Pmu::ccnt64(const Context& c) {
  sync_cycles(c);
  const uint64_t v = ccnt_;
  rebase_cycles(c);
  return v;
}

void Pmu::set_ccnt64(uint64_t v, const Context& c) {
  sync_cycles(c);
  ccnt_ = v;
  rebase_cycles(c);
}

uint32_t Pmu::ccnt(const Context& c) { return static_cast<uint32_t>(ccnt64(c)); }

void Pmu::set_ccnt(uint32_t v, const Context& c) {
  // The 32-bit view writes the low half and keeps the high one (PMCR.LC counts in 64 bits).
  sync_cycles(c);
  ccnt_ = (ccnt_ & ~0xffffffffull) | v;
  rebase_cycles(c);
}

uint32_t Pmu::evtyper(uint32_t n) const {
  if (n == kCycle) return ccfiltr_;
  return n < kCounters ? evtyper_[n] : 0;
}

void Pmu::set_evtyper(uint32_t n, uint32_t v, const Context& c) {
  if (n == kCycle) {
    sync_cycles(c);
    ccfiltr_ = v & kCycleFilterMask;
    rebase_cycles(c);
    return;
  }
  if (n >= kCounters) return;
  sync_event(n, c);
  const uint32_t event = v & 0xffff;
  // A new event counts from its source's current total.
  if (event != (evtyper_[n] & 0xffff)) evcnt_delta_[n] = supported(event) ? source(event, c) : 0;
  evtyper_[n] = v & kTypeMask;
  rebase_event(n, c);
}

uint32_t Pmu::evcnt(uint32_t n, const Context& c) {
  if (n >= kCounters) return 0;
  sync_event(static_cast<int>(n), c);
  const uint32_t v = evcnt_[n];
  rebase_event(static_cast<int>(n), c);
  return v;
}

void Pmu::set_evcnt(uint32_t n, uint32_t v, const Context& c) {
  if (n >= kCounters) return;
  sync_event(static_cast<int>(n), c);
  evcnt_[n] = v;
  rebase_event(static_cast<int>(n), c);
}

}  // namespace vtoe::cpu::iss
