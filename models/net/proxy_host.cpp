#include "models/net/proxy_host.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vtoe::net {

namespace {

EthernetMacParams mac_params(const tcpip::StackConfig& stack, double rate, std::size_t queue) {
  EthernetMacParams mp;
  mp.rate_bps = rate;
  mp.tx_queue_frames = queue;
  mp.address = stack.mac.b;
  mp.max_frame = stack.mtu + 18;
  return mp;
}

}  // namespace

void ProxyHost::Side::receive_frame(Frame&& frame) {
  stack->receive_frame(frame, core::now_ps());
  rearm();
}

void ProxyHost::Side::rearm() {
  const core::TimePs next = stack->next_deadline();
  if (next == timer_at) return;
  timer_at = next;
  timer.cancel();
  if (next == UINT64_MAX) return;
  const core::TimePs now = core::now_ps();
  timer.notify(core::ps(next > now ? next - now : 0));
}

ProxyHost::ProxyHost(const sc_core::sc_module_name& name, const ProxyHostParams& params)
    : core::Module(name),
      params_(params),
      buf_(64 * 1024),
      spliced_(stats_.counter("spliced", "client connections spliced to a downstream one")),
      bytes_up_(stats_.counter("bytes_up", "bytes moved from the server side to the client side")),
      bytes_down_(
          stats_.counter("bytes_down", "bytes moved from the client side to the server side")),
      failed_(stats_.counter("failed", "pairs ended by a reset, refusal or time-out")) {
  for (Side* s : {&up_, &down_}) {
    const bool up = s == &up_;
    s->host = this;
    s->upstream = up;
    s->mac = std::make_unique<EthernetMac>(
        up ? "up" : "down",
        mac_params(up ? params_.up : params_.down, up ? params_.up_rate_bps : params_.down_rate_bps,
                   params_.tx_queue_frames));
    s->mac->upper.bind(*s);
    s->stack = std::make_unique<tcpip::Stack>(up ? params_.up : params_.down, *s);
  }
  listener_ = up_.stack->listen(params_.listen_port, 1024, 0);
  if (!listener_)
    throw std::runtime_error(std::string(this->name()) + ": cannot listen on port " +
                             std::to_string(params_.listen_port));
  up_.stack->report_syns(listener_, params_.early_syn);
  SC_METHOD(timer_up);
  sensitive << up_.timer;
  dont_initialize();
  SC_METHOD(timer_down);
  sensitive << down_.timer;
  dont_initialize();
}

ProxyHost::~ProxyHost() = default;

void ProxyHost::timer_up() {
  up_.timer_at = UINT64_MAX;
  up_.stack->poll(core::now_ps());
  up_.rearm();
  down_.rearm();
}

void ProxyHost::timer_down() {
  down_.timer_at = UINT64_MAX;
  down_.stack->poll(core::now_ps());
  down_.rearm();
  up_.rearm();
}

void ProxyHost::on_syn(const tcpip::EventInfo& info) {
  if (info.listener == listener_) open_downstream(info.conn);
}

void ProxyHost::open_downstream(tcpip::ConnId up) {
  if (by_up_.count(up)) return;
  const tcpip::ConnId down =
      down_.stack->connect(params_.next_ip, params_.next_port, 0, core::now_ps());
  if (!down) {  // no port or table entry: the client is reset
    ++failed_;
    up_.stack->abort(up, core::now_ps());
    return;
  }
  pairs_.push_back(Pair{up, down});
  by_up_[up] = pairs_.size() - 1;
  by_down_[down] = pairs_.size() - 1;
  ++spliced_;
  down_.rearm();
}

void ProxyHost::on_event(Side& side, tcpip::Event ev, const tcpip::EventInfo& info) {
  using tcpip::Event;
  if (side.upstream && ev == Event::Accepted) {
    if (info.listener == listener_) open_downstream(info.conn);  // no-op after ESF's
    return;
  }
  auto& index = side.upstream ? by_up_ : by_down_;
  const auto it = index.find(info.conn);
  if (it == index.end()) {
    if (ev == Event::PeerClosed) side.stack->close(info.conn, core::now_ps());
    return;
  }
  const std::size_t i = it->second;
  Pair& p = pairs_[i];
  switch (ev) {
    case Event::Connected:
      p.down_ready = true;
      break;
    case Event::PeerClosed:
      (side.upstream ? p.up_fin : p.down_fin) = true;
      break;
    case Event::Closed:
      if (side.upstream) {
        by_up_.erase(p.up);
        p.up = 0;
      } else {
        by_down_.erase(p.down);
        p.down = 0;
      }
      return;
    case Event::Reset:
    case Event::TimedOut:
    case Event::Refused:
      ++failed_;
      drop(i, !side.upstream, side.upstream);
      return;
    default:
      break;
  }
  pump(p);
  up_.rearm();
  down_.rearm();
}

void ProxyHost::pump(Pair& p) {
  if (!p.down_ready || p.up == 0 || p.down == 0) return;  // client data waits upstream
  const core::TimePs now = core::now_ps();
  auto move = [&](tcpip::Stack& from, tcpip::ConnId src, tcpip::Stack& to, tcpip::ConnId dst,
                  core::Counter& moved) {
    for (;;) {
      const std::size_t n = std::min({from.readable(src), to.send_space(dst), buf_.size()});
      if (n == 0) return;
      const std::size_t got = from.peek(src, 0, buf_.data(), n);
      const std::size_t sent = to.send(dst, buf_.data(), got, now);
      from.recv(src, nullptr, sent, now);  // drops what was passed on
      moved += sent;
      if (sent < got) return;
    }
  };
  move(*up_.stack, p.up, *down_.stack, p.down, bytes_down_);
  move(*down_.stack, p.down, *up_.stack, p.up, bytes_up_);
  if (p.up_fin && !p.down_closed && up_.stack->readable(p.up) == 0) {
    p.down_closed = true;
    down_.stack->close(p.down, now);
  }
  if (p.down_fin && !p.up_closed && down_.stack->readable(p.down) == 0) {
    p.up_closed = true;
    up_.stack->close(p.up, now);
  }
}

void ProxyHost::drop(std::size_t i, bool abort_up, bool abort_down) {
  Pair& p = pairs_[i];
  const core::TimePs now = core::now_ps();
  const tcpip::ConnId up = p.up, down = p.down;
  by_up_.erase(up);
  by_down_.erase(down);
  p.up = p.down = 0;
  if (abort_up && up) up_.stack->abort(up, now);
  if (abort_down && down) down_.stack->abort(down, now);
  up_.rearm();
  down_.rearm();
}

}  // namespace vtoe::net
