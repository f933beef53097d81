// The `vtoe` command line:
//   vtoe run [FILE] [--set key=value]... [--seed N] [--out DIR] [--pcap] [--log-level LEVEL]
//   [--quiet] vtoe validate [FILE] [--set key=value]... [--seed N]   (prints the resolved scenario)
//   vtoe keys [--format text|markdown]                     (every key: default, unit, meaning)
//   vtoe schema                                            (the keys as JSON Schema)
//   vtoe compare A B [--tolerance PCT] [--abs X] [--all]   (what moved between two results)
//   vtoe iss run [--stats FILE] PROGRAM [ARGS...]   (a static ARM Linux program on the ISS)
//   vtoe system run --kernel FILE [--initrd FILE] [--append S] [--dtb FILE] [--virtualization]
//                   [--memory SIZE] [--max-instructions N] [--stats FILE] [--gdb PORT]
//   vtoe report DIR [--out FILE]   (an HTML page of a run, a sweep or make paper's output; runs
//                                   the Python package: python3 -m vtoe.report, app/report.cpp)
//   vtoe --version
// Without FILE, run and validate use the built-in default scenario (Config::defaults()).
// main.cpp supplies only the run function:
//   int main(int argc, char** argv) { return vtoe::app::cli_main(argc, argv, run_platform); }
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/compare.h"
#include "config/config.h"
#include "config/schema.h"
#include "models/core/logger.h"

namespace vtoe::app {

using config::Config;
using config::ConfigError;
using config::describe_keys;
using config::KeysFormat;
using config::Schema;

/// Exit status for configuration and usage errors.
inline constexpr int kExitUsage = 2;
/// Exit status when the run function throws something other than ConfigError.
inline constexpr int kExitFailure = 1;
/// Exit status of `vtoe run` when a VM's workload moved nothing in the measured window (its
/// results are written, with the warning in run.json and `no_progress` in results.json).
inline constexpr int kExitNoProgress = 5;

struct RunOptions {
  std::string scenario;           ///< scenario file; empty = the built-in default scenario
  std::vector<std::string> sets;  ///< "key=value" overrides in order; --seed comes last
  std::string out_dir;            ///< --out, default "out/<scenario file stem>" or "out/default"
  bool pcap = false;              ///< write a pcap per link
  std::vector<std::string> pcap_links;  ///< --pcap=LINK,...: only these links (empty: all)
  bool pcapng = false;                  ///< --pcap-format pcapng: comments on dropped frames
  /// --seeds N: the run once per seed 1..N, each in DIR/seed-K, and DIR/seeds.json (0: once)
  std::uint32_t seeds = 0;
  std::uint32_t pcap_snaplen = 65535;        ///< --pcap-snaplen: bytes kept of each frame
  std::uint64_t pcap_limit = 1ull << 30;     ///< --pcap-limit: bytes per capture; 0 = none
  std::uint64_t stats_limit = 256ull << 20;  ///< --stats-limit: timeseries.csv bytes; 0 = none
  /// --pcap-window in ps: frames at or after `from` and before `to`; to == 0: the whole run.
  std::uint64_t pcap_from_ps = 0, pcap_to_ps = 0;
  core::LogLevel log_level = core::LogLevel::Info;
  bool quiet = false;  ///< no progress or summary on stdout
  bool trace = false;  ///< write DIR/trace.json (Chrome trace events, opens in Perfetto)
  std::string vcd;     ///< --vcd FILE: a waveform of interrupts, queues, link and scheduler
  std::uint64_t vcd_limit = 256ull << 20;  ///< --vcd-limit: bytes of the VCD; 0 = none
  /// --vcd-window in ps: changes at or after `from` and before `to`; to == 0: the whole run.
  std::uint64_t vcd_from_ps = 0, vcd_to_ps = 0;
  /// --trace-limit: events trace.json holds at most (about 104 bytes each); 0 = no bound.
  std::uint64_t trace_limit = 2'500'000;
  /// Trace window in ps; trace_to_ps == 0 means the default: 10 ms from the end of warm-up.
  std::uint64_t trace_from_ps = 0, trace_to_ps = 0;
  /// The command line as typed (shell-quoted where needed), recorded in run.json's "command".
  std::string command;
};

/// `vtoe report DIR [--out FILE]`: the Python package's report page (app/report.cpp).
struct ReportOptions {
  std::string dir;  ///< a run directory, a sweep directory or make paper's output
  std::string out;  ///< --out FILE; empty = DIR/report.html
};

/// `vtoe iss run [--stats FILE] PROGRAM [ARGS...]`: a static ARM Linux program on the ISS.
struct IssOptions {
  std::string program;
  std::vector<std::string> args;  ///< after PROGRAM, passed to it unchanged
  std::string stats;              ///< --stats FILE: JSON of instructions retired and MIPS
  std::string trace;              ///< --trace FILE: registers before every instruction
  std::uint64_t trace_from = 0;   ///< --trace-from N: instructions run untraced first
  /// --trace-limit N: instructions traced at most (0: no limit); about 570 bytes each, so the
  /// default keeps a trace near 230 MB, below the 256 MiB of the other outputs' bounds.
  std::uint64_t trace_limit = 400'000;
};

/// `vtoe system run`: an ELF or zImage on the system platform (QEMU virt's memory map).
struct SystemOptions {
  std::string kernel, initrd, append, dtb;
  bool dtb_as_is = false;              ///< --dtb's bytes unchanged
  bool virtualization = false;         ///< start in Hyp mode
  std::uint64_t memory = 0;            ///< RAM bytes; 0 = 128 MiB
  int smp = 1;                         ///< --smp N: cores, 1 to 8
  std::uint64_t max_instructions = 0;  ///< 0 = no limit
  std::string stats;                   ///< --stats FILE
  unsigned gdb_port = 0;               ///< --gdb PORT; 0 = none
  std::string trace;                   ///< --trace FILE: registers before each instruction
  /// --trace-limit N: instructions traced at most; 221 bytes each: 221 MB by default.
  std::uint64_t trace_limit = 1'000'000;
  std::optional<std::uint32_t> trace_at;  ///< --trace-at ADDR: trace from there on
  std::string scenario;              ///< --scenario FILE: the TOE and its network; "" = built-in
  std::vector<std::string> sets;     ///< --set key=value, over the scenario
  std::vector<std::string> devices;  ///< --device guest-loader,addr=...,kernel=|initrd=...
  /// --guests N: the kernel N times, each in a VM under the hypervisor model (0: on the core)
  int guests = 0;
  std::uint64_t guest_memory = 0x800'0000;  ///< --guest-memory SIZE: each VM's RAM
};

/// Exit status of a system run stopped by --max-instructions (or asleep for good).
inline constexpr int kExitMaxInstructions = 4;

enum class Command {
  Run,
  Validate,
  Keys,
  Schema,
  Compare,
  Help,
  Version,
  IssRun,
  SystemRun,
  Report
};

struct CliArgs {
  Command command = Command::Help;
  RunOptions run;  ///< run and validate
  KeysFormat keys_format = KeysFormat::Text;
  CompareOptions compare;
  std::string text;      ///< Help and Version: what to print on stdout
  IssOptions iss;        ///< iss run
  SystemOptions system;  ///< system run
  ReportOptions report;  ///< report
};

/// A command line that CLI11 rejects; what() is one line.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses the command line (argv[0] is the program name). Throws UsageError.
CliArgs parse_cli(int argc, const char* const* argv);

using RunFunction = std::function<int(const Config&, const RunOptions&)>;
/// `vtoe validate`'s checks beyond the schema (those the platform makes when it is built); throws
/// ConfigError. Empty: the schema's checks only.
using CheckFunction = std::function<void(const Config&)>;

/// Runs `vtoe iss run`; returns the program's exit status (defined in iss_runner.cpp).
int run_iss(const IssOptions& opts, std::ostream& err);
/// Runs `vtoe system run`; returns 0 on PSCI SYSTEM_OFF (defined in system_runner.cpp).
int run_system(const SystemOptions& opts, std::ostream& err);

/// Runs `vtoe report`: the Python package's `vtoe.report` in the interpreter report_python()
/// finds; returns its exit status, or kExitUsage with a message naming what is missing (defined
/// in report.cpp).
int run_report(const ReportOptions& opts, std::ostream& err);

/// The command line as one string, each argument shell-quoted when it needs it.
std::string shell_join(int argc, const char* const* argv);

/// Parses, loads the scenario and calls `run` for `vtoe run`; handles keys/validate/help/version
/// itself. Errors are printed as one line "vtoe: <message>" on `err`. Returns run's result, 0, or
/// kExitUsage for usage and configuration errors (kExitFailure if run throws anything else).
int cli_main(int argc, char** argv, const RunFunction& run, const CheckFunction& check = {});
int cli_main(int argc, const char* const* argv, const RunFunction& run, std::ostream& out,
             std::ostream& err, const CheckFunction& check = {});

/// The project version, "0.1.0" (`vtoe --version` prints "vtoe 0.1.0").
std::string version_string();

}  // namespace vtoe::app
