// EthernetSwitch: a store-and-forward Ethernet switch with one output buffer per port.
//
// A frame is taken whole from a port's `in` (a link delivers it when its last bit arrives), its
// source address is learned (learned forwarding), and after `latency_ps` it is queued on the
// output port its destination maps to: a learned or given entry, or every other port (flooding)
// for broadcast, multicast and unknown destinations under learned forwarding. Under given
// forwarding an unknown unicast destination is dropped (`no_route`). A frame never goes back out
// of the port it came in on.
//
// Each output port serialises its queue at its own rate exactly as EthernetMac does (wire bytes =
// max(len, 60) + 4 FCS + 8 preamble + 12 gap) and hands a frame to `out` when its last bit
// leaves. A frame that does not fit the port's buffer (`buffer_bytes`, the frame on the wire
// included) is dropped and counted per port (`port<i>_drops`) and in total (`drops`). Each
// port's buffer occupancy is a time-weighted level in bytes and in frames (`port<i>_queue_bytes`,
// `port<i>_queue_frames`: mean over time and maximum), the frame on the wire included.
//
// Ports (all must be bound; an unbound one is an elaboration error):
//   in[i]   sc_export<FrameSink>  frames arriving on port i (bind a link end's out here)
//   out[i]  sc_port<FrameSink>    frames leaving port i (bind to a link end's in)
//
// Events: one spawned SC_METHOD and one sc_event per output port, one kernel event per frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/net/ethernet_mac.h"
#include "models/net/frame.h"

namespace vtoe::net {

enum class Forwarding { Learned, Given };

struct EthernetSwitchPortParams {
  double rate_bps = 10e9;              ///< egress line rate, bit/s
  std::size_t buffer_bytes = 1 << 20;  ///< output buffer, bytes of frames (no FCS)
};

struct EthernetSwitchParams {
  std::vector<EthernetSwitchPortParams> ports;  ///< one entry per port
  core::TimePs latency_ps = 0;                  ///< forwarding decision after the last bit arrives
  Forwarding forwarding = Forwarding::Learned;
  std::map<MacAddress, std::size_t> table;  ///< given entries (both modes): address -> port
};

class EthernetSwitch : public core::Module {
 public:
  sc_core::sc_vector<FrameExport> in;
  sc_core::sc_vector<FramePort> out;

  EthernetSwitch(const sc_core::sc_module_name& name, const EthernetSwitchParams& params);
  ~EthernetSwitch() override;

  std::size_t port_count() const { return ports_.size(); }
  const EthernetSwitchParams& params() const { return params_; }

  std::uint64_t frames() const { return frames_.value(); }        ///< frames taken in
  std::uint64_t forwarded() const { return forwarded_.value(); }  ///< frames sent out (copies)
  std::uint64_t drops() const { return drops_.value(); }          ///< output buffer overflows
  std::uint64_t no_route() const { return no_route_.value(); }
  std::uint64_t port_drops(std::size_t port) const;
  std::uint64_t port_tx_frames(std::size_t port) const;
  std::size_t port_queue_bytes(std::size_t port) const;
  std::size_t port_queue_frames(std::size_t port) const;
  // Port `port`'s counters and occupancy levels, with the warm-up baseline (measured(), mean()).
  const core::Counter& port_drops_counter(std::size_t port) const;
  const core::Counter& port_tx_frames_counter(std::size_t port) const;
  const core::Accumulator& port_queue_bytes_level(std::size_t port) const;
  const core::Accumulator& port_queue_frames_level(std::size_t port) const;
  // The highest occupancy in bytes of the port's buffer since the last call (or the start), and
  // the next interval starts at today's level: for a reader sampling at intervals (time series).
  std::size_t take_port_queue_peak(std::size_t port);
  /// The port a destination is forwarded to, or -1 if unknown (flooded or dropped).
  int lookup(const MacAddress& mac) const;

 private:
  class Port;
  void end_of_elaboration() override;
  void ingress(std::size_t port, Frame&& frame);
  void enqueue(std::size_t port, Frame&& frame, core::TimePs ready);

  EthernetSwitchParams params_;
  std::map<MacAddress, std::size_t> fdb_;  // forwarding database
  std::vector<std::unique_ptr<Port>> ports_;
  core::Counter& frames_;
  core::Counter& forwarded_;
  core::Counter& drops_;
  core::Counter& no_route_;
};

}  // namespace vtoe::net
