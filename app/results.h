// results.json, one function per section. Every measured quantity is the difference of two
// snapshots of the models' typed counters: one at the end of warm-up, one at the end of the run.
// The models report through typed accessors; nothing here reads a statistic by name.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "models/core/histogram.h"
#include "platform/platform.h"

namespace vtoe::app {

// The platform's running totals at one instant.
struct Snapshot {
  // Per VM.
  std::vector<std::uint64_t> app_tx, app_rx, app_trans, app_lat, interrupts;
  std::vector<core::LogHistogram> app_latency;   // the application's latency histogram
  std::vector<core::LogHistogram> peer_latency;  // tcp_tx/tcp_rx with a simulated peer
  std::vector<core::LogHistogram> rtt;           // the TOE's RTT samples on the VM's connections
  std::vector<std::uint64_t> acked;  // payload the peers acknowledged from the VM's address
  std::vector<hypervisor::ExitCounts> exits;
  std::vector<hypervisor::CreditVmStats> sched;
  // The TOE: payload moved to and from hosts, and what its MAC put on the wire.
  std::uint64_t toe_tx = 0, toe_rx = 0;
  std::uint64_t mac_tx_frames = 0, mac_tx_bytes = 0, mac_rx_frames = 0, mac_rx_bytes = 0;
  core::TimePs ppm_tx_busy = 0, ppm_rx_busy = 0;  // PPM engine time used
  // Per TOE channel.
  std::vector<std::uint64_t> channel_tx, channel_rx, channel_contexts, channel_completions;
};

// Takes a snapshot; brings the credit scheduler's accounting up to now first.
Snapshot take_snapshot(platform::Platform& p);

// The window between `base` and `now`, `measured_s` long, as results.json presents it.
struct Window {
  const Snapshot& base;
  const Snapshot& now;
  double measured_s;
};

// The sections, in results.json's order.
nlohmann::ordered_json run_section(platform::Platform& p, double measured_s);  // top-level facts
nlohmann::ordered_json vms_section(platform::Platform& p, const Window& w);
nlohmann::ordered_json toe_section(platform::Platform& p, const Window& w);
nlohmann::ordered_json channels_section(platform::Platform& p, const Window& w);
nlohmann::ordered_json links_section(platform::Platform& p, double measured_s);
nlohmann::ordered_json peer_section(platform::Platform& p);  // null with NetVP (no peer)
nlohmann::ordered_json stats_section(platform::Platform& p);

// results.json's whole content for a run whose warm-up ended at `base`.
nlohmann::ordered_json collect(platform::Platform& p, const Snapshot& base, double measured_s);

}  // namespace vtoe::app
