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
      qos_(params.policy, channels_.size(), params.quanta, params.default_quantum),
      context_cost_ps_(core::cycles_to_ps(params.cycles_per_context, params.device_freq_hz)),
      buf_(static_cast<std::size_t>(std::max<std::uint32_t>(params.fetch_batch, 1)) * kDescBytes),
      cmd_contexts_(stats_.counter("cmd_contexts", "CmdQ contexts served")),
      send_contexts_(stats_.counter("send_contexts", "SendQ contexts passed to the Tx DMA")),
      recv_contexts_(stats_.counter("recv_contexts", "RecvQ contexts served")),
      bad_contexts_(stats_.counter("bad_contexts", "malformed contexts refused")) {
  head_desc_.resize(channels_.size());
  tx_.on_dequeued([this]() { doorbell(); });
  SC_THREAD(run);
}

void Dispatcher::doorbell() {
  if (!idle_ || has_work()) {
    work_ev_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  // The pass it would make (a context leaving the Tx DMA while no SendQ head waits, as after
  // nearly every context of one sender) would change nothing but what the policy does when
  // asked with every queue empty (DWRR forgets idle queues' deficits): that much is done here.
  if (tx_.active() < params_.tx_outstanding) qos_.pick();
}

bool Dispatcher::has_work() const {
  for (std::size_t c = 0; c < channels_.size(); ++c) {
    const ControlChannel& ch = *channels_[c];
    if (!ch.enabled()) continue;
    const bool pending = ch.pending(Ring::Cmd) || ch.pending(Ring::Recv) ||
                         (!qos_.has_head(c) && ch.pending(Ring::Send));
    if (pending && !ch.backlogged()) return true;
  }
  if (tx_.active() >= params_.tx_outstanding) return false;
  for (std::size_t c = 0; c < channels_.size(); ++c)
    if (qos_.has_head(c)) return true;
  return false;
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
  const std::uint32_t n = ch.fetch(Ring::Recv, buf_.data(), params_.fetch_batch, context_cost_ps_);
  for (std::uint32_t i = 0; i < n; ++i) {
    RecvDesc desc;
    std::memcpy(&desc, buf_.data() + i * kDescBytes, kDescBytes);
    ++recv_contexts_;
    rx_.recv_context(ch.index(), desc);
  }
  ch.consume(Ring::Recv, n);
  return n > 0;
}

// Reads the head SendQ context of every channel that has one pending and none prefetched.
// Malformed contexts are refused here, before they can take a turn.
bool Dispatcher::prefetch_send_heads() {
  bool progress = false;
  for (std::size_t c = 0; c < channels_.size(); ++c) {
    ControlChannel& ch = *channels_[c];
    if (!ch.enabled() || qos_.has_head(c) || !ch.pending(Ring::Send) || ch.backlogged()) continue;
    std::uint8_t raw[kDescBytes];
    if (ch.fetch(Ring::Send, raw, 1, context_cost_ps_) != 1) continue;
    ch.consume(Ring::Send, 1);
    progress = true;
    SendDesc desc;
    std::memcpy(&desc, raw, kDescBytes);
    if (desc.length == 0 || desc.length > kMaxSendLength) {
      ++bad_contexts_;
      EcqDesc ev = Ppm::event(EventType::Error, desc.sock, Status::BadDescriptor);
      ev.cookie = desc.cookie;
      ch.post(ev);
      continue;
    }
    head_desc_[c] = desc;
    qos_.set_head(c, desc.length, qos_.next_arrival());
  }
  return progress;
}

// Moves the send context the policy picks to the Tx DMA.
bool Dispatcher::serve_send() {
  const int c = qos_.pick();
  if (c < 0) return false;
  TxJob job;
  job.channel = c;
  job.desc = head_desc_[static_cast<std::size_t>(c)];
  qos_.served(c, job.desc.length);
  qos_.clear_head(static_cast<std::size_t>(c));
  ++send_contexts_;
  tx_.enqueue(job);
  return true;
}

void Dispatcher::run() {
  for (;;) {
    bool progress = false;
    for (ControlChannel* ch : channels_) {
      // A disabled channel has nothing pending (most of a native TOE's eight): skipped first.
      if (!ch->enabled()) continue;
      if (ch->backlogged()) continue;  // its host is not reading completions: fetch nothing
      progress |= serve_commands(*ch);
      progress |= serve_recv(*ch);
    }
    progress |= prefetch_send_heads();
    if (tx_.active() < params_.tx_outstanding) progress |= serve_send();
    if (!progress) {
      idle_ = true;
      sc_core::wait(work_ev_);
      idle_ = false;
    }
  }
}

}  // namespace vtoe::toe
