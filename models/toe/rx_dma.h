// Receive DMA (paper §2.2): moves in-order payload from the Rx local buffer (the protocol
// connection's receive buffer) into the socket's kernel receive buffer in host memory, and tells
// the host with an RxData completion when that buffer is full, or at once when a RecvQ context
// asked to be told (the host is waiting), or when the peer closed and the last byte is in, or
// when data has waited unreported for the notification timeout (interrupt moderation, so a
// buffer that never fills is not stranded).
// Up to `outstanding` burst writes of one connection are in flight at once; they complete into
// the host buffer in the order they were issued.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <deque>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/module.h"
#include "models/toe/ccb.h"
#include "models/toe/control_channel.h"
#include "models/toe/dma_initiator.h"
#include "models/toe/ppm.h"

namespace vtoe::toe {

class RxDma : public core::Module {
 public:
  DmaInitiator dma;  // payload writes to host memory

  SC_HAS_PROCESS(RxDma);
  RxDma(const sc_core::sc_module_name& name, Ppm& ppm, Ccb& ccb,
        std::vector<ControlChannel*> channels, std::uint32_t burst_bytes,
        core::TimePs notify_timeout_ps, std::uint32_t outstanding = 1);

  // Connection has data (or a FIN) to move.
  void kick(tcpip::ConnId conn);
  // A RecvQ context for a socket: space handed back and/or a request to be told at once.
  void recv_context(int channel, const RecvDesc& desc);
  std::uint64_t bytes(int channel) const;

 private:
  struct Burst {
    std::uint64_t id = 0;      // matches the memory system's answer (at)
    core::TimePs done_at = 0;  // kAwaiting until the answer has come (at)
    bool ok = true;
    int channel = 0;
    std::uint32_t n = 0;
    std::vector<std::uint8_t> data;
  };
  static constexpr core::TimePs kAwaiting = ~core::TimePs{0};

  void run();
  // Moves what `conn` has into its host buffer, up to `outstanding_` burst writes in flight,
  // completing them in order; returns when nothing more can move.
  void drain(tcpip::ConnId conn, CcbEntry* e);
  // The memory system's answer to burst `id` (at): it completes `record` later (the CCB access).
  void answered(std::uint64_t id, bool ok, core::TimePs record);
  void maybe_notify(CcbEntry& e, bool timed_out = false);
  void arm_timer(CcbEntry& e);
  void timer_expired();

  Ppm& ppm_;
  Ccb& ccb_;
  std::vector<ControlChannel*> channels_;
  std::uint32_t burst_;
  std::deque<tcpip::ConnId> work_;
  std::uint32_t outstanding_;
  std::deque<Burst> inflight_;  // issue order
  std::vector<std::vector<std::uint8_t>> spare_;
  std::uint64_t burst_ids_ = 0;
  sc_core::sc_event answered_ev_;
  std::vector<std::uint64_t> bytes_per_channel_;
  sc_core::sc_event work_ev_;
  core::TimePs timeout_ps_;
  std::deque<std::pair<core::TimePs, tcpip::ConnId>> timers_;  // deadlines, in order
  sc_core::sc_event timer_ev_;
  core::Counter& bytes_;
  core::Counter& notifications_;
  core::Counter& timeouts_;
  core::Counter& host_full_;
  core::Counter& bad_contexts_;
};

}  // namespace vtoe::toe
