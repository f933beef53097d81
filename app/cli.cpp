#include "app/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string_view>
#include <tuple>

#include "app/build_info.h"
#include "app/json_schema.h"
#include "models/core/units.h"

#ifndef VTOE_VERSION
#define VTOE_VERSION "0.0.0"
#endif

namespace vtoe::app {
namespace {

std::string one_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

// Options shared by `run` and `validate`.
// A seed is a uint64 written in decimal (CLI11 would wrap "-1" around to 2^64-1).
const CLI::Validator kSeed(
    [](std::string& text) {
      std::uint64_t v = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
      if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size()) {
        return "expected a non-negative integer below 2^64, got \"" + text + "\"";
      }
      return std::string();
    },
    "");

void add_scenario_options(CLI::App* cmd, RunOptions& opts, std::string& seed) {
  cmd->add_option("file", opts.scenario, "Scenario YAML file (default: the built-in scenario)");
  cmd->add_option("--set", opts.sets, "Override a key, e.g. --set toe.bandwidth=1Gbps (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--seed", seed, "Shorthand for --set seed=N")->type_name("N")->check(kSeed);
}

}  // namespace

std::string version_string() { return VTOE_VERSION; }

std::string shell_join(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](unsigned char c) {
      return std::isalnum(c) || std::string_view("@%+=:,./_-").find(c) != std::string::npos;
    });
    if (i > 0) line += ' ';
    if (plain) {
      line += a;
      continue;
    }
    line += '\'';
    for (char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

CliArgs parse_cli(int argc, const char* const* argv) {
  CliArgs args;
  CLI::App app{"vtoe: SystemC/TLM simulator of a virtualized TCP/IP Offload Engine platform",
               "vtoe"};
  app.set_version_flag("--version", "vtoe " + version_string());
  app.require_subcommand(1);

  std::string seed;
  std::string log_level = "info";
  std::string keys_format = "text";

  CLI::App* run = app.add_subcommand("run", "Run a scenario");
  add_scenario_options(run, args.run, seed);
  run->add_option("--out", args.run.out_dir, "Output directory (default: out/<scenario name>)")
      ->type_name("DIR");
  std::string pcap_links, pcap_format = "pcap";
  run->add_flag("--pcap{*}", pcap_links,
                "Write a pcap file per link (DIR/<link>.pcap); --pcap=LINK,... only those links "
                "(by links[].name; link0 or netvp without a topology)")
      ->type_name("[=LINK,...]");
  run->add_option("--pcap-format", pcap_format,
                  "pcap (default) or pcapng: DIR/<link>.pcapng, where each frame the loss model "
                  "dropped carries a comment saying so; implies --pcap")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"pcap", "pcapng"}));
  run->add_option("--seeds", args.run.seeds,
                  "Run once per seed 1..N, each into DIR/seed-K, and write DIR/seeds.json: "
                  "each figure's minimum, mean and maximum over the seeds")
      ->type_name("N")
      ->check(CLI::Range(1, 1000));
  std::string pcap_limit, pcap_snaplen, pcap_window;
  run->add_option("--pcap-limit", pcap_limit,
                  "Largest size of each capture, e.g. 100MiB (default 1GiB; 0 = no bound): "
                  "frames after the bound are left out, with a warning")
      ->type_name("SIZE");
  run->add_option("--pcap-window", pcap_window,
                  "Capture only the frames of this span of simulated time, e.g. 20ms:25ms "
                  "(default: the whole run); implies --pcap")
      ->type_name("FROM:TO");
  run->add_option("--pcap-snaplen", pcap_snaplen,
                  "Bytes kept of each captured frame, e.g. 128 for the headers (default 65535: "
                  "whole frames)")
      ->type_name("BYTES");
  run->add_option("--log-level", log_level, "off, error, warn, info, debug or trace")
      ->type_name("LEVEL")
      ->check(CLI::IsMember({"off", "error", "warn", "info", "debug", "trace"}));
  run->add_flag("--quiet,-q", args.run.quiet, "Print nothing but errors");
  std::string trace_window;
  run->add_flag("--trace", args.run.trace,
                "Write a timeline trace (DIR/trace.json, Chrome trace events for Perfetto)");
  run->add_option("--trace-window", trace_window,
                  "Simulated time span to trace, e.g. 20ms:25ms (default: 10 ms after warm-up); "
                  "implies --trace")
      ->type_name("FROM:TO");

  run->add_option("--trace-limit", args.run.trace_limit,
                  "Events the timeline trace holds at most (default 2500000, about 250 MB; 0 = no "
                  "bound): later events are left out, with a warning")
      ->type_name("N");

  std::string stats_interval;
  run->add_option("--stats-interval", stats_interval,
                  "Write DIR/timeseries.csv with a row every this much simulated time, e.g. 1ms "
                  "(shorthand for --set stats_interval=...)")
      ->type_name("TIME");
  std::string stats_limit;
  run->add_option("--stats-limit", stats_limit,
                  "Largest size of timeseries.csv, e.g. 10MiB (default 256MiB; 0 = no bound): "
                  "rows after the bound are left out, with a warning")
      ->type_name("SIZE");
  CLI::Option* vcd =
      run->add_option("--vcd", args.run.vcd,
                      "Write a waveform (VCD, for GTKWave) of interrupt lines, the interrupt bit "
                      "vector, queue occupancies, link busy and the running VM")
          ->type_name("FILE");
  std::string vcd_limit, vcd_window;
  run->add_option("--vcd-limit", vcd_limit,
                  "Largest size of the --vcd file, e.g. 50MiB (default 256MiB; 0 = no bound): "
                  "value changes after the bound are left out, with a warning")
      ->type_name("SIZE")
      ->needs(vcd);
  run->add_option("--vcd-window", vcd_window,
                  "Simulated time span the --vcd file covers, e.g. 20ms:25ms (default: the "
                  "whole run)")
      ->type_name("FROM:TO")
      ->needs(vcd);

  CLI::App* validate = app.add_subcommand("validate", "Check a scenario and print it resolved");
  add_scenario_options(validate, args.run, seed);

  CLI::App* keys = app.add_subcommand("keys", "List every scenario key with default and meaning");
  keys->add_option("--format", keys_format, "text or markdown")
      ->check(CLI::IsMember({"text", "markdown"}));

  CLI::App* schema = app.add_subcommand(
      "schema", "Print the scenario keys as JSON Schema (for editors and jsonschema)");

  CLI::App* compare =
      app.add_subcommand("compare",
                         "Show what moved between two runs' results.json (exit 1 if "
                         "anything moved beyond the tolerance)");
  compare->add_option("a", args.compare.a, "results.json or run directory A")->required();
  compare->add_option("b", args.compare.b, "results.json or run directory B")->required();
  compare
      ->add_option("--tolerance", args.compare.tolerance_pct,
                   "Relative change in percent that still counts as unchanged (default 0)")
      ->type_name("PCT")
      ->check(CLI::NonNegativeNumber);
  compare
      ->add_option("--abs", args.compare.tolerance_abs,
                   "Absolute change that still counts as unchanged (default 0)")
      ->type_name("X")
      ->check(CLI::NonNegativeNumber);
  compare->add_flag("--all", args.compare.all, "List the unchanged values too");

  CLI::App* report = app.add_subcommand(
      "report",
      "Write one self-contained HTML page (figures embedded) for a run directory, a sweep "
      "directory or a report.md directory (make paper's, a study's); made by the Python package "
      "vtoe with matplotlib");
  report
      ->add_option("dir", args.report.dir,
                   "Run directory (results.json), sweep directory (results.csv), or out/paper "
                   "or a study's directory (report.md)")
      ->required();
  report->add_option("--out", args.report.out, "The page (default DIR/report.html)")
      ->type_name("FILE");

  CLI::App* iss = app.add_subcommand("iss", "ARMv7-A instruction-set simulator");
  iss->require_subcommand(1);
  CLI::App* iss_run = iss->add_subcommand(
      "run", "Run a static ARM Linux program (syscall emulation); exits with its status");
  iss_run
      ->add_option("--stats", args.iss.stats,
                   "Write instructions retired by class and wall-clock MIPS as JSON")
      ->type_name("FILE");
  iss_run
      ->add_option("--trace", args.iss.trace,
                   "Write the registers before every instruction, in qemu-arm's -d cpu format "
                   "(slow; for lock-step checks)")
      ->type_name("FILE");
  iss_run
      ->add_option("--trace-from", args.iss.trace_from,
                   "Trace from the Nth instruction on (default 0)")
      ->type_name("N");
  iss_run
      ->add_option("--trace-limit", args.iss.trace_limit,
                   "Trace at most N instructions, about 570 bytes each (default 400000, "
                   "about 230 MB; 0: no limit); the program runs on untraced, with a message")
      ->type_name("N");
  // PROGRAM and everything after it belong to the program, options included.
  iss_run->prefix_command();

  CLI::App* system = app.add_subcommand("system", "ARMv7-A system platform (QEMU virt's map)");
  system->require_subcommand(1);
  CLI::App* system_run = system->add_subcommand(
      "run", "Run a bare-metal ELF or a Linux zImage; the UART goes to standard output");
  SystemOptions& so = args.system;
  std::string memory;
  system_run->add_option("--kernel", so.kernel, "ELF (loaded at its addresses) or zImage")
      ->type_name("FILE")
      ->required();
  system_run->add_option("--initrd", so.initrd, "Initial RAM disk (with a zImage)")
      ->type_name("FILE");
  system_run->add_option("--append", so.append, "Kernel command line (/chosen/bootargs)")
      ->type_name("STRING");
  system_run
      ->add_option("--device", so.devices,
                   "A hypervisor's boot module, as QEMU's: guest-loader,addr=ADDR,kernel=FILE"
                   "[,bootargs=STRING] or guest-loader,addr=ADDR,initrd=FILE (repeatable; a "
                   "/chosen/module@ node each)")
      ->type_name("SPEC");
  system_run->add_option("--dtb", so.dtb, "Device tree blob instead of the generated one")
      ->type_name("FILE");
  system_run
      ->add_flag("--dtb-as-is", so.dtb_as_is,
                 "Give the kernel --dtb's bytes unchanged (no /chosen update, no room added; for "
                 "example the blob QEMU's kernel saw, dumped from its memory)")
      ->needs("--dtb");
  system_run->add_flag("--virtualization", so.virtualization,
                       "Start in Hyp mode (as QEMU's -M virt,virtualization=on)");
  system_run->add_option("--memory", memory, "RAM size (default 128MiB)")->type_name("SIZE");
  std::string guest_memory;
  system_run
      ->add_option("--guests", so.guests,
                   "Boot the kernel N times, each in a VM under the hypervisor model (in Hyp "
                   "mode: implies --virtualization; docs/hypervisor-iss.md)")
      ->type_name("N")
      ->check(CLI::Range(1, 16));
  system_run
      ->add_option("--guest-memory", guest_memory, "Each VM's RAM with --guests (default 128MiB)")
      ->type_name("SIZE");
  system_run
      ->add_option("--smp", so.smp,
                   "Cores, 1 to 8 (as QEMU's -smp N: the others start powered off, PSCI CPU_ON "
                   "starts them)")
      ->type_name("N")
      ->check(CLI::Range(1, 8));
  system_run
      ->add_option("--max-instructions", so.max_instructions,
                   "End the run after exactly N instructions and exception entries "
                   "(exit status 4)")
      ->type_name("N")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            // A bound of 0 (or a negative one) would be no bound: refused, not ignored.
            const bool digits =
                !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
            if (digits && v.find_first_not_of('0') != std::string::npos) return "";
            return "must be a positive number of instructions, not '" + v + "'";
          },
          "N > 0"));
  system_run
      ->add_option("--stats", so.stats, "Write instructions by class, exceptions and MIPS as JSON")
      ->type_name("FILE");
  system_run->add_option("--gdb", so.gdb_port, "Serve GDB's remote protocol on 127.0.0.1:PORT")
      ->type_name("PORT");
  system_run
      ->add_option("--scenario", so.scenario,
                   "Scenario YAML whose toe.*, network.* and vms[0] keys set up the TOE in the "
                   "platform-bus window and its peer (default: the built-in scenario)")
      ->type_name("FILE");
  system_run->add_option("--set", so.sets, "Override a scenario key (repeatable)")
      ->type_name("KEY=VALUE");
  system_run
      ->add_option("--trace", so.trace,
                   "Write r0-r15 and the CPSR before each instruction, as qemu-system-arm "
                   "-singlestep -d cpu prints them")
      ->type_name("FILE");
  system_run
      ->add_option("--trace-limit", so.trace_limit,
                   "Instructions traced at most (default 1000000, 221 bytes each: 221 MB); "
                   "the run goes on untraced, with a warning")
      ->type_name("N")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  std::string trace_at;
  system_run
      ->add_option("--trace-at", trace_at,
                   "Start the trace at the first instruction at this virtual address (for "
                   "example a kernel's start_kernel; the core runs at full speed before it)")
      ->type_name("ADDR");

  // CLI11 would report a mistyped command as a missing one.
  const auto& commands = app.get_subcommands([](const CLI::App*) { return true; });
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(),
                   [&](const CLI::App* c) { return c->check_name(argv[1]); })) {
    throw UsageError(
        std::string("unknown command '") + argv[1] +
        "' (commands: run, validate, keys, schema, compare, report, iss, system; see vtoe "
        "--help)");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    // CLI11 formats the help text; it goes to the caller instead of stdout.
    std::ostringstream text;
    app.exit(e, text, text);
    args.command = Command::Help;
    args.text = text.str();
    return args;
  } catch (const CLI::CallForVersion& e) {
    args.command = Command::Version;
    args.text = "vtoe " + version_string() + "\nbuild: git " + git_describe() + ", binary " +
                binary_id() + "\n";
    return args;
  } catch (const CLI::RequiredError& e) {
    if (app.get_subcommands().empty()) {
      throw UsageError(
          "a command is required: run, validate, keys, compare, report, iss or system (see vtoe "
          "--help)");
    }
    throw UsageError(one_line(e.what()));
  } catch (const CLI::ParseError& e) {
    throw UsageError(one_line(e.what()));
  }

  if (system_run->parsed()) {
    args.command = Command::SystemRun;
    if (!trace_at.empty()) {
      std::size_t used = 0;
      unsigned long long va = 0;
      try {
        va = std::stoull(trace_at, &used, 0);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != trace_at.size() || va > 0xffffffffULL) {
        throw UsageError("--trace-at: '" + trace_at + "' is not a 32-bit address");
      }
      if (so.trace.empty()) throw UsageError("--trace-at needs --trace FILE");
      so.trace_at = static_cast<std::uint32_t>(va);
    }
    if (!memory.empty()) {
      try {
        so.memory = core::parse_bytes(memory, core::BareNumber::BaseUnit);
      } catch (const core::UnitError& e) {
        throw UsageError("system run: --memory " + memory + ": " + e.what());
      }
      if (so.memory == 0) throw UsageError("system run: --memory must be more than 0");
    }
    if (!guest_memory.empty()) {
      try {
        so.guest_memory = core::parse_bytes(guest_memory, core::BareNumber::BaseUnit);
      } catch (const core::UnitError& e) {
        throw UsageError("system run: --guest-memory " + guest_memory + ": " + e.what());
      }
      if (so.guests == 0) throw UsageError("system run: --guest-memory needs --guests N");
    }
    if (so.guests > 0) {
      if (!memory.empty())
        throw UsageError(
            "system run: --memory with --guests: the RAM is the guests' "
            "(--guest-memory each) and the hypervisor's 16 MiB");
      if (!so.devices.empty() || !so.dtb.empty())
        throw UsageError(
            "system run: --guests boots the kernel itself in each VM, with a device "
            "tree of its own (no --device, no --dtb)");
      so.virtualization = true;
    }
    return args;
  }
  if (iss_run->parsed()) {
    std::vector<std::string> rest = iss_run->remaining();
    if (rest.empty()) throw UsageError("iss run: PROGRAM is required");
    args.command = Command::IssRun;
    args.iss.program = rest.front();
    args.iss.args.assign(rest.begin() + 1, rest.end());
    return args;
  }
  if (run->parsed()) {
    args.command = Command::Run;
  } else if (validate->parsed()) {
    args.command = Command::Validate;
  } else if (compare->parsed()) {
    args.command = Command::Compare;
  } else if (report->parsed()) {
    args.command = Command::Report;
  } else if (schema->parsed()) {
    args.command = Command::Schema;
  } else {
    args.command = Command::Keys;
  }
  if (args.command == Command::Run || args.command == Command::Validate) {
    const CLI::App* cmd = args.command == Command::Run ? run : validate;
    if (cmd->count("--seed") > 0) args.run.sets.push_back("seed=" + seed);
    if (!stats_interval.empty()) args.run.sets.push_back("stats_interval=" + stats_interval);
    if (args.run.out_dir.empty()) {
      const std::string stem = args.run.scenario.empty()
                                   ? "default"
                                   : std::filesystem::path(args.run.scenario).stem().string();
      args.run.out_dir = "out/" + stem;
    }
    args.run.log_level = core::parse_log_level(log_level);
    for (const auto& [text, option, value] :
         {std::tuple{pcap_limit, "--pcap-limit", &args.run.pcap_limit},
          std::tuple{stats_limit, "--stats-limit", &args.run.stats_limit},
          std::tuple{vcd_limit, "--vcd-limit", &args.run.vcd_limit}}) {
      if (text.empty()) continue;
      try {
        *value = core::parse_bytes(text, core::BareNumber::BaseUnit);
      } catch (const core::UnitError& e) {
        throw UsageError(std::string(option) + " " + text + ": " + e.what());
      }
    }
    if (!pcap_snaplen.empty()) {
      std::uint64_t snap = 0;
      try {
        snap = core::parse_bytes(pcap_snaplen, core::BareNumber::BaseUnit);
      } catch (const core::UnitError& e) {
        throw UsageError("--pcap-snaplen " + pcap_snaplen + ": " + e.what());
      }
      // 14 bytes keep the Ethernet header; libpcap's files hold at most 262144 per record.
      if (snap < 14 || snap > 262144)
        throw UsageError("--pcap-snaplen " + pcap_snaplen + ": give 14 to 262144 bytes");
      args.run.pcap_snaplen = static_cast<std::uint32_t>(snap);
    }
    // "20ms:25ms" -> {from, to} in ps; throws UsageError naming the option.
    auto window = [](const std::string& option, const std::string& text) {
      const auto colon = text.find(':');
      std::pair<std::uint64_t, std::uint64_t> w;
      try {
        if (colon == std::string::npos) throw core::UnitError("expected FROM:TO, e.g. 20ms:25ms");
        w = {core::parse_time(text.substr(0, colon)), core::parse_time(text.substr(colon + 1))};
      } catch (const core::UnitError& e) {
        throw UsageError(option + " " + text + ": " + e.what());
      }
      if (w.second <= w.first)
        throw UsageError(option + " " + text + ": the end must be after the start");
      return w;
    };
    if (!trace_window.empty()) {
      std::tie(args.run.trace_from_ps, args.run.trace_to_ps) =
          window("--trace-window", trace_window);
      args.run.trace = true;
    }
    if (!vcd_window.empty())
      std::tie(args.run.vcd_from_ps, args.run.vcd_to_ps) = window("--vcd-window", vcd_window);
    if (!pcap_window.empty()) {
      std::tie(args.run.pcap_from_ps, args.run.pcap_to_ps) = window("--pcap-window", pcap_window);
      args.run.pcap = true;
    }
    if (!pcap_links.empty()) {
      args.run.pcap = true;
      if (pcap_links != "*") {
        std::size_t from = 0;
        for (;;) {
          const std::size_t comma = pcap_links.find(',', from);
          const std::string name = pcap_links.substr(from, comma - from);
          if (name.empty())
            throw UsageError("--pcap=" + pcap_links + ": an empty link name (give LINK,LINK...)");
          args.run.pcap_links.push_back(name);
          if (comma == std::string::npos) break;
          from = comma + 1;
        }
      }
    }
    if (args.run.seeds && cmd->count("--seed") > 0)
      throw UsageError("--seeds and --seed: give one (--seeds N runs seeds 1..N)");
    if (args.command == Command::Run && run->count("--pcap-format") > 0) {
      args.run.pcapng = pcap_format == "pcapng";
      args.run.pcap = true;
    }
  }
  args.keys_format = keys_format == "markdown" ? KeysFormat::Markdown : KeysFormat::Text;
  return args;
}

int cli_main(int argc, const char* const* argv, const RunFunction& run, std::ostream& out,
             std::ostream& err, const CheckFunction& check) {
  auto fail = [&](const std::string& message, int code) {
    err << "vtoe: " << one_line(message) << "\n";
    return code;
  };
  try {
    const CliArgs args = parse_cli(argc, argv);
    switch (args.command) {
      case Command::Help:
      case Command::Version:
        out << args.text;
        return 0;
      case Command::Keys:
        out << describe_keys(Schema::builtin(), args.keys_format);
        return 0;
      case Command::Schema:
        out << scenario_json_schema(Schema::builtin()).dump(2) << "\n";
        return 0;
      case Command::Compare:
        try {
          return compare_results(args.compare, out);
        } catch (const std::runtime_error& e) {
          return fail(e.what(), kExitUsage);
        }
      case Command::IssRun:
        return run_iss(args.iss, err);
      case Command::SystemRun:
        return run_system(args.system, err);
      case Command::Report:
        return run_report(args.report, err);
      case Command::Validate:
      case Command::Run:
        break;
    }
    const Config config = args.run.scenario.empty()
                              ? Config::defaults(args.run.sets)
                              : Config::load(args.run.scenario, args.run.sets);
    if (args.command == Command::Validate) {
      if (check) check(config);  // what `vtoe run` would refuse, validate refuses too
      out << config.resolved_yaml();
      return 0;
    }
    if (!run) return fail("no run function", kExitFailure);
    RunOptions options = args.run;
    options.command = shell_join(argc, argv);
    return run(config, options);
  } catch (const UsageError& e) {
    return fail(e.what(), kExitUsage);
  } catch (const ConfigError& e) {
    return fail(e.what(), kExitUsage);
  } catch (const std::exception& e) {
    return fail(e.what(), kExitFailure);
  }
}

int cli_main(int argc, char** argv, const RunFunction& run, const CheckFunction& check) {
  return cli_main(argc, argv, run, std::cout, std::cerr, check);
}

}  // namespace vtoe::app
