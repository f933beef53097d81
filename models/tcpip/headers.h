// Wire formats: Ethernet II, ARP, IPv4, ICMP, UDP, TCP — bounds-checked parsers and builders.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "models/tcpip/types.h"

namespace vtoe::tcpip {

constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
constexpr std::uint16_t kEtherTypeArp = 0x0806;
constexpr std::size_t kEthHeaderLen = 14;
constexpr std::size_t kMinFrameLen = 60;  ///< without FCS
constexpr std::size_t kArpLen = 28;
constexpr std::size_t kIpv4MinHeaderLen = 20;
constexpr std::size_t kIcmpHeaderLen = 8;
constexpr std::size_t kUdpHeaderLen = 8;
constexpr std::size_t kTcpMinHeaderLen = 20;
constexpr std::size_t kTcpMaxHeaderLen = 60;
constexpr std::uint8_t kIpProtoIcmp = 1;
constexpr std::uint8_t kIpProtoTcp = 6;
constexpr std::uint8_t kIpProtoUdp = 17;

namespace tcp_flags {
constexpr std::uint8_t kFin = 0x01;
constexpr std::uint8_t kSyn = 0x02;
constexpr std::uint8_t kRst = 0x04;
constexpr std::uint8_t kPsh = 0x08;
constexpr std::uint8_t kAck = 0x10;
constexpr std::uint8_t kUrg = 0x20;
constexpr std::uint8_t kEce = 0x40;
constexpr std::uint8_t kCwr = 0x80;
}  // namespace tcp_flags

// Big-endian (network order) fields as one load or store each: byte-wise code made the
// compiler merge adjacent stores with shifts and ors, several times the instructions.
inline std::uint16_t net16(std::uint16_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return __builtin_bswap16(v);
#else
  return v;
#endif
}
inline std::uint32_t net32(std::uint32_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return __builtin_bswap32(v);
#else
  return v;
#endif
}
inline std::uint16_t load_be16(const std::uint8_t* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return net16(v);
}
inline std::uint32_t load_be32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return net32(v);
}
inline void store_be16(std::uint8_t* p, std::uint16_t v) {
  const std::uint16_t x = net16(v);
  std::memcpy(p, &x, 2);
}
inline void store_be32(std::uint8_t* p, std::uint32_t v) {
  const std::uint32_t x = net32(v);
  std::memcpy(p, &x, 4);
}

// ---------------------------------------------------------------- Ethernet
struct EthHeader {
  MacAddr dst, src;
  std::uint16_t ethertype = 0;
};
/// False if len < 14.
bool parse_eth(const std::uint8_t* p, std::size_t len, EthHeader& h);
void write_eth(std::uint8_t* p, const EthHeader& h);  // 14 bytes

// ---------------------------------------------------------------- ARP (Ethernet / IPv4 only)
struct ArpPacket {
  static constexpr std::uint16_t kRequest = 1, kReply = 2;
  std::uint16_t op = 0;
  MacAddr sha;
  Ipv4 spa = 0;
  MacAddr tha;
  Ipv4 tpa = 0;
};
/// False if truncated or not htype 1 / ptype 0x0800 / hlen 6 / plen 4.
bool parse_arp(const std::uint8_t* p, std::size_t len, ArpPacket& a);
void write_arp(std::uint8_t* p, const ArpPacket& a);  // 28 bytes

// ---------------------------------------------------------------- IPv4
struct Ipv4Header {
  std::uint8_t header_len = 20;  ///< bytes (IHL * 4)
  std::uint8_t tos = 0;
  std::uint16_t total_len = 0;
  std::uint16_t id = 0;
  bool df = false, mf = false;
  std::uint16_t frag_offset = 0;  ///< in 8-byte units
  std::uint8_t ttl = 64;
  std::uint8_t proto = 0;
  std::uint16_t checksum = 0;
  Ipv4 src = 0, dst = 0;
};
enum class IpParse { Ok, Truncated, BadHeader, BadChecksum };
/// Validates version 4, IHL >= 5, IHL*4 <= total_len <= len (bytes after it are link padding),
/// and the header checksum (not when `verify_checksum` is false: a frame whose sender vouches for
/// its checksums). Options are skipped.
IpParse parse_ipv4_header(const std::uint8_t* p, std::size_t len, Ipv4Header& h,
                          bool verify_checksum = true);
/// Writes a 20-byte header (options are never emitted) with a correct checksum.
void write_ipv4_header(std::uint8_t* p, const Ipv4Header& h);

// ---------------------------------------------------------------- ICMP
struct IcmpHeader {
  static constexpr std::uint8_t kEchoReply = 0, kDestUnreachable = 3, kEchoRequest = 8;
  std::uint8_t type = 0, code = 0;
  std::uint16_t checksum = 0;
  std::uint16_t id = 0, seq = 0;  ///< the 4 "rest of header" bytes as echo id/sequence
};
bool parse_icmp(const std::uint8_t* p, std::size_t len, IcmpHeader& h);  // len >= 8
void write_icmp(std::uint8_t* p, const IcmpHeader& h);  // 8 bytes, checksum as given

// ---------------------------------------------------------------- UDP
struct UdpHeader {
  std::uint16_t src_port = 0, dst_port = 0, length = 0, checksum = 0;
};
/// `len` is the IP payload length; false if len < 8 or the length field is outside [8, len].
bool parse_udp(const std::uint8_t* p, std::size_t len, UdpHeader& h);
void write_udp(std::uint8_t* p, const UdpHeader& h);

// ---------------------------------------------------------------- TCP
struct TcpOptions {
  bool has_mss = false;
  std::uint16_t mss = 0;
  bool has_wscale = false;
  std::uint8_t wscale = 0;  ///< as received (clamp to 14 is the user's job)
  bool sack_permitted = false;
  bool has_timestamps = false;
  std::uint32_t ts_val = 0, ts_ecr = 0;
  std::uint8_t sack_blocks = 0;  ///< SACK blocks (RFC 2018): the first sack_blocks entries
  std::array<std::pair<std::uint32_t, std::uint32_t>, 4> sack{};  ///< [left, right) edges
};
struct TcpHeader {
  std::uint16_t src_port = 0, dst_port = 0;
  std::uint32_t seq = 0, ack = 0;
  std::uint8_t header_len = 20;  ///< bytes (data offset * 4)
  std::uint8_t flags = 0;
  std::uint16_t window = 0, checksum = 0, urgent = 0;
};
enum class TcpParse { Ok, Truncated, BadHeader, BadOptions };
/// Parses the option bytes between the fixed header and the data. Robust to any input: EOL ends
/// the list, NOP is skipped, unknown kinds are skipped by their length; a length < 2 or past the
/// end, or a known kind with the wrong length, returns false.
bool parse_tcp_options(const std::uint8_t* p, std::size_t len, TcpOptions& o);
/// `len` = TCP segment length (header + data). Checks data offset within [20, len].
TcpParse parse_tcp(const std::uint8_t* p, std::size_t len, TcpHeader& h, TcpOptions& o);
/// Bytes write_tcp_options will produce (padded to a multiple of 4).
std::size_t tcp_options_len(const TcpOptions& o);
/// Writes MSS, window scale, SACK-permitted, timestamps and SACK blocks as present, NOP-padded;
/// returns bytes.
std::size_t write_tcp_options(std::uint8_t* p, const TcpOptions& o);
/// Writes the 20-byte fixed header (h.header_len goes into the data offset field).
void write_tcp_header(std::uint8_t* p, const TcpHeader& h);

/// Checksum to store in a TCP/UDP header (computed with the checksum field zero).
std::uint16_t transport_checksum(Ipv4 src, Ipv4 dst, std::uint8_t proto, const std::uint8_t* seg,
                                 std::size_t len);
/// True if the stored checksum of the segment is correct.
bool verify_transport_checksum(Ipv4 src, Ipv4 dst, std::uint8_t proto, const std::uint8_t* seg,
                               std::size_t len);

// ---------------------------------------------------------------- whole frames
/// Ethernet + ARP, padded to 60 bytes.
Frame build_arp_frame(const MacAddr& src, const MacAddr& dst, const ArpPacket& a);
/// Ethernet + IPv4 (20-byte header, ip.total_len/header_len/checksum computed) + the given
/// transport bytes (already complete). Padded to 60 bytes if `pad`.
Frame build_ipv4_frame(const MacAddr& src, const MacAddr& dst, Ipv4Header ip,
                       const std::uint8_t* l4, std::size_t l4_len, bool pad = true);
/// Complete UDP frame with checksum.
Frame build_udp_frame(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4 src, Ipv4 dst,
                      std::uint16_t src_port, std::uint16_t dst_port, const std::uint8_t* data,
                      std::size_t len, std::uint16_t ip_id = 0);
/// Complete ICMP frame (type/code/id/seq + data) with checksum.
Frame build_icmp_frame(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4 src, Ipv4 dst,
                       const IcmpHeader& icmp, const std::uint8_t* data, std::size_t len,
                       std::uint16_t ip_id = 0);
/// Complete TCP frame with options (h.header_len is set from the options) and checksum; DF set.
Frame build_tcp_frame(const MacAddr& src_mac, const MacAddr& dst_mac, Ipv4 src, Ipv4 dst,
                      TcpHeader h, const TcpOptions& opts, const std::uint8_t* data,
                      std::size_t len, std::uint16_t ip_id = 0);

/// A decoded frame (tests, tracing). Pointers refer into the decoded buffer.
struct FrameView {
  EthHeader eth;
  bool is_arp = false, is_ipv4 = false, is_tcp = false, is_udp = false, is_icmp = false;
  bool checksums_ok = false;  ///< IP header and transport checksums verified
  ArpPacket arp;
  Ipv4Header ip;
  TcpHeader tcp;
  TcpOptions tcp_opts;
  UdpHeader udp;
  IcmpHeader icmp;
  const std::uint8_t* payload = nullptr;  ///< TCP/UDP/ICMP data
  std::size_t payload_len = 0;
};
/// Decodes as far as it can; false if the frame is malformed at any layer.
bool decode_frame(const std::uint8_t* p, std::size_t len, FrameView& v);

}  // namespace vtoe::tcpip
