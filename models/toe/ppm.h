// Protocol processing module (paper Fig. 1): the TOE's TCP/UDP/IPv4/ICMP/ARP engine. The protocol
// logic is the plain C++ tcpip::Stack; this module gives it time (a processing cost per frame and
// per byte on the device clock, on one or more engines in each direction, CCB access latency,
// protocol timers), executes CmdQ contexts, and turns protocol events into ECQ completions.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/net/ethernet_mac.h"
#include "models/net/frame.h"
#include "models/tcpip/stack.h"
#include "models/toe/ccb.h"
#include "models/toe/control_channel.h"
#include "models/toe/descriptors.h"

namespace vtoe::toe {

struct PpmParams {
  double device_freq_hz = 400e6;
  double tx_cycles_per_frame = 64;  // header generation, queueing
  double rx_cycles_per_frame = 64;  // parse, CCB lookup, reassembly bookkeeping
  double cycles_per_command = 32;   // executing one CmdQ context
  // Checksum and data movement: a frame of N bytes takes ceil(N / datapath_bytes) more cycles.
  std::uint32_t datapath_bytes = 8;
  // Engines per direction: frames are processed in parallel on the first free engine and leave
  // in arrival order (a reorder stage), so TCP never sees reordering the wire did not cause.
  std::uint32_t engines = 1;
  // Receive FIFO between the MAC and the engines: bytes of frames received and not yet through
  // the PPM. A frame that does not fit is dropped, as a hardware FIFO drops it; without a bound a
  // PPM slower than the wire (CCB misses, a slow clock) queues without limit, delays every
  // segment by as much and holds the host's memory.
  std::uint32_t rx_fifo_bytes = 256 * 1024;
};

// One direction's engines: when each is next free, and when the last frame left (in order).
class PpmPipeline {
 public:
  explicit PpmPipeline(std::uint32_t engines) : free_at_(engines == 0 ? 1 : engines, 0) {}
  // A frame arriving at `now` that needs `cost` on an engine: the time it leaves the pipeline.
  core::TimePs admit(core::TimePs now, core::TimePs cost);
  core::TimePs next_free() const;                    // when the first engine is free
  core::TimePs busy_ps() const { return busy_ps_; }  // engine time used, summed over engines
  std::size_t engines() const { return free_at_.size(); }

 private:
  std::vector<core::TimePs> free_at_;
  core::TimePs last_out_ = 0;
  core::TimePs busy_ps_ = 0;
};

class Ppm : public core::Module, public tcpip::StackListener, public net::FrameSink {
 public:
  SC_HAS_PROCESS(Ppm);
  Ppm(const sc_core::sc_module_name& name, const PpmParams& params,
      const tcpip::StackConfig& stack_config, Ccb& ccb, net::EthernetMac& mac,
      std::vector<ControlChannel*> channels);

  tcpip::Stack& stack() { return *stack_; }
  const tcpip::Stack& stack() const { return *stack_; }
  // Engine time used so far in each direction (summed over its engines), for utilisation.
  core::TimePs tx_busy_ps() const { return tx_pipe_.busy_ps(); }
  core::TimePs rx_busy_ps() const { return rx_pipe_.busy_ps(); }
  std::uint32_t engines() const { return static_cast<std::uint32_t>(tx_pipe_.engines()); }
  // Device time one frame of `bytes` occupies an engine.
  core::TimePs tx_frame_ps(std::size_t bytes) const;
  core::TimePs rx_frame_ps(std::size_t bytes) const;

  // Executes one CmdQ context of `channel` (waits for the CCB access and command time).
  void execute_command(ControlChannel& channel, const CmdDesc& cmd);
  // Re-arms the protocol timer after the stack was called from outside (DMA engines).
  void stack_touched();

  // Where the PPM reports data to move and send space freed.
  void on_readable(std::function<void(tcpip::ConnId)> cb) { readable_ = std::move(cb); }
  void on_writable(std::function<void()> cb) { writable_ = std::move(cb); }
  // Where it reports a socket whose sending has ended (closing, or its CCB entry gone): send
  // contexts still queued for it can only fail now, and no acknowledgment may come to say so.
  void on_send_ended(std::function<void(int channel, std::uint16_t sock)> cb) {
    send_ended_ = std::move(cb);
  }

  void post(int channel, const EcqDesc& ev) {
    channels_.at(static_cast<std::size_t>(channel))->post(ev);
  }
  static EcqDesc event(EventType type, std::uint16_t sock, Status status = Status::Ok);

  // net::FrameSink: frames from the MAC.
  void receive_frame(net::Frame&& frame) override;
  // tcpip::StackListener
  void transmit(tcpip::Frame&& frame) override;
  // toe.loopback: a frame between two of the TOE's own addresses takes the transmit engines and
  // then the receive path, never the MAC.
  void loop_back(tcpip::Frame&& frame) override;
  void tcp_event(tcpip::Event ev, const tcpip::EventInfo& info) override;

 private:
  struct Timed {
    core::TimePs at;
    net::Frame frame;
    bool looped = false;  // transmit: back to the receive path instead of the MAC
  };
  void tx_stage();
  void rx_stage();
  void rx_start(core::TimePs now);
  void rx_schedule(core::TimePs now);
  void timer_expired();
  void bind_accept(CcbEntry& listener);
  tcpip::Ipv4 local_address(const ControlChannel& channel, const CmdDesc& cmd) const;
  void drop_connection(CcbEntry& e, EventType type, Status status);

  PpmParams params_;
  Ccb& ccb_;
  net::EthernetMac& mac_;
  std::vector<ControlChannel*> channels_;
  std::unique_ptr<tcpip::Stack> stack_;
  core::TimePs cmd_cost_ps_;
  std::deque<Timed> tx_fifo_;
  core::Counter* looped_ = nullptr;  // registered with toe.loopback only
  // Receive: frames waiting for an engine, then frames on an engine or in the reorder stage
  // (leaving at `at`); the receive FIFO's bound counts the bytes of both.
  std::deque<net::Frame> rx_waiting_;
  std::deque<Timed> rx_fifo_;
  std::size_t rx_fifo_used_ = 0;
  PpmPipeline tx_pipe_, rx_pipe_;
  sc_core::sc_event tx_ev_, rx_ev_, timer_ev_;
  core::TimePs timer_at_ = UINT64_MAX;        // the stack's next deadline
  core::TimePs timer_armed_at_ = UINT64_MAX;  // when timer_ev_ fires (UINT64_MAX: not pending)
  static constexpr core::TimePs kTimerHorizonPs = 1'000'000'000;  // 1 ms: see stack_touched()
  std::function<void(tcpip::ConnId)> readable_;
  std::function<void()> writable_;
  std::function<void(int, std::uint16_t)> send_ended_;
  core::Counter& frames_tx_;
  core::Counter& frames_rx_;
  core::Counter& rx_fifo_drops_;
  core::Accumulator& rx_fifo_fill_;
  core::Counter& commands_;
  core::Counter& bad_commands_;
};

}  // namespace vtoe::toe
