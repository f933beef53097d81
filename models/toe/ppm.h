// Protocol processing module (paper Fig. 1): the TOE's TCP/UDP/IPv4/ICMP/ARP engine. The protocol
// logic is the plain C++ tcpip::Stack; this module gives it time (a per-frame processing cost on
// the device clock in each direction, CCB access latency, protocol timers), executes CmdQ
// contexts, and turns protocol events into ECQ completions.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/net/ethernet_mac.h"
#include "models/net/frame.h"
#include "models/toe/ccb.h"
#include "models/toe/control_channel.h"
#include "models/toe/descriptors.h"
#include "models/tcpip/stack.h"

namespace vtoe::toe {

struct PpmParams {
  double device_freq_hz = 400e6;
  double tx_cycles_per_frame = 64;  // header generation, checksum offload, queueing
  double rx_cycles_per_frame = 64;  // parse, CCB lookup, reassembly bookkeeping
  double cycles_per_command = 32;   // executing one CmdQ context
};

class Ppm : public core::Module, public tcpip::StackListener, public net::FrameSink {
 public:
  SC_HAS_PROCESS(Ppm);
  Ppm(const sc_core::sc_module_name& name, const PpmParams& params,
      const tcpip::StackConfig& stack_config, Ccb& ccb, net::EthernetMac& mac,
      std::vector<ControlChannel*> channels);

  tcpip::Stack& stack() { return *stack_; }

  // Executes one CmdQ context of `channel` (waits for the CCB access and command time).
  void execute_command(ControlChannel& channel, const CmdDesc& cmd);
  // Re-arms the protocol timer after the stack was called from outside (DMA engines).
  void stack_touched();

  // Where the PPM reports data to move and send space freed.
  void on_readable(std::function<void(tcpip::ConnId)> cb) { readable_ = std::move(cb); }
  void on_writable(std::function<void()> cb) { writable_ = std::move(cb); }

  void post(int channel, const EcqDesc& ev) {
    channels_.at(static_cast<std::size_t>(channel))->post(ev);
  }
  static EcqDesc event(EventType type, std::uint16_t sock, Status status = Status::Ok);

  // net::FrameSink: frames from the MAC.
  void receive_frame(net::Frame&& frame) override;
  // tcpip::StackListener
  void transmit(tcpip::Frame&& frame) override;
  void tcp_event(tcpip::Event ev, const tcpip::EventInfo& info) override;

 private:
  struct Timed {
    core::TimePs at;
    net::Frame frame;
  };
  void tx_stage();
  void rx_stage();
  void timer_expired();
  void bind_accept(CcbEntry& listener);
  tcpip::Ipv4 local_address(const ControlChannel& channel, const CmdDesc& cmd) const;
  void drop_connection(CcbEntry& e, EventType type, Status status);

  PpmParams params_;
  Ccb& ccb_;
  net::EthernetMac& mac_;
  std::vector<ControlChannel*> channels_;
  std::unique_ptr<tcpip::Stack> stack_;
  core::TimePs tx_cost_ps_, rx_cost_ps_, cmd_cost_ps_;
  std::deque<Timed> tx_fifo_, rx_fifo_;
  core::TimePs tx_free_at_ = 0, rx_free_at_ = 0;
  sc_core::sc_event tx_ev_, rx_ev_, timer_ev_;
  core::TimePs timer_at_ = UINT64_MAX;
  std::function<void(tcpip::ConnId)> readable_;
  std::function<void()> writable_;
  core::Counter& frames_tx_;
  core::Counter& frames_rx_;
  core::Counter& commands_;
  core::Counter& bad_commands_;
};

}  // namespace vtoe::toe
