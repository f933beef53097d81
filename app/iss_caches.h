// The "caches" object of results.json's "iss" section (platform.cpu_model=iss): the core's
// level-1 caches' counts over the measured window (docs/caches.md); and the host time the run
// takes after Linux's boot (run.json's "after_boot").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <systemc>

#include "platform/system/system_platform.h"

namespace vtoe::app {

// Host wall-clock and user CPU time from construction: since(sim_s) gives {wall_s, user_s,
// sim_s, sim_seconds_per_wall_second} for run.json (the ISS's speed after Linux's boot).
class HostClock {
 public:
  HostClock();
  nlohmann::ordered_json since(double sim_s) const;

 private:
  double wall0_, user0_;
};

// The counters at one instant (differences make the window's).
struct CacheCounts {
  std::uint64_t i_accesses = 0, i_misses = 0;
  std::uint64_t d_reads = 0, d_writes = 0, d_read_misses = 0, d_write_misses = 0;
  std::uint64_t write_backs = 0, snoop_invalidations = 0, snoop_cleans = 0;
  sc_core::sc_time stall, stall_user;
  std::uint64_t ram_busy_ps = 0;
};

CacheCounts cache_counts(platform::system::SystemPlatform& p);

// {"enabled": false} without caches; else the geometry, accesses, misses and miss rates, the
// write-backs, the DMA's snoops, the core's wait for fills and write-backs (miss_stall_s, and
// its share of the window) and the DRAM's data-bus utilisation.
nlohmann::ordered_json caches_json(const platform::system::SystemConfig& c, const CacheCounts& a,
                                   const CacheCounts& b, double window_s);

}  // namespace vtoe::app
