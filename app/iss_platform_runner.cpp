#include "app/iss_platform_runner.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <systemc>
#include <unordered_map>
#include <utility>
#include <vector>

#include "app/build_info.h"
#include "app/guest_symbols.h"
#include "app/iss_caches.h"
#include "app/iss_hypervisor_stats.h"
#include "app/results.h"
#include "app/stop_on_signal.h"
#include "config/params.h"
#include "guest/apps.h"
#include "models/cpu/iss/arm_core.h"
#include "models/tcpip/types.h"
#include "platform/system/system_platform.h"
#include "platform/toe_slot.h"

#ifndef VTOE_DEFAULT_KERNEL
#define VTOE_DEFAULT_KERNEL "build/linux/vmlinuz"
#endif
#ifndef VTOE_DEFAULT_TARGET_DIR
#define VTOE_DEFAULT_TARGET_DIR "build/release/target"
#endif
#ifndef VTOE_DEFAULT_SNAPSHOT_DIR
#define VTOE_DEFAULT_SNAPSHOT_DIR "build/release/snapshots"
#endif
#ifndef VTOE_DEFAULT_INITRAMFS
#define VTOE_DEFAULT_INITRAMFS "build/release/target/initramfs.cpio"
#endif

namespace vtoe::app {

using config::Config;
using config::ConfigError;
using nlohmann::ordered_json;

namespace {

namespace iss = cpu::iss;
namespace sys = platform::system;

// The initramfs's markers (scripts/make_initramfs.py).
const std::string kWorkloadStart = "VTOE-WORKLOAD-START";
const std::string kReady = "VTOE-READY";
const std::string kRunExit = "VTOE-RUN-EXIT";
const std::string kRunSkipped = "VTOE-RUN-SKIPPED";
const std::string kInsmod = "VTOE-INSMOD";
const std::string kModuleText = "VTOE-MODULE-TEXT";
// The profile's sampling interval in instructions (a prime: no loop keeps in step with it).
constexpr std::uint64_t kSampleInterval = 1009;
// The console file's bound: a boot writes about 20 KB; a kernel that loops printing stops here.
constexpr std::uint64_t kConsoleLimit = 4ull << 20;

guest::Workload workload_of(const Config& cfg) {
  guest::Workload w;
  config::fill_item(cfg, guest::workload_params(), 0, w);
  return w;
}

// The program of target/apps that runs `w`, with its arguments (the line /init reads from the
// console: no quotes inside).
std::string workload_command(const Config& cfg, const guest::Workload& w) {
  const std::string peer = tcpip::ipv4_to_string(platform::ip_of(cfg, "network.peer_ip"));
  std::ostringstream c;
  switch (w.type) {
    case guest::WorkloadType::TcpTx:  // until stopped (or total_bytes), message_size per send()
      c << "toe_stream " << peer << " " << w.port << " " << w.total_bytes << " " << w.message_size;
      break;
    case guest::WorkloadType::TcpRx:  // listen, accept the peer's source, recv() message_size
      c << "toe_sink " << w.port << " " << w.total_bytes << " " << w.message_size;
      break;
    case guest::WorkloadType::Rpc:  // one request outstanding, until stopped
      c << "toe_rpc " << peer << " " << w.port << " " << w.message_size << " " << w.response_size
        << " 0";
      break;
    default:
      throw std::logic_error("workload_command: checked by check_iss_scenario");
  }
  return c.str();
}

// The guest's console: to a file (bounded), its last lines kept for messages, and the
// initramfs's markers noticed as they come (the workload's start pauses the simulation there).
class Console {
 public:
  explicit Console(const std::string& path) {
    if (!path.empty()) {
      file_.open(path);
      if (!file_) throw std::runtime_error("cannot write " + path);
    }
  }
  void put(char c) {
    if (file_.is_open() && written_ < kConsoleLimit) {
      file_.put(c);
      if (++written_ == kConsoleLimit) file_ << "\n[vtoe: console.log reached its bound]\n";
    }
    if (c != '\n') {
      if (c != '\r' && line_.size() < 512) line_ += c;
      return;
    }
    line(line_);
    lines_.push_back(std::move(line_));
    line_.clear();
    if (lines_.size() > 12) lines_.pop_front();
  }
  // /init waits for its command on the console (the modules loaded).
  bool ready() const { return ready_; }
  bool started() const { return started_; }
  const sc_core::sc_time& started_at() const { return started_at_; }
  // Where Linux put each module's .text ("vtoe_toe" -> 0xbf000000).
  const std::vector<std::pair<std::string, std::uint32_t>>& modules() const { return modules_; }
  // The workload's end ("VTOE-RUN-EXIT 0 toe_stream ...") or why it never ran; empty while it runs.
  const std::string& ended() const { return ended_; }
  std::string tail() const {
    std::string s = "\n  the console's last lines:";
    for (const std::string& l : lines_) s += "\n  | " + l;
    if (!line_.empty()) s += "\n  | " + line_;
    return s;
  }
  void flush() {
    if (file_.is_open()) file_.flush();
  }

 private:
  void line(const std::string& l) {
    if (!ready_ && l.rfind(kReady, 0) == 0) {
      ready_ = true;
    } else if (!started_ && l.rfind(kWorkloadStart, 0) == 0) {
      started_ = true;
      started_at_ = sc_core::sc_time_stamp();
      sc_core::sc_pause();  // the runner takes it from here, at this very time
    } else if (l.rfind(kModuleText, 0) == 0) {
      std::istringstream in(l.substr(kModuleText.size()));
      std::string name, address;
      if (in >> name >> address)
        modules_.emplace_back(name, static_cast<std::uint32_t>(std::stoul(address, nullptr, 16)));
    } else if (l.rfind(kRunExit, 0) == 0 || l.rfind(kRunSkipped, 0) == 0 ||
               (l.rfind(kInsmod, 0) == 0 && l.find(" failed") != std::string::npos)) {
      if (ended_.empty()) ended_ = l;
    }
  }

  std::ofstream file_;
  std::uint64_t written_ = 0;
  std::string line_;
  std::deque<std::string> lines_;
  bool ready_ = false, started_ = false;
  sc_core::sc_time started_at_;
  std::string ended_;
  std::vector<std::pair<std::string, std::uint32_t>> modules_;
};

// The platform's running totals at one instant.
struct Totals {
  sc_core::sc_time at;
  std::uint64_t user_insns = 0, all_insns = 0, user_cycles = 0, all_cycles = 0;
  sc_core::sc_time idle;
  std::uint64_t toe_tx = 0, toe_rx = 0, peer_rx = 0, peer_tx = 0, frames = 0, drops = 0;
  std::uint64_t commands = 0, completions = 0, toe_interrupts = 0, irq_entries = 0;
  std::uint64_t register_accesses = 0, tlb_flushes = 0, tlb_misses = 0;
  std::uint64_t irqs_handled = 0, irq_insns = 0, irq_cycles = 0;
  std::uint64_t model_cycles = 0;  // the hypervisor model's (its handlers' costs)
  std::uint64_t user_by_class[iss::ArmCore::kClasses] = {};
  std::uint64_t all_by_class[iss::ArmCore::kClasses] = {};
  CacheCounts caches;
};

const iss::Mode kModes[] = {iss::Mode::Usr, iss::Mode::Fiq, iss::Mode::Irq, iss::Mode::Svc,
                            iss::Mode::Abt, iss::Mode::Hyp, iss::Mode::Und, iss::Mode::Sys};

Totals totals(sys::SystemPlatform& p) {
  Totals t;
  t.at = sc_core::sc_time_stamp();
  iss::IssCpu& cpu = p.cpu();
  iss::ArmCore& core = cpu.core();
  t.user_insns = core.retired_in_mode(iss::Mode::Usr);
  t.all_insns = core.retired();
  t.model_cycles = cpu.model_cycles();
  t.user_cycles = cpu.cycles_in_mode(iss::Mode::Usr);
  for (iss::Mode m : kModes) t.all_cycles += cpu.cycles_in_mode(m);
  for (int c = 0; c < iss::ArmCore::kClasses; ++c) {
    t.user_by_class[c] = core.retired_in_mode(iss::Mode::Usr, static_cast<iss::InsnClass>(c));
    t.all_by_class[c] = core.retired(static_cast<iss::InsnClass>(c));
  }
  t.idle = cpu.idle_time();
  toe::Toe& toe = *p.toe();
  t.toe_tx = toe.tx_bytes();
  t.toe_rx = toe.rx_bytes();
  for (int c = 0; c < toe.channel_count(); ++c) {
    t.commands += toe.channel(c).contexts_fetched();
    t.completions += toe.channel(c).completions();
  }
  t.toe_interrupts = p.toe_interrupts();
  t.register_accesses = toe.stats().counter("register_accesses").value();
  t.irq_entries = core.exceptions(iss::Exception::Irq);
  t.tlb_flushes = core.tlb_flushes();
  t.tlb_misses = core.tlb_misses();
  t.irqs_handled = core.irqs_handled();
  for (int c = 0; c < iss::ArmCore::kClasses; ++c) {
    const std::uint64_t n = core.irq_handler_retired(static_cast<iss::InsnClass>(c));
    t.irq_insns += n;
    t.irq_cycles += n * cpu.params().cpi[static_cast<std::size_t>(c)];
  }
  t.peer_rx = p.peer()->bytes_received();
  t.peer_tx = p.peer()->bytes_sent();
  t.frames = p.link()->frames();
  t.drops = p.link()->drops();
  t.caches = cache_counts(p);
  return t;
}

double round6(double v) { return std::round(v * 1e6) / 1e6; }
double mbps(std::uint64_t bytes, double s) {
  return s > 0 ? static_cast<double>(bytes) * 8 / s / 1e6 : 0;
}
double per(std::uint64_t a, std::uint64_t n) {
  return n ? std::round(static_cast<double>(a) / static_cast<double>(n) * 10) / 10 : 0.0;
}

// Where the window's instructions went, by function: the PC samples named from the kernel's
// System.map (beside the kernel), the modules' .ko and the program's ELF (the build's target/).
ordered_json profile(const std::unordered_map<std::uint32_t, std::uint64_t>& samples,
                     const std::string& kernel, const Console& console,
                     const std::string& program) {
  namespace fs = std::filesystem;
  GuestSymbols symbols;
  ordered_json sources = ordered_json::array();
  const std::string map = (fs::path(kernel).parent_path() / "System.map").string();
  if (symbols.add_system_map(map)) sources.push_back(map);
  for (const auto& [name, base] : console.modules()) {
    const std::string ko = std::string(VTOE_DEFAULT_TARGET_DIR) + "/linux/module/" + name + ".ko";
    if (symbols.add_elf(ko, name, base)) sources.push_back(ko);
  }
  const std::string elf = std::string(VTOE_DEFAULT_TARGET_DIR) + "/apps/" + program;
  if (symbols.add_elf(elf, program)) sources.push_back(elf);
  std::map<std::pair<std::string, std::string>, std::uint64_t> by_symbol;
  std::map<std::string, std::uint64_t> by_image;
  std::uint64_t total = 0;
  for (const auto& [pc, n] : samples) {
    const GuestSymbols::Hit h = symbols.lookup(pc);
    by_symbol[{h.image, h.symbol}] += n;
    by_image[h.image] += n;
    total += n;
  }
  std::vector<std::pair<std::uint64_t, std::pair<std::string, std::string>>> order;
  for (const auto& [key, n] : by_symbol) order.push_back({n, key});
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  auto share = [total](std::uint64_t n) {
    return total ? std::round(static_cast<double>(n) / static_cast<double>(total) * 1e5) / 1e5
                 : 0.0;
  };
  ordered_json p;
  p["interval_instructions"] = kSampleInterval;
  p["samples"] = total;
  p["symbol_sources"] = sources;
  ordered_json images;
  for (const auto& [image, n] : by_image) images[image] = share(n);
  p["by_image"] = images;
  ordered_json fns = ordered_json::array();
  for (const auto& [n, key] : order)
    fns.push_back(
        {{"image", key.first}, {"symbol", key.second}, {"samples", n}, {"share", share(n)}});
  p["by_symbol"] = fns;
  return p;
}

// Booted snapshots (platform/system/snapshot.h): what a snapshot depends on, and where it is.
constexpr std::size_t kSnapshotsKept = 8;

std::uint64_t fnv1a(const char* data, std::size_t n, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex64(std::uint64_t v) {
  std::ostringstream o;
  o << std::hex;
  o.width(16);
  o.fill('0');
  o << v;
  return o.str();
}

// The size and FNV-1a hash of a file's contents ("" if it cannot be read).
std::string file_identity(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  std::uint64_t h = 0xcbf29ce484222325ull, size = 0;
  std::vector<char> buf(1 << 20);
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<std::size_t>(f.gcount());
    h = fnv1a(buf.data(), n, h);
    size += n;
  }
  return std::to_string(size) + " bytes, fnv1a " + hex64(h);
}

// Everything a booted snapshot depends on: this binary, the kernel, the initramfs and the
// scenario but for what only the workload's part of a run reads (the workload, the duration,
// the warm-up, the snapshots' own keys and the boot's time limit).
std::string snapshot_key(const Config& cfg, const std::string& kernel,
                         const std::string& initramfs) {
  YAML::Node scenario = YAML::Load(cfg.resolved_yaml());
  for (const char* k : {"duration", "warmup", "stats_interval"}) scenario.remove(k);
  if (scenario["vms"] && scenario["vms"].IsSequence())
    for (YAML::Node vm : scenario["vms"]) vm.remove("workload");
  if (YAML::Node iss = scenario["platform"]["iss"])
    for (const char* k : {"snapshots", "snapshot_dir", "boot_limit"}) iss.remove(k);
  YAML::Emitter e;
  e << scenario;
  std::ostringstream key;
  key << "vtoe booted snapshot\n"
      << "binary: " << file_identity("/proc/self/exe") << "\n"
      << "kernel: " << file_identity(kernel) << "\n"
      << "initramfs: " << file_identity(initramfs) << "\n"
      << "scenario:\n"
      << e.c_str() << "\n";
  return key.str();
}

std::string snapshot_dir(const Config& cfg) {
  const std::string d = cfg.get_string("platform.iss.snapshot_dir");
  return d.empty() ? std::string(VTOE_DEFAULT_SNAPSHOT_DIR) : d;
}

// Keeps the `keep` most recently written snapshots of `dir`.
void prune_snapshots(const std::string& dir, std::size_t keep) {
  namespace fs = std::filesystem;
  std::vector<std::pair<fs::file_time_type, fs::path>> snaps;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".snap") snaps.emplace_back(e.last_write_time(ec), e.path());
  if (snaps.size() <= keep) return;
  std::sort(snaps.begin(), snaps.end());
  for (std::size_t i = 0; i + keep < snaps.size(); ++i) fs::remove(snaps[i].second, ec);
}

std::string boot_failure(sys::SystemPlatform& p, const Console& console,
                         const sc_core::sc_time& limit) {
  std::ostringstream m;
  m << "platform.cpu_model=iss: the workload did not start";
  if (!console.ended().empty())
    m << " (" << console.ended() << ")";
  else if (p.stop_reason() != sys::StopReason::Running)
    m << ": the run ended (" << sys::to_string(p.stop_reason()) << ") "
      << (p.cpu().fault().empty() ? "" : p.cpu().fault());
  else if (sc_core::sc_time_stamp() >= limit)
    m << " within platform.iss.boot_limit (" << limit.to_seconds() << " s of simulated time, "
      << p.cpu().retired() << " instructions)";
  m << console.tail();
  return m.str();
}

}  // namespace

void check_iss_scenario(const Config& cfg) {
  if (cfg.get_string("platform.cpu_model") != "iss") return;
  auto refuse = [&cfg](const std::string& key, const std::string& why) {
    throw ConfigError(cfg.where(key), key, why);
  };
  const std::string until = " with platform.cpu_model=iss (not yet: docs/iss-mode.md)";
  const std::string arch = cfg.get_string("architecture");
  if (arch == "de") refuse("architecture", "'de' does not run" + until + "; native and da run");
  if (arch == "da" && cfg.get_uint("platform.cores") != 1)
    refuse("platform.cores", "one core runs the hypervisor and its guests with cpu_model=iss");
  if (cfg.get_uint("platform.cores") != 1)
    refuse("platform.cores", std::to_string(cfg.get_uint("platform.cores")) + " cores do not run" +
                                 until + "; 1 runs");
  if (cfg.list_size("vms") != 1)
    refuse("vms",
           std::to_string(cfg.list_size("vms")) + " VMs do not run" + until + "; one host runs");
  if (cfg.has("hosts") && cfg.list_size("hosts") != 0)
    refuse("hosts", "topologies do not run" + until);
  if (cfg.get_string("network.peer") != "sim")
    refuse("network.peer", "'" + cfg.get_string("network.peer") + "' does not run" + until +
                               "; the simulated peer runs");
  if (cfg.get_string("software_stack.mode") != "none")
    refuse("software_stack.mode", "a software stack's cost model does not apply" + until);
  const guest::Workload w = workload_of(cfg);
  const std::string type = guest::to_string(w.type);
  if (w.type != guest::WorkloadType::TcpTx && w.type != guest::WorkloadType::TcpRx &&
      w.type != guest::WorkloadType::Rpc)
    refuse("vms.0.workload.type", "'" + type + "' does not run" + until +
                                      ": target/apps has programs for tcp_tx (toe_stream), "
                                      "tcp_rx (toe_sink) and rpc (toe_rpc)");
  if (w.processes != 1)
    refuse("vms.0.workload.processes", "more than one process does not run" + until);
  if (w.path != guest::Path::Socket)
    refuse("vms.0.workload.path", "only the socket path runs" + until);
  if (w.zero_copy) refuse("vms.0.workload.zero_copy", "zero copy does not run" + until);
  if (w.start_ps != 0 || w.stop_ps != 0)
    refuse(w.start_ps ? "vms.0.workload.start" : "vms.0.workload.stop",
           "the workload starts when Linux has booted and runs to the end" + until);
  if (w.type == guest::WorkloadType::Rpc && (w.connections != 1 || w.active != 0))
    refuse("vms.0.workload.connections", "one rpc connection runs" + until);
}

ordered_json simulate_iss(const Config& cfg, const std::string& console_path,
                          const RunOptions* options, ordered_json* run_info) {
  check_iss_scenario(cfg);
  if (cfg.get_time("stats_interval") != 0)
    throw ConfigError(cfg.where("stats_interval"), "stats_interval",
                      "a time series is not written with platform.cpu_model=iss yet: set 0s");
  if (options && (options->trace || !options->vcd.empty()))
    throw ConfigError(cfg.where("platform.cpu_model"), "platform.cpu_model",
                      "--trace and --vcd are not written with platform.cpu_model=iss yet");
  namespace fs = std::filesystem;
  auto file_of = [&cfg](const char* key, const char* fallback, const char* how) {
    std::string path = cfg.get_string(key);
    const bool given = !path.empty();
    if (!given) path = fallback;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      throw ConfigError(cfg.where(key), key,
                        "platform.cpu_model=iss boots " + path + ", which is " +
                            (fs::exists(path, ec) ? "not a file" : "missing") +
                            (given ? "" : std::string(": ") + how));
    return path;
  };
  const std::string kernel = file_of("platform.iss.kernel", VTOE_DEFAULT_KERNEL,
                                     "make linux-images fetches Debian's kernel");
  const std::string initramfs =
      file_of("platform.iss.initramfs", VTOE_DEFAULT_INITRAMFS,
              "the build makes it once the kernel's headers and busybox are there (make "
              "linux-images, then make build)");
  const guest::Workload w = workload_of(cfg);
  const std::string command = workload_command(cfg, w);

  Console console(console_path);
  const sys::SystemConfig sc = sys::system_config(cfg);
  sys::SystemPlatform p("system", sc, [&console](char c) { console.put(c); });
  if (options && options->pcap && !options->out_dir.empty())
    p.link()->enable_pcap(options->out_dir + "/link0.pcap");

  // A booted snapshot with this run's key, if there is one (docs/iss-mode.md).
  namespace fs = std::filesystem;
  // (Guests under the hypervisor model boot every time: their snapshots are not modelled yet.)
  const bool snapshots =
      cfg.get_string("platform.iss.snapshots") == "on" && p.hypervisor() == nullptr;
  std::string snap_key, snap_path;
  std::vector<std::string> snap_warnings;
  std::optional<sys::Snapshot> snap;
  if (snapshots) {
    snap_key = snapshot_key(cfg, kernel, initramfs);
    snap_path =
        snapshot_dir(cfg) + "/boot-" + hex64(fnv1a(snap_key.data(), snap_key.size())) + ".snap";
    std::error_code ec;
    if (fs::exists(snap_path, ec)) {
      try {
        snap = sys::load_snapshot(snap_path);
        if (snap->key != snap_key) {
          snap_warnings.push_back("snapshot " + snap_path +
                                  " was made for another key (a hash collision): booting");
          snap.reset();
        }
      } catch (const sys::SnapshotError& e) {
        snap_warnings.push_back(std::string(e.what()) + ": booting, and writing it again");
      }
    }
  }

  const StopOnSignal stop_on_signal;
  const auto wall0 = std::chrono::steady_clock::now();
  auto running = [&p]() {
    return StopOnSignal::signal_number() == 0 && sc_core::sc_get_status() != sc_core::SC_STOPPED &&
           p.stop_reason() == sys::StopReason::Running;
  };
  const sc_core::sc_time boot_limit(static_cast<double>(cfg.get_time("platform.iss.boot_limit")),
                                    sc_core::SC_PS);
  const sc_core::sc_time step(1, sc_core::SC_MS);
  // The snapshot's point: /init waits for its command, the core asleep with nothing due at that
  // instant; looked for every 100 us from 5 us after the step that saw VTOE-READY (off the grid
  // of the core's quantum and the platform's monitor, which are due on it), as in every run.
  const sc_core::sc_time settle_offset(5, sc_core::SC_US), settle_step(100, sc_core::SC_US);
  bool restored = false, saved = false;
  if (snap) {
    // Restore: the devices replay what the core did to them up to the snapshot's point (its
    // console output included), then the core and the RAM take the snapshot's state.
    p.begin_restore(*snap);
    sc_core::sc_start(sc_core::sc_time::from_value(snap->time));
    try {
      p.finish_restore(*snap);
    } catch (const sys::SnapshotError& e) {
      throw std::runtime_error("platform.cpu_model=iss: restoring " + snap_path + ": " + e.what() +
                               " (remove the file, or set platform.iss.snapshots=off)");
    }
    if (!console.ready())
      throw std::runtime_error("platform.cpu_model=iss: restoring " + snap_path +
                               ": the replayed console has no " + kReady + " (remove the file)");
    restored = true;
    snap.reset();  // its RAM image is in the RAM now
  } else {
    sys::BootFiles files;
    files.kernel = kernel;
    files.initrd = initramfs;
    files.append = "console=ttyAMA0 earlycon=pl011,0x9000000";
    p.boot(files);
    if (snapshots) p.record_device_inputs();
    // Boot: until /init waits for its command, then to the snapshot's point.
    while (!console.ready() && console.ended().empty() && running() &&
           sc_core::sc_time_stamp() < boot_limit)
      sc_core::sc_start(std::min(step, boot_limit - sc_core::sc_time_stamp()));
    if (console.ready() && p.hypervisor() == nullptr) {
      std::string why_not;
      sc_core::sc_start(settle_offset);
      while (!p.quiescent(&why_not) && console.ended().empty() && running() &&
             sc_core::sc_time_stamp() < boot_limit) {
        sc_core::sc_start(std::min(settle_step, boot_limit - sc_core::sc_time_stamp()));
      }
      if (p.quiescent(&why_not)) {
        const bool logged = p.device_inputs_logged();
        sys::Snapshot taken = p.take_snapshot();  // settles the core in every run
        if (snapshots && !logged) {
          snap_warnings.push_back(
              "no snapshot saved: the log of the core's inputs to the devices overflowed");
        } else if (snapshots) {
          taken.key = snap_key;
          try {
            fs::create_directories(snapshot_dir(cfg));
            sys::save_snapshot(taken, snap_path);
            prune_snapshots(snapshot_dir(cfg), kSnapshotsKept);
            saved = true;
          } catch (const std::exception& e) {
            snap_warnings.push_back(std::string("no snapshot saved: ") + e.what());
          }
        }
      } else if (snapshots && console.ended().empty() && running()) {
        snap_warnings.push_back("no snapshot saved: no quiescent point after " + kReady + " (" +
                                why_not + ")");
      }
    }
  }
  const auto wall_ready = std::chrono::steady_clock::now();
  // The workload: its command typed on the console, as a terminal at 115200 baud would.
  if (console.ready() && console.ended().empty() && running())
    (p.hypervisor() ? p.hypervisor()->uart(0) : p.uart())
        .type(command + "\n", sc_core::sc_time(86800, sc_core::SC_NS));
  while (!console.started() && console.ended().empty() && running() &&
         sc_core::sc_time_stamp() < boot_limit)
    sc_core::sc_start(std::min(step, boot_limit - sc_core::sc_time_stamp()));
  console.flush();
  if (StopOnSignal::signal_number() != 0)
    throw std::runtime_error("stopped by " + StopOnSignal::signal_name() +
                             " while Linux booted: no results");
  if (!console.started()) throw std::runtime_error(boot_failure(p, console, boot_limit));
  // The peer's applications that connect to the guest (a tcp_rx source) start with it.
  p.peer()->start_apps_now();
  const Totals boot = totals(p);
  const auto wall_booted = std::chrono::steady_clock::now();
  const HostClock after_boot;  // the speed after the boot (run.json's after_boot)

  // The window: warmup, then duration - warmup, counted from the workload's start.
  const sc_core::sc_time t0 = console.started_at();
  const sc_core::sc_time warmup(static_cast<double>(cfg.get_time("warmup")), sc_core::SC_PS);
  const sc_core::sc_time duration(static_cast<double>(cfg.get_time("duration")), sc_core::SC_PS);
  // A workload that fails ends the run there (its error and the console's last lines follow).
  auto failed = [&console]() {
    return !console.ended().empty() && console.ended().rfind(kRunExit + " 0 ", 0) != 0;
  };
  auto run_to = [&](const sc_core::sc_time& until) {
    while (running() && !failed() && sc_core::sc_time_stamp() < until)
      sc_core::sc_start(std::min(step, until - sc_core::sc_time_stamp()));
  };
  run_to(t0 + warmup);
  if (StopOnSignal::signal_number() != 0)
    throw std::runtime_error("stopped by " + StopOnSignal::signal_name() +
                             " during the warm-up: no results");
  const Totals a = totals(p);
  p.cpu().set_pc_sampling(kSampleInterval);
  run_to(t0 + duration);
  const Totals b = totals(p);
  console.flush();
  const std::string interrupted = StopOnSignal::signal_number() != 0
                                      ? "stopped by " + StopOnSignal::signal_name() + " at " +
                                            std::to_string(sc_core::sc_time_stamp().to_seconds()) +
                                            " s of simulated time"
                                      : "";
  if (interrupted.empty() && p.stop_reason() != sys::StopReason::Running)
    throw std::runtime_error("platform.cpu_model=iss: the run ended inside the measured window (" +
                             std::string(sys::to_string(p.stop_reason())) + ")" + console.tail());
  if (failed())
    throw std::runtime_error("platform.cpu_model=iss: the workload failed (" + console.ended() +
                             ")" + console.tail());

  const double window = (b.at - a.at).to_seconds();
  const double period_s = sc.clock_period.to_seconds();
  const double idle = window > 0 ? (b.idle - a.idle).to_seconds() / window : 0;
  // User time: its instructions' cycles and its waits for the caches' line fills.
  const double user = window > 0 ? (static_cast<double>(b.user_cycles - a.user_cycles) * period_s +
                                    (b.caches.stall_user - a.caches.stall_user).to_seconds()) /
                                       window
                                 : 0;
  // The hypervisor: the cycles its model charged for exits, handlers and VM switches (code in
  // Hyp mode has none under the model).
  const double hyp =
      window > 0 ? static_cast<double>(b.model_cycles - a.model_cycles) * period_s / window : 0;
  const double kernel_share = std::max(0.0, 1.0 - user - idle - hyp);

  ordered_json r;
  r["schema_version"] = kResultsSchemaVersion;
  r["vtoe_version"] = version_string();
  r["architecture"] = cfg.get_string("architecture");
  r["cpu_model"] = "iss";
  r["seed"] = cfg.get_uint("seed");
  r["sim_time_s"] = round6(b.at.to_seconds());
  r["measured_s"] = round6(window);
  ordered_json v;
  v["name"] = cfg.get_string("vms.0.name");
  v["workload"] = guest::to_string(w.type);
  v["message_size"] = w.message_size;
  // Goodput: transmit counts the payload the peer's application received, receive what the TOE
  // wrote into the host's buffers (docs/iss-mode.md).
  v["tx_mbps"] = round6(mbps(b.peer_rx - a.peer_rx, window));
  v["rx_mbps"] = round6(mbps(b.toe_rx - a.toe_rx, window));
  v["tx_sent_mbps"] = round6(mbps(b.toe_tx - a.toe_tx, window));
  const std::uint64_t transactions = w.type == guest::WorkloadType::Rpc && w.response_size
                                         ? (b.peer_tx - a.peer_tx) / w.response_size
                                         : 0;
  v["transactions"] = transactions;
  v["cpu"] = {{"guest_user", round6(user)},
              {"guest_kernel", round6(kernel_share)},
              {"hypervisor", round6(hyp)},
              {"idle", round6(idle)}};
  v["interrupts"] = b.toe_interrupts - a.toe_interrupts;
  v["error"] = "";
  const std::uint64_t moved = (b.peer_rx - a.peer_rx) + (b.toe_rx - a.toe_rx) + transactions;
  const bool stalled = interrupted.empty() && w.expect_progress && moved == 0;
  v["no_progress"] = stalled;
  r["vms"] = ordered_json::array({v});
  r["toe"] = {{"tx_mbps", round6(mbps(b.toe_tx - a.toe_tx, window))},
              {"rx_mbps", round6(mbps(b.toe_rx - a.toe_rx, window))}};
  r["links"] = ordered_json::array(
      {{{"name", "link0"}, {"frames", b.frames - a.frames}, {"drops", b.drops - a.drops}}});
  r["peer"] = {{"bytes_received", b.peer_rx - a.peer_rx},
               {"bytes_sent", b.peer_tx - a.peer_tx},
               {"pattern_errors", p.peer()->pattern_errors()}};

  // Where the CPU time went, counted from the ISS; its timing as the scenario states it.
  ordered_json s;
  s["cpu_freq_hz"] = cfg.get_freq("platform.cpu_freq");
  ordered_json cpi;
  for (int c = 0; c < iss::ArmCore::kClasses; ++c)
    cpi[iss::to_string(static_cast<iss::InsnClass>(c))] = sc.cpi[static_cast<std::size_t>(c)];
  s["cpi"] = cpi;
  s["command"] = command;
  s["boot_s"] = round6(t0.to_seconds());
  s["boot_instructions"] = boot.all_insns;
  const std::uint64_t user_insns = b.user_insns - a.user_insns;
  const std::uint64_t all_insns = b.all_insns - a.all_insns;
  const std::uint64_t user_cycles = b.user_cycles - a.user_cycles;
  const std::uint64_t all_cycles = b.all_cycles - a.all_cycles;
  s["instructions"] = {{"user", user_insns}, {"kernel", all_insns - user_insns}};
  s["cycles"] = {{"user", user_cycles}, {"kernel", all_cycles - user_cycles}};
  ordered_json by_class;
  for (int c = 0; c < iss::ArmCore::kClasses; ++c)
    by_class[iss::to_string(static_cast<iss::InsnClass>(c))] = {
        {"user", b.user_by_class[c] - a.user_by_class[c]},
        {"kernel",
         (b.all_by_class[c] - a.all_by_class[c]) - (b.user_by_class[c] - a.user_by_class[c])}};
  s["instructions_by_class"] = by_class;
  s["idle_s"] = round6((b.idle - a.idle).to_seconds());
  const std::uint64_t commands = b.commands - a.commands;
  const std::uint64_t interrupts = b.toe_interrupts - a.toe_interrupts;
  s["toe_commands"] = commands;
  s["toe_completions"] = b.completions - a.completions;
  s["toe_interrupts"] = interrupts;
  s["irq_entries"] = b.irq_entries - a.irq_entries;
  // The core's time that is neither its instructions' cycles nor asleep: waiting for device
  // registers to answer (the TOE's, the GIC's, the UART's), in cycles.
  const double busy_s = window - (b.idle - a.idle).to_seconds();
  s["device_stall_cycles"] = std::max<std::int64_t>(
      0, std::llround(busy_s / period_s) - static_cast<std::int64_t>(all_cycles));
  s["toe_register_accesses"] = b.register_accesses - a.register_accesses;
  // The ISS's software TLB: invalidations the guest asked for, and table walks.
  s["tlb_invalidations"] = b.tlb_flushes - a.tlb_flushes;
  s["tlb_misses"] = b.tlb_misses - a.tlb_misses;
  // Everything the core retired in the window, divided by the TOE commands (send() and recv()
  // posts) it issued: the software's whole cost of one command, interrupts included.
  s["per_toe_command"] = {{"instructions", per(all_insns, commands)},
                          {"cycles", per(all_cycles, commands)}};
  // One interrupt's handling: from the IRQ's entry to its exception return (the GIC's
  // acknowledge, the driver's handler, the completions it takes, the wake-ups it asks for and
  // the softirqs run on the way out; not the woken task), its instructions' cycles at the
  // stated CPI (the caches' stalls not included).
  const std::uint64_t handled = b.irqs_handled - a.irqs_handled;
  s["per_interrupt"] = {{"interrupts_handled", handled},
                        {"instructions", per(b.irq_insns - a.irq_insns, handled)},
                        {"cycles", per(b.irq_cycles - a.irq_cycles, handled)}};
  const std::string program = command.substr(0, command.find(' '));
  s["profile"] = profile(p.cpu().pc_samples(), kernel, console, program);
  s["caches"] = caches_json(sc, a.caches, b.caches, window);
  // Under the hypervisor model: its exits and switches over the whole run (boot included).
  if (auto* hyp = p.hypervisor()) s["hypervisor"] = hypervisor_stats(*hyp, p.cpu().model_cycles());
  r["iss"] = s;
  if (run_info) {
    (*run_info)["console"] = console_path;
    // The boot and the rest apart: the speed after the boot is what a snapshot keeps.
    (*run_info)["boot"] = {{"wall_s", std::chrono::duration<double>(wall_booted - wall0).count()},
                           {"sim_s", t0.to_seconds()}};
    ordered_json snapshot = {{"enabled", snapshots}};
    if (snapshots) {
      snapshot["path"] = snap_path;
      snapshot["restored"] = restored;
      snapshot["saved"] = saved;
      std::error_code ec;
      const auto size = fs::file_size(snap_path, ec);
      snapshot["bytes"] = ec ? 0 : static_cast<std::uint64_t>(size);
      // To the snapshot's point: the boot, or the restore (replay, RAM, core).
      snapshot["wall_s"] = std::chrono::duration<double>(wall_ready - wall0).count();
    }
    (*run_info)["snapshot"] = snapshot;
    for (const std::string& w : snap_warnings) (*run_info)["warnings"].push_back(w);
    (*run_info)["after_boot"] = after_boot.since((b.at - t0).to_seconds());
    if (stalled)
      (*run_info)["warnings"].push_back(
          "vm " + v["name"].get<std::string>() + " (" + guest::to_string(w.type) +
          "): no progress in the measured window (no byte delivered, no transaction "
          "completed); the guest's console is in " +
          (console_path.empty() ? std::string("(not kept)") : console_path));
    if (!interrupted.empty())
      (*run_info)["warnings"].push_back(interrupted + " (duration " + cfg.get_text("duration") +
                                        "); the results cover the measured window up to there");
    if (!console.ended().empty())
      (*run_info)["warnings"].push_back("the workload ended inside the measured window (" +
                                        console.ended() + "): the rates cover a part of it");
  }
  return r;
}

}  // namespace vtoe::app
