// Joins the TOE's DMA masters (the control channels' descriptor fetch and completion writes, the
// Tx DMA, the Rx DMA, the CCB), each with its own initiator socket, onto the TOE's one `dma`
// socket.
//
// b_transport (platform.timing: lt, and the CCB's record transfers in either mode): a
// zero-latency pass-through; every transaction goes on at once with its own delay annotation and
// sideband untouched, so the memory system sees the same transactions in the same order as if
// the masters shared the socket.
//
// nb_transport (at): the four phases are routed between each master and the one outgoing socket.
// The outgoing hop obeys the base protocol's request exclusion rule, so the hub arbitrates: a
// BEGIN_REQ goes out only once the previous one has been accepted (END_REQ); requests waiting
// for the hop are granted round robin across masters, and a master's END_REQ comes back only when
// its request has gone out and been accepted (the memory system's back-pressure reaches it).
// Responses go back to the master that sent the request.
//
// Ports: `in` (multi-passthrough target, one binding per master), `out` (initiator, bound
// hierarchically to the TOE's `dma` socket).
#pragma once

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <deque>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/module.h"
#include "models/core/payload_map.h"

namespace vtoe::toe {

class DmaHub : public core::Module {
 public:
  tlm_utils::multi_passthrough_target_socket<DmaHub> in;
  tlm_utils::simple_initiator_socket<DmaHub> out;

  explicit DmaHub(const sc_core::sc_module_name& name);

 private:
  struct Route {
    int master = 0;
    bool target_done = false;  // the target completed it early: END_RESP stays in the hub
  };

  void b_transport(int master, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  unsigned int transport_dbg(int master, tlm::tlm_generic_payload& gp);
  tlm::tlm_sync_enum nb_transport_fw(int master, tlm::tlm_generic_payload& gp,
                                     tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  // Requests arrive at their annotated time; answers from downstream likewise.
  void on_request(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase);
  void on_answer(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase);
  // Sends the next waiting request (round robin across masters) if the outgoing hop is free.
  void request(tlm::tlm_generic_payload& gp, int master);  // a request arrives now
  void grant();
  void send_on_hop(tlm::tlm_generic_payload* gp);  // BEGIN_REQ downstream
  void accepted(tlm::tlm_generic_payload& gp);     // END_REQ for the request on the hop
  void respond(tlm::tlm_generic_payload& gp);      // BEGIN_RESP to its master

  core::PayloadMap<Route> routes_;
  std::vector<std::deque<tlm::tlm_generic_payload*>> waiting_;  // per master
  std::size_t waiting_count_ = 0;                               // in all of waiting_
  int next_master_ = 0;
  tlm::tlm_generic_payload* on_hop_ = nullptr;  // sent downstream, END_REQ not yet seen
  tlm_utils::peq_with_cb_and_phase<DmaHub> request_peq_;
  tlm_utils::peq_with_cb_and_phase<DmaHub> answer_peq_;

  core::Counter& requests_;
  core::Counter& held_;
};

}  // namespace vtoe::toe
