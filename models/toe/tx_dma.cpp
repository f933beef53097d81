#include "models/toe/tx_dma.h"

#include <algorithm>

#include "models/core/tracer.h"
#include "models/toe/dma_port.h"

namespace vtoe::toe {

TxDma::TxDma(const sc_core::sc_module_name& name, Ppm& ppm, Ccb& ccb,
             std::vector<ControlChannel*> channels, std::uint32_t burst_bytes)
    : core::Module(name),
      dma("dma"),
      ppm_(ppm),
      ccb_(ccb),
      channels_(std::move(channels)),
      burst_(std::max<std::uint32_t>(burst_bytes, 64)),
      staging_(burst_),
      bytes_per_channel_(channels_.size(), 0),
      bytes_(stats_.counter("bytes", "payload bytes read from host memory")),
      contexts_(stats_.counter("contexts", "SendQ contexts completed")),
      faults_(stats_.counter("faults", "contexts failed by DMA faults or bad sockets")),
      stalls_(stats_.counter("buffer_full_stalls", "waits for Tx local buffer space")) {
  SC_THREAD(run);
}

void TxDma::enqueue(const TxJob& job) {
  const ConnKey key{job.channel, job.desc.sock};
  auto& q = queues_[key];
  if (q.empty()) turn_.push_back(key);
  q.push_back(job);
  ++queued_;
  job_ev_.notify(sc_core::SC_ZERO_TIME);
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
  if (q.empty()) queues_.erase(key);
  dequeued_ev_.notify(sc_core::SC_ZERO_TIME);
}

bool TxDma::serve(const ConnKey& key) {
  tcpip::Stack& stack = ppm_.stack();
  std::deque<TxJob>& q = queues_.at(key);
  TxJob& job = q.front();
  if (job.done == 0 && job.started_ps == 0) job.started_ps = core::now_ps();
  CcbEntry* e = ccb_.find(job.channel, job.desc.sock);
  if (!e || !e->conn || e->kind != CcbEntry::Kind::Connection ||
      e->state != CcbEntry::State::Established) {
    finish(key, EventType::Error, Status::BadSocket);
    return true;
  }
  if (job.done == job.desc.length) {
    finish(key, EventType::SendDone, Status::Ok);
    return true;
  }
  const std::size_t space = stack.send_space(e->conn);
  if (space == 0) return false;
  const tcpip::ConnId conn = e->conn;
  const std::uint32_t n =
      static_cast<std::uint32_t>(std::min<std::size_t>({job.desc.length - job.done, space, burst_}));
  ControlChannel& ch = *channels_[static_cast<std::size_t>(job.channel)];
  const core::TimePs record = ccb_.touch(*e);  // the connection's send state, per burst
  const DmaResult res = dma_transfer(dma, tlm::TLM_READ_COMMAND, job.desc.addr + job.done,
                                     staging_.data(), n, ch.sideband());
  sc_core::wait(core::ps(record + res.delay_ps));
  // While the DMA ran, the context may have been failed (its connection went) by nobody else: only
  // this thread pops queues, so `q` and `job` are still valid.
  if (!res.ok) {
    finish(key, EventType::Error, Status::DmaFault);
    return true;
  }
  // The connection may have gone while the DMA ran.
  if (!ccb_.by_conn(conn)) return true;
  // Cork while more of this connection's data is known to follow, so DMA burst boundaries do
  // not end segments early; the last piece uncorks and sends what is held.
  const bool more = job.done + n < job.desc.length || q.size() > 1;
  const core::TimePs now = core::now_ps();
  if (more) stack.set_cork(conn, true, now);
  const std::size_t accepted = stack.send(conn, staging_.data(), n, now);
  if (!more) stack.set_cork(conn, false, now);
  ppm_.stack_touched();
  job.done += static_cast<std::uint32_t>(accepted);
  bytes_ += accepted;
  bytes_per_channel_[static_cast<std::size_t>(job.channel)] += accepted;
  return true;
}

void TxDma::run() {
  for (;;) {
    while (turn_.empty()) sc_core::wait(job_ev_);
    // Give each connection in turn one step; a connection whose buffer is full keeps its place
    // and the next one is tried.
    bool progress = false;
    for (std::size_t tried = 0; tried < turn_.size() && !progress;) {
      const ConnKey key = turn_.front();
      turn_.pop_front();
      progress = serve(key);
      if (queues_.count(key)) turn_.push_back(key);
      if (!progress) ++tried;
    }
    if (!progress) {
      ++stalls_;
      sc_core::wait(space_ev_ | job_ev_);
    }
  }
}

}  // namespace vtoe::toe
