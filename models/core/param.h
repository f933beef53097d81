// A model's parameters, declared once, next to the Params struct they fill: scenario key, kind
// (and so its unit), default, accepted range, one-line meaning, and which member of the struct it
// sets. config/ builds the scenario schema (validation, `vtoe keys`, docs/keys.md) from these
// declarations, and the platform builder fills each struct with one call (config::fill). A unit
// test checks that every struct's C++ default equals its declared default, so the two cannot drift.
//
//   const std::vector<core::Param<DramParams>>& dram_params() {
//     static const std::vector<core::Param<DramParams>> p = {
//         core::param<DramParams>(core::ParamKind::Bandwidth, "platform.dram_bandwidth", "6.4Gbps",
//                                 "Peak DRAM bandwidth", [](DramParams& s) -> auto& {
//                                   return s.bandwidth_bps; }).above("0bps"),
//     };
//     return p;
//   }
//
// Values arrive in canonical units: picoseconds (time), hertz, bit/s, bytes; cycles and other
// plain numbers as given. No SystemC and no config/ in here: models/ may not depend upward.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace vtoe::core {

enum class ParamKind { Uint, Real, Ratio, Bool, String, Enum, Time, Frequency, Bandwidth, Bytes };

// A parsed value: uint64 (Uint, Time in ps, Bytes), double (Real, Ratio, Frequency in Hz,
// Bandwidth in bit/s), bool, string (String, Enum). The same alternatives as config::Value.
using ParamValue = std::variant<std::int64_t, std::uint64_t, double, bool, std::string>;

struct ParamSpec {
  std::string path;  // the scenario key, "toe.ppm.tx_cycles"
  ParamKind kind = ParamKind::Real;
  std::string default_text;        // parsed like user input, with its unit: "400MHz"
  std::string meaning;             // one line, for `vtoe keys` and docs
  std::string min_text, max_text;  // empty: unbounded
  bool min_exclusive = false;
  std::vector<std::string> choices;  // Enum
  // Extra validation beyond the range; throws std::invalid_argument with what is expected.
  std::function<void(const ParamValue&)> check;
  std::string check_doc;
};

template <typename S>
class Param {
 public:
  using Set = std::function<void(S&, const ParamValue&)>;
  using Get = std::function<ParamValue(const S&)>;

  Param(ParamSpec spec, Set set, Get get)
      : spec_(std::move(spec)), set_(std::move(set)), get_(std::move(get)) {}

  const ParamSpec& spec() const { return spec_; }
  void set(S& s, const ParamValue& v) const { set_(s, v); }
  ParamValue get(const S& s) const { return get_(s); }

  // Chainable bounds and checks, as text parsed like values ("576B", "1").
  Param&& range(std::string lo, std::string hi) && {
    spec_.min_text = std::move(lo);
    spec_.max_text = std::move(hi);
    return std::move(*this);
  }
  Param&& at_least(std::string lo) && {
    spec_.min_text = std::move(lo);
    return std::move(*this);
  }
  Param&& above(std::string lo) && {
    spec_.min_text = std::move(lo);
    spec_.min_exclusive = true;
    return std::move(*this);
  }
  Param&& validate(std::function<void(const ParamValue&)> fn, std::string doc) && {
    spec_.check = std::move(fn);
    spec_.check_doc = std::move(doc);
    return std::move(*this);
  }

 private:
  ParamSpec spec_;
  Set set_;
  Get get_;
};

namespace detail {
template <typename M>
M from_value(const ParamValue& v) {
  if constexpr (std::is_same_v<M, bool>) {
    return std::get<bool>(v);
  } else if constexpr (std::is_same_v<M, std::string>) {
    return std::get<std::string>(v);
  } else if constexpr (std::is_integral_v<M>) {
    // A value the member cannot hold is refused, never truncated (4294967296 into a uint32 is 0).
    const auto too_big = [](auto x) {
      throw std::out_of_range(std::to_string(x) + " does not fit the model's parameter (largest " +
                              std::to_string(std::numeric_limits<M>::max()) + ")");
    };
    if (const auto* u = std::get_if<std::uint64_t>(&v)) {
      if (*u > static_cast<std::uint64_t>(std::numeric_limits<M>::max())) too_big(*u);
      return static_cast<M>(*u);
    }
    if (const auto* i = std::get_if<std::int64_t>(&v)) {
      if (*i > static_cast<std::int64_t>(std::numeric_limits<M>::max()) ||
          (std::is_unsigned_v<M> && *i < 0))
        too_big(*i);
      return static_cast<M>(*i);
    }
    const double d = std::get<double>(v);
    if (!(d <= static_cast<double>(std::numeric_limits<M>::max()))) too_big(d);
    return static_cast<M>(d);
  } else if constexpr (std::is_arithmetic_v<M>) {
    if (const auto* u = std::get_if<std::uint64_t>(&v)) return static_cast<M>(*u);
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<M>(*i);
    return static_cast<M>(std::get<double>(v));
  } else {
    static_assert(std::is_arithmetic_v<M>, "a parameter binds to a number, bool or string");
  }
}

template <typename M>
ParamValue to_value(const M& m, ParamKind kind) {
  if constexpr (std::is_same_v<M, bool>) {
    return m;
  } else if constexpr (std::is_same_v<M, std::string>) {
    return m;
  } else {
    switch (kind) {
      case ParamKind::Uint:
      case ParamKind::Time:
      case ParamKind::Bytes:
        return static_cast<std::uint64_t>(m);
      default:
        return static_cast<double>(m);
    }
  }
}
}  // namespace detail

// A parameter bound to the member `ref(s)` returns (a reference: plain or nested member).
template <typename S, typename Ref>
Param<S> param(ParamKind kind, std::string path, std::string default_text, std::string meaning,
               Ref ref) {
  using M = std::remove_reference_t<decltype(ref(std::declval<S&>()))>;
  ParamSpec spec;
  spec.path = std::move(path);
  spec.kind = kind;
  spec.default_text = std::move(default_text);
  spec.meaning = std::move(meaning);
  return Param<S>(
      std::move(spec), [ref](S& s, const ParamValue& v) { ref(s) = detail::from_value<M>(v); },
      [ref, kind](const S& s) {
        S copy = s;  // ref() takes a mutable struct; reading through a copy keeps `s` untouched
        return detail::to_value<M>(ref(copy), kind);
      });
}

// An Enum parameter whose member is a C++ enum: `parse` maps the key's text to the member.
template <typename S, typename Ref, typename Parse, typename Print>
Param<S> enum_param(std::string path, std::vector<std::string> choices, std::string default_text,
                    std::string meaning, Ref ref, Parse parse, Print print) {
  ParamSpec spec;
  spec.path = std::move(path);
  spec.kind = ParamKind::Enum;
  spec.default_text = std::move(default_text);
  spec.meaning = std::move(meaning);
  spec.choices = std::move(choices);
  return Param<S>(
      std::move(spec),
      [ref, parse](S& s, const ParamValue& v) { ref(s) = parse(std::get<std::string>(v)); },
      [ref, print](const S& s) {
        S copy = s;
        return ParamValue{std::string(print(ref(copy)))};
      });
}

}  // namespace vtoe::core
