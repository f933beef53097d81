// TOE command dispatcher: serves the control channels' rings. Commands and receive contexts are
// served as they come; send contexts go to the Tx DMA in the order the policy chooses between
// channels (round robin here; the QoS policies of paper Fig. 4 plug in at pick_send_channel).
// A bounded number of send contexts is in the Tx DMA at once so that the policy, not the
// arrival order, decides who is served.
#pragma once

#include <cstdint>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/toe/control_channel.h"
#include "models/toe/ppm.h"
#include "models/toe/rx_dma.h"
#include "models/toe/tx_dma.h"

namespace vtoe::toe {

struct DispatcherParams {
  double device_freq_hz = 400e6;
  double cycles_per_context = 16;    // decode and route one fetched context
  std::uint32_t fetch_batch = 8;     // contexts read from a ring in one DMA burst
  std::uint32_t tx_outstanding = 4;  // send contexts queued in the Tx DMA at most
};

class Dispatcher : public core::Module {
 public:
  SC_HAS_PROCESS(Dispatcher);
  Dispatcher(const sc_core::sc_module_name& name, const DispatcherParams& params,
             std::vector<ControlChannel*> channels, Ppm& ppm, TxDma& tx, RxDma& rx);

  void doorbell() { work_ev_.notify(sc_core::SC_ZERO_TIME); }

 private:
  void run();
  bool serve_commands(ControlChannel& ch);
  bool serve_recv(ControlChannel& ch);
  bool serve_send(ControlChannel& ch);
  int pick_send_channel();

  DispatcherParams params_;
  std::vector<ControlChannel*> channels_;
  Ppm& ppm_;
  TxDma& tx_;
  RxDma& rx_;
  std::size_t rr_ = 0;
  core::TimePs context_cost_ps_;
  std::vector<std::uint8_t> buf_;
  sc_core::sc_event work_ev_;
  core::Counter& cmd_contexts_;
  core::Counter& send_contexts_;
  core::Counter& recv_contexts_;
  core::Counter& bad_contexts_;
};

}  // namespace vtoe::toe
