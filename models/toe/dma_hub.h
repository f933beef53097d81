// Joins the TOE's DMA masters (the control channels' descriptor fetch and completion writes, the
// Tx DMA, the Rx DMA), each with its own initiator socket, onto the TOE's one `dma` socket. A
// zero-latency pass-through: every transaction goes on at once with its own delay annotation and
// sideband untouched, so the memory system sees the same transactions in the same order as if
// the masters shared the socket. Every master must be bound (SystemC checks at elaboration).
//
// Ports: `in` (multi-passthrough target, one binding per master), `out` (initiator, bound
// hierarchically to the TOE's `dma` socket).
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <systemc>
#include <tlm>

namespace vtoe::toe {

class DmaHub : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<DmaHub> in;
  tlm_utils::simple_initiator_socket<DmaHub> out;

  explicit DmaHub(const sc_core::sc_module_name& name);

 private:
  void b_transport(int master, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  unsigned int transport_dbg(int master, tlm::tlm_generic_payload& gp);
};

}  // namespace vtoe::toe
