// Model parameter declarations (models/core/param.h) on the configuration side: the schema key a
// declaration stands for, and filling a Params struct from a scenario in one call.
#pragma once

#include <cstddef>
#include <string>
#include <stdexcept>
#include <vector>

#include "config/config.h"
#include "config/schema.h"
#include "models/core/param.h"

namespace vtoe::config {

static_assert(std::is_same_v<Value, core::ParamValue>,
              "config::Value and core::ParamValue must be the same variant");

/// The schema key of a declaration (type, default, range, enum choices, extra check).
Key to_key(const core::ParamSpec& spec);

/// The concrete path of a list item's key: ("vms[].workload.port", 1) -> "vms.1.workload.port".
/// Throws std::logic_error for a path without "[]".
std::string item_path(const std::string& pattern, std::size_t index);

/// The schema keys of a whole declaration list, in its order.
template <typename S>
std::vector<Key> keys_of(const std::vector<core::Param<S>>& params) {
  std::vector<Key> keys;
  for (const auto& p : params) keys.push_back(to_key(p.spec()));
  return keys;
}

/// Sets one member; a value the member's C++ type cannot hold is a ConfigError naming the key.
template <typename S>
void set_checked(const Config& cfg, const core::Param<S>& p, const std::string& path, S& s) {
  try {
    p.set(s, cfg.value(path));
  } catch (const std::out_of_range& e) {
    throw ConfigError(cfg.where(path), path, e.what());
  }
}

/// Sets every declared member of `s` from the scenario.
template <typename S>
void fill(const Config& cfg, const std::vector<core::Param<S>>& params, S& s) {
  for (const auto& p : params) set_checked(cfg, p, p.spec().path, s);
}

/// Sets every declared member of `s` from item `index` of a list: a declaration of
/// "vms[].workload.port" reads "vms.<index>.workload.port".
template <typename S>
void fill_item(const Config& cfg, const std::vector<core::Param<S>>& params, std::size_t index,
               S& s) {
  for (const auto& p : params) set_checked(cfg, p, item_path(p.spec().path, index), s);
}

}  // namespace vtoe::config
