#include "app/runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "app/build_info.h"
#include "app/iss_platform_runner.h"
#include "app/progress.h"
#include "app/results.h"
#include "app/stop_on_signal.h"
#include "app/timeseries.h"
#include "app/waveform.h"
#include "models/core/tracer.h"
#include "models/net/pcap_writer.h"
#include "platform/platform.h"

namespace vtoe::app {

using nlohmann::ordered_json;

namespace {

// "" while no signal came, else "stopped by SIGINT at 0.042 s of simulated time".
std::string stopped_by_signal() {
  if (StopOnSignal::signal_number() == 0) return "";
  std::ostringstream m;
  m << "stopped by " << StopOnSignal::signal_name() << " at "
    << static_cast<double>(core::now_ps()) / 1e12 << " s of simulated time";
  return m.str();
}

// Without a time series, the runner still steps the kernel this often to see a signal or show
// progress (the kernel resumes exactly where it paused: results do not depend on the steps).
constexpr core::TimePs kControlStep = core::kPsPerMs;
// Counter tracks of a timeline trace without stats_interval: a value every 100 us.
constexpr core::TimePs kTraceCounterStep = 100 * core::kPsPerUs;
// How often --vcd's probe reads the queues, the link and the scheduler.
constexpr core::TimePs kVcdPeriod = core::kPsPerUs;

// Bytes each VM's application moved so far (a plain read: nothing in the models is touched).
std::vector<std::uint64_t> app_bytes(Platform& p) {
  std::vector<std::uint64_t> v;
  for (std::size_t i = 0; i < p.vm_count(); ++i) {
    const guest::AppCounters c = p.guest(i).counters();
    v.push_back(c.tx_bytes + c.rx_bytes);
  }
  return v;
}

// Results that an average hides: a window shorter than a few VM switch intervals, or a VM whose
// throughput differs strongly between the two halves of the window.
std::vector<std::string> stability_warnings(Platform& p, const Config& cfg, core::TimePs window,
                                            const std::vector<std::uint64_t>& start,
                                            const std::vector<std::uint64_t>& mid,
                                            const std::vector<std::uint64_t>& end) {
  std::vector<std::string> w;
  const double half_s = static_cast<double>(window) / 2e12;
  if (p.hypervisor() && p.vm_count() > 1) {
    // VMs that share the core take turns in slices; over a few slices the turns do not even out
    // (two CPU-bound VMs in 90 ms get one and two 30 ms slices: 1:2, not 1:1).
    const core::TimePs slice = cfg.get_time("hypervisor.scheduler.timeslice");
    if (window < 10 * slice)
      w.push_back("the measured window (" + std::to_string(window / core::kPsPerMs) +
                  " ms) is shorter than ten VM switch intervals (hypervisor.scheduler.timeslice " +
                  std::to_string(slice / core::kPsPerMs) +
                  " ms): how the VMs share the core depends on where the switches fall; raise "
                  "duration");
  }
  for (std::size_t i = 0; i < p.vm_count(); ++i) {
    const double a = static_cast<double>(mid[i] - start[i]) * 8 / half_s / 1e6;
    const double b = static_cast<double>(end[i] - mid[i]) * 8 / half_s / 1e6;
    const double hi = std::max(a, b);
    if (hi > 1.0 && std::abs(a - b) > 0.2 * hi) {
      std::ostringstream m;
      m << std::fixed << std::setprecision(1) << "vm " << p.vm_name(i)
        << ": throughput differs between the halves of the measured window (" << a << " vs " << b
        << " Mbit/s): the average hides it (a run too short to settle, or a workload that starts "
           "or stops inside the window)";
      w.push_back(m.str());
    }
  }
  return w;
}

// The words of a warning about an output that reached its bound; printed even under --quiet.
const std::string kCaptureFull = "reached its bound";

// One warning per capture that reached its size bound ("link0.pcap reached its bound of ...").
std::vector<std::string> capture_warnings() {
  std::vector<std::string> w;
  for (const net::PcapWriter* pcap : net::PcapWriter::open_writers()) {
    if (pcap->left_out() == 0) continue;
    std::ostringstream m;
    m << pcap->path() << " " << kCaptureFull << " of " << pcap->max_bytes()
      << " bytes (--pcap-limit) at " << std::fixed << std::setprecision(6)
      << static_cast<double>(pcap->full_at_ns()) / 1e9
      << (pcap->wall_clock() ? " s (Unix time)" : " s of simulated time") << ": the "
      << pcap->left_out()
      << " frames after that are not in it (raise --pcap-limit, or keep less of each frame "
         "with --pcap-snaplen)";
    w.push_back(m.str());
  }
  return w;
}

void warnings_out(ordered_json* run_info, const std::string& w) {
  if (run_info) (*run_info)["warnings"].push_back(w);
}

// The words of a no-progress warning; printed even under --quiet.
const std::string kNoProgress = "no progress in the measured window";

// What each VM's workload has achieved so far: payload its peers acknowledged (over shared
// memory, what it wrote into its ring), bytes it received, and transactions it completed (rpc
// requests, flows, connections). A plain read, like app_bytes().
std::vector<std::uint64_t> progress_counts(Platform& p) {
  std::vector<std::uint64_t> v;
  for (std::size_t i = 0; i < p.vm_count(); ++i) {
    const guest::AppCounters c = p.guest(i).counters();
    const bool shm = p.guest(i).apps().front()->workload().path == guest::Path::Shm;
    const std::uint64_t acked =
        shm ? c.tx_bytes : p.toe().ppm().stack().bytes_acked_from(p.vm_address(i));
    v.push_back(acked + c.rx_bytes + c.transactions);
  }
  return v;
}

// Whether VM `i`'s workload should have moved something between `from` and `to`: one that talks
// (not a server waiting for clients, not cpu), runs in that span, has not finished its quota
// before it (total_bytes, flows), and does not say expect_progress: false.
bool expects_progress(Platform& p, std::size_t i, core::TimePs from, core::TimePs to) {
  using guest::WorkloadType;
  const guest::Workload& w = p.guest(i).apps().front()->workload();
  const bool talks = w.type == WorkloadType::TcpTx || w.type == WorkloadType::TcpRx ||
                     w.type == WorkloadType::Rpc || w.type == WorkloadType::Flows ||
                     w.type == WorkloadType::Connect;
  if (!talks || !w.expect_progress) return false;
  if (w.start_ps >= to || (w.stop_ps != 0 && w.stop_ps <= from)) return false;
  const guest::AppCounters c = p.guest(i).counters();
  if (w.total_bytes != 0 && c.tx_bytes + c.rx_bytes >= w.total_bytes) return false;
  if (w.flows != 0 && c.transactions >= w.flows) return false;
  return true;
}

// The VMs whose workload should have moved something in the measured window and did not,
// as one warning each ("vm vm0 (tcp_tx): ..."); `stalled[i]` set for them.
std::vector<std::string> progress_warnings(Platform& p, const std::vector<bool>& expected,
                                           const std::vector<std::uint64_t>& start,
                                           const std::vector<std::uint64_t>& end,
                                           std::vector<bool>& stalled) {
  std::vector<std::string> w;
  stalled.assign(p.vm_count(), false);
  for (std::size_t i = 0; i < p.vm_count(); ++i) {
    if (!expected[i] || end[i] != start[i]) continue;
    stalled[i] = true;
    const guest::AppCounters c = p.guest(i).counters();
    std::string m = "vm " + p.vm_name(i) + " (" +
                    guest::to_string(p.guest(i).apps().front()->workload().type) +
                    "): " + kNoProgress + " (no byte delivered, no transaction completed)";
    if (!c.error.empty()) m += ": " + c.error;
    m += "; set vms." + std::to_string(i) +
         ".workload.expect_progress=false if that is what the scenario means";
    w.push_back(m);
  }
  return w;
}

}  // namespace

void check_scenario(const Config& cfg) {
  check_iss_scenario(cfg);  // what platform.cpu_model=iss does not run yet
  const Platform platform(cfg);
}

ordered_json simulate(const Config& cfg, const std::string& pcap_dir, const std::string& trace_path,
                      const RunOptions* options, ordered_json* run_info) {
  if (cfg.get_string("platform.cpu_model") == "iss")  // Linux on the ISS drives the TOE
    return simulate_iss(
        cfg, options && !options->out_dir.empty() ? options->out_dir + "/console.log" : "", options,
        run_info);
  const core::TimePs duration = cfg.get_time("duration");
  const core::TimePs warmup = cfg.get_time("warmup");
  if (!trace_path.empty()) {
    core::TimePs from = warmup, to = warmup + 10'000'000'000ull;  // 10 ms after warm-up
    if (options && options->trace_to_ps) {
      from = options->trace_from_ps;
      to = options->trace_to_ps;
    }
    core::Tracer::instance().enable(from, std::min(to, duration),
                                    options ? options->trace_limit : 0);
  }
  // Captures are bounded (docs/net.md): the limits hold for the writers the platform opens.
  net::PcapLimits pcap_limits;
  if (options) {
    pcap_limits = {options->pcap_snaplen, options->pcap_limit, options->pcap_from_ps,
                   options->pcap_to_ps};
    pcap_limits.pcapng = options->pcapng;
  }
  net::PcapWriter::set_limits(pcap_limits);
  Platform platform(cfg);
  if (!pcap_dir.empty()) {
    const std::vector<std::string> links = platform.link_names();
    if (options)
      for (const std::string& name : options->pcap_links)
        if (std::find(links.begin(), links.end(), name) == links.end()) {
          std::string known;
          for (const std::string& l : links) known += (known.empty() ? "" : ", ") + l;
          throw UsageError("--pcap=" + name + ": no link is named '" + name + "' (links: " + known +
                           ")");
        }
    platform.enable_pcap(pcap_dir, options ? options->pcap_links : std::vector<std::string>{});
  }
  std::unique_ptr<WaveformProbe> waveform;
  if (options && !options->vcd.empty())
    waveform = std::make_unique<WaveformProbe>(
        "waveform", platform, options->vcd, kVcdPeriod,
        VcdBounds{options->vcd_from_ps, options->vcd_to_ps, options->vcd_limit});
  // Ends the run at the next step, and asks the NetVP pacer to stop at its next tick.
  const StopOnSignal stop_on_signal(&netvp::Pacer::request_stop);
  // Ended by hand (SIGINT, SIGTERM; the NetVP pacer notices them too) or by the pacer's failure.
  auto interrupted = [&platform]() -> std::string {
    if (platform.netvp() && !platform.pacer().interrupted().empty())
      return platform.pacer().interrupted();
    return stopped_by_signal();
  };
  // The time series: DIR/timeseries.csv every stats_interval, and counter tracks in a trace.
  const core::TimePs stats_interval = cfg.get_time("stats_interval");
  const core::TimePs interval = stats_interval       ? stats_interval
                                : trace_path.empty() ? 0
                                                     : kTraceCounterStep;
  std::unique_ptr<TimeSeries> series;
  if (interval)
    series = std::make_unique<TimeSeries>(platform,
                                          stats_interval && options && !options->out_dir.empty()
                                              ? options->out_dir + "/timeseries.csv"
                                              : "",
                                          options ? options->stats_limit : 0);
  if (!trace_path.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < platform.vm_count(); ++i) names.push_back(platform.vm_name(i));
    core::Tracer::instance().set_vm_names(names);  // lanes named by VM name
    // A platform host's modules are named under the host: its VMs by their names too.
    if (platform::Topology* t = platform.topology())
      for (std::size_t h = 0; h < t->host_count(); ++h)
        if (platform::Platform* hp = t->platform_at(h)) {
          std::vector<std::string> host_names;
          for (std::size_t i = 0; i < hp->vm_count(); ++i) host_names.push_back(hp->vm_name(i));
          core::Tracer::instance().set_vm_names(host_names, t->host_name(h));
        }
  }
  Progress progress(duration, options && !options->quiet);
  // Runs the simulation for `span` in steps; between steps a signal ends it, the time series
  // takes a row (at multiples of the interval) and the progress line moves.
  const core::TimePs step = interval ? interval : kControlStep;
  auto run_for = [&](core::TimePs span) {
    const core::TimePs end = core::now_ps() + span;
    while (core::now_ps() < end && interrupted().empty() &&
           sc_core::sc_get_status() != sc_core::SC_STOPPED) {
      const core::TimePs next = std::min(end, (core::now_ps() / step + 1) * step);
      // A NetVP pacer waiting through a quiet time stops there.
      if (platform.netvp()) platform.pacer().set_end(next);
      sc_core::sc_start(core::ps(next - core::now_ps()));
      if (series && core::now_ps() % interval == 0) series->sample();
      progress.update(core::now_ps());
    }
  };
  if (warmup) run_for(warmup);
  if (!interrupted().empty())
    throw std::runtime_error(interrupted() + ", during the warm-up: no results");
  if (series) series->before_baseline();
  const Snapshot base = take_snapshot(platform);
  platform.mark_baseline();
  // The window runs in two halves so that a VM whose throughput changes inside it can be told
  // apart from a steady one.
  core::TimePs window = duration - warmup;
  const std::vector<std::uint64_t> start = app_bytes(platform);
  std::vector<bool> expected;
  for (std::size_t i = 0; i < platform.vm_count(); ++i)
    expected.push_back(expects_progress(platform, i, warmup, duration));
  const std::vector<std::uint64_t> progress_start = progress_counts(platform);
  run_for(window / 2);
  const std::vector<std::uint64_t> mid = app_bytes(platform);
  run_for(window - window / 2);
  const std::string stopped = interrupted();
  if (!stopped.empty()) {
    window = core::now_ps() - warmup;  // the rates cover what was simulated
    if (series) series->sample();      // the last, partial interval
  }
  ordered_json results = collect(platform, base, static_cast<double>(window) / 1e12);
  auto warnings = !stopped.empty()
                      ? std::vector<std::string>{}
                      : stability_warnings(platform, cfg, window, start, mid, app_bytes(platform));
  if (!stopped.empty() && !platform.netvp())
    warnings.push_back(stopped + " (duration " + cfg.get_text("duration") + ")" +
                       "; the results cover the measured window up to there");
  // A window cut short by a signal may end before anything could move: no verdict then.
  std::vector<bool> stalled(platform.vm_count(), false);
  if (stopped.empty())
    for (std::string& w :
         progress_warnings(platform, expected, progress_start, progress_counts(platform), stalled))
      warnings.push_back(std::move(w));
  for (std::size_t i = 0; i < platform.vm_count(); ++i)
    results["vms"][i]["no_progress"] = static_cast<bool>(stalled[i]);
  if (run_info) (*run_info)["warnings"] = warnings;
  if (platform.netvp() && run_info) {
    // Wall-clock facts of a real-time run: they belong in run.json, not results.json.
    netvp::Pacer& pacer = platform.pacer();
    (*run_info)["pacing"] = {{"max_lag_us", pacer.max_lag_us()},
                             {"mean_lag_us", pacer.mean_lag_us()},
                             {"late_ticks", pacer.late_ticks()},
                             {"ticks", pacer.ticks()},
                             {"slept_s", pacer.slept_s()},
                             {"idle_waits", pacer.idle_waits()},
                             {"wire_queue_drops", platform.raw_socket().queue_drops()},
                             {"wire_send_queue_drops", platform.netvp_port().send_queue_drops()},
                             {"wire_send_errors", platform.raw_socket().send_errors()},
                             {"stopped", !pacer.failure().empty() ? pacer.failure() : stopped}};
    // `stopped`: the pacer's words, or the runner's when the signal came between two steps.
    if (!stopped.empty())
      (*run_info)["warnings"].push_back("netvp: " + stopped + " of " + cfg.get_text("duration") +
                                        "; the results cover the measured window up to there");
    const netvp::IngressStats in = platform.raw_socket().ingress();
    (*run_info)["pcap_clock"] = "wall (Unix epoch): merge with a capture on the real hosts";
    (*run_info)["ingress"] = {{"checksums_completed", in.checksums_completed},
                              {"segmented", in.segmented},
                              {"segments", in.segments},
                              {"oversized_dropped", in.oversized_dropped}};
    // Frames lost for a reason the user can remove are said out loud.
    if (platform.raw_socket().queue_drops() > 0)
      (*run_info)["warnings"].push_back(
          "netvp: " + std::to_string(platform.raw_socket().queue_drops()) +
          " frames from the wire were dropped because the simulation fell behind (raise "
          "network.netvp.queue, or lighten the scenario so it keeps up with real time)");
    if (platform.netvp_port().send_queue_drops() > 0)
      (*run_info)["warnings"].push_back(
          "netvp: " + std::to_string(platform.netvp_port().send_queue_drops()) +
          " frames for the wire were dropped because the kernel took them more slowly than the "
          "simulation sent them (raise network.netvp.queue)");
    if (platform.raw_socket().send_errors() > 0)
      (*run_info)["warnings"].push_back("netvp: the kernel refused to send " +
                                        std::to_string(platform.raw_socket().send_errors()) +
                                        " frames on " + platform.raw_socket().interface() +
                                        " (is the interface up? is the MTU smaller than "
                                        "toe.mtu?)");
    if (in.oversized_dropped > 0)
      (*run_info)["warnings"].push_back(
          "netvp: " + std::to_string(in.oversized_dropped) +
          " frames longer than the MTU that are not TCP/IPv4 were dropped (turn off GSO/GRO on "
          "the interface: ethtool -K IF gso off gro off)");
  }
  for (const std::string& w : capture_warnings()) warnings_out(run_info, w);
  if (waveform) {
    const VcdWriter& vcd = waveform->finish();
    if (vcd.left_out() != 0) {
      std::ostringstream m;
      m << vcd.path() << " " << kCaptureFull << " of " << vcd.max_bytes()
        << " bytes (--vcd-limit) at " << std::fixed << std::setprecision(6)
        << static_cast<double>(vcd.full_at_ps()) / 1e12 << " s of simulated time: the "
        << vcd.left_out()
        << " value changes after that are not in it (raise --vcd-limit or narrow --vcd-window)";
      warnings_out(run_info, m.str());
    }
  }
  if (series && series->rows_left_out() != 0) {
    std::ostringstream m;
    m << options->out_dir << "/timeseries.csv " << kCaptureFull << " of " << options->stats_limit
      << " bytes (--stats-limit) at " << std::fixed << std::setprecision(6)
      << static_cast<double>(series->full_at_ps()) / 1e12 << " s of simulated time: the "
      << series->rows_left_out()
      << " rows after that are not in it (raise --stats-limit or the stats interval)";
    warnings_out(run_info, m.str());
  }
  if (platform.netvp() && !platform.pacer().failure().empty())
    throw std::runtime_error(platform.pacer().failure());
  if (!trace_path.empty()) {
    platform.core().flush_trace();
    core::Tracer& tracer = core::Tracer::instance();
    tracer.write(trace_path);
    if (tracer.left_out() != 0) {
      std::ostringstream m;
      m << trace_path << " " << kCaptureFull << " of " << tracer.events()
        << " events (--trace-limit) at " << std::fixed << std::setprecision(6)
        << static_cast<double>(tracer.full_at()) / 1e12 << " s of simulated time: the "
        << tracer.left_out()
        << " events after that are not in it (raise --trace-limit or narrow --trace-window)";
      warnings_out(run_info, m.str());
    }
  }
  return results;
}

namespace {

// --seeds N: each seed's run in a child process of its own (SystemC elaborates once per
// process), one after another, into DIR/seed-K; then DIR/seeds.json holds every numeric figure
// of results.json's vms, toe and links (CDF steps left out) as its minimum, mean and maximum
// over the seeds, and a table of the main ones is printed.
void numeric_leaves(const ordered_json& j, const std::string& path,
                    std::vector<std::pair<std::string, double>>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items())
      if (k != "cdf" && k != "each") numeric_leaves(v, path.empty() ? k : path + "." + k, out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      numeric_leaves(j[i], path + "." + std::to_string(i), out);
  } else if (j.is_number()) {
    out.emplace_back(path, j.get<double>());
  }
}

// Creates `dir` (and its parents); false, after saying why, when it cannot.
bool make_output_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec) return true;
  std::cerr << "vtoe: cannot create output directory '" << dir << "': " << ec.message() << "\n";
  return false;
}

int run_seeds(const RunOptions& options) {
  namespace fs = std::filesystem;
  const std::string dir = options.out_dir;
  std::error_code ec;
  if (!make_output_dir(dir)) return kExitFailure;
  int worst = 0;
  std::vector<ordered_json> results;
  ordered_json runs = ordered_json::array();
  for (std::uint32_t k = 1; k <= options.seeds; ++k) {
    RunOptions one = options;
    one.seeds = 0;
    one.quiet = true;
    one.out_dir = dir + "/seed-" + std::to_string(k);
    one.sets.push_back("seed=" + std::to_string(k));
    std::cout.flush();
    std::cerr.flush();
    const pid_t pid = fork();
    if (pid < 0) {
      std::cerr << "vtoe: --seeds: cannot start a run: " << std::strerror(errno) << "\n";
      return kExitFailure;
    }
    if (pid == 0) {
      int code = kExitFailure;
      try {
        const Config cfg = one.scenario.empty() ? Config::defaults(one.sets)
                                                : Config::load(one.scenario, one.sets);
        code = run_scenario(cfg, one);
      } catch (const std::exception& e) {
        std::cerr << "vtoe: seed " << k << ": " << e.what() << "\n";
      }
      std::cout.flush();
      std::cerr.flush();
      _exit(code);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && worst == 0) worst = code;
    if (!options.quiet)
      std::cout << "seed " << k << ": " << one.out_dir << (code ? " (exit " : "")
                << (code ? std::to_string(code) + ")" : "") << "\n";
    std::ifstream in(one.out_dir + "/results.json");
    if (in) {
      results.push_back(ordered_json::parse(in));
      runs.push_back({{"seed", k}, {"out", one.out_dir}, {"exit", code}});
    }
    if (code == 130 || code == 143) break;  // interrupted: no more seeds
  }
  // Each figure's spread over the seeds that wrote results.
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> values;
  for (const ordered_json& r : results) {
    std::vector<std::pair<std::string, double>> leaves;
    for (const char* section : {"vms", "toe", "links"})
      if (r.contains(section)) numeric_leaves(r[section], section, leaves);
    for (const auto& [path, v] : leaves) {
      auto [it, fresh] = values.emplace(path, std::vector<double>{});
      if (fresh) order.push_back(path);
      it->second.push_back(v);
    }
  }
  ordered_json spread;
  for (const std::string& path : order) {
    const std::vector<double>& v = values[path];
    double sum = 0;
    for (double x : v) sum += x;
    spread[path] = {{"min", *std::min_element(v.begin(), v.end())},
                    {"mean", sum / static_cast<double>(v.size())},
                    {"max", *std::max_element(v.begin(), v.end())},
                    {"runs", v.size()}};
  }
  ordered_json doc = {{"seeds", options.seeds}, {"runs", runs}, {"spread", spread}};
  std::ofstream(dir + "/seeds.json") << doc.dump(2) << "\n";
  if (!options.quiet) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(2);
    out << "\nover " << results.size() << " seeds (min / mean / max):\n";
    auto ends = [](const std::string& path, const char* tail) {
      const std::string t(tail);
      return path.size() > t.size() && path.compare(path.size() - t.size(), t.size(), t) == 0;
    };
    for (const std::string& path : order) {
      if (path.rfind("vms.", 0) != 0) continue;
      if (!(ends(path, ".tx_mbps") || ends(path, ".rx_mbps") || ends(path, ".transactions") ||
            ends(path, ".p50_us") || ends(path, ".p99_us")))
        continue;
      const ordered_json& s = spread[path];
      out << "  " << path << ": " << s["min"].get<double>() << " / " << s["mean"].get<double>()
          << " / " << s["max"].get<double>() << "\n";
    }
    out << "spread: " << dir << "/seeds.json\n";
    std::cout << out.str();
  }
  return worst;
}

}  // namespace

int run_scenario(const Config& cfg, const RunOptions& options) {
  if (options.seeds > 0) return run_seeds(options);
  core::Logger::set_default_level(options.log_level);
  // Messages reach SystemC's report handler; vtoe prints its own as one line each.
  sc_core::sc_report_handler::set_handler(core::compact_report_handler);
  sc_core::sc_report_handler::set_verbosity_level(core::verbosity_of(options.log_level));
  namespace fs = std::filesystem;
  const std::string dir = options.out_dir;
  std::error_code ec;
  if (!make_output_dir(dir)) return kExitFailure;
  if (options.trace && options.trace_to_ps && options.trace_from_ps >= cfg.get_time("duration")) {
    std::cerr << "vtoe: --trace-window starts at " << options.trace_from_ps / core::kPsPerMs
              << " ms, at or after the end of the run (duration " << cfg.get_text("duration")
              << "): the trace would be empty\n";
    return kExitUsage;
  }
  if (!options.vcd.empty() && options.vcd_to_ps &&
      options.vcd_from_ps >= cfg.get_time("duration")) {
    std::cerr << "vtoe: --vcd-window starts at " << options.vcd_from_ps / core::kPsPerMs
              << " ms, at or after the end of the run (duration " << cfg.get_text("duration")
              << "): the waveform would be empty\n";
    return kExitUsage;
  }
  if (options.pcap_to_ps && options.pcap_from_ps >= cfg.get_time("duration")) {
    std::cerr << "vtoe: --pcap-window starts at " << options.pcap_from_ps / core::kPsPerMs
              << " ms, at or after the end of the run (duration " << cfg.get_text("duration")
              << "): the capture would be empty\n";
    return kExitUsage;
  }
  // The directory holds this run's files only: outputs an earlier run wrote and this one does not
  // (a capture, a trace) would sit beside results they do not belong to.
  // report.html (`vtoe report`) is made from the files afterwards: an earlier one is stale.
  const std::string ext = options.pcapng ? ".pcapng" : ".pcap";
  for (const char* stale : {"link0.pcap", "netvp.pcap", "link0.pcapng", "netvp.pcapng",
                            "trace.json", "timeseries.csv", "report.html", "console.log"}) {
    const std::string name(stale);
    const bool capture =
        name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0;
    const bool writes = (options.pcap && capture) ||
                        (options.trace && std::string(stale) == "trace.json") ||
                        (cfg.get_time("stats_interval") && std::string(stale) == "timeseries.csv");
    if (!writes) fs::remove(fs::path(dir) / stale, ec);
  }
  const auto t0 = std::chrono::steady_clock::now();
  ordered_json run;
  ordered_json results;
  try {
    results = simulate(cfg, options.pcap ? dir : "", options.trace ? dir + "/trace.json" : "",
                       &options, &run);
  } catch (const std::runtime_error& e) {
    if (StopOnSignal::signal_number() == 0) throw;
    std::cerr << "vtoe: " << e.what() << "\n";  // stopped during the warm-up: nothing to write
    return StopOnSignal::exit_status();
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double sim_s = results["sim_time_s"].get<double>();

  std::ofstream(dir + "/results.json") << results.dump(2) << "\n";
  std::ofstream(dir + "/scenario.yaml") << cfg.resolved_yaml();
  run["schema_version"] = kResultsSchemaVersion;
  run["build"] = build_identity();
  run["scenario"] = options.scenario.empty() ? "(built-in default)" : options.scenario;
  run["command"] = options.command;
  run["wall_s"] = wall;
  run["sim_s"] = sim_s;
  run["sim_seconds_per_wall_second"] = wall > 0 ? sim_s / wall : 0.0;
  std::ofstream(dir + "/run.json") << run.dump(2) << "\n";

  bool stalled = false;
  for (const auto& v : results["vms"]) stalled = stalled || v["no_progress"].get<bool>();
  for (const auto& w : run["warnings"]) {
    const std::string text = w.get<std::string>();
    if (!options.quiet || text.find(kNoProgress) != std::string::npos ||
        text.find(kCaptureFull) != std::string::npos)
      std::cerr << "vtoe: warning: " << text << "\n";
  }
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
    std::string captures;  // one pcap per link (netvp.pcap for the bridge), or those asked for
    for (const auto& l : results["links"]) {
      const std::string name = l["name"].get<std::string>();
      if (!options.pcap_links.empty() &&
          std::find(options.pcap_links.begin(), options.pcap_links.end(), name) ==
              options.pcap_links.end())
        continue;
      captures += (captures.empty() ? "" : ", ") + dir + "/" + name +
                  (options.pcapng ? ".pcapng" : ".pcap");
    }
    out << "results: " << dir << "/results.json" << (options.pcap ? ", capture: " + captures : "")
        << (options.trace ? ", timeline: " + dir + "/trace.json (open in ui.perfetto.dev)" : "")
        << (cfg.get_time("stats_interval") ? ", time series: " + dir + "/timeseries.csv" : "")
        << "\n";
    std::cout << out.str();
  }
  // Scripts tell an interrupted run (130 after SIGINT, 143 after SIGTERM; its results cover the
  // time simulated so far) and one that moved nothing (5) from a complete one (0).
  if (StopOnSignal::signal_number() != 0) return StopOnSignal::exit_status();
  return stalled ? kExitNoProgress : 0;
}

}  // namespace vtoe::app
