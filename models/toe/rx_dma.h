// Receive DMA (paper §2.2): moves in-order payload from the Rx local buffer (the protocol
// connection's receive buffer) into the socket's kernel receive buffer in host memory, and tells
// the host with an RxData completion when that buffer is full, or at once when a RecvQ context
// asked to be told (the host is waiting), or when the peer closed and the last byte is in, or
// when data has waited unreported for the notification timeout (interrupt moderation, so a
// buffer that never fills is not stranded).
#pragma once

#include <cstdint>
#include <deque>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "models/core/module.h"
#include "models/toe/dma_initiator.h"
#include "models/toe/ccb.h"
#include "models/toe/control_channel.h"
#include "models/toe/ppm.h"

namespace vtoe::toe {

class RxDma : public core::Module {
 public:
  DmaInitiator dma;  // payload writes to host memory

  SC_HAS_PROCESS(RxDma);
  RxDma(const sc_core::sc_module_name& name, Ppm& ppm, Ccb& ccb,
        std::vector<ControlChannel*> channels, std::uint32_t burst_bytes,
        core::TimePs notify_timeout_ps);

  // Connection has data (or a FIN) to move.
  void kick(tcpip::ConnId conn);
  // A RecvQ context for a socket: space handed back and/or a request to be told at once.
  void recv_context(int channel, const RecvDesc& desc);
  std::uint64_t bytes(int channel) const;

 private:
  void run();
  void maybe_notify(CcbEntry& e, bool timed_out = false);
  void arm_timer(CcbEntry& e);
  void timer_expired();

  Ppm& ppm_;
  Ccb& ccb_;
  std::vector<ControlChannel*> channels_;
  std::uint32_t burst_;
  std::deque<tcpip::ConnId> work_;
  std::vector<std::uint8_t> staging_;
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
