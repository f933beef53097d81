#include "models/toe/control_channel.h"

#include <cstring>

#include "models/core/tracer.h"
#include "models/toe/dma_initiator.h"

namespace vtoe::toe {

ControlChannel::ControlChannel(const sc_core::sc_module_name& name, int index,
                               std::size_t outbox_limit)
    : core::Module(name),
      dma("dma"),
      index_(index),
      regs_(std::string(this->name()) + ".registers"),
      ctrl_(regs_, reg_info::kCtrl),
      status_(regs_, reg_info::kStatus),
      ring_addr_lo_(regs_, reg_info::kRingAddrLo),
      ring_addr_hi_(regs_, reg_info::kRingAddrHi),
      ring_size_(regs_, reg_info::kRingSize),
      ring_head_(regs_, reg_info::kRingHead),
      ring_tail_(regs_, reg_info::kRingTail),
      outbox_limit_(std::max<std::size_t>(outbox_limit, 1)),
      doorbells_(stats_.counter("doorbells", "host writes to a CmdQ/SendQ/RecvQ tail")),
      fetched_(stats_.counter("contexts_fetched", "contexts read from host rings")),
      completions_(stats_.counter("completions", "ECQ entries written")),
      errors_(stats_.counter("errors", "bad register programming or DMA faults")),
      ecq_full_waits_(stats_.counter("ecq_full_waits", "times the ECQ was full")),
      backlogged_(stats_.counter("backlogged",
                                 "times the completion queue reached its limit (fetching paused)")),
      outbox_depth_(stats_.accumulator("completion_queue",
                                       "completions waiting for ECQ space, sampled at each post")),
      sendq_occupancy_(
          stats_.accumulator("sendq_occupancy", "SendQ contexts waiting, mean over time")) {
  regs_.expect_all(reg_info::kChannelBank, std::size(reg_info::kChannelBank));
  ctrl_.on_write([this](unsigned, std::uint32_t value, std::uint32_t mask) {
    ctrl_.store(0, value, mask);
    update_irq();
  });
  struct RingView {
    core::Reg<std::uint32_t>* reg;
    std::uint64_t sub;
  };
  for (const RingView& v :
       {RingView{&ring_addr_lo_, reg::kRingAddrLo}, RingView{&ring_addr_hi_, reg::kRingAddrHi},
        RingView{&ring_size_, reg::kRingSize}, RingView{&ring_head_, reg::kRingHead},
        RingView{&ring_tail_, reg::kRingTail}}) {
    const std::uint64_t sub = v.sub;
    core::Reg<std::uint32_t>* r = v.reg;
    r->on_read([this, sub](unsigned ring) { return rings_[ring].read_register(sub); });
    r->on_write([this, sub](unsigned ring, std::uint32_t value, std::uint32_t mask) {
      const std::uint32_t old = rings_[ring].read_register(sub);
      ring_write(ring, sub, (old & ~mask) | (value & mask));
    });
  }
  sideband_.vm_id = 0;
  sideband_.channel = static_cast<std::uint16_t>(index);
  sideband_.stream_id = static_cast<std::uint32_t>(index);
  SC_THREAD(completion_thread);
  SC_METHOD(completion_method);
  sensitive << posted_lt_ev_;
  dont_initialize();
}

void ControlChannel::set_owner(std::uint16_t vm_id, std::uint32_t stream_id) {
  sideband_.vm_id = vm_id;
  sideband_.stream_id = stream_id;
}

void ControlChannel::latch_error(const std::string& what) {
  status_.set(status_ | reg::kStatusError);
  ++errors_;
  VTOE_LOG(log_, Warn) << what;
}

void ControlChannel::ring_write(unsigned r, std::uint64_t sub, std::uint32_t value) {
  const bool ecq = r == static_cast<unsigned>(Ring::Ecq);
  // The host owns the tail of host->TOE rings and the head of the ECQ; the rest is read-only
  // once the ring runs.
  if ((sub == reg::kRingHead && !ecq) || (sub == reg::kRingTail && ecq)) {
    latch_error("write to a TOE-owned ring index ignored");
    return;
  }
  std::string error;
  if (!rings_[r].write_register(sub, value, &error)) {
    latch_error("ring " + std::to_string(r) + ": " + error);
    return;
  }
  if (sub == reg::kRingTail) {
    ++doorbells_;
    // The tail is taken (contexts wait until CTRL.ENABLE), but a driver that rings a disabled
    // channel has lost track of it: the host is told through STATUS.ERROR.
    if (!enabled())
      latch_error("doorbell of ring " + std::to_string(r) + " while the channel is disabled");
    if (core::Tracer::on()) {
      static const char* const kNames[] = {"CmdQ doorbell", "SendQ doorbell", "RecvQ doorbell",
                                           "ECQ"};
      auto& t = core::Tracer::instance();
      t.instant(t.lane("toe", std::string(name()) + " doorbells"), kNames[r], core::now_ps(),
                "toe");
    }
    if (r == static_cast<unsigned>(Ring::Send))
      sendq_occupancy_.level(rings_[r].pending(), core::now_ps());
    if (doorbell_) doorbell_();
  } else if (ecq && sub == reg::kRingHead) {
    ecq_space_ev_.notify(sc_core::SC_ZERO_TIME);
    update_irq();
  }
}

std::uint32_t ControlChannel::fetch(Ring r, std::uint8_t* out, std::uint32_t max,
                                    core::TimePs per_context_ps) {
  RingEngine& ring = this->ring(r);
  std::uint32_t n = ring.pending_contiguous();
  if (n > max) n = max;
  if (n == 0) return 0;
  fetch_generation_[static_cast<int>(r)] = ring.generation();
  const DmaResult res = dma.transfer(tlm::TLM_READ_COMMAND, ring.entry_addr(ring.head()), out,
                                     n * kDescBytes, sideband_);
  const core::TimePs decode_ps = per_context_ps * n;
  if (res.ok && res.delay_ps > 0 && decode_ps > 0) {
    // lt: nothing but the count changes between the DMA's completion and the end of the decode
    // (the ring's head moves after it), so the thread waits once, and the contexts count from
    // their arrival on.
    fetched_.add_at(core::now_ps() + res.delay_ps, n);
    sc_core::wait(core::ps(res.delay_ps + decode_ps));
    return n;
  }
  sc_core::wait(core::ps(res.delay_ps));
  if (!res.ok) {
    latch_error("DMA fault fetching ring " + std::to_string(static_cast<int>(r)));
    ctrl_.set(ctrl_ &
              ~reg::kCtrlEnable);  // a channel whose rings point nowhere stops instead of spinning
    return 0;
  }
  fetched_ += n;
  if (decode_ps > 0) sc_core::wait(core::ps(decode_ps));
  return n;
}

void ControlChannel::consume(Ring r, std::uint32_t n) {
  RingEngine& ring = this->ring(r);
  const bool same = ring.generation() == fetch_generation_[static_cast<int>(r)];
  const std::uint32_t done = same ? ring.consume(n) : 0;
  if (done != n)
    latch_error("ring " + std::to_string(static_cast<int>(r)) + " reprogrammed or rewound while " +
                std::to_string(n) + " of its contexts were fetched: " + std::to_string(n - done) +
                " not consumed");
  if (r == Ring::Send) sendq_occupancy_.level(ring.pending(), core::now_ps());
}

void ControlChannel::post(const EcqDesc& event) {
  outbox_.push_back(event);
  outbox_depth_.sample(static_cast<double>(outbox_.size()));
  if (outbox_.size() == outbox_limit_) ++backlogged_;
  // The writer of the platform's timing mode (the other one never runs).
  (dma.approximately_timed() ? outbox_ev_ : posted_lt_ev_).notify(sc_core::SC_ZERO_TIME);
}

void ControlChannel::update_irq() {
  const RingEngine& ecq = rings_[static_cast<int>(Ring::Ecq)];
  // Level interrupt: completions are waiting until the host moves the ECQ head up to the tail.
  const bool pending = ecq.head() != ecq.tail() && (ctrl_ & reg::kCtrlIrqEnable);
  if (pending != irq_pending_) {
    irq_pending_ = pending;
    if (irq_changed_) irq_changed_();
  }
}

void ControlChannel::completion_method() {
  if (writing_) {
    writing_ = false;
    if (!write_ok_)
      latch_error("DMA fault writing the ECQ");
    else
      completion_written(written_);
  }
  for (;;) {
    if (outbox_.empty()) return;  // until posted_lt_ev_
    RingEngine& ecq = ring(Ring::Ecq);
    if (!enabled() || !ecq.configured()) {
      const bool was_backlogged = backlogged();
      outbox_.clear();
      if (was_backlogged && doorbell_) doorbell_();
      continue;
    }
    if (ecq.space() == 0) {
      ++ecq_full_waits_;
      next_trigger(ecq_space_ev_);
      return;
    }
    written_ = outbox_.front();
    outbox_.pop_front();
    if (outbox_.size() + 1 == outbox_limit_ && doorbell_) doorbell_();
    written_.valid = 1;
    const DmaResult res =
        dma.transfer(tlm::TLM_WRITE_COMMAND, ecq.entry_addr(ecq.produce_index()),
                     reinterpret_cast<std::uint8_t*>(&written_), kDescBytes, sideband_);
    writing_ = true;
    write_ok_ = res.ok;
    next_trigger(core::ps(res.delay_ps));
    return;
  }
}

void ControlChannel::completion_written(const EcqDesc& desc) {
  RingEngine& ecq = ring(Ring::Ecq);
  ecq.produce();
  ++completions_;
  if (core::Tracer::on()) {
    static const char* const kEvents[] = {"?",          "CmdDone",  "Connected",
                                          "Accepted",   "SendDone", "RxData",
                                          "PeerClosed", "Closed",   "Error"};
    auto& t = core::Tracer::instance();
    t.instant(t.lane("toe", std::string(name()) + " completions"),
              desc.type < 9 ? kEvents[desc.type] : "?", core::now_ps(), "toe");
  }
  // A channel with its interrupt disabled (a polled, user-space channel) sets no bit either.
  if (completion_written_ && (ctrl_ & reg::kCtrlIrqEnable)) completion_written_();
  update_irq();
}

void ControlChannel::completion_thread() {
  if (!dma.approximately_timed()) return;  // lt: completion_method() writes
  for (;;) {
    while (outbox_.empty()) sc_core::wait(outbox_ev_);
    RingEngine& ecq = ring(Ring::Ecq);
    if (!enabled() || !ecq.configured()) {
      // Nobody to tell; drop rather than wedge (the host reset or never set up its ECQ).
      const bool was_backlogged = backlogged();
      outbox_.clear();
      if (was_backlogged && doorbell_) doorbell_();
      continue;
    }
    if (ecq.space() == 0) {
      ++ecq_full_waits_;
      sc_core::wait(ecq_space_ev_);
      continue;
    }
    EcqDesc desc = outbox_.front();
    outbox_.pop_front();
    if (outbox_.size() + 1 == outbox_limit_ && doorbell_) doorbell_();  // fetching may resume
    desc.valid = 1;
    const DmaResult res =
        dma.transfer(tlm::TLM_WRITE_COMMAND, ecq.entry_addr(ecq.produce_index()),
                     reinterpret_cast<std::uint8_t*>(&desc), kDescBytes, sideband_);
    sc_core::wait(core::ps(res.delay_ps));
    if (!res.ok) {
      latch_error("DMA fault writing the ECQ");
      continue;
    }
    completion_written(desc);
  }
}

}  // namespace vtoe::toe
