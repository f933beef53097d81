// libFuzzer harness, stateful: two protocol engines complete a handshake, then the input drives
// a sequence of operations — application sends, reads and closes on either side, frames
// delivered, dropped, reordered, duplicated or mutated in flight, foreign frames injected, time
// advanced. Invariant checked: unless a frame was mutated or injected, what B reads is exactly
// the stream A wrote (and the other way round). No crash, leak, hang or endless ACK exchange.
// Both ends run ECN (A asks, B agrees) and every fifth frame delivered is marked CE when it is
// ECT, as by a router: a mark changes windows and flags, never the stream.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "models/tcpip/checksum.h"
#include "models/tcpip/headers.h"
#include "models/tcpip/stack.h"

using namespace vtoe::tcpip;

namespace {

constexpr TimePs kUs = 1'000'000ull;
constexpr TimePs kMs = 1'000'000'000ull;

std::uint8_t pattern(std::uint64_t i) { return static_cast<std::uint8_t>((i * 131) ^ (i >> 9)); }

// The stream's bytes, built once: pattern() repeats every 2^17 bytes, and a send (at most
// 255 * 64 bytes) or a read (8 KiB) fits in the margin past one period. Writing and checking
// with memcpy and memcmp instead of a loop per byte: the harness is instrumented, and the
// coverage hooks of those loops were a fifth of its time.
constexpr std::size_t kPeriod = std::size_t{1} << 17;
const std::vector<std::uint8_t>& stream() {
  static const std::vector<std::uint8_t> bytes = [] {
    std::vector<std::uint8_t> b(kPeriod + 32 * 1024);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = pattern(i);
    return b;
  }();
  return bytes;
}
const std::uint8_t* stream_at(std::uint64_t offset) { return stream().data() + offset % kPeriod; }

struct End : StackListener {
  std::deque<Frame>* out = nullptr;
  ConnId conn = 0;
  bool accepted = false;
  void transmit(Frame&& f) override { out->push_back(std::move(f)); }
  void tcp_event(Event ev, const EventInfo& info) override {
    if (ev == Event::Accepted) {
      conn = info.conn;
      accepted = true;
    }
  }
};

struct Input {
  const std::uint8_t* p;
  std::size_t n, i = 0;
  bool more() const { return i < n; }
  std::uint8_t next() { return i < n ? p[i++] : 0; }
};

// CE on an ECT IPv4 frame, header checksum recomputed (RFC 3168 section 5).
void mark_ce(Frame& f) {
  if (f.size() < 34 || load_be16(f.data() + 12) != kEtherTypeIpv4) return;
  std::uint8_t* ip = f.data() + kEthHeaderLen;
  const std::size_t hl = static_cast<std::size_t>(ip[0] & 0x0f) * 4;
  const std::uint8_t e = ip[1] & ecn::kMask;
  if ((e != ecn::kEct0 && e != ecn::kEct1) || hl < 20 || f.size() < kEthHeaderLen + hl) return;
  ip[1] = static_cast<std::uint8_t>(ip[1] | ecn::kCe);
  ip[10] = ip[11] = 0;
  store_be16(ip + 10, internet_checksum(ip, hl));
}

struct World {
  std::deque<Frame> a2b, b2a;
  End ea, eb;
  Stack a, b;
  TimePs now = 0;
  std::uint64_t frames = 0;
  World(const StackConfig& ca, const StackConfig& cb) : a(ca, (ea.out = &a2b, ea)), b(cb, (eb.out = &b2a, eb)) {}
  void deliver(std::deque<Frame>& q, Stack& to) {
    if (q.empty()) return;
    Frame f = std::move(q.front());
    q.pop_front();
    if (++frames % 5 == 0) mark_ce(f);
    to.receive_frame(f.data(), f.size(), now);
  }
  void advance(TimePs d) {
    const TimePs end = now + d;
    for (;;) {
      const TimePs t = std::min(a.next_deadline(), b.next_deadline());
      if (t > end) break;
      now = std::max(now, t);
      a.poll(now);
      b.poll(now);
    }
    now = end;
  }
};

StackConfig config(int side) {
  StackConfig c;
  c.mac = MacAddr::local(side + 1);
  c.ip = 0x0A000001 + side;
  c.isn_seed = 11 + 11 * side;
  c.send_buffer = c.recv_buffer = 64 * 1024;
  c.ecn = side == 0 ? EcnMode::On : EcnMode::Passive;
  // One end of each congestion-control family: the loss-based one (PRR, ECN reductions) and
  // BBR (rate samples, pacing timers).
  c.congestion = side == 0 ? CongestionControl::NewReno : CongestionControl::Bbr;
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  World w(config(0), config(1));
  w.b.listen(80, 4, 0);
  const ConnId ca = w.a.connect(0x0A000002, 80, 0, 0);
  for (int k = 0; k < 20 && !w.eb.accepted; ++k) {  // ARP and the handshake, no loss
    w.deliver(w.a2b, w.b);
    w.deliver(w.b2a, w.a);
    w.advance(10 * kUs);
  }
  if (!w.eb.accepted) abort();  // the harness itself is broken
  const ConnId cb = w.eb.conn;
  std::uint64_t sent_ab = 0, read_ab = 0, sent_ba = 0, read_ba = 0;
  bool tainted = false;
  std::vector<std::uint8_t> buf(8192);
  auto check_read = [&](Stack& s, ConnId c, std::uint64_t& read, std::uint64_t sent) {
    const std::size_t got = s.recv(c, buf.data(), buf.size(), w.now);
    if (!tainted && got && std::memcmp(buf.data(), stream_at(read), got) != 0)
      abort();  // a byte that was never sent, or out of place
    read += got;
    if (!tainted && read > sent) abort();
  };
  auto send = [&](Stack& s, ConnId c, std::uint64_t& sent, std::size_t want) {
    sent += s.send(c, stream_at(sent), want, w.now);
  };
  Input in{data, size};
  // At most kMaxOps operations: longer inputs slowed the harness to 330/s (docs/fuzzing.md) and
  // mostly repeat what a shorter one does; scripts/fuzz.sh also caps the input length.
  constexpr int kMaxOps = 512;
  int ops = 0;
  while (in.more() && ops++ < kMaxOps) {
    switch (in.next() % 12) {
      case 0: send(w.a, ca, sent_ab, in.next() * 64u); break;
      case 1: check_read(w.b, cb, read_ab, sent_ab); break;
      case 2: w.deliver(w.a2b, w.b); break;
      case 3: w.deliver(w.b2a, w.a); break;
      case 4: if (!w.a2b.empty()) w.a2b.pop_front(); break;  // loss
      case 5: if (w.a2b.size() > 1) std::swap(w.a2b[0], w.a2b[1]); break;  // reordering
      case 6: if (!w.a2b.empty()) w.a2b.push_back(w.a2b.front()); break;  // duplicate
      case 7: {  // corruption in flight (checksums will usually catch it)
        if (w.b2a.empty()) break;
        Frame& f = w.b2a.front();
        f[in.next() % f.size()] ^= static_cast<std::uint8_t>(1 + in.next() % 255);
        tainted = true;
        break;
      }
      case 8: w.advance((1 + in.next()) * kMs); break;
      case 9: send(w.b, cb, sent_ba, in.next() * 32u); check_read(w.a, ca, read_ba, sent_ba); break;
      case 10: (in.next() & 1) ? w.a.close(ca, w.now) : w.b.close(cb, w.now); break;
      default: {  // a foreign frame into either end
        Frame f(in.next() % 128);
        for (auto& byte : f) byte = in.next();
        (in.next() & 1 ? w.a : w.b).receive_frame(f.data(), f.size(), w.now);
        tainted = true;
        break;
      }
    }
  }
  // Drain: everything in flight arrives, timers run out. An ACK loop would never end; the bound
  // on frames turns one into a crash the fuzzer reports.
  for (int k = 0; k < 100000 && (!w.a2b.empty() || !w.b2a.empty() ||
                                 std::min(w.a.next_deadline(), w.b.next_deadline()) <
                                     w.now + 300'000 * kMs);
       ++k) {
    if (!w.a2b.empty() || !w.b2a.empty()) {
      w.deliver(w.a2b, w.b);
      w.deliver(w.b2a, w.a);
      w.advance(50 * kUs);
    } else {
      w.advance(std::min(w.a.next_deadline(), w.b.next_deadline()) - w.now);
    }
    check_read(w.b, cb, read_ab, sent_ab);
    check_read(w.a, ca, read_ba, sent_ba);
    if (w.frames > 200000) abort();  // an endless exchange
  }
  return 0;
}
