// CLI: parsing of run/validate/keys/--version, bad flags, and cli_main's exit codes and messages.
#include "app/cli.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace vtoe::app {
namespace {

CliArgs parse(std::vector<const char*> args) {
  args.insert(args.begin(), "vtoe");
  return parse_cli(static_cast<int>(args.size()), args.data());
}

std::string usage_error(std::vector<const char*> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(CliParse, RunWithEverything) {
  const CliArgs a =
      parse({"run", "scenarios/paper/fig7.yaml", "--set", "toe.bandwidth=1Gbps",
             "--set=vms.0.name=a", "--seed", "9", "--pcap", "--log-level", "debug", "--quiet"});
  EXPECT_EQ(a.command, Command::Run);
  EXPECT_EQ(a.run.scenario, "scenarios/paper/fig7.yaml");
  EXPECT_EQ(a.run.sets,
            (std::vector<std::string>{"toe.bandwidth=1Gbps", "vms.0.name=a", "seed=9"}));
  EXPECT_EQ(a.run.out_dir, "out/fig7");
  EXPECT_TRUE(a.run.pcap);
  EXPECT_TRUE(a.run.quiet);
  EXPECT_EQ(a.run.log_level, core::LogLevel::Debug);
}

TEST(CliParse, RunDefaults) {
  const CliArgs a = parse({"run"});
  EXPECT_EQ(a.command, Command::Run);
  EXPECT_EQ(a.run.scenario, "");
  EXPECT_TRUE(a.run.sets.empty());
  EXPECT_EQ(a.run.out_dir, "out/default");
  EXPECT_FALSE(a.run.pcap);
  EXPECT_FALSE(a.run.quiet);
  EXPECT_EQ(a.run.log_level, core::LogLevel::Info);
  EXPECT_EQ(parse({"run", "x.yaml", "--out", "/tmp/r"}).run.out_dir, "/tmp/r");
  // --set options after the file, and the file after --set, both work.
  EXPECT_EQ(parse({"run", "--set", "seed=3", "x.yaml"}).run.scenario, "x.yaml");
}

TEST(CliParse, OutputBoundsHaveDefaultsAndTakeSizes) {
  const CliArgs d = parse({"run"});
  EXPECT_EQ(d.run.pcap_limit, 1ull << 30);  // docs/net.md, docs/outputs.md
  EXPECT_EQ(d.run.pcap_snaplen, 65535u);
  EXPECT_EQ(d.run.stats_limit, 256ull << 20);
  const CliArgs a =
      parse({"run", "--pcap-limit", "10MiB", "--pcap-snaplen", "128", "--stats-limit", "0"});
  EXPECT_EQ(a.run.pcap_limit, 10ull << 20);
  EXPECT_EQ(a.run.pcap_snaplen, 128u);
  EXPECT_EQ(a.run.stats_limit, 0u);  // no bound
  EXPECT_EQ(usage_error({"run", "--pcap-snaplen", "13"}),
            "--pcap-snaplen 13: give 14 to 262144 bytes");
  EXPECT_EQ(usage_error({"run", "--pcap-limit", "lots"}).rfind("--pcap-limit lots: ", 0), 0u);
  EXPECT_EQ(usage_error({"run", "--stats-limit", "1XB"}).rfind("--stats-limit 1XB: ", 0), 0u);
  // A capture window implies --pcap; FROM:TO as --trace-window's.
  const CliArgs w = parse({"run", "--pcap-window", "20ms:25ms"});
  EXPECT_TRUE(w.run.pcap);
  EXPECT_EQ(w.run.pcap_from_ps, 20'000'000'000ull);
  EXPECT_EQ(w.run.pcap_to_ps, 25'000'000'000ull);
  EXPECT_EQ(d.run.pcap_to_ps, 0u);  // no window: the whole run
  EXPECT_EQ(usage_error({"run", "--pcap-window", "25ms:20ms"}),
            "--pcap-window 25ms:20ms: the end must be after the start");
  EXPECT_EQ(usage_error({"run", "--pcap-window", "20ms"}),
            "--pcap-window 20ms: expected FROM:TO, e.g. 20ms:25ms");
  // The waveform: 256 MiB and the whole run by default; its options need --vcd.
  EXPECT_EQ(d.run.vcd_limit, 256ull << 20);
  EXPECT_EQ(d.run.vcd_to_ps, 0u);
  const CliArgs v =
      parse({"run", "--vcd", "w.vcd", "--vcd-limit", "50MiB", "--vcd-window", "1ms:2ms"});
  EXPECT_EQ(v.run.vcd_limit, 50ull << 20);
  EXPECT_EQ(v.run.vcd_from_ps, 1'000'000'000ull);
  EXPECT_EQ(v.run.vcd_to_ps, 2'000'000'000ull);
  EXPECT_EQ(
      usage_error({"run", "--vcd", "w.vcd", "--vcd-limit", "big"}).rfind("--vcd-limit big: ", 0),
      0u);
  EXPECT_EQ(usage_error({"run", "--vcd", "w.vcd", "--vcd-window", "2ms:1ms"}),
            "--vcd-window 2ms:1ms: the end must be after the start");
  EXPECT_NE(usage_error({"run", "--vcd-limit", "1MiB"}).find("--vcd"), std::string::npos);
  EXPECT_NE(usage_error({"run", "--vcd-window", "1ms:2ms"}), "<no error>");
}

TEST(CliParse, IssTracesStayNearTheOtherOutputsBounds) {
  // About 570 and 220 bytes per instruction: both defaults near 230 MB (docs/outputs.md).
  EXPECT_EQ(parse({"iss", "run", "--trace", "t.log", "prog"}).iss.trace_limit, 400'000u);
  EXPECT_EQ(parse({"system", "run", "--kernel", "k", "--trace", "t.log"}).system.trace_limit,
            1'000'000u);
}

TEST(CliParse, PcapOfNamedLinksAndPcapng) {
  // --pcap alone: every link; --pcap=A,B: those links; the next argument is never a link list.
  const CliArgs all = parse({"run", "--pcap", "x.yaml"});
  EXPECT_TRUE(all.run.pcap);
  EXPECT_TRUE(all.run.pcap_links.empty());
  EXPECT_EQ(all.run.scenario, "x.yaml");
  EXPECT_FALSE(all.run.pcapng);
  const CliArgs some = parse({"run", "x.yaml", "--pcap=uplink,to_server0"});
  EXPECT_TRUE(some.run.pcap);
  EXPECT_EQ(some.run.pcap_links, (std::vector<std::string>{"uplink", "to_server0"}));
  EXPECT_EQ(usage_error({"run", "--pcap=uplink,,b"}),
            "--pcap=uplink,,b: an empty link name (give LINK,LINK...)");
  // pcapng implies a capture.
  const CliArgs ng = parse({"run", "--pcap-format", "pcapng"});
  EXPECT_TRUE(ng.run.pcap && ng.run.pcapng);
  EXPECT_NE(usage_error({"run", "--pcap-format", "erf"}).find("--pcap-format"), std::string::npos);
}

TEST(CliParse, SeedsRunsOnePerSeed) {
  EXPECT_EQ(parse({"run", "--seeds", "5"}).run.seeds, 5u);
  EXPECT_EQ(parse({"run"}).run.seeds, 0u);
  EXPECT_NE(usage_error({"run", "--seeds", "0"}), "<no error>");
  EXPECT_EQ(usage_error({"run", "--seeds", "2", "--seed", "3"}),
            "--seeds and --seed: give one (--seeds N runs seeds 1..N)");
}

TEST(CliParse, ValidateAndKeys) {
  const CliArgs v = parse({"validate", "x.yaml", "--set", "seed=2"});
  EXPECT_EQ(v.command, Command::Validate);
  EXPECT_EQ(v.run.scenario, "x.yaml");
  EXPECT_EQ(v.run.sets, (std::vector<std::string>{"seed=2"}));
  const CliArgs k = parse({"keys"});
  EXPECT_EQ(k.command, Command::Keys);
  EXPECT_EQ(k.keys_format, KeysFormat::Text);
  EXPECT_EQ(parse({"keys", "--format", "markdown"}).keys_format, KeysFormat::Markdown);
}

TEST(CliParse, VersionAndHelp) {
  const CliArgs v = parse({"--version"});
  EXPECT_EQ(v.command, Command::Version);
  // The version, then the build: `git describe` and the binary's hash (run.json carries both).
  EXPECT_EQ(v.text.rfind("vtoe " + version_string() + "\nbuild: git ", 0), 0u) << v.text;
  EXPECT_NE(v.text.find(", binary gnu-build-id:"), std::string::npos) << v.text;
  EXPECT_NE(version_string(), "");
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(version_string()[0]))) << version_string();
  const CliArgs h = parse({"--help"});
  EXPECT_EQ(h.command, Command::Help);
  EXPECT_NE(h.text.find("validate"), std::string::npos);
  const CliArgs rh = parse({"run", "--help"});
  EXPECT_EQ(rh.command, Command::Help);
  EXPECT_NE(rh.text.find("--log-level"), std::string::npos);
}

TEST(CliParse, IssRunPassesEverythingAfterTheProgramToIt) {
  const CliArgs a = parse({"iss", "run", "--stats", "s.json", "prog", "-x", "--stats", "y"});
  EXPECT_EQ(a.command, Command::IssRun);
  EXPECT_EQ(a.iss.program, "prog");
  EXPECT_EQ(a.iss.args, (std::vector<std::string>{"-x", "--stats", "y"}));
  EXPECT_EQ(a.iss.stats, "s.json");
  const CliArgs b = parse({"iss", "run", "prog"});
  EXPECT_TRUE(b.iss.args.empty());
  EXPECT_TRUE(b.iss.stats.empty());
  EXPECT_EQ(usage_error({"iss", "run"}), "iss run: PROGRAM is required");
  EXPECT_NE(usage_error({"iss"}), "<no error>");
}

TEST(CliParse, Report) {
  const CliArgs a = parse({"report", "out/x", "--out", "/tmp/x.html"});
  EXPECT_EQ(a.command, Command::Report);
  EXPECT_EQ(a.report.dir, "out/x");
  EXPECT_EQ(a.report.out, "/tmp/x.html");
  EXPECT_EQ(parse({"report", "out/x"}).report.out, "");
  EXPECT_NE(usage_error({"report"}).find("dir is required"), std::string::npos);
  EXPECT_NE(usage_error({"report", "a", "b"}), "<no error>");
}

TEST(CliParse, ShellJoinQuotesWhatTheShellWouldSplit) {
  const std::vector<const char*> argv = {"vtoe",        "run", "--set",      "vms.0.name=a b",
                                         "--set=x='y'", "",    "out/d-1_2.x"};
  // 'a b' and '' are quoted; a quote inside closes, escapes and reopens: '\''
  EXPECT_EQ(shell_join(static_cast<int>(argv.size()), argv.data()),
            R"(vtoe run --set 'vms.0.name=a b' '--set=x='\''y'\''' '' out/d-1_2.x)");
}

TEST(CliParse, BadCommandLines) {
  EXPECT_EQ(usage_error({}),
            "a command is required: run, validate, keys, compare, report, iss or system (see vtoe "
            "--help)");
  EXPECT_NE(usage_error({"run", "--bogus"}).find("--bogus"), std::string::npos);
  EXPECT_EQ(usage_error({"frobnicate"}),
            "unknown command 'frobnicate' (commands: run, validate, keys, schema, compare, "
            "report, iss, system; see vtoe --help)");
  EXPECT_NE(usage_error({"run", "--log-level", "loud"}).find("loud"), std::string::npos);
  EXPECT_NE(usage_error({"run", "--seed", "abc"}).find("--seed"), std::string::npos);
  EXPECT_NE(usage_error({"run", "--seed", "-1"}).find("expected a non-negative integer"),
            std::string::npos);
  EXPECT_NE(usage_error({"run", "--seed", "18446744073709551616"}), "<no error>");
  EXPECT_EQ(parse({"run", "--seed", "18446744073709551615"}).run.sets.back(),
            "seed=18446744073709551615");
  EXPECT_NE(usage_error({"keys", "--format", "html"}).find("html"), std::string::npos);
  EXPECT_NE(usage_error({"run", "a.yaml", "b.yaml"}), "<no error>");
  EXPECT_NE(usage_error({"run", "--set"}), "<no error>");
  EXPECT_NE(usage_error({"keys", "--pcap"}), "<no error>");
}

struct Outcome {
  int code;
  std::string out, err;
  int runs;
  std::uint64_t seed;
  RunOptions options;
};

Outcome cli(std::vector<const char*> args, int run_result = 0, bool run_throws = false) {
  args.insert(args.begin(), "vtoe");
  Outcome o{};
  std::ostringstream out, err;
  o.code = cli_main(
      static_cast<int>(args.size()), args.data(),
      [&](const Config& c, const RunOptions& opts) {
        ++o.runs;
        o.seed = c.get_uint("seed");
        o.options = opts;
        if (run_throws) throw std::runtime_error("disk full\nreally");
        return run_result;
      },
      out, err);
  o.out = out.str();
  o.err = err.str();
  return o;
}

TEST(CliMain, RunCallsTheRunFunction) {
  const Outcome o = cli({"run", "--seed", "77", "--set", "toe.mtu=1000"}, 5);
  EXPECT_EQ(o.code, 5);
  EXPECT_EQ(o.runs, 1);
  EXPECT_EQ(o.seed, 77u);
  EXPECT_EQ(o.options.out_dir, "out/default");
  EXPECT_EQ(o.options.command, "vtoe run --seed 77 --set toe.mtu=1000");
  EXPECT_EQ(o.err, "");
}

TEST(CliMain, RunLoadsTheFile) {
  const std::string path = ::testing::TempDir() + "cli_test_s1.yaml";
  { std::ofstream(path) << "seed: 12\n"; }
  const Outcome o = cli({"run", path.c_str()});
  EXPECT_EQ(o.code, 0);
  EXPECT_EQ(o.seed, 12u);
  EXPECT_EQ(o.options.out_dir, "out/cli_test_s1");
  std::remove(path.c_str());
  const Outcome missing = cli({"run", path.c_str()});
  EXPECT_EQ(missing.code, kExitUsage);
  EXPECT_EQ(missing.runs, 0);
  EXPECT_EQ(missing.err,
            "vtoe: " + path + ": cannot read scenario file: No such file or directory\n");
}

TEST(CliMain, ConfigAndUsageErrorsExitTwoWithOneLine) {
  const Outcome bad = cli({"run", "--set", "platform.cpu_freq=fast"});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_EQ(bad.runs, 0);
  EXPECT_EQ(bad.err,
            "vtoe: --set platform.cpu_freq: expected a frequency such as 2GHz or 400MHz, got "
            "\"fast\"\n");
  const Outcome flag = cli({"run", "--bogus"});
  EXPECT_EQ(flag.code, kExitUsage);
  EXPECT_EQ(flag.err.rfind("vtoe: ", 0), 0u);
  EXPECT_EQ(flag.err.find('\n'), flag.err.size() - 1);
  EXPECT_EQ(cli({}).code, kExitUsage);
}

TEST(CliMain, RunFailureExitsOne) {
  const Outcome o = cli({"run"}, 0, true);
  EXPECT_EQ(o.code, kExitFailure);
  EXPECT_EQ(o.err, "vtoe: disk full really\n");
}

TEST(CliMain, ValidateKeysVersion) {
  const Outcome v = cli({"validate", "--set", "seed=4"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.runs, 0);
  EXPECT_EQ(v.out, Config::defaults({"seed=4"}).resolved_yaml());
  EXPECT_NE(v.out.find("seed: 4\n"), std::string::npos);
  const Outcome k = cli({"keys", "--format", "markdown"});
  EXPECT_EQ(k.code, 0);
  EXPECT_EQ(k.out, describe_keys(Schema::builtin(), KeysFormat::Markdown));
  EXPECT_EQ(cli({"keys"}).out, describe_keys(Schema::builtin(), KeysFormat::Text));
  const Outcome ver = cli({"--version"});
  EXPECT_EQ(ver.code, 0);
  EXPECT_EQ(ver.out.rfind("vtoe " + version_string() + "\n", 0), 0u) << ver.out;
  const Outcome bad = cli({"validate", "--set", "warmup=1s"});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(bad.err, "vtoe: --set warmup: must be less than duration (100ms), got 1s\n");
}

}  // namespace
}  // namespace vtoe::app

// cli.cpp uses the core logger, which pulls in libsystemc, whose main() needs an sc_main. This
// file's main() takes precedence over libsystemc's; sc_main runs the same tests if it is ever used.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
extern "C" int sc_main(int argc, char* argv[]) { return main(argc, argv); }
