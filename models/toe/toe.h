// The TCP/IP offload engine (paper Fig. 1): control channels, command dispatcher, PPM, CCB,
// Tx/Rx DMA and the MAC, behind one register target `in`, one DMA initiator `dma` (where the
// SystemMMU sits in a virtualized platform) and one interrupt line `irq`. Inside, each DMA master
// (every control channel, the Tx DMA, the Rx DMA) has its own initiator socket; a DmaHub joins
// them onto `dma` without delay.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/param.h"
#include "models/core/peripheral.h"
#include "models/net/ethernet_mac.h"
#include "models/tcpip/stack.h"
#include "models/toe/ccb.h"
#include "models/toe/control_channel.h"
#include "models/toe/dispatcher.h"
#include "models/toe/dma_hub.h"
#include "models/toe/ppm.h"
#include "models/toe/rx_dma.h"
#include "models/toe/tx_dma.h"

namespace vtoe::toe {

// How the TOE's one interrupt line is driven.
enum class IrqMode {
  Level,      // high while any channel has completions the host has not taken (native, DE)
  BitVector,  // multi-channel control unit: high while the interrupt bit vector is non-zero (DA)
};

struct ToeParams {
  int channels = 8;
  IrqMode irq_mode = IrqMode::Level;
  double bandwidth_bps = 10e9;  // MAC line rate
  double device_freq_hz = 400e6;
  std::uint32_t ccb_capacity = 256;
  std::uint32_t ccb_quota = 0;  // per VM; 0 = the capacity shared evenly (the platform applies it)
  core::TimePs ccb_access_ps = 10'000;  // 10 ns
  std::uint32_t ccb_cache = 256;        // records on chip (the rest in host memory)
  std::uint32_t ccb_record = 128;       // bytes of one record in host memory
  std::uint32_t dma_burst = 4096;       // bytes per DMA transaction
  std::uint32_t dma_outstanding = 1;    // Tx DMA burst reads in flight at once
  double reg_access_cycles = 4;         // register read/write latency on the device clock
  PpmParams ppm;
  DispatcherParams dispatcher;
  tcpip::StackConfig stack;  // addresses, MTU, buffers (Tx/Rx local buffers), timers
  std::uint32_t mac_queue_frames = 1024;
  std::size_t mac_ecn_frames = 0;  // CE-mark ECT frames at this queue depth (network.ecn_threshold)
  std::uint32_t completion_queue = 1024;  // per channel, beyond the ECQ ring (back-pressure)
  bool mac_promiscuous = false;           // the engine owns several MACs (one per guest address)
  core::TimePs rx_notify_timeout_ps = 1'000'000'000;  // 1 ms; 0 = notify only when full/asked
  bool approximately_timed = false;  // DMA in four phases (platform.timing: at; the platform's)
};

// The scenario keys that fill ToeParams, its PPM, dispatcher and protocol engine (the addresses,
// the interrupt mode and the DWRR quanta are the platform builder's).
const std::vector<core::Param<ToeParams>>& toe_params();

// Registers (docs/registers.md): the channels' pages, then the multi-channel control unit's;
// 32-bit accesses only; a bad access is counted and answered with an address error.
class Toe : public core::Peripheral {
 public:
  Socket in;
  tlm::tlm_initiator_socket<> dma;  // the DMA masters' transactions, through dma_hub_
  // The interrupt line. Bound to an IrqLine (a signal that takes writes from any process),
  // whichever process changes the level writes it, with no driver process and no delta cycle
  // in between; bound to a plain sc_signal<bool>, a driver method writes it one delta later.
  sc_core::sc_out<bool> irq;
  using IrqLine = sc_core::sc_signal<bool, sc_core::SC_UNCHECKED_WRITERS>;
  // Optional per-queue lines, one per channel (a per-queue interrupt vector, as MSI-X gives each
  // queue): channel c's is high while its bit of the interrupt vector is set (IrqMode::BitVector)
  // or while it has completions the host has not taken (IrqMode::Level); `irq` stays their OR.
  // Bind all of them (to IrqLines, written by whichever process changes them) or none.
  using QueueIrqPort =
      sc_core::sc_port<sc_core::sc_signal_inout_if<bool>, 1, sc_core::SC_ZERO_OR_MORE_BOUND>;
  sc_core::sc_vector<QueueIrqPort> queue_irq;

  SC_HAS_PROCESS(Toe);
  Toe(const sc_core::sc_module_name& name, const ToeParams& params);
  ~Toe() override;

  net::EthernetMac& mac() { return *mac_; }
  Ppm& ppm() { return *ppm_; }
  Ccb& ccb() { return *ccb_; }
  ControlChannel& channel(int i) { return *channels_.at(static_cast<std::size_t>(i)); }
  int channel_count() const { return static_cast<int>(channels_.size()); }
  std::uint64_t tx_bytes() const;  // payload read from hosts (all channels)
  std::uint64_t rx_bytes() const;  // payload written to hosts (all channels)
  TxDma& tx_dma() { return *tx_dma_; }
  std::uint32_t irq_vector() const { return irq_vector_; }
  RxDma& rx_dma() { return *rx_dma_; }

 private:
  void update_irq();
  void update_queue_irqs();
  void drive_irq();
  void end_of_elaboration() override;

  ToeParams params_;
  DmaHub dma_hub_;
  std::vector<std::unique_ptr<ControlChannel>> channels_;
  std::unique_ptr<Ccb> ccb_;
  std::unique_ptr<net::EthernetMac> mac_;
  std::unique_ptr<Ppm> ppm_;
  std::unique_ptr<TxDma> tx_dma_;
  std::unique_ptr<RxDma> rx_dma_;
  std::unique_ptr<Dispatcher> dispatcher_;
  bool irq_level_ = false;
  bool irq_direct_ = false;       // irq is bound to an IrqLine
  std::uint32_t irq_vector_ = 0;  // multi-channel control unit (IrqMode::BitVector)
  int irq_pending_channels_ = 0;  // channels whose irq_pending() holds (IrqMode::Level)
  bool queue_irqs_bound_ = false;
  std::vector<bool> queue_level_;  // per channel: the level its queue_irq line was written to
  sc_core::sc_event irq_ev_;
  core::RegisterBank control_unit_;
  core::Reg<std::uint32_t> irq_vector_reg_;
  core::Reg<std::uint32_t> channel_count_reg_;
};

}  // namespace vtoe::toe
