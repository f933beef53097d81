// net::ProxyHost: a flow client and a flow server (net::PeerHost) with a split-TCP proxy between
// them on two links; early SYN forwarding overlaps the two handshakes, without it they run one
// after the other; every byte is passed on and FINs close both sides.
#include "models/net/proxy_host.h"

#include <gtest/gtest.h>

#include "models/net/ethernet_link.h"
#include "models/net/peer_host.h"
#include "tests/unit/net/net_bench.h"

using namespace sc_core;
using vtoe::core::TimePs;
using namespace vtoe::net;

namespace {

constexpr TimePs kMs = 1'000'000'000;
const vtoe::tcpip::Ipv4 kClient = 0x0A000002, kProxyUp = 0x0A000003, kProxyDown = 0x0A000004,
                        kServer = 0x0A000005;

vtoe::tcpip::StackConfig stack(vtoe::tcpip::Ipv4 ip, std::uint32_t n) {
  vtoe::tcpip::StackConfig s;
  s.ip = ip;
  s.mac = vtoe::tcpip::MacAddr::local(n);
  s.isn_seed = n;
  s.linux_slow_start = true;
  s.hystart = false;
  return s;
}

void bind(EthernetMac& a, EthernetLink& l, EthernetMac& b) {
  a.to_wire.bind(l.a_in);
  l.a_out.bind(a.from_wire);
  b.to_wire.bind(l.b_in);
  l.b_out.bind(b.from_wire);
}

// client --(d1)-- proxy --(d2)-- server at 1 Gbit/s; two flows of `response` bytes.
struct Chain {
  Chain(bool esf, TimePs d1, TimePs d2, std::uint32_t response) {
    PeerHostParams cp;
    cp.stack = stack(kClient, 1);
    cp.rate_bps = 1e9;
    PeerApp flows;
    flows.type = PeerAppType::FlowClient;
    flows.remote_ip = kProxyUp;
    flows.port = 80;
    flows.request_size = 100;
    flows.response_size = response;
    flows.flows = 2;
    flows.start_ps = kMs;
    flows.gap_ps = kMs;
    cp.apps.push_back(flows);
    PeerHostParams sp;
    sp.stack = stack(kServer, 4);
    sp.rate_bps = 1e9;
    PeerApp server;
    server.type = PeerAppType::FlowServer;
    server.port = 8080;
    server.request_size = 100;
    server.response_size = response;
    sp.apps.push_back(server);
    ProxyHostParams pp;
    pp.up = stack(kProxyUp, 2);
    pp.down = stack(kProxyDown, 3);
    pp.up_rate_bps = pp.down_rate_bps = 1e9;
    pp.listen_port = 80;
    pp.next_ip = kServer;
    pp.next_port = 8080;
    pp.early_syn = esf;
    client = std::make_unique<PeerHost>("client", cp);
    proxy = std::make_unique<ProxyHost>("proxy", pp);
    server_host = std::make_unique<PeerHost>("server", sp);
    EthernetLinkParams l1, l2;
    l1.delay_ps = d1;
    l2.delay_ps = d2;
    hop1 = std::make_unique<EthernetLink>("hop1", l1);
    hop2 = std::make_unique<EthernetLink>("hop2", l2);
    bind(client->mac(), *hop1, proxy->up());
    bind(proxy->down(), *hop2, server_host->mac());
  }
  std::unique_ptr<PeerHost> client;
  std::unique_ptr<ProxyHost> proxy;
  std::unique_ptr<PeerHost> server_host;
  std::unique_ptr<EthernetLink> hop1, hop2;
};

// The second flow (the first also resolves addresses), in ms.
double ttfb_ms(const PeerHost& h) {
  const FlowRecord& f = h.flows().at(1);
  return static_cast<double>(f.first_byte_ps - f.start_ps) / 1e9;
}

}  // namespace

TEST(ProxyHost, EarlySynForwardingOverlapsTheHandshakes) {
  Chain c(true, 10 * kMs, 30 * kMs, 10000);  // D = 40 ms, the longer hop 30 ms
  sc_start(sc_time(2, SC_SEC));
  ASSERT_EQ(c.client->flows().size(), 2u);
  ASSERT_TRUE(c.client->flows()[1].ok);
  // 2D + 2 max(D1, D2) = 80 + 60 ms, plus serialisation and the hosts' zero-time processing.
  EXPECT_NEAR(ttfb_ms(*c.client), 140.0, 0.5);
  EXPECT_EQ(c.client->bytes_received(), 20000u);
  EXPECT_EQ(c.client->pattern_errors(), 0u);
  EXPECT_EQ(c.client->clients_done(), 2u);
  EXPECT_EQ(c.proxy->spliced(), 2u);
  EXPECT_EQ(c.proxy->bytes_down(), 200u);
  EXPECT_EQ(c.proxy->bytes_up(), 20000u);
  EXPECT_EQ(c.server_host->bytes_received(), 200u);
  // Every connection closed on both sides: nothing left but TIME-WAIT.
  EXPECT_EQ(c.proxy->up_stack().stats().rst_sent, 0u);
  EXPECT_EQ(c.proxy->down_stack().stats().rst_sent, 0u);
}

TEST(ProxyHost, WithoutEarlySynForwardingTheHandshakesRunInTurn) {
  Chain c(false, 10 * kMs, 30 * kMs, 10000);
  sc_start(sc_time(2, SC_SEC));
  ASSERT_EQ(c.client->flows().size(), 2u);
  ASSERT_TRUE(c.client->flows()[1].ok);
  EXPECT_NEAR(ttfb_ms(*c.client), 160.0, 0.5);  // 3 D1 + 3 D2 + D = 4D
  EXPECT_EQ(c.client->bytes_received(), 20000u);
  EXPECT_EQ(c.proxy->spliced(), 2u);
}

TEST(ProxyHost, LargeResponsesArePassedOnWhole) {
  Chain c(true, 1 * kMs, 1 * kMs, 3'000'000);  // more than either side's buffers
  sc_start(sc_time(2, SC_SEC));
  ASSERT_EQ(c.client->flows().size(), 2u);
  EXPECT_TRUE(c.client->flows()[0].ok && c.client->flows()[1].ok);
  EXPECT_EQ(c.client->bytes_received(), 6'000'000u);
  EXPECT_EQ(c.proxy->bytes_up(), 6'000'000u);
}

VTOE_TEST_MAIN
