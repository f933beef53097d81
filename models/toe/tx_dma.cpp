#include "models/toe/tx_dma.h"

#include <algorithm>
#include <iterator>

#include "models/core/tracer.h"
#include "models/toe/dma_initiator.h"

namespace vtoe::toe {

TxDma::TxDma(const sc_core::sc_module_name& name, Ppm& ppm, Ccb& ccb,
             std::vector<ControlChannel*> channels, std::uint32_t burst_bytes,
             std::uint32_t outstanding)
    : core::Module(name),
      dma("dma"),
      ppm_(ppm),
      ccb_(ccb),
      channels_(std::move(channels)),
      burst_(std::max<std::uint32_t>(burst_bytes, 64)),
      outstanding_(std::max<std::uint32_t>(outstanding, 1)),
      bytes_per_channel_(channels_.size(), 0),
      bytes_(stats_.counter("bytes", "payload bytes read from host memory")),
      contexts_(stats_.counter("contexts", "SendQ contexts completed")),
      faults_(stats_.counter("faults", "contexts failed by DMA faults or bad sockets")),
      stalls_(stats_.counter("buffer_full_stalls", "waits for Tx local buffer space")),
      window_parks_(stats_.counter("window_parks",
                                   "times contexts left the dispatcher's pool because their "
                                   "connection's peer closed its window")),
      in_flight_(stats_.accumulator("bursts_in_flight",
                                    "burst reads in flight, sampled as each is issued")) {
  slots_.resize(outstanding_);
  for (Burst& b : slots_) b.data.resize(burst_);
  space_or_job_ |= space_ev_;
  space_or_job_ |= job_ev_;
  answer_space_or_job_ |= answered_ev_;
  answer_space_or_job_ |= space_ev_;
  answer_space_or_job_ |= job_ev_;
  SC_THREAD(run);
}

void TxDma::enqueue(const TxJob& job) {
  const ConnKey key{job.channel, job.desc.sock};
  auto it = queues_.find(key);
  if (it == queues_.end()) {
    if (spare_queue_) {
      spare_queue_.key() = key;
      it = queues_.insert(std::move(spare_queue_)).position;
    } else {
      it = queues_.emplace(key, std::deque<TxJob>{}).first;
    }
  }
  auto& q = it->second;
  if (q.empty()) {
    // The thread rejoins the connection it served last to the rotation when it issues a burst;
    // it used to do so only once the burst was accepted, so a connection arriving before that
    // still goes ahead of it (the rotation, and the results, stay as they were).
    const bool before_issuer = outstanding_ == 1 && dma.approximately_timed() &&
                               dma.request_pending() && !turn_.empty() && turn_.back() == issuer_;
    turn_.insert(before_issuer ? std::prev(turn_.end()) : turn_.end(), key);
  }
  q.push_back(job);
  q.back().seq = next_seq_++;
  ++queued_;
  job_ev_.notify(sc_core::SC_ZERO_TIME);
}

void TxDma::space_freed() {
  if (waits_for_space_)
    space_ev_.notify(sc_core::SC_ZERO_TIME);
  else
    space_freed_delta_ = sc_core::sc_delta_count();
}

void TxDma::before_space_wait() {
  if (space_freed_delta_ == sc_core::sc_delta_count()) space_ev_.notify(sc_core::SC_ZERO_TIME);
  waits_for_space_ = true;
}

void TxDma::wait_for_space(const sc_core::sc_event_or_list& events) {
  before_space_wait();
  sc_core::wait(events);
  waits_for_space_ = false;
}

void TxDma::wait_for_space(const sc_core::sc_time& timeout,
                           const sc_core::sc_event_or_list& events) {
  before_space_wait();
  sc_core::wait(timeout, events);
  waits_for_space_ = false;
}

void TxDma::send_ended(int channel, std::uint16_t sock) {
  if (queues_.count(ConnKey{channel, sock})) job_ev_.notify(sc_core::SC_ZERO_TIME);
}

std::uint64_t TxDma::bytes(int channel) const {
  return bytes_per_channel_.at(static_cast<std::size_t>(channel));
}

void TxDma::finish(const ConnKey& key, EventType type, Status status) {
  auto& q = queues_.at(key);
  TxJob& job = q.front();
  if (core::Tracer::on()) {
    auto& t = core::Tracer::instance();
    t.span(t.lane("toe", "tx_dma channel" + std::to_string(job.channel)),
           "send " + std::to_string(job.desc.length) + " B", job.started_ps, core::now_ps(), "toe");
  }
  if (type != EventType::SendDone)
    if (CcbEntry* e = ccb_.find(job.channel, job.desc.sock); e && e->conn)
      ppm_.stack().set_cork(e->conn, false, core::now_ps());
  EcqDesc ev = Ppm::event(type, job.desc.sock, status);
  ev.length = job.done;
  ev.cookie = job.desc.cookie;
  if (type != EventType::SendDone && !ccb_.find(job.channel, job.desc.sock))
    ev.flags |= kEcqSocketReleased;
  channels_[static_cast<std::size_t>(job.channel)]->post(ev);
  if (type == EventType::SendDone)
    ++contexts_;
  else
    ++faults_;
  q.pop_front();
  --queued_;
  update_parked();
  if (q.empty()) {
    auto node = queues_.extract(key);
    if (!spare_queue_) spare_queue_ = std::move(node);
    // A job failed as its burst completed: its connection leaves the rotation now.
    turn_.erase(std::remove(turn_.begin(), turn_.end(), key), turn_.end());
  }
  if (dequeued_) dequeued_();
}

void TxDma::update_parked() {
  std::size_t parked = 0;
  for (const auto& [key, q] : queues_) {
    const CcbEntry* e = ccb_.peek(key.first, key.second);
    if (e && e->conn && ppm_.stack().peer_window_closed(e->conn)) parked += q.size();
  }
  if (parked > parked_) ++window_parks_;
  // Fewer contexts count against the pool: the dispatcher may pass more in.
  if (parked > parked_ && dequeued_) dequeued_();
  parked_ = parked;
}

bool TxDma::serve(const ConnKey& key) {
  tcpip::Stack& stack = ppm_.stack();
  std::deque<TxJob>& q = queues_.at(key);
  TxJob& job = q.front();
  if (job.done == 0 && job.started_ps == 0) job.started_ps = core::now_ps();
  const bool in_flight = job.issued > job.done;
  CcbEntry* e = ccb_.find(job.channel, job.desc.sock);
  if (!e || !e->conn || e->kind != CcbEntry::Kind::Connection ||
      e->state != CcbEntry::State::Established) {
    if (in_flight) return false;  // its bursts are dropped as they complete; then it fails
    finish(key, EventType::Error, Status::BadSocket);
    return true;
  }
  if (job.done == job.desc.length) {
    finish(key, EventType::SendDone, Status::Ok);
    return true;
  }
  if (job.issued == job.desc.length) return false;  // the rest is in flight
  const tcpip::ConnId conn = e->conn;
  // Send-buffer space not yet spoken for by bursts in flight.
  std::size_t space = stack.send_space(conn);
  auto held = std::find_if(inflight_bytes_.begin(), inflight_bytes_.end(),
                           [conn](const auto& e) { return e.first == conn; });
  const std::size_t reserved = held == inflight_bytes_.end() ? 0 : held->second;
  if (space <= reserved) return false;
  space -= reserved;
  const std::uint32_t n = static_cast<std::uint32_t>(
      std::min<std::size_t>({job.desc.length - job.issued, space, burst_}));
  ControlChannel& ch = *channels_[static_cast<std::size_t>(job.channel)];
  const core::TimePs record = ccb_.touch(*e);  // the connection's send state, per burst
  // The next free slot; it joins the bursts in flight when counted.
  Burst& b = in_flight_at(in_flight_n_);
  b.key = key;
  b.seq = job.seq;
  b.conn = conn;
  b.n = n;
  b.id = 0;
  b.in_place = false;
  const std::uint64_t addr = job.desc.addr + job.issued;
  job.issued += n;
  if (held == inflight_bytes_.end())
    inflight_bytes_.emplace_back(conn, n);
  else
    held->second += n;
  if (!dma.approximately_timed()) {
    // The read lands where the bytes will be queued, after those of the connection's bursts in
    // flight, when the send buffer has them in one piece (one copy fewer); else in the burst's
    // buffer.
    std::uint8_t* dst = stack.send_place(conn, reserved, n, b.mark);
    b.in_place = dst != nullptr;
    const DmaResult res =
        dma.book(tlm::TLM_READ_COMMAND, addr, dst ? dst : b.data.data(), n, ch.sideband());
    b.ok = res.ok;
    b.done_at = core::now_ps() + record + res.delay_ps;
    ++in_flight_n_;
    in_flight_.sample(static_cast<double>(in_flight_n_));
    return true;
  }
  // Four phases: the burst joins the in-flight list first (its answer may come while this
  // thread waits for the memory system to accept the request), then the request goes out.
  b.id = ++burst_ids_;
  b.done_at = kAwaiting;
  b.ok = true;
  const std::uint64_t id = b.id;
  ++in_flight_n_;
  in_flight_.sample(static_cast<double>(in_flight_n_));
  // With one burst in flight at most, this thread only waits for the answer next: END_REQ would
  // wake it for nothing.
  dma.issue(
      tlm::TLM_READ_COMMAND, addr, b.data.data(), n, ch.sideband(),
      [this, id, record](bool ok) { answered(id, ok, record); },
      /*until_accepted=*/outstanding_ > 1);
  return true;
}

void TxDma::answered(std::uint64_t id, bool ok, core::TimePs record) {
  for (std::size_t i = 0; i < in_flight_n_; ++i) {
    Burst& b = in_flight_at(i);
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

void TxDma::deliver(Burst& b) {
  auto held = std::find_if(inflight_bytes_.begin(), inflight_bytes_.end(),
                           [&b](const auto& e) { return e.first == b.conn; });
  if (held != inflight_bytes_.end() && (held->second -= b.n) == 0) {
    *held = inflight_bytes_.back();
    inflight_bytes_.pop_back();
  }
  auto qit = queues_.find(b.key);
  if (qit == queues_.end() || qit->second.empty() || qit->second.front().seq != b.seq)
    return;  // its job has already completed or failed
  std::deque<TxJob>& q = qit->second;
  TxJob& job = q.front();
  // Orphans the job's other bursts in flight: the bytes from `done` on are read again.
  auto restart = [&]() {
    job.issued = job.done;
    job.seq = next_seq_++;
  };
  if (!b.ok) {
    restart();
    finish(b.key, EventType::Error, Status::DmaFault);
    return;
  }
  // The connection may have gone while the DMA ran: serve() fails the job.
  if (!ccb_.by_conn(b.conn)) {
    restart();
    return;
  }
  tcpip::Stack& stack = ppm_.stack();
  // Cork while more of this connection's data is known to follow, so DMA burst boundaries do
  // not end segments early; the last piece uncorks and sends what is held.
  const bool more = job.done + b.n < job.desc.length || q.size() > 1;
  const core::TimePs now = core::now_ps();
  if (more) stack.set_cork(b.conn, true, now);
  const std::size_t accepted = b.in_place ? stack.send_written(b.conn, b.mark, b.n, now)
                                          : stack.send(b.conn, b.data.data(), b.n, now);
  if (!more) stack.set_cork(b.conn, false, now);
  ppm_.stack_touched();
  job.done += static_cast<std::uint32_t>(accepted);
  bytes_ += accepted;
  bytes_per_channel_[static_cast<std::size_t>(job.channel)] += accepted;
  if (accepted < b.n) restart();  // the buffer took less than it had room for: read the rest again
}

void TxDma::run() {
  for (;;) {
    const core::TimePs now = core::now_ps();
    while (in_flight_n_ > 0 && in_flight_at(0).done_at <= now) {
      // Leaves the ring first; its slot is reused only by serve(), never during deliver().
      Burst& b = in_flight_at(0);
      if (++oldest_ == slots_.size()) oldest_ = 0;
      --in_flight_n_;
      deliver(b);
    }
    // Give each connection in turn one step; a connection whose buffer is full keeps its place
    // and the next one is tried.
    bool progress = false;
    if (in_flight_n_ < outstanding_) {
      for (std::size_t tried = 0; tried < turn_.size() && !progress;) {
        const ConnKey key = turn_.front();
        turn_.pop_front();
        progress = serve(key);
        if (queues_.count(key)) turn_.push_back(key);
        issuer_ = key;
        if (!progress) ++tried;
      }
    }
    if (progress) continue;
    if (in_flight_n_ > 0 && in_flight_at(0).done_at == kAwaiting) {
      if (in_flight_n_ >= outstanding_)
        sc_core::wait(answered_ev_);
      else
        wait_for_space(answer_space_or_job_);
    } else if (in_flight_n_ > 0) {
      const sc_core::sc_time until_oldest = core::ps(in_flight_at(0).done_at - now);
      if (in_flight_n_ >= outstanding_)
        sc_core::wait(until_oldest);
      else
        wait_for_space(until_oldest, space_or_job_);
    } else if (turn_.empty()) {
      sc_core::wait(job_ev_);
    } else {
      ++stalls_;
      update_parked();
      wait_for_space(space_or_job_);
      update_parked();
    }
  }
}

}  // namespace vtoe::toe
