#include "config/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string_view>

namespace vtoe::config {

// ---------------------------------------------------------------------------------------------
// Cross-key checks. Each gets the loaded config and `fail(key, message)`, which throws a
// ConfigError located where `key` was set. Add a check by appending to the table.
// ---------------------------------------------------------------------------------------------
namespace {

// fail(key, message) or fail(key, message, related_key): the error is located where `key` was set,
// or else where `related_key` was set, or else at the scenario file.
using Fail = std::function<void(const std::string& key, const std::string& message,
                                const std::string& related)>;

struct CrossCheck {
  const char* what;
  std::vector<const char*> needs;  // schema keys the check reads; skipped if one is missing
  std::function<void(const Config&, const Fail&)> check;
};

const std::vector<CrossCheck>& cross_checks() {
  static const std::vector<CrossCheck> checks{
      {"warmup < duration",
       {"warmup", "duration"},
       [](const Config& c, const Fail& fail) {
         if (c.get_time("warmup") >= c.get_time("duration")) {
           fail("warmup",
                "must be less than duration (" + c.get_text("duration") + "), got " +
                    c.get_text("warmup"),
                "duration");
         }
       }},
      {"ratelimit <= timeslice",
       {"hypervisor.scheduler.ratelimit", "hypervisor.scheduler.timeslice"},
       [](const Config& c, const Fail& fail) {
         if (c.get_time("hypervisor.scheduler.ratelimit") >
             c.get_time("hypervisor.scheduler.timeslice")) {
           fail("hypervisor.scheduler.ratelimit",
                "must not exceed hypervisor.scheduler.timeslice (" +
                    c.get_text("hypervisor.scheduler.timeslice") + "), got " +
                    c.get_text("hypervisor.scheduler.ratelimit"),
                "hypervisor.scheduler.timeslice");
         }
       }},
      {"VM stop after start",
       {"vms", "vms[].workload.start", "vms[].workload.stop"},
       [](const Config& c, const Fail& fail) {
         for (std::size_t i = 0; i < c.list_size("vms"); ++i) {
           const std::string w = "vms." + std::to_string(i) + ".workload.";
           const auto stop = c.get_time(w + "stop");
           if (stop != 0 && stop <= c.get_time(w + "start")) {
             fail(w + "stop",
                  "must be after workload.start (" + c.get_text(w + "start") +
                      ") or 0 (never), got " + c.get_text(w + "stop"),
                  w + "start");
           }
         }
       }},
      {"VM names unique",
       {"vms", "vms[].name"},
       [](const Config& c, const Fail& fail) {
         std::map<std::string, std::size_t> names;
         for (std::size_t i = 0; i < c.list_size("vms"); ++i) {
           const std::string key = "vms." + std::to_string(i) + ".name";
           const auto [it, fresh] = names.emplace(c.get_string(key), i);
           if (!fresh) {
             fail(key,
                  "'" + it->first + "' is already the name of vms." + std::to_string(it->second),
                  "vms");
           }
         }
       }},
      {"quantum entries <= VMs",
       {"toe.dispatcher.quantum", "vms"},
       [](const Config& c, const Fail& fail) {
         const auto q = parse_byte_list(c.get_string("toe.dispatcher.quantum"));
         if (q.size() > c.list_size("vms")) {
           fail("toe.dispatcher.quantum",
                std::to_string(q.size()) + " quantum entries for " +
                    std::to_string(c.list_size("vms")) + " VMs (one per VM at most)",
                "vms");
         }
       }},
      {"VM addresses unique",
       {"vms", "vms[].ip", "network.host_ip", "network.peer_ip"},
       [](const Config& c, const Fail& fail) {
         // Derived addresses follow network.host_ip; explicit ones must not collide with them.
         std::map<std::string, std::size_t> seen;
         std::string subnet;
         const std::string host = c.get_string("network.host_ip");
         for (std::size_t i = 0; i < c.list_size("vms"); ++i) {
           const std::string key = "vms." + std::to_string(i) + ".ip";
           std::string ip = c.get_string(key);
           const auto slash = ip.find('/');
           if (slash != std::string::npos) {
             const std::string prefix = ip.substr(slash);
             ip = ip.substr(0, slash);
             if (!subnet.empty() && prefix != subnet)
               fail(key,
                    "prefix " + prefix + " differs from " + subnet +
                        " of another VM (all VMs share the TOE's subnet)",
                    "vms");
             subnet = prefix;
           }
           if (ip.empty()) {
             unsigned a, b, cc, d;
             std::sscanf(host.c_str(), "%u.%u.%u.%u", &a, &b, &cc, &d);
             const unsigned last = d + (i == 0 ? 0 : 9 + static_cast<unsigned>(i));
             ip = std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(cc) + "." +
                  std::to_string(last);
             if (last > 254) {
               fail(key, "the derived address leaves the subnet; give the VM an address", "vms");
               return;
             }
           }
           if (ip == c.get_string("network.peer_ip"))
             fail(key, "is the peer's address (network.peer_ip) " + ip, "network.peer_ip");
           const auto [it, fresh] = seen.emplace(ip, i);
           if (!fresh)
             fail(key, ip + " is already the address of vms." + std::to_string(it->second), "vms");
         }
       }},
      {"native runs one VM",
       {"architecture", "vms"},
       [](const Config& c, const Fail& fail) {
         if (c.get_string("architecture") == "native" && c.list_size("vms") != 1) {
           fail("vms",
                "architecture 'native' runs exactly one VM, got " +
                    std::to_string(c.list_size("vms")),
                "architecture");
         }
       }},
  };
  return checks;
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    out.push_back(s.substr(start, pos - start));
    if (pos == std::string::npos) return out;
    start = pos + 1;
  }
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string join_path(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

std::string parent_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

std::string_view leaf_view(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

std::string_view parent_view(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : path.substr(0, dot);
}

// Edit distance between a and b when it is at most `bound`, otherwise bound + 1. Only the band
// |i - j| <= bound is computed (a path outside it costs more than the bound), so a long unknown key
// does not cost |a| x |b| against every pattern of the schema. `row` is scratch space, reused
// across the calls of one search.
std::size_t levenshtein(std::string_view a, std::string_view b, std::size_t bound,
                        std::vector<std::size_t>& row) {
  const std::size_t gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (gap > bound) return bound + 1;
  const std::size_t far = bound + 1;  // any distance above the bound
  row.assign(b.size() + 1, far);
  for (std::size_t j = 0; j <= std::min(b.size(), bound); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    const std::size_t lo = i > bound ? i - bound : 1;
    const std::size_t hi = std::min(b.size(), i + bound);
    std::size_t diag = row[lo - 1];
    row[lo - 1] = lo == 1 ? std::min(i, far) : far;  // left of the band
    std::size_t row_min = row[lo - 1];
    for (std::size_t j = lo; j <= hi; ++j) {
      const std::size_t up = row[j];
      const std::size_t d =
          std::min(std::min(up, row[j - 1]) + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1));
      row[j] = std::min(d, far);
      diag = up;
      row_min = std::min(row_min, row[j]);
    }
    if (row_min > bound) return far;  // no later row can come back under the bound
  }
  return row[b.size()];
}

// The closest known pattern to an unknown one, or "" if nothing is close.
std::string closest_pattern(const Schema& schema, const std::string& unknown) {
  const std::string_view uleaf = leaf_view(unknown);
  const std::string_view uparent = parent_view(unknown);
  const std::size_t limit = std::max<std::size_t>(2, uleaf.size() / 3);  // farther is no guess
  std::size_t best_score = SIZE_MAX;
  const std::string* best = nullptr;
  std::vector<std::size_t> row;
  for (const std::string& cand : schema.all_patterns()) {
    if (cand.size() >= 2 && cand.compare(cand.size() - 2, 2, "[]") == 0) continue;
    const std::size_t penalty = uparent == parent_view(cand) ? 0 : 1;
    // Only a distance whose score 2 * d + penalty beats the best so far matters: a tighter bound
    // for the searches below, same answer.
    std::size_t bound = limit;
    if (best_score != SIZE_MAX) {
      if (best_score <= penalty) continue;
      bound = std::min(bound, (best_score - 1 - penalty) / 2);
    }
    const std::string_view cleaf = leaf_view(cand);
    std::size_t d = levenshtein(unknown, cand, bound, row);
    // The right name at the wrong level ("link_delay" for "network.link_delay").
    d = std::min(d, levenshtein(uleaf, cleaf, bound, row) + 1);
    // A leaf that is a prefix of the other ("cpu_frequency" for "cpu_freq").
    const std::size_t shorter = std::min(uleaf.size(), cleaf.size());
    if (shorter >= 3 && uleaf.substr(0, shorter) == cleaf.substr(0, shorter))
      d = std::min<std::size_t>(d, 1);
    if (d > bound) continue;
    best_score = 2 * d + penalty;
    best = &cand;
  }
  return best ? *best : std::string();
}

// Renders a pattern with the list indices of a concrete path: ("vms[].workload.type",
// "vms.1.workload.tpye") -> "vms.1.workload.type". Lists without a known index keep "[]".
std::string render_pattern(const std::string& pattern, const std::string& concrete) {
  std::vector<std::string> indices;
  for (const auto& seg : split(concrete, '.')) {
    if (all_digits(seg)) indices.push_back(seg);
  }
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 2, "[]") == 0 && next < indices.size()) {
      out += "." + indices[next++];
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

const char* node_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    default:
      return "a value";
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// ConfigError
// ---------------------------------------------------------------------------------------------
namespace {
std::string error_text(const std::string& where, const std::string& key, const std::string& msg) {
  std::string out = where.empty() ? std::string() : where + ": ";
  if (!key.empty() && where != "--set " + key) out += "key '" + key + "': ";
  return out + msg;
}
}  // namespace

ConfigError::ConfigError(std::string where, std::string key, const std::string& message)
    : std::runtime_error(error_text(where, key, message)),
      where_(std::move(where)),
      key_(std::move(key)) {}

// ---------------------------------------------------------------------------------------------
// Where a value came from
// ---------------------------------------------------------------------------------------------
struct Config::Origin {
  std::string file;      // file origins: the source name
  std::string set_path;  // --set origins: the path being set

  std::string where(const YAML::Node* node) const {
    if (!set_path.empty()) return "--set " + set_path;
    if (node && node->Mark().line >= 0) return file + ":" + std::to_string(node->Mark().line + 1);
    return file;
  }
  [[noreturn]] void fail(const YAML::Node* node, const std::string& key,
                         const std::string& message) const {
    throw ConfigError(where(node), key, message);
  }
};

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------
Config::Config(const Schema& schema, std::string source)
    : schema_(&schema), source_(std::move(source)) {
  if (const Config* d = schema.default_config_.get()) {
    values_ = d->values_;
    lists_ = d->lists_;
  } else {
    fill_defaults();
  }
}

std::shared_ptr<const Config> Config::defaults_of(const Schema& schema) {
  return std::shared_ptr<const Config>(new Config(schema, ""));
}

void Config::fill_defaults() {
  values_.clear();
  lists_.clear();
  for (const Key& k : schema_->keys()) {
    if (k.path.find("[]") != std::string::npos) continue;  // filled per item by resize_list
    if (k.type == KeyType::List) {
      resize_list(k.path, k, std::get<std::uint64_t>(schema_->default_value(k, 0)), "");
    } else {
      values_[k.path] = Entry{schema_->default_value(k, 0), ""};
    }
  }
}

void Config::resize_list(const std::string& concrete, const Key& list, std::size_t size,
                         const std::string& origin) {
  const std::size_t old =
      lists_.count(concrete) ? std::get<std::uint64_t>(lists_.at(concrete).value) : 0;
  // Drop items past the new end.
  for (std::size_t i = size; i < old; ++i) {
    const std::string prefix = concrete + "." + std::to_string(i) + ".";
    for (auto it = values_.lower_bound(prefix);
         it != values_.end() && it->first.compare(0, prefix.size(), prefix) == 0;) {
      it = values_.erase(it);
    }
  }
  // New items get defaults.
  const std::string item_pattern = list.path + "[].";
  for (std::size_t i = old; i < size; ++i) {
    for (const Key& k : schema_->keys()) {
      if (k.path.compare(0, item_pattern.size(), item_pattern) != 0) continue;
      const std::string path =
          concrete + "." + std::to_string(i) + "." + k.path.substr(item_pattern.size());
      values_[path] = Entry{schema_->default_value(k, i), ""};
    }
  }
  lists_[concrete] = Entry{std::uint64_t{size}, origin};
}

void Config::unknown_key(const Origin& origin, const YAML::Node* node, const std::string& concrete,
                         const std::string& pattern) const {
  std::string msg = "unknown key";
  const std::string guess = closest_pattern(*schema_, pattern);
  if (!guess.empty()) msg += "; did you mean '" + render_pattern(guess, concrete) + "'?";
  const std::string parent = parent_of(pattern);
  if (guess.empty() && (schema_->is_group(parent))) {
    msg += "; known keys" + (parent.empty() ? std::string() : " in '" + parent_of(concrete) + "'") +
           ": " + join(schema_->children(parent), ", ");
  }
  origin.fail(node, concrete, msg);
}

void Config::apply_node(const YAML::Node& node, const std::string& concrete,
                        const std::string& pattern, const Origin& origin, const YAML::Node* at) {
  // Errors about this node point at its key (`at`) when it has one: a null value or a block list
  // has no useful position of its own.
  if (!at) at = &node;
  const Key* key = pattern.empty() ? nullptr : schema_->find(pattern);
  if (key && key->type != KeyType::List) {  // a value
    if (!node.IsScalar()) {
      origin.fail(
          at, concrete,
          std::string("expected a ") + type_name(key->type) + " value, got " + node_kind(node));
    }
    try {
      values_[concrete] = Entry{parse_value(*key, node.Scalar()), origin.where(at)};
    } catch (const std::invalid_argument& e) {
      origin.fail(at, concrete, e.what());
    }
    return;
  }
  if (key) {  // a list
    if (!node.IsSequence()) {
      origin.fail(
          at, concrete,
          std::string("expected a list of items (\"- key: value\"), got ") + node_kind(node));
    }
    if (node.size() < key->min_items) {
      origin.fail(at, concrete,
                  "needs at least " + std::to_string(key->min_items) + " item(s), got " +
                      std::to_string(node.size()));
    }
    resize_list(concrete, *key, 0, "");
    resize_list(concrete, *key, node.size(), origin.where(at));
    for (std::size_t i = 0; i < node.size(); ++i) {
      apply_node(node[i], concrete + "." + std::to_string(i), pattern + "[]", origin, nullptr);
    }
    return;
  }
  // A group: the root, "platform", a list item "vms[]", "vms[].workload".
  if (node.IsNull()) return;  // an empty mapping changes nothing
  if (!node.IsMap()) {
    origin.fail(at, concrete,
                std::string("expected a mapping with keys ") +
                    join(schema_->children(pattern), ", ") + "; got " + node_kind(node));
  }
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const YAML::Node& name_node = kv.first;
    if (!name_node.IsScalar()) origin.fail(&name_node, concrete, "a key must be a plain name");
    const std::string name = name_node.Scalar();
    const std::string child_concrete = join_path(concrete, name);
    const std::string child_pattern = join_path(pattern, name);
    if (!seen.insert(name).second) origin.fail(&name_node, child_concrete, "duplicate key");
    if (name.find_first_of(".[]") != std::string::npos) {
      origin.fail(&name_node, child_concrete,
                  "a key name cannot contain '.', '[' or ']'; nest mappings instead");
    }
    if (!schema_->find(child_pattern) && !schema_->is_group(child_pattern)) {
      unknown_key(origin, &name_node, child_concrete, child_pattern);
    }
    apply_node(kv.second, child_concrete, child_pattern, origin, &name_node);
  }
}

void Config::apply_sets(const std::vector<std::string>& sets) {
  for (const auto& s : sets) apply_set(s);
}

void Config::apply_set(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos) {
    throw ConfigError("--set " + assignment, "",
                      "expected key=value, e.g. --set toe.bandwidth=1Gbps");
  }
  const std::string path = trim(assignment.substr(0, eq));
  const std::string text = assignment.substr(eq + 1);
  const Origin origin{"", path.empty() ? assignment : path};
  const auto segs = split(path, '.');
  if (path.empty() || std::any_of(segs.begin(), segs.end(), [](auto& s) { return s.empty(); })) {
    origin.fail(nullptr, "", "malformed key path '" + path + "'");
  }
  YAML::Node node;
  try {
    node = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    origin.fail(nullptr, path, "YAML syntax error in value: " + e.msg);
  }
  std::string pattern, concrete;
  for (const std::string& seg : segs) {
    const Key* cur = pattern.empty() ? nullptr : schema_->find(pattern);
    if (cur && cur->type == KeyType::List) {
      const std::size_t size = std::get<std::uint64_t>(lists_.at(concrete).value);
      if (!all_digits(seg)) {
        origin.fail(nullptr, path,
                    "list '" + concrete + "' needs an item index, got '" + seg + "'");
      }
      const std::size_t index = seg.size() > 9 ? SIZE_MAX : std::stoul(seg);
      if (index > size) {
        origin.fail(nullptr, path,
                    "list '" + concrete + "' has " + std::to_string(size) +
                        (size == 1 ? " item" : " items") +
                        (size ? " (indices 0.." + std::to_string(size - 1) + "; " : " (") +
                        std::to_string(size) + " appends an item)");
      }
      if (index == size) resize_list(concrete, *cur, size + 1, origin.where(nullptr));
      pattern += "[]";
      concrete += "." + seg;
      continue;
    }
    if (cur) {
      origin.fail(nullptr, path, "'" + concrete + "' is a value and has no key '" + seg + "'");
    }
    pattern = join_path(pattern, seg);
    concrete = join_path(concrete, seg);
    if (!schema_->find(pattern) && !schema_->is_group(pattern)) {
      unknown_key(origin, nullptr, concrete, pattern);
    }
  }
  apply_node(node, concrete, pattern, origin, nullptr);
}

std::string Config::origin_of(const std::string& concrete) const {
  if (auto it = values_.find(concrete); it != values_.end()) return it->second.origin;
  if (auto it = lists_.find(concrete); it != lists_.end()) return it->second.origin;
  return "";
}

void Config::validate() const {
  for (const CrossCheck& c : cross_checks()) {
    if (!std::all_of(c.needs.begin(), c.needs.end(),
                     [&](const char* k) { return schema_->find(k); })) {
      continue;
    }
    c.check(*this,
            [this](const std::string& key, const std::string& message, const std::string& related) {
              std::string origin = origin_of(key);
              if (origin.empty() && !related.empty()) origin = origin_of(related);
              throw ConfigError(origin.empty() ? source_ : origin, key, message);
            });
  }
}

Config Config::from_string(const std::string& yaml, const std::string& source_name,
                           const std::vector<std::string>& sets, const Schema& schema) {
  Config c(schema, source_name);
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::ParserException& e) {
    const std::string where =
        e.mark.line >= 0 ? source_name + ":" + std::to_string(e.mark.line + 1) : source_name;
    throw ConfigError(where, "", "YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source_name, "", std::string("YAML error: ") + e.what());
  }
  c.apply_node(root, "", "", Origin{source_name, ""}, nullptr);
  c.apply_sets(sets);
  c.validate();
  return c;
}

Config Config::load(const std::string& path, const std::vector<std::string>& sets,
                    const Schema& schema) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(path, "", std::string("cannot read scenario file: ") + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path, "", "cannot read scenario file");
  // An empty file (or one of comments only) is more likely a mistake than a wish for the defaults.
  bool empty = true;
  try {
    const YAML::Node root = YAML::Load(text.str());
    empty = root.IsNull() || (root.IsMap() && root.size() == 0);
  } catch (const YAML::Exception&) {
    empty = false;  // from_string reports the syntax error with its line
  }
  if (empty)
    throw ConfigError(path, "",
                      "the scenario file sets no keys; to run the built-in defaults, run `vtoe "
                      "run` without a file (or put one key in it)");
  return from_string(text.str(), path, sets, schema);
}

Config Config::defaults(const std::vector<std::string>& sets, const Schema& schema) {
  Config c(schema, "<defaults>");
  c.apply_sets(sets);
  c.validate();
  return c;
}

Config Config::with(const std::vector<std::string>& sets) const {
  Config c(*this);
  c.apply_sets(sets);
  c.validate();
  return c;
}

// ---------------------------------------------------------------------------------------------
// Getters
// ---------------------------------------------------------------------------------------------
namespace {
// "vms.1.workload.type" -> "vms[].workload.type"; "" if the path cannot be a schema path.
std::string pattern_of(const Schema& schema, const std::string& path) {
  std::string pattern;
  for (const std::string& seg : split(path, '.')) {
    if (seg.empty()) return "";
    const Key* cur = pattern.empty() ? nullptr : schema.find(pattern);
    if (cur && cur->type == KeyType::List) {
      if (!all_digits(seg)) return "";
      pattern += "[]";
    } else {
      pattern = join_path(pattern, seg);
    }
  }
  return pattern;
}
}  // namespace

const Config::Entry& Config::lookup(const std::string& path, std::initializer_list<KeyType> types,
                                    const char* getter) const {
  const Key* key = schema_->find(pattern_of(*schema_, path));
  if (!key || key->type == KeyType::List) {
    throw std::logic_error(std::string("Config::") + getter + "('" + path +
                           "'): not a scenario key");
  }
  if (std::find(types.begin(), types.end(), key->type) == types.end()) {
    throw std::logic_error(std::string("Config::") + getter + "('" + path + "'): the key is a " +
                           type_name(key->type));
  }
  const auto it = values_.find(path);
  if (it == values_.end()) {
    throw std::logic_error(std::string("Config::") + getter + "('" + path +
                           "'): list index out of range");
  }
  return it->second;
}

std::uint64_t Config::get_time(const std::string& path) const {
  return std::get<std::uint64_t>(lookup(path, {KeyType::Time}, "get_time").value);
}
double Config::get_freq(const std::string& path) const {
  return std::get<double>(lookup(path, {KeyType::Frequency}, "get_freq").value);
}
double Config::get_bandwidth(const std::string& path) const {
  return std::get<double>(lookup(path, {KeyType::Bandwidth}, "get_bandwidth").value);
}
std::uint64_t Config::get_bytes(const std::string& path) const {
  return std::get<std::uint64_t>(lookup(path, {KeyType::Bytes}, "get_bytes").value);
}
std::uint64_t Config::get_uint(const std::string& path) const {
  return std::get<std::uint64_t>(lookup(path, {KeyType::Uint}, "get_uint").value);
}
std::int64_t Config::get_int(const std::string& path) const {
  return std::get<std::int64_t>(lookup(path, {KeyType::Int}, "get_int").value);
}
double Config::get_double(const std::string& path) const {
  return std::get<double>(lookup(path, {KeyType::Double, KeyType::Ratio}, "get_double").value);
}
bool Config::get_bool(const std::string& path) const {
  return std::get<bool>(lookup(path, {KeyType::Bool}, "get_bool").value);
}
const std::string& Config::get_string(const std::string& path) const {
  return std::get<std::string>(lookup(path, {KeyType::String, KeyType::Enum}, "get_string").value);
}

const Value& Config::value(const std::string& path) const {
  return lookup(path,
                {KeyType::Int, KeyType::Uint, KeyType::Double, KeyType::Ratio, KeyType::Bool,
                 KeyType::String, KeyType::Enum, KeyType::Time, KeyType::Frequency,
                 KeyType::Bandwidth, KeyType::Bytes},
                "value")
      .value;
}

std::size_t Config::list_size(const std::string& path) const {
  const Key* key = schema_->find(pattern_of(*schema_, path));
  const auto it = lists_.find(path);
  if (!key || key->type != KeyType::List || it == lists_.end()) {
    throw std::logic_error("Config::list_size('" + path + "'): not a list key");
  }
  return std::get<std::uint64_t>(it->second.value);
}

std::string Config::get_text(const std::string& path) const {
  const Key* key = schema_->find(pattern_of(*schema_, path));
  if (key && key->type == KeyType::List) return std::to_string(list_size(path));
  if (!key) throw std::logic_error("Config::get_text('" + path + "'): not a scenario key");
  return format_value(*key, lookup(path, {key->type}, "get_text").value);
}

bool Config::has(const std::string& path) const {
  return values_.count(path) != 0 || lists_.count(path) != 0;
}

bool Config::operator==(const Config& other) const {
  auto same = [](const std::map<std::string, Entry>& a, const std::map<std::string, Entry>& b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) {
             return x.first == y.first && x.second.value == y.second.value;
           });
  };
  return same(values_, other.values_) && same(lists_, other.lists_);
}

// ---------------------------------------------------------------------------------------------
// Resolved scenario
// ---------------------------------------------------------------------------------------------
namespace {
// Sets root[a][b]...[leaf] = value, creating maps in insertion (= schema) order.
void set_nested(YAML::Node root, const std::string& path, const YAML::Node& value) {
  const auto segs = split(path, '.');
  YAML::Node node;
  node.reset(root);
  for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
    YAML::Node child = node[segs[i]];
    node.reset(child);
  }
  node[segs.back()] = value;
}
}  // namespace

std::string Config::resolved_yaml() const {
  YAML::Node root(YAML::NodeType::Map);
  for (const Key& k : schema_->keys()) {
    if (k.path.find("[]") != std::string::npos) continue;
    if (k.type != KeyType::List) {
      set_nested(root, k.path, YAML::Node(format_value(k, values_.at(k.path).value)));
      continue;
    }
    YAML::Node items(YAML::NodeType::Sequence);
    const std::string item_pattern = k.path + "[].";
    for (std::size_t i = 0; i < list_size(k.path); ++i) {
      YAML::Node item(YAML::NodeType::Map);
      for (const Key& ik : schema_->keys()) {
        if (ik.path.compare(0, item_pattern.size(), item_pattern) != 0) continue;
        const std::string rel = ik.path.substr(item_pattern.size());
        const std::string concrete = k.path + "." + std::to_string(i) + "." + rel;
        set_nested(item, rel, YAML::Node(format_value(ik, values_.at(concrete).value)));
      }
      items.push_back(item);
    }
    set_nested(root, k.path, items);
  }
  YAML::Emitter out;
  out << root;
  return "# vtoe scenario resolved from " + source_ + ": every key, defaults filled in\n" +
         out.c_str() + "\n";
}

}  // namespace vtoe::config
