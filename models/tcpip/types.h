// Basic types of the vtoe TCP/IP engine: addresses, ids, frames, states, events, configuration.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vtoe::tcpip {

/// Simulated time in picoseconds. The engine never reads a clock: every call carries `now`.
using TimePs = std::uint64_t;
/// "No deadline".
constexpr TimePs kNever = UINT64_MAX;

/// A 48-bit Ethernet address.
struct MacAddr {
  std::array<std::uint8_t, 6> b{};

  bool operator==(const MacAddr& o) const { return b == o.b; }
  bool operator!=(const MacAddr& o) const { return b != o.b; }
  bool is_broadcast() const;
  bool is_multicast() const { return (b[0] & 1) != 0; }
  bool is_zero() const;
  /// "02:00:00:00:00:01".
  std::string to_string() const;
  static MacAddr broadcast();
  /// Parses "aa:bb:cc:dd:ee:ff"; false on syntax error.
  static bool parse(const std::string& s, MacAddr& out);
  /// 02:00:00:00:hi:lo — a locally administered address derived from a number (tests, scenarios).
  static MacAddr local(std::uint32_t n);
};

/// IPv4 address in host byte order (10.0.0.1 == 0x0A000001).
using Ipv4 = std::uint32_t;
/// Parses a dotted quad; returns 0 on error.
Ipv4 parse_ipv4(const std::string& s);
/// Parses a dotted quad; false on error.
bool parse_ipv4(const std::string& s, Ipv4& out);
std::string ipv4_to_string(Ipv4 a);

/// Connection or listener handle; 0 is invalid. Listener ids have bit 31 set.
using ConnId = std::uint32_t;

/// A whole Ethernet II frame (destination MAC first), without preamble and FCS: its bytes, plus
/// one fact the bytes cannot carry. `checksums_valid` is set by a vtoe Stack on every frame it
/// sends: it computed the IPv4 header's and the transport's checksums over exactly these bytes,
/// so the receiving stack skips recomputing the IPv4 header's and the transport checksum (each
/// checksum is computed once, as with a NIC's receive checksum offload). Frames from anywhere else
/// (NetVP's raw socket, fuzzers, tests, a copy from a plain byte vector) start with it false and
/// are verified. Whoever changes a frame's bytes after it was built must clear it (ECN marking
/// keeps both checksums valid and keeps it). Builds with assertions verify anyway and check the
/// flag.
class Frame : public std::vector<std::uint8_t> {
 public:
  using std::vector<std::uint8_t>::vector;
  Frame() = default;
  Frame(const std::vector<std::uint8_t>& bytes) : std::vector<std::uint8_t>(bytes) {}
  Frame(std::vector<std::uint8_t>&& bytes) : std::vector<std::uint8_t>(std::move(bytes)) {}

  bool checksums_valid = false;
};

/// Where bytes written in place into a connection's send buffer are in its stream
/// (Stack::send_place).
struct SendMark {
  std::uint64_t buffer = 0;  // ByteRing::id()
  std::uint64_t pos = 0;     // stream position of the first byte
};

enum class TcpState {
  Closed,
  Listen,
  SynSent,
  SynReceived,
  Established,
  FinWait1,
  FinWait2,
  CloseWait,
  Closing,
  LastAck,
  TimeWait
};
const char* to_string(TcpState s);

/// Events reported through StackListener::tcp_event.
/// Every connection id ends with exactly one terminal event (Closed, Reset, TimedOut or Refused);
/// the id is invalid once that callback returns. Connections created by a listener are reported
/// (Accepted) only once their handshake completes; ones that die before are never reported.
enum class Event {
  Connected,   ///< active open completed
  Accepted,    ///< new connection on a listener; info.conn = new id, info.listener = listener
  Readable,    ///< new in-order bytes can be read; info.bytes = bytes that just arrived
  Writable,    ///< send space freed after send() had accepted less than offered
  SendAcked,   ///< info.bytes of data were acknowledged by the peer
  PeerClosed,  ///< FIN received (no more data will arrive)
  Closed,      ///< terminal: fully closed (after TIME_WAIT, LAST_ACK, abort(), close() of a
               ///< listener or of a connection that was never established)
  Reset,       ///< terminal: RST received
  TimedOut,    ///< terminal: retransmissions exhausted (an RST was sent)
  Refused      ///< terminal: RST in answer to our SYN
};
const char* to_string(Event e);
inline bool is_terminal(Event e) {
  return e == Event::Closed || e == Event::Reset || e == Event::TimedOut || e == Event::Refused;
}

/// Congestion control after slow start: Reno's AIMD (RFC 5681, NewReno recovery without SACK)
/// or CUBIC (RFC 9438), both with PRR (RFC 6937) in SACK recovery; or BBR v1 (a model of the
/// path's bandwidth and RTT, paced; Linux's tcp_bbr.c), which sets cwnd itself.
enum class CongestionControl { NewReno, Cubic, Bbr };
const char* to_string(CongestionControl c);
/// "newreno" / "cubic" / "bbr"; false for anything else.
bool parse_congestion(const std::string& s, CongestionControl& out);

/// ECN (RFC 3168), as Linux's tcp_ecn: Off never uses it; Passive agrees when the peer's SYN
/// asks (Linux's default, tcp_ecn=2); On also asks in our SYNs (tcp_ecn=1).
enum class EcnMode { Off, Passive, On };
const char* to_string(EcnMode m);
/// "off" / "passive" / "on"; false for anything else.
bool parse_ecn(const std::string& s, EcnMode& out);

/// The IPv4 ECN field (RFC 3168 section 5): the low two bits of the TOS byte.
namespace ecn {
constexpr std::uint8_t kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3, kMask = 3;
}  // namespace ecn

struct EventInfo {
  ConnId conn = 0;
  ConnId listener = 0;
  std::uint64_t bytes = 0;
};

struct StackConfig {
  MacAddr mac;  ///< primary MAC address
  Ipv4 ip = 0;  ///< primary IPv4 address
  /// Extra local addresses (IP aliasing, each with its own MAC: one per guest behind a TOE on a
  /// real segment). The engine accepts frames to any local MAC (or broadcast) and datagrams to
  /// any local IP, answers ARP for each with that address's MAC, replies to pings from the
  /// address pinged, and a TCP connection sends from its own local address and that address's
  /// MAC. Aliases share the primary's subnet (prefix_len, gateway: routing decisions use the
  /// primary's subnet). Entries that are invalid (IP 0, duplicate, loopback/multicast/subnet
  /// broadcast, zero or multicast MAC) are ignored; Stack::config().aliases lists the accepted
  /// ones, including those added later with Stack::add_address().
  std::vector<std::pair<Ipv4, MacAddr>> aliases;
  int prefix_len = 24;
  Ipv4 gateway = 0;                            ///< 0: no route off the subnet
  std::uint32_t mtu = 1500;                    ///< IP MTU; our MSS = mtu - 40
  std::uint32_t initial_window_segments = 10;  ///< RFC 6928
  std::uint8_t window_scale = 7;               ///< our shift, offered in SYN (RFC 7323), <= 14
  std::uint32_t send_buffer = 256 * 1024;      ///< per-connection unsent+unacked bytes
  std::uint32_t recv_buffer = 256 * 1024;      ///< per-connection unread bytes = receive window
  /// Local buffer memory shared by all connections (send queues, unread data, promised receive
  /// windows); 0 = none, only the per-connection limits apply.
  std::uint64_t shared_buffer = 0;
  std::uint32_t max_connections = 1024;       ///< CCB capacity; SYNs beyond it get RST
  TimePs rto_initial = 1'000'000'000'000ull;  ///< 1 s (RFC 6298)
  TimePs rto_min = 200'000'000'000ull;        ///< 200 ms
  TimePs rto_max = 60'000'000'000'000ull;     ///< 60 s
  TimePs delayed_ack = 40'000'000'000ull;     ///< 40 ms; ACK at least every 2nd full segment
  /// Least time between two ACKs a connection sends in reply to unacceptable segments without
  /// data (out of window, acknowledging unsent data, challenge ACKs): RFC 5961 section 7, as
  /// Linux's tcp_invalid_ratelimit. Two ends that each find the other's ACK unacceptable would
  /// otherwise exchange ACKs at one per link delay for ever.
  TimePs invalid_ratelimit = 500'000'000'000ull;
  TimePs time_wait = 60'000'000'000'000ull;   ///< 2*MSL
  TimePs arp_timeout = 1'000'000'000'000ull;  ///< per ARP request
  int arp_retries = 3;                        ///< ARP requests before queued frames are dropped
  std::uint32_t max_retransmissions = 15;     ///< then the connection is aborted (TimedOut)
  bool nagle = false;
  /// SACK (RFC 2018, D-SACK RFC 2883) offered in SYNs; when both ends agree, loss recovery uses
  /// the SACK scoreboard (RFC 6675) instead of NewReno.
  bool sack = true;
  /// Timestamps (RFC 7323) offered in SYNs: PAWS, and an RTT sample from every ACK that advances.
  bool timestamps = true;
  /// RACK-TLP (RFC 8985) on SACK connections: time-based loss detection and tail loss probes
  /// (off: RFC 6675's DupThresh rule alone, and no probes).
  bool rack = true;
  CongestionControl congestion = CongestionControl::NewReno;
  /// Undo of spurious retransmissions: a fast recovery or timeout whose retransmissions were
  /// all D-SACKed (RFC 3708), or whose first ACK echoes a timestamp older than the first
  /// retransmission (Eifel, RFC 3522), restores cwnd and ssthresh (RFC 4015 after a timeout).
  bool undo = true;
  /// HyStart++ (RFC 9406) in the initial slow start: an RTT increase leaves slow start for
  /// Conservative Slow Start and then congestion avoidance before any loss.
  bool hystart = true;
  /// Loopback: a frame to one of the stack's own addresses (another guest behind the same TOE)
  /// goes back in through StackListener::loop_back instead of out to the MAC, and a frame that
  /// comes back so is accepted from a local source address (else a martian).
  bool loopback = false;
  /// Slow start as Linux's tcp_slow_start: cwnd grows by every byte an ACK acknowledges, so a
  /// delayed ACK of two segments adds two (cwnd doubles per RTT); false = RFC 5681 section 3.1,
  /// at most one SMSS per ACK (about 1.5x per RTT with an ACK every second segment).
  bool linux_slow_start = false;
  /// ECN (RFC 3168): ECN-setup SYNs (On), agreement to a peer's (Passive, On), then ECT(0) on
  /// new data, ECE/CWR, and a congestion response to ECE without retransmission. Passive, as
  /// Linux: nothing changes on the wire unless the other end asks.
  EcnMode ecn = EcnMode::Passive;
  std::uint16_t ephemeral_port_base = 49152;
  std::uint32_t isn_seed = 1;  ///< deterministic ISNs: same seed -> same ISNs
  // --- additions ---
  std::uint32_t max_syn_retransmissions = 5;  ///< SYN / SYN-ACK retransmissions before giving up
  std::uint32_t arp_queue_limit = 256;        ///< frames held per unresolved next hop
  std::uint32_t max_ooo_ranges = 64;          ///< out-of-order holes tracked per connection
  std::uint8_t ttl = 64;
  bool pad_short_frames = true;  ///< pad emitted frames to the 60-byte Ethernet minimum
  /// Largest received frame accepted (bytes, without FCS); 0 = 14 + mtu. Raise it when frames
  /// come from a Linux interface with GRO/LRO on (coalesced segments exceed the MTU).
  std::uint32_t max_rx_frame = 0;
  /// false: received TCP payload is counted in the receive buffers but not kept (a receiver
  /// that never reads the bytes, or checks them as they arrive): StackListener::tcp_payload
  /// shows each segment's bytes as they enter, recv() and peek() give zeros, view() nothing.
  /// The protocol (windows, ACKs, events) is exactly as with the bytes kept.
  bool keep_rx_payload = true;
};

}  // namespace vtoe::tcpip
