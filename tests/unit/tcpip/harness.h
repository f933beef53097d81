// Test harness: two Stacks joined by a simulated full-duplex link (a deterministic,
// time-ordered event queue with delay, bandwidth, drop-tail queue and per-frame hooks).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "models/tcpip/checksum.h"
#include "models/tcpip/headers.h"
#include "models/tcpip/stack.h"

namespace vtoe::tcpip::test {

constexpr TimePs kGbit = 8000;  // ps per byte at 1 Gbit/s

constexpr TimePs kNs = 1'000ull;
constexpr TimePs kUs = 1'000'000ull;
constexpr TimePs kMs = 1'000'000'000ull;
constexpr TimePs kSec = 1'000'000'000'000ull;

inline const Ipv4 kIpA = 0x0A000001;  // 10.0.0.1
inline const Ipv4 kIpB = 0x0A000002;  // 10.0.0.2

inline StackConfig config_a() {
  StackConfig c;
  c.mac = MacAddr::local(1);
  c.ip = kIpA;
  c.isn_seed = 11;
  return c;
}
inline StackConfig config_b() {
  StackConfig c;
  c.mac = MacAddr::local(2);
  c.ip = kIpB;
  c.isn_seed = 22;
  return c;
}

/// Deterministic payload pattern: byte at stream offset i.
inline std::uint8_t pattern(std::uint64_t i, std::uint64_t salt = 0) {
  std::uint64_t x = (i + salt * 0x1234567ull) * 0x9E3779B97F4A7C15ull;
  return static_cast<std::uint8_t>((x >> 56) ^ (i >> 12));
}

/// Marks an ECT(0)/ECT(1) IPv4 frame CE, as a router does (RFC 3168 section 5), and recomputes
/// the header checksum; false (frame unchanged) if it is not ECT.
inline bool mark_ce(Frame& f) {
  if (f.size() < 34 || load_be16(f.data() + 12) != kEtherTypeIpv4) return false;
  std::uint8_t* ip = f.data() + kEthHeaderLen;
  const std::uint8_t e = ip[1] & ecn::kMask;
  if (e != ecn::kEct0 && e != ecn::kEct1) return false;
  const std::size_t hl = static_cast<std::size_t>(ip[0] & 0x0f) * 4;
  ip[1] = static_cast<std::uint8_t>(ip[1] | ecn::kCe);
  ip[10] = ip[11] = 0;
  store_be16(ip + 10, internet_checksum(ip, hl));
  return true;
}

/// What the link does with one frame.
struct Verdict {
  bool ce = false;  ///< mark CE on the way (only ECT frames are marked, as by a router)
  bool drop = false;
  int copies = 1;          ///< > 1 duplicates the frame
  TimePs extra_delay = 0;  ///< reordering
};

class Net;

class Host : public StackListener {
 public:
  Host(Net& net, int side, const StackConfig& cfg) : net_(net), side_(side) {
    stack = std::make_unique<Stack>(cfg, *this);
  }
  void transmit(Frame&& f) override;
  void tcp_event(Event ev, const EventInfo& info) override {
    events.emplace_back(ev, info);
    if (on_event) on_event(ev, info);
  }
  void syn_received(const EventInfo& info) override {
    syns.push_back(info);
    syn_states.push_back(stack->state(info.conn));
  }
  void udp_received(std::uint16_t port, Ipv4 src, std::uint16_t sport, const std::uint8_t* d,
                    std::size_t n) override {
    udp.emplace_back(port, src, sport, std::vector<std::uint8_t>(d, d + n));
    if (on_udp) on_udp(port, src, sport, d, n);
  }
  void udp_received_at(Ipv4 local_ip, std::uint16_t port, Ipv4 src, std::uint16_t sport,
                       const std::uint8_t* d, std::size_t n) override {
    udp_local_ip.push_back(local_ip);
    StackListener::udp_received_at(local_ip, port, src, sport, d, n);  // -> udp_received
  }
  void tcp_payload(ConnId conn, ConnId listener, std::size_t offset, const std::uint8_t* data,
                   std::size_t len) override {
    if (on_payload) on_payload(conn, listener, offset, data, len);
  }
  void icmp_echo_reply(Ipv4 src, std::uint16_t id, std::uint16_t seq, const std::uint8_t* d,
                       std::size_t n) override {
    echo_replies.emplace_back(src, id, seq, std::vector<std::uint8_t>(d, d + n));
  }
  int count(Event ev, ConnId c = 0) const {
    int n = 0;
    for (auto& e : events)
      if (e.first == ev && (c == 0 || e.second.conn == c)) ++n;
    return n;
  }
  int terminal_events(ConnId c) const {
    int n = 0;
    for (auto& e : events)
      if (is_terminal(e.first) && e.second.conn == c) ++n;
    return n;
  }

  std::unique_ptr<Stack> stack;
  std::vector<std::pair<Event, EventInfo>> events;
  std::vector<EventInfo> syns;       ///< StackListener::syn_received (Stack::report_syns)
  std::vector<TcpState> syn_states;  ///< each reported connection's state then
  std::function<void(Event, const EventInfo&)> on_event;
  /// StackConfig::keep_rx_payload off: payload entering a receive buffer.
  std::function<void(ConnId, ConnId, std::size_t, const std::uint8_t*, std::size_t)> on_payload;
  std::function<void(std::uint16_t, Ipv4, std::uint16_t, const std::uint8_t*, std::size_t)> on_udp;
  std::vector<std::tuple<std::uint16_t, Ipv4, std::uint16_t, std::vector<std::uint8_t>>> udp;
  std::vector<Ipv4> udp_local_ip;  ///< destination address of each datagram in `udp`
  std::vector<std::tuple<Ipv4, std::uint16_t, std::uint16_t, std::vector<std::uint8_t>>>
      echo_replies;

 private:
  Net& net_;
  int side_;
};

struct LoggedFrame {
  TimePs t;
  int from;
  Frame f;
};

class Net {
 public:
  Net(const StackConfig& ca = config_a(), const StackConfig& cb = config_b())
      : a(*this, 0, ca), b(*this, 1, cb) {}

  Host& host(int side) { return side == 0 ? a : b; }

  /// Called by Host::transmit: frame leaves `from` now.
  void send(int from, Frame&& f) {
    const std::uint64_t idx = sent[from]++;
    log_hash(from, f);
    if (keep_log) log.push_back(LoggedFrame{now, from, f});
    if (on_send) on_send(from, f, idx);
    Verdict v;
    if (filter) v = filter(from, f, idx);
    if (v.drop || v.copies <= 0) {
      ++dropped[from];
      return;
    }
    TimePs start = std::max(now, busy_until[from]);
    if (queue_limit_bytes && ps_per_byte &&
        (start - now) / ps_per_byte + f.size() > queue_limit_bytes) {
      ++dropped[from];
      ++queue_drops[from];
      return;
    }
    // ECN: the filter's mark, or threshold marking of the sender queue (bytes waiting ahead).
    const bool over = ecn_mark_bytes && ps_per_byte && (start - now) / ps_per_byte > ecn_mark_bytes;
    if ((v.ce || over) && mark_ce(f)) ++ce_marked[from];
    const TimePs end = start + f.size() * ps_per_byte;
    busy_until[from] = end;
    // Copies arrive right behind the original (same time, next in queue order).
    for (int i = 1; i < v.copies; ++i) push(end + delay + v.extra_delay, 1 - from, f);
    push(end + delay + v.extra_delay, 1 - from, std::move(f));
  }
  /// Puts a frame on the wire towards `to`, arriving at `at` (hostile / crafted input).
  void inject(int to, Frame f, TimePs at) { push(at, to, std::move(f)); }

  /// One event (frame delivery or timer). False when nothing happens before `limit`.
  bool step(TimePs limit) {
    const TimePs tq = q_.empty() ? kNever : q_.begin()->first.first;
    const TimePs ta = a.stack->next_deadline(), tb = b.stack->next_deadline();
    const TimePs t = std::min({tq, ta, tb});
    if (t == kNever || t > limit) return false;
    now = std::max(now, t);
    if (tq == t) {
      auto node = q_.extract(q_.begin());
      const int to = node.mapped().first;
      Frame& f = node.mapped().second;
      ++delivered[to];
      if (on_deliver) on_deliver(to, f);
      host(to).stack->receive_frame(f.data(), f.size(), now);
    } else if (ta == t) {
      a.stack->poll(now);
    } else {
      b.stack->poll(now);
    }
    ++steps;
    return true;
  }
  void run_for(TimePs d) {
    const TimePs end = now + d;
    while (step(end)) {
    }
    now = std::max(now, end);
  }
  /// Runs until pred() holds (checked after every event) or simulated time passes `limit`.
  bool run_until(const std::function<bool()>& pred, TimePs limit) {
    const TimePs end = now + limit;
    while (!pred()) {
      if (!step(end)) return pred();
    }
    return true;
  }

  TimePs now = 0;
  TimePs delay = 50 * kUs;
  TimePs ps_per_byte = 0;             ///< serialization time; 8000 = 1 Gbit/s
  std::size_t queue_limit_bytes = 0;  ///< drop-tail limit of the sender queue (0 = none)
  std::size_t ecn_mark_bytes = 0;     ///< CE-mark ECT frames above this sender queue (0 = none)
  std::function<Verdict(int from, const Frame&, std::uint64_t idx)> filter;
  /// Sees every frame as its sender emitted it (before a drop, a CE mark or delivery).
  std::function<void(int from, const Frame&, std::uint64_t idx)> on_send;
  std::function<void(int to, const Frame&)> on_deliver;  ///< a frame arrives (before the stack)
  bool keep_log = false;
  std::vector<LoggedFrame> log;
  std::uint64_t hash = 1469598103934665603ull;
  std::uint64_t sent[2] = {0, 0}, delivered[2] = {0, 0}, dropped[2] = {0, 0},
                queue_drops[2] = {0, 0}, ce_marked[2] = {0, 0};
  std::uint64_t steps = 0;
  Host a, b;

 private:
  void push(TimePs t, int to, Frame f) {
    q_.emplace(std::make_pair(t, seq_++), std::make_pair(to, std::move(f)));
  }
  void log_hash(int from, const Frame& f) {
    auto mix = [this](std::uint64_t x) {
      for (int i = 0; i < 8; ++i) {
        hash ^= (x >> (8 * i)) & 0xff;
        hash *= 1099511628211ull;
      }
    };
    mix(now);
    mix(static_cast<std::uint64_t>(from));
    for (auto c : f) {
      hash ^= c;
      hash *= 1099511628211ull;
    }
  }
  std::map<std::pair<TimePs, std::uint64_t>, std::pair<int, Frame>> q_;
  std::uint64_t seq_ = 0;
  TimePs busy_until[2] = {0, 0};
};

inline void Host::transmit(Frame&& f) { net_.send(side_, std::move(f)); }

/// Decodes a frame; data segments of a TCP flow.
inline bool is_tcp_data(const Frame& f, FrameView* out = nullptr) {
  FrameView v;
  if (!decode_frame(f.data(), f.size(), v) || !v.is_tcp) return false;
  if (out) *out = v;
  return v.payload_len > 0;
}

/// A's first transmissions of data segments, numbered from 0 (retransmissions: -1).
struct FirstSends {
  std::map<std::uint32_t, std::uint64_t> seen;
  std::int64_t classify(const Frame& f) {
    FrameView v;
    if (!is_tcp_data(f, &v) || seen.count(v.tcp.seq)) return -1;
    const std::uint64_t n = seen.size();
    seen[v.tcp.seq] = n;
    return static_cast<std::int64_t>(n);
  }
};

/// Resolves ARP both ways so that TCP timing starts clean.
inline void warm_arp(Net& net) {
  net.a.stack->ping(kIpB, 1, 1, net.now);
  net.run_for(1 * kMs);
}

/// One side of a TCP transfer: sends `to_send` pattern bytes, checks received bytes.
struct Side {
  ConnId conn = 0;
  std::uint64_t to_send = 0, sent = 0, received = 0;
  std::uint64_t salt = 0;       ///< pattern of the bytes this side sends
  std::uint64_t peer_salt = 0;  ///< pattern of the bytes it receives
  bool close_after_send = false, close_called = false;
  bool reading = true;
  bool peer_closed = false;
  bool data_ok = true;
  int terminal = 0;
  Event terminal_ev = Event::Closed;
};

/// A → B transfer (optionally both ways) wired through the event callbacks.
class Transfer {
 public:
  Transfer(Net& net, std::uint64_t a_to_b, std::uint64_t b_to_a, std::uint16_t port = 5000)
      : net_(net), port_(port) {
    sa.to_send = a_to_b;
    sa.salt = 1;
    sa.peer_salt = 2;
    sb.to_send = b_to_a;
    sb.salt = 2;
    sb.peer_salt = 1;
    net.a.on_event = [this](Event ev, const EventInfo& i) { handle(net_.a, sa, ev, i); };
    net.b.on_event = [this](Event ev, const EventInfo& i) { handle(net_.b, sb, ev, i); };
  }
  void start() {
    listener = net_.b.stack->listen(port_, 16, net_.now);
    sa.conn = net_.a.stack->connect(kIpB, port_, 0, net_.now);
  }
  bool data_done() const {
    return sb.received == sa.to_send && sa.received == sb.to_send && sa.data_ok && sb.data_ok;
  }
  void pump(Host& h, Side& s) {
    std::uint8_t buf[16384];
    while (s.conn && s.sent < s.to_send) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, s.to_send - s.sent));
      for (std::size_t i = 0; i < n; ++i) buf[i] = pattern(s.sent + i, s.salt);
      const std::size_t k = h.stack->send(s.conn, buf, n, net_.now);
      s.sent += k;
      if (k < n) break;
    }
    if (s.conn && s.sent == s.to_send && s.close_after_send && !s.close_called) {
      s.close_called = true;
      h.stack->close(s.conn, net_.now);
    }
  }
  void drain(Host& h, Side& s) {
    if (!s.reading || !s.conn) return;
    std::uint8_t buf[16384];
    for (;;) {
      const std::size_t n = h.stack->recv(s.conn, buf, sizeof buf, net_.now);
      if (n == 0) break;
      for (std::size_t i = 0; i < n; ++i)
        if (buf[i] != pattern(s.received + i, s.peer_salt)) s.data_ok = false;
      s.received += n;
    }
  }
  Side sa, sb;
  ConnId listener = 0;

 private:
  void handle(Host& h, Side& s, Event ev, const EventInfo& i) {
    switch (ev) {
      case Event::Accepted:
        if (s.conn == 0) s.conn = i.conn;
        pump(h, s);
        break;
      case Event::Connected:
      case Event::SendAcked:
      case Event::Writable:
        pump(h, s);
        break;
      case Event::Readable:
        drain(h, s);
        break;
      case Event::PeerClosed:
        s.peer_closed = true;
        break;
      default:
        if (is_terminal(ev) && i.conn == s.conn) {
          ++s.terminal;
          s.terminal_ev = ev;
        }
        break;
    }
  }
  Net& net_;
  std::uint16_t port_;
};

}  // namespace vtoe::tcpip::test
