#include "tools/costar/costar_engine.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>

#include "models/core/stream_pattern.h"

namespace vtoe::netvp::costar {
namespace {

using Clock = std::chrono::steady_clock;
using vtoe::core::StreamPattern;

constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();
constexpr std::size_t kChunk = StreamPattern::kPeriod;  // largest single send(): one period
constexpr std::size_t kScratch = 256 * 1024;            // receive buffer per worker
constexpr std::size_t kEchoBuffer = 256 * 1024;         // per echoed connection
constexpr int kOpsPerEvent = 16;  // syscalls per event before yielding to others

// Two periods of the pattern back to back: bytes [off, off + n) of the stream, n <= one period, are
// the contiguous run table + off % period, so a send() writes straight from it and a compare is one
// memcmp.
const std::uint8_t* pattern2() {
  static const std::vector<std::uint8_t> table = [] {
    std::vector<std::uint8_t> t(2 * StreamPattern::kPeriod);
    StreamPattern::fill(0, t.data(), t.size());
    return t;
  }();
  return table.data();
}

std::string errno_text(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

// Stop requests (signals, --once reached) go through one eventfd that every worker's epoll watches,
// level-triggered and never read, so a single write wakes them all.
std::atomic<int> g_stop_fd{-1};
std::atomic<bool> g_stop{false};

int stop_fd() {
  int fd = g_stop_fd.load();
  if (fd < 0) {
    int made = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (g_stop_fd.compare_exchange_strong(fd, made)) return made;
    close(made);
  }
  return g_stop_fd.load();
}

void reset_stop() {
  std::uint64_t v;
  while (read(stop_fd(), &v, sizeof v) > 0) {
  }
  g_stop.store(false);
}

struct Role {
  bool client;
  bool sends_pattern;  // Send, Echo (client), Source
  bool verifies;       // Recv, Echo (client), Sink, Reflect
  bool reflects;       // Reflect
};

Role role_of(Mode m) {
  switch (m) {
    case Mode::Send:
      return {true, true, false, false};
    case Mode::Recv:
      return {true, false, true, false};
    case Mode::Echo:
      return {true, true, true, false};
    case Mode::Sink:
      return {false, false, true, false};
    case Mode::Source:
      return {false, true, false, false};
    case Mode::Reflect:
      return {false, false, true, true};
  }
  return {true, false, false, false};
}

enum class Kind { Conn, Listener, Stop };

struct Handle {
  Kind kind;
};

struct Conn : Handle {
  Conn() : Handle{Kind::Conn} {}
  int fd = -1;
  Result r;
  bool connecting = false;
  bool established = false;
  bool wr_closed = false;  // we sent FIN
  bool peer_eof = false;   // we read FIN
  bool done = false;
  std::uint64_t send_limit = kUnlimited;
  std::uint64_t recv_limit = kUnlimited;  // client Recv with --bytes: stop reading there
  std::optional<Clock::time_point> deadline;
  Clock::time_point established_at, last_progress;
  std::uint32_t interest = 0;
  bool registered = false;
  std::string mismatch_text;
  std::vector<std::uint8_t> echo;  // Reflect: bytes read, not yet written back
  std::size_t echo_head = 0, echo_tail = 0;
};

struct Listener : Handle {
  Listener() : Handle{Kind::Listener} {}
  int fd = -1;
};

std::string local_text(int fd) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  return endpoint_text(reinterpret_cast<sockaddr*>(&a), len);
}

// Shared by the workers of one run.
struct Shared {
  Mode mode;
  Role role;
  std::optional<std::uint64_t> bytes;
  std::optional<double> duration;
  double timeout;
  Clock::time_point t0;
  // Server only.
  std::uint64_t once = 0;
  std::atomic<std::uint64_t> next_id{0};
  std::atomic<std::uint64_t> finished{0};
  std::mutex report_mu;
  std::function<void(const Result&)> on_finish;
};

double since(const Shared& s, Clock::time_point t) {
  return std::chrono::duration<double>(t - s.t0).count();
}

class Worker {
 public:
  explicit Worker(Shared& s) : s_(s), scratch_(kScratch) {
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = &stop_handle_;
    epoll_ctl(ep_, EPOLL_CTL_ADD, stop_fd(), &ev);
  }
  ~Worker() {
    for (auto& c : conns_)
      if (c->fd >= 0) close(c->fd);
    if (ep_ >= 0) close(ep_);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Client: opens one connection (non-blocking connect).
  void add_client(std::uint64_t id, const Endpoint& target,
                  const std::optional<Endpoint>& bind_to) {
    auto c = std::make_unique<Conn>();
    Conn& k = *c;
    conns_.push_back(std::move(c));
    ++active_;
    k.r.id = id;
    k.r.remote = target.text;
    const Clock::time_point now = Clock::now();
    k.r.start_s = since(s_, now);
    k.last_progress = now;
    k.fd = socket(target.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (k.fd < 0) return finish(k, errno_text("socket", errno));
    if (bind_to) {
      if (bind_to->addr.ss_family != target.addr.ss_family)
        return finish(k, "bind: --bind " + bind_to->text + " and target " + target.text +
                             " are different address families");
      const int one = 1;
      setsockopt(k.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (bind(k.fd, reinterpret_cast<const sockaddr*>(&bind_to->addr), bind_to->len) != 0)
        return finish(k, errno_text("bind", errno));
    }
    if (connect(k.fd, reinterpret_cast<const sockaddr*>(&target.addr), target.len) == 0) {
      on_connected(k);
    } else if (errno == EINPROGRESS) {
      k.connecting = true;
    } else {
      return finish(k, errno_text("connect", errno));
    }
    k.r.local = local_text(k.fd);
    update_interest(k);
  }

  void add_listener(Listener* l) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.ptr = l;
    epoll_ctl(ep_, EPOLL_CTL_ADD, l->fd, &ev);
  }

  // Runs until every connection of a client is done, or until a stop request.
  void run() {
    std::array<epoll_event, 64> events;
    while (true) {
      if (s_.role.client && active_ == 0) break;
      if (g_stop.load()) break;
      const int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), wait_ms());
      if (n < 0 && errno != EINTR) break;
      for (int i = 0; i < n; ++i) {
        auto* h = static_cast<Handle*>(events[i].data.ptr);
        if (h->kind == Kind::Stop) {
          g_stop.store(true);
        } else if (h->kind == Kind::Listener) {
          accept_from(*static_cast<Listener*>(h));
        } else {
          handle(*static_cast<Conn*>(h), events[i].events);
        }
      }
      const Clock::time_point now = Clock::now();
      if (now >= next_check_) {
        check_clocks();
        next_check_ = now + std::chrono::milliseconds(wait_ms());
      }
      if (!s_.role.client && finished_since_reap_) reap();
    }
    for (auto& c : conns_)
      if (!c->done) finish(*c, "interrupted before the connection finished");
    if (!s_.role.client) reap();
  }

  std::vector<Result> take_results() {
    std::vector<Result> out;
    for (auto& c : conns_) out.push_back(std::move(c->r));
    conns_.clear();
    for (auto& r : kept_) out.push_back(std::move(r));
    kept_.clear();
    return out;
  }

 private:
  // Deadlines (--duration) and timeouts are checked every 20 ms with --duration, else every 100 ms;
  // senders also stop exactly at their deadline in on_writable().
  int wait_ms() const { return s_.duration ? 20 : 100; }

  void accept_from(Listener& l) {
    for (int i = 0; i < kOpsPerEvent && !g_stop.load(); ++i) {
      sockaddr_storage a{};
      socklen_t len = sizeof a;
      const int fd =
          accept4(l.fd, reinterpret_cast<sockaddr*>(&a), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN: another worker took it, or the backlog is empty
      const std::uint64_t id = s_.next_id.fetch_add(1);
      if (s_.once != 0 && id >= s_.once) {  // more connections than --once asked for
        close(fd);
        continue;
      }
      auto c = std::make_unique<Conn>();
      Conn& k = *c;
      conns_.push_back(std::move(c));
      ++active_;
      k.fd = fd;
      k.r.id = id;
      k.r.remote = endpoint_text(reinterpret_cast<sockaddr*>(&a), len);
      k.r.local = local_text(fd);
      k.r.start_s = since(s_, Clock::now());
      if (s_.role.reflects) k.echo.resize(kEchoBuffer);
      on_connected(k);
      update_interest(k);
    }
  }

  void on_connected(Conn& c) {
    const Clock::time_point now = Clock::now();
    c.connecting = false;
    c.established = true;
    c.established_at = now;
    c.last_progress = now;
    if (s_.role.sends_pattern && s_.bytes) c.send_limit = *s_.bytes;
    if (s_.role.client && s_.mode == Mode::Recv && s_.bytes) c.recv_limit = *s_.bytes;
    if (s_.role.client && s_.duration)
      c.deadline = now + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(*s_.duration));
  }

  bool deadline_passed(const Conn& c, Clock::time_point now) const {
    return c.deadline && now >= *c.deadline;
  }

  void update_interest(Conn& c) {
    if (c.done) return;
    std::uint32_t want = 0;
    if (c.connecting) {
      want = EPOLLOUT;
    } else {
      if (s_.role.sends_pattern && !c.wr_closed && c.r.bytes_sent < c.send_limit) want |= EPOLLOUT;
      if (s_.role.reflects && c.echo_head < c.echo_tail) want |= EPOLLOUT;
      const bool echo_full = s_.role.reflects && c.echo_tail == c.echo.size();
      if (!c.peer_eof && !echo_full) want |= EPOLLIN;
    }
    if (c.registered && want == c.interest) return;
    epoll_event ev{};
    ev.events = want;
    ev.data.ptr = &c;
    epoll_ctl(ep_, c.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c.fd, &ev);
    c.registered = true;
    c.interest = want;
  }

  void handle(Conn& c, std::uint32_t ev) {
    if (c.done) return;
    if (c.connecting) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) return finish(c, errno_text("connect", err));
      if (!(ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
      on_connected(c);
      c.r.local = local_text(c.fd);
      update_interest(c);
      return;
    }
    if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(c);
    if (!c.done && (ev & (EPOLLOUT | EPOLLERR))) on_writable(c);
    if (!c.done) update_interest(c);
  }

  void verify(Conn& c, const std::uint8_t* data, std::size_t n) {
    if (!s_.role.verifies || c.r.first_mismatch) return;
    const std::uint8_t* t = pattern2();
    std::uint64_t off = c.r.bytes_received;
    while (n > 0) {
      const std::size_t pos = off % StreamPattern::kPeriod;
      const std::size_t piece = std::min(n, StreamPattern::kPeriod);
      if (std::memcmp(data, t + pos, piece) != 0) {
        std::size_t i = 0;
        while (data[i] == t[pos + i]) ++i;
        c.r.first_mismatch = off + i;
        char detail[64];
        std::snprintf(detail, sizeof detail, " (expected 0x%02x, got 0x%02x)", t[pos + i], data[i]);
        c.mismatch_text = "pattern mismatch at stream offset " + std::to_string(off + i) + detail;
        return;
      }
      data += piece;
      off += piece;
      n -= piece;
    }
  }

  void on_readable(Conn& c) {
    for (int i = 0; i < kOpsPerEvent && !c.done && !c.peer_eof; ++i) {
      std::uint8_t* dst;
      std::size_t room;
      if (s_.role.reflects) {
        if (c.echo_head == c.echo_tail) c.echo_head = c.echo_tail = 0;
        dst = c.echo.data() + c.echo_tail;
        room = c.echo.size() - c.echo_tail;
        if (room == 0) return;
      } else {
        dst = scratch_.data();
        room = scratch_.size();
        if (c.recv_limit != kUnlimited)
          room = std::min<std::uint64_t>(room, c.recv_limit - c.r.bytes_received);
      }
      const ssize_t n = recv(c.fd, dst, room, 0);
      if (n > 0) {
        verify(c, dst, static_cast<std::size_t>(n));
        c.r.bytes_received += static_cast<std::uint64_t>(n);
        c.last_progress = Clock::now();
        if (s_.role.reflects) c.echo_tail += static_cast<std::size_t>(n);
        if (s_.mode == Mode::Echo && c.r.bytes_received > c.r.bytes_sent)
          return finish(c, "the peer returned more bytes than were sent");
        if (c.recv_limit != kUnlimited && c.r.bytes_received >= c.recv_limit) return finish(c, "");
      } else if (n == 0) {
        c.peer_eof = true;
        c.last_progress = Clock::now();
        on_peer_eof(c);
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return;
      } else if (errno == EINTR) {
        continue;
      } else {
        const int err = errno;
        if (s_.mode == Mode::Source && !s_.bytes && err == ECONNRESET) return finish(c, "");
        return finish(c, errno_text("recv", err));
      }
    }
  }

  void on_peer_eof(Conn& c) {
    const std::string got = std::to_string(c.r.bytes_received);
    switch (s_.mode) {
      case Mode::Send:
        if (c.wr_closed) finish(c, "");
        // else: keep sending; a peer may half-close early. Done once we have sent everything too.
        return;
      case Mode::Recv:
        if (c.recv_limit != kUnlimited && c.r.bytes_received < c.recv_limit)
          return finish(
              c, "the peer closed after " + got + " of " + std::to_string(c.recv_limit) + " bytes");
        return finish(c, "");
      case Mode::Echo:
        if (!c.wr_closed)
          return finish(c, "the peer closed after echoing " + got + " bytes, while still sending");
        if (c.r.bytes_received != c.r.bytes_sent)
          return finish(
              c, "the peer echoed " + got + " of " + std::to_string(c.r.bytes_sent) + " bytes");
        return finish(c, "");
      case Mode::Sink:
        if (s_.bytes && c.r.bytes_received != *s_.bytes)
          return finish(c, "received " + got + " bytes, expected " + std::to_string(*s_.bytes));
        return finish(c, "");
      case Mode::Source:
        if (s_.bytes && c.r.bytes_sent < *s_.bytes)
          return finish(c, "the client closed after " + std::to_string(c.r.bytes_sent) + " of " +
                               std::to_string(*s_.bytes) + " bytes were sent");
        return finish(c, "");
      case Mode::Reflect:
        if (c.echo_head == c.echo_tail) {
          shutdown(c.fd, SHUT_WR);
          c.wr_closed = true;
          finish(c, "");
        }
        return;  // else finish once the rest is written back
    }
  }

  void close_write(Conn& c) {
    if (c.wr_closed) return;
    c.wr_closed = true;
    if (shutdown(c.fd, SHUT_WR) != 0) return finish(c, errno_text("shutdown", errno));
    if (c.peer_eof && s_.mode != Mode::Echo) finish(c, "");
    if (c.peer_eof && s_.mode == Mode::Echo) on_peer_eof(c);
  }

  void on_writable(Conn& c) {
    if (s_.role.reflects) {
      for (int i = 0; i < kOpsPerEvent && c.echo_head < c.echo_tail; ++i) {
        const ssize_t n =
            send(c.fd, c.echo.data() + c.echo_head, c.echo_tail - c.echo_head, MSG_NOSIGNAL);
        if (n > 0) {
          c.echo_head += static_cast<std::size_t>(n);
          c.r.bytes_sent += static_cast<std::uint64_t>(n);
          c.last_progress = Clock::now();
        } else if (n < 0 && errno == EINTR) {
          continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
          return;
        } else {
          return finish(c, errno_text("send", errno));
        }
      }
      if (c.echo_head == c.echo_tail) {
        c.echo_head = c.echo_tail = 0;
        if (c.peer_eof) on_peer_eof(c);
      }
      return;
    }
    if (!s_.role.sends_pattern || c.wr_closed) return;
    const std::uint8_t* t = pattern2();
    for (int i = 0; i < kOpsPerEvent && c.r.bytes_sent < c.send_limit; ++i) {
      if (deadline_passed(c, Clock::now())) break;
      const std::size_t pos = c.r.bytes_sent % StreamPattern::kPeriod;
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, c.send_limit - c.r.bytes_sent));
      const ssize_t w = send(c.fd, t + pos, n, MSG_NOSIGNAL);
      if (w > 0) {
        c.r.bytes_sent += static_cast<std::uint64_t>(w);
        c.last_progress = Clock::now();
      } else if (w < 0 && errno == EINTR) {
        continue;
      } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        break;
      } else {
        const int err = errno;
        // An unlimited source ends when the client goes away.
        if (s_.mode == Mode::Source && !s_.bytes && (err == EPIPE || err == ECONNRESET))
          return finish(c, "");
        return finish(c, errno_text("send", err));
      }
    }
    if (c.r.bytes_sent >= c.send_limit || deadline_passed(c, Clock::now())) close_write(c);
  }

  void check_clocks() {
    const Clock::time_point now = Clock::now();
    for (auto& p : conns_) {
      Conn& c = *p;
      if (c.done) continue;
      if (c.established && deadline_passed(c, now)) {
        if (s_.mode == Mode::Recv) {
          finish(c, "");
          continue;
        }
        if (s_.role.sends_pattern && !c.wr_closed) {
          close_write(c);
          if (!c.done) update_interest(c);
          if (c.done) continue;
        }
      }
      if (s_.timeout > 0 &&
          std::chrono::duration<double>(now - c.last_progress).count() >= s_.timeout) {
        char text[160];
        const char* phase = c.connecting                 ? "connecting"
                            : c.wr_closed && !c.peer_eof ? "waiting for the peer to close"
                                                         : "transferring";
        std::snprintf(text, sizeof text, "timeout: no progress for %g s while %s", s_.timeout,
                      phase);
        finish(c, text);
      }
    }
  }

  void finish(Conn& c, const std::string& error) {
    if (c.done) return;
    c.done = true;
    const Clock::time_point now = Clock::now();
    if (c.fd >= 0) {
      if (c.r.local.empty()) c.r.local = local_text(c.fd);
      close(c.fd);  // also removes it from the epoll set
      c.fd = -1;
    }
    --active_;
    if (c.established) {
      c.r.seconds = std::chrono::duration<double>(now - c.established_at).count();
    }
    c.r.end_s = since(s_, now);
    finished_since_reap_ = true;
    c.r.error = error;
    if (c.r.error.empty() && c.r.first_mismatch) c.r.error = c.mismatch_text;
    c.r.verified = c.r.error.empty() && !c.r.first_mismatch;
    if (!s_.role.client) {
      {
        std::lock_guard<std::mutex> lock(s_.report_mu);
        if (s_.on_finish) s_.on_finish(c.r);
      }
      if (s_.once != 0 && s_.finished.fetch_add(1) + 1 >= s_.once) request_stop();
    }
  }

  // Server: moves finished connections' results out of the live set.
  void reap() {
    auto it = std::remove_if(conns_.begin(), conns_.end(), [this](std::unique_ptr<Conn>& c) {
      if (!c->done) return false;
      kept_.push_back(std::move(c->r));
      return true;
    });
    conns_.erase(it, conns_.end());
    finished_since_reap_ = false;
  }

  Shared& s_;
  int ep_ = -1;
  Handle stop_handle_{Kind::Stop};
  std::vector<std::uint8_t> scratch_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<Result> kept_;
  std::size_t active_ = 0;  // connections not yet finished
  bool finished_since_reap_ = false;
  Clock::time_point next_check_{};
};

void sort_by_id(std::vector<Result>& rs) {
  std::sort(rs.begin(), rs.end(), [](const Result& a, const Result& b) { return a.id < b.id; });
}

}  // namespace

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::Send:
      return "send";
    case Mode::Recv:
      return "recv";
    case Mode::Echo:
      return "echo";
    case Mode::Sink:
      return "sink";
    case Mode::Source:
      return "source";
    case Mode::Reflect:
      return "echo";
  }
  return "?";
}

std::string endpoint_text(const sockaddr* addr, socklen_t len) {
  char host[INET6_ADDRSTRLEN] = "";
  if (addr->sa_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    return std::string(host) + ":" + std::to_string(ntohs(a->sin_port));
  }
  if (addr->sa_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(a->sin6_port));
  }
  return "?";
}

std::optional<Endpoint> parse_endpoint(const std::string& text, bool allow_no_port,
                                       std::string* error) {
  std::string host, port;
  if (!text.empty() && text[0] == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos) {
      *error = "\"" + text + "\": missing ']' after an IPv6 address";
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    const std::string rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') {
        *error = "\"" + text + "\": expected ':PORT' after ']'";
        return std::nullopt;
      }
      port = rest.substr(1);
    }
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) {
      host = text;
    } else {
      host = text.substr(0, colon);
      port = text.substr(colon + 1);
    }
  }
  if (port.empty() && !allow_no_port) {
    *error = "\"" + text + "\": expected IP:PORT, e.g. 10.0.0.11:5001";
    return std::nullopt;
  }
  unsigned long p = 0;
  if (!port.empty()) {
    char* end = nullptr;
    errno = 0;
    p = std::strtoul(port.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || p > 65535 || port[0] == '-' || port[0] == '+') {
      *error = "\"" + text + "\": port must be a number from 0 to 65535";
      return std::nullopt;
    }
  }
  Endpoint e;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&e.addr);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&e.addr);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(p));
    e.len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(p));
    e.len = sizeof(sockaddr_in6);
  } else {
    *error = "\"" + text + "\": \"" + host + "\" is not an IPv4 or IPv6 address";
    return std::nullopt;
  }
  e.text = endpoint_text(reinterpret_cast<sockaddr*>(&e.addr), e.len);
  return e;
}

Totals totals(const std::vector<Result>& results) {
  Totals t;
  double first = 0, last = 0;
  for (const Result& r : results) {
    if (t.connections == 0 || r.start_s < first) first = r.start_s;
    if (t.connections == 0 || r.end_s > last) last = r.end_s;
    ++t.connections;
    t.bytes += r.bytes();
    if (!r.verified) ++t.failed;
  }
  t.seconds = t.connections ? last - first : 0;
  t.mbps = t.seconds > 0 ? static_cast<double>(t.bytes) * 8.0 / t.seconds / 1e6 : 0.0;
  return t;
}

void request_stop() {
  g_stop.store(true);
  const int fd = g_stop_fd.load();
  if (fd >= 0) {
    const std::uint64_t one = 1;
    ssize_t ignored = write(fd, &one, sizeof one);
    (void)ignored;
  }
}

std::vector<Result> run_client(const ClientOptions& o) {
  Shared s;
  s.mode = o.mode;
  s.role = role_of(o.mode);
  s.bytes = o.bytes;
  s.duration = o.duration;
  s.timeout = o.timeout;
  s.t0 = Clock::now();
  reset_stop();
  pattern2();  // build the table before the threads race for it

  const unsigned nthreads = std::max(1u, std::min(o.threads, o.connections));
  std::vector<std::unique_ptr<Worker>> workers;
  for (unsigned t = 0; t < nthreads; ++t) workers.push_back(std::make_unique<Worker>(s));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < nthreads; ++t) {
    threads.emplace_back([&, t] {
      for (unsigned i = t; i < o.connections; i += nthreads)
        workers[t]->add_client(i, o.targets[i % o.targets.size()], o.bind);
      workers[t]->run();
    });
  }
  for (auto& th : threads) th.join();
  std::vector<Result> all;
  for (auto& w : workers)
    for (auto& r : w->take_results()) all.push_back(std::move(r));
  sort_by_id(all);
  return all;
}

bool run_server(const ServerOptions& o, std::vector<Result>* results, std::string* error) {
  Shared s;
  s.mode = o.mode;
  s.role = role_of(o.mode);
  s.bytes = o.bytes;
  s.timeout = o.timeout;
  s.once = o.once;
  s.on_finish = o.on_finish;
  s.t0 = Clock::now();
  reset_stop();
  pattern2();

  std::vector<std::unique_ptr<Listener>> listeners;
  for (const Endpoint& e : o.listen) {
    auto l = std::make_unique<Listener>();
    l->fd = socket(e.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    if (l->fd < 0 || setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(l->fd, reinterpret_cast<const sockaddr*>(&e.addr), e.len) != 0 ||
        listen(l->fd, 1024) != 0) {
      *error = errno_text(("listen on " + e.text).c_str(), errno);
      if (l->fd >= 0) close(l->fd);
      for (auto& x : listeners) close(x->fd);
      return false;
    }
    if (o.on_listen) o.on_listen(local_text(l->fd));
    listeners.push_back(std::move(l));
  }

  const unsigned nthreads = std::max(1u, o.threads);
  std::vector<std::unique_ptr<Worker>> workers;
  for (unsigned t = 0; t < nthreads; ++t) {
    workers.push_back(std::make_unique<Worker>(s));
    for (auto& l : listeners) workers.back()->add_listener(l.get());
  }
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < nthreads; ++t) threads.emplace_back([&, t] { workers[t]->run(); });
  for (auto& th : threads) th.join();
  for (auto& l : listeners) close(l->fd);
  results->clear();
  for (auto& w : workers)
    for (auto& r : w->take_results()) results->push_back(std::move(r));
  sort_by_id(*results);
  return true;
}

}  // namespace vtoe::netvp::costar
