// The TCP/IP stack: Ethernet II, ARP, IPv4, ICMP echo, UDP and TCP over a frame interface.
// Used as the TOE's protocol processing module (PPM) logic, as the simulated peer host's stack
// and against real Linux TCP through a raw socket. Plain C++17: frames in; frames, events and
// timer deadlines out. Time is passed in by the caller; nothing here reads a clock.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "models/tcpip/headers.h"
#include "models/tcpip/stats.h"
#include "models/tcpip/tcp_connection.h"
#include "models/tcpip/types.h"

namespace vtoe::tcpip {

/// Implemented by the owner of a Stack (TOE PPM wrapper, peer host, raw-socket bridge).
/// Callbacks may call back into the Stack (send, recv, close, connect ...); events are delivered
/// after the Stack has finished the operation that produced them, in the order they arose.
/// transmit() must not synchronously feed frames back into the same Stack.
class StackListener {
 public:
  virtual ~StackListener() = default;
  /// A frame ready for the MAC, in order. Frames are padded to 60 bytes (no FCS).
  virtual void transmit(Frame&& frame) = 0;
  /// With StackConfig::loopback: a frame to one of the stack's own addresses, to be received
  /// again (by default it goes to transmit() like any other).
  virtual void loop_back(Frame&& frame) { transmit(std::move(frame)); }
  virtual void tcp_event(Event ev, const EventInfo& info) = 0;
  virtual void udp_received(std::uint16_t local_port, Ipv4 src, std::uint16_t src_port,
                            const std::uint8_t* data, std::size_t len) {
    (void)local_port, (void)src, (void)src_port, (void)data, (void)len;
  }
  /// Every UDP datagram delivered to a bound port, with the address it was sent to (one of the
  /// local addresses, or a broadcast address). A bound port receives on every local address.
  /// The default forwards to udp_received() (the destination address is dropped); override this
  /// one instead when the stack has aliases and the destination matters.
  virtual void udp_received_at(Ipv4 local_ip, std::uint16_t local_port, Ipv4 src,
                               std::uint16_t src_port, const std::uint8_t* data, std::size_t len) {
    (void)local_ip;
    udp_received(local_port, src, src_port, data, len);
  }
  /// A SYN created connection info.conn on listener info.listener (Stack::report_syns); it is
  /// in SYN_RECEIVED, and Accepted (or a terminal event) follows.
  virtual void syn_received(const EventInfo& info) { (void)info; }
  /// StackConfig::keep_rx_payload off: `len` payload bytes of connection `conn` (created by
  /// `listener`, 0 if by connect()) enter its receive buffer `offset` bytes after the next byte
  /// recv() gives, in the order segments arrive (out-of-order data included, and retransmitted
  /// bytes again). Called while the segment is processed, before its events.
  virtual void tcp_payload(ConnId conn, ConnId listener, std::size_t offset,
                           const std::uint8_t* data, std::size_t len) {
    (void)conn, (void)listener, (void)offset, (void)data, (void)len;
  }
  /// ICMP echo reply to a ping().
  virtual void icmp_echo_reply(Ipv4 src, std::uint16_t id, std::uint16_t seq,
                               const std::uint8_t* data, std::size_t len) {
    (void)src, (void)id, (void)seq, (void)data, (void)len;
  }
};

class Stack final : private TcpHost {
 public:
  Stack(const StackConfig& cfg, StackListener& listener);
  ~Stack();
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  const StackConfig& config() const { return cfg_; }

  // ---------------------------------------------------------------- local addresses
  /// Adds a local address (alias) with its own MAC, at any time (StackConfig::aliases documents
  /// the semantics). False if `ip` is 0, already local (primary or alias), a loopback, multicast
  /// or subnet-broadcast address, or `mac` is zero or multicast. Several addresses may share a
  /// MAC. Addresses are never removed.
  bool add_address(Ipv4 ip, const MacAddr& mac);
  /// True for the primary address (if nonzero) and every alias.
  bool is_local(Ipv4 ip) const;
  /// The MAC of a local address; the primary MAC for any other address.
  MacAddr mac_of(Ipv4 local) const;

  /// A received Ethernet frame at time `now`. Malformed or hostile frames are counted and
  /// dropped, or answered as RFC 9293 / RFC 5961 require; never undefined behaviour.
  /// `checksums_valid`: the sender vouches for the IPv4 header's and the transport checksum
  /// (Frame::checksums_valid); they are then not recomputed.
  void receive_frame(const std::uint8_t* data, std::size_t len, TimePs now,
                     bool checksums_valid = false);
  void receive_frame(const Frame& frame, TimePs now) {
    receive_frame(frame.data(), frame.size(), now, frame.checksums_valid);
  }

  /// Earliest time poll() has work; UINT64_MAX if none. May be earlier than necessary.
  TimePs next_deadline() const;
  /// Runs all timers due at `now`.
  void poll(TimePs now);

  // ---------------------------------------------------------------- TCP
  // A connection is identified by its 4-tuple (local ip, local port, remote ip, remote port):
  // two connections may differ only in their local address. A connection sends from its local
  // address, with that address's MAC.

  /// Listener id (bit 31 set), 0 if the port is 0, `local` is neither 0 nor a local address, or
  /// (local, port) already has a listener. `local` 0 listens on every local address (wildcard);
  /// a listener on a specific address takes precedence over the wildcard one on the same port.
  /// Accepted connections take the SYN's destination address as their local address.
  /// `backlog` bounds the connections in SYN_RECEIVED (SYNs beyond it are dropped, counted in
  /// drop_listen_overflow). Connections complete without an accept() call: each is reported
  /// with Event::Accepted.
  ConnId listen(std::uint16_t port, int backlog, TimePs now, Ipv4 local = 0);
  /// Reports every connection this listener creates as soon as its SYN arrives (the SYN-ACK is
  /// already on its way), through StackListener::syn_received, before the handshake completes:
  /// a split-TCP proxy connects downstream then (early SYN forwarding). Such a connection's
  /// terminal event is reported even if it dies before Accepted.
  void report_syns(ConnId listener, bool on);
  /// Starts an active open from local address `local` (0: the primary address); 0 when `local`
  /// is not a local address, the table is full, no ephemeral port is free or the explicit
  /// 4-tuple is in use. Completion: Connected, Refused or TimedOut.
  ConnId connect(Ipv4 dst, std::uint16_t dst_port, std::uint16_t src_port, TimePs now,
                 Ipv4 local = 0);
  /// Queues bytes (may be called from SYN_SENT on); returns bytes accepted (<= send_space()).
  std::size_t send(ConnId c, const std::uint8_t* data, std::size_t len, TimePs now);
  std::size_t send_space(ConnId c) const;
  /// In-place sending, for a DMA engine that reads straight into the send buffer: the storage
  /// for `n` bytes that follow the buffer's contents after `skip` more (bytes placed so and
  /// not yet queued), to be written now; null when they would not be in one piece or the
  /// connection has no room for them (write elsewhere and use send()). `mark` records where
  /// they are in the stream.
  std::uint8_t* send_place(ConnId c, std::size_t skip, std::size_t n, SendMark& mark);
  /// Queues up to `len` bytes written at `mark` exactly as send() queues a copy of them; 0 when
  /// they are not the next bytes of the connection's stream (the bytes before them were never
  /// queued) or the connection is gone.
  std::size_t send_written(ConnId c, const SendMark& mark, std::size_t len, TimePs now);
  /// True while an established connection has data to send, nothing unacknowledged, and a peer
  /// window of less than one segment (the peer's application has stopped reading).
  bool peer_window_closed(ConnId c) const;
  /// Reads in-order bytes (`out` null: drops them, for a caller that peeked them already);
  /// opening the window substantially emits a window update.
  std::size_t recv(ConnId c, std::uint8_t* out, std::size_t max, TimePs now);
  std::size_t readable(ConnId c) const;
  /// Copies readable bytes at `offset` without consuming them.
  std::size_t peek(ConnId c, std::size_t offset, std::uint8_t* out, std::size_t max) const;
  /// The first min(max, readable) bytes in place, as up to two contiguous pieces (valid until the
  /// connection is next used); returns their length. For a reader that looks at the bytes and
  /// then drops them with recv(c, nullptr, n), without a copy.
  std::size_t view(ConnId c, std::size_t max, const std::uint8_t*& p1, std::size_t& n1,
                   const std::uint8_t*& p2, std::size_t& n2) const;
  /// Graceful close: FIN after the queued data. On a listener: stops listening (its half-open
  /// connections are dropped) and reports Closed for the listener id.
  void close(ConnId c, TimePs now);
  /// Abortive close: RST; reports Closed.
  void abort(ConnId c, TimePs now);
  /// TCP_CORK: while on, segments shorter than the MSS wait for more data (the caller knows more
  /// is coming, e.g. the rest of a DMA'd send context); off sends what is held.
  void set_cork(ConnId c, bool on, TimePs now);
  TcpState state(ConnId c) const;
  /// The established or connecting connection an incoming frame's TCP segment belongs to, or 0
  /// (not TCP, malformed, a listener's or nobody's): a header lookup that changes nothing, for
  /// a hardware model that must fetch the connection's record before the segment is processed.
  /// `checksums_valid` as for receive_frame().
  ConnId connection_of_frame(const std::uint8_t* data, std::size_t len,
                             bool checksums_valid = false) const;
  /// The local buffer memory all connections share (StackConfig::shared_buffer), or nullptr.
  const BufferPool* buffer_pool() const { return pool_.get(); }
  /// Connection details; local_ip is the connection's own local address. For a listener:
  /// valid, Listen, local_port, and local_ip = its address (0 for a wildcard listener).
  ConnectionInfo info(ConnId c) const;
  /// Calls `fn` with the details of every connection in the table, in slot order.
  void for_each_connection(const std::function<void(const ConnectionInfo&)>& fn) const;
  /// Number of connections in the table (all states but listeners).
  std::size_t connection_count() const { return conn_count_; }

  // ---------------------------------------------------------------- UDP / ICMP
  bool udp_bind(std::uint16_t port);
  void udp_unbind(std::uint16_t port);
  /// Sends one datagram (no fragmentation: payload <= mtu - 28, else dropped and false) from
  /// local address `local` (0: the primary; false if not a local address).
  bool udp_send(std::uint16_t src_port, Ipv4 dst, std::uint16_t dst_port, const std::uint8_t* data,
                std::size_t len, TimePs now, Ipv4 local = 0);
  /// ICMP echo request from `local` (0: the primary; ignored if not a local address); the reply
  /// is reported through StackListener::icmp_echo_reply.
  void ping(Ipv4 dst, std::uint16_t id, std::uint16_t seq, TimePs now,
            const std::uint8_t* data = nullptr, std::size_t len = 0, Ipv4 local = 0);

  // ---------------------------------------------------------------- introspection
  const StackStats& stats() const { return stats_; }
  /// Payload bytes the peers acknowledged on connections whose local address is `local`, over the
  /// stack's life (closed connections included): the transmit goodput of that address's owner.
  std::uint64_t bytes_acked_from(Ipv4 local) const {
    const auto it = acked_by_local_.find(local);
    return it == acked_by_local_.end() ? 0 : it->second;
  }
  /// Calls `fn` with each round-trip time sample any connection's estimator takes (its local
  /// address, the sample); empty: none.
  void set_rtt_observer(std::function<void(Ipv4 local, TimePs rtt)> fn) {
    rtt_observer_ = std::move(fn);
  }
  /// ARP cache lookup (tests).
  bool arp_lookup(Ipv4 ip, MacAddr& mac) const;

 private:
  struct Listener {
    Ipv4 ip = 0;  // 0: wildcard
    std::uint16_t port = 0;
    int backlog = 0;
    int half_open = 0;
    bool report_syns = false;
  };
  struct PendingEvent {
    Event ev;
    EventInfo info;
    bool deliver;
    bool syn = false;  // a SYN on a reporting listener: StackListener::syn_received
  };
  struct TimerEntry {
    TimePs t;
    ConnId id;
    bool operator>(const TimerEntry& o) const { return t != o.t ? t > o.t : id > o.id; }
  };
  struct ArpPending {
    Ipv4 ip = 0;
    Ipv4 src = 0;  // local address the requests are sent from
    std::vector<Frame> queue;
    TimePs deadline = kNever;
    int tries = 0;
  };

  // TcpHost
  void tcp_output(TcpConnection& c, const TcpSegmentOut& seg) override;
  void tcp_notify(TcpConnection& c, Event ev, std::uint64_t bytes) override;
  void tcp_payload(TcpConnection& c, std::size_t offset, const std::uint8_t* data,
                   std::size_t len) override {
    listener_.tcp_payload(c.id(), c.listener(), offset, data, len);
  }
  void tcp_rtt_sample(TcpConnection& c, TimePs rtt) override {
    if (rtt_observer_) rtt_observer_(c.local_ip(), rtt);
  }
  std::function<void(Ipv4, TimePs)> rtt_observer_;

  TcpConnection* find(ConnId id) const;
  /// A connection's 4-tuple.
  struct TupleKey {
    Ipv4 lip = 0, rip = 0;
    std::uint16_t lport = 0, rport = 0;
    bool operator==(const TupleKey& o) const {
      return lip == o.lip && rip == o.rip && lport == o.lport && rport == o.rport;
    }
  };
  struct TupleHash {
    std::size_t operator()(const TupleKey& k) const;
  };
  static TupleKey key_of(const TcpConnection& c) {
    return TupleKey{c.local_ip(), c.remote_ip(), c.local_port(), c.remote_port()};
  }
  static std::uint64_t listen_key(Ipv4 ip, std::uint16_t port) {
    return (static_cast<std::uint64_t>(ip) << 16) | port;
  }
  static std::uint64_t mac_key(const MacAddr& m) {
    std::uint64_t k = 0;
    for (auto x : m.b) k = (k << 8) | x;
    return k;
  }
  TcpConnection* create_conn(const TupleKey& k);
  void after_op(TcpConnection& c);
  void schedule(TcpConnection& c);
  // Space came back to the shared buffer pool: connections it held back may go on.
  void wake_pool_waiters();
  void free_slot(ConnId id);
  void flush_events();
  std::uint32_t next_isn(const TupleKey& k);
  /// The listener for a segment to (ip, port): a specific one first, else the wildcard one.
  ConnId find_listener(Ipv4 ip, std::uint16_t port) const;
  /// The source address for `local`: itself if local, the primary if 0; false otherwise.
  bool pick_source(Ipv4 local, Ipv4& out) const;

  void handle_arp(const EthHeader& eth, const std::uint8_t* p, std::size_t n, TimePs now);
  void handle_ipv4(const std::uint8_t* p, std::size_t n, TimePs now);
  void handle_icmp(const Ipv4Header& ip, const std::uint8_t* p, std::size_t n, TimePs now);
  void handle_udp(const Ipv4Header& ip, const std::uint8_t* p, std::size_t n, TimePs now);
  void handle_tcp(const Ipv4Header& ip, const std::uint8_t* p, std::size_t n, TimePs now);
  void send_rst_for(const Ipv4Header& ip, const TcpHeader& h, std::size_t plen);
  void send_icmp(Ipv4 src, Ipv4 dst, const IcmpHeader& h, const std::uint8_t* data,
                 std::size_t len);

  /// Fills Ethernet + IPv4 headers into `f` (which holds room for them) and sends it from local
  /// address `src` (Ethernet source: mac_of(src)).
  /// `tos`: DSCP 0 and the ECN field (ECT(0) on new TCP data of ECN connections).
  void send_ipv4(Frame&& f, Ipv4 src, Ipv4 dst, std::uint8_t proto, bool df, std::size_t l4_len,
                 std::uint8_t tos = 0);
  void route_and_send(Frame&& f, Ipv4 src, Ipv4 dst);
  void learn(Ipv4 ip, const MacAddr& mac);
  void send_arp_request(Ipv4 src, Ipv4 ip);
  void emit_frame(Frame&& f);
  // Whether the frame being received has a good transport checksum: `verify()` computes it,
  // unless the frame's sender vouched for it (rx_checksums_valid_). Builds with assertions
  // compute it anyway and check that no vouched-for frame is bad.
  template <typename Verify>
  bool transport_checksum_ok(Verify verify) const {
#ifdef NDEBUG
    return rx_checksums_valid_ || verify();
#else
    const bool ok = verify();
    assert(ok || !rx_checksums_valid_);
    return ok;
#endif
  }
  // Whether to verify the IPv4 header checksum of a frame whose sender does (`vouched`) or does
  // not vouch for its checksums; builds with assertions always verify (and check the flag).
  static bool verify_ip_checksum(bool vouched) {
#ifdef NDEBUG
    return !vouched;
#else
    (void)vouched;
    return true;
#endif
  }
  bool is_martian(Ipv4 src) const;
  Frame new_frame(std::size_t len) const;
  // A frame of `len` bytes (padded) for a builder that writes the first `len` bytes itself; the
  // padding is zero.
  Frame new_frame_for_overwrite(std::size_t len) const;

  StackConfig cfg_;
  StackListener& listener_;
  StackStats stats_;
  std::map<Ipv4, std::uint64_t> acked_by_local_;
  Ipv4 netmask_ = 0;
  std::uint16_t ip_id_ = 0;
  std::uint64_t isn_counter_ = 0;
  TimePs now_ = 0;                   // latest time seen (for frames emitted from timers etc.)
  bool rx_checksums_valid_ = false;  // the frame being received: its sender vouches for it

  // connections: slot table + 4-tuple hash
  // Before the connections: they give their share back when they are destroyed.
  std::unique_ptr<BufferPool> pool_;
  std::unordered_set<ConnId> pool_waiters_;  // connections held back for want of pool space
  std::vector<std::unique_ptr<TcpConnection>> slots_;
  std::vector<std::uint16_t> slot_gen_;
  std::vector<std::uint32_t> free_slots_;
  std::size_t conn_count_ = 0;
  std::unordered_map<TupleKey, ConnId, TupleHash> by_tuple_;
  // Tuples in by_tuple_ whose local port is in the ephemeral range, per (local ip, remote ip,
  // remote port): connect() fails at once when the range is used up for a destination.
  std::unordered_map<TupleKey, std::uint32_t, TupleHash> ephemeral_used_;  // local port 0
  static TupleKey ephemeral_key(Ipv4 lip, Ipv4 rip, std::uint16_t rport) {
    return TupleKey{lip, rip, 0, rport};
  }
  void tuple_insert(const TupleKey& k, ConnId id);
  void tuple_erase(std::unordered_map<TupleKey, ConnId, TupleHash>::iterator it);
  /// by_tuple_'s entry for `k`, 0 if none. A bulk transfer's segments all belong to one or two
  /// connections, so the last answer is kept in front of the hash (cleared whenever by_tuple_
  /// changes).
  ConnId lookup_tuple(const TupleKey& k) const;
  mutable TupleKey last_key_;
  mutable ConnId last_id_ = 0;                                 // 0: nothing cached
  std::map<ConnId, Listener> listeners_;                       // ordered: deterministic iteration
  std::unordered_map<std::uint64_t, ConnId> listener_by_key_;  // listen_key(ip or 0, port)

  std::uint32_t next_listener_ = 1;
  std::uint32_t ephemeral_next_ = 0;

  // local addresses: primary (cfg_.ip / cfg_.mac) + cfg_.aliases
  std::unordered_map<Ipv4, MacAddr> local_mac_;      // every local ip -> its MAC
  std::unordered_set<std::uint64_t> local_mac_set_;  // mac_key of every local MAC

  // timers: lazy min-heap of (deadline, conn)
  std::vector<TimerEntry> heap_;

  // events
  std::vector<PendingEvent> events_;
  bool dispatching_ = false;

  // ARP
  std::unordered_map<Ipv4, MacAddr> arp_cache_;  // entries are updated, never erased
  // The entry of the last next hop (a node of arp_cache_: stays valid), or nullptr.
  const std::pair<const Ipv4, MacAddr>* last_arp_ = nullptr;
  std::vector<ArpPending> arp_pending_;  // few entries; ordered by creation

  // UDP
  std::vector<bool> udp_bound_;
};

}  // namespace vtoe::tcpip
