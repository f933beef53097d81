// One TOE control channel (paper Fig. 1): the register page the host driver programs, the four
// rings in host memory (CmdQ, SendQ, RecvQ, ECQ) and the completion writer that fills the ECQ and
// raises the channel's interrupt. A native TOE has one channel; the multi-channel TOE of direct
// I/O access has one per VM.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <systemc>
#include <tlm>

#include "models/core/module.h"
#include "models/core/register.h"
#include "models/core/sideband.h"
#include "models/toe/descriptors.h"
#include "models/toe/dma_initiator.h"
#include "models/toe/ring_engine.h"

namespace vtoe::toe {

class ControlChannel : public core::Module {
 public:
  DmaInitiator dma;  // ring fetches and ECQ writes

  SC_HAS_PROCESS(ControlChannel);
  // `outbox_limit`: completions waiting for ECQ space beyond which the channel is backlogged.
  ControlChannel(const sc_core::sc_module_name& name, int index, std::size_t outbox_limit = 1024);

  int index() const { return index_; }
  // Who owns the channel: carried in the sideband of every DMA it causes.
  void set_owner(std::uint16_t vm_id, std::uint32_t stream_id);
  const core::SidebandExtension& sideband() const { return sideband_; }
  // The local address connections opened through this channel use, whatever the host asks
  // (0: as the host asks). A directly assigned channel belongs to one VM and its address.
  void set_address(std::uint32_t ip) { address_ = ip; }
  std::uint32_t address() const { return address_; }

  // The channel's register page (docs/registers.md), which the TOE maps at its channel's
  // offset. Bad programming of a register it has (a ring size that is not a power of two, a
  // write of a TOE-owned index) latches STATUS.ERROR; an access to no register is the TOE's bad
  // access.
  core::RegisterBank& registers() { return regs_; }
  std::uint32_t status() const { return status_; }

  bool enabled() const { return ctrl_ & reg::kCtrlEnable; }
  RingEngine& ring(Ring r) { return rings_[static_cast<int>(r)]; }
  std::uint32_t pending(Ring r) const {
    return enabled() ? rings_[static_cast<int>(r)].pending() : 0;
  }

  // Reads up to `max` contiguous pending contexts of a host->TOE ring into `out` (kDescBytes
  // each); returns how many, 0 on a DMA fault (which latches an error). Waits for the DMA, then
  // `per_context_ps` for each context read (the caller's time to decode them, which follows at
  // once: under lt both are one wait).
  std::uint32_t fetch(Ring r, std::uint8_t* out, std::uint32_t max,
                      core::TimePs per_context_ps = 0);
  // Moves the ring's head past `n` contexts the last fetch() of it returned. If the host
  // reprogrammed the ring since (or rewound its tail below them), the ring's indices no longer
  // describe those contexts: none (or only those still pending) are consumed and an error is
  // latched, instead of the head overtaking the tail (which made a ring of size - 1 contexts
  // the host never posted).
  void consume(Ring r, std::uint32_t n);

  // Queues a completion for the ECQ; written in order by the completion thread.
  void post(const EcqDesc& event);
  std::size_t completions_waiting() const { return outbox_.size(); }
  // A host that does not read its ECQ must not make the TOE queue completions without bound:
  // while this holds, the dispatcher fetches none of this channel's contexts (protocol events
  // of its open connections still queue, bounded by the connections it has). When the queue
  // falls below the limit again the channel rings its own doorbell to wake the dispatcher.
  bool backlogged() const { return outbox_.size() >= outbox_limit_; }

  // What results report: contexts read from host rings, ECQ entries written (totals), and the
  // SendQ contexts waiting since the last baseline, time-weighted (mean over time, max).
  std::uint64_t contexts_fetched() const { return fetched_.value(); }
  std::uint64_t completions() const { return completions_.value(); }
  const core::Accumulator& sendq_occupancy() const { return sendq_occupancy_; }

  // Interrupt state of this channel: completions written that the host has not acknowledged.
  bool irq_pending() const { return irq_pending_; }
  // Called whenever irq_pending() may have changed.
  void on_irq_change(std::function<void()> cb) { irq_changed_ = std::move(cb); }
  // Called after each completion is written to the ECQ while the channel's interrupt is enabled
  // (the interrupt bit vector's input).
  void on_completion_written(std::function<void()> cb) { completion_written_ = std::move(cb); }
  // Called when the host rings a doorbell of a host->TOE ring.
  void on_doorbell(std::function<void()> cb) { doorbell_ = std::move(cb); }

 private:
  void completion_thread();
  // lt: the same writer as a method (one DMA booking, then a timed trigger; no thread switch).
  void completion_method();
  // After an ECQ write's delay: the entry counts, the host is told.
  void completion_written(const EcqDesc& desc);
  void update_irq();
  void latch_error(const std::string& what);

  int index_;
  core::SidebandExtension sideband_;
  std::uint32_t address_ = 0;
  void ring_write(unsigned ring, std::uint64_t sub, std::uint32_t value);

  std::array<RingEngine, kRings> rings_;
  core::RegisterBank regs_;
  core::Reg<std::uint32_t> ctrl_;
  core::Reg<std::uint32_t> status_;
  // The ring registers are views of the ring engines' state.
  core::Reg<std::uint32_t> ring_addr_lo_, ring_addr_hi_, ring_size_, ring_head_, ring_tail_;
  std::array<std::uint32_t, kRings> fetch_generation_{};  // each ring's generation at fetch()
  std::deque<EcqDesc> outbox_;
  std::size_t outbox_limit_;
  bool irq_pending_ = false;
  sc_core::sc_event outbox_ev_;     // at: a completion was posted (the thread writes)
  sc_core::sc_event posted_lt_ev_;  // lt: the same for completion_method()
  bool writing_ = false;            // completion_method(): an ECQ write's delay runs
  bool write_ok_ = true;
  EcqDesc written_{};
  sc_core::sc_event ecq_space_ev_;
  std::function<void()> irq_changed_;
  std::function<void()> doorbell_;
  std::function<void()> completion_written_;
  core::Counter& doorbells_;
  core::Counter& fetched_;
  core::Counter& completions_;
  core::Counter& errors_;
  core::Counter& ecq_full_waits_;
  core::Counter& backlogged_;
  core::Accumulator& outbox_depth_;
  core::Accumulator& sendq_occupancy_;
};

}  // namespace vtoe::toe
