// Transmit DMA (paper Fig. 1): takes SendQ contexts from the dispatcher, reads their payload from
// host memory into the Tx local buffer (the protocol connection's send buffer) in bursts as space
// frees up, and completes each context with SendDone once all of it is in the TOE.
// Contexts wait in one queue per connection (channel, socket), served in order within it; the
// connections take turns a burst at a time, and one whose send buffer is full is skipped, so a
// stalled peer holds up only its own connection (no head-of-line blocking across connections,
// channels or VMs).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <utility>
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
  std::size_t queued() const { return queued_; }
  // Something left the queue (the dispatcher may fetch more).
  const sc_core::sc_event& dequeued_event() const { return dequeued_ev_; }
  void space_freed() { space_ev_.notify(sc_core::SC_ZERO_TIME); }
  std::uint64_t bytes(int channel) const;

 private:
  using ConnKey = std::pair<int, std::uint16_t>;  // (channel, socket)

  void run();
  // One step for the head context of `key`'s queue: a burst, a completion or a failure. False when
  // the connection has no send-buffer space (nothing was done).
  bool serve(const ConnKey& key);
  void finish(const ConnKey& key, EventType type, Status status);

  Ppm& ppm_;
  Ccb& ccb_;
  std::vector<ControlChannel*> channels_;
  std::uint32_t burst_;
  std::map<ConnKey, std::deque<TxJob>> queues_;
  std::deque<ConnKey> turn_;  // connections with queued contexts, next to serve first
  std::size_t queued_ = 0;
  std::vector<std::uint8_t> staging_;
  std::vector<std::uint64_t> bytes_per_channel_;
  sc_core::sc_event job_ev_, space_ev_, dequeued_ev_;
  core::Counter& bytes_;
  core::Counter& contexts_;
  core::Counter& faults_;
  core::Counter& stalls_;
};

}  // namespace vtoe::toe
