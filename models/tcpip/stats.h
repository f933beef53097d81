// Counters of the TCP/IP engine and per-connection introspection.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "models/tcpip/types.h"

namespace vtoe::tcpip {

// X-macro: every counter of StackStats, in a stable order (the order of reports).
#define VTOE_TCPIP_STATS(X)                                                                    \
  X(frames_in)               /* Ethernet frames given to receive_frame */                      \
  X(frames_out)              /* frames handed to StackListener::transmit */                    \
  X(bytes_in)                /* bytes of frames_in */                                          \
  X(bytes_out)               /* bytes of frames_out */                                         \
  X(arp_in)                  /* valid ARP packets received */                                  \
  X(arp_requests_sent)       /* */                                                             \
  X(arp_replies_sent)        /* */                                                             \
  X(arp_cache_updates)       /* entries learned or changed */                                  \
  X(ip_in)                   /* valid IPv4 datagrams for us */                                 \
  X(ip_out)                  /* */                                                             \
  X(icmp_in)                 /* */                                                             \
  X(icmp_out)                /* */                                                             \
  X(echo_requests_in)        /* */                                                             \
  X(echo_replies_in)         /* */                                                             \
  X(udp_in)                  /* datagrams delivered to a bound port */                         \
  X(udp_out)                 /* */                                                             \
  X(udp_no_port)             /* datagrams to an unbound port (ICMP port unreachable sent) */   \
  X(tcp_segs_in)             /* valid TCP segments received */                                 \
  X(tcp_segs_out)            /* */                                                             \
  X(tcp_data_segs_out)       /* segments carrying payload (incl. retransmissions) */           \
  X(tcp_bytes_out)           /* payload bytes sent (incl. retransmissions) */                  \
  X(tcp_bytes_in)            /* in-order payload bytes accepted */                             \
  X(retransmits)             /* segments retransmitted (any reason) */                         \
  X(fast_retransmits)        /* fast-retransmit episodes (3 dup ACKs) */                       \
  X(rto_timeouts)            /* retransmission timer expirations with data outstanding */      \
  X(syn_retransmits)         /* SYN / SYN-ACK retransmissions */                               \
  X(dup_acks)                /* duplicate ACKs received (RFC 5681 definition) */               \
  X(partial_acks)            /* NewReno partial ACKs */                                        \
  X(sack_lost_marks)         /* segments the SACK scoreboard marked lost (RACK/DupThresh) */   \
  X(dsacks_sent)             /* ACKs carrying a D-SACK block (RFC 2883) */                     \
  X(dsacks_in)               /* D-SACK blocks received */                                      \
  X(tlp_probes)              /* tail loss probes sent (RFC 8985) */                            \
  X(tlp_recoveries)          /* probes that repaired a loss (no D-SACK came back) */           \
  X(fast_recoveries_undone)  /* fast recoveries undone: D-SACK / Eifel, no loss */             \
  X(spurious_rto_undone)     /* timeouts undone: Eifel / D-SACK, the ACKs were late */         \
  X(hystart_css_entries)     /* HyStart++: RTT increase, slow start -> conservative SS */      \
  X(hystart_exits)           /* HyStart++: conservative SS -> congestion avoidance */          \
  X(ecn_negotiated)          /* connections established with ECN (RFC 3168) */                 \
  X(ce_received)             /* segments received with CE on an ECN connection */              \
  X(ece_received)            /* ACKs received with ECE on an ECN connection */                 \
  X(ecn_reductions)          /* responses to ECE (once per window, nothing retransmitted) */   \
  X(pacing_waits)            /* times BBR's pacing held a segment back (a pacing timer) */     \
  X(cwr_sent)                /* segments sent with CWR (first new data after a reduction) */   \
  X(cwr_received)            /* segments received with CWR (the ECE echo stops) */             \
  X(persist_probes)          /* zero-window probes sent */                                     \
  X(delayed_acks)            /* ACKs sent by the delayed-ACK timer */                          \
  X(window_updates)          /* ACKs sent because the user read and the window opened */       \
  X(ooo_segments)            /* segments received ahead of rcv_nxt and queued */               \
  X(old_duplicates)          /* segments entirely below rcv_nxt (duplicates) */                \
  X(rst_in)                  /* RSTs received that reset a connection */                       \
  X(rst_sent)                /* */                                                             \
  X(challenge_acks)          /* RFC 5961 challenge ACKs sent */                                \
  X(oow_replies_limited)     /* replies to unacceptable segments not sent (RFC 5961 s7) */     \
  X(active_opens)            /* */                                                             \
  X(passive_opens)           /* SYNs accepted by a listener */                                 \
  X(conns_established)       /* */                                                             \
  X(conns_closed)            /* */                                                             \
  X(conns_reset)             /* */                                                             \
  X(conns_timed_out)         /* */                                                             \
  X(conns_refused)           /* */                                                             \
  X(drop_truncated)          /* frame / header shorter than its format requires */             \
  X(drop_oversized)          /* frame longer than 14 + mtu, or datagram too big to send */     \
  X(drop_not_for_us)         /* wrong destination MAC / IP */                                  \
  X(drop_unknown_ethertype)  /* */                                                             \
  X(drop_bad_arp)            /* ARP for another hardware/protocol type, or malformed */        \
  X(drop_bad_ip_header)      /* version, IHL, total length inconsistent with the frame */      \
  X(drop_bad_ip_checksum)    /* */                                                             \
  X(drop_martian)            /* impossible source address (ours, broadcast, multicast, 0) */   \
  X(drop_fragments)          /* IPv4 fragments (not supported) */                              \
  X(drop_unknown_protocol)   /* */                                                             \
  X(drop_bad_icmp)           /* truncated ICMP */                                              \
  X(drop_bad_icmp_checksum)  /* */                                                             \
  X(drop_bad_udp_header)     /* */                                                             \
  X(drop_bad_udp_checksum)   /* */                                                             \
  X(drop_bad_tcp_header)     /* data offset / ports invalid */                                 \
  X(drop_bad_tcp_checksum)   /* */                                                             \
  X(drop_bad_tcp_options)    /* malformed option list */                                       \
  X(drop_bad_tcp_flags)      /* impossible flag combinations (SYN+FIN, SYN+RST) */             \
  X(drop_out_of_window)      /* unacceptable segments (answered with an ACK) */                \
  X(drop_rst_out_of_window)  /* RSTs outside the window (silently dropped) */                  \
  X(drop_ack_unsent)         /* ACK of data not yet sent */                                    \
  X(drop_paws)               /* segments with an old timestamp (PAWS, RFC 7323) */             \
  X(drop_no_ack)             /* segment without ACK in a synchronized state */                 \
  X(drop_no_connection)      /* segment for no connection (an RST is sent unless it is one) */ \
  X(drop_listen_overflow)    /* SYN dropped: listener backlog of half-open connections full */ \
  X(drop_table_full)         /* SYN refused / connect failed: connection table full */         \
  X(drop_no_ephemeral_port)  /* connect failed: every ephemeral port pairs with that peer */   \
  X(drop_ooo_overflow)       /* out-of-order segment dropped: too many holes */                \
  X(drop_rcv_window)         /* payload bytes beyond the receive window trimmed (segments) */  \
  X(drop_arp_unresolved)     /* frames dropped because ARP failed */                           \
  X(drop_arp_queue_overflow) /* frames dropped while waiting for ARP */                        \
  X(drop_no_route)           /* no gateway for an off-subnet destination */

struct StackStats {
#define VTOE_TCPIP_STATS_FIELD(name) std::uint64_t name = 0;
  VTOE_TCPIP_STATS(VTOE_TCPIP_STATS_FIELD)
#undef VTOE_TCPIP_STATS_FIELD

  /// Calls f(std::string_view name, std::uint64_t value) for every counter, in a stable order.
  template <class F>
  void for_each(F&& f) const {
#define VTOE_TCPIP_STATS_VISIT(name) f(std::string_view(#name), name);
    VTOE_TCPIP_STATS(VTOE_TCPIP_STATS_VISIT)
#undef VTOE_TCPIP_STATS_VISIT
  }
  /// All counters as (name, value) pairs, in the order of for_each.
  std::vector<std::pair<std::string_view, std::uint64_t>> counters() const;
  /// Sum of all drop_* counters.
  std::uint64_t total_drops() const;
};

/// Snapshot of one connection's control block (tests, statistics).
struct ConnectionInfo {
  bool valid = false;
  TcpState state = TcpState::Closed;
  Ipv4 local_ip = 0, remote_ip = 0;
  std::uint16_t local_port = 0, remote_port = 0;
  ConnId listener = 0;
  std::uint32_t iss = 0, irs = 0;
  std::uint32_t snd_una = 0, snd_nxt = 0, snd_max = 0;
  std::uint32_t snd_wnd = 0;  ///< peer's window, scaled, bytes
  std::uint32_t rcv_nxt = 0;
  std::uint32_t rcv_wnd = 0;  ///< window we last advertised (bytes, from rcv_nxt)
  std::uint32_t cwnd = 0, ssthresh = 0;
  std::uint32_t snd_mss = 0;    ///< effective send MSS
  std::uint32_t peer_mss = 0;   ///< MSS option received (536 if none)
  bool wscale_ok = false;       ///< window scaling negotiated
  std::uint8_t snd_wscale = 0;  ///< peer's shift (applied to windows we receive)
  std::uint8_t rcv_wscale = 0;  ///< our shift (applied to windows we send)
  TimePs srtt = 0, rttvar = 0, rto = 0;
  bool in_recovery = false;
  bool in_cwr = false;  ///< an ECE reduction in progress (cwnd follows PRR down to ssthresh)
  std::uint32_t dupacks = 0;
  std::uint32_t consecutive_retransmissions = 0;
  std::uint64_t bytes_sent = 0;  ///< payload bytes accepted by send()
  std::uint64_t bytes_acked = 0;
  std::uint64_t bytes_received = 0;  ///< in-order bytes received
  std::size_t send_queued = 0;       ///< unsent + unacked bytes held
  std::size_t readable = 0;
  std::size_t ooo_ranges = 0;
  bool sack_ok = false;            ///< SACK negotiated
  bool ts_ok = false;              ///< timestamps negotiated
  std::uint32_t sacked_bytes = 0;  ///< scoreboard: bytes the peer SACKed above snd_una
  std::uint32_t lost_bytes = 0;    ///< scoreboard: bytes marked lost, not yet retransmitted
  std::uint32_t ts_recent = 0;     ///< TS.Recent (RFC 7323)
  TimePs min_rtt = 0;              ///< smallest RTT sample (RACK), 0 if none
  bool reordering_seen = false;    ///< RACK saw reordering (widens its window)
  bool ecn_ok = false;             ///< ECN negotiated (RFC 3168)
  bool ecn_echo = false;           ///< a CE arrived: ACKs carry ECE until a CWR
  // BBR (congestion control bbr); zero / empty otherwise.
  double pacing_rate = 0;     ///< bytes per second
  double bottleneck_bw = 0;   ///< BBR's bandwidth estimate, bytes per second
  const char* bbr_mode = "";  ///< startup, drain, probe_bw, probe_rtt
};

}  // namespace vtoe::tcpip
