// Config: defaults, YAML loading, --set overrides, errors naming file and key, resolved YAML.
#include "config/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace vtoe::config {
namespace {

// The one-line message of the ConfigError that loading throws, or "<no error>".
std::string error_of(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    Config::from_string(yaml, "x.yaml", sets);
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  return "<no error>";
}

TEST(ScenarioConfig, DefaultsLoad) {
  const Config c = Config::defaults();
  EXPECT_EQ(c.source(), "<defaults>");
  EXPECT_EQ(c.get_uint("seed"), 1u);
  EXPECT_EQ(c.get_time("duration"), 100'000'000'000ULL);
  EXPECT_EQ(c.get_time("warmup"), 10'000'000'000ULL);
  EXPECT_EQ(c.get_string("architecture"), "native");
  EXPECT_EQ(c.get_freq("platform.cpu_freq"), 2e9);
  EXPECT_EQ(c.get_freq("platform.device_freq"), 4e8);
  EXPECT_EQ(c.get_bandwidth("platform.dram_bandwidth"), 6.4e9);
  EXPECT_EQ(c.get_time("platform.dram_latency"), 50'000ULL);
  EXPECT_EQ(c.get_bytes("platform.dram_size"), 1024ULL << 20);
  EXPECT_EQ(c.get_bytes("platform.guest_memory"), 128ULL << 20);
  EXPECT_EQ(c.get_bandwidth("toe.bandwidth"), 1e10);
  EXPECT_EQ(c.get_bytes("toe.tx_buffer"), 256ULL << 10);
  EXPECT_EQ(c.get_uint("toe.ccb.connections"), 256u);
  EXPECT_EQ(c.get_time("toe.ccb.access_latency"), 10'000ULL);
  EXPECT_EQ(c.get_bytes("toe.mtu"), 1500u);
  EXPECT_EQ(c.get_string("network.peer"), "sim");
  EXPECT_EQ(c.get_time("network.link_delay"), 1'000'000ULL);
  EXPECT_EQ(c.get_double("network.loss"), 0.0);
  EXPECT_EQ(c.get_string("network.peer_ip"), "10.0.0.2");
  EXPECT_EQ(c.get_string("network.host_ip"), "10.0.0.1");
  EXPECT_EQ(c.get_time("guest.context_switch_interval"), 2'500'000'000ULL);
  ASSERT_EQ(c.list_size("vms"), 1u);
  EXPECT_EQ(c.get_string("vms.0.name"), "vm0");
  EXPECT_EQ(c.get_string("vms.0.workload.type"), "tcp_tx");
  EXPECT_EQ(c.get_bytes("vms.0.workload.message_size"), 8000u);
  EXPECT_EQ(c.get_uint("vms.0.workload.port"), 5001u);
  EXPECT_EQ(c.get_bytes("vms.0.workload.total_bytes"), 0u);
  EXPECT_EQ(c.get_bytes("vms.0.workload.response_size"), 64u);
  EXPECT_EQ(c.get_time("vms.0.workload.start"), 0u);
  EXPECT_EQ(c.get_time("vms.0.workload.stop"), 0u);
  EXPECT_EQ(c.get_text("platform.dram_bandwidth"), "6.4Gbps");
  EXPECT_EQ(c.get_text("vms"), "1");
}

TEST(ScenarioConfig, EmptyFileIsTheDefaultScenario) {
  EXPECT_TRUE(Config::from_string("", "x.yaml") == Config::defaults());
  EXPECT_TRUE(Config::from_string("# nothing\n", "x.yaml") == Config::defaults());
  EXPECT_TRUE(Config::from_string("platform:\n", "x.yaml") == Config::defaults());
  EXPECT_FALSE(Config::from_string("seed: 2\n", "x.yaml") == Config::defaults());
}

const char* kScenario = R"(# a scenario
seed: 42
duration: 30ms
warmup: 2.5ms
platform:
  cpu_freq: 1.5GHz
  dram_bandwidth: 800MB/s
toe:
  bandwidth: 1Gbit/s
  mtu: 9000
  ccb: {connections: 16, access_latency: 4ns}
network:
  loss: 1%
  peer_ip: 192.168.1.7
vms:
  - name: web
    workload:
      type: rpc
      message_size: 4kB
      response_size: 1KiB
      port: 80
      start: 1ms
      stop: 20ms
)";

TEST(ScenarioConfig, LoadsAFile) {
  const Config c = Config::from_string(kScenario, "x.yaml");
  EXPECT_EQ(c.get_uint("seed"), 42u);
  EXPECT_EQ(c.get_time("duration"), 30'000'000'000ULL);
  EXPECT_EQ(c.get_time("warmup"), 2'500'000'000ULL);
  EXPECT_EQ(c.get_freq("platform.cpu_freq"), 1.5e9);
  EXPECT_EQ(c.get_freq("platform.device_freq"), 4e8);  // untouched default
  EXPECT_EQ(c.get_bandwidth("platform.dram_bandwidth"), 6.4e9);
  EXPECT_EQ(c.get_bandwidth("toe.bandwidth"), 1e9);
  EXPECT_EQ(c.get_bytes("toe.mtu"), 9000u);
  EXPECT_EQ(c.get_uint("toe.ccb.connections"), 16u);
  EXPECT_EQ(c.get_time("toe.ccb.access_latency"), 4'000u);
  EXPECT_EQ(c.get_double("network.loss"), 0.01);
  EXPECT_EQ(c.get_string("network.peer_ip"), "192.168.1.7");
  ASSERT_EQ(c.list_size("vms"), 1u);
  EXPECT_EQ(c.get_string("vms.0.name"), "web");
  EXPECT_EQ(c.get_string("vms.0.workload.type"), "rpc");
  EXPECT_EQ(c.get_bytes("vms.0.workload.message_size"), 4000u);
  EXPECT_EQ(c.get_bytes("vms.0.workload.response_size"), 1024u);
  EXPECT_EQ(c.get_uint("vms.0.workload.port"), 80u);
  EXPECT_EQ(c.get_time("vms.0.workload.start"), 1'000'000'000u);
  EXPECT_EQ(c.get_time("vms.0.workload.stop"), 20'000'000'000u);
}

TEST(ScenarioConfig, LoadsFromDiskAndReportsAMissingFile) {
  const std::string path = ::testing::TempDir() + "config_test_scenario.yaml";
  { std::ofstream(path) << kScenario; }
  const Config c = Config::load(path, {"seed=9"});
  EXPECT_EQ(c.source(), path);
  EXPECT_EQ(c.get_uint("seed"), 9u);
  EXPECT_EQ(c.get_string("vms.0.name"), "web");
  std::remove(path.c_str());
  try {
    Config::load(path);
    ADD_FAILURE() << "loaded a missing file";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": cannot read scenario file: No such file or directory");
  }
}

TEST(ScenarioConfig, UnknownKeysNameFileKeyAndSuggestion) {
  EXPECT_EQ(error_of("seed: 1\ndration: 5ms\n"),
            "x.yaml:2: key 'dration': unknown key; did you mean 'duration'?");
  EXPECT_EQ(error_of("network:\n  link_dealy: 2us\n"),
            "x.yaml:2: key 'network.link_dealy': unknown key; did you mean 'network.link_delay'?");
  EXPECT_EQ(error_of("link_dealy: 2us\n"),
            "x.yaml:1: key 'link_dealy': unknown key; did you mean 'network.link_delay'?");
  EXPECT_EQ(error_of("link_delay: 2us\n"),
            "x.yaml:1: key 'link_delay': unknown key; did you mean 'network.link_delay'?");
  EXPECT_EQ(error_of("platform:\n  cpu_frequency: 2GHz\n"),
            "x.yaml:2: key 'platform.cpu_frequency': unknown key; did you mean "
            "'platform.cpu_freq'?");
  EXPECT_EQ(error_of("vms:\n  - name: a\n  - workload:\n      tpye: cpu\n"),
            "x.yaml:4: key 'vms.1.workload.tpye': unknown key; did you mean "
            "'vms.1.workload.type'?");
  EXPECT_EQ(
      error_of("vms:\n  - colour: red\n")
          .rfind("x.yaml:2: key 'vms.0.colour': unknown key; known keys in 'vms.0': name, ", 0),
      0u);
  EXPECT_EQ(error_of("platfrom:\n  cpu_freq: 2GHz\n"),
            "x.yaml:1: key 'platfrom': unknown key; did you mean 'platform'?");
  EXPECT_EQ(error_of("platform.cpu_freq: 2GHz\n"),
            "x.yaml:1: key 'platform.cpu_freq': a key name cannot contain '.', '[' or ']'; nest "
            "mappings instead");
}

TEST(ScenarioConfig, BadValuesNameFileLineAndKey) {
  EXPECT_EQ(error_of("seed: 1\nplatform:\n  cpu_freq: fast\n"),
            "x.yaml:3: key 'platform.cpu_freq': expected a frequency such as 2GHz or 400MHz, got "
            "\"fast\"");
  EXPECT_EQ(error_of("duration: 100\n"),
            "x.yaml:1: key 'duration': expected a time such as 30ms, 2.5us or 1s, got \"100\" (a "
            "number needs a unit: s, ms, us, ns, ps, \xC2\xB5s)");
  EXPECT_EQ(error_of("toe:\n  mtu: 10000\n"),
            "x.yaml:2: key 'toe.mtu': 10000B is above the maximum 9000B");
  EXPECT_EQ(error_of("network:\n  loss: 2\n"),
            "x.yaml:2: key 'network.loss': 2 is above the maximum 1");
  EXPECT_EQ(error_of("network:\n  host_ip: 10.0.0\n"),
            "x.yaml:2: key 'network.host_ip': expected a dotted-quad IPv4 address such as "
            "10.0.0.1, got \"10.0.0\"");
  EXPECT_EQ(error_of("architecture: xen\n"),
            "x.yaml:1: key 'architecture': expected one of native, de, da, got \"xen\"");
  EXPECT_EQ(error_of("toe:\n  dispatcher:\n    quantum: 16000, 4k\n"),
            "x.yaml:3: key 'toe.dispatcher.quantum': entry \"4k\": expected a size such as 1500B, "
            "64KiB or 128MiB, got \"4k\" (unknown unit \"k\"; accepted: B, kB, MB, GB, TB, KiB, "
            "MiB, GiB, TiB)");
  EXPECT_EQ(error_of("network: {peer: real}\n"),
            "x.yaml:1: key 'network.peer': expected one of sim, netvp, got \"real\"");
  EXPECT_EQ(error_of("vms:\n  - workload: {port: 70000}\n"),
            "x.yaml:2: key 'vms.0.workload.port': 70000 is above the maximum 65535");
}

TEST(ScenarioConfig, WrongShapes) {
  // The list of keys grows with the schema; check its start and the end of the message.
  const std::string platform = error_of("platform: 5\n");
  EXPECT_EQ(platform.rfind("x.yaml:1: key 'platform': expected a mapping with keys timing, "
                           "cpu_memory_traffic, cpu_freq, dram_bandwidth,",
                           0),
            0u)
      << platform;
  EXPECT_EQ(platform.substr(platform.size() - 13), "; got a value") << platform;
  EXPECT_EQ(error_of("duration: [1ms, 2ms]\n"),
            "x.yaml:1: key 'duration': expected a time value, got a list");
  EXPECT_EQ(error_of("duration:\n"),
            "x.yaml:1: key 'duration': expected a time value, got nothing");
  EXPECT_EQ(error_of("vms: {name: a}\n"),
            "x.yaml:1: key 'vms': expected a list of items (\"- key: value\"), got a mapping");
  EXPECT_EQ(error_of("vms: []\n"), "x.yaml:1: key 'vms': needs at least 1 item(s), got 0");
  EXPECT_EQ(
      error_of("- a\n- b\n").rfind("x.yaml:1: expected a mapping with keys seed, duration,", 0),
      0u);
  EXPECT_EQ(error_of("seed: 1\nseed: 2\n"), "x.yaml:2: key 'seed': duplicate key");
}

TEST(ScenarioConfig, YamlSyntaxErrorHasTheLine) {
  const std::string e = error_of("seed: 1\nplatform:\n  cpu_freq: 2GHz\n  bad: [1, 2\n");
  EXPECT_EQ(e.rfind("x.yaml:", 0), 0u) << e;
  EXPECT_NE(e.find(": YAML syntax error: "), std::string::npos) << e;
  const std::string e2 = error_of("seed: 1\nduration: 5ms\n  warmup: 1ms\n");
  EXPECT_EQ(e2.rfind("x.yaml:3: YAML syntax error: ", 0), 0u) << e2;
}

TEST(ScenarioConfig, SetOverridesScalars) {
  const Config c = Config::from_string(
      kScenario, "x.yaml",
      {"seed=7", "platform.cpu_freq=3GHz", "toe.mtu = 1000", "network.peer_ip=10.1.1.1", "seed=8"});
  EXPECT_EQ(c.get_uint("seed"), 8u);  // the last one wins
  EXPECT_EQ(c.get_freq("platform.cpu_freq"), 3e9);
  EXPECT_EQ(c.get_bytes("toe.mtu"), 1000u);
  EXPECT_EQ(c.get_string("network.peer_ip"), "10.1.1.1");
  EXPECT_EQ(c.get_bandwidth("toe.bandwidth"), 1e9);  // from the file
  const Config d = Config::defaults({"toe={bandwidth: 1Gbps, mtu: 600}"});
  EXPECT_EQ(d.get_bandwidth("toe.bandwidth"), 1e9);
  EXPECT_EQ(d.get_bytes("toe.mtu"), 600u);
}

TEST(ScenarioConfig, SetOverridesListItems) {
  const Config c = Config::defaults({"vms.0.workload.message_size=4000", "vms.0.name=db"});
  EXPECT_EQ(c.get_bytes("vms.0.workload.message_size"), 4000u);
  EXPECT_EQ(c.get_string("vms.0.name"), "db");
  const Config d = Config::defaults({"vms=[{name: solo, workload: {type: cpu}}]"});
  ASSERT_EQ(d.list_size("vms"), 1u);
  EXPECT_EQ(d.get_string("vms.0.name"), "solo");
  EXPECT_EQ(d.get_string("vms.0.workload.type"), "cpu");
  EXPECT_EQ(d.get_uint("vms.0.workload.port"), 5001u);  // item defaults filled in
}

TEST(ScenarioConfig, SetErrors) {
  auto set_error = [](const std::string& s) { return error_of("", {s}); };
  EXPECT_EQ(set_error("vms.3.workload.type=cpu"),
            "--set vms.3.workload.type: list 'vms' has 1 item (indices 0..0; 1 appends an item)");
  EXPECT_EQ(set_error("vms.x.name=a"), "--set vms.x.name: list 'vms' needs an item index, got 'x'");
  EXPECT_EQ(set_error("platform.cpu_freq=fast"),
            "--set platform.cpu_freq: expected a frequency such as 2GHz or 400MHz, got \"fast\"");
  EXPECT_EQ(set_error("toe.bandwith=1Gbps"),
            "--set toe.bandwith: unknown key; did you mean 'toe.bandwidth'?");
  EXPECT_EQ(set_error("toe.mtu.x=1"), "--set toe.mtu.x: 'toe.mtu' is a value and has no key 'x'");
  EXPECT_EQ(set_error("seed"), "--set seed: expected key=value, e.g. --set toe.bandwidth=1Gbps");
  EXPECT_EQ(set_error("seed="), "--set seed: expected a uint value, got nothing");
  EXPECT_EQ(set_error("a..b=1"), "--set a..b: malformed key path 'a..b'");
  EXPECT_EQ(set_error("vms=[]"), "--set vms: needs at least 1 item(s), got 0");
  EXPECT_EQ(set_error("toe={mtu: 5}"), "--set toe: key 'toe.mtu': 5B is below the minimum 576B");
  EXPECT_EQ(set_error("seed=[1"),
            "--set seed: YAML syntax error in value: end of sequence flow not found");
}

TEST(ScenarioConfig, AppendingAVmIsAppliedThenRejectedByNative) {
  // Appending works (the list has 2 items), and native then refuses the second VM.
  EXPECT_EQ(
      error_of("", {"vms.1.workload.type=cpu"}),
      "--set vms.1.workload.type: key 'vms': architecture 'native' runs exactly one VM, got 2");
  EXPECT_EQ(error_of("", {"vms.1="}),
            "--set vms.1: key 'vms': architecture 'native' runs exactly one VM, got 2");
}

// A small schema to exercise list growth without the native one-VM rule.
const Schema& list_schema() {
  static const Schema s({Key::uint("n", "1", "a number"), Key::list("items", 1, 2, "items"),
                         Key::uint("items[].x", "{i}", "x"),
                         Key::time("items[].t.at", "1ms", "t")});
  return s;
}

TEST(ScenarioConfig, SetAppendsListItems) {
  const Config c = Config::from_string(
      "", "y.yaml", {"items.2.x=50", "items.3=", "items.3.t.at=2us"}, list_schema());
  ASSERT_EQ(c.list_size("items"), 4u);
  EXPECT_EQ(c.get_uint("items.0.x"), 0u);  // "{i}" default
  EXPECT_EQ(c.get_uint("items.1.x"), 1u);
  EXPECT_EQ(c.get_uint("items.2.x"), 50u);
  EXPECT_EQ(c.get_uint("items.3.x"), 3u);
  EXPECT_EQ(c.get_time("items.3.t.at"), 2'000'000u);
  EXPECT_EQ(c.get_time("items.2.t.at"), 1'000'000'000u);
  // A list in the file replaces the default items.
  const Config d = Config::from_string("items:\n  - {x: 7}\n", "y.yaml", {}, list_schema());
  ASSERT_EQ(d.list_size("items"), 1u);
  EXPECT_EQ(d.get_uint("items.0.x"), 7u);
  EXPECT_FALSE(d.has("items.1.x"));
  // Round trip through resolved YAML with the custom schema.
  EXPECT_TRUE(Config::from_string(c.resolved_yaml(), "r.yaml", {}, list_schema()) == c);
  try {
    Config::from_string("", "y.yaml", {"items.5.x=1"}, list_schema());
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "--set items.5.x: list 'items' has 2 items (indices 0..1; 2 appends an item)");
  }
}

TEST(ScenarioConfig, CrossKeyChecks) {
  EXPECT_EQ(error_of("duration: 10ms\nwarmup: 10ms\n"),
            "x.yaml:2: key 'warmup': must be less than duration (10ms), got 10ms");
  EXPECT_EQ(error_of("", {"duration=5ms"}),
            "--set duration: key 'warmup': must be less than duration (5ms), got 10ms");
  EXPECT_EQ(error_of("duration: 5ms\n"),
            "x.yaml:1: key 'warmup': must be less than duration (5ms), got 10ms");
  EXPECT_EQ(error_of("vms:\n  - name: a\n  - name: b\n"),
            "x.yaml:1: key 'vms': architecture 'native' runs exactly one VM, got 2");
  EXPECT_EQ(error_of("vms:\n  - name: a\n  - name: a\n"),
            "x.yaml:3: key 'vms.1.name': 'a' is already the name of vms.0");
  EXPECT_EQ(error_of("vms:\n  - workload: {start: 5ms, stop: 5ms}\n"),
            "x.yaml:2: key 'vms.0.workload.stop': must be after workload.start (5ms) or 0 (never), "
            "got 5ms");
  EXPECT_EQ(error_of("duration: 0s\n"),
            "x.yaml:1: key 'duration': must be greater than 0s, got 0s");
  EXPECT_EQ(error_of("warmup: 0s\n"), "<no error>");
}

TEST(ScenarioConfig, ResolvedYamlRoundTrips) {
  const Config c = Config::from_string(kScenario, "x.yaml", {"toe.rx_buffer=100000"});
  const std::string yaml = c.resolved_yaml();
  EXPECT_EQ(yaml, c.resolved_yaml());  // stable
  EXPECT_NE(yaml.find("cpu_freq: 1.5GHz"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("device_freq: 400MHz"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("warmup: 2.5ms"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("rx_buffer: 100000B"), std::string::npos) << yaml;
  const Config back = Config::from_string(yaml, "resolved.yaml");
  EXPECT_TRUE(back == c);
  auto body = [](const std::string& y) { return y.substr(y.find('\n')); };  // after the header
  EXPECT_EQ(body(back.resolved_yaml()), body(yaml));
  EXPECT_TRUE(Config::from_string(Config::defaults().resolved_yaml(), "d.yaml") ==
              Config::defaults());
  EXPECT_FALSE(back == Config::defaults());
  // Every key of the schema appears, in schema order.
  std::size_t pos = 0;
  for (const char* k :
       {"seed:", "duration:", "warmup:", "architecture:", "platform:", "cpu_freq:", "toe:", "ccb:",
        "connections:", "network:", "guest:", "vms:", "name:", "workload:", "type:", "stop:"}) {
    const auto at = yaml.find(k, pos);
    ASSERT_NE(at, std::string::npos) << k << " in\n" << yaml;
    pos = at;
  }
}

TEST(ScenarioConfig, WithAppliesMoreOverrides) {
  const Config base = Config::defaults();
  const Config more = base.with({"seed=5"});
  EXPECT_EQ(more.get_uint("seed"), 5u);
  EXPECT_EQ(base.get_uint("seed"), 1u);
  EXPECT_THROW(base.with({"warmup=1s"}), ConfigError);
}

TEST(ScenarioConfig, GetterMisuseIsALogicError) {
  const Config c = Config::defaults();
  EXPECT_THROW(c.get_time("no.such.key"), std::logic_error);
  EXPECT_THROW(c.get_time("platform.cpu_freq"), std::logic_error);  // a frequency
  EXPECT_THROW(c.get_uint("toe.mtu"), std::logic_error);            // bytes
  EXPECT_THROW(c.get_string("vms.1.name"), std::logic_error);       // index out of range
  EXPECT_THROW(c.get_string("vms.name"), std::logic_error);
  EXPECT_THROW(c.get_uint("vms"), std::logic_error);
  EXPECT_THROW(c.list_size("platform"), std::logic_error);
  EXPECT_THROW(c.get_int("seed"), std::logic_error);
  EXPECT_NO_THROW(c.get_double("network.loss"));
  EXPECT_NO_THROW(c.get_string("architecture"));  // enums read as strings
  EXPECT_TRUE(c.has("vms.0.name"));
  EXPECT_FALSE(c.has("vms.1.name"));
}

}  // namespace
}  // namespace vtoe::config

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
