#include "netvp/ingress_wire.h"

#include <algorithm>
#include <utility>

#include "models/net/ethernet_mac.h"

namespace vtoe::netvp {

IngressWire::IngressWire(const sc_core::sc_module_name& name, double rate_bps)
    : core::Module(name),
      in("in"),
      out("out"),
      rate_bps_(rate_bps),
      frames_(stats_.counter("frames", "frames carried from the real interface to the MAC")) {
  in.bind(*this);
  SC_METHOD(deliver);
  sensitive << ev_;
  dont_initialize();
}

void IngressWire::receive_frame(net::Frame&& frame) {
  const core::TimePs now = core::now_ps();
  const core::TimePs start = std::max(now, wire_free_);
  wire_free_ =
      start + core::transfer_time_ps(net::EthernetMac::wire_bytes(frame.size()), rate_bps_);
  if (pending_.empty()) ev_.notify(core::ps(wire_free_ - now));
  pending_.push_back({wire_free_, std::move(frame)});
}

void IngressWire::deliver() {
  const core::TimePs now = core::now_ps();
  while (!pending_.empty() && pending_.front().at <= now) {
    net::Frame frame = std::move(pending_.front().frame);
    pending_.pop_front();
    ++frames_;
    out->receive_frame(std::move(frame));
  }
  if (!pending_.empty()) ev_.notify(core::ps(pending_.front().at - now));
}

}  // namespace vtoe::netvp
