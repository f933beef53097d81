// Which build produced a run: the source tree's `git describe` at build time and a hash of the
// binary itself. run.json and every sweep point carry them, so a sweep (or `make paper`) can tell
// results of another build from its own and rerun them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace vtoe::app {

// Version of the layout of results.json and run.json; raised (and noted in docs/user-guide.md)
// whenever a key is renamed, moved or removed.
inline constexpr int kResultsSchemaVersion = 2;

std::string git_describe();  // generated at build time (cmake/git_describe.cmake)
// "gnu-build-id:<hex>", the linker's build ID of the running binary, or (when it has none)
// "fnv1a64:<16 hex digits>", a hash of /proc/self/exe; computed once.
std::string binary_id();
// {"version", "git", "binary"}.
nlohmann::ordered_json build_identity();

}  // namespace vtoe::app
