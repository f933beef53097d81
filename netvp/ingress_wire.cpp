#include "netvp/ingress_wire.h"

#include <utility>

#include "models/net/ethernet_mac.h"

namespace vtoe::netvp {

IngressWire::IngressWire(const sc_core::sc_module_name& name, double rate_bps,
                         std::uint64_t max_bytes, std::chrono::nanoseconds max_wait)
    : core::Module(name),
      in("in"),
      out("out"),
      rate_bps_(rate_bps),
      max_bytes_(max_bytes),
      max_wait_(max_wait),
      clock_([] { return std::chrono::steady_clock::now(); }),
      frames_(stats_.counter("frames", "frames carried from the real interface to the MAC")),
      drops_(stats_.counter("drops", "frames dropped because the wire held max_bytes already")),
      stale_drops_(stats_.counter(
          "stale_drops", "frames dropped because they had waited longer than max_wait (wall)")),
      depth_(stats_.accumulator("depth", "frames waiting or on the wire (time-weighted)")),
      wall_wait_(stats_.accumulator(
          "wall_wait_us", "wall-clock time a frame waited before its turn on the wire, us")) {
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
  bytes_ += frame.size();
  pending_.push_back({clock_(), std::move(frame)});
  if (!busy_) start_next();
  depth_.level(static_cast<double>(pending_.size()), core::now_ps());
}

void IngressWire::start_next() {
  busy_ = false;
  if (pending_.empty()) return;
  const auto now = clock_();
  while (!pending_.empty()) {
    Pending& head = pending_.front();
    const auto waited = now - head.taken;
    if (max_wait_.count() > 0 && waited > max_wait_) {
      bytes_ -= head.frame.size();
      ++stale_drops_;
      pending_.pop_front();
      continue;
    }
    wall_wait_.sample(std::chrono::duration<double, std::micro>(waited).count());
    busy_ = true;
    ev_.notify(core::ps(
        core::transfer_time_ps(net::EthernetMac::wire_bytes(head.frame.size()), rate_bps_)));
    return;
  }
}

void IngressWire::deliver() {
  net::Frame frame = std::move(pending_.front().frame);
  pending_.pop_front();
  bytes_ -= frame.size();
  ++frames_;
  start_next();
  depth_.level(static_cast<double>(pending_.size()), core::now_ps());
  out->receive_frame(std::move(frame));
}

}  // namespace vtoe::netvp
