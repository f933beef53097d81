#include "models/core/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace vtoe::core {
namespace {

// A unit suffix: value in base units = number * factor * 10^pow10. Every factor is a power of two,
// so multiplying a double by it is exact.
struct Suffix {
  std::string_view text;
  std::uint64_t factor;
  int pow10;
};

constexpr std::uint64_t kKi = 1024;
constexpr std::uint64_t kMi = kKi * 1024;
constexpr std::uint64_t kGi = kMi * 1024;
constexpr std::uint64_t kTi = kGi * 1024;

// The first entry of each table is the one listed in messages; aliases follow.
constexpr std::array<Suffix, 6> kTimeSuffixes{{
    {"s", 1, 12},
    {"ms", 1, 9},
    {"us", 1, 6},
    {"ns", 1, 3},
    {"ps", 1, 0},
    {"\xC2\xB5s", 1, 6},  // "µs"
}};
constexpr std::array<Suffix, 6> kFrequencySuffixes{{
    {"Hz", 1, 0},
    {"kHz", 1, 3},
    {"MHz", 1, 6},
    {"GHz", 1, 9},
    {"THz", 1, 12},
    {"KHz", 1, 3},
}};
constexpr std::array<Suffix, 22> kBandwidthSuffixes{{
    {"bps", 1, 0},         {"kbps", 1, 3},        {"Mbps", 1, 6},        {"Gbps", 1, 9},
    {"Tbps", 1, 12},       {"bit/s", 1, 0},       {"kbit/s", 1, 3},      {"Mbit/s", 1, 6},
    {"Gbit/s", 1, 9},      {"Tbit/s", 1, 12},     {"B/s", 8, 0},         {"kB/s", 8, 3},
    {"MB/s", 8, 6},        {"GB/s", 8, 9},        {"TB/s", 8, 12},       {"KiB/s", 8 * kKi, 0},
    {"MiB/s", 8 * kMi, 0}, {"GiB/s", 8 * kGi, 0}, {"TiB/s", 8 * kTi, 0}, {"Kbps", 1, 3},
    {"Kbit/s", 1, 3},      {"b/s", 1, 0},
}};
constexpr std::array<Suffix, 9> kBytesSuffixes{{
    {"B", 1, 0},
    {"kB", 1, 3},
    {"MB", 1, 6},
    {"GB", 1, 9},
    {"TB", 1, 12},
    {"KiB", kKi, 0},
    {"MiB", kMi, 0},
    {"GiB", kGi, 0},
    {"TiB", kTi, 0},
}};
constexpr std::array<Suffix, 1> kRatioSuffixes{{{"%", 1, -2}}};

template <std::size_t N>
std::string join_suffixes(const std::array<Suffix, N>& table) {
  std::string out;
  for (const Suffix& s : table) {
    if (!out.empty()) out += ", ";
    out += s.text;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return __builtin_mul_overflow(a, b, &out);
}

// A decimal number as mantissa * 10^exp10, read digit by digit (no floating point).
struct Decimal {
  std::uint64_t mantissa = 0;
  int exp10 = 0;
  bool negative = false;
};

// Splits "2.5ms" into number "2.5" and suffix "ms". Returns false if there is no number at the
// start.
bool split_number(std::string_view text, std::string_view& number, std::string_view& suffix) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::size_t digits = 0;
  while (i < text.size() && is_digit(text[i])) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  // An exponent only if 'e' is followed by an optional sign and a digit ("5e3Hz", not "5EB").
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    if (j < text.size() && is_digit(text[j])) {
      while (j < text.size() && is_digit(text[j])) ++j;
      i = j;
    }
  }
  number = text.substr(0, i);
  suffix = trim(text.substr(i));
  return true;
}

enum class DecimalStatus { Ok, TooManyDigits, BadExponent };

DecimalStatus parse_decimal(std::string_view number, Decimal& out) {
  out = Decimal{};
  std::size_t i = 0;
  if (number[i] == '+' || number[i] == '-') out.negative = number[i++] == '-';
  int pending_zeros = 0;  // zeros not yet multiplied into the mantissa
  bool fraction = false;
  for (; i < number.size(); ++i) {
    const char c = number[i];
    if (c == '.') {
      fraction = true;
      continue;
    }
    if (!is_digit(c)) break;
    if (fraction) --out.exp10;
    const int d = c - '0';
    if (d == 0) {
      ++pending_zeros;
      continue;
    }
    if (out.mantissa == 0) {
      out.mantissa = static_cast<std::uint64_t>(d);
    } else {
      for (int z = 0; z <= pending_zeros; ++z) {
        if (mul_overflows(out.mantissa, 10, out.mantissa)) return DecimalStatus::TooManyDigits;
      }
      if (__builtin_add_overflow(out.mantissa, static_cast<std::uint64_t>(d), &out.mantissa)) {
        return DecimalStatus::TooManyDigits;
      }
    }
    pending_zeros = 0;
  }
  out.exp10 += pending_zeros;  // trailing zeros: of the integer part, or cancelling fraction digits
  if (i < number.size()) {     // exponent
    int e = 0;
    std::string_view rest = number.substr(i + 1);
    if (!rest.empty() && rest[0] == '+') rest.remove_prefix(1);
    auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), e);
    if (ec != std::errc() || p != rest.data() + rest.size() || e > 400 || e < -400) {
      return DecimalStatus::BadExponent;
    }
    out.exp10 += e;
  }
  if (out.mantissa == 0) out.exp10 = 0;
  return DecimalStatus::Ok;
}

enum class IntStatus { Ok, Fractional, Overflow };

// mantissa * factor * 10^pow10 as an exact integer.
IntStatus to_integer(std::uint64_t mantissa, std::uint64_t factor, int pow10, std::uint64_t& out) {
  if (mantissa == 0) {
    out = 0;
    return IntStatus::Ok;
  }
  std::uint64_t v = 0;
  if (mul_overflows(mantissa, factor, v)) return IntStatus::Overflow;
  for (; pow10 > 0; --pow10) {
    if (mul_overflows(v, 10, v)) return IntStatus::Overflow;
  }
  for (; pow10 < 0; ++pow10) {
    if (v % 10 != 0) return IntStatus::Fractional;
    v /= 10;
  }
  out = v;
  return IntStatus::Ok;
}

// mantissa * factor * 10^pow10 as the correctly rounded double (factor is a power of two).
double to_double(std::uint64_t mantissa, std::uint64_t factor, int pow10) {
  const std::string text = std::to_string(mantissa) + "e" + std::to_string(pow10);
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    v = pow10 > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return v * static_cast<double>(factor);
}

struct Quantity {
  Unit unit;
  const char* expected;  // "a time such as 30ms, 2.5us or 1s"
};

[[noreturn]] void fail(const Quantity& q, std::string_view text, const std::string& why) {
  std::string msg = std::string("expected ") + q.expected + ", got \"" + std::string(text) + "\"";
  if (!why.empty()) msg += " (" + why + ")";
  throw UnitError(msg);
}

const char* expected_text(Unit unit) {
  switch (unit) {
    case Unit::Time:
      return "a time such as 30ms, 2.5us or 1s";
    case Unit::Frequency:
      return "a frequency such as 2GHz or 400MHz";
    case Unit::Bandwidth:
      return "a bandwidth such as 10Gbps, 1Gbit/s or 6.4Gbps";
    case Unit::Bytes:
      return "a size such as 1500B, 64KiB or 128MiB";
    case Unit::Ratio:
      return "a ratio such as 0.01 or 1%";
    case Unit::None:
      break;
  }
  return "a number";
}

// Parsed number and the suffix that matched (nullptr for a bare number accepted as base unit).
struct Parsed {
  Decimal dec;
  const Suffix* suffix;
};

template <std::size_t N>
Parsed parse_with(std::string_view raw, Unit unit, const std::array<Suffix, N>& table,
                  BareNumber bare) {
  static constexpr Suffix kBase{"", 1, 0};
  const Quantity q{unit, expected_text(unit)};
  const std::string_view text = trim(raw);
  std::string_view number, suffix;
  if (text.empty()) fail(q, raw, "empty");
  if (!split_number(text, number, suffix)) fail(q, raw, "");
  Parsed p{};
  switch (parse_decimal(number, p.dec)) {
    case DecimalStatus::Ok:
      break;
    case DecimalStatus::TooManyDigits:
      fail(q, raw, "too many significant digits");
    case DecimalStatus::BadExponent:
      fail(q, raw, "bad exponent");
  }
  if (p.dec.negative && p.dec.mantissa != 0) fail(q, raw, "must not be negative");
  if (suffix.empty()) {
    const bool ok =
        bare == BareNumber::BaseUnit || (bare == BareNumber::ZeroOnly && p.dec.mantissa == 0);
    if (!ok) fail(q, raw, "a number needs a unit: " + join_suffixes(table));
    p.suffix = &kBase;
    return p;
  }
  for (const Suffix& s : table) {
    if (s.text == suffix) {
      p.suffix = &s;
      return p;
    }
  }
  if (unit == Unit::Bytes && (suffix == "KB" || suffix == "kiB" || suffix == "kb")) {
    fail(q, raw, "ambiguous unit \"" + std::string(suffix) + "\": use kB (1000) or KiB (1024)");
  }
  fail(q, raw, "unknown unit \"" + std::string(suffix) + "\"; accepted: " + join_suffixes(table));
}

template <std::size_t N>
std::uint64_t parse_integral(std::string_view text, Unit unit, const std::array<Suffix, N>& table,
                             BareNumber bare, const char* resolution) {
  const Parsed p = parse_with(text, unit, table, bare);
  std::uint64_t v = 0;
  switch (to_integer(p.dec.mantissa, p.suffix->factor, p.dec.exp10 + p.suffix->pow10, v)) {
    case IntStatus::Ok:
      return v;
    case IntStatus::Fractional:
      fail({unit, expected_text(unit)}, text,
           std::string("finer than the resolution of ") + resolution);
    case IntStatus::Overflow:
      break;
  }
  fail({unit, expected_text(unit)}, text, "too large");
}

template <std::size_t N>
double parse_real(std::string_view text, Unit unit, const std::array<Suffix, N>& table,
                  BareNumber bare) {
  const Parsed p = parse_with(text, unit, table, bare);
  std::uint64_t v = 0;
  const int pow10 = p.dec.exp10 + p.suffix->pow10;
  if (to_integer(p.dec.mantissa, p.suffix->factor, pow10, v) == IntStatus::Ok) {
    return static_cast<double>(v);
  }
  const double d = to_double(p.dec.mantissa, p.suffix->factor, pow10);
  if (!std::isfinite(d)) fail({unit, expected_text(unit)}, text, "too large");
  return d;
}

// Exact decimal "v / divisor" with trailing zeros trimmed: (2500, 1000) -> "2.5".
std::string exact_decimal(std::uint64_t v, std::uint64_t divisor) {
  std::string out = std::to_string(v / divisor);
  std::uint64_t frac = v % divisor;
  if (frac == 0) return out;
  std::string digits;
  for (std::uint64_t d = divisor / 10; d > 0; d /= 10) {
    digits += static_cast<char>('0' + frac / d);
    frac %= d;
  }
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  return out + "." + digits;
}

struct Scale {
  std::uint64_t divisor;
  const char* suffix;
};

template <std::size_t N>
std::string format_scaled(std::uint64_t v, const std::array<Scale, N>& scales) {
  // scales are ordered largest first; the last one has divisor 1.
  if (v == 0) return std::string("0") + scales.front().suffix;
  for (const Scale& s : scales) {
    if (v >= s.divisor) return exact_decimal(v, s.divisor) + s.suffix;
  }
  return std::to_string(v) + scales.back().suffix;
}

std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Integral doubles in [0, 2^64) are formatted exactly with a scale; others in the base unit.
template <std::size_t N>
std::string format_real(double v, const std::array<Scale, N>& scales) {
  if (v >= 0 && v < 18446744073709551616.0 && std::floor(v) == v) {
    return format_scaled(static_cast<std::uint64_t>(v), scales);
  }
  return shortest(v) + scales.back().suffix;
}

}  // namespace

std::uint64_t parse_time(std::string_view text, BareNumber bare) {
  return parse_integral(text, Unit::Time, kTimeSuffixes, bare, "1ps");
}

double parse_frequency(std::string_view text, BareNumber bare) {
  return parse_real(text, Unit::Frequency, kFrequencySuffixes, bare);
}

double parse_bandwidth(std::string_view text, BareNumber bare) {
  return parse_real(text, Unit::Bandwidth, kBandwidthSuffixes, bare);
}

std::uint64_t parse_bytes(std::string_view text, BareNumber bare) {
  return parse_integral(text, Unit::Bytes, kBytesSuffixes, bare, "1B");
}

double parse_ratio(std::string_view text) {
  return parse_real(text, Unit::Ratio, kRatioSuffixes, BareNumber::BaseUnit);
}

std::string format_time(std::uint64_t ps) {
  static constexpr std::array<Scale, 5> kScales{
      {{kPsPerS, "s"}, {kPsPerMs, "ms"}, {kPsPerUs, "us"}, {kPsPerNs, "ns"}, {1, "ps"}}};
  if (ps == 0) return "0s";
  return format_scaled(ps, kScales);
}

std::string format_frequency(double hz) {
  static constexpr std::array<Scale, 5> kScales{{{1'000'000'000'000, "THz"},
                                                 {1'000'000'000, "GHz"},
                                                 {1'000'000, "MHz"},
                                                 {1'000, "kHz"},
                                                 {1, "Hz"}}};
  if (hz == 0) return "0Hz";
  return format_real(hz, kScales);
}

std::string format_bandwidth(double bps) {
  static constexpr std::array<Scale, 5> kScales{{{1'000'000'000'000, "Tbps"},
                                                 {1'000'000'000, "Gbps"},
                                                 {1'000'000, "Mbps"},
                                                 {1'000, "kbps"},
                                                 {1, "bps"}}};
  if (bps == 0) return "0bps";
  return format_real(bps, kScales);
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<Scale, 4> kScales{
      {{kTi, "TiB"}, {kGi, "GiB"}, {kMi, "MiB"}, {kKi, "KiB"}}};
  for (const Scale& s : kScales) {
    if (bytes >= s.divisor && bytes % s.divisor == 0)
      return std::to_string(bytes / s.divisor) + s.suffix;
  }
  return std::to_string(bytes) + "B";
}

std::string format_ratio(double ratio) { return shortest(ratio); }

const char* unit_name(Unit unit) {
  switch (unit) {
    case Unit::Time:
      return "time";
    case Unit::Frequency:
      return "frequency";
    case Unit::Bandwidth:
      return "bandwidth";
    case Unit::Bytes:
      return "bytes";
    case Unit::Ratio:
      return "ratio";
    case Unit::None:
      break;
  }
  return "";
}

const char* base_unit_symbol(Unit unit) {
  switch (unit) {
    case Unit::Time:
      return "ps";
    case Unit::Frequency:
      return "Hz";
    case Unit::Bandwidth:
      return "bit/s";
    case Unit::Bytes:
      return "B";
    case Unit::Ratio:
    case Unit::None:
      break;
  }
  return "";
}

const char* unit_examples(Unit unit) {
  switch (unit) {
    case Unit::Time:
      return "30ms, 2.5us or 1s";
    case Unit::Frequency:
      return "2GHz or 400MHz";
    case Unit::Bandwidth:
      return "10Gbps, 1Gbit/s or 6.4Gbps";
    case Unit::Bytes:
      return "1500B, 64KiB or 128MiB";
    case Unit::Ratio:
      return "0.01 or 1%";
    case Unit::None:
      break;
  }
  return "";
}

std::string accepted_suffixes(Unit unit) {
  switch (unit) {
    case Unit::Time:
      return join_suffixes(kTimeSuffixes);
    case Unit::Frequency:
      return join_suffixes(kFrequencySuffixes);
    case Unit::Bandwidth:
      return join_suffixes(kBandwidthSuffixes);
    case Unit::Bytes:
      return join_suffixes(kBytesSuffixes);
    case Unit::Ratio:
      return "none, or %";
    case Unit::None:
      break;
  }
  return "";
}

}  // namespace vtoe::core
