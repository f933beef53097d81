// The registry of every scenario key: path, type, default, range and meaning. It is the single
// source of truth for validation (Config), `vtoe keys` and the parameter tables in docs/.
//
// Paths are dotted; keys inside items of a list are written with "[]": `vms[].workload.type`.
// One level of lists is supported (lists of mappings, not lists inside list items).
//
// A key a model reads is declared next to the model's Params struct (models/core/param.h, see
// docs/core.md) and spliced in with keys_of() (config/params.h). Only scenario-level keys are one
// line in the table in schema.cpp, e.g.
//   K::time("duration", "100ms", "Simulated time to run").above("0s"),
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "models/core/units.h"

namespace vtoe::config {

enum class KeyType {
  Int,        ///< int64_t
  Uint,       ///< uint64_t, decimal or 0x hex
  Double,     ///< double
  Ratio,      ///< double, "0.01" or "1%"
  Bool,       ///< true/false (also yes/no, on/off)
  String,     ///< std::string
  Enum,       ///< std::string, one of Key::choices
  Time,       ///< uint64_t picoseconds
  Frequency,  ///< double hertz
  Bandwidth,  ///< double bit/s
  Bytes,      ///< uint64_t bytes
  List,       ///< a list of mappings; its item keys are "<path>[].<key>"
};

/// A parsed value in canonical units. Which alternative a key uses follows from its KeyType:
/// int64_t (Int), uint64_t (Uint, Time, Bytes, and List = item count), double (Double, Ratio,
/// Frequency, Bandwidth), bool (Bool), std::string (String, Enum).
using Value = std::variant<std::int64_t, std::uint64_t, double, bool, std::string>;

/// A value that does not fit its key (bad text, out of range, not in an enum). The message does not
/// name the key; Config adds file and key. core::UnitError is the other exception parse_value
/// throws; both derive from std::invalid_argument.
class ValueError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct Key {
  std::string path;  ///< "platform.cpu_freq", "vms[].workload.type"
  KeyType type = KeyType::String;
  std::string default_text;    ///< parsed like user input; "{i}" becomes the item index in lists
  std::string meaning;         ///< one line, for `vtoe keys` and docs
  std::string min_text;        ///< empty: no lower bound
  std::string max_text;        ///< empty: no upper bound
  bool min_exclusive = false;  ///< value must be > min instead of >= min
  std::vector<std::string> choices;                    ///< Enum: accepted values
  std::vector<std::string> reserved;                   ///< Enum: known but "not implemented yet"
  core::BareNumber bare = core::BareNumber::ZeroOnly;  ///< for Time/Frequency/Bandwidth/Bytes
  std::function<void(const Value&)> check;             ///< extra validation; throws ValueError
  std::string check_doc;                               ///< what check() requires, for docs
  std::size_t min_items = 0;                           ///< List: fewest items allowed

  // Builders for the table (default text, one-line meaning).
  static Key integer(std::string path, std::string def, std::string meaning);
  static Key uint(std::string path, std::string def, std::string meaning);
  static Key real(std::string path, std::string def, std::string meaning);
  static Key ratio(std::string path, std::string def, std::string meaning);  // range 0..1
  static Key boolean(std::string path, std::string def, std::string meaning);
  static Key string(std::string path, std::string def, std::string meaning);
  static Key enumeration(std::string path, std::vector<std::string> choices, std::string def,
                         std::string meaning);
  static Key time(std::string path, std::string def, std::string meaning);
  static Key frequency(std::string path, std::string def, std::string meaning);
  static Key bandwidth(std::string path, std::string def, std::string meaning);
  static Key bytes(std::string path, std::string def, std::string meaning);
  /// `def` is the number of items in the default scenario.
  static Key list(std::string path, std::size_t min_items, std::size_t def, std::string meaning);

  // Chainable modifiers; bounds are text parsed like values ("576B", "1").
  Key&& range(std::string lo, std::string hi) &&;
  Key&& at_least(std::string lo) &&;
  Key&& above(std::string lo) &&;  ///< strictly greater
  Key&& at_most(std::string hi) &&;
  Key&& reserve(std::vector<std::string> values) &&;  ///< Enum values not implemented yet
  Key&& bare_base() &&;                               ///< a bare number is in the base unit
  Key&& validate(std::function<void(const Value&)> fn, std::string doc) &&;

  core::Unit unit() const;  ///< the physical unit of the key, Unit::None for plain types
};

class Config;

class Schema {
 public:
  /// Checks the table: unique paths, list items under a declared list, every default parses and
  /// lies in range. Throws std::logic_error on a broken table.
  explicit Schema(std::vector<Key> keys);

  /// The built-in table of vtoe's scenario keys.
  static const Schema& builtin();

  const std::vector<Key>& keys() const { return keys_; }
  /// A leaf or list key by pattern ("vms[].workload.type", "vms"); nullptr if none.
  const Key* find(std::string_view pattern) const;
  /// True for "" (the root), "platform", "toe.ccb", "vms[]", "vms[].workload".
  bool is_group(std::string_view pattern) const;
  /// Direct children of a group, in table order: {"cpu_freq", "device_freq", ...}.
  std::vector<std::string> children(std::string_view group) const;
  /// Patterns of every key and group, in table order (for "did you mean").
  const std::vector<std::string>& all_patterns() const { return patterns_; }
  /// parse_value(key, default_text(key, index)) for a key of this schema (List: the item count).
  Value default_value(const Key& key, std::size_t index) const;

 private:
  std::vector<Key> keys_;
  std::vector<std::string> patterns_;
  // Built once here: every Config starts from the defaults and looks keys up per YAML node.
  std::map<std::string, std::size_t, std::less<>> index_;  ///< path -> position in keys_
  std::set<std::string, std::less<>> groups_;              ///< every proper dotted prefix
  std::vector<std::optional<Value>> defaults_;  ///< parsed default unless it depends on "{i}"
  // Every key at its default, built with the schema: a Config starts as a copy of its values.
  friend class Config;
  std::shared_ptr<const Config> default_config_;
};

/// Parses text for a key, then checks enum membership, range and the key's validator.
/// Throws ValueError or core::UnitError.
Value parse_value(const Key& key, std::string_view text);
/// Canonical text of a value ("2GHz", "2.5ms", "true", "native"); parse_value(format_value(v)) ==
/// v.
std::string format_value(const Key& key, const Value& value);
/// The key's default text for list item `index` ("vm{i}" -> "vm1").
std::string default_text(const Key& key, std::size_t index);
/// "time", "uint", "enum", ...
const char* type_name(KeyType type);
/// Accepted values in words, for docs: "576B..9000B", ">= 1", "native (reserved: de, da)".
std::string describe_range(const Key& key);
/// Validator for String keys: a dotted-quad IPv4 address such as 10.0.0.1.
bool is_ipv4(std::string_view text);
void require_ipv4(const Value& value);
/// The strings of `v` with `sep` between them.
std::string join(const std::vector<std::string>& v, const char* sep);
/// "16000, 4KiB,8000B" -> byte counts (empty text -> empty list); throws ValueError naming the
/// bad entry.
std::vector<std::uint64_t> parse_byte_list(std::string_view text);
void require_byte_list(const Value& value);
/// "0, 2,3" -> indices (empty text -> empty list); throws ValueError naming the bad entry.
std::vector<std::uint64_t> parse_index_list(std::string_view text);
void require_index_list(const Value& value);
/// Empty, or six hex pairs separated by ':' and not multicast; throws ValueError.
void tcpip_mac_check(const std::string& text);

enum class KeysFormat { Text, Markdown };
/// Every key with type, default, accepted values and meaning, then the accepted unit suffixes.
std::string describe_keys(const Schema& schema, KeysFormat format);

}  // namespace vtoe::config
