#include "models/toe/dma_hub.h"

namespace vtoe::toe {

DmaHub::DmaHub(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), in("in"), out("out") {
  in.register_b_transport(this, &DmaHub::b_transport);
  in.register_transport_dbg(this, &DmaHub::transport_dbg);
}

void DmaHub::b_transport(int /*master*/, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  out->b_transport(gp, delay);
}

unsigned int DmaHub::transport_dbg(int /*master*/, tlm::tlm_generic_payload& gp) {
  return out->transport_dbg(gp);
}

}  // namespace vtoe::toe
