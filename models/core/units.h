// Physical quantities with units: parsing from text ("10Gbps", "2.5ms", "128MiB") and formatting
// back to a canonical string. Used by the scenario schema, `vtoe keys` and the results writer.
//
// Canonical storage:
//   Time       picoseconds, uint64_t (exact for decimal inputs: "2.5ms" == 2'500'000'000 ps)
//   Frequency  hertz, double (integral values are parsed exactly)
//   Bandwidth  bit/s, double (integral values are parsed exactly)
//   Bytes      bytes, uint64_t
//   Ratio      plain fraction, double ("1%" == 0.01)
//
// Decimal inputs are parsed digit by digit into integers; no value goes through a double unless the
// quantity itself is a double and the result is not a whole number of base units.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vtoe::core {

enum class Unit { None, Time, Frequency, Bandwidth, Bytes, Ratio };

/// Thrown by every parse_* function. what() is one line, e.g.
/// `expected a time such as 30ms, 2.5us or 1s, got "30 parsecs"`.
class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// What a number without a unit means.
enum class BareNumber {
  Reject,    ///< always an error
  ZeroOnly,  ///< only "0" is accepted (zero is zero in every unit)
  BaseUnit,  ///< the number is in the base unit (ps, Hz, bit/s, B)
};

/// Picoseconds per second, and friends, for callers converting canonical values.
inline constexpr std::uint64_t kPsPerNs = 1'000;
inline constexpr std::uint64_t kPsPerUs = 1'000'000;
inline constexpr std::uint64_t kPsPerMs = 1'000'000'000;
inline constexpr std::uint64_t kPsPerS = 1'000'000'000'000;

/// "30ms", "2.5us", "100ns", "1s", "7ps" (also "µs") -> picoseconds.
/// Errors: no/unknown unit, negative, finer than 1 ps, larger than ~213 days.
std::uint64_t parse_time(std::string_view text, BareNumber bare = BareNumber::ZeroOnly);

/// "2GHz", "400MHz", "32.768kHz", "50Hz" -> hertz.
double parse_frequency(std::string_view text, BareNumber bare = BareNumber::ZeroOnly);

/// "10Gbps", "1Gbit/s", "6.4Gbps", "100Mbps", "800MB/s" (bytes per second, x8) -> bit/s.
double parse_bandwidth(std::string_view text, BareNumber bare = BareNumber::ZeroOnly);

/// "1500B", "4kB" (SI, 1000), "64KiB", "128MiB" (binary, 1024), "1500" (bare = bytes) -> bytes.
std::uint64_t parse_bytes(std::string_view text, BareNumber bare = BareNumber::BaseUnit);

/// "0.01", "1%", "0" -> fraction. Negative values are rejected.
double parse_ratio(std::string_view text);

/// Canonical text: the largest unit in which the value is at least 1, exact decimal digits.
/// format_time(30'000'000'000) == "30ms", format_time(2'500'000'000) == "2.5ms", 0 -> "0s".
std::string format_time(std::uint64_t ps);
/// 2e9 -> "2GHz", 4e8 -> "400MHz", 0 -> "0Hz".
std::string format_frequency(double hz);
/// 1e10 -> "10Gbps", 6.4e9 -> "6.4Gbps", 0 -> "0bps".
std::string format_bandwidth(double bps);
/// Binary units when exact, else bytes: 134217728 -> "128MiB", 1500 -> "1500B".
std::string format_bytes(std::uint64_t bytes);
/// Shortest text that parses back to the same double: 0.01 -> "0.01".
std::string format_ratio(double ratio);

/// "time", "frequency", "bandwidth", "bytes", "ratio", "" for None.
const char* unit_name(Unit unit);
/// The base unit symbol: "ps", "Hz", "bit/s", "B", "" (ratio and None).
const char* base_unit_symbol(Unit unit);
/// Examples for messages and docs, e.g. "30ms, 2.5us or 1s".
const char* unit_examples(Unit unit);
/// Every accepted suffix, comma separated, e.g. "s, ms, us, ns, ps".
std::string accepted_suffixes(Unit unit);

}  // namespace vtoe::core
