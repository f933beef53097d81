// An Ethernet frame as it travels between MACs and links: destination MAC, source MAC, EtherType,
// payload; no preamble and no FCS (the timing models add those). Frames are moved, never copied,
// along the path.
#pragma once

#include <cstdint>
#include <vector>

namespace vtoe::net {

using Frame = std::vector<std::uint8_t>;

// Anything that accepts frames: a link endpoint, a MAC's receive side, a host stack.
class FrameSink {
 public:
  virtual ~FrameSink() = default;
  virtual void receive_frame(Frame&& frame) = 0;
};

}  // namespace vtoe::net
