// Sits between the processor and the interconnect and passes everything through (b_transport,
// DMI, debug, DMI invalidation); it watches for error responses. A core that jumps to unmapped
// memory with no vectors mapped either takes prefetch aborts at the abort vector for ever
// without retiring an instruction; after `limit` error responses in a row with no successful
// bus access between them, the watch calls `on_loop(address)` (the platform halts the core and
// reports the address) so that the run ends with a clear error instead of hanging.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>

namespace vtoe::platform::system {

class BusErrorWatch : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<BusErrorWatch> in;
  tlm_utils::simple_initiator_socket<BusErrorWatch> out;

  BusErrorWatch(const sc_core::sc_module_name& name, unsigned limit,
                std::function<void(std::uint64_t address)> on_loop);

  std::uint64_t errors() const { return errors_; }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
    return out->get_direct_mem_ptr(t, dmi);
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload& t) { return out->transport_dbg(t); }
  void invalidate(sc_dt::uint64 start, sc_dt::uint64 end) {
    in->invalidate_direct_mem_ptr(start, end);
  }

  unsigned limit_;
  std::function<void(std::uint64_t)> on_loop_;
  unsigned in_a_row_ = 0;
  std::uint64_t errors_ = 0;
};

}  // namespace vtoe::platform::system
