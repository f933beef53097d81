#include "netvp/ingress_wire.h"

#include <algorithm>
#include <utility>

#include "models/net/ethernet_mac.h"

namespace vtoe::netvp {

IngressWire::IngressWire(const sc_core::sc_module_name& name, double rate_bps,
                         std::uint64_t max_bytes)
    : core::Module(name),
      in("in"),
      out("out"),
      rate_bps_(rate_bps),
      max_bytes_(max_bytes),
      frames_(stats_.counter("frames", "frames carried from the real interface to the MAC")),
      drops_(stats_.counter("drops", "frames dropped because the wire held max_bytes already")),
      depth_(stats_.accumulator("depth", "frames on the wire (time-weighted)")) {
  in.bind(*this);
  SC_METHOD(deliver);
  sensitive << ev_;
  dont_initialize();
}

void IngressWire::receive_frame(net::Frame&& frame) {
  if (bytes_ + frame.size() > max_bytes_) {
    ++drops_;
    return;
  }
  const core::TimePs now = core::now_ps();
  const core::TimePs start = std::max(now, wire_free_);
  wire_free_ =
      start + core::transfer_time_ps(net::EthernetMac::wire_bytes(frame.size()), rate_bps_);
  if (pending_.empty()) ev_.notify(core::ps(wire_free_ - now));
  bytes_ += frame.size();
  pending_.push_back({wire_free_, std::move(frame)});
  depth_.level(static_cast<double>(pending_.size()), now);
}

void IngressWire::deliver() {
  const core::TimePs now = core::now_ps();
  while (!pending_.empty() && pending_.front().at <= now) {
    net::Frame frame = std::move(pending_.front().frame);
    pending_.pop_front();
    bytes_ -= frame.size();
    ++frames_;
    out->receive_frame(std::move(frame));
  }
  depth_.level(static_cast<double>(pending_.size()), now);
  if (!pending_.empty()) ev_.notify(core::ps(pending_.front().at - now));
}

}  // namespace vtoe::netvp
