// Runs one scenario: builds the platform, simulates warm-up then the measured window, and writes
// DIR/results.json (deterministic: only simulated quantities), DIR/run.json (wall-clock time and
// speed), DIR/scenario.yaml (the resolved scenario) and, when asked, one pcap per link.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "app/cli.h"
#include "config/config.h"
#include "platform/platform.h"

namespace vtoe::app {

using config::Config;
using config::ConfigError;
using platform::Platform;

// Entry point used by `vtoe run`; returns the process exit status.
int run_scenario(const Config& cfg, const RunOptions& options);

// `vtoe validate`'s platform checks: builds the platform (elaborates, simulates nothing), so that
// every error `vtoe run` would give at start-up comes out here too. Throws ConfigError.
void check_scenario(const Config& cfg);

// Builds, simulates and returns results.json's content (no files, no output). With `trace_path`,
// also writes the timeline trace of the window options give.
nlohmann::ordered_json simulate(const Config& cfg, const std::string& pcap_dir = "",
                                const std::string& trace_path = "",
                                const RunOptions* options = nullptr,
                                nlohmann::ordered_json* run_info = nullptr);

}  // namespace vtoe::app
