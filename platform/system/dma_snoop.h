// Sits on the TOE's DMA path (between the SystemMMU and the interconnect) and passes everything
// through (b_transport, the base protocol's nb_transport both ways, DMI, debug); for each
// request (b_transport, nb_transport's BEGIN_REQ) it tells `on_access` the physical range and
// whether it is a write, before the request goes on. The platform hands that to the core's
// caches (IssCpu::snoop): the device tree says the TOE is dma-coherent, so its writes invalidate
// the lines they touch and its reads clean dirty ones (docs/caches.md).
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>

namespace vtoe::platform::system {

class DmaSnoop : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<DmaSnoop> in;
  tlm_utils::simple_initiator_socket<DmaSnoop> out;

  DmaSnoop(const sc_core::sc_module_name& name,
           std::function<void(std::uint64_t addr, std::uint64_t len, bool write)> on_access);

  std::uint64_t snooped() const { return snooped_; }

 private:
  void look(const tlm::tlm_generic_payload& t);
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    look(t);
    out->b_transport(t, delay);
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    if (phase == tlm::BEGIN_REQ) look(t);
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

  std::function<void(std::uint64_t, std::uint64_t, bool)> on_access_;
  std::uint64_t snooped_ = 0;
};

}  // namespace vtoe::platform::system
