// The inbound wire of the NetVP bridge: frames the port takes from the real interface in one
// batch (all that the kernel queued since the last tick; thousands when the simulation lags)
// reach the simulated MAC one after another at the line rate, each when its last bit would
// (wire_bytes as net::EthernetMac serialises them), in the order they came. Handed over at one
// instant, a batch reached the TOE faster than any wire brings frames, and its receive FIFO
// dropped all but the first ~170 (docs/netvp.md, the 10,000-connection echo).
//
// Frames wait for the wire as in the sending hosts' queues, which a veth, having no rate, does not
// hold back. Two bounds keep that queue from growing without end while the simulation runs slower
// than the real hosts:
// - at most `max_bytes` wait; a frame beyond is dropped as it arrives (a flood);
// - a frame that has waited longer than `max_wait` of wall-clock time when its turn on the wire
//   comes is dropped then (0: no limit). The real host has retransmitted it by then; carried
//   anyway, every such copy lengthens the queue that the retransmissions wait behind, and a
//   simulation slower than the wire never catches up (under ASan the 1,000-connection echo's
//   queue grew to tens of seconds and half its connections timed out).
//
// Ports: `in` (export, frames from the port), `out` (port, to the MAC's from_wire); both bound.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <systemc>

#include "models/core/module.h"
#include "models/core/sim_time.h"
#include "models/net/frame.h"

namespace vtoe::netvp {

class IngressWire : public core::Module, private net::FrameSink {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  net::FrameExport in;
  net::FramePort out;

  SC_HAS_PROCESS(IngressWire);
  IngressWire(const sc_core::sc_module_name& name, double rate_bps, std::uint64_t max_bytes,
              std::chrono::nanoseconds max_wait = std::chrono::nanoseconds{0});

  // The wall clock the waits are measured with (tests set their own).
  void set_clock(Clock clock) { clock_ = std::move(clock); }

  std::size_t queued() const { return pending_.size(); }  // frames waiting or on the wire
  std::uint64_t drops() const { return drops_.value(); }
  std::uint64_t stale_drops() const { return stale_drops_.value(); }

 private:
  void receive_frame(net::Frame&& frame) override;  // in
  void deliver();                                   // the frame on the wire has arrived
  void start_next();                                // the next frame (not stale) onto the wire

  struct Pending {
    std::chrono::steady_clock::time_point taken;  // when it came from the real interface
    net::Frame frame;
  };
  double rate_bps_;
  std::uint64_t max_bytes_;
  std::chrono::nanoseconds max_wait_;
  Clock clock_;
  std::uint64_t bytes_ = 0;  // of the frames waiting or on the wire
  bool busy_ = false;        // the front frame is on the wire; ev_ fires when its last bit arrives
  std::deque<Pending> pending_;
  sc_core::sc_event ev_;
  core::Counter& frames_;
  core::Counter& drops_;
  core::Counter& stale_drops_;
  core::Accumulator& depth_;
  core::Accumulator& wall_wait_;
};

}  // namespace vtoe::netvp
