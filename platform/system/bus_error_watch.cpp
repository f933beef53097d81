#include "platform/system/bus_error_watch.h"

namespace vtoe::platform::system {

BusErrorWatch::BusErrorWatch(const sc_core::sc_module_name& name, unsigned limit,
                             std::function<void(std::uint64_t)> on_loop)
    : BusPassThrough(name), limit_(limit), on_loop_(std::move(on_loop)) {}

void BusErrorWatch::b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
  forward(t, delay);
  if (!t.is_response_error()) {
    in_a_row_ = 0;
    return;
  }
  ++errors_;
  if (++in_a_row_ == limit_ && on_loop_) on_loop_(t.get_address());
}

}  // namespace vtoe::platform::system
