// Hostile input: random, truncated and mutated frames, bogus TCP options, bad lengths,
// fragments, SYN floods beyond the connection table, RSTs and SYNs with wrong sequence numbers.
// No crash (run under ASan/UBSan), counters move, and a transfer running alongside stays exact.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "models/tcpip/checksum.h"
#include "tests/unit/tcpip/harness.h"

namespace vtoe::tcpip::test {
namespace {

const MacAddr kEvilMac = MacAddr::local(0x66);
const Ipv4 kEvilIp = 0x0A000042;  // 10.0.0.66, never answers ARP

/// Fixes IP header and transport checksums of an Ethernet/IPv4 frame in place (if parseable).
void fix_checksums(Frame& f) {
  if (f.size() < 34 || load_be16(f.data() + 12) != kEtherTypeIpv4) return;
  std::uint8_t* ip = f.data() + 14;
  const std::size_t hl = static_cast<std::size_t>(ip[0] & 0x0f) * 4;
  const std::size_t total = load_be16(ip + 2);
  if (hl < 20 || hl > f.size() - 14) return;
  ip[10] = ip[11] = 0;
  store_be16(ip + 10, internet_checksum(ip, hl));
  if (total < hl || total > f.size() - 14) return;
  std::uint8_t* l4 = ip + hl;
  const std::size_t n = total - hl;
  const Ipv4 src = load_be32(ip + 12), dst = load_be32(ip + 16);
  if (ip[9] == kIpProtoTcp && n >= 20) {
    l4[16] = l4[17] = 0;
    store_be16(l4 + 16, transport_checksum(src, dst, kIpProtoTcp, l4, n));
  } else if (ip[9] == kIpProtoUdp && n >= 8) {
    l4[6] = l4[7] = 0;
    store_be16(l4 + 6, transport_checksum(src, dst, kIpProtoUdp, l4, n));
  } else if (ip[9] == kIpProtoIcmp && n >= 8) {
    l4[2] = l4[3] = 0;
    store_be16(l4 + 2, internet_checksum(l4, n));
  }
}

class Fuzzer {
 public:
  Fuzzer(std::uint64_t seed, const MacAddr& victim_mac, Ipv4 victim_ip)
      : rng_(seed), mac_(victim_mac), ip_(victim_ip) {}

  std::uint32_t r() { return static_cast<std::uint32_t>(rng_()); }
  std::uint32_t r(std::uint32_t n) { return n ? r() % n : 0; }

  Frame random_bytes() {
    Frame f(r(1600));
    for (auto& c : f) c = static_cast<std::uint8_t>(r());
    if (f.size() >= 14 && r(2)) {  // aim at us: our MAC and IPv4 or ARP
      std::memcpy(f.data(), mac_.b.data(), 6);
      store_be16(f.data() + 12, r(2) ? kEtherTypeIpv4 : kEtherTypeArp);
      if (f.size() >= 34 && r(2)) {
        f[14] = 0x45;
        store_be32(f.data() + 30, ip_);
        store_be32(f.data() + 26, kEvilIp);
        store_be16(f.data() + 16, static_cast<std::uint16_t>(f.size() - 14 - r(8)));
        f[20] = f[21] = 0;  // no fragment
        f[23] = static_cast<std::uint8_t>(std::array<int, 5>{1, 6, 17, 99, 6}[r(5)]);
        fix_checksums(f);
      }
    }
    return f;
  }

  Frame truncated(const Frame& src) {
    Frame f(src.begin(),
            src.begin() + static_cast<std::ptrdiff_t>(r(static_cast<std::uint32_t>(src.size()))));
    if (r(2)) fix_checksums(f);  // lengths now lie
    return f;
  }

  /// Flips bits; if requested, recomputes checksums so that the frame reaches deeper layers.
  Frame mutated(const Frame& src, bool fix) {
    Frame f = src;
    const int flips = 1 + static_cast<int>(r(8));
    for (int i = 0; i < flips; ++i) {
      // Mostly in the headers (first 80 bytes), sometimes anywhere.
      const std::size_t lim = r(4) ? std::min<std::size_t>(f.size(), 80) : f.size();
      f[14 + r(static_cast<std::uint32_t>(lim - 14))] ^= static_cast<std::uint8_t>(1u << r(8));
    }
    if (fix) fix_checksums(f);
    return f;
  }

  Frame tcp(Ipv4 src, std::uint16_t sport, std::uint16_t dport, std::uint32_t seq,
            std::uint32_t ack, std::uint8_t flags, const std::vector<std::uint8_t>& opts,
            std::size_t payload_len, const MacAddr& src_mac = kEvilMac) {
    std::vector<std::uint8_t> seg(20 + opts.size() + payload_len);
    TcpHeader h;
    h.src_port = sport;
    h.dst_port = dport;
    h.seq = seq;
    h.ack = ack;
    h.flags = flags;
    h.window = static_cast<std::uint16_t>(r());
    h.header_len = static_cast<std::uint8_t>(20 + opts.size());
    write_tcp_header(seg.data(), h);
    if (!opts.empty()) std::memcpy(seg.data() + 20, opts.data(), opts.size());
    for (std::size_t i = 0; i < payload_len; ++i)
      seg[20 + opts.size() + i] = static_cast<std::uint8_t>(r());
    store_be16(seg.data() + 16, transport_checksum(src, ip_, kIpProtoTcp, seg.data(), seg.size()));
    Ipv4Header ip;
    ip.src = src;
    ip.dst = ip_;
    ip.proto = kIpProtoTcp;
    ip.df = true;
    return build_ipv4_frame(src_mac, mac_, ip, seg.data(), seg.size());
  }

  std::vector<std::uint8_t> bogus_options() {
    std::vector<std::uint8_t> o(4 * r(11));  // 0..40 bytes
    for (auto& c : o) c = static_cast<std::uint8_t>(r(3) ? r(10) : r());
    if (!o.empty() && r(2)) {  // a length running past the end, or 0/1
      const std::size_t at = r(static_cast<std::uint32_t>(o.size()));
      o[at] = 30;
      if (at + 1 < o.size()) o[at + 1] = static_cast<std::uint8_t>(r(2) ? r(2) : 200);
    }
    return o;
  }

  Frame ip_garbage() {
    std::uint8_t udp[12] = {0, 53, 0, 7, 0, 12, 0, 0, 1, 2, 3, 4};
    Ipv4Header ip;
    ip.src = kEvilIp;
    ip.dst = ip_;
    ip.proto = kIpProtoUdp;
    Frame f = build_ipv4_frame(kEvilMac, mac_, ip, udp, sizeof udp);
    std::uint8_t* h = f.data() + 14;
    switch (r(8)) {
      case 0:
        h[0] = 0x65;
        break;  // version 6
      case 1:
        h[0] = 0x43;
        break;  // IHL 3
      case 2:
        store_be16(h + 2, 1500);
        break;  // total length > frame
      case 3:
        store_be16(h + 6, 0x2000);
        break;  // MF: fragment
      case 4:
        store_be16(h + 6, 0x0010);
        break;  // offset: fragment
      case 5:
        h[9] = 99;
        break;  // unknown protocol
      case 6:
        h[0] = 0x46;
        break;  // IHL 6 (options) with bad length
      default:
        store_be16(h + 20 + 6, 0x1234);
        fix_checksums(f);
        store_be16(h + 26, 0xbad);
        return f;  // bad UDP checksum
    }
    fix_checksums(f);
    if (h[9] == kIpProtoUdp && r(2)) store_be16(h + 26, 0xbeef);  // bad UDP checksum
    return f;
  }

  Frame bad_icmp() {
    IcmpHeader ih;
    ih.type = IcmpHeader::kEchoRequest;
    std::uint8_t d[8] = {};
    Frame f = build_icmp_frame(kEvilMac, mac_, kEvilIp, ip_, ih, d, sizeof d);
    f[14 + 20 + 2] ^= 0xff;
    return f;
  }

 private:
  std::mt19937_64 rng_;
  MacAddr mac_;
  Ipv4 ip_;
};

TEST(Fuzz, RandomFramesIntoALoneStack) {
  struct Sink : StackListener {
    void transmit(Frame&& f) override { frames += f.size() > 0; }
    void tcp_event(Event, const EventInfo&) override { ++events; }
    std::uint64_t frames = 0, events = 0;
  } sink;
  StackConfig cfg = config_b();
  cfg.max_connections = 32;
  Stack s(cfg, sink);
  s.listen(80, 8, 0);
  s.udp_bind(7);
  Fuzzer fz(1, cfg.mac, cfg.ip);
  // Every length from 0 to 120 with patterned contents.
  for (std::size_t len = 0; len <= 120; ++len) {
    for (std::uint8_t fill : {0x00, 0xff, 0x45}) {
      Frame f(len, fill);
      if (len >= 14) {
        std::memcpy(f.data(), cfg.mac.b.data(), 6);
        store_be16(f.data() + 12, kEtherTypeIpv4);
      }
      s.receive_frame(f.data(), f.size(), 0);
    }
  }
  s.receive_frame(nullptr, 0, 0);
  TimePs now = 0;
  for (int i = 0; i < 100000; ++i) {
    now += 10 * kUs;
    Frame f;
    switch (fz.r(4)) {
      case 0:
        f = fz.random_bytes();
        break;
      case 1:
        f = fz.ip_garbage();
        break;
      case 2:
        f = fz.tcp(kEvilIp + fz.r(4), static_cast<std::uint16_t>(1 + fz.r(65535)),
                   fz.r(2) ? 80 : 81, fz.r(), fz.r(), static_cast<std::uint8_t>(fz.r()),
                   fz.bogus_options(), fz.r(100));
        break;
      default:
        f = fz.mutated(fz.tcp(kEvilIp, 1000, 80, 1, 0, tcp_flags::kSyn, {2, 4, 5, 0xb4}, 0),
                       fz.r(2));
        break;
    }
    s.receive_frame(f.data(), f.size(), now);
    if (s.next_deadline() <= now) s.poll(now);
  }
  auto advance = [&](TimePs until) {
    while (s.next_deadline() <= until) s.poll(now = s.next_deadline());
  };
  advance(now + 10 * kMs);
  const auto& st = s.stats();
  EXPECT_EQ(st.frames_in, 100000u + 121u * 3u + 1u);
  EXPECT_GT(st.drop_truncated, 0u);
  EXPECT_GT(st.drop_not_for_us, 0u);
  EXPECT_GT(st.drop_bad_ip_header, 0u);
  EXPECT_GT(st.drop_bad_ip_checksum, 0u);
  EXPECT_GT(st.drop_fragments, 0u);
  EXPECT_GT(st.drop_unknown_protocol, 0u);
  EXPECT_GT(st.drop_bad_udp_checksum, 0u);
  EXPECT_GT(st.drop_bad_tcp_checksum, 0u);
  EXPECT_GT(st.drop_bad_tcp_options, 0u);
  EXPECT_GT(st.drop_bad_tcp_header, 0u);
  EXPECT_GT(st.drop_bad_tcp_flags, 0u);
  EXPECT_GT(st.drop_unknown_ethertype + st.drop_bad_arp, 0u);
  EXPECT_GT(st.passive_opens, 0u);
  EXPECT_GT(st.rst_sent, 0u);
  EXPECT_EQ(sink.events, 0u);  // no handshake can complete without the ARP answer
  EXPECT_LE(s.connection_count(), 32u);
  advance(now + 2000 * kSec);  // all half-open connections expire
  EXPECT_EQ(s.connection_count(), 0u);
  EXPECT_EQ(s.next_deadline(), kNever);
}

TEST(Fuzz, HostileTrafficDuringATransfer) {
  StackConfig cb = config_b();
  cb.max_connections = 64;
  Net net(config_a(), cb);
  net.ps_per_byte = 8000;  // 1 Gbit/s
  // Collect real frames to mutate.
  std::vector<Frame> corpus;
  net.on_send = [&](int, const Frame& f, std::uint64_t) {
    if (corpus.size() < 3000) corpus.push_back(f);
  };
  net.b.stack->listen(6000, 1000, 0);  // flood target (table limit applies, not backlog)
  Transfer t(net, 3 << 20, 1 << 20);
  t.sa.close_after_send = t.sb.close_after_send = true;
  t.start();
  ASSERT_TRUE(net.run_until([&] { return t.sb.conn != 0; }, kSec));
  const ConnectionInfo real_a = net.a.stack->info(t.sa.conn);
  Fuzzer fz(2, cb.mac, cb.ip);
  Fuzzer fza(3, config_a().mac, kIpA);
  std::uint64_t injected = 0, skipped_valid = 0;
  // Mutations that are valid frames of the two ends are not garbage but spoofing, which no stack
  // survives: a segment that passes every check on the live connection, or an ARP message that
  // rebinds one end's address to another MAC (ARP has no authentication).
  auto live_tuple = [&](const Frame& f) {
    FrameView v;
    if (!decode_frame(f.data(), f.size(), v)) return false;
    if (v.is_arp)
      return (v.arp.spa == kIpA && !(v.arp.sha == config_a().mac)) ||
             (v.arp.spa == kIpB && !(v.arp.sha == cb.mac));
    return v.checksums_ok && v.is_tcp &&
           ((v.tcp.src_port == real_a.local_port && v.tcp.dst_port == 5000) ||
            (v.tcp.dst_port == real_a.local_port && v.tcp.src_port == 5000));
  };
  std::uint16_t flood_port = 20000;
  int rounds = 0;
  while (!(t.data_done() && t.sb.peer_closed) && rounds < 4000) {
    ++rounds;
    for (int k = 0; k < 10; ++k) {
      const TimePs at = net.now + 1 + fz.r(50000) * kNs / 1000;  // within the next 50 us
      const int to = fz.r(5) == 0 ? 0 : 1;
      Fuzzer& z = to == 0 ? fza : fz;
      Frame f;
      const ConnectionInfo ib = net.b.stack->info(t.sb.conn);
      switch (z.r(12)) {
        case 0:
          f = z.random_bytes();
          break;
        case 1:
          f = z.truncated(corpus[z.r(static_cast<std::uint32_t>(corpus.size()))]);
          break;
        case 2:
        case 3: {
          f = z.mutated(corpus[z.r(static_cast<std::uint32_t>(corpus.size()))], z.r(2));
          if (live_tuple(f)) {  // passes all checksums on the live connection: a valid segment
            ++skipped_valid;
            continue;
          }
          break;
        }
        case 4:  // SYN flood from many sources (beyond the 64-entry table)
          f = fz.tcp(kEvilIp + 100 + fz.r(100), flood_port++, 6000, fz.r(), 0, tcp_flags::kSyn,
                     {2, 4, 5, 0xb4}, 0);
          if (to == 0) f = fza.tcp(kEvilIp, flood_port++, 5000, fza.r(), 0, tcp_flags::kSyn, {}, 0);
          break;
        case 5:  // SYN with bogus options
          f = z.tcp(kEvilIp, static_cast<std::uint16_t>(1 + z.r(60000)), 6000, z.r(), 0,
                    tcp_flags::kSyn, z.bogus_options(), 0);
          break;
        case 6:  // RST in the window but not at rcv_nxt: challenge ACK
          if (to != 1 || ib.state != TcpState::Established) continue;
          f = fz.tcp(kIpA, real_a.local_port, 5000, ib.rcv_nxt + 200000, 0, tcp_flags::kRst, {}, 0,
                     config_a().mac);
          break;
        case 7:  // RST far outside the window: ignored
          if (to != 1 || ib.state != TcpState::Established) continue;
          f = fz.tcp(kIpA, real_a.local_port, 5000, ib.rcv_nxt + 0x80000000u, 0,
                     tcp_flags::kRst | tcp_flags::kAck, {}, 0, config_a().mac);
          break;
        case 8:  // SYN on the established tuple: challenge ACK
          if (to != 1 || ib.state != TcpState::Established) continue;
          f = fz.tcp(kIpA, real_a.local_port, 5000, ib.rcv_nxt + 100000, 0, tcp_flags::kSyn, {}, 0,
                     config_a().mac);
          break;
        case 9:  // data far outside the window, acking unsent data
          if (to != 1 || ib.state != TcpState::Established) continue;
          f = fz.tcp(kIpA, real_a.local_port, 5000, ib.rcv_nxt + 0x40000000u, ib.snd_max + 5000000,
                     tcp_flags::kAck, {}, 100, config_a().mac);
          break;
        case 10:
          f = z.ip_garbage();
          break;
        default:
          f = z.bad_icmp();
          break;
      }
      net.inject(to, std::move(f), at);
      ++injected;
    }
    net.run_for(50 * kUs);
  }
  ASSERT_TRUE(t.data_done()) << "rounds=" << rounds;
  EXPECT_TRUE(t.sa.data_ok);
  EXPECT_TRUE(t.sb.data_ok);
  EXPECT_GT(injected, 3000u);
  const auto& s = net.b.stack->stats();
  EXPECT_GT(s.drop_truncated, 0u);
  EXPECT_GT(s.drop_bad_ip_checksum, 0u);
  EXPECT_GT(s.drop_bad_tcp_checksum, 0u);
  EXPECT_GT(s.drop_bad_tcp_options, 0u);
  EXPECT_GT(s.drop_bad_ip_header, 0u);
  EXPECT_GT(s.drop_fragments, 0u);
  EXPECT_GT(s.drop_unknown_protocol, 0u);
  EXPECT_GT(s.drop_bad_udp_checksum, 0u);
  EXPECT_GT(s.drop_bad_icmp_checksum, 0u);
  EXPECT_GT(s.drop_table_full, 0u);
  EXPECT_GT(s.challenge_acks, 0u);
  EXPECT_GT(s.drop_rst_out_of_window, 0u);
  EXPECT_GT(s.drop_out_of_window, 0u);
  EXPECT_EQ(s.conns_reset, 0u);
  EXPECT_LE(net.b.stack->connection_count(), 64u);
  EXPECT_GT(net.a.stack->stats().total_drops(), 0u);
  EXPECT_EQ(net.a.stack->stats().conns_reset, 0u);
  // Everything the flood left behind times out.
  net.run_for(1000 * kSec);
  EXPECT_GT(s.drop_arp_queue_overflow + s.drop_arp_unresolved, 0u);  // the flood never ARPs back
  EXPECT_EQ(net.b.stack->connection_count(), 0u);
  EXPECT_EQ(net.a.stack->connection_count(), 0u);
  std::printf("injected=%llu skipped_valid=%llu rounds=%d drops_b=%llu\n",
              static_cast<unsigned long long>(injected),
              static_cast<unsigned long long>(skipped_valid), rounds,
              static_cast<unsigned long long>(s.total_drops()));
}

}  // namespace
}  // namespace vtoe::tcpip::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
