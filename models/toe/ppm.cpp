#include "models/toe/ppm.h"

#include <algorithm>

#include "models/tcpip/frame_pool.h"

namespace vtoe::toe {

using core::TimePs;

Ppm::Ppm(const sc_core::sc_module_name& name, const PpmParams& params,
         const tcpip::StackConfig& stack_config, Ccb& ccb, net::EthernetMac& mac,
         std::vector<ControlChannel*> channels)
    : core::Module(name),
      params_(params),
      ccb_(ccb),
      mac_(mac),
      channels_(std::move(channels)),
      stack_(std::make_unique<tcpip::Stack>(stack_config, *this)),
      cmd_cost_ps_(core::cycles_to_ps(params.cycles_per_command, params.device_freq_hz)),
      tx_pipe_(params.engines),
      rx_pipe_(params.engines),
      frames_tx_(stats_.counter("frames_tx", "frames handed to the MAC")),
      frames_rx_(stats_.counter("frames_rx", "frames taken from the MAC")),
      rx_fifo_drops_(stats_.counter("rx_fifo_drops",
                                    "received frames dropped because the PPM's receive FIFO "
                                    "(toe.ppm.rx_fifo) was full")),
      rx_fifo_fill_(stats_.accumulator("rx_fifo_bytes",
                                       "bytes in the receive FIFO, sampled at each arrival")),
      commands_(stats_.counter("commands", "CmdQ contexts executed")),
      bad_commands_(stats_.counter("bad_commands", "CmdQ contexts refused")) {
  if (stack_config.loopback)
    looped_ = &stats_.counter("frames_looped",
                              "frames between two of the TOE's addresses, looped back inside");
  SC_METHOD(tx_stage);
  sensitive << tx_ev_;
  dont_initialize();
  SC_METHOD(rx_stage);
  sensitive << rx_ev_;
  dont_initialize();
  SC_METHOD(timer_expired);
  sensitive << timer_ev_;
  dont_initialize();
}

EcqDesc Ppm::event(EventType type, std::uint16_t sock, Status status) {
  EcqDesc d{};
  d.type = static_cast<std::uint8_t>(type);
  d.sock = sock;
  d.status = static_cast<std::int32_t>(status);
  return d;
}

// ---- Frame pipelines: each frame occupies an engine for its processing time; frames leave in
// the order they came. ----

TimePs PpmPipeline::next_free() const {
  return *std::min_element(free_at_.begin(), free_at_.end());
}

TimePs PpmPipeline::admit(TimePs now, TimePs cost) {
  auto engine = std::min_element(free_at_.begin(), free_at_.end());
  const TimePs done = std::max(*engine, now) + cost;
  *engine = done;
  busy_ps_ += cost;
  last_out_ = std::max(last_out_, done);
  return last_out_;
}

namespace {
double cycles_for(double per_frame, std::size_t bytes, std::uint32_t datapath) {
  return per_frame + static_cast<double>((bytes + datapath - 1) / datapath);
}

// Stored field by field into the new slot: a pushed temporary is built with narrow stores and
// copied with wide loads, which stalls store-to-load forwarding on every frame.
template <class Fifo>
void push_timed(Fifo& fifo, TimePs at, tcpip::Frame&& frame, bool looped) {
  auto& t = fifo.emplace_back();
  t.at = at;
  t.frame = std::move(frame);
  t.looped = looped;
}
}  // namespace

TimePs Ppm::tx_frame_ps(std::size_t bytes) const {
  return core::cycles_to_ps(cycles_for(params_.tx_cycles_per_frame, bytes, params_.datapath_bytes),
                            params_.device_freq_hz);
}

TimePs Ppm::rx_frame_ps(std::size_t bytes) const {
  return core::cycles_to_ps(cycles_for(params_.rx_cycles_per_frame, bytes, params_.datapath_bytes),
                            params_.device_freq_hz);
}

void Ppm::transmit(tcpip::Frame&& frame) {
  const TimePs now = core::now_ps();
  const TimePs out = tx_pipe_.admit(now, tx_frame_ps(frame.size()));
  if (mac_.sends_ahead()) {  // the MAC queues it for when it comes out: no event of ours
    mac_.send_at(std::move(frame), out);
    frames_tx_.add_at(out);
    return;
  }
  const bool was_empty = tx_fifo_.empty();
  push_timed(tx_fifo_, out, std::move(frame), false);
  if (was_empty) tx_ev_.notify(core::ps(out - now));
}

void Ppm::loop_back(tcpip::Frame&& frame) {
  const TimePs now = core::now_ps();
  const TimePs out = tx_pipe_.admit(now, tx_frame_ps(frame.size()));
  const bool was_empty = tx_fifo_.empty();
  push_timed(tx_fifo_, out, std::move(frame), true);
  if (was_empty) tx_ev_.notify(core::ps(out - now));
}

void Ppm::tx_stage() {
  const TimePs now = core::now_ps();
  while (!tx_fifo_.empty() && tx_fifo_.front().at <= now) {
    Timed t = std::move(tx_fifo_.front());
    tx_fifo_.pop_front();
    if (t.looped) {
      ++*looped_;
      receive_frame(std::move(t.frame));
      continue;
    }
    mac_.send(std::move(t.frame));
    ++frames_tx_;
  }
  if (!tx_fifo_.empty()) tx_ev_.notify(core::ps(tx_fifo_.front().at - now));
}

void Ppm::receive_frame(net::Frame&& frame) {
  if (rx_fifo_used_ + frame.size() > params_.rx_fifo_bytes) {
    ++rx_fifo_drops_;
    return;
  }
  rx_fifo_used_ += frame.size();
  rx_fifo_fill_.sample(static_cast<double>(rx_fifo_used_));
  rx_waiting_.push_back(std::move(frame));
  const TimePs now = core::now_ps();
  rx_start(now);
  rx_schedule(now);
}

// Starts waiting frames on the engines free at `now`. The segment's connection record is read
// when an engine takes the frame (a miss stalls that engine for the fetch from host memory, so
// the fetch is booked on the memory system when it is made, not when the frame arrived).
void Ppm::rx_start(TimePs now) {
  while (!rx_waiting_.empty() && rx_pipe_.next_free() <= now) {
    net::Frame frame = std::move(rx_waiting_.front());
    rx_waiting_.pop_front();
    TimePs record = ccb_.access_latency_ps();
    if (const tcpip::ConnId c =
            stack_->connection_of_frame(frame.data(), frame.size(), frame.checksums_valid))
      if (const CcbEntry* e = ccb_.by_conn(c)) record = ccb_.touch(*e);
    const TimePs out = rx_pipe_.admit(now, rx_frame_ps(frame.size()) + record);
    push_timed(rx_fifo_, out, std::move(frame), false);
  }
}

// The next time the receive side has something to do: a frame leaves, or an engine frees up
// for a waiting frame. An earlier notification overrides a later pending one.
void Ppm::rx_schedule(TimePs now) {
  TimePs next = UINT64_MAX;
  if (!rx_fifo_.empty()) next = rx_fifo_.front().at;
  if (!rx_waiting_.empty()) next = std::min(next, rx_pipe_.next_free());
  if (next != UINT64_MAX) rx_ev_.notify(core::ps(next > now ? next - now : 0));
}

void Ppm::rx_stage() {
  const TimePs now = core::now_ps();
  while (!rx_fifo_.empty() && rx_fifo_.front().at <= now) {
    net::Frame frame = std::move(rx_fifo_.front().frame);
    rx_fifo_.pop_front();
    rx_fifo_used_ -= frame.size();
    ++frames_rx_;
    stack_->receive_frame(frame, now);
    tcpip::FramePool::give(std::move(frame));
  }
  rx_start(now);
  rx_schedule(now);
  stack_touched();
}

// ---- Protocol timers ----

// The kernel's notification is moved only earlier: a deadline that moves later (the
// retransmission timer restarted by each ACK) leaves it where it is, and when it fires early the
// method only re-arms. It is never set further ahead than kTimerHorizonPs: a notification that
// is overridden by an earlier one stays in SystemC's event queue until its time, and deadlines
// that alternate between a near timer and a 200 ms retransmission timeout would otherwise leave
// hundreds of such dead entries, which every other event's insertion pays for.
void Ppm::stack_touched() {
  const TimePs next = stack_->next_deadline();
  timer_at_ = next;
  if (next == UINT64_MAX) return;
  const TimePs now = core::now_ps();
  const TimePs at = std::min(next, now + kTimerHorizonPs);
  if (at >= timer_armed_at_) return;
  timer_armed_at_ = at;
  timer_ev_.notify(core::ps(at > now ? at - now : 0));  // overrides a later notification
}

void Ppm::timer_expired() {
  timer_armed_at_ = UINT64_MAX;
  const TimePs now = core::now_ps();
  if (timer_at_ <= now) stack_->poll(now);
  stack_touched();
}

// ---- Commands ----

// The address a Connect/Listen uses: the channel's own if it has one, else the host's choice;
// an address the engine does not own falls back to the primary.
tcpip::Ipv4 Ppm::local_address(const ControlChannel& channel, const CmdDesc& cmd) const {
  const tcpip::Ipv4 want = channel.address() ? channel.address() : cmd.local_ip;
  return want && stack_->is_local(want) ? want : 0;
}

void Ppm::execute_command(ControlChannel& channel, const CmdDesc& cmd) {
  const int ch = channel.index();
  const CcbEntry* known = ccb_.find(ch, cmd.sock);
  sc_core::wait(core::ps(cmd_cost_ps_ + (known ? ccb_.touch(*known) : ccb_.access_latency_ps())));
  ++commands_;
  const TimePs now = core::now_ps();
  auto refuse = [&](Status st) {
    ++bad_commands_;
    EcqDesc ev = event(EventType::Error, cmd.sock, st);
    ev.cookie = cmd.cookie;
    ev.arg = cmd.opcode;
    if (!ccb_.find(ch, cmd.sock)) ev.flags |= kEcqSocketReleased;
    channel.post(ev);
  };
  auto rx_buffer_ok = [&]() { return cmd.rx_size >= 64 && cmd.rx_addr != 0; };

  switch (static_cast<CmdOp>(cmd.opcode)) {
    case CmdOp::Connect: {
      if (!rx_buffer_ok() || cmd.port == 0) return refuse(Status::BadDescriptor);
      CcbEntry* e = ccb_.create(ch, cmd.sock);
      if (!e) return refuse(ccb_.find(ch, cmd.sock) ? Status::BadSocket : Status::TableFull);
      const tcpip::ConnId c =
          stack_->connect(cmd.ip, cmd.port, 0, now, local_address(channel, cmd));
      if (!c) {
        ccb_.remove(*e);
        return refuse(Status::TableFull);
      }
      e->state = CcbEntry::State::Connecting;
      e->rx_addr = cmd.rx_addr;
      e->rx_size = cmd.rx_size;
      ccb_.bind(*e, c);
      break;
    }
    case CmdOp::Listen: {
      CcbEntry* e = ccb_.create(ch, cmd.sock);
      if (!e) return refuse(ccb_.find(ch, cmd.sock) ? Status::BadSocket : Status::TableFull);
      const tcpip::ConnId l =
          stack_->listen(cmd.port, std::max<int>(1, cmd.arg), now, local_address(channel, cmd));
      if (!l) {
        ccb_.remove(*e);
        return refuse(Status::PortInUse);
      }
      e->kind = CcbEntry::Kind::Listener;
      e->state = CcbEntry::State::Established;
      ccb_.bind(*e, l);
      EcqDesc ev = event(EventType::CmdDone, cmd.sock);
      ev.arg = cmd.opcode;
      channel.post(ev);
      break;
    }
    case CmdOp::Accept: {
      CcbEntry* listener = ccb_.find(ch, cmd.arg);
      if (!listener || listener->kind != CcbEntry::Kind::Listener) return refuse(Status::BadSocket);
      if (!rx_buffer_ok()) return refuse(Status::BadDescriptor);
      CcbEntry* e = ccb_.create(ch, cmd.sock);
      if (!e) return refuse(ccb_.find(ch, cmd.sock) ? Status::BadSocket : Status::TableFull);
      e->state = CcbEntry::State::AcceptWaiting;
      e->listener_sock = cmd.arg;
      e->rx_addr = cmd.rx_addr;
      e->rx_size = cmd.rx_size;
      listener->accept_socks.push_back(cmd.sock);
      bind_accept(*listener);
      break;
    }
    case CmdOp::Close:
    case CmdOp::Abort: {
      CcbEntry* e = ccb_.find(ch, cmd.sock);
      if (!e) return refuse(Status::BadSocket);
      const bool abort = static_cast<CmdOp>(cmd.opcode) == CmdOp::Abort;
      EcqDesc done = event(EventType::CmdDone, cmd.sock);
      done.arg = cmd.opcode;
      if (e->kind == CcbEntry::Kind::Listener || !e->conn) {
        // Listeners and never-connected sockets go at once; queued accepts are dropped.
        tcpip::ConnId listening = 0;
        if (e->kind == CcbEntry::Kind::Listener) {
          for (tcpip::ConnId pending : e->backlog) stack_->abort(pending, now);
          for (std::uint16_t s : e->accept_socks)
            if (CcbEntry* w = ccb_.find(ch, s))
              drop_connection(*w, EventType::Closed, Status::BadSocket);
          listening = e->conn;
        }
        channel.post(done);
        drop_connection(*e, EventType::Closed, Status::Ok);
        // Only now: closing the listener reports Closed for it at once, which would find the
        // entry still bound and drop it under our feet (a use after free, found by fuzz_guest).
        if (listening) stack_->abort(listening, now);
        break;
      }
      e->state = CcbEntry::State::Closing;
      if (send_ended_) send_ended_(ch, cmd.sock);
      channel.post(done);
      if (abort) {
        const tcpip::ConnId c = e->conn;
        drop_connection(*e, EventType::Closed, Status::Ok);
        stack_->abort(c, now);
      } else {
        stack_->close(e->conn, now);
      }
      break;
    }
    default:
      return refuse(Status::BadDescriptor);
  }
  stack_touched();
}

void Ppm::bind_accept(CcbEntry& listener) {
  while (!listener.accept_socks.empty() && !listener.backlog.empty()) {
    const std::uint16_t sock = listener.accept_socks.front();
    const tcpip::ConnId c = listener.backlog.front();
    listener.backlog.pop_front();
    // While it waited for an Accept the connection had no CCB entry, so its protocol events
    // found nobody: one that has gone (reset, or closed both ways) is skipped, and a FIN that
    // came in is remembered now.
    const tcpip::TcpState st = stack_->state(c);
    if (st == tcpip::TcpState::Closed) continue;
    listener.accept_socks.pop_front();
    CcbEntry* e = ccb_.find(listener.channel, sock);
    if (!e) continue;
    ccb_.bind(*e, c);
    e->state = CcbEntry::State::Established;
    e->peer_closed = st == tcpip::TcpState::CloseWait || st == tcpip::TcpState::LastAck;
    EcqDesc ev = event(EventType::Accepted, sock);
    ev.arg = listener.sock;
    post(listener.channel, ev);
    if ((stack_->readable(c) || e->peer_closed) && readable_) readable_(c);
  }
}

void Ppm::drop_connection(CcbEntry& e, EventType type, Status status) {
  EcqDesc ev = event(type, e.sock, status);
  ev.flags |= kEcqSocketReleased;
  const int ch = e.channel;
  const std::uint16_t sock = e.sock;
  ccb_.remove(e);
  post(ch, ev);
  if (send_ended_) send_ended_(ch, sock);
}

// ---- Protocol events -> completions ----

void Ppm::tcp_event(tcpip::Event ev, const tcpip::EventInfo& info) {
  using tcpip::Event;
  if (ev == Event::Accepted) {
    CcbEntry* listener = ccb_.by_conn(info.listener);
    if (!listener) {
      stack_->abort(info.conn, core::now_ps());
      return;
    }
    listener->backlog.push_back(info.conn);
    bind_accept(*listener);
    return;
  }
  // The Tx DMA waits for send-buffer space: any acknowledgment may have made some.
  if (ev == Event::Writable || ev == Event::SendAcked) {
    if (writable_) writable_();
    return;
  }
  CcbEntry* e = ccb_.by_conn(info.conn);
  if (!e) return;  // not (or no longer) known to the host: nothing to report
  switch (ev) {
    case Event::Connected:
      e->state = CcbEntry::State::Established;
      post(e->channel, event(EventType::Connected, e->sock));
      break;
    case Event::Readable:
      if (readable_) readable_(info.conn);
      break;
    case Event::PeerClosed:
      e->peer_closed = true;
      if (readable_) readable_(info.conn);
      break;
    case Event::Closed:
      drop_connection(*e, EventType::Closed, Status::Ok);
      break;
    case Event::Reset:
    case Event::TimedOut:
    case Event::Refused: {
      const Status st = ev == Event::Reset     ? Status::Reset
                        : ev == Event::Refused ? Status::Refused
                                               : Status::TimedOut;
      drop_connection(
          *e, e->state == CcbEntry::State::Connecting ? EventType::Error : EventType::Closed, st);
      break;
    }
    default:
      break;
  }
}

}  // namespace vtoe::toe
