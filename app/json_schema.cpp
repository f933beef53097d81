#include "app/json_schema.h"

#include <string>

#include "app/cli.h"

namespace vtoe::app {

using config::Key;
using config::KeyType;
using nlohmann::ordered_json;

namespace {

// A number with one of the unit's suffixes ("2.5ms", "10Gbps", "64KiB").
std::string unit_pattern(KeyType type) {
  const char* suffixes = "";
  switch (type) {
    case KeyType::Time:
      suffixes = "s|ms|us|ns|ps";
      break;
    case KeyType::Frequency:
      suffixes = "Hz|kHz|KHz|MHz|GHz|THz";
      break;
    case KeyType::Bandwidth:
      suffixes = "[kKMGT]?bps|[kMGT]?bit/s|[kMGT]?B/s|[KMGT]iB/s";
      break;
    case KeyType::Bytes:
      suffixes = "B|kB|MB|GB|TB|KiB|MiB|GiB|TiB";
      break;
    default:
      break;
  }
  return std::string("^\\s*[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?\\s*(") + suffixes + ")\\s*$";
}

// A bound of an integer or real key as a JSON number (bounds are text such as "1" or "0.5").
void add_bounds(const Key& k, ordered_json& s) {
  auto num = [](const std::string& t) { return std::stod(t); };
  if (!k.min_text.empty()) s[k.min_exclusive ? "exclusiveMinimum" : "minimum"] = num(k.min_text);
  if (!k.max_text.empty()) s["maximum"] = num(k.max_text);
}

ordered_json leaf(const Key& k) {
  ordered_json s;
  switch (k.type) {
    case KeyType::Int:
    case KeyType::Uint:
      // Decimal, or for uint keys a 0x hex string.
      if (k.type == KeyType::Uint) {
        ordered_json n{{"type", "integer"}};
        add_bounds(k, n);
        s["anyOf"] = {n, {{"type", "string"}, {"pattern", "^0[xX][0-9a-fA-F]+$"}}};
      } else {
        s["type"] = "integer";
        add_bounds(k, s);
      }
      break;
    case KeyType::Double:
      s["type"] = "number";
      add_bounds(k, s);
      break;
    case KeyType::Ratio: {
      ordered_json n{{"type", "number"}};
      add_bounds(k, n);
      s["anyOf"] = {n, {{"type", "string"}, {"pattern", "^\\s*[0-9]+(\\.[0-9]+)?\\s*%\\s*$"}}};
      break;
    }
    case KeyType::Bool:
      s["type"] = "boolean";
      break;
    case KeyType::Enum:
      s["enum"] = k.choices;
      break;
    case KeyType::String:
      // YAML reads `quantum: 16000` as a number; vtoe takes the text.
      s["type"] = {"string", "number"};
      break;
    case KeyType::Time:
    case KeyType::Frequency:
    case KeyType::Bandwidth:
    case KeyType::Bytes:
      // A bare number is accepted as 0 (any unit) or, for some keys, in the base unit.
      s["anyOf"] = {{{"type", "string"}, {"pattern", unit_pattern(k.type)}},
                    k.bare == core::BareNumber::BaseUnit
                        ? ordered_json{{"type", "number"}, {"minimum", 0}}
                        : ordered_json{{"const", 0}}};
      break;
    case KeyType::List:
      break;
  }
  s["description"] = k.meaning;
  if (k.type != KeyType::List && k.default_text.find("{i}") == std::string::npos)
    s["default"] = k.default_text;
  return s;
}

// The object at dotted `path` under `root` (made on the way, closed to unknown keys).
ordered_json& object_at(ordered_json& root, const std::string& path) {
  ordered_json* node = &root;
  std::size_t start = 0;
  while (start < path.size()) {
    const std::size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    ordered_json& props = (*node)["properties"];
    if (!props.contains(part))
      props[part] = {{"type", "object"}, {"additionalProperties", false}, {"properties", {}}};
    node = &props[part];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return *node;
}

}  // namespace

ordered_json scenario_json_schema(const config::Schema& schema) {
  ordered_json root{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                    {"$id", "urn:vtoe:scenario:" + version_string()},
                    {"title", "vtoe scenario"},
                    {"description", "A vtoe scenario file (docs/keys.md lists every key)"},
                    {"type", "object"},
                    {"additionalProperties", false},
                    {"properties", ordered_json::object()}};
  for (const Key& k : schema.keys()) {
    const auto items = k.path.find("[].");
    // "vms[].workload.type": the list's item object, then the key inside it.
    ordered_json* parent = &root;
    std::string rest = k.path;
    if (items != std::string::npos) {
      ordered_json& list = object_at(root, k.path.substr(0, items));
      parent = &list["items"];
      rest = k.path.substr(items + 3);
    }
    const auto dot = rest.rfind('.');
    ordered_json& owner =
        dot == std::string::npos ? *parent : object_at(*parent, rest.substr(0, dot));
    const std::string name = dot == std::string::npos ? rest : rest.substr(dot + 1);
    if (k.type == KeyType::List) {
      ordered_json& list = object_at(owner, name);
      list.erase("properties");
      list.erase("additionalProperties");
      list["type"] = "array";
      list["minItems"] = k.min_items;
      list["description"] = k.meaning;
      list["items"] = {{"type", "object"}, {"additionalProperties", false}, {"properties", {}}};
    } else {
      if (!owner.contains("properties")) owner["properties"] = ordered_json::object();
      owner["properties"][name] = leaf(k);
    }
  }
  return root;
}

}  // namespace vtoe::app
