#include "app/iss_caches.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>

namespace vtoe::app {

namespace {
double rate(std::uint64_t misses, std::uint64_t accesses) {
  return accesses
             ? std::round(static_cast<double>(misses) / static_cast<double>(accesses) * 1e6) / 1e6
             : 0.0;
}
double r6(double v) { return std::round(v * 1e6) / 1e6; }
double r9(double v) { return std::round(v * 1e9) / 1e9; }  // ns: the stall beside the cycles
double wall_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double user_now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec) * 1e-6;
}
}  // namespace

HostClock::HostClock() : wall0_(wall_now()), user0_(user_now()) {}

nlohmann::ordered_json HostClock::since(double sim_s) const {
  const double wall = wall_now() - wall0_, user = user_now() - user0_;
  return {{"wall_s", r6(wall)},
          {"user_s", r6(user)},
          {"sim_s", r6(sim_s)},
          {"sim_seconds_per_wall_second", wall > 0 ? r6(sim_s / wall) : 0.0},
          {"sim_seconds_per_user_second", user > 0 ? r6(sim_s / user) : 0.0}};
}

CacheCounts cache_counts(platform::system::SystemPlatform& p) {
  CacheCounts c;
  const cpu::iss::L1Caches* l1 = p.cpu().caches();
  if (!l1) return c;
  const cpu::iss::Cache& i = l1->icache();
  const cpu::iss::Cache& d = l1->dcache();
  c.i_accesses = i.accesses();
  c.i_misses = i.misses();
  c.d_reads = d.reads();
  c.d_writes = d.writes();
  c.d_read_misses = d.read_misses();
  c.d_write_misses = d.write_misses();
  c.write_backs = l1->write_backs();
  c.snoop_invalidations = d.snoop_invalidations();
  c.snoop_cleans = d.snoop_cleans();
  c.stall = p.cpu().miss_stall();
  c.stall_user = p.cpu().miss_stall_user();
  c.ram_busy_ps = p.ram().busy_ps();
  return c;
}

nlohmann::ordered_json caches_json(const platform::system::SystemConfig& c, const CacheCounts& a,
                                   const CacheCounts& b, double window_s) {
  nlohmann::ordered_json j;
  j["enabled"] = c.caches;
  if (!c.caches) return j;
  const std::uint64_t i_acc = b.i_accesses - a.i_accesses, i_miss = b.i_misses - a.i_misses;
  j["icache"] = {{"size", c.icache.size}, {"ways", c.icache.ways},
                 {"line", c.icache.line}, {"accesses", i_acc},
                 {"misses", i_miss},      {"miss_rate", rate(i_miss, i_acc)}};
  const std::uint64_t reads = b.d_reads - a.d_reads, writes = b.d_writes - a.d_writes;
  const std::uint64_t rm = b.d_read_misses - a.d_read_misses,
                      wm = b.d_write_misses - a.d_write_misses;
  j["dcache"] = {{"size", c.dcache.size},
                 {"ways", c.dcache.ways},
                 {"line", c.dcache.line},
                 {"reads", reads},
                 {"writes", writes},
                 {"read_misses", rm},
                 {"write_misses", wm},
                 {"miss_rate", rate(rm + wm, reads + writes)},
                 {"write_backs", b.write_backs - a.write_backs},
                 {"snoop_invalidations", b.snoop_invalidations - a.snoop_invalidations},
                 {"snoop_cleans", b.snoop_cleans - a.snoop_cleans}};
  const double stall = (b.stall - a.stall).to_seconds();
  j["miss_stall_s"] = r9(stall);
  j["miss_stall_share"] = window_s > 0 ? r6(stall / window_s) : 0.0;
  j["miss_stall_user_s"] = r9((b.stall_user - a.stall_user).to_seconds());
  j["dram_utilisation"] =
      window_s > 0 ? r6(static_cast<double>(b.ram_busy_ps - a.ram_busy_ps) * 1e-12 / window_s)
                   : 0.0;
  return j;
}

}  // namespace vtoe::app
