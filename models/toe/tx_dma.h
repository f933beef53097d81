// Transmit DMA (paper Fig. 1): takes SendQ contexts from the dispatcher, reads their payload from
// host memory into the Tx local buffer (the protocol connection's send buffer) in bursts as space
// frees up, and completes each context with SendDone once all of it is in the TOE.
// Contexts wait in one queue per connection (channel, socket), served in order within it; the
// connections take turns a burst at a time, and one whose send buffer is full is skipped, so a
// stalled peer holds up only its own connection (no head-of-line blocking across connections,
// channels or VMs).
// Up to `outstanding` burst reads are in flight at once (issued without waiting for the previous
// one's completion; the memory system's contention sets when each completes); completed bursts
// enter the send buffer in the order they were issued.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <systemc>
#include <tlm>
#include <utility>
#include <vector>

#include "models/core/module.h"
#include "models/toe/ccb.h"
#include "models/toe/control_channel.h"
#include "models/toe/dma_initiator.h"
#include "models/toe/ppm.h"

namespace vtoe::toe {

struct TxJob {
  int channel = 0;
  SendDesc desc{};
  std::uint32_t done = 0;       // bytes in the send buffer
  std::uint32_t issued = 0;     // bytes read or being read (done + in flight)
  std::uint64_t seq = 0;        // identifies the job's bursts in flight (renewed to orphan them)
  core::TimePs started_ps = 0;  // when the Tx DMA began it (timeline traces)
};

class TxDma : public core::Module {
 public:
  DmaInitiator dma;  // payload reads from host memory

  SC_HAS_PROCESS(TxDma);
  TxDma(const sc_core::sc_module_name& name, Ppm& ppm, Ccb& ccb,
        std::vector<ControlChannel*> channels, std::uint32_t burst_bytes,
        std::uint32_t outstanding = 1);

  void enqueue(const TxJob& job);
  std::size_t queued() const { return queued_; }
  // Contexts that count against the dispatcher's pool (toe.dispatcher.depth): all but those of
  // connections whose peer advertises a zero window. Those wait for the peer's application,
  // which may never read; counted, a few such peers would hold every slot and stop every other
  // connection's and VM's sends behind them.
  std::size_t active() const { return queued_ - parked_; }
  // Called when something left the queue or fewer contexts count against the pool (the
  // dispatcher may pass more in).
  void on_dequeued(std::function<void()> cb) { dequeued_ = std::move(cb); }
  // Send-buffer space may have been freed (every acknowledgment): wakes the thread if it waits
  // for space.
  void space_freed();
  // The socket's connection is closing or gone: its queued contexts fail (a context waiting
  // for send space would otherwise wait for an acknowledgment that never comes).
  void send_ended(int channel, std::uint16_t sock);
  std::uint64_t bytes(int channel) const;
  std::uint32_t outstanding() const { return outstanding_; }

 private:
  using ConnKey = std::pair<int, std::uint16_t>;  // (channel, socket)
  struct Burst {
    ConnKey key;
    std::uint64_t seq = 0;
    tcpip::ConnId conn = 0;
    std::uint64_t id = 0;      // matches the memory system's answer to the burst (at)
    core::TimePs done_at = 0;  // kAwaiting until the answer has come (at)
    bool ok = true;
    std::uint32_t n = 0;
    std::vector<std::uint8_t> data;
    // LT: read straight into the connection's send buffer (queued as written on completion)
    // rather than into `data`.
    bool in_place = false;
    tcpip::SendMark mark;
  };

  void run();
  // One step for the head context of `key`'s queue: a burst issued, a completion or a failure.
  // False when nothing could be done (no send-buffer space, or all of it already in flight).
  bool serve(const ConnKey& key);
  // A completed burst: its bytes go into the send buffer (or it is dropped if its job has gone).
  void deliver(Burst& b);
  void finish(const ConnKey& key, EventType type, Status status);
  // Recounts the contexts of connections whose peer window is closed; tells the dispatcher
  // when fewer count against its pool.
  void update_parked();
  // The memory system's answer to burst `id` (at): it completes `record` later (the CCB access).
  void answered(std::uint64_t id, bool ok, core::TimePs record);
  // The thread's waits that space_ev_ ends.
  void wait_for_space(const sc_core::sc_event_or_list& events);
  void wait_for_space(const sc_core::sc_time& timeout, const sc_core::sc_event_or_list& events);
  void before_space_wait();

  static constexpr core::TimePs kAwaiting = ~core::TimePs{0};

  Ppm& ppm_;
  Ccb& ccb_;
  std::vector<ControlChannel*> channels_;
  std::uint32_t burst_;
  std::uint32_t outstanding_;
  using Queues = std::map<ConnKey, std::deque<TxJob>>;
  Queues queues_;
  // A queue that emptied, kept with its node and deque to be the next new one (no allocation
  // per context when connections take turns one context at a time).
  Queues::node_type spare_queue_;
  // The bursts in flight, in issue order: a ring of `outstanding` slots that keep their data
  // buffers (no allocation, no move of a burst per issue).
  std::vector<Burst> slots_;
  std::size_t oldest_ = 0;       // slot of the oldest burst in flight
  std::size_t in_flight_n_ = 0;  // bursts in flight
  Burst& in_flight_at(std::size_t i) {
    std::size_t s = oldest_ + i;
    if (s >= slots_.size()) s -= slots_.size();
    return slots_[s];
  }
  // Send space the bursts in flight will use, per connection: at most `outstanding` entries,
  // searched in place.
  std::vector<std::pair<tcpip::ConnId, std::uint32_t>> inflight_bytes_;
  std::uint64_t next_seq_ = 1;
  std::deque<ConnKey> turn_;  // connections with queued contexts, next to serve first
  ConnKey issuer_{-1, 0};     // the connection served last (see enqueue())
  std::size_t queued_ = 0;
  std::size_t parked_ = 0;  // of queued_, on connections whose peer window is closed
  std::vector<std::uint64_t> bytes_per_channel_;
  sc_core::sc_event job_ev_, space_ev_, answered_ev_;
  std::function<void()> dequeued_;
  // The thread's waits on several events, built once (a temporary `a | b` allocates per wait).
  sc_core::sc_event_or_list space_or_job_, answer_space_or_job_;
  std::uint64_t burst_ids_ = 0;
  // A delta notification of space_ev_ wakes only a thread that waits for it then: while the
  // thread waits for something else, space_freed() notifies nothing (one per acknowledgment,
  // nearly always in vain) but remembers the delta cycle, so that a thread which starts waiting
  // for space in that same delta cycle is still woken in the next one.
  bool waits_for_space_ = false;
  std::uint64_t space_freed_delta_ = ~std::uint64_t{0};
  core::Counter& bytes_;
  core::Counter& contexts_;
  core::Counter& faults_;
  core::Counter& stalls_;
  core::Counter& window_parks_;
  core::Accumulator& in_flight_;
};

}  // namespace vtoe::toe
