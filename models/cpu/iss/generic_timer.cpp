#include "models/cpu/iss/generic_timer.h"

namespace vtoe::cpu::iss {

const char* to_string(TimerKind k) {
  switch (k) {
    case TimerKind::Physical:
      return "physical";
    case TimerKind::Virtual:
      return "virtual";
    default:
      return "hyp";
  }
}

void GenericTimer::reset() { *this = GenericTimer(); }

uint32_t GenericTimer::ctl(TimerKind k, uint64_t physical) const {
  uint32_t v = ctl_[idx(k)];
  if ((v & kEnable) && count(k, physical) >= cval_[idx(k)]) v |= kIstatus;
  return v;
}

bool GenericTimer::output(TimerKind k, uint64_t physical) const {
  return (ctl(k, physical) & (kEnable | kImask | kIstatus)) == (kEnable | kIstatus);
}

std::optional<uint64_t> GenericTimer::next_deadline(uint64_t physical) const {
  std::optional<uint64_t> next;
  for (TimerKind k : {TimerKind::Physical, TimerKind::Virtual, TimerKind::Hyp}) {
    uint32_t c = ctl_[idx(k)];
    if ((c & (kEnable | kImask)) != kEnable) continue;
    if (count(k, physical) >= cval_[idx(k)]) continue;  // already firing
    // The physical count at which the timer's own count reaches CVAL.
    uint64_t at = k == TimerKind::Virtual ? cval_[idx(k)] + cntvoff : cval_[idx(k)];
    if (!next || at < *next) next = at;
  }
  return next;
}

}  // namespace vtoe::cpu::iss
