// A module between a bus master and the rest of the bus that passes everything through:
// b_transport, the base protocol's nb_transport both ways, DMI requests, debug accesses and DMI
// invalidations. The platform's watchers (BusErrorWatch, DeviceInputLog, DmaSnoop) derive from it
// and look at the requests (before_request, on b_transport and on nb_transport's BEGIN_REQ) or
// take b_transport over (override b_transport, calling forward()).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <systemc>
#include <tlm>

namespace vtoe::platform::system {

class BusPassThrough : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<BusPassThrough> in;
  tlm_utils::simple_initiator_socket<BusPassThrough> out;

 protected:
  explicit BusPassThrough(const sc_core::sc_module_name& name);
  // A request is about to go on (the default does nothing).
  virtual void before_request(const tlm::tlm_generic_payload&) {}
  // The default: before_request, then forward.
  virtual void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    before_request(t);
    forward(t, delay);
  }
  void forward(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) { out->b_transport(t, delay); }

 private:
  void b_transport_entry(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    b_transport(t, delay);
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    if (phase == tlm::BEGIN_REQ) before_request(t);
    return out->nb_transport_fw(t, phase, delay);
  }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    return in->nb_transport_bw(t, phase, delay);
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
    return out->get_direct_mem_ptr(t, dmi);
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload& t) { return out->transport_dbg(t); }
  void invalidate(sc_dt::uint64 start, sc_dt::uint64 end) {
    in->invalidate_direct_mem_ptr(start, end);
  }
};

}  // namespace vtoe::platform::system
