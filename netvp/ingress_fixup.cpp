#include "netvp/ingress_fixup.h"

#include <algorithm>
#include <cstring>

#include "models/tcpip/checksum.h"

namespace vtoe::netvp {

namespace {

constexpr std::size_t kEth = 14;
constexpr std::uint8_t kTcp = 6, kUdp = 17;

std::uint16_t get16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] << 8 | p[1]); }
std::uint32_t get32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
         static_cast<std::uint32_t>(p[2]) << 8 | p[3];
}
void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
void put32(std::uint8_t* p, std::uint32_t v) {
  put16(p, static_cast<std::uint16_t>(v >> 16));
  put16(p + 2, static_cast<std::uint16_t>(v));
}

// The IPv4 packet inside an Ethernet frame, if there is a well-formed one (no VLAN tag).
struct Ip {
  std::uint8_t* hdr = nullptr;
  std::size_t ihl = 0, total = 0;
  std::uint8_t proto = 0;
};
bool parse_ip(std::uint8_t* f, std::size_t len, Ip& ip) {
  if (len < kEth + 20 || get16(f + 12) != 0x0800) return false;
  std::uint8_t* h = f + kEth;
  ip.ihl = static_cast<std::size_t>(h[0] & 0x0f) * 4;
  ip.total = get16(h + 2);
  if ((h[0] >> 4) != 4 || ip.ihl < 20 || ip.total < ip.ihl || kEth + ip.total > len) return false;
  if ((get16(h + 6) & 0x3fff) != 0) return false;  // fragments: left as they are
  ip.hdr = h;
  ip.proto = h[9];
  return true;
}

void ip_checksum(const Ip& ip) {
  put16(ip.hdr + 10, 0);
  put16(ip.hdr + 10, tcpip::internet_checksum(ip.hdr, ip.ihl));
}

// Computes the TCP/UDP checksum of the packet from scratch (what a NIC does for a partial one).
void l4_checksum(const Ip& ip) {
  std::uint8_t* l4 = ip.hdr + ip.ihl;
  const std::size_t l4len = ip.total - ip.ihl;
  const std::size_t at = ip.proto == kTcp ? 16 : 6;
  if (l4len < at + 2) return;
  put16(l4 + at, 0);
  const std::uint32_t pseudo = tcpip::pseudo_header_sum(
      get32(ip.hdr + 12), get32(ip.hdr + 16), ip.proto, static_cast<std::uint16_t>(l4len));
  std::uint16_t c = tcpip::internet_checksum(l4, l4len, pseudo);
  if (ip.proto == kUdp && c == 0) c = 0xffff;  // UDP: zero means "no checksum"
  put16(l4 + at, c);
}

}  // namespace

void IngressFixup::fix(const std::uint8_t* frame, std::size_t len, bool csum_not_ready,
                       std::vector<std::vector<std::uint8_t>>& out) {
  std::vector<std::uint8_t> f(frame, frame + len);
  Ip ip;
  const bool is_ip = parse_ip(f.data(), f.size(), ip);
  const bool oversized = len > kEth + mtu_;
  if (!oversized) {
    if (csum_not_ready && is_ip && (ip.proto == kTcp || ip.proto == kUdp)) {
      l4_checksum(ip);
      ++stats_.checksums_completed;
    }
    out.push_back(std::move(f));
    return;
  }
  // Oversized: only TCP over IPv4 can be cut (as TSO would have); anything else is dropped.
  const std::size_t thl = is_ip && ip.proto == kTcp && ip.total >= ip.ihl + 20
                              ? static_cast<std::size_t>(ip.hdr[ip.ihl + 12] >> 4) * 4
                              : 0;
  if (thl < 20 || ip.ihl + thl > ip.total || ip.ihl + thl >= mtu_) {
    ++stats_.oversized_dropped;
    return;
  }
  const std::size_t headers = kEth + ip.ihl + thl;
  const std::size_t payload = ip.total - ip.ihl - thl;
  const std::size_t mss = mtu_ - ip.ihl - thl;
  const std::uint8_t* tcp = ip.hdr + ip.ihl;
  const std::uint32_t seq = get32(tcp + 4);
  const std::uint8_t flags = tcp[13];
  const std::uint16_t id = get16(ip.hdr + 4);
  ++stats_.segmented;
  for (std::size_t off = 0, k = 0; off < payload; off += mss, ++k) {
    const std::size_t n = std::min(mss, payload - off);
    std::vector<std::uint8_t> s(headers + n);
    std::memcpy(s.data(), f.data(), headers);
    std::memcpy(s.data() + headers, f.data() + headers + off, n);
    Ip sip;
    sip.hdr = s.data() + kEth;
    sip.ihl = ip.ihl;
    sip.total = ip.ihl + thl + n;
    sip.proto = kTcp;
    put16(sip.hdr + 2, static_cast<std::uint16_t>(sip.total));
    put16(sip.hdr + 4, static_cast<std::uint16_t>(id + k));
    ip_checksum(sip);
    std::uint8_t* st = sip.hdr + ip.ihl;
    put32(st + 4, seq + static_cast<std::uint32_t>(off));
    const bool first = off == 0, last = off + n >= payload;
    std::uint8_t fl = flags;
    if (!last) fl &= static_cast<std::uint8_t>(~(0x01 | 0x08));  // FIN and PSH: the last only
    if (!first) fl &= static_cast<std::uint8_t>(~0x80);          // CWR: the first only
    st[13] = fl;
    l4_checksum(sip);
    out.push_back(std::move(s));
    ++stats_.segments;
  }
}

}  // namespace vtoe::netvp
