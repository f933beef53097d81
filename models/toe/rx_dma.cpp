#include "models/toe/rx_dma.h"

#include <algorithm>

#include "models/toe/dma_initiator.h"

namespace vtoe::toe {

RxDma::RxDma(const sc_core::sc_module_name& name, Ppm& ppm, Ccb& ccb,
             std::vector<ControlChannel*> channels, std::uint32_t burst_bytes,
             core::TimePs notify_timeout_ps, std::uint32_t outstanding)
    : core::Module(name),
      dma("dma"),
      ppm_(ppm),
      ccb_(ccb),
      channels_(std::move(channels)),
      burst_(std::max<std::uint32_t>(burst_bytes, 64)),
      outstanding_(std::max<std::uint32_t>(outstanding, 1)),
      bytes_per_channel_(channels_.size(), 0),
      timeout_ps_(notify_timeout_ps),
      bytes_(stats_.counter("bytes", "payload bytes written to host memory")),
      notifications_(stats_.counter("notifications", "RxData completions")),
      timeouts_(
          stats_.counter("notify_timeouts", "RxData completions sent by the notification timer")),
      host_full_(stats_.counter("host_buffer_full", "times a kernel receive buffer was full")),
      bad_contexts_(
          stats_.counter("bad_contexts", "RecvQ contexts for unknown sockets or over-releases")) {
  SC_THREAD(run);
  SC_METHOD(timer_expired);
  sensitive << timer_ev_;
  dont_initialize();
}

std::uint64_t RxDma::bytes(int channel) const {
  return bytes_per_channel_.at(static_cast<std::size_t>(channel));
}

void RxDma::kick(tcpip::ConnId conn) {
  CcbEntry* e = ccb_.by_conn(conn);
  if (!e || e->rx_queued || e->kind != CcbEntry::Kind::Connection) return;
  e->rx_queued = true;
  work_.push_back(conn);
  work_ev_.notify(sc_core::SC_ZERO_TIME);
}

void RxDma::recv_context(int channel, const RecvDesc& desc) {
  CcbEntry* e = ccb_.find(channel, desc.sock);
  if (!e || e->kind != CcbEntry::Kind::Connection) {
    ++bad_contexts_;
    EcqDesc ev = Ppm::event(EventType::Error, desc.sock, Status::BadSocket);
    channels_[static_cast<std::size_t>(channel)]->post(ev);
    return;
  }
  const std::uint64_t outstanding = e->rx_notified - e->rx_released;
  if (desc.release > outstanding) {
    // The host cannot hand back bytes it was never given; refuse instead of corrupting the ring.
    ++bad_contexts_;
    EcqDesc ev = Ppm::event(EventType::Error, desc.sock, Status::BadDescriptor);
    channels_[static_cast<std::size_t>(channel)]->post(ev);
    return;
  }
  e->rx_released += desc.release;
  if (desc.flags & kRecvNotifyNow) e->notify_now = true;
  maybe_notify(*e);
  if (e->conn) kick(e->conn);
}

void RxDma::maybe_notify(CcbEntry& e, bool timed_out) {
  const std::uint64_t fresh = e.rx_written - e.rx_notified;
  const bool drained = e.conn == 0 || ppm_.stack().readable(e.conn) == 0;
  if (fresh > 0 && (e.rx_free() == 0 || e.notify_now || timed_out || (e.peer_closed && drained))) {
    EcqDesc ev = Ppm::event(EventType::RxData, e.sock);
    ev.offset = static_cast<std::uint32_t>(e.rx_notified % e.rx_size);
    ev.length = static_cast<std::uint32_t>(fresh);
    e.rx_notified = e.rx_written;
    e.notify_now = false;
    ++notifications_;
    if (timed_out) ++timeouts_;
    channels_[static_cast<std::size_t>(e.channel)]->post(ev);
  }
  if (e.rx_written > e.rx_notified) arm_timer(e);
  if (e.peer_closed && drained && e.rx_written == e.rx_notified && !e.peer_closed_posted) {
    e.peer_closed_posted = true;
    channels_[static_cast<std::size_t>(e.channel)]->post(Ppm::event(EventType::PeerClosed, e.sock));
  }
}

// Data now waits unreported: make sure the host hears of it within the timeout.
void RxDma::arm_timer(CcbEntry& e) {
  if (e.rx_timer_armed || timeout_ps_ == 0 || !e.conn) return;
  e.rx_timer_armed = true;
  const core::TimePs now = core::now_ps();
  e.unnotified_since = now;
  const bool idle = timers_.empty();
  timers_.emplace_back(now + timeout_ps_, e.conn);
  if (idle) timer_ev_.notify(core::ps(timeout_ps_));
}

void RxDma::timer_expired() {
  const core::TimePs now = core::now_ps();
  while (!timers_.empty() && timers_.front().first <= now) {
    const tcpip::ConnId conn = timers_.front().second;
    timers_.pop_front();
    if (CcbEntry* e = ccb_.by_conn(conn)) {
      e->rx_timer_armed = false;
      if (e->rx_written > e->rx_notified) {
        // Reported since the timer was armed, but newer data waits: wait for its own deadline.
        if (now - e->unnotified_since >= timeout_ps_)
          maybe_notify(*e, /*timed_out=*/true);
        else
          arm_timer(*e);
      }
    }
  }
  if (!timers_.empty()) timer_ev_.notify(core::ps(timers_.front().first - now));
}

void RxDma::run() {
  for (;;) {
    while (work_.empty()) sc_core::wait(work_ev_);
    const tcpip::ConnId conn = work_.front();
    work_.pop_front();
    CcbEntry* e = ccb_.by_conn(conn);
    if (!e) continue;
    e->rx_queued = false;
    drain(conn, e);
  }
}

void RxDma::drain(tcpip::ConnId conn, CcbEntry* e) {
  tcpip::Stack& stack = ppm_.stack();
  std::uint32_t pending = 0;  // bytes in bursts in flight (still in the connection's buffer)
  bool failed = false;        // a burst faulted: the rest are dropped as they complete
  for (;;) {
    bool host_full = false;
    while (e != nullptr && !failed && inflight_.size() < outstanding_) {
      const std::size_t readable = stack.readable(conn);
      const std::uint32_t room = e->rx_free();
      const std::size_t avail = readable > pending ? readable - pending : 0;
      const std::uint32_t free = room > pending ? room - pending : 0;
      if (avail == 0 || free == 0) {
        host_full = avail > 0;
        break;
      }
      // Up to the end of the ring in one burst; the rest in the next.
      const std::uint32_t pos = static_cast<std::uint32_t>((e->rx_written + pending) % e->rx_size);
      const std::uint32_t n = static_cast<std::uint32_t>(
          std::min<std::size_t>({avail, free, burst_, e->rx_size - pos}));
      Burst b;
      b.n = n;
      b.channel = e->channel;
      if (!spare_.empty()) {
        b.data = std::move(spare_.back());
        spare_.pop_back();
      }
      b.data.resize(burst_);
      // The bytes leave the connection's buffer only once the host has them: a DMA that faults
      // loses nothing TCP has acknowledged (they wait in the TOE, the window stays closed).
      stack.peek(conn, pending, b.data.data(), n);
      const ControlChannel& ch = *channels_[static_cast<std::size_t>(e->channel)];
      const core::TimePs record = ccb_.touch(*e);  // the buffer's position, per burst
      const std::uint64_t addr = e->rx_addr + pos;
      pending += n;
      if (!dma.approximately_timed()) {
        const DmaResult res =
            dma.book(tlm::TLM_WRITE_COMMAND, addr, b.data.data(), n, ch.sideband());
        b.ok = res.ok;
        b.done_at = core::now_ps() + record + res.delay_ps;
        inflight_.push_back(std::move(b));
      } else {
        b.id = ++burst_ids_;
        b.done_at = kAwaiting;
        const std::uint64_t id = b.id;
        inflight_.push_back(std::move(b));
        // With one burst in flight at most, this thread only waits for the answer next.
        dma.issue(
            tlm::TLM_WRITE_COMMAND, addr, inflight_.back().data.data(), n, ch.sideband(),
            [this, id, record](bool ok) { answered(id, ok, record); },
            /*until_accepted=*/outstanding_ > 1);
      }
      if (dma.approximately_timed()) e = ccb_.by_conn(conn);  // issue() may have waited
    }
    if (inflight_.empty()) {
      if (e != nullptr && !failed) {
        if (host_full) ++host_full_;
        maybe_notify(*e);
      }
      return;
    }
    // The oldest burst completes first (in order, as the bytes must enter the ring).
    for (;;) {
      const core::TimePs done_at = inflight_.front().done_at;
      if (done_at == kAwaiting) {
        sc_core::wait(answered_ev_);
      } else if (done_at > core::now_ps()) {
        sc_core::wait(core::ps(done_at - core::now_ps()));
      } else {
        break;
      }
    }
    Burst b = std::move(inflight_.front());
    inflight_.pop_front();
    pending -= b.n;
    spare_.push_back(std::move(b.data));
    e = ccb_.by_conn(conn);
    if (e == nullptr || failed) continue;  // closed while the DMA ran, or after a fault
    if (!b.ok) {
      failed = true;
      channels_[static_cast<std::size_t>(b.channel)]->post(
          Ppm::event(EventType::Error, e->sock, Status::DmaFault));
      continue;
    }
    stack.recv(conn, nullptr, b.n, core::now_ps());  // the bytes peeked when it was issued
    ppm_.stack_touched();
    e->rx_written += b.n;
    bytes_ += b.n;
    bytes_per_channel_[static_cast<std::size_t>(b.channel)] += b.n;
    maybe_notify(*e);
  }
}

void RxDma::answered(std::uint64_t id, bool ok, core::TimePs record) {
  for (Burst& b : inflight_) {
    if (b.id != id) continue;
    b.ok = ok;
    b.done_at = core::now_ps() + record;
    // A request issued without waiting for END_REQ whose answer implied it: the thread would
    // have resumed now from issue(), so it is woken now.
    if (dma.answer_ends_unwaited_request())
      answered_ev_.notify();
    else
      answered_ev_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
}

}  // namespace vtoe::toe
