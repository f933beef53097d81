// The inbound wire of the NetVP bridge: frames the port takes from the real interface in one
// batch (all that the kernel queued since the last tick; thousands when the simulation lags)
// reach the simulated MAC one after another at the line rate, each when its last bit would
// (wire_bytes as net::EthernetMac serialises them), in the order they came. Handed over at one
// instant, a batch reached the TOE faster than any wire brings frames, and its receive FIFO
// dropped all but the first ~170 (docs/netvp.md, the 10,000-connection echo).
//
// At most `max_bytes` of frames wait (the sending hosts' queues, which a veth, having no rate,
// does not hold back): what the real side sends faster than the line rate for long (a flood) is
// dropped and counted. The 10,000-connection echo's burst of initial windows held up to 118,372
// frames.
//
// Ports: `in` (export, frames from the port), `out` (port, to the MAC's from_wire); both bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <systemc>

#include "models/core/module.h"
#include "models/core/sim_time.h"
#include "models/net/frame.h"

namespace vtoe::netvp {

class IngressWire : public core::Module, private net::FrameSink {
 public:
  net::FrameExport in;
  net::FramePort out;

  SC_HAS_PROCESS(IngressWire);
  IngressWire(const sc_core::sc_module_name& name, double rate_bps, std::uint64_t max_bytes);

  std::size_t queued() const { return pending_.size(); }  // frames still on the wire
  std::uint64_t drops() const { return drops_.value(); }

 private:
  void receive_frame(net::Frame&& frame) override;  // in
  void deliver();

  struct Pending {
    core::TimePs at;  // when the frame's last bit arrives
    net::Frame frame;
  };
  double rate_bps_;
  std::uint64_t max_bytes_;
  std::uint64_t bytes_ = 0;     // of the frames on the wire
  core::TimePs wire_free_ = 0;  // when the wire has carried every frame taken so far
  std::deque<Pending> pending_;
  sc_core::sc_event ev_;
  core::Counter& frames_;
  core::Counter& drops_;
  core::Accumulator& depth_;
};

}  // namespace vtoe::netvp
