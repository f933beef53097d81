// Base of every vtoe model: a SystemC module that owns a logger and a statistics group named after
// its hierarchical name.
#pragma once

#include <cstdint>
#include <systemc>

#include "models/core/logger.h"
#include "models/core/stats.h"

namespace vtoe::core {

class Module : public sc_core::sc_module {
 public:
  explicit Module(const sc_core::sc_module_name& name)
      : sc_core::sc_module(name), log_(this->name()), stats_(this->name()) {}

  Logger& logger() { return log_; }
  StatGroup& stats() { return stats_; }

 protected:
  Logger log_;
  StatGroup stats_;
};

// Simulated time in picoseconds (the kernel's resolution), the unit every model computes in.
using TimePs = std::uint64_t;

inline TimePs now_ps() { return sc_core::sc_time_stamp().value(); }
inline sc_core::sc_time ps(TimePs v) { return sc_core::sc_time::from_value(v); }

// Picoseconds to transfer `bytes` at `bits_per_second`, rounded up so that a link is never faster
// than its rate.
inline TimePs transfer_time_ps(std::uint64_t bytes, double bits_per_second) {
  const double t = static_cast<double>(bytes) * 8.0 * 1e12 / bits_per_second;
  const auto whole = static_cast<TimePs>(t);
  return (static_cast<double>(whole) < t) ? whole + 1 : whole;
}

// Picoseconds for `cycles` clock cycles at `hz`, rounded up.
inline TimePs cycles_to_ps(double cycles, double hz) {
  const double t = cycles * 1e12 / hz;
  const auto whole = static_cast<TimePs>(t);
  return (static_cast<double>(whole) < t) ? whole + 1 : whole;
}

}  // namespace vtoe::core
