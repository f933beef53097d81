#include "models/tcpip/headers.h"

#include <algorithm>
#include <cstring>

#include "models/tcpip/checksum.h"

namespace vtoe::tcpip {

// ---------------------------------------------------------------- Ethernet
bool parse_eth(const std::uint8_t* p, std::size_t len, EthHeader& h) {
  if (p == nullptr || len < kEthHeaderLen) return false;
  std::memcpy(h.dst.b.data(), p, 6);
  std::memcpy(h.src.b.data(), p + 6, 6);
  h.ethertype = load_be16(p + 12);
  return true;
}

void write_eth(std::uint8_t* p, const EthHeader& h) {
  std::memcpy(p, h.dst.b.data(), 6);
  std::memcpy(p + 6, h.src.b.data(), 6);
  store_be16(p + 12, h.ethertype);
}

// ---------------------------------------------------------------- ARP
bool parse_arp(const std::uint8_t* p, std::size_t len, ArpPacket& a) {
  if (len < kArpLen) return false;
  if (load_be16(p) != 1 || load_be16(p + 2) != kEtherTypeIpv4 || p[4] != 6 || p[5] != 4)
    return false;
  a.op = load_be16(p + 6);
  std::memcpy(a.sha.b.data(), p + 8, 6);
  a.spa = load_be32(p + 14);
  std::memcpy(a.tha.b.data(), p + 18, 6);
  a.tpa = load_be32(p + 24);
  return true;
}

void write_arp(std::uint8_t* p, const ArpPacket& a) {
  store_be16(p, 1);
  store_be16(p + 2, kEtherTypeIpv4);
  p[4] = 6;
  p[5] = 4;
  store_be16(p + 6, a.op);
  std::memcpy(p + 8, a.sha.b.data(), 6);
  store_be32(p + 14, a.spa);
  std::memcpy(p + 18, a.tha.b.data(), 6);
  store_be32(p + 24, a.tpa);
}

// ---------------------------------------------------------------- IPv4
namespace {
// internet_checksum() of an IPv4 header; the common 20-byte one (every data segment, both ways)
// without the general loop's variable-length tail copy.
std::uint16_t ipv4_header_checksum(const std::uint8_t* p, std::size_t hl) {
  if (hl != kIpv4MinHeaderLen) return internet_checksum(p, hl);
  std::uint64_t sum = 0;
  for (int i = 0; i < 5; ++i) {
    std::uint32_t w;
    std::memcpy(&w, p + 4 * i, 4);
    sum += w;  // native byte order: the ones-complement sum is byte-order independent
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  sum = ((sum & 0xff) << 8) | (sum >> 8);
#endif
  return static_cast<std::uint16_t>(~sum & 0xffff);
}
}  // namespace

IpParse parse_ipv4_header(const std::uint8_t* p, std::size_t len, Ipv4Header& h,
                          bool verify_checksum) {
  if (len < kIpv4MinHeaderLen) return IpParse::Truncated;
  if ((p[0] >> 4) != 4) return IpParse::BadHeader;
  const std::size_t hl = static_cast<std::size_t>(p[0] & 0x0f) * 4;
  if (hl < kIpv4MinHeaderLen) return IpParse::BadHeader;
  if (hl > len) return IpParse::Truncated;
  const std::size_t total = load_be16(p + 2);
  if (total < hl) return IpParse::BadHeader;
  if (total > len) return IpParse::Truncated;
  if (verify_checksum && ipv4_header_checksum(p, hl) != 0) return IpParse::BadChecksum;
  h.header_len = static_cast<std::uint8_t>(hl);
  h.tos = p[1];
  h.total_len = static_cast<std::uint16_t>(total);
  h.id = load_be16(p + 4);
  const std::uint16_t ff = load_be16(p + 6);
  h.df = (ff & 0x4000) != 0;
  h.mf = (ff & 0x2000) != 0;
  h.frag_offset = ff & 0x1fff;
  h.ttl = p[8];
  h.proto = p[9];
  h.checksum = load_be16(p + 10);
  h.src = load_be32(p + 12);
  h.dst = load_be32(p + 16);
  return IpParse::Ok;
}

void write_ipv4_header(std::uint8_t* p, const Ipv4Header& h) {
  p[0] = 0x45;
  p[1] = h.tos;
  store_be16(p + 2, h.total_len);
  store_be16(p + 4, h.id);
  std::uint16_t ff = static_cast<std::uint16_t>(h.frag_offset & 0x1fff);
  if (h.df) ff |= 0x4000;
  if (h.mf) ff |= 0x2000;
  store_be16(p + 6, ff);
  p[8] = h.ttl;
  p[9] = h.proto;
  store_be16(p + 10, 0);
  store_be32(p + 12, h.src);
  store_be32(p + 16, h.dst);
  store_be16(p + 10, ipv4_header_checksum(p, kIpv4MinHeaderLen));
}

// ---------------------------------------------------------------- ICMP
bool parse_icmp(const std::uint8_t* p, std::size_t len, IcmpHeader& h) {
  if (len < kIcmpHeaderLen) return false;
  h.type = p[0];
  h.code = p[1];
  h.checksum = load_be16(p + 2);
  h.id = load_be16(p + 4);
  h.seq = load_be16(p + 6);
  return true;
}

void write_icmp(std::uint8_t* p, const IcmpHeader& h) {
  p[0] = h.type;
  p[1] = h.code;
  store_be16(p + 2, h.checksum);
  store_be16(p + 4, h.id);
  store_be16(p + 6, h.seq);
}

// ---------------------------------------------------------------- UDP
bool parse_udp(const std::uint8_t* p, std::size_t len, UdpHeader& h) {
  if (len < kUdpHeaderLen) return false;
  h.src_port = load_be16(p);
  h.dst_port = load_be16(p + 2);
  h.length = load_be16(p + 4);
  h.checksum = load_be16(p + 6);
  return h.length >= kUdpHeaderLen && h.length <= len;
}

void write_udp(std::uint8_t* p, const UdpHeader& h) {
  store_be16(p, h.src_port);
  store_be16(p + 2, h.dst_port);
  store_be16(p + 4, h.length);
  store_be16(p + 6, h.checksum);
}

// ---------------------------------------------------------------- TCP
bool parse_tcp_options(const std::uint8_t* p, std::size_t len, TcpOptions& o) {
  std::size_t i = 0;
  // The layout of every segment of a connection with timestamps (RFC 7323 appendix A): NOP,
  // NOP, timestamps; read at once, then whatever follows (SACK blocks) as usual.
  if (len >= 12 && p[0] == 1 && p[1] == 1 && p[2] == 8 && p[3] == 10) {
    o.has_timestamps = true;
    o.ts_val = load_be32(p + 4);
    o.ts_ecr = load_be32(p + 8);
    i = 12;
  }
  while (i < len) {
    const std::uint8_t kind = p[i];
    if (kind == 0) break;  // EOL
    if (kind == 1) {       // NOP
      ++i;
      continue;
    }
    if (i + 1 >= len) return false;
    const std::size_t olen = p[i + 1];
    if (olen < 2 || olen > len - i) return false;
    switch (kind) {
      case 2:  // MSS
        if (olen != 4) return false;
        o.has_mss = true;
        o.mss = load_be16(p + i + 2);
        break;
      case 3:  // window scale
        if (olen != 3) return false;
        o.has_wscale = true;
        o.wscale = p[i + 2];
        break;
      case 4:  // SACK permitted
        if (olen != 2) return false;
        o.sack_permitted = true;
        break;
      case 5:  // SACK blocks
        if (olen < 10 || (olen - 2) % 8 != 0) return false;
        if (olen > 34) return false;  // at most 4 blocks fit in 40 option bytes
        o.sack_blocks = static_cast<std::uint8_t>((olen - 2) / 8);
        for (std::size_t b = 0; b < o.sack_blocks; ++b) {
          o.sack[b].first = load_be32(p + i + 2 + 8 * b);
          o.sack[b].second = load_be32(p + i + 6 + 8 * b);
        }
        break;
      case 8:  // timestamps
        if (olen != 10) return false;
        o.has_timestamps = true;
        o.ts_val = load_be32(p + i + 2);
        o.ts_ecr = load_be32(p + i + 6);
        break;
      default:
        break;  // unknown: skipped by its length
    }
    i += olen;
  }
  return true;
}

TcpParse parse_tcp(const std::uint8_t* p, std::size_t len, TcpHeader& h, TcpOptions& o) {
  if (len < kTcpMinHeaderLen) return TcpParse::Truncated;
  const std::size_t hl = static_cast<std::size_t>(p[12] >> 4) * 4;
  if (hl < kTcpMinHeaderLen) return TcpParse::BadHeader;
  if (hl > len) return TcpParse::Truncated;
  h.src_port = load_be16(p);
  h.dst_port = load_be16(p + 2);
  h.seq = load_be32(p + 4);
  h.ack = load_be32(p + 8);
  h.header_len = static_cast<std::uint8_t>(hl);
  h.flags = p[13];
  h.window = load_be16(p + 14);
  h.checksum = load_be16(p + 16);
  h.urgent = load_be16(p + 18);
  o = TcpOptions{};
  if (!parse_tcp_options(p + kTcpMinHeaderLen, hl - kTcpMinHeaderLen, o))
    return TcpParse::BadOptions;
  return TcpParse::Ok;
}

std::size_t tcp_options_len(const TcpOptions& o) {
  std::size_t n = 0;
  if (o.has_mss) n += 4;
  if (o.has_wscale) n += 4;       // NOP + 3
  if (o.sack_permitted) n += 4;   // NOP NOP + 2
  if (o.has_timestamps) n += 12;  // NOP NOP + 10
  const std::size_t blocks = std::min<std::size_t>(o.sack_blocks, 4);
  if (blocks) n += 4 + 8 * blocks;  // NOP NOP + 2 + 8 per block
  return n;
}

std::size_t write_tcp_options(std::uint8_t* p, const TcpOptions& o) {
  std::size_t n = 0;
  if (o.has_mss) {
    p[n++] = 2;
    p[n++] = 4;
    store_be16(p + n, o.mss);
    n += 2;
  }
  if (o.has_wscale) {
    p[n++] = 1;
    p[n++] = 3;
    p[n++] = 3;
    p[n++] = o.wscale;
  }
  if (o.sack_permitted) {
    p[n++] = 1;
    p[n++] = 1;
    p[n++] = 4;
    p[n++] = 2;
  }
  if (o.has_timestamps) {
    p[n++] = 1;
    p[n++] = 1;
    p[n++] = 8;
    p[n++] = 10;
    store_be32(p + n, o.ts_val);
    store_be32(p + n + 4, o.ts_ecr);
    n += 8;
  }
  const std::size_t blocks = std::min<std::size_t>(o.sack_blocks, 4);
  if (blocks) {
    p[n++] = 1;
    p[n++] = 1;
    p[n++] = 5;
    p[n++] = static_cast<std::uint8_t>(2 + 8 * blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
      store_be32(p + n, o.sack[b].first);
      store_be32(p + n + 4, o.sack[b].second);
      n += 8;
    }
  }
  return n;
}

void write_tcp_header(std::uint8_t* p, const TcpHeader& h) {
  store_be16(p, h.src_port);
  store_be16(p + 2, h.dst_port);
  store_be32(p + 4, h.seq);
  store_be32(p + 8, h.ack);
  p[12] = static_cast<std::uint8_t>((h.header_len / 4) << 4);
  p[13] = h.flags;
  store_be16(p + 14, h.window);
  store_be16(p + 16, h.checksum);
  store_be16(p + 18, h.urgent);
}

std::uint16_t transport_checksum(Ipv4 src, Ipv4 dst, std::uint8_t proto, const std::uint8_t* seg,
                                 std::size_t len) {
  return internet_checksum(seg, len,
                           pseudo_header_sum(src, dst, proto, static_cast<std::uint16_t>(len)));
}

bool verify_transport_checksum(Ipv4 src, Ipv4 dst, std::uint8_t proto, const std::uint8_t* seg,
                               std::size_t len) {
  return transport_checksum(src, dst, proto, seg, len) == 0;
}

// ---------------------------------------------------------------- frames
Frame build_arp_frame(const MacAddr& src, const MacAddr& dst, const ArpPacket& a) {
  Frame f(kMinFrameLen, 0);
  write_eth(f.data(), EthHeader{dst, src, kEtherTypeArp});
  write_arp(f.data() + kEthHeaderLen, a);
  return f;
}

Frame build_ipv4_frame(const MacAddr& src, const MacAddr& dst, Ipv4Header ip,
                       const std::uint8_t* l4, std::size_t l4_len, bool pad) {
  const std::size_t n = kEthHeaderLen + kIpv4MinHeaderLen + l4_len;
  Frame f(pad ? std::max(n, kMinFrameLen) : n, 0);
  write_eth(f.data(), EthHeader{dst, src, kEtherTypeIpv4});
  ip.header_len = kIpv4MinHeaderLen;
  ip.total_len = static_cast<std::uint16_t>(kIpv4MinHeaderLen + l4_len);
  write_ipv4_header(f.data() + kEthHeaderLen, ip);
  if (l4_len) std::memcpy(f.data() + kEthHeaderLen + kIpv4MinHeaderLen, l4, l4_len);
  return f;
}

namespace {
Ipv4Header ipv4_header(Ipv4 src, Ipv4 dst, std::uint8_t proto, std::uint16_t id) {
  Ipv4Header ip;
  ip.src = src;
  ip.dst = dst;
  ip.proto = proto;
  ip.id = id;
  return ip;
}
}  // namespace

Frame build_udp_frame(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4 src, Ipv4 dst,
                      std::uint16_t src_port, std::uint16_t dst_port, const std::uint8_t* data,
                      std::size_t len, std::uint16_t ip_id) {
  std::vector<std::uint8_t> seg(kUdpHeaderLen + len);
  UdpHeader u{src_port, dst_port, static_cast<std::uint16_t>(seg.size()), 0};
  write_udp(seg.data(), u);
  if (len) std::memcpy(seg.data() + kUdpHeaderLen, data, len);
  std::uint16_t c = transport_checksum(src, dst, kIpProtoUdp, seg.data(), seg.size());
  store_be16(seg.data() + 6, c == 0 ? 0xffff : c);
  Ipv4Header ip = ipv4_header(src, dst, kIpProtoUdp, ip_id);
  return build_ipv4_frame(src_mac, dst_mac, ip, seg.data(), seg.size());
}

Frame build_icmp_frame(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4 src, Ipv4 dst,
                       const IcmpHeader& icmp, const std::uint8_t* data, std::size_t len,
                       std::uint16_t ip_id) {
  std::vector<std::uint8_t> m(kIcmpHeaderLen + len);
  IcmpHeader h = icmp;
  h.checksum = 0;
  write_icmp(m.data(), h);
  if (len) std::memcpy(m.data() + kIcmpHeaderLen, data, len);
  store_be16(m.data() + 2, internet_checksum(m.data(), m.size()));
  Ipv4Header ip = ipv4_header(src, dst, kIpProtoIcmp, ip_id);
  return build_ipv4_frame(src_mac, dst_mac, ip, m.data(), m.size());
}

Frame build_tcp_frame(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4 src, Ipv4 dst,
                      TcpHeader h, const TcpOptions& opts, const std::uint8_t* data,
                      std::size_t len, std::uint16_t ip_id) {
  const std::size_t optlen = tcp_options_len(opts);
  std::vector<std::uint8_t> seg(kTcpMinHeaderLen + optlen + len);
  h.header_len = static_cast<std::uint8_t>(kTcpMinHeaderLen + optlen);
  h.checksum = 0;
  write_tcp_header(seg.data(), h);
  write_tcp_options(seg.data() + kTcpMinHeaderLen, opts);
  if (len) std::memcpy(seg.data() + h.header_len, data, len);
  store_be16(seg.data() + 16, transport_checksum(src, dst, kIpProtoTcp, seg.data(), seg.size()));
  Ipv4Header ip = ipv4_header(src, dst, kIpProtoTcp, ip_id);
  ip.df = true;
  return build_ipv4_frame(src_mac, dst_mac, ip, seg.data(), seg.size());
}

bool decode_frame(const std::uint8_t* p, std::size_t len, FrameView& v) {
  v = FrameView{};
  if (!parse_eth(p, len, v.eth)) return false;
  const std::uint8_t* q = p + kEthHeaderLen;
  const std::size_t n = len - kEthHeaderLen;
  if (v.eth.ethertype == kEtherTypeArp) {
    v.is_arp = parse_arp(q, n, v.arp);
    v.checksums_ok = v.is_arp;
    return v.is_arp;
  }
  if (v.eth.ethertype != kEtherTypeIpv4) return false;
  if (parse_ipv4_header(q, n, v.ip) != IpParse::Ok) return false;
  v.is_ipv4 = true;
  const std::uint8_t* l4 = q + v.ip.header_len;
  const std::size_t l4len = v.ip.total_len - v.ip.header_len;
  switch (v.ip.proto) {
    case kIpProtoTcp:
      if (parse_tcp(l4, l4len, v.tcp, v.tcp_opts) != TcpParse::Ok) return false;
      v.is_tcp = true;
      v.payload = l4 + v.tcp.header_len;
      v.payload_len = l4len - v.tcp.header_len;
      v.checksums_ok = verify_transport_checksum(v.ip.src, v.ip.dst, kIpProtoTcp, l4, l4len);
      return true;
    case kIpProtoUdp:
      if (!parse_udp(l4, l4len, v.udp)) return false;
      v.is_udp = true;
      v.payload = l4 + kUdpHeaderLen;
      v.payload_len = v.udp.length - kUdpHeaderLen;
      v.checksums_ok = v.udp.checksum == 0 ||
                       verify_transport_checksum(v.ip.src, v.ip.dst, kIpProtoUdp, l4, v.udp.length);
      return true;
    case kIpProtoIcmp:
      if (!parse_icmp(l4, l4len, v.icmp)) return false;
      v.is_icmp = true;
      v.payload = l4 + kIcmpHeaderLen;
      v.payload_len = l4len - kIcmpHeaderLen;
      v.checksums_ok = internet_checksum(l4, l4len) == 0;
      return true;
    default:
      v.checksums_ok = true;
      return true;
  }
}

}  // namespace vtoe::tcpip
