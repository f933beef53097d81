// `vtoe run` with platform.cpu_model=iss: the scenario's host is Debian's Linux on the ISS
// (platform/system), driving the TOE through target/'s module and applications. Linux boots, its
// /init loads the module and starts the workload the scenario names (the kernel command line's
// vtoe_run); `warmup` and `duration` count from that start. results.json has the annotated
// model's fields where they mean the same, the CPU counted from the ISS (user, kernel, idle in
// WFI) and an "iss" section (instructions and cycles by mode, per TOE command and per interrupt,
// the stated timing). docs/iss-mode.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "app/cli.h"
#include "config/config.h"

namespace vtoe::app {

// ConfigError naming the key for what the ISS model does not run yet (de/da, more than one
// core or VM, topologies, NetVP, the workloads target/apps has no program for).
void check_iss_scenario(const config::Config& cfg);

// Boots, runs the workload through the window and returns results.json's content; the guest's
// console goes to `console_path` (none when empty). Throws std::runtime_error, with the console's
// last lines, when Linux or the workload does not get there.
nlohmann::ordered_json simulate_iss(const config::Config& cfg, const std::string& console_path,
                                    const RunOptions* options, nlohmann::ordered_json* run_info);

}  // namespace vtoe::app
