// A resolved scenario: every key of the schema with a value (defaults filled in), loaded from a
// YAML file plus `--set key=value` overrides, validated as a whole.
//
// Errors are ConfigError with a one-line what() naming where and which key:
//   scenarios/x.yaml:7: key 'platform.cpu_freq': expected a frequency such as 2GHz or 400MHz, got
//   "fast" scenarios/x.yaml:12: YAML syntax error: illegal map value
//   --set vms.3.workload.type: list 'vms' has 2 items (indices 0..1; 2 appends an item)
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "config/schema.h"

namespace YAML {
class Node;
}

namespace vtoe::config {

class ConfigError : public std::runtime_error {
 public:
  /// what() is "<where>: key '<key>': <message>"; the key part is left out when key is empty or
  /// where is "--set <key>".
  ConfigError(std::string where, std::string key, const std::string& message);
  const std::string& where() const { return where_; }  ///< "x.yaml:7", "--set seed", "x.yaml"
  const std::string& key() const { return key_; }      ///< concrete path, may be empty

 private:
  std::string where_;
  std::string key_;
};

class Config {
 public:
  /// Reads a scenario file, applies overrides ("a.b.c=value", in order), validates.
  /// `schema` is for tests of the machinery; the cross-key checks run only when their keys exist.
  static Config load(const std::string& path, const std::vector<std::string>& sets = {},
                     const Schema& schema = Schema::builtin());
  /// Same from YAML text; source_name is used in error messages.
  static Config from_string(const std::string& yaml, const std::string& source_name,
                            const std::vector<std::string>& sets = {},
                            const Schema& schema = Schema::builtin());
  /// The built-in default scenario, plus overrides.
  static Config defaults(const std::vector<std::string>& sets = {},
                         const Schema& schema = Schema::builtin());
  /// A copy with more overrides applied and validated (sweeps).
  Config with(const std::vector<std::string>& sets) const;

  // Typed getters by concrete path ("toe.mtu", "vms.1.workload.type"). A path that is not in the
  // schema, an index past the end of a list, or a getter of the wrong type is a programming error
  // and throws std::logic_error.
  std::uint64_t get_time(const std::string& path) const;  ///< picoseconds
  double get_freq(const std::string& path) const;         ///< Hz
  double get_bandwidth(const std::string& path) const;    ///< bit/s
  std::uint64_t get_bytes(const std::string& path) const;
  std::uint64_t get_uint(const std::string& path) const;
  std::int64_t get_int(const std::string& path) const;
  double get_double(const std::string& path) const;  ///< double and ratio keys
  bool get_bool(const std::string& path) const;
  const std::string& get_string(const std::string& path) const;  ///< string and enum keys
  std::size_t list_size(const std::string& path) const;          ///< "vms"
  /// Where a value came from: "x.yaml:7", "--set a.b", or source() for a default.
  std::string where(const std::string& path) const {
    const std::string o = origin_of(path);
    return o.empty() ? source_ : o;
  }
  /// The parsed value of any leaf key in canonical units (see Value), e.g. for config::fill.
  const Value& value(const std::string& path) const;
  /// Canonical text of any value ("2GHz"), for results and logs.
  std::string get_text(const std::string& path) const;
  /// True if the path names a value in this config (leaf key, index in range).
  bool has(const std::string& path) const;

  /// The whole scenario with every key, in schema order, canonical units. Loading it back gives an
  /// equal Config. Written next to results so that a run can be reproduced.
  std::string resolved_yaml() const;

  /// "scenarios/x.yaml", or "<defaults>".
  const std::string& source() const { return source_; }

  /// Same values (origins are ignored).
  bool operator==(const Config& other) const;
  bool operator!=(const Config& other) const { return !(*this == other); }

  const Schema& schema() const { return *schema_; }

 private:
  struct Entry {
    Value value;
    std::string origin;  ///< "x.yaml:7", "--set a.b", or "" for a default
  };
  struct Origin;

  friend class Schema;
  explicit Config(const Schema& schema, std::string source);
  // Every key at its default, parsed from the table (Schema keeps one for its Configs to copy).
  static std::shared_ptr<const Config> defaults_of(const Schema& schema);
  void fill_defaults();
  void apply_sets(const std::vector<std::string>& sets);
  void apply_set(const std::string& assignment);
  void validate() const;
  void resize_list(const std::string& concrete, const Key& list, std::size_t size,
                   const std::string& origin);
  void apply_node(const YAML::Node& node, const std::string& concrete, const std::string& pattern,
                  const Origin& origin, const YAML::Node* at);
  [[noreturn]] void unknown_key(const Origin& origin, const YAML::Node* node,
                                const std::string& concrete, const std::string& pattern) const;
  const Entry& lookup(const std::string& path, std::initializer_list<KeyType> types,
                      const char* getter) const;
  std::string origin_of(const std::string& concrete) const;

  const Schema* schema_;
  std::string source_;
  std::map<std::string, Entry> values_;  ///< concrete leaf path -> value
  std::map<std::string, Entry> lists_;   ///< concrete list path -> item count (uint64)
};

}  // namespace vtoe::config
