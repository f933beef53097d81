// Model parameter declarations: every declared default equals the C++ default of the member it
// fills (so the struct and the scenario key cannot drift), every declared key is in the built-in
// schema with the declaration's type, and config::fill sets the members from a scenario.
#include "config/params.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "config/config.h"
#include "guest/guest_os.h"
#include "hypervisor/hypervisor.h"
#include "models/cpu/core.h"
#include "models/mem/dram.h"
#include "models/mem/interconnect.h"
#include "models/net/ethernet_link.h"
#include "models/smmu/smmu.h"
#include "models/toe/toe.h"
#include "netvp/netvp_port.h"
#include "tests/support/bench.h"

using namespace vtoe;

namespace {

std::string text(const config::Key& key, const config::Value& v) {
  return config::format_value(key, v);
}

template <typename S>
void expect_defaults_agree(const std::vector<core::Param<S>>& params, const char* what) {
  const S defaults{};
  ASSERT_FALSE(params.empty()) << what;
  for (const auto& p : params) {
    const config::Key key = config::to_key(p.spec());
    const config::Value declared = config::parse_value(key, p.spec().default_text);
    const config::Value in_struct = p.get(defaults);
    EXPECT_EQ(declared, in_struct)
        << what << ": key " << p.spec().path << " declares " << text(key, declared)
        << " but the C++ default is " << text(key, in_struct);
  }
}

template <typename S>
void expect_in_schema(const std::vector<core::Param<S>>& params) {
  const config::Schema& schema = config::Schema::builtin();
  for (const auto& p : params) {
    const config::Key* key = schema.find(p.spec().path);
    ASSERT_NE(key, nullptr) << p.spec().path << " is not in the schema";
    EXPECT_EQ(key->type, config::to_key(p.spec()).type) << p.spec().path;
    EXPECT_EQ(key->default_text, p.spec().default_text) << p.spec().path;
  }
}

}  // namespace

TEST(Params, DeclaredDefaultsEqualTheStructDefaults) {
  expect_defaults_agree(mem::dram_params(), "DramParams");
  expect_defaults_agree(mem::interconnect_params(), "InterconnectParams");
  expect_defaults_agree(smmu::smmu_params(), "SmmuParams");
  expect_defaults_agree(cpu::core_params(), "CoreParams");
  expect_defaults_agree(toe::toe_params(), "ToeParams");
  expect_defaults_agree(net::ethernet_link_params(), "EthernetLinkParams");
  expect_defaults_agree(hypervisor::hypervisor_params(), "HypervisorParams");
  expect_defaults_agree(guest::guest_params(), "GuestParams");
  expect_defaults_agree(guest::workload_params(), "Workload");
  expect_defaults_agree(netvp::netvp_params(), "NetvpParams");
}

TEST(Params, EveryDeclaredKeyIsInTheBuiltinSchemaOnce) {
  expect_in_schema(mem::dram_params());
  expect_in_schema(mem::interconnect_params());
  expect_in_schema(smmu::smmu_params());
  expect_in_schema(cpu::core_params());
  expect_in_schema(toe::toe_params());
  expect_in_schema(net::ethernet_link_params());
  expect_in_schema(hypervisor::hypervisor_params());
  expect_in_schema(guest::guest_params());
  expect_in_schema(guest::workload_params());
  expect_in_schema(netvp::netvp_params());
  std::set<std::string> seen;
  for (const config::Key& k : config::Schema::builtin().keys())
    EXPECT_TRUE(seen.insert(k.path).second) << k.path << " twice";
}

TEST(Params, FillSetsTheMembersFromTheScenario) {
  const config::Config cfg = config::Config::defaults(
      {"platform.dram_bandwidth=12.8Gbps", "toe.ppm.tx_cycles=100", "toe.mtu=9000B",
       "toe.dispatcher.policy=dwrr", "hypervisor.costs.irq=42", "guest.socket.recv_buffer=32KiB",
       "hypervisor.scheduler.tickle=false", "network.link_delay=5us",
       "network.netvp.pacing=strict", "network.netvp.interface=eth9"});
  mem::DramParams dp;
  config::fill(cfg, mem::dram_params(), dp);
  EXPECT_DOUBLE_EQ(dp.bandwidth_bps, 12.8e9);
  const config::Config bus_cfg = config::Config::defaults(
      {"platform.bus_arbitration=weighted", "platform.bus_weights=3,1", "platform.bus_width=32B",
       "platform.dram_row_miss=40ns", "platform.dram_queue_depth=4"});
  mem::InterconnectParams ip;
  config::fill(bus_cfg, mem::interconnect_params(), ip);
  EXPECT_EQ(ip.arbitration, mem::Arbitration::Weighted);
  EXPECT_EQ(ip.weights, "3,1");
  EXPECT_EQ(ip.width_bytes, 32u);
  EXPECT_EQ(ip.hop_latency_ps, 10'000u);
  config::fill(bus_cfg, mem::dram_params(), dp);
  EXPECT_EQ(dp.row_miss_ps, 40'000u);
  EXPECT_EQ(dp.queue_depth, 4u);
  EXPECT_FALSE(dp.at);  // set by the platform from platform.timing, not by a key
  toe::ToeParams tp;
  config::fill(cfg, toe::toe_params(), tp);
  EXPECT_DOUBLE_EQ(tp.ppm.tx_cycles_per_frame, 100);
  EXPECT_EQ(tp.stack.mtu, 9000u);
  EXPECT_EQ(tp.dispatcher.policy, toe::DispatchPolicyKind::Dwrr);
  hypervisor::HypervisorParams hp;
  config::fill(cfg, hypervisor::hypervisor_params(), hp);
  EXPECT_DOUBLE_EQ(hp.costs.irq, 42);
  EXPECT_FALSE(hp.scheduler.tickle);
  guest::GuestParams gp;
  config::fill(cfg, guest::guest_params(), gp);
  EXPECT_EQ(gp.sockets.recv_buffer, 32u * 1024);
  net::EthernetLinkParams lp;
  config::fill(cfg, net::ethernet_link_params(), lp);
  EXPECT_EQ(lp.delay_ps, 5'000'000u);
  netvp::NetvpParams np;
  config::fill(cfg, netvp::netvp_params(), np);
  EXPECT_EQ(np.pacer.pacing, netvp::Pacing::Strict);
  EXPECT_EQ(np.interface, "eth9");
}

TEST(Params, FillItemReadsOneItemOfAList) {
  const config::Config cfg = config::Config::from_string(
      "architecture: de\nvms:\n  - {}\n  - workload: {type: rpc, port: 7000, stop: 5ms}\n",
      "x.yaml");
  guest::Workload first, second;
  config::fill_item(cfg, guest::workload_params(), 0, first);
  config::fill_item(cfg, guest::workload_params(), 1, second);
  EXPECT_EQ(first.type, guest::WorkloadType::TcpTx);
  EXPECT_EQ(first.port, 5001);
  EXPECT_EQ(second.type, guest::WorkloadType::Rpc);
  EXPECT_EQ(second.port, 7000);
  EXPECT_EQ(second.stop_ps, 5'000'000'000u);
  EXPECT_EQ(config::item_path("vms[].workload.port", 3), "vms.3.workload.port");
  EXPECT_THROW(config::item_path("toe.mtu", 0), std::logic_error);
}

TEST(Params, ADeclaredCheckRejectsBadValuesNamingTheKey) {
  try {
    config::Config::defaults({"guest.ring_entries=100"});
    FAIL() << "a ring size that is no power of two was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("guest.ring_entries"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
  }
}

VTOE_TEST_MAIN

TEST(Params, AValueTheMemberCannotHoldIsAConfigErrorNotATruncation) {
  // toe.ccb.connections is a uint key; ToeParams::ccb_capacity is 32 bits: 2^32 used to become 0.
  const config::Config cfg = config::Config::defaults({"toe.ccb.connections=4294967296"});
  toe::ToeParams tp;
  try {
    config::fill(cfg, toe::toe_params(), tp);
    FAIL() << "2^32 CCB entries were accepted as " << tp.ccb_capacity;
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(e.key(), "toe.ccb.connections");
    EXPECT_EQ(e.where(), "--set toe.ccb.connections");
    EXPECT_NE(std::string(e.what()).find("largest 4294967295"), std::string::npos) << e.what();
  }
  const config::Config ok = config::Config::defaults({"toe.ccb.connections=4294967295"});
  config::fill(ok, toe::toe_params(), tp);
  EXPECT_EQ(tp.ccb_capacity, 4294967295u);
}
