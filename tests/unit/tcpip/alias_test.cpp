// IP aliasing: one Stack owning several IPv4 addresses, each with its own MAC (one per guest
// behind the TOE on a real segment). Host A has the primary 10.0.0.1 and two aliases; host B
// is a plain one-address stack. Checks ARP, ICMP, UDP and TCP per address, on the wire.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "tests/unit/tcpip/harness.h"

namespace vtoe::tcpip::test {
namespace {

const Ipv4 kAlias1 = 0x0A00000B;  // 10.0.0.11
const Ipv4 kAlias2 = 0x0A00000C;  // 10.0.0.12
const MacAddr kMacA = MacAddr::local(1);
const MacAddr kMac1 = MacAddr::local(11);
const MacAddr kMac2 = MacAddr::local(12);

StackConfig config_a3() {
  StackConfig c = config_a();
  c.aliases = {{kAlias1, kMac1}, {kAlias2, kMac2}};
  return c;
}

MacAddr mac_for(Ipv4 ip) {
  if (ip == kAlias1) return kMac1;
  if (ip == kAlias2) return kMac2;
  return kMacA;
}

/// Decoded frames A sent (net.keep_log must be on).
std::vector<FrameView> frames_from(const Net& net, int from) {
  std::vector<FrameView> v;
  for (const auto& l : net.log) {
    if (l.from != from) continue;
    FrameView f;
    EXPECT_TRUE(decode_frame(l.f.data(), l.f.size(), f));
    v.push_back(f);
  }
  return v;
}

ConnId last_conn(const Host& h, Event ev) {
  ConnId c = 0;
  for (auto& e : h.events)
    if (e.first == ev) c = e.second.conn;
  return c;
}

TEST(Alias, ConfigAndQueries) {
  Net net(config_a3());
  Stack& a = *net.a.stack;
  EXPECT_TRUE(a.is_local(kIpA));
  EXPECT_TRUE(a.is_local(kAlias1));
  EXPECT_TRUE(a.is_local(kAlias2));
  EXPECT_FALSE(a.is_local(kIpB));
  EXPECT_FALSE(a.is_local(0));
  EXPECT_EQ(a.mac_of(kIpA), kMacA);
  EXPECT_EQ(a.mac_of(kAlias1), kMac1);
  EXPECT_EQ(a.mac_of(kAlias2), kMac2);
  EXPECT_EQ(a.mac_of(kIpB), kMacA);  // not local: the primary MAC
  ASSERT_EQ(a.config().aliases.size(), 2u);
  EXPECT_EQ(a.config().aliases[1].first, kAlias2);
  // B (no aliases) behaves as before.
  EXPECT_TRUE(net.b.stack->is_local(kIpB));
  EXPECT_FALSE(net.b.stack->is_local(kAlias1));
  EXPECT_TRUE(net.b.stack->config().aliases.empty());
}

TEST(Alias, InvalidAndDuplicateAliasesAreRejected) {
  StackConfig c = config_a();
  c.aliases = {{kAlias1, kMac1},
               {kAlias1, kMac2},                 // duplicate
               {kIpA, kMac2},                    // the primary
               {0, kMac2},                       // 0
               {0x0A0000FF, kMac2},              // subnet broadcast
               {0x7F000001, kMac2},              // loopback
               {0xE0000001, kMac2},              // multicast
               {kAlias2, MacAddr{}},             // zero MAC
               {kAlias2, MacAddr::broadcast()},  // multicast MAC
               {kAlias2, kMac2}};
  Net net(c);
  Stack& a = *net.a.stack;
  ASSERT_EQ(a.config().aliases.size(), 2u);
  EXPECT_EQ(a.config().aliases[0], std::make_pair(kAlias1, kMac1));
  EXPECT_EQ(a.config().aliases[1], std::make_pair(kAlias2, kMac2));
  EXPECT_EQ(a.mac_of(kAlias1), kMac1);
  // Run time.
  EXPECT_FALSE(a.add_address(kAlias1, kMac2));
  EXPECT_FALSE(a.add_address(kIpA, kMac2));
  EXPECT_FALSE(a.add_address(0, kMac2));
  EXPECT_FALSE(a.add_address(0x0A000014, MacAddr{}));
  EXPECT_TRUE(a.add_address(0x0A000014, kMacA));  // a shared MAC is allowed
  EXPECT_FALSE(a.add_address(0x0A000014, MacAddr::local(20)));
  EXPECT_EQ(a.config().aliases.size(), 3u);
  EXPECT_EQ(a.mac_of(kAlias1), kMac1);  // unchanged by the rejected duplicate
}

TEST(Alias, PingEachAddressRepliesFromThatAddressAndMac) {
  Net net(config_a3());
  net.keep_log = true;
  const std::uint8_t data[] = "alias ping";
  const Ipv4 targets[] = {kIpA, kAlias1, kAlias2};
  for (int i = 0; i < 3; ++i)
    net.b.stack->ping(targets[i], 0x42, static_cast<std::uint16_t>(i + 1), net.now, data,
                      sizeof data);
  net.run_for(10 * kMs);
  ASSERT_EQ(net.b.echo_replies.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(std::get<0>(net.b.echo_replies[i]), targets[i]);
    EXPECT_EQ(std::get<2>(net.b.echo_replies[i]), i + 1);
    EXPECT_EQ(std::get<3>(net.b.echo_replies[i]),
              std::vector<std::uint8_t>(data, data + sizeof data));
  }
  // Frames A sent: one ARP reply per address (own MAC), one echo reply per address.
  int arp_replies = 0, echo_replies = 0;
  for (const FrameView& f : frames_from(net, 0)) {
    if (f.is_arp) {
      ASSERT_EQ(f.arp.op, ArpPacket::kReply);
      EXPECT_EQ(f.arp.sha, mac_for(f.arp.spa));
      EXPECT_EQ(f.eth.src, mac_for(f.arp.spa));
      EXPECT_EQ(f.eth.dst, config_b().mac);
      EXPECT_EQ(f.arp.tpa, kIpB);
      ++arp_replies;
    } else {
      ASSERT_TRUE(f.is_icmp);
      EXPECT_TRUE(f.checksums_ok);
      EXPECT_EQ(f.icmp.type, IcmpHeader::kEchoReply);
      const Ipv4 expect = targets[f.icmp.seq - 1];
      EXPECT_EQ(f.ip.src, expect);
      EXPECT_EQ(f.eth.src, mac_for(expect));
      EXPECT_EQ(f.ip.dst, kIpB);
      ++echo_replies;
    }
  }
  EXPECT_EQ(arp_replies, 3);
  EXPECT_EQ(echo_replies, 3);
  // B resolved each address to its own MAC.
  for (Ipv4 ip : targets) {
    MacAddr m;
    ASSERT_TRUE(net.b.stack->arp_lookup(ip, m));
    EXPECT_EQ(m, mac_for(ip));
  }
  EXPECT_EQ(net.b.stack->stats().arp_requests_sent, 3u);
  EXPECT_EQ(net.a.stack->stats().arp_replies_sent, 3u);
  EXPECT_EQ(net.a.stack->stats().echo_requests_in, 3u);
  // A learned B once (from the first request) and sent no request of its own.
  EXPECT_EQ(net.a.stack->stats().arp_requests_sent, 0u);
}

TEST(Alias, ArpRequestsAnsweredPerAddressOnly) {
  Net net(config_a3());
  net.keep_log = true;
  const Ipv4 asked[] = {kAlias2, 0x0A000063 /* not ours */, kAlias1, kIpA};
  TimePs t = 0;
  for (Ipv4 tpa : asked) {
    ArpPacket q;
    q.op = ArpPacket::kRequest;
    q.sha = config_b().mac;
    q.spa = kIpB;
    q.tpa = tpa;
    net.inject(0, build_arp_frame(config_b().mac, MacAddr::broadcast(), q), t += kUs);
  }
  net.run_for(kMs);
  const auto fs = frames_from(net, 0);
  ASSERT_EQ(fs.size(), 3u);  // nothing for 10.0.0.99
  const Ipv4 answered[] = {kAlias2, kAlias1, kIpA};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(fs[i].is_arp);
    EXPECT_EQ(fs[i].arp.op, ArpPacket::kReply);
    EXPECT_EQ(fs[i].arp.spa, answered[i]);
    EXPECT_EQ(fs[i].arp.sha, mac_for(answered[i]));
    EXPECT_EQ(fs[i].eth.src, mac_for(answered[i]));
    EXPECT_EQ(fs[i].arp.tha, config_b().mac);
  }
}

TEST(Alias, FramesToOtherMacsOrAddressesAreDropped) {
  Net net(config_a3());
  ASSERT_TRUE(net.a.stack->udp_bind(7));
  auto udp_frame = [](const MacAddr& dst_mac, Ipv4 dst_ip) {
    std::uint8_t u[8 + 3] = {0, 9, 0, 7, 0, 11, 0, 0, 'x', 'y', 'z'};
    Ipv4Header ip;
    ip.src = kIpB;
    ip.dst = dst_ip;
    ip.proto = kIpProtoUdp;
    return build_ipv4_frame(config_b().mac, dst_mac, ip, u, sizeof u, true);
  };
  net.inject(0, udp_frame(MacAddr::local(13), kAlias1), kUs);  // unknown MAC
  net.inject(0, udp_frame(kMac1, 0x0A000063), 2 * kUs);         // unknown IP
  net.inject(0, udp_frame(kMac1, kAlias1), 3 * kUs);            // ok
  net.inject(0, udp_frame(kMac2, kAlias2), 4 * kUs);            // ok
  net.run_for(kMs);
  EXPECT_EQ(net.a.stack->stats().drop_not_for_us, 2u);
  ASSERT_EQ(net.a.udp.size(), 2u);
  ASSERT_EQ(net.a.udp_local_ip.size(), 2u);
  EXPECT_EQ(net.a.udp_local_ip[0], kAlias1);
  EXPECT_EQ(net.a.udp_local_ip[1], kAlias2);
}

TEST(Alias, UdpPerAddressWithDestinationAndReplySource) {
  Net net(config_a3());
  net.keep_log = true;
  ASSERT_TRUE(net.a.stack->udp_bind(7));
  ASSERT_TRUE(net.b.stack->udp_bind(40000));
  // Echo from the address the datagram was sent to.
  net.a.on_udp = [&](std::uint16_t port, Ipv4 src, std::uint16_t sport, const std::uint8_t* d,
                     std::size_t n) {
    const Ipv4 local = net.a.udp_local_ip.back();
    EXPECT_TRUE(net.a.stack->udp_send(port, src, sport, d, n, net.now, local));
  };
  const std::string msg[] = {"to primary", "to alias 1", "to alias 2"};
  const Ipv4 to[] = {kIpA, kAlias1, kAlias2};
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(net.b.stack->udp_send(40000, to[i], 7,
                                      reinterpret_cast<const std::uint8_t*>(msg[i].data()),
                                      msg[i].size(), net.now));
  net.run_for(10 * kMs);
  ASSERT_EQ(net.a.udp_local_ip, std::vector<Ipv4>(to, to + 3));
  ASSERT_EQ(net.b.udp.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(std::get<1>(net.b.udp[i]), to[i]);  // reply source = the address B wrote to
    EXPECT_EQ(std::string(std::get<3>(net.b.udp[i]).begin(), std::get<3>(net.b.udp[i]).end()),
              msg[i]);
  }
  for (const FrameView& f : frames_from(net, 0)) {
    if (!f.is_udp) continue;
    EXPECT_TRUE(f.checksums_ok);
    EXPECT_EQ(f.eth.src, mac_for(f.ip.src));
  }
  // Not a local address: refused.
  EXPECT_FALSE(net.a.stack->udp_send(7, kIpB, 40000, nullptr, 0, net.now, 0x0A000063));
  // Port unreachable from the alias the datagram went to.
  net.log.clear();
  net.b.stack->udp_send(40000, kAlias2, 9, nullptr, 0, net.now);
  net.run_for(10 * kMs);
  const auto fs = frames_from(net, 0);
  ASSERT_EQ(fs.size(), 1u);
  ASSERT_TRUE(fs[0].is_icmp);
  EXPECT_EQ(fs[0].icmp.type, IcmpHeader::kDestUnreachable);
  EXPECT_EQ(fs[0].ip.src, kAlias2);
  EXPECT_EQ(fs[0].eth.src, kMac2);
}

TEST(Alias, ListenersPerAddressAndWildcard) {
  Net net(config_a3());
  net.keep_log = true;
  Stack& a = *net.a.stack;
  const ConnId l1 = a.listen(5001, 16, net.now, kAlias1);
  const ConnId lw = a.listen(5002, 16, net.now);
  ASSERT_NE(l1, 0u);
  ASSERT_NE(lw, 0u);
  EXPECT_EQ(a.listen(5001, 16, net.now, kAlias1), 0u);     // same (address, port)
  EXPECT_EQ(a.listen(5002, 16, net.now), 0u);              // same wildcard
  EXPECT_EQ(a.listen(5001, 16, net.now, 0x0A000063), 0u);  // not a local address
  EXPECT_EQ(a.info(l1).local_ip, kAlias1);
  EXPECT_EQ(a.info(l1).local_port, 5001);
  EXPECT_EQ(a.info(lw).local_ip, 0u);
  EXPECT_EQ(a.state(l1), TcpState::Listen);

  // B -> alias1:5001: accepted by the alias-1 listener.
  const ConnId c1 = net.b.stack->connect(kAlias1, 5001, 0, net.now);
  ASSERT_NE(c1, 0u);
  ASSERT_TRUE(net.run_until(
      [&] { return net.b.count(Event::Connected, c1) == 1 && net.a.count(Event::Accepted) == 1; },
      kSec));
  const ConnId a1 = last_conn(net.a, Event::Accepted);
  EXPECT_EQ(net.a.events.back().second.listener, l1);
  EXPECT_EQ(a.info(a1).local_ip, kAlias1);
  EXPECT_EQ(a.info(a1).local_port, 5001);
  EXPECT_EQ(a.info(a1).remote_ip, kIpB);
  EXPECT_EQ(net.b.stack->info(c1).remote_ip, kAlias1);

  // B -> primary:5001: nobody listens there -> RST from the primary, Refused.
  const std::uint64_t rst0 = a.stats().rst_sent;
  net.log.clear();
  const ConnId c2 = net.b.stack->connect(kIpA, 5001, 0, net.now);
  ASSERT_NE(c2, 0u);
  ASSERT_TRUE(net.run_until([&] { return net.b.count(Event::Refused, c2) == 1; }, kSec));
  EXPECT_EQ(a.stats().rst_sent, rst0 + 1);
  EXPECT_EQ(net.a.count(Event::Accepted), 1);
  bool saw_rst = false;
  for (const FrameView& f : frames_from(net, 0)) {
    if (f.is_tcp && (f.tcp.flags & tcp_flags::kRst)) {
      saw_rst = true;
      EXPECT_EQ(f.ip.src, kIpA);
      EXPECT_EQ(f.eth.src, kMacA);
      EXPECT_TRUE(f.checksums_ok);
    }
  }
  EXPECT_TRUE(saw_rst);

  // B -> alias2:5001: no listener on alias 2 either -> RST from alias 2.
  net.log.clear();
  const ConnId c2b = net.b.stack->connect(kAlias2, 5001, 0, net.now);
  ASSERT_TRUE(net.run_until([&] { return net.b.count(Event::Refused, c2b) == 1; }, kSec));
  saw_rst = false;
  for (const FrameView& f : frames_from(net, 0)) {
    if (f.is_tcp && (f.tcp.flags & tcp_flags::kRst)) {
      saw_rst = true;
      EXPECT_EQ(f.ip.src, kAlias2);
      EXPECT_EQ(f.eth.src, kMac2);
      EXPECT_TRUE(f.checksums_ok);
    }
  }
  EXPECT_TRUE(saw_rst);

  // B -> alias2:5002: accepted by the wildcard listener, local address alias 2.
  const ConnId c3 = net.b.stack->connect(kAlias2, 5002, 0, net.now);
  ASSERT_NE(c3, 0u);
  ASSERT_TRUE(net.run_until(
      [&] { return net.b.count(Event::Connected, c3) == 1 && net.a.count(Event::Accepted) == 2; },
      kSec));
  const ConnId a3 = last_conn(net.a, Event::Accepted);
  EXPECT_EQ(net.a.events.back().second.listener, lw);
  EXPECT_EQ(a.info(a3).local_ip, kAlias2);
  EXPECT_EQ(a.info(a3).local_port, 5002);

  // Every TCP frame A sent for a connection carries its address and MAC.
  for (const FrameView& f : frames_from(net, 0)) {
    if (!f.is_tcp) continue;
    EXPECT_EQ(f.eth.src, mac_for(f.ip.src));
    EXPECT_TRUE(f.checksums_ok);
  }
  EXPECT_EQ(a.stats().drop_bad_tcp_checksum, 0u);
  EXPECT_EQ(net.b.stack->stats().drop_bad_tcp_checksum, 0u);
}

TEST(Alias, SpecificListenerTakesPrecedenceOverWildcard) {
  Net net(config_a3());
  Stack& a = *net.a.stack;
  const ConnId lw = a.listen(5003, 16, net.now);
  const ConnId ls = a.listen(5003, 16, net.now, kAlias1);  // wildcard + specific: allowed
  const ConnId lp = a.listen(5003, 16, net.now, kIpA);     // another specific one
  ASSERT_NE(lw, 0u);
  ASSERT_NE(ls, 0u);
  ASSERT_NE(lp, 0u);
  auto accept_via = [&](Ipv4 dst) -> std::pair<ConnId, ConnId> {
    const int before = net.a.count(Event::Accepted);
    const ConnId c = net.b.stack->connect(dst, 5003, 0, net.now);
    EXPECT_TRUE(
        net.run_until([&] { return net.a.count(Event::Accepted) == before + 1; }, kSec));
    const auto& e = net.a.events.back();
    EXPECT_EQ(e.first, Event::Accepted);
    EXPECT_EQ(a.info(e.second.conn).local_ip, dst);
    (void)c;
    return {e.second.listener, e.second.conn};
  };
  EXPECT_EQ(accept_via(kAlias1).first, ls);
  EXPECT_EQ(accept_via(kIpA).first, lp);
  EXPECT_EQ(accept_via(kAlias2).first, lw);
  // Without the specific listener, alias 1 falls back to the wildcard one.
  a.close(ls, net.now);
  EXPECT_EQ(a.state(ls), TcpState::Closed);
  EXPECT_EQ(accept_via(kAlias1).first, lw);
  // And the (alias1, 5003) slot can be taken again.
  EXPECT_NE(a.listen(5003, 16, net.now, kAlias1), 0u);
}

TEST(Alias, ConnectFromAlias) {
  Net net(config_a3());
  net.keep_log = true;
  const ConnId lb = net.b.stack->listen(6000, 16, net.now);
  ASSERT_NE(lb, 0u);
  EXPECT_EQ(net.a.stack->connect(kIpB, 6000, 0, net.now, 0x0A000063), 0u);  // not local
  const ConnId c = net.a.stack->connect(kIpB, 6000, 0, net.now, kAlias2);
  ASSERT_NE(c, 0u);
  EXPECT_EQ(net.a.stack->info(c).local_ip, kAlias2);
  ASSERT_TRUE(net.run_until(
      [&] { return net.a.count(Event::Connected, c) == 1 && net.b.count(Event::Accepted) == 1; },
      kSec));
  const ConnId bc = last_conn(net.b, Event::Accepted);
  EXPECT_EQ(net.b.stack->info(bc).remote_ip, kAlias2);
  EXPECT_EQ(net.b.stack->info(bc).local_ip, kIpB);
  // Data both ways.
  const std::string up = "from alias two", down = "to alias two";
  net.a.stack->send(c, reinterpret_cast<const std::uint8_t*>(up.data()), up.size(), net.now);
  net.b.stack->send(bc, reinterpret_cast<const std::uint8_t*>(down.data()), down.size(),
                    net.now);
  net.run_for(100 * kMs);
  std::uint8_t buf[64];
  std::size_t n = net.b.stack->recv(bc, buf, sizeof buf, net.now);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), n), up);
  n = net.a.stack->recv(c, buf, sizeof buf, net.now);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), n), down);
  // On the wire: the ARP request and every segment come from alias 2 with its MAC.
  int arp = 0, tcp = 0;
  for (const FrameView& f : frames_from(net, 0)) {
    if (f.is_arp) {
      ++arp;
      EXPECT_EQ(f.arp.op, ArpPacket::kRequest);
      EXPECT_EQ(f.arp.spa, kAlias2);
      EXPECT_EQ(f.arp.sha, kMac2);
      EXPECT_EQ(f.eth.src, kMac2);
    } else {
      ASSERT_TRUE(f.is_tcp);
      ++tcp;
      EXPECT_EQ(f.ip.src, kAlias2);
      EXPECT_EQ(f.eth.src, kMac2);
      EXPECT_TRUE(f.checksums_ok);
    }
  }
  EXPECT_EQ(arp, 1);
  EXPECT_GE(tcp, 3);
  MacAddr m;
  ASSERT_TRUE(net.b.stack->arp_lookup(kAlias2, m));
  EXPECT_EQ(m, kMac2);
  EXPECT_FALSE(net.b.stack->arp_lookup(kIpA, m));
  // Graceful close from the alias side.
  net.a.stack->close(c, net.now);
  net.b.on_event = [&](Event ev, const EventInfo& i) {
    if (ev == Event::PeerClosed) net.b.stack->close(i.conn, net.now);
  };
  net.run_for(200 * kSec);
  EXPECT_EQ(net.a.terminal_events(c), 1);
  EXPECT_EQ(net.b.terminal_events(bc), 1);
  EXPECT_EQ(net.a.stack->connection_count(), 0u);
}

TEST(Alias, PingFromAliasUsesAliasForArpAndIcmp) {
  Net net(config_a3());
  net.keep_log = true;
  net.a.stack->ping(kIpB, 9, 1, net.now, nullptr, 0, kAlias1);
  net.run_for(10 * kMs);
  ASSERT_EQ(net.a.echo_replies.size(), 1u);
  const auto fs = frames_from(net, 0);
  ASSERT_EQ(fs.size(), 2u);
  ASSERT_TRUE(fs[0].is_arp);
  EXPECT_EQ(fs[0].arp.spa, kAlias1);
  EXPECT_EQ(fs[0].eth.src, kMac1);
  ASSERT_TRUE(fs[1].is_icmp);
  EXPECT_EQ(fs[1].ip.src, kAlias1);
  EXPECT_EQ(fs[1].eth.src, kMac1);
  // B answered to alias 1's MAC.
  const auto fb = frames_from(net, 1);
  ASSERT_EQ(fb.size(), 2u);
  EXPECT_EQ(fb[1].eth.dst, kMac1);
  EXPECT_EQ(fb[1].ip.dst, kAlias1);
}

TEST(Alias, ConnectionsDifferingOnlyInLocalAddressCoexist) {
  Net net(config_a3());
  Stack& a = *net.a.stack;
  Stack& b = *net.b.stack;
  ASSERT_NE(a.listen(5002, 16, net.now), 0u);
  // Same B source port towards alias1:5002 and alias2:5002: on A the two connections share
  // (local port, remote ip, remote port) and differ only in the local address.
  const ConnId b1 = b.connect(kAlias1, 5002, 40001, net.now);
  const ConnId b2 = b.connect(kAlias2, 5002, 40001, net.now);
  ASSERT_NE(b1, 0u);
  ASSERT_NE(b2, 0u);
  EXPECT_EQ(b.connect(kAlias1, 5002, 40001, net.now), 0u);  // exact 4-tuple in use
  ASSERT_TRUE(net.run_until(
      [&] { return net.a.count(Event::Accepted) == 2 && net.b.count(Event::Connected) == 2; },
      kSec));
  std::map<Ipv4, ConnId> on_a;
  for (auto& e : net.a.events)
    if (e.first == Event::Accepted) on_a[a.info(e.second.conn).local_ip] = e.second.conn;
  ASSERT_EQ(on_a.size(), 2u);
  const ConnId a1 = on_a[kAlias1], a2 = on_a[kAlias2];
  EXPECT_EQ(a.info(a1).remote_port, 40001);
  EXPECT_EQ(a.info(a2).remote_port, 40001);
  EXPECT_EQ(a.info(a1).remote_ip, kIpB);
  EXPECT_EQ(a.info(a2).remote_ip, kIpB);
  EXPECT_EQ(a.info(a1).local_port, a.info(a2).local_port);

  // And the mirror image: A, with the same source port, from alias1 and alias2 to one B port.
  ASSERT_NE(b.listen(6001, 16, net.now), 0u);
  const ConnId x1 = a.connect(kIpB, 6001, 45000, net.now, kAlias1);
  const ConnId x2 = a.connect(kIpB, 6001, 45000, net.now, kAlias2);
  ASSERT_NE(x1, 0u);
  ASSERT_NE(x2, 0u);
  EXPECT_EQ(a.connect(kIpB, 6001, 45000, net.now, kAlias1), 0u);
  EXPECT_NE(a.connect(kIpB, 6001, 45000, net.now), 0u);  // the primary: a third 4-tuple
  ASSERT_TRUE(net.run_until([&] { return net.a.count(Event::Connected) == 3; }, kSec));

  // Separate data on each of the two first connections, both ways.
  auto put = [&](Stack& s, ConnId c, const std::string& m) {
    ASSERT_EQ(s.send(c, reinterpret_cast<const std::uint8_t*>(m.data()), m.size(), net.now),
              m.size());
  };
  put(b, b1, "b1 -> alias1");
  put(b, b2, "b2 -> alias2, longer");
  put(a, a1, "alias1 -> b1");
  put(a, a2, "alias2 -> b2 !!");
  net.run_for(100 * kMs);
  auto get = [&](Stack& s, ConnId c) {
    std::uint8_t buf[128];
    const std::size_t n = s.recv(c, buf, sizeof buf, net.now);
    return std::string(reinterpret_cast<char*>(buf), n);
  };
  EXPECT_EQ(get(a, a1), "b1 -> alias1");
  EXPECT_EQ(get(a, a2), "b2 -> alias2, longer");
  EXPECT_EQ(get(b, b1), "alias1 -> b1");
  EXPECT_EQ(get(b, b2), "alias2 -> b2 !!");
  // Closing one leaves the other intact.
  a.abort(a1, net.now);
  net.run_for(10 * kMs);
  EXPECT_EQ(net.b.count(Event::Reset, b1), 1);
  EXPECT_EQ(b.state(b2), TcpState::Established);
  EXPECT_EQ(a.state(a2), TcpState::Established);
  put(b, b2, "still here");
  net.run_for(10 * kMs);
  EXPECT_EQ(get(a, a2), "still here");
}

/// Several concurrent transfers, each connection with its own byte patterns.
struct Multi {
  struct Flow {
    std::uint64_t to_send = 0, sent = 0, received = 0, salt = 0, peer_salt = 0;
    bool ok = true;
  };
  Net& net;
  std::map<std::pair<int, ConnId>, Flow> flows;  // (side, conn)
  std::function<void(int side, ConnId)> on_accept;

  explicit Multi(Net& n) : net(n) {
    net.a.on_event = [this](Event ev, const EventInfo& i) { handle(0, ev, i); };
    net.b.on_event = [this](Event ev, const EventInfo& i) { handle(1, ev, i); };
  }
  void pump(int side, ConnId c) {
    auto it = flows.find({side, c});
    if (it == flows.end()) return;
    Flow& f = it->second;
    std::uint8_t buf[8192];
    while (f.sent < f.to_send) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, f.to_send - f.sent));
      for (std::size_t i = 0; i < n; ++i) buf[i] = pattern(f.sent + i, f.salt);
      const std::size_t k = net.host(side).stack->send(c, buf, n, net.now);
      f.sent += k;
      if (k < n) break;
    }
  }
  void drain(int side, ConnId c) {
    auto it = flows.find({side, c});
    if (it == flows.end()) return;
    Flow& f = it->second;
    std::uint8_t buf[8192];
    for (;;) {
      const std::size_t n = net.host(side).stack->recv(c, buf, sizeof buf, net.now);
      if (n == 0) break;
      for (std::size_t i = 0; i < n; ++i)
        if (buf[i] != pattern(f.received + i, f.peer_salt)) f.ok = false;
      f.received += n;
    }
  }
  void handle(int side, Event ev, const EventInfo& i) {
    switch (ev) {
      case Event::Accepted:
        if (on_accept) on_accept(side, i.conn);
        pump(side, i.conn);
        break;
      case Event::Connected:
      case Event::SendAcked:
      case Event::Writable:
        pump(side, i.conn);
        break;
      case Event::Readable:
        drain(side, i.conn);
        break;
      default:
        break;
    }
  }
};

TEST(Alias, ConcurrentBulkTransfersOnTwoAddresses) {
  Net net(config_a3());
  net.ps_per_byte = 8000;  // 1 Gbit/s
  net.delay = 20 * kUs;
  // Deterministic loss: every 97th frame each way.
  net.filter = [](int, const Frame&, std::uint64_t idx) {
    Verdict v;
    v.drop = idx % 97 == 50;
    return v;
  };
  Multi m(net);
  constexpr std::uint64_t kBytes = 3 * 1000 * 1000;
  // A (server, wildcard 7000) accepts on alias 1 and alias 2; salts by local address.
  m.on_accept = [&](int side, ConnId c) {
    if (side != 0) return;
    const Ipv4 l = net.a.stack->info(c).local_ip;
    Multi::Flow f;
    f.to_send = kBytes;
    f.salt = l;           // A -> B pattern
    f.peer_salt = l + 1;  // B -> A pattern
    m.flows[{0, c}] = f;
  };
  ASSERT_NE(net.a.stack->listen(7000, 16, net.now), 0u);
  for (Ipv4 dst : {kAlias1, kAlias2}) {
    const ConnId c = net.b.stack->connect(dst, 7000, 50000, net.now);  // same source port
    ASSERT_NE(c, 0u);
    Multi::Flow f;
    f.to_send = kBytes;
    f.salt = dst + 1;
    f.peer_salt = dst;
    m.flows[{1, c}] = f;
  }
  auto done = [&] {
    if (m.flows.size() != 4) return false;
    for (auto& [k, f] : m.flows)
      if (f.received != kBytes || f.sent != kBytes) return false;
    return true;
  };
  ASSERT_TRUE(net.run_until(done, 60 * kSec));
  for (auto& [k, f] : m.flows) {
    EXPECT_TRUE(f.ok) << "side " << k.first << " conn " << k.second;
    EXPECT_EQ(f.received, kBytes);
  }
  EXPECT_GT(net.a.stack->stats().retransmits, 0u);  // the loss was real
  EXPECT_EQ(net.a.stack->stats().drop_bad_tcp_checksum, 0u);
  EXPECT_EQ(net.b.stack->stats().drop_bad_tcp_checksum, 0u);
}

TEST(Alias, AddAddressAtRunTime) {
  Net net;  // A starts with the primary only
  net.keep_log = true;
  const Ipv4 kNew = 0x0A000014;  // 10.0.0.20
  const MacAddr kNewMac = MacAddr::local(20);
  ASSERT_TRUE(net.b.stack->udp_bind(1));  // keep B's stack the same
  // Before: nobody answers ARP for 10.0.0.20.
  net.b.stack->ping(kNew, 1, 1, net.now);
  net.run_for(5 * kSec);
  EXPECT_TRUE(net.b.echo_replies.empty());
  EXPECT_EQ(net.a.stack->stats().arp_replies_sent, 0u);
  // Add it; connections on the primary are unaffected.
  const ConnId l = net.a.stack->listen(8000, 16, net.now);
  ASSERT_NE(l, 0u);
  EXPECT_EQ(net.a.stack->listen(8001, 16, net.now, kNew), 0u);  // not local yet
  ASSERT_TRUE(net.a.stack->add_address(kNew, kNewMac));
  EXPECT_FALSE(net.a.stack->add_address(kNew, kNewMac));
  EXPECT_TRUE(net.a.stack->is_local(kNew));
  EXPECT_EQ(net.a.stack->mac_of(kNew), kNewMac);
  ASSERT_NE(net.a.stack->listen(8001, 16, net.now, kNew), 0u);
  net.log.clear();
  net.b.stack->ping(kNew, 1, 2, net.now);
  net.run_for(10 * kMs);
  ASSERT_EQ(net.b.echo_replies.size(), 1u);
  EXPECT_EQ(std::get<0>(net.b.echo_replies[0]), kNew);
  MacAddr m;
  ASSERT_TRUE(net.b.stack->arp_lookup(kNew, m));
  EXPECT_EQ(m, kNewMac);
  for (const FrameView& f : frames_from(net, 0)) EXPECT_EQ(f.eth.src, kNewMac);
  // TCP to the new address, via the wildcard listener on 8000 and the specific one on 8001.
  const ConnId c0 = net.b.stack->connect(kNew, 8000, 0, net.now);
  const ConnId c1 = net.b.stack->connect(kNew, 8001, 0, net.now);
  const ConnId c2 = net.b.stack->connect(kIpA, 8001, 0, net.now);
  ASSERT_TRUE(net.run_until(
      [&] {
        return net.b.count(Event::Connected, c0) && net.b.count(Event::Connected, c1) &&
               net.b.count(Event::Refused, c2);
      },
      kSec));
  for (auto& e : net.a.events) {
    if (e.first == Event::Accepted) {
      EXPECT_EQ(net.a.stack->info(e.second.conn).local_ip, kNew);
    }
  }
  EXPECT_EQ(net.a.count(Event::Accepted), 2);
}

TEST(Alias, DeterministicRuns) {
  auto run = [] {
    Net net(config_a3());
    Multi m(net);
    m.on_accept = [&](int side, ConnId c) {
      if (side != 0) return;
      Multi::Flow f;
      f.to_send = 200000;
      f.salt = 5;
      f.peer_salt = 6;
      m.flows[{0, c}] = f;
    };
    net.a.stack->listen(7000, 16, net.now);
    for (Ipv4 dst : {kAlias1, kAlias2, kIpA}) {
      Multi::Flow f;
      f.to_send = 100000;
      f.salt = 6;
      f.peer_salt = 5;
      m.flows[{1, net.b.stack->connect(dst, 7000, 0, net.now)}] = f;
    }
    net.run_for(5 * kSec);
    for (auto& [k, f] : m.flows) EXPECT_TRUE(f.ok && f.received > 0);
    return std::make_pair(net.hash, net.sent[0] + net.sent[1]);
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace vtoe::tcpip::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
