#include "models/toe/rx_dma.h"

#include <algorithm>

#include "models/toe/dma_initiator.h"

namespace vtoe::toe {

RxDma::RxDma(const sc_core::sc_module_name& name, Ppm& ppm, Ccb& ccb,
             std::vector<ControlChannel*> channels, std::uint32_t burst_bytes,
             core::TimePs notify_timeout_ps)
    : core::Module(name),
      dma("dma"),
      ppm_(ppm),
      ccb_(ccb),
      channels_(std::move(channels)),
      burst_(std::max<std::uint32_t>(burst_bytes, 64)),
      staging_(burst_),
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
  tcpip::Stack& stack = ppm_.stack();
  for (;;) {
    while (work_.empty()) sc_core::wait(work_ev_);
    const tcpip::ConnId conn = work_.front();
    work_.pop_front();
    CcbEntry* e = ccb_.by_conn(conn);
    if (!e) continue;
    e->rx_queued = false;
    for (;;) {
      const std::size_t avail = stack.readable(conn);
      const std::uint32_t free = e->rx_free();
      if (avail == 0 || free == 0) {
        if (avail > 0) ++host_full_;
        maybe_notify(*e);
        break;
      }
      // Up to the end of the ring in one burst; the rest in the next.
      const std::uint32_t pos = static_cast<std::uint32_t>(e->rx_written % e->rx_size);
      const std::uint32_t n = static_cast<std::uint32_t>(
          std::min<std::size_t>({avail, free, burst_, e->rx_size - pos}));
      // The bytes leave the connection's buffer only once the host has them: a DMA that faults
      // loses nothing TCP has acknowledged (they wait in the TOE, the window stays closed).
      stack.peek(conn, 0, staging_.data(), n);
      ControlChannel& ch = *channels_[static_cast<std::size_t>(e->channel)];
      const int channel = e->channel;
      const core::TimePs record = ccb_.touch(*e);  // the buffer's position, per burst
      const DmaResult res = dma.transfer(tlm::TLM_WRITE_COMMAND, e->rx_addr + pos,
                                         staging_.data(), n, ch.sideband());
      sc_core::wait(core::ps(record + res.delay_ps));
      e = ccb_.by_conn(conn);
      if (!e) break;  // closed while the DMA ran
      if (!res.ok) {
        channels_[static_cast<std::size_t>(channel)]->post(
            Ppm::event(EventType::Error, e->sock, Status::DmaFault));
        break;
      }
      stack.recv(conn, nullptr, n, core::now_ps());  // the bytes peeked above
      ppm_.stack_touched();
      e->rx_written += n;
      bytes_ += n;
      bytes_per_channel_[static_cast<std::size_t>(channel)] += n;
      maybe_notify(*e);
    }
  }
}

}  // namespace vtoe::toe
