// The NetVP bridge's simulated side: the export `in` where the simulated MAC's frames leave for the
// real interface, and a poll (called by the pacer every tick) that hands frames from the wire to
// the port `out` (the simulated MAC) at the current simulated time. Optionally writes a pcap of
// both directions. Both must be bound; an unbound one is an elaboration error.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/core/module.h"
#include "models/core/param.h"
#include "models/net/frame.h"
#include "models/net/pcap_writer.h"
#include "netvp/pacer.h"
#include "netvp/raw_socket.h"

namespace vtoe::netvp {

// What the bridge is built from: the real interface and its receive queue (the raw socket) and the
// pacing of simulated against wall time.
struct NetvpParams {
  std::string interface = "vtoe0";
  std::uint64_t queue_frames = 4096;
  std::uint64_t wire_buffer_bytes = 256ull << 20;  // frames waiting for the inbound wire
  core::TimePs wire_max_wait_ps = 0;               // wall-clock wait before they are stale
  PacerParams pacer;
};

// The scenario keys "network.netvp.*", bound to NetvpParams.
const std::vector<core::Param<NetvpParams>>& netvp_params();

class NetvpPort : public core::Module, private net::FrameSink {
 public:
  net::FrameExport in;  // from the simulation, to the wire
  net::FramePort out;   // from the wire, into the simulation

  NetvpPort(const sc_core::sc_module_name& name, RawSocket& socket);

  void enable_pcap(const std::string& path) { pcap_ = std::make_unique<net::PcapWriter>(path); }

  std::size_t poll();  // from the wire, into the simulation; how many frames entered
  void flush();        // what the simulation sent, to the wire

  std::uint64_t to_wire() const { return to_wire_.value(); }
  std::uint64_t from_wire() const { return from_wire_.value(); }
  // Frames for the wire dropped because the raw socket's send queue was full.
  std::uint64_t send_queue_drops() const { return send_queue_drops_.value(); }

 private:
  void receive_frame(net::Frame&& frame) override;  // in

  RawSocket& socket_;
  std::unique_ptr<net::PcapWriter> pcap_;
  std::vector<std::vector<std::uint8_t>> batch_;
  core::Counter& to_wire_;
  core::Counter& from_wire_;
  core::Counter& send_queue_drops_;
};

}  // namespace vtoe::netvp
