// Parse/build round-trips and hostile option lists.
#include "models/tcpip/headers.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "models/tcpip/checksum.h"

namespace vtoe::tcpip {
namespace {

const MacAddr kMacA = MacAddr::local(1), kMacB = MacAddr::local(2);

TEST(Addresses, ParseAndFormat) {
  EXPECT_EQ(parse_ipv4("10.0.0.1"), 0x0A000001u);
  EXPECT_EQ(ipv4_to_string(0xC0A80A01), "192.168.10.1");
  Ipv4 x = 7;
  EXPECT_FALSE(parse_ipv4("256.0.0.1", x));
  EXPECT_FALSE(parse_ipv4("1.2.3", x));
  EXPECT_FALSE(parse_ipv4("1.2.3.4.5", x));
  EXPECT_FALSE(parse_ipv4("1..2.3", x));
  EXPECT_EQ(x, 7u);
  MacAddr m;
  ASSERT_TRUE(MacAddr::parse("02:00:0a:FF:00:01", m));
  EXPECT_EQ(m.to_string(), "02:00:0a:ff:00:01");
  EXPECT_FALSE(MacAddr::parse("02:00:0a:ff:00", m));
  EXPECT_TRUE(MacAddr::broadcast().is_broadcast());
  EXPECT_FALSE(kMacA.is_broadcast());
  EXPECT_FALSE(kMacA.is_multicast());
}

TEST(Headers, ArpRoundTrip) {
  ArpPacket a;
  a.op = ArpPacket::kRequest;
  a.sha = kMacA;
  a.spa = 0x0A000001;
  a.tpa = 0x0A000002;
  Frame f = build_arp_frame(kMacA, MacAddr::broadcast(), a);
  ASSERT_EQ(f.size(), kMinFrameLen);
  FrameView v;
  ASSERT_TRUE(decode_frame(f.data(), f.size(), v));
  ASSERT_TRUE(v.is_arp);
  EXPECT_EQ(v.eth.dst, MacAddr::broadcast());
  EXPECT_EQ(v.eth.src, kMacA);
  EXPECT_EQ(v.arp.op, ArpPacket::kRequest);
  EXPECT_EQ(v.arp.sha, kMacA);
  EXPECT_EQ(v.arp.spa, 0x0A000001u);
  EXPECT_EQ(v.arp.tpa, 0x0A000002u);
  ArpPacket b;
  EXPECT_FALSE(parse_arp(f.data() + kEthHeaderLen, 27, b));  // truncated
  f[kEthHeaderLen + 5] = 6;                                  // plen 6: not IPv4
  EXPECT_FALSE(parse_arp(f.data() + kEthHeaderLen, 28, b));
}

TEST(Headers, TcpRoundTripWithOptionsAndPayload) {
  TcpHeader h;
  h.src_port = 1234;
  h.dst_port = 80;
  h.seq = 0xfffffff0;
  h.ack = 42;
  h.flags = tcp_flags::kSyn | tcp_flags::kAck;
  h.window = 65535;
  TcpOptions o;
  o.has_mss = true;
  o.mss = 1460;
  o.has_wscale = true;
  o.wscale = 7;
  o.sack_permitted = true;
  o.has_timestamps = true;
  o.ts_val = 0x01020304;
  o.ts_ecr = 0x05060708;
  const std::uint8_t payload[] = {1, 2, 3, 4, 5};
  Frame f = build_tcp_frame(kMacA, kMacB, 0x0A000001, 0x0A000002, h, o, payload, 5, 77);
  FrameView v;
  ASSERT_TRUE(decode_frame(f.data(), f.size(), v));
  ASSERT_TRUE(v.is_tcp);
  EXPECT_TRUE(v.checksums_ok);
  EXPECT_TRUE(v.ip.df);
  EXPECT_EQ(v.ip.id, 77);
  EXPECT_EQ(v.ip.ttl, 64);
  EXPECT_EQ(v.ip.total_len, 20 + 20 + 24 + 5);
  EXPECT_EQ(v.tcp.src_port, 1234);
  EXPECT_EQ(v.tcp.dst_port, 80);
  EXPECT_EQ(v.tcp.seq, 0xfffffff0u);
  EXPECT_EQ(v.tcp.ack, 42u);
  EXPECT_EQ(v.tcp.flags, tcp_flags::kSyn | tcp_flags::kAck);
  EXPECT_EQ(v.tcp.header_len, 44);
  EXPECT_EQ(v.tcp.window, 65535);
  EXPECT_TRUE(v.tcp_opts.has_mss);
  EXPECT_EQ(v.tcp_opts.mss, 1460);
  EXPECT_TRUE(v.tcp_opts.has_wscale);
  EXPECT_EQ(v.tcp_opts.wscale, 7);
  EXPECT_TRUE(v.tcp_opts.sack_permitted);
  EXPECT_TRUE(v.tcp_opts.has_timestamps);
  EXPECT_EQ(v.tcp_opts.ts_val, 0x01020304u);
  EXPECT_EQ(v.tcp_opts.ts_ecr, 0x05060708u);
  ASSERT_EQ(v.payload_len, 5u);
  EXPECT_EQ(std::memcmp(v.payload, payload, 5), 0);
  // Any single-bit corruption of the TCP part is caught by the checksum.
  for (std::size_t i = 34; i < 34 + 44 + 5; ++i) {
    Frame g = f;
    g[i] ^= 0x10;
    FrameView w;
    if (decode_frame(g.data(), g.size(), w)) {
      EXPECT_FALSE(w.checksums_ok) << i;
    }
  }
}

TEST(Headers, UdpAndIcmpRoundTrip) {
  const std::uint8_t d[] = {'h', 'e', 'l', 'l', 'o'};
  Frame f = build_udp_frame(kMacA, kMacB, 0x0A000001, 0x0A000002, 5353, 7, d, 5);
  FrameView v;
  ASSERT_TRUE(decode_frame(f.data(), f.size(), v));
  ASSERT_TRUE(v.is_udp);
  EXPECT_TRUE(v.checksums_ok);
  EXPECT_NE(v.udp.checksum, 0);
  EXPECT_EQ(v.udp.src_port, 5353);
  EXPECT_EQ(v.udp.dst_port, 7);
  EXPECT_EQ(v.udp.length, 13);
  ASSERT_EQ(v.payload_len, 5u);
  EXPECT_EQ(std::memcmp(v.payload, d, 5), 0);
  EXPECT_EQ(f.size(), kMinFrameLen);  // 14+20+8+5 = 47, padded

  IcmpHeader ih;
  ih.type = IcmpHeader::kEchoRequest;
  ih.id = 0x1234;
  ih.seq = 9;
  Frame g = build_icmp_frame(kMacA, kMacB, 0x0A000001, 0x0A000002, ih, d, 5);
  ASSERT_TRUE(decode_frame(g.data(), g.size(), v));
  ASSERT_TRUE(v.is_icmp);
  EXPECT_TRUE(v.checksums_ok);
  EXPECT_EQ(v.icmp.type, IcmpHeader::kEchoRequest);
  EXPECT_EQ(v.icmp.id, 0x1234);
  EXPECT_EQ(v.icmp.seq, 9);
}

TEST(Headers, Ipv4Validation) {
  Frame f = build_udp_frame(kMacA, kMacB, 0x0A000001, 0x0A000002, 1, 2, nullptr, 0);
  std::uint8_t* ip = f.data() + kEthHeaderLen;
  const std::size_t n = f.size() - kEthHeaderLen;
  Ipv4Header h;
  EXPECT_EQ(parse_ipv4_header(ip, n, h), IpParse::Ok);
  EXPECT_EQ(h.total_len, 28);  // padding after total_len is ignored
  EXPECT_EQ(parse_ipv4_header(ip, 19, h), IpParse::Truncated);
  EXPECT_EQ(parse_ipv4_header(ip, 27, h), IpParse::Truncated);  // total_len > bytes
  auto fix = [&] {
    ip[10] = ip[11] = 0;
    store_be16(ip + 10, internet_checksum(ip, 20));
  };
  Frame keep(f);
  ip[0] = 0x65;  // version 6
  fix();
  EXPECT_EQ(parse_ipv4_header(ip, n, h), IpParse::BadHeader);
  std::memcpy(f.data(), keep.data(), f.size());
  ip[0] = 0x44;  // IHL 4
  fix();
  EXPECT_EQ(parse_ipv4_header(ip, n, h), IpParse::BadHeader);
  std::memcpy(f.data(), keep.data(), f.size());
  store_be16(ip + 2, 10);  // total < IHL
  fix();
  EXPECT_EQ(parse_ipv4_header(ip, n, h), IpParse::BadHeader);
  std::memcpy(f.data(), keep.data(), f.size());
  ip[8] ^= 1;  // TTL changed without checksum update
  EXPECT_EQ(parse_ipv4_header(ip, n, h), IpParse::BadChecksum);
  // A frame whose sender vouches for its checksums: the sum is not looked at, the rest is.
  EXPECT_EQ(parse_ipv4_header(ip, n, h, false), IpParse::Ok);
  EXPECT_EQ(h.ttl, keep[kEthHeaderLen + 8] ^ 1);
  EXPECT_EQ(parse_ipv4_header(ip, 27, h, false), IpParse::Truncated);
}

TEST(TcpOptions, RobustParsing) {
  TcpOptions o;
  // NOPs, unknown kind 30 (length 4), MSS, EOL then garbage (ignored after EOL).
  const std::uint8_t ok[] = {1, 1, 30, 4, 0xaa, 0xbb, 2, 4, 0x05, 0xb4, 0, 0xde, 0xad, 0xbe};
  EXPECT_TRUE(parse_tcp_options(ok, sizeof ok, o));
  EXPECT_TRUE(o.has_mss);
  EXPECT_EQ(o.mss, 1460);
  EXPECT_FALSE(o.has_wscale);

  struct Bad {
    std::vector<std::uint8_t> b;
    const char* why;
  };
  const std::vector<Bad> bad = {
      {{2}, "kind without length"},
      {{2, 4, 5}, "MSS runs past the end"},
      {{3, 0}, "length 0"},
      {{30, 1}, "length 1"},
      {{30, 40, 0, 0}, "unknown kind longer than the list"},
      {{2, 3, 0}, "MSS with length 3"},
      {{3, 4, 7, 0}, "wscale with length 4"},
      {{8, 8, 0, 0, 0, 0, 0, 0}, "timestamps with length 8"},
      {{5, 6, 0, 0, 0, 0}, "SACK with a partial block"},
      {{1, 1, 1, 255}, "length 255"},
  };
  for (const auto& x : bad) {
    TcpOptions p;
    EXPECT_FALSE(parse_tcp_options(x.b.data(), x.b.size(), p)) << x.why;
  }
  // Random option bytes: never read past the end (ASan checks), always terminates.
  std::mt19937 rng(3);
  for (int i = 0; i < 20000; ++i) {
    const std::size_t n = rng() % 41;
    std::vector<std::uint8_t> v(n);
    for (auto& c : v) c = static_cast<std::uint8_t>(rng() % 12 < 6 ? rng() % 9 : rng());
    TcpOptions p;
    parse_tcp_options(v.data(), v.size(), p);
  }
}

TEST(TcpOptions, TheTimestampLayoutIsReadAtOnceAndWhatFollowsAsUsual) {
  const std::uint8_t ts[] = {1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 1, 2};
  TcpOptions o;
  ASSERT_TRUE(parse_tcp_options(ts, sizeof ts, o));
  EXPECT_TRUE(o.has_timestamps);
  EXPECT_EQ(o.ts_val, 7u);
  EXPECT_EQ(o.ts_ecr, 0x102u);
  EXPECT_EQ(o.sack_blocks, 0);
  std::vector<std::uint8_t> v(ts, ts + sizeof ts);
  v.insert(v.end(), {2, 4, 0x05, 0xb4});  // an MSS after it
  TcpOptions m;
  ASSERT_TRUE(parse_tcp_options(v.data(), v.size(), m));
  EXPECT_TRUE(m.has_timestamps);
  EXPECT_EQ(m.mss, 1460);
  v.resize(sizeof ts);
  v.push_back(2);  // a kind without its length after it
  TcpOptions bad;
  EXPECT_FALSE(parse_tcp_options(v.data(), v.size(), bad));
  TcpOptions short_ts;  // the layout's first bytes, but the option runs past the end
  EXPECT_FALSE(parse_tcp_options(ts, 11, short_ts));
}

TEST(TcpOptions, SackBlocksRoundTrip) {
  // Timestamps and three SACK blocks: 12 + 4 + 24 = 40 bytes, the whole option space.
  TcpOptions o;
  o.has_timestamps = true;
  o.ts_val = 7;
  o.ts_ecr = 9;
  o.sack_blocks = 3;
  o.sack[0] = {0xfffffff0u, 0x00000010u};  // wraps
  o.sack[1] = {100, 200};
  o.sack[2] = {300, 400};
  ASSERT_EQ(tcp_options_len(o), 40u);
  std::uint8_t buf[40];
  ASSERT_EQ(write_tcp_options(buf, o), 40u);
  TcpOptions p;
  ASSERT_TRUE(parse_tcp_options(buf, sizeof buf, p));
  EXPECT_TRUE(p.has_timestamps);
  EXPECT_EQ(p.ts_val, 7u);
  EXPECT_EQ(p.ts_ecr, 9u);
  ASSERT_EQ(p.sack_blocks, 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(p.sack[i], o.sack[i]) << i;
  // Four blocks without timestamps.
  TcpOptions q;
  q.sack_blocks = 4;
  for (std::uint32_t i = 0; i < 4; ++i) q.sack[i] = {1000 * i, 1000 * i + 500};
  ASSERT_EQ(tcp_options_len(q), 36u);
  ASSERT_EQ(write_tcp_options(buf, q), 36u);
  TcpOptions r;
  ASSERT_TRUE(parse_tcp_options(buf, 36, r));
  ASSERT_EQ(r.sack_blocks, 4);
  EXPECT_EQ(r.sack[3], q.sack[3]);
}

TEST(TcpParse, DataOffsetValidation) {
  TcpHeader h;
  h.src_port = 1;
  h.dst_port = 2;
  h.flags = tcp_flags::kAck;
  Frame f = build_tcp_frame(kMacA, kMacB, 1, 2, h, TcpOptions{}, nullptr, 0);
  std::uint8_t* t = f.data() + 34;
  TcpHeader out;
  TcpOptions o;
  EXPECT_EQ(parse_tcp(t, 20, out, o), TcpParse::Ok);
  EXPECT_EQ(parse_tcp(t, 19, out, o), TcpParse::Truncated);
  t[12] = 4 << 4;  // data offset 16 bytes
  EXPECT_EQ(parse_tcp(t, 20, out, o), TcpParse::BadHeader);
  t[12] = 6 << 4;  // 24 bytes, but only 20 present
  EXPECT_EQ(parse_tcp(t, 20, out, o), TcpParse::Truncated);
  t[12] = 6 << 4;  // 24 bytes with a bad option
  std::uint8_t seg[24];
  std::memcpy(seg, t, 20);
  seg[20] = 2;
  seg[21] = 9;
  seg[22] = seg[23] = 0;
  EXPECT_EQ(parse_tcp(seg, 24, out, o), TcpParse::BadOptions);
}

}  // namespace
}  // namespace vtoe::tcpip

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
