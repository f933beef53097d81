// Transmit DMA (paper Fig. 1): takes SendQ contexts from the dispatcher, reads their payload from
// host memory into the Tx local buffer (the protocol connection's send buffer) in bursts as space
// frees up, and completes each context with SendDone once all of it is in the TOE.
#pragma once

#include <cstdint>
#include <deque>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "models/core/module.h"
#include "models/toe/ccb.h"
#include "models/toe/control_channel.h"
#include "models/toe/ppm.h"

namespace vtoe::toe {

struct TxJob {
  int channel = 0;
  SendDesc desc{};
  std::uint32_t done = 0;
  core::TimePs started_ps = 0;  // when the Tx DMA began it (timeline traces)
};

class TxDma : public core::Module {
 public:
  tlm_utils::simple_initiator_socket<TxDma> dma;  // payload reads from host memory

  SC_HAS_PROCESS(TxDma);
  TxDma(const sc_core::sc_module_name& name, Ppm& ppm, Ccb& ccb,
        std::vector<ControlChannel*> channels, std::uint32_t burst_bytes);

  void enqueue(const TxJob& job);
  std::size_t queued() const { return jobs_.size(); }
  // Something left the queue (the dispatcher may fetch more).
  const sc_core::sc_event& dequeued_event() const { return dequeued_ev_; }
  void space_freed() { space_ev_.notify(sc_core::SC_ZERO_TIME); }
  std::uint64_t bytes(int channel) const;

 private:
  void run();
  void finish(TxJob& job, EventType type, Status status);
  bool more_queued_for(const TxJob& job) const;  // another queued context for the same socket

  Ppm& ppm_;
  Ccb& ccb_;
  std::vector<ControlChannel*> channels_;
  std::uint32_t burst_;
  std::deque<TxJob> jobs_;
  std::vector<std::uint8_t> staging_;
  std::vector<std::uint64_t> bytes_per_channel_;
  sc_core::sc_event job_ev_, space_ev_, dequeued_ev_;
  core::Counter& bytes_;
  core::Counter& contexts_;
  core::Counter& faults_;
  core::Counter& stalls_;
};

}  // namespace vtoe::toe
