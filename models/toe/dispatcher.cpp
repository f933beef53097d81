#include "models/toe/dispatcher.h"

#include <cstring>

namespace vtoe::toe {

namespace {
// Largest payload one SendQ context may describe; larger ones are refused as hostile.
constexpr std::uint32_t kMaxSendLength = 16u << 20;
}  // namespace

Dispatcher::Dispatcher(const sc_core::sc_module_name& name, const DispatcherParams& params,
                       std::vector<ControlChannel*> channels, Ppm& ppm, TxDma& tx, RxDma& rx)
    : core::Module(name),
      params_(params),
      channels_(std::move(channels)),
      ppm_(ppm),
      tx_(tx),
      rx_(rx),
      context_cost_ps_(core::cycles_to_ps(params.cycles_per_context, params.device_freq_hz)),
      buf_(static_cast<std::size_t>(std::max<std::uint32_t>(params.fetch_batch, 1)) * kDescBytes),
      cmd_contexts_(stats_.counter("cmd_contexts", "CmdQ contexts served")),
      send_contexts_(stats_.counter("send_contexts", "SendQ contexts passed to the Tx DMA")),
      recv_contexts_(stats_.counter("recv_contexts", "RecvQ contexts served")),
      bad_contexts_(stats_.counter("bad_contexts", "malformed contexts refused")) {
  SC_THREAD(run);
}

bool Dispatcher::serve_commands(ControlChannel& ch) {
  if (!ch.pending(Ring::Cmd)) return false;
  const std::uint32_t n = ch.fetch(Ring::Cmd, buf_.data(), params_.fetch_batch);
  for (std::uint32_t i = 0; i < n; ++i) {
    CmdDesc cmd;
    std::memcpy(&cmd, buf_.data() + i * kDescBytes, kDescBytes);
    ++cmd_contexts_;
    ppm_.execute_command(ch, cmd);
  }
  ch.consume(Ring::Cmd, n);
  return n > 0;
}

bool Dispatcher::serve_recv(ControlChannel& ch) {
  if (!ch.pending(Ring::Recv)) return false;
  const std::uint32_t n = ch.fetch(Ring::Recv, buf_.data(), params_.fetch_batch);
  if (n) sc_core::wait(core::ps(context_cost_ps_ * n));
  for (std::uint32_t i = 0; i < n; ++i) {
    RecvDesc desc;
    std::memcpy(&desc, buf_.data() + i * kDescBytes, kDescBytes);
    ++recv_contexts_;
    rx_.recv_context(ch.index(), desc);
  }
  ch.consume(Ring::Recv, n);
  return n > 0;
}

bool Dispatcher::serve_send(ControlChannel& ch) {
  std::uint8_t raw[kDescBytes];
  if (ch.fetch(Ring::Send, raw, 1) != 1) return false;
  sc_core::wait(core::ps(context_cost_ps_));
  TxJob job;
  job.channel = ch.index();
  std::memcpy(&job.desc, raw, kDescBytes);
  ch.consume(Ring::Send, 1);
  if (job.desc.length == 0 || job.desc.length > kMaxSendLength) {
    ++bad_contexts_;
    EcqDesc ev = Ppm::event(EventType::Error, job.desc.sock, Status::BadDescriptor);
    ev.cookie = job.desc.cookie;
    ch.post(ev);
    return true;
  }
  ++send_contexts_;
  tx_.enqueue(job);
  return true;
}

int Dispatcher::pick_send_channel() {
  const std::size_t n = channels_.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = (rr_ + i) % n;
    if (channels_[c]->pending(Ring::Send)) {
      rr_ = (c + 1) % n;
      return static_cast<int>(c);
    }
  }
  return -1;
}

void Dispatcher::run() {
  for (;;) {
    bool progress = false;
    for (ControlChannel* ch : channels_) {
      progress |= serve_commands(*ch);
      progress |= serve_recv(*ch);
    }
    if (tx_.queued() < params_.tx_outstanding) {
      const int c = pick_send_channel();
      if (c >= 0) progress |= serve_send(*channels_[static_cast<std::size_t>(c)]);
    }
    if (!progress) sc_core::wait(work_ev_ | tx_.dequeued_event());
  }
}

}  // namespace vtoe::toe
