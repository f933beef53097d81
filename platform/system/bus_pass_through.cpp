#include "platform/system/bus_pass_through.h"

namespace vtoe::platform::system {

BusPassThrough::BusPassThrough(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), in("in"), out("out") {
  in.register_b_transport(this, &BusPassThrough::b_transport_entry);
  in.register_nb_transport_fw(this, &BusPassThrough::nb_transport_fw);
  in.register_get_direct_mem_ptr(this, &BusPassThrough::get_direct_mem_ptr);
  in.register_transport_dbg(this, &BusPassThrough::transport_dbg);
  out.register_nb_transport_bw(this, &BusPassThrough::nb_transport_bw);
  out.register_invalidate_direct_mem_ptr(this, &BusPassThrough::invalidate);
}

}  // namespace vtoe::platform::system
