// Simulated time for vtoe's models: every model computes in whole picoseconds (TimePs) and converts
// at the SystemC boundary with now_ps(), ps() and to_ps(). The conversions honour the kernel's
// time resolution, so the models keep their timing when linked into a platform that sets a coarser
// resolution (sc_set_time_resolution(1, SC_NS) rounds each delay to whole nanoseconds). A
// resolution finer than 1 ps, or not a whole number of picoseconds, is refused at elaboration.
#pragma once

#include <cstdint>
#include <systemc>

namespace vtoe::core {

using TimePs = std::uint64_t;

namespace detail {
// Picoseconds per kernel time unit; 1 (SystemC's default resolution) keeps the fast path exact.
inline TimePs g_resolution_ps = 1;
// The simulation context, looked up once: sc_time_stamp() is two calls into the kernel, and the
// models read the time hundreds of thousands of times per simulated millisecond.
inline sc_core::sc_simcontext* g_simcontext = nullptr;
inline const sc_core::sc_time& time_stamp() {
  if (g_simcontext == nullptr) g_simcontext = sc_core::sc_get_curr_simcontext();
  return g_simcontext->time_stamp();
}
}  // namespace detail

// Reads and checks the kernel's time resolution; called by every core::Module's constructor.
// Throws std::runtime_error naming the resolution when the models cannot honour it.
void check_time_resolution();
inline TimePs resolution_ps() { return detail::g_resolution_ps; }

inline TimePs to_ps(const sc_core::sc_time& t) {
  const TimePs r = detail::g_resolution_ps;
  return r == 1 ? t.value() : t.value() * r;
}
inline TimePs now_ps() { return to_ps(detail::time_stamp()); }
// Picoseconds to an sc_time, rounded to the nearest kernel time unit.
inline sc_core::sc_time ps(TimePs v) {
  const TimePs r = detail::g_resolution_ps;
  return sc_core::sc_time::from_value(r == 1 ? v : (v + r / 2) / r);
}

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
