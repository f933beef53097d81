#include "app/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "models/core/tracer.h"
#include "platform/platform.h"

namespace vtoe::app {

using nlohmann::ordered_json;

namespace {

// Results carry a fixed number of decimals so that files diff cleanly.
double rounded(double v, int decimals = 4) {
  const double f = std::pow(10.0, decimals);
  return std::round(v * f) / f;
}

double mbps(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) * 8.0 / seconds / 1e6 : 0.0;
}

struct Snapshot {
  std::vector<std::uint64_t> app_tx, app_rx, app_trans, app_lat;
  std::vector<hypervisor::ExitCounts> exits;
  std::vector<hypervisor::CreditVmStats> sched;
  std::uint64_t toe_tx = 0, toe_rx = 0;
  std::vector<std::uint64_t> channel_tx, channel_rx;
};

Snapshot snapshot(Platform& p) {
  Snapshot s;
  for (std::size_t i = 0; i < p.vm_count(); ++i) {
    const auto& c = p.guest(i).apps().front()->counters();
    s.app_tx.push_back(c.tx_bytes);
    s.app_rx.push_back(c.rx_bytes);
    s.app_trans.push_back(c.transactions);
    s.app_lat.push_back(c.latency_sum_ps);
    s.exits.push_back(p.hypervisor() ? p.hypervisor()->exits(static_cast<int>(i))
                                     : hypervisor::ExitCounts{});
    if (hypervisor::Hypervisor* hyp = p.hypervisor()) {
      hyp->scheduler().advance(core::now_ps());
      s.sched.push_back(hyp->scheduler().stats().vm.at(i));
    }
  }
  s.toe_tx = p.toe().tx_bytes();
  s.toe_rx = p.toe().rx_bytes();
  for (int c = 0; c < p.toe().channel_count(); ++c) {
    s.channel_tx.push_back(p.toe().tx_dma().bytes(c));
    s.channel_rx.push_back(p.toe().rx_dma().bytes(c));
  }
  return s;
}

ordered_json collect(Platform& p, const Snapshot& base, double measured_s) {
  const Config& cfg = p.config();
  const Snapshot now = snapshot(p);
  ordered_json r;
  r["vtoe_version"] = version_string();
  r["architecture"] = cfg.get_string("architecture");
  r["seed"] = cfg.get_uint("seed");
  r["sim_time_s"] = rounded(static_cast<double>(core::now_ps()) / 1e12, 9);
  r["measured_s"] = rounded(measured_s, 9);

  cpu::Core& core = p.core();
  const double total = static_cast<double>(core.accounted_ps());
  const double idle = total > 0 ? static_cast<double>(core.idle_ps()) / total : 0;
  ordered_json vms = ordered_json::array();
  for (std::size_t i = 0; i < p.vm_count(); ++i) {
    const auto& app = *p.guest(i).apps().front();
    ordered_json v;
    v["name"] = p.vm_name(i);
    v["workload"] = guest::to_string(app.workload().type);
    v["message_size"] = app.workload().message_size;
    v["tx_mbps"] = rounded(mbps(now.app_tx[i] - base.app_tx[i], measured_s));
    v["rx_mbps"] = rounded(mbps(now.app_rx[i] - base.app_rx[i], measured_s));
    const std::uint64_t trans = now.app_trans[i] - base.app_trans[i];
    v["transactions"] = trans;
    v["mean_latency_us"] =
        trans ? rounded(static_cast<double>(now.app_lat[i] - base.app_lat[i]) / trans / 1e6) : 0.0;
    ordered_json c;
    const int owner = static_cast<int>(i);
    auto frac = [&](cpu::CycleClass cls) {
      return total > 0 ? rounded(static_cast<double>(core.busy_ps(owner, cls)) / total, 6) : 0.0;
    };
    c["guest_user"] = frac(cpu::CycleClass::GuestUser);
    c["guest_kernel"] = frac(cpu::CycleClass::GuestKernel);
    c["hypervisor"] = frac(cpu::CycleClass::Hypervisor);
    c["idle"] = rounded(idle, 6);
    v["cpu"] = c;
    v["interrupts"] = p.guest(i).driver().stats().counter("interrupts").measured();
    ordered_json exits;
    if (hypervisor::Hypervisor* hyp = p.hypervisor()) {
      const hypervisor::ExitCounts& e = hyp->exits(owner);
      const hypervisor::ExitCounts& b = base.exits[i];
      exits["data_abort"] = e.data_abort - b.data_abort;
      exits["irq"] = e.irq - b.irq;
      exits["wfi"] = e.wfi - b.wfi;
      exits["hvc"] = e.hvc - b.hvc;
      exits["timer"] = e.timer - b.timer;
    } else {
      for (const char* k : {"data_abort", "irq", "wfi", "hvc", "timer"}) exits[k] = 0;
    }
    v["vm_exits"] = exits;
    if (p.hypervisor()) {
      // The credit scheduler's view of the VM over the measured window.
      const hypervisor::CreditVmStats& a = base.sched[i];
      const hypervisor::CreditVmStats& b = now.sched[i];
      const std::uint64_t waits = b.wake_to_run_count - a.wake_to_run_count;
      v["scheduler"] = {
          {"run_ms", rounded(static_cast<double>(b.run_ps - a.run_ps) / 1e9)},
          {"picks", b.picks - a.picks},
          {"boosts", b.boosts - a.boosts},
          {"tickles", b.tickles - a.tickles},
          {"preempted", b.preempted - a.preempted},
          {"wake_to_run_mean_us",
           waits ? rounded(static_cast<double>(b.wake_to_run_total_ps - a.wake_to_run_total_ps) /
                           static_cast<double>(waits) / 1e6)
                 : 0.0}};
    }
    v["channel"] = p.channel_of(i);
    v["direct_access"] = p.direct(i);
    v["error"] = app.counters().failed ? app.counters().error : "";
    vms.push_back(v);
  }
  r["vms"] = vms;

  ordered_json t;
  t["tx_mbps"] = rounded(mbps(now.toe_tx - base.toe_tx, measured_s));
  t["rx_mbps"] = rounded(mbps(now.toe_rx - base.toe_rx, measured_s));
  // Share of the line rate the TOE's MAC kept busy sending (frames with preamble, FCS, gap).
  net::EthernetMac& mac = p.toe().mac();
  const double wire_bytes = static_cast<double>(mac.stats().counter("tx_bytes").measured()) +
                            static_cast<double>(mac.stats().counter("tx_frames").measured()) *
                                net::EthernetMac::kOverhead;
  // Frames are counted whole when they end, so a window can see a little over 100%: clamp.
  t["utilization"] = rounded(
      measured_s > 0 ? std::min(1.0, wire_bytes * 8 / (mac.params().rate_bps * measured_s)) : 0, 6);
  t["dram_utilisation"] =
      rounded(p.dram().utilisation(static_cast<core::TimePs>(measured_s * 1e12)), 6);
  r["toe"] = t;

  ordered_json channels = ordered_json::array();
  for (int c = 0; c < p.toe().channel_count(); ++c) {
    toe::ControlChannel& ch = p.toe().channel(c);
    ordered_json j;
    j["index"] = c;
    // Who drives the channel: one VM directly, the hypervisor (device emulation), or nobody.
    std::string owner = "unused";
    for (std::size_t i = 0; i < p.vm_count(); ++i)
      if (p.channel_of(i) == c) owner = p.direct(i) ? p.vm_name(i) : std::string("hypervisor");
    j["owner"] = owner;
    j["contexts"] = ch.stats().counter("contexts_fetched").measured();
    j["completions"] = ch.stats().counter("completions").measured();
    j["tx_mbps"] = rounded(mbps(now.channel_tx[c] - base.channel_tx[c], measured_s));
    j["rx_mbps"] = rounded(mbps(now.channel_rx[c] - base.channel_rx[c], measured_s));
    const core::Accumulator& occ = ch.stats().accumulator("sendq_occupancy");
    j["sendq_occupancy"] = {{"mean", rounded(occ.mean())}, {"max", rounded(occ.max())}};
    channels.push_back(j);
  }
  r["channels"] = channels;

  ordered_json links = ordered_json::array();
  if (p.netvp()) {
    // The bridge to the real interface stands where the simulated link would.
    links.push_back({{"name", "netvp"},
                     {"frames", p.netvp_port().to_wire() + p.netvp_port().from_wire()},
                     {"to_wire", p.netvp_port().to_wire()},
                     {"from_wire", p.netvp_port().from_wire()},
                     {"drops", p.raw_socket().queue_drops()}});
  } else {
    net::EthernetLink& l = p.link();
    links.push_back(
        {{"name", "link0"}, {"frames", l.frames()}, {"bytes", l.bytes()}, {"drops", l.drops()}});
  }
  r["links"] = links;

  if (!p.netvp()) {
    ordered_json peer;
    peer["rx_bytes"] = p.peer().bytes_received();
    peer["tx_bytes"] = p.peer().bytes_sent();
    peer["pattern_errors"] = p.peer().pattern_errors();
    r["peer"] = peer;
  }

  // Every module's counters over the measured window, for whoever wants to dig.
  ordered_json stats;
  for (const core::StatGroup* g : core::StatRegistry::instance().groups()) {
    ordered_json gs;
    for (const auto& e : g->counters()) gs[e.name] = e.counter->measured();
    for (const auto& e : g->accumulators()) {
      gs[e.name] = {{"mean", rounded(e.acc->mean())},
                    {"max", rounded(e.acc->max())},
                    {"samples", e.acc->count()}};
    }
    if (!gs.empty()) stats[g->name()] = gs;
  }
  // The protocol engines' own counters (whole run: they have no warm-up baseline).
  auto tcp_stats = [](const tcpip::Stack& stack) {
    ordered_json j;
    stack.stats().for_each(
        [&](std::string_view name, std::uint64_t v) { j[std::string(name)] = v; });
    return j;
  };
  stats["toe.ppm.tcpip"] = tcp_stats(p.toe().ppm().stack());
  if (!p.netvp()) stats["peer.tcpip"] = tcp_stats(p.peer().stack());
  r["stats"] = stats;
  return r;
}

}  // namespace

ordered_json simulate(const Config& cfg, const std::string& pcap_dir, const std::string& trace_path,
                      const RunOptions* options, ordered_json* run_info) {
  const core::TimePs duration = cfg.get_time("duration");
  const core::TimePs warmup = cfg.get_time("warmup");
  if (!trace_path.empty()) {
    core::TimePs from = warmup, to = warmup + 10'000'000'000ull;  // 10 ms after warm-up
    if (options && options->trace_to_ps) {
      from = options->trace_from_ps;
      to = options->trace_to_ps;
    }
    core::Tracer::instance().enable(from, std::min(to, duration));
  }
  Platform platform(cfg);
  if (!pcap_dir.empty()) platform.enable_pcap(pcap_dir);
  if (warmup) sc_core::sc_start(core::ps(warmup));
  const Snapshot base = snapshot(platform);
  platform.mark_baseline();
  sc_core::sc_start(core::ps(duration - warmup));
  ordered_json results = collect(platform, base, static_cast<double>(duration - warmup) / 1e12);
  if (platform.netvp() && run_info) {
    // Wall-clock facts of a real-time run: they belong in run.json, not results.json.
    netvp::Pacer& pacer = platform.pacer();
    (*run_info)["pacing"] = {{"max_lag_us", pacer.max_lag_us()},
                             {"mean_lag_us", pacer.mean_lag_us()},
                             {"late_ticks", pacer.late_ticks()},
                             {"ticks", pacer.ticks()},
                             {"slept_s", pacer.slept_s()},
                             {"wire_queue_drops", platform.raw_socket().queue_drops()},
                             {"stopped", pacer.failure()}};
  }
  if (platform.netvp() && !platform.pacer().failure().empty())
    throw std::runtime_error(platform.pacer().failure());
  if (!trace_path.empty()) {
    platform.core().flush_trace();
    core::Tracer::instance().write(trace_path);
  }
  return results;
}

int run_scenario(const Config& cfg, const RunOptions& options) {
  core::Logger::set_default_level(options.log_level);
  namespace fs = std::filesystem;
  const std::string dir = options.out_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::cerr << "vtoe: cannot create output directory '" << dir << "': " << ec.message() << "\n";
    return kExitFailure;
  }
  const auto t0 = std::chrono::steady_clock::now();
  ordered_json run;
  const ordered_json results = simulate(cfg, options.pcap ? dir : "",
                                        options.trace ? dir + "/trace.json" : "", &options, &run);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double sim_s = results["sim_time_s"].get<double>();

  std::ofstream(dir + "/results.json") << results.dump(2) << "\n";
  std::ofstream(dir + "/scenario.yaml") << cfg.resolved_yaml();
  run["scenario"] = options.scenario.empty() ? "(built-in default)" : options.scenario;
  run["wall_s"] = wall;
  run["sim_s"] = sim_s;
  run["sim_seconds_per_wall_second"] = wall > 0 ? sim_s / wall : 0.0;
  std::ofstream(dir + "/run.json") << run.dump(2) << "\n";

  if (!options.quiet) {
    std::ostringstream out;
    out << "vtoe " << version_string() << ": "
        << (options.scenario.empty() ? "built-in default scenario" : options.scenario)
        << ", architecture " << results["architecture"].get<std::string>() << ", seed "
        << results["seed"] << "\n";
    out << "simulated " << sim_s << " s (measured " << results["measured_s"].get<double>()
        << " s after warm-up) in " << std::fixed << std::setprecision(2) << wall << " s wall ("
        << (wall > 0 ? sim_s / wall : 0) << " sim s per wall s)\n\n";
    out << std::left << std::setw(10) << "vm" << std::setw(9) << "workload" << std::right
        << std::setw(8) << "msg B" << std::setw(11) << "tx Mbit/s" << std::setw(11) << "rx Mbit/s"
        << std::setw(8) << "user" << std::setw(8) << "kernel" << std::setw(8) << "hyp"
        << std::setw(8) << "idle"
        << "\n";
    for (const auto& v : results["vms"]) {
      const auto& c = v["cpu"];
      out << std::left << std::setw(10) << v["name"].get<std::string>() << std::setw(9)
          << v["workload"].get<std::string>() << std::right << std::setw(8)
          << v["message_size"].get<int>() << std::setw(11) << std::setprecision(1)
          << v["tx_mbps"].get<double>() << std::setw(11) << v["rx_mbps"].get<double>();
      for (const char* k : {"guest_user", "guest_kernel", "hypervisor", "idle"})
        out << std::setw(7) << std::setprecision(1) << c[k].get<double>() * 100 << "%";
      out << "\n";
      if (!v["error"].get<std::string>().empty())
        out << "  error: " << v["error"].get<std::string>() << "\n";
    }
    out << "\nTOE: tx " << std::setprecision(1) << results["toe"]["tx_mbps"].get<double>()
        << " Mbit/s, rx " << results["toe"]["rx_mbps"].get<double>() << " Mbit/s; "
        << results["links"][0]["name"].get<std::string>() << ": " << results["links"][0]["frames"]
        << " frames, " << results["links"][0]["drops"] << " dropped\n";
    out << "results: " << dir << "/results.json"
        << (options.pcap ? ", capture: " + dir + "/link0.pcap" : "")
        << (options.trace ? ", timeline: " + dir + "/trace.json (open in ui.perfetto.dev)" : "")
        << "\n";
    std::cout << out.str();
  }
  return 0;
}

}  // namespace vtoe::app
