#include "models/toe/dma_hub.h"

namespace vtoe::toe {

DmaHub::DmaHub(const sc_core::sc_module_name& name)
    : core::Module(name),
      in("in"),
      out("out"),
      request_peq_(this, &DmaHub::on_request),
      answer_peq_(this, &DmaHub::on_answer),
      requests_(stats_.counter("at_requests", "four-phase requests routed (timing at)")),
      held_(stats_.counter("at_requests_held",
                           "four-phase requests that waited for another master's to be accepted")) {
  in.register_b_transport(this, &DmaHub::b_transport);
  in.register_transport_dbg(this, &DmaHub::transport_dbg);
  in.register_nb_transport_fw(this, &DmaHub::nb_transport_fw);
  out.register_nb_transport_bw(this, &DmaHub::nb_transport_bw);
}

void DmaHub::b_transport(int /*master*/, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  out->b_transport(gp, delay);
}

unsigned int DmaHub::transport_dbg(int /*master*/, tlm::tlm_generic_payload& gp) {
  return out->transport_dbg(gp);
}

tlm::tlm_sync_enum DmaHub::nb_transport_fw(int master, tlm::tlm_generic_payload& gp,
                                           tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase == tlm::BEGIN_REQ) {
    routes_.insert(&gp, Route{master, false});
    if (delay == sc_core::SC_ZERO_TIME) {
      request(gp, master);  // due now: no need to go round the queue
    } else {
      request_peq_.notify(gp, phase, delay);
    }
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::END_RESP) {
    const Route* route = routes_.find(&gp);
    if (route == nullptr) {
      SC_REPORT_ERROR(name(), "END_RESP for a transaction not in flight");
      return tlm::TLM_COMPLETED;
    }
    const bool target_done = route->target_done;
    routes_.erase(&gp);
    if (!target_done) out->nb_transport_fw(gp, phase, delay);
    return tlm::TLM_COMPLETED;
  }
  SC_REPORT_ERROR(name(), "nb_transport_fw: unexpected phase");
  return tlm::TLM_COMPLETED;
}

void DmaHub::on_request(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& /*phase*/) {
  request(gp, routes_.at(&gp, name()).master);
}

void DmaHub::request(tlm::tlm_generic_payload& gp, int master) {
  if (waiting_.size() <= static_cast<std::size_t>(master)) waiting_.resize(master + 1);
  if (on_hop_ != nullptr) ++held_;
  if (on_hop_ == nullptr && waiting_count_ == 0) {
    // The round robin would pick this request, the only one: it goes out at once.
    next_master_ = (master + 1) % static_cast<int>(waiting_.size());
    send_on_hop(&gp);
    grant();  // the hop may already be free again (a request completed at once)
    return;
  }
  waiting_[static_cast<std::size_t>(master)].push_back(&gp);
  ++waiting_count_;
  grant();
}

void DmaHub::grant() {
  while (on_hop_ == nullptr && waiting_count_ != 0) {
    tlm::tlm_generic_payload* gp = nullptr;
    const int n = static_cast<int>(waiting_.size());
    for (int k = 0; k < n && gp == nullptr; ++k) {
      const int m = (next_master_ + k) % n;
      auto& q = waiting_[static_cast<std::size_t>(m)];
      if (q.empty()) continue;
      gp = q.front();
      q.pop_front();
      --waiting_count_;
      next_master_ = (m + 1) % n;
    }
    if (gp == nullptr) return;
    send_on_hop(gp);
  }
}

void DmaHub::send_on_hop(tlm::tlm_generic_payload* gp) {
  on_hop_ = gp;
  ++requests_;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum status = out->nb_transport_fw(*gp, phase, delay);
  if (status == tlm::TLM_COMPLETED) {
    // Completed at once (a fault, or a target without the four phases): the hop is free now,
    // the master hears at the annotated time.
    on_hop_ = nullptr;
    routes_.at(gp, name()).target_done = true;
    answer_peq_.notify(*gp, tlm::BEGIN_RESP, delay);
  } else if (status == tlm::TLM_UPDATED) {
    answer_peq_.notify(*gp, phase, delay);
  }
}

tlm::tlm_sync_enum DmaHub::nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                           sc_core::sc_time& delay) {
  if (delay != sc_core::SC_ZERO_TIME) {
    answer_peq_.notify(gp, phase, delay);
    return tlm::TLM_ACCEPTED;
  }
  // Due now: routed at once. A response the master ends at once is ended here too (the return
  // value carries it downstream instead of an END_RESP call).
  if (phase == tlm::END_REQ) {
    accepted(gp);
    return tlm::TLM_ACCEPTED;
  }
  if (phase == tlm::BEGIN_RESP) {
    if (on_hop_ == &gp) accepted(gp);  // END_REQ implied by the response
    const Route* route = routes_.find(&gp);
    if (route == nullptr) return tlm::TLM_COMPLETED;
    const int master = route->master;
    const tlm::tlm_sync_enum status = in[master]->nb_transport_bw(gp, phase, delay);
    if (status == tlm::TLM_COMPLETED) {
      routes_.erase(&gp);
      phase = tlm::END_RESP;
    }
    return status;
  }
  SC_REPORT_ERROR(name(), "nb_transport_bw: unexpected phase");
  return tlm::TLM_COMPLETED;
}

void DmaHub::on_answer(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase) {
  if (phase == tlm::END_REQ) {
    accepted(gp);
  } else if (phase == tlm::BEGIN_RESP) {
    if (on_hop_ == &gp) accepted(gp);  // END_REQ implied by the response
    respond(gp);
  } else {
    SC_REPORT_ERROR(name(), "nb_transport_bw: unexpected phase");
  }
}

void DmaHub::accepted(tlm::tlm_generic_payload& gp) {
  if (on_hop_ != &gp) return;
  on_hop_ = nullptr;
  const int master = routes_.at(&gp, name()).master;
  tlm::tlm_phase phase = tlm::END_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  in[master]->nb_transport_bw(gp, phase, delay);
  grant();
}

void DmaHub::respond(tlm::tlm_generic_payload& gp) {
  const Route* route = routes_.find(&gp);
  if (route == nullptr) return;
  const int master = route->master;
  tlm::tlm_phase phase = tlm::BEGIN_RESP;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum status = in[master]->nb_transport_bw(gp, phase, delay);
  if (status == tlm::TLM_COMPLETED) {
    // The master ended the response itself: end it downstream unless the target already had.
    const Route* r = routes_.find(&gp);
    if (r == nullptr) return;
    const bool target_done = r->target_done;
    routes_.erase(&gp);
    if (!target_done) {
      tlm::tlm_phase end = tlm::END_RESP;
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      out->nb_transport_fw(gp, end, d);
    }
  }
}

}  // namespace vtoe::toe
