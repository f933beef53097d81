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
  jobs_.push_back(job);
  job_ev_.notify(sc_core::SC_ZERO_TIME);
}

std::uint64_t TxDma::bytes(int channel) const {
  return bytes_per_channel_.at(static_cast<std::size_t>(channel));
}

bool TxDma::more_queued_for(const TxJob& job) const {
  for (std::size_t i = 1; i < jobs_.size(); ++i)
    if (jobs_[i].channel == job.channel && jobs_[i].desc.sock == job.desc.sock) return true;
  return false;
}

void TxDma::finish(TxJob& job, EventType type, Status status) {
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
  channels_[static_cast<std::size_t>(job.channel)]->post(ev);
  if (type == EventType::SendDone)
    ++contexts_;
  else
    ++faults_;
  jobs_.pop_front();
  dequeued_ev_.notify(sc_core::SC_ZERO_TIME);
}

void TxDma::run() {
  tcpip::Stack& stack = ppm_.stack();
  for (;;) {
    while (jobs_.empty()) sc_core::wait(job_ev_);
    TxJob& job = jobs_.front();
    if (job.done == 0 && job.started_ps == 0) job.started_ps = core::now_ps();
    CcbEntry* e = ccb_.find(job.channel, job.desc.sock);
    if (!e || !e->conn || e->kind != CcbEntry::Kind::Connection ||
        e->state != CcbEntry::State::Established) {
      finish(job, EventType::Error, Status::BadSocket);
      continue;
    }
    if (job.done == job.desc.length) {
      finish(job, EventType::SendDone, Status::Ok);
      continue;
    }
    const std::size_t space = stack.send_space(e->conn);
    if (space == 0) {
      ++stalls_;
      sc_core::wait(space_ev_);
      continue;
    }
    const tcpip::ConnId conn = e->conn;
    const std::uint32_t n = static_cast<std::uint32_t>(
        std::min<std::size_t>({job.desc.length - job.done, space, burst_}));
    ControlChannel& ch = *channels_[static_cast<std::size_t>(job.channel)];
    const DmaResult res = dma_transfer(dma, tlm::TLM_READ_COMMAND, job.desc.addr + job.done,
                                       staging_.data(), n, ch.sideband());
    sc_core::wait(core::ps(res.delay_ps));
    if (!res.ok) {
      finish(job, EventType::Error, Status::DmaFault);
      continue;
    }
    // The connection may have gone while the DMA ran.
    if (!ccb_.by_conn(conn)) continue;
    // Cork while more of this connection's data is known to follow, so DMA burst boundaries do
    // not end segments early; the last piece uncorks and sends what is held.
    const bool more = job.done + n < job.desc.length || more_queued_for(job);
    const core::TimePs now = core::now_ps();
    if (more) stack.set_cork(conn, true, now);
    const std::size_t accepted = stack.send(conn, staging_.data(), n, now);
    if (!more) stack.set_cork(conn, false, now);
    ppm_.stack_touched();
    job.done += static_cast<std::uint32_t>(accepted);
    bytes_ += accepted;
    bytes_per_channel_[static_cast<std::size_t>(job.channel)] += accepted;
  }
}

}  // namespace vtoe::toe
