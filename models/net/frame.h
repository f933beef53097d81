// An Ethernet frame as it travels between MACs and links: destination MAC, source MAC, EtherType,
// payload; no preamble and no FCS (the timing models add those). Frames are moved, never copied,
// along the path.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <systemc>
#include <vector>

#include "models/core/sim_time.h"
#include "models/tcpip/types.h"

namespace vtoe::net {

using Frame = tcpip::Frame;  // bytes + the sender's checksum guarantee (models/tcpip/types.h)

// The frame interface: anything that accepts frames (a link end, a MAC's receive side, a host
// stack, the NetVP bridge). Models reach each other through sc_port<FrameSink> and
// sc_export<FrameSink>, so that a port left unbound stops the simulation at elaboration.
class FrameSink : public virtual sc_core::sc_interface {
 public:
  virtual void receive_frame(Frame&& frame) = 0;

  // Frames handed over ahead of time. A sender that knows when a frame's last bit will leave it
  // (a MAC computes that when it queues the frame) may hand the frame over at once with that
  // time, `enters_ps` >= now, non-decreasing from one sender, instead of waking up then to hand
  // it over: one kernel event less per frame. Only sinks that say so take them (a link end
  // without a capture, whose receiver sees the frame no earlier than it would have).
  virtual bool takes_frames_ahead() const { return false; }
  virtual void receive_frame_ahead(Frame&&, core::TimePs) {
    throw std::logic_error("FrameSink: this sink does not take frames ahead of time");
  }
};

// A port that sends frames to one FrameSink; it must be bound.
using FramePort = sc_core::sc_port<FrameSink>;
// Where a module takes frames in; bound inside the module.
using FrameExport = sc_core::sc_export<FrameSink>;

}  // namespace vtoe::net
