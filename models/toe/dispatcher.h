// TOE command dispatcher: serves the control channels' rings. Commands and receive contexts are
// served as they come; send contexts go to the Tx DMA in the order a QoS policy (FCFS, round
// robin or DWRR, paper Fig. 4) chooses between the channels' SendQ heads, each prefetched so the
// policy sees its size. A bounded number of send contexts is in the Tx DMA at once so that the
// policy, not the arrival order, decides who is served.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/toe/control_channel.h"
#include "models/toe/dispatch_policy.h"
#include "models/toe/qos_queue.h"
#include "models/toe/ppm.h"
#include "models/toe/rx_dma.h"
#include "models/toe/tx_dma.h"

namespace vtoe::toe {

struct DispatcherParams {
  double device_freq_hz = 400e6;
  double cycles_per_context = 16;    // decode and route one fetched context
  std::uint32_t fetch_batch = 8;     // contexts read from a ring in one DMA burst
  std::uint32_t tx_outstanding = 4;  // send contexts queued in the Tx DMA at most
  DispatchPolicyKind policy = DispatchPolicyKind::RoundRobin;
  std::vector<std::uint32_t> quanta;  // DWRR bytes per channel; empty = default_quantum each
  std::uint32_t default_quantum = 16000;
};

class Dispatcher : public core::Module {
 public:
  SC_HAS_PROCESS(Dispatcher);
  Dispatcher(const sc_core::sc_module_name& name, const DispatcherParams& params,
             std::vector<ControlChannel*> channels, Ppm& ppm, TxDma& tx, RxDma& rx);

  // A host rang a doorbell, or the Tx DMA took a context off its queue: the dispatcher looks
  // again in the next delta cycle, unless it waits and a pass would find nothing to do.
  void doorbell();

 private:
  void run();
  bool serve_commands(ControlChannel& ch);
  bool serve_recv(ControlChannel& ch);
  bool prefetch_send_heads();
  bool serve_send();
  // Whether a pass would serve something (the conditions run() checks, in its order).
  bool has_work() const;

  DispatcherParams params_;
  std::vector<ControlChannel*> channels_;
  Ppm& ppm_;
  TxDma& tx_;
  RxDma& rx_;
  QosQueue qos_;                     // what the policy sees of each channel's SendQ
  std::vector<SendDesc> head_desc_;  // the prefetched head contexts
  core::TimePs context_cost_ps_;
  std::vector<std::uint8_t> buf_;
  sc_core::sc_event work_ev_;
  bool idle_ = false;  // the thread waits for work_ev_ after a pass that did nothing
  core::Counter& cmd_contexts_;
  core::Counter& send_contexts_;
  core::Counter& recv_contexts_;
  core::Counter& bad_contexts_;
};

}  // namespace vtoe::toe
