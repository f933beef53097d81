// Schema: the built-in table is consistent, values parse/format/range-check, `vtoe keys` output.
#include "config/schema.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

namespace vtoe::config {
namespace {

const Key& key(const char* path) {
  const Key* k = Schema::builtin().find(path);
  if (!k) throw std::logic_error(std::string("no key ") + path);
  return *k;
}

std::string error_of(const Key& k, const std::string& text) {
  try {
    parse_value(k, text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(ScenarioSchema, BuiltinHasTheSpecifiedKeys) {
  const auto& s = Schema::builtin();
  for (const char* p : {"seed",
                        "duration",
                        "warmup",
                        "architecture",
                        "platform.cpu_freq",
                        "platform.device_freq",
                        "platform.dram_bandwidth",
                        "platform.dram_latency",
                        "platform.dram_size",
                        "platform.guest_memory",
                        "toe.bandwidth",
                        "toe.tx_buffer",
                        "toe.rx_buffer",
                        "toe.ccb.connections",
                        "toe.ccb.access_latency",
                        "toe.mtu",
                        "network.peer",
                        "network.link_delay",
                        "network.loss",
                        "network.peer_ip",
                        "network.host_ip",
                        "guest.context_switch_interval",
                        "vms",
                        "vms[].name",
                        "vms[].workload.type",
                        "vms[].workload.message_size",
                        "vms[].workload.port",
                        "vms[].workload.total_bytes",
                        "vms[].workload.response_size",
                        "vms[].workload.start",
                        "vms[].workload.stop"}) {
    EXPECT_NE(s.find(p), nullptr) << p;
  }
  EXPECT_EQ(s.find("platform"), nullptr);
  EXPECT_EQ(key("platform.cpu_freq").type, KeyType::Frequency);
  EXPECT_EQ(key("vms").type, KeyType::List);
  EXPECT_EQ(key("vms").min_items, 1u);
}

TEST(ScenarioSchema, EveryDefaultParsesLiesInRangeAndRoundTrips) {
  for (const Key& k : Schema::builtin().keys()) {
    SCOPED_TRACE(k.path);
    Value v;
    ASSERT_NO_THROW(v = parse_value(k, default_text(k, 3)));
    EXPECT_EQ(parse_value(k, format_value(k, v)), v);
    EXPECT_FALSE(k.meaning.empty());
  }
}

TEST(ScenarioSchema, SpecifiedDefaults) {
  EXPECT_EQ(parse_value(key("duration"), key("duration").default_text), Value{100'000'000'000ULL});
  EXPECT_EQ(parse_value(key("platform.cpu_freq"), "2GHz"), Value{2e9});
  EXPECT_EQ(key("guest.context_switch_interval").default_text, "2.5ms");
  EXPECT_EQ(default_text(key("vms[].name"), 2), "vm2");
  EXPECT_EQ(key("toe.mtu").min_text, "576B");
  EXPECT_EQ(key("toe.mtu").max_text, "9000B");
}

TEST(ScenarioSchema, RangesAreEnforced) {
  EXPECT_EQ(error_of(key("toe.mtu"), "9001"), "9001B is above the maximum 9000B");
  EXPECT_EQ(error_of(key("toe.mtu"), "575B"), "575B is below the minimum 576B");
  EXPECT_EQ(parse_value(key("toe.mtu"), "9000B"), Value{9000ULL});
  EXPECT_EQ(parse_value(key("toe.mtu"), "576"), Value{576ULL});
  EXPECT_EQ(error_of(key("duration"), "0s"), "must be greater than 0s, got 0s");
  EXPECT_EQ(error_of(key("network.loss"), "1.5"), "1.5 is above the maximum 1");
  EXPECT_EQ(parse_value(key("network.loss"), "50%"), Value{0.5});
  EXPECT_EQ(error_of(key("vms[].workload.port"), "0"), "0 is below the minimum 1");
  EXPECT_EQ(error_of(key("vms[].workload.port"), "65536"), "65536 is above the maximum 65535");
  EXPECT_EQ(error_of(key("toe.ccb.connections"), "0"), "0 is below the minimum 1");
  EXPECT_EQ(error_of(key("vms[].workload.message_size"), "2MiB"), "2MiB is above the maximum 1MiB");
}

TEST(ScenarioSchema, TypesAreEnforced) {
  EXPECT_EQ(error_of(key("seed"), "-1"), "expected a non-negative integer such as 42, got \"-1\"");
  EXPECT_EQ(error_of(key("seed"), "1.5"),
            "expected a non-negative integer such as 42, got \"1.5\"");
  EXPECT_EQ(parse_value(key("seed"), "0x10"), Value{16ULL});
  EXPECT_NE(error_of(key("platform.cpu_freq"), "2").find("a number needs a unit"),
            std::string::npos);
  EXPECT_NE(error_of(key("duration"), "100").find("a number needs a unit"), std::string::npos);
  EXPECT_EQ(parse_value(key("vms[].workload.start"), "0"), Value{0ULL});  // 0 needs no unit
  EXPECT_EQ(error_of(key("vms[].name"), "my vm"),
            "expected a name of letters, digits, '_', '-' or '.'");
}

TEST(ScenarioSchema, EnumsAndReservedValues) {
  EXPECT_EQ(parse_value(key("architecture"), "native"), Value{std::string("native")});
  EXPECT_EQ(parse_value(key("architecture"), "de"), Value{std::string("de")});
  EXPECT_EQ(parse_value(key("architecture"), "da"), Value{std::string("da")});
  EXPECT_EQ(error_of(key("architecture"), "xen"), "expected one of native, de, da, got \"xen\"");
  EXPECT_EQ(parse_value(key("network.peer"), "netvp"), Value{std::string("netvp")});
  EXPECT_EQ(error_of(key("vms[].workload.type"), "udp"),
            "expected one of tcp_tx, tcp_rx, cpu, rpc, sink, echo, iperf3, flows, connect, "
            "got \"udp\"");
  // Reserved values (named, not built yet) get their own message.
  const Key reserved = Key::enumeration("x.mode", {"a"}, "a", "test").reserve({"b"});
  EXPECT_EQ(error_of(reserved, "b"), "\"b\" is not implemented yet (accepted: a)");
  EXPECT_EQ(error_of(reserved, "c"), "expected one of a, got \"c\"");
}

TEST(ScenarioSchema, Ipv4) {
  EXPECT_TRUE(is_ipv4("10.0.0.1"));
  EXPECT_TRUE(is_ipv4("255.255.255.255"));
  for (const char* bad :
       {"10.0.0", "10.0.0.1.2", "256.0.0.1", "10.0.0.01", "a.b.c.d", "10..0.1", "10.0.0.", ""}) {
    EXPECT_FALSE(is_ipv4(bad)) << bad;
  }
  EXPECT_EQ(error_of(key("network.peer_ip"), "10.0.0.300"),
            "expected a dotted-quad IPv4 address such as 10.0.0.1, got \"10.0.0.300\"");
}

TEST(ScenarioSchema, Groups) {
  const auto& s = Schema::builtin();
  EXPECT_TRUE(s.is_group(""));
  EXPECT_TRUE(s.is_group("platform"));
  EXPECT_TRUE(s.is_group("toe.ccb"));
  EXPECT_TRUE(s.is_group("vms[]"));
  EXPECT_TRUE(s.is_group("vms[].workload"));
  EXPECT_FALSE(s.is_group("vms"));
  EXPECT_FALSE(s.is_group("toe.mtu"));
  EXPECT_FALSE(s.is_group("plat"));
  const auto ccb = s.children("toe.ccb");
  ASSERT_GE(ccb.size(), 3u);  // in declaration order
  EXPECT_EQ(ccb[0], "connections");
  EXPECT_EQ(ccb[1], "quota");
  EXPECT_EQ(ccb[2], "access_latency");
  const auto item = s.children("vms[]");
  ASSERT_GE(item.size(), 2u);
  EXPECT_EQ(item[0], "name");
  EXPECT_NE(std::find(item.begin(), item.end(), "workload"), item.end());
  EXPECT_EQ(std::count(item.begin(), item.end(), "workload"), 1);  // listed once
  // Exact children on a small table.
  const Schema small(
      {Key::uint("a.x", "1", "m"), Key::uint("b", "1", "m"), Key::uint("a.y.z", "1", "m")});
  EXPECT_EQ(small.children(""), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(small.children("a"), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(small.all_patterns(), (std::vector<std::string>{"a", "a.x", "b", "a.y", "a.y.z"}));
  const auto root = s.children("");
  EXPECT_EQ(root.front(), "seed");
  EXPECT_NE(std::find(root.begin(), root.end(), "vms"), root.end());
}

TEST(ScenarioSchema, BrokenTablesAreRejected) {
  auto rejects = [](std::vector<Key> keys, const std::string& why) {
    try {
      Schema s(std::move(keys));
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "accepted a table that should fail with: " << why;
  };
  rejects({Key::uint("a", "1", "m"), Key::uint("a", "2", "m")}, "declared twice");
  rejects({Key::uint("a.b", "1", "m"), Key::uint("a", "2", "m")}, "'a' is already a key");
  rejects({Key::uint("a", "1", "m"), Key::uint("a.b", "2", "m")}, "'a' is already a key");
  rejects({Key::uint("a", "0", "m").at_least("1")}, "bad default");
  rejects({Key::time("a", "5", "m")}, "bad default");
  rejects({Key::uint("l[].x", "1", "m")}, "undeclared list");
  rejects({Key::enumeration("e", {"x"}, "y", "m")}, "bad default");
  rejects({Key::uint("a", "5", "m").range("9", "1")}, "minimum above maximum");
  rejects({Key::list("l", 2, 1, "m")}, "too few items");
  EXPECT_NO_THROW(Schema({Key::list("l", 1, 1, "m"), Key::uint("l[].x", "1", "m")}));
}

TEST(ScenarioSchema, DescribeKeysText) {
  const std::string text = describe_keys(Schema::builtin(), KeysFormat::Text);
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("KEY", 0), 0u);
  for (const Key& k : Schema::builtin().keys()) {
    EXPECT_NE(text.find("\n" + k.path + " "), std::string::npos) << k.path;
  }
  EXPECT_NE(text.find("platform.cpu_freq"), std::string::npos);
  EXPECT_NE(text.find("2GHz"), std::string::npos);
  EXPECT_NE(text.find("576B..9000B"), std::string::npos);
  EXPECT_NE(text.find("native, de, da"), std::string::npos);
  EXPECT_NE(text.find("sim, netvp"), std::string::npos);
  EXPECT_NE(text.find("time: s, ms, us, ns, ps"), std::string::npos);
}

TEST(ScenarioSchema, DescribeKeysMarkdown) {
  const std::string md = describe_keys(Schema::builtin(), KeysFormat::Markdown);
  EXPECT_EQ(md.rfind("| Key | Type | Default | Accepted | Meaning |\n|---|---|---|---|---|\n", 0),
            0u);
  std::size_t rows = 0;
  std::istringstream in(md);
  for (std::string line; std::getline(in, line);) rows += line.rfind("| `", 0) == 0;
  EXPECT_EQ(rows, Schema::builtin().keys().size());
  EXPECT_NE(md.find("| `toe.mtu` | bytes | `1500B` | 576B..9000B |"), std::string::npos);
}

}  // namespace
}  // namespace vtoe::config

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
