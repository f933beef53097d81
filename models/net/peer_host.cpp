#include "models/net/peer_host.h"

#include <algorithm>

#include "models/core/stream_pattern.h"
#include "models/tcpip/frame_pool.h"

namespace vtoe::net {

namespace {
constexpr core::TimePs kRetryPs = 1'000'000'000;  // 1 ms between connection attempts
}  // namespace

const std::vector<core::Param<PeerClients>>& peer_client_params() {
  using core::ParamKind;
  using P = PeerClients;
  static const std::vector<core::Param<P>> params = {
      core::param<P>(
          ParamKind::Uint, "network.clients.connections", "0",
          "Simulated peer: client connections to make to a guest server (sink or "
          "echo), each sending network.clients.bytes and closing; 0 = none",
          [](P & s) -> auto& { return s.connections; })
          .range("0", "100000000"),
      core::param<P>(
          ParamKind::Uint, "network.clients.concurrency", "1",
          "Simulated peer: client connections open at once",
          [](P & s) -> auto& { return s.concurrency; })
          .range("1", "1000000"),
      core::param<P>(
          ParamKind::Bytes, "network.clients.bytes", "4KiB",
          "Simulated peer: bytes each client connection sends before it closes",
          [](P & s) -> auto& { return s.bytes; })
          .range("0B", "1GiB"),
      core::param<P>(
          ParamKind::Uint, "network.clients.vm", "0",
          "Simulated peer: index of the VM whose server the clients connect to (its "
          "address and workload.port)",
          [](P & s) -> auto& { return s.vm; }),
      core::param<P>(
          ParamKind::Time, "network.clients.start", "1ms",
          "Simulated peer: when the first client connects",
          [](P & s) -> auto& { return s.start_ps; }),
      core::param<P>(
          ParamKind::Uint, "network.clients.addresses", "1",
          "Simulated peer: source addresses the clients connect from (the peer's address and "
          "aliases after it); each gives 16,384 ephemeral ports towards the server, so more "
          "than 16,384 clients open at once need more than one",
          [](P & s) -> auto& { return s.addresses; })
          .range("1", "64"),
  };
  return params;
}

PeerHost::PeerHost(const sc_core::sc_module_name& name, const PeerHostParams& params)
    : core::Module(name),
      params_(params),
      buf_(64 * 1024),
      rx_bytes_(stats_.counter("rx_bytes", "payload bytes received by peer applications")),
      tx_bytes_(stats_.counter("tx_bytes", "payload bytes sent by peer applications")),
      pattern_errors_(
          stats_.counter("pattern_errors", "received bytes that differ from the sent pattern")),
      connect_retries_(
          stats_.counter("connect_retries", "source connection attempts refused and retried")),
      clients_done_(stats_.counter("clients_done",
                                   "client connections that sent everything and closed cleanly")),
      clients_failed_(
          stats_.counter("clients_failed", "client connections refused, reset or timed out")) {
  EthernetMacParams mp;
  mp.rate_bps = params.rate_bps;
  mp.tx_queue_frames = params.tx_queue_frames;
  mp.ecn_mark_frames = params.ecn_mark_frames;
  mp.address = params.stack.mac.b;
  mp.max_frame = params.stack.mtu + 18;
  mac_ = std::make_unique<EthernetMac>("mac", mp);
  mac_->upper.bind(*this);
  // No application here keeps what it receives: a sink checks each byte against the pattern as
  // it arrives (tcp_payload), the others only count them. The stack need not store them.
  tcpip::StackConfig stack_config = params_.stack;
  stack_config.keep_rx_payload = false;
  stack_ = std::make_unique<tcpip::Stack>(stack_config, *this);
  for (const PeerApp& app : params_.apps) {
    if (app.type == PeerAppType::Source || app.type == PeerAppType::Clients ||
        app.type == PeerAppType::FlowClient)
      continue;
    const tcpip::ConnId l = stack_->listen(app.port, 16, 0);
    if (!l)
      throw std::runtime_error(std::string(this->name()) + ": cannot listen on port " +
                               std::to_string(app.port));
    listeners_[l] = &app;
  }
  SC_METHOD(timer_expired);
  sensitive << timer_ev_;
  dont_initialize();
  SC_METHOD(start_sources);
  sensitive << retry_ev_;
}

void PeerHost::start_apps_now() {
  const core::TimePs now = core::now_ps();
  for (PeerApp& app : params_.apps) app.start_ps = std::min(app.start_ps, now);
  retry_ev_.notify(sc_core::SC_ZERO_TIME);
}

void PeerHost::start_sources() {
  // Runs at time 0 and again on retries; connects every source whose start time has come and that
  // has no connection yet.
  const core::TimePs now = core::now_ps();
  core::TimePs next = UINT64_MAX;
  for (const PeerApp& app : params_.apps) {
    if (app.type == PeerAppType::FlowClient) {
      const core::TimePs at = std::max(app.start_ps, next_flow_ps_);
      if (flow_active_ || flows_.size() >= app.flows) continue;
      if (at > now)
        next = std::min(next, at);
      else
        start_flow(app, now);
      continue;
    }
    if (app.type == PeerAppType::Clients) {
      if (app.start_ps > now)
        next = std::min(next, app.start_ps);
      else
        start_clients(app, now);
      continue;
    }
    if (app.type != PeerAppType::Source) continue;
    bool active = false;
    for (auto& [id, c] : conns_) active |= c.app == &app;
    if (active) continue;
    if (app.start_ps > now) {
      next = std::min(next, app.start_ps);
      continue;
    }
    const tcpip::ConnId c = stack_->connect(app.remote_ip, app.port, 0, now);
    if (c) conns_[c].app = &app;
  }
  rearm();
  if (next != UINT64_MAX) retry_ev_.notify(core::ps(next - now));
}

void PeerHost::start_clients(const PeerApp& app, core::TimePs now) {
  const PeerClients& load = app.clients;
  const std::size_t sources = std::max<std::size_t>(app.sources.size(), 1);
  if (source_ready_.size() != sources) {
    source_ready_.assign(sources, false);
    source_probing_.assign(sources, false);
  }
  while (clients_active_ < load.concurrency && clients_started_ < load.connections) {
    // Sources in turn; one whose ports are all in use passes to the next. A source opens one
    // client until that one has connected: its SYN makes the server resolve the source's MAC,
    // as traffic before a load does on a real client host; a burst of SYNs before that would
    // overflow the ARP queues (arp_queue_limit) and wait for the initial RTO.
    tcpip::ConnId c = 0;
    bool usable = false;
    for (std::size_t tried = 0; tried < sources && !c; ++tried) {
      const std::size_t k = next_source_;
      next_source_ = (next_source_ + 1) % sources;
      if (!source_ready_[k] && source_probing_[k]) continue;
      usable = true;
      const tcpip::Ipv4 local = app.sources.empty() ? 0 : app.sources[k];
      c = stack_->connect(app.remote_ip, app.port, 0, now, local);
      if (c) {
        if (!source_ready_[k]) source_probing_[k] = true;
        conns_[c].source = k;
      }
    }
    if (!usable) break;      // every source waits for its first client
    if (!c) {                // no local port or table entry free: try again when a client has ended
      bool waiting = false;  // a source whose first client is on its way will take more
      for (std::size_t k = 0; k < sources; ++k) waiting |= source_probing_[k] && !source_ready_[k];
      if (waiting) break;
      ++clients_failed_;
      ++clients_started_;
      if (clients_active_ > 0) break;  // (with none active nothing would change: use it up)
      continue;
    }
    ++clients_started_;
    ++clients_active_;
    conns_[c].app = &app;
  }
}

void PeerHost::start_flow(const PeerApp& app, core::TimePs now) {
  flows_.emplace_back();
  flows_.back().start_ps = now;
  const tcpip::ConnId c = stack_->connect(app.remote_ip, app.port, 0, now);
  if (!c) {  // no port or table entry: the flow fails at once
    ++clients_failed_;
    next_flow_ps_ = now + app.gap_ps;
    retry_ev_.notify(core::ps(app.gap_ps));
    return;
  }
  flow_active_ = true;
  Conn& conn = conns_[c];
  conn.app = &app;
  conn.flow = flows_.size() - 1;
  conn.owed = app.request_size;  // sent once connected
}

// The flow's response is complete (or the connection died): the next one starts after the gap.
void PeerHost::flow_ended(Conn& conn) {
  if (!flow_active_ || conn.flow != flows_.size() - 1) return;
  flow_active_ = false;
  FlowRecord& f = flows_[conn.flow];
  if (f.ok)
    ++clients_done_;
  else
    ++clients_failed_;
  const core::TimePs now = core::now_ps();
  next_flow_ps_ = now + conn.app->gap_ps;
  retry_ev_.notify(core::ps(conn.app->gap_ps));
}

void PeerHost::client_ended(const PeerApp& app, bool ok) {
  --clients_active_;
  if (ok)
    ++clients_done_;
  else
    ++clients_failed_;
  start_clients(app, core::now_ps());
}

void PeerHost::receive_frame(Frame&& frame) {
  stack_->receive_frame(frame, core::now_ps());
  tcpip::FramePool::give(std::move(frame));
  rearm();
}

void PeerHost::transmit(tcpip::Frame&& frame) { mac_->send(std::move(frame)); }

// The notification only ever moves earlier (see Ppm::stack_touched): a cancelled timed
// notification would stay in the kernel's event queue until its time.
void PeerHost::rearm() {
  const core::TimePs next = stack_->next_deadline();
  timer_at_ = next;
  if (next == UINT64_MAX) return;
  const core::TimePs now = core::now_ps();
  const core::TimePs at = std::min(next, now + kTimerHorizonPs);
  if (at >= timer_armed_at_) return;
  timer_armed_at_ = at;
  timer_ev_.notify(core::ps(at > now ? at - now : 0));
}

void PeerHost::timer_expired() {
  timer_armed_at_ = UINT64_MAX;
  const core::TimePs now = core::now_ps();
  if (timer_at_ <= now) stack_->poll(now);
  rearm();
}

core::StreamClock* PeerHost::clock_for(tcpip::ConnId c) const {
  if (clocks_.empty()) return nullptr;
  const auto it = clocks_.find(stack_->info(c).remote_ip);
  return it == clocks_.end() ? nullptr : it->second;
}

void PeerHost::drain(tcpip::ConnId c, Conn& conn) {
  const core::TimePs now = core::now_ps();
  if (conn.app->type == PeerAppType::Sink && !conn.app->reads) return;  // a stuck reader
  for (;;) {
    // The bytes were looked at as they arrived (tcp_payload): they are only dropped here.
    const PeerApp& app = *conn.app;
    const std::size_t seen = std::min(stack_->readable(c), buf_.size());
    if (seen == 0) break;
    const std::size_t n = stack_->recv(c, nullptr, seen, now);
    rx_bytes_ += n;
    if (app.type == PeerAppType::Echo) {
      conn.owed += n;
    } else if (app.type == PeerAppType::FlowClient) {
      FlowRecord& f = flows_[conn.flow];
      if (f.first_byte_ps == 0) f.first_byte_ps = now;
      if (conn.rx_offset + n >= app.response_size && !f.ok) {
        f.last_byte_ps = now;
        f.ok = true;
        conn.closing = true;
        stack_->close(c, now);
        flow_ended(conn);
      }
    } else if (app.type == PeerAppType::RpcServer || app.type == PeerAppType::FlowServer) {
      conn.request_bytes += n;
      const std::uint32_t req = std::max<std::uint32_t>(app.request_size, 1);
      while (conn.request_bytes >= req) {
        conn.request_bytes -= req;
        conn.owed += app.response_size;
      }
    }
    conn.rx_offset += n;
    if (conn.clock) conn.clock->taken(conn.rx_offset, now);
    if (seen < buf_.size()) break;  // it saw all there was; reading brings nothing new
  }
  if (conn.owed) fill(c, conn);
}

void PeerHost::tcp_payload(tcpip::ConnId conn, tcpip::ConnId listener, std::size_t offset,
                           const std::uint8_t* data, std::size_t len) {
  // The application whose stream this is; before its Accepted event, its listener's.
  const PeerApp* app = nullptr;
  std::uint64_t read = 0;  // bytes the application has read from the stream
  if (auto it = conns_.find(conn); it != conns_.end() && it->second.app) {
    app = it->second.app;
    read = it->second.rx_offset;
  } else if (auto l = listeners_.find(listener); l != listeners_.end()) {
    app = l->second;
  }
  // A stuck reader (reads off) never looks at its bytes.
  if (!app || app->type != PeerAppType::Sink || !app->verify_pattern || !app->reads) return;
  pattern_errors_ += core::StreamPattern::mismatches(read + offset, data, len);
}

void PeerHost::fill(tcpip::ConnId c, Conn& conn) {
  const core::TimePs now = core::now_ps();
  const PeerApp& app = *conn.app;
  for (;;) {
    std::size_t want = buf_.size();
    if (app.type == PeerAppType::Clients)
      want = std::min<std::uint64_t>(want, app.clients.bytes - conn.tx_offset);
    else if (app.type != PeerAppType::Source)
      want = std::min<std::uint64_t>(want, conn.owed);
    want = std::min(want, stack_->send_space(c));
    if (want == 0) break;
    if (app.type == PeerAppType::RpcServer || app.type == PeerAppType::FlowServer ||
        app.type == PeerAppType::FlowClient)
      std::fill_n(buf_.begin(), want, 0xa5);
    else  // source, and echo: the guest's stream is the pattern, so echoed bytes are too
      core::StreamPattern::fill(conn.tx_offset, buf_.data(), want);
    const std::size_t n = stack_->send(c, buf_.data(), want, now);
    if (n == 0) break;
    tx_bytes_ += n;
    conn.tx_offset += n;
    if (conn.clock) conn.clock->handed(conn.tx_offset, now);
    if (app.type != PeerAppType::Source && app.type != PeerAppType::Clients) conn.owed -= n;
  }
  // A flow server closes once its one response is queued (the FIN follows the data).
  if (app.type == PeerAppType::FlowServer && conn.owed == 0 && conn.tx_offset > 0 &&
      !conn.closing) {
    conn.closing = true;
    stack_->close(c, now);
  }
  if (app.type == PeerAppType::Clients && conn.tx_offset == app.clients.bytes && !conn.closing) {
    conn.closing = true;
    stack_->close(c, now);
  }
}

void PeerHost::tcp_event(tcpip::Event ev, const tcpip::EventInfo& info) {
  using tcpip::Event;
  switch (ev) {
    case Event::Accepted: {
      auto it = listeners_.find(info.listener);
      if (it == listeners_.end()) return;
      Conn& conn = conns_[info.conn];
      conn.app = it->second;
      if (conn.app->type == PeerAppType::Sink) conn.clock = clock_for(info.conn);
      break;
    }
    case Event::Connected: {
      auto it = conns_.find(info.conn);
      if (it == conns_.end()) break;
      const PeerApp& app = *it->second.app;
      if (app.type == PeerAppType::Source) it->second.clock = clock_for(info.conn);
      const std::size_t k = it->second.source;  // read before fill(), which may end the client
      fill(info.conn, it->second);
      if (app.type == PeerAppType::Clients && k < source_ready_.size() && !source_ready_[k]) {
        source_ready_[k] = true;
        start_clients(app, core::now_ps());
      }
      break;
    }
    case Event::Readable: {
      auto it = conns_.find(info.conn);
      if (it != conns_.end()) drain(info.conn, it->second);
      break;
    }
    case Event::Writable:
    case Event::SendAcked: {  // acknowledged data freed send-buffer space
      auto it = conns_.find(info.conn);
      if (it != conns_.end()) fill(info.conn, it->second);
      break;
    }
    case Event::PeerClosed: {
      auto it = conns_.find(info.conn);
      if (it == conns_.end()) {
        stack_->close(info.conn, core::now_ps());
        break;
      }
      drain(info.conn, it->second);
      if (it->second.app->type == PeerAppType::FlowClient ||
          it->second.app->type == PeerAppType::FlowServer) {
        if (!it->second.closing) stack_->close(info.conn, core::now_ps());
        it->second.closing = true;
        if (it->second.app->type == PeerAppType::FlowClient) flow_ended(it->second);
        break;
      }
      if (it->second.app->type == PeerAppType::Clients) {
        // Both directions are closed: the client is done, whatever TIME-WAIT still holds.
        const PeerApp& app = *it->second.app;
        const bool ok = it->second.closing;
        conns_.erase(it);
        client_ended(app, ok);
        break;
      }
      stack_->close(info.conn, core::now_ps());
      break;
    }
    case Event::Refused:
    case Event::TimedOut:
    case Event::Reset:
    case Event::Closed: {
      auto it = conns_.find(info.conn);
      if (it == conns_.end()) break;
      if (it->second.app->type == PeerAppType::FlowClient) flow_ended(it->second);
      const bool source = it->second.app->type == PeerAppType::Source;
      if (it->second.app->type == PeerAppType::Clients) {
        const PeerApp& app = *it->second.app;
        const std::size_t k = it->second.source;
        if (k < source_probing_.size() && !source_ready_[k]) source_probing_[k] = false;
        conns_.erase(it);
        client_ended(app, false);
        break;
      }
      conns_.erase(it);
      if (source && ev == Event::Refused) {
        // The guest is not listening yet: try again shortly.
        ++connect_retries_;
        retry_ev_.notify(core::ps(kRetryPs));
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace vtoe::net
