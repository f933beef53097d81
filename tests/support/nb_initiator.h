// A four-phase (TLM-2.0 base protocol) test initiator whose SC_THREAD runs the test's body.
//
//   test::NbInitiator cpu("cpu", [&](test::NbInitiator& self) {
//     self.issue(tlm::TLM_READ_COMMAND, 0x100, buf, 64);  // waits for the previous END_REQ first
//     self.issue(tlm::TLM_READ_COMMAND, 0x900, buf2, 64);
//     self.wait_all();                                     // every response has begun and ended
//     EXPECT_EQ(self.records()[0].begin_resp, 125'000u);
//   });
//
// Payloads come from a core::PayloadPool (targets may acquire/release them). issue() obeys the
// request exclusion rule (no BEGIN_REQ before the previous request's END_REQ) and records, per
// request, when BEGIN_REQ, END_REQ and BEGIN_RESP happened (ps, annotated delays included) and
// the response status. How the initiator answers BEGIN_RESP is set by respond(): TLM_COMPLETED,
// TLM_UPDATED with END_RESP, or TLM_ACCEPTED with END_RESP sent `end_resp_delay` later. It checks
// the target's side of the protocol: END_REQ/BEGIN_RESP only for requests in flight, at most one
// response open at a time (response exclusion).
#pragma once

#include <gtest/gtest.h>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/core/payload_pool.h"
#include "models/core/sim_time.h"

namespace vtoe::test {

class NbInitiator : public sc_core::sc_module {
 public:
  enum class Respond { Completed, Updated, Accepted };
  struct Record {
    tlm::tlm_command cmd;
    std::uint64_t addr;
    unsigned len;
    core::TimePs begin_req = 0;
    core::TimePs end_req = ~0ull;     // ~0: not yet
    core::TimePs begin_resp = ~0ull;  // ~0: not yet
    tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  };

  tlm_utils::simple_initiator_socket<NbInitiator> socket;

  SC_HAS_PROCESS(NbInitiator);
  NbInitiator(const sc_core::sc_module_name& name, std::function<void(NbInitiator&)> body)
      : sc_core::sc_module(name),
        socket("socket"),
        peq_(this, &NbInitiator::end_resp),
        body_(body) {
    socket.register_nb_transport_bw(this, &NbInitiator::nb_transport_bw);
    SC_THREAD(run);
  }

  void respond(Respond how, sc_core::sc_time end_resp_delay = sc_core::SC_ZERO_TIME) {
    respond_ = how;
    end_resp_delay_ = end_resp_delay;
  }

  // Sends one request now (after the previous request's END_REQ); returns its record index.
  std::size_t issue(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, unsigned len) {
    while (request_open_) sc_core::wait(end_req_event_);
    tlm::tlm_generic_payload* t = pool_.acquire();
    t->set_command(cmd);
    t->set_address(addr);
    t->set_data_ptr(data);
    t->set_data_length(len);
    t->set_streaming_width(len);
    const std::size_t index = records_.size();
    records_.push_back(Record{cmd, addr, len, core::now_ps()});
    in_flight_[t] = index;
    request_open_ = true;
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum st = socket->nb_transport_fw(*t, phase, delay);
    const core::TimePs at = core::now_ps() + core::to_ps(delay);
    if (st == tlm::TLM_COMPLETED) {
      got_end_req(*t, at);
      got_response(*t, at);
      done(*t);
    } else if (st == tlm::TLM_UPDATED && phase == tlm::END_REQ) {
      got_end_req(*t, at);
    } else if (st == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP) {
      got_end_req(*t, at);
      got_response(*t, at);
      response_open_ = t;
      peq_.notify(*t, tlm::END_RESP, end_resp_delay_);
    } else {
      EXPECT_EQ(st, tlm::TLM_ACCEPTED) << "BEGIN_REQ answered with phase " << phase;
    }
    return index;
  }

  // Waits until every request's response has ended.
  void wait_all() {
    while (!in_flight_.empty()) sc_core::wait(resp_event_);
  }

  const std::vector<Record>& records() const { return records_; }
  core::PayloadPool& pool() { return pool_; }
  std::size_t in_flight() const { return in_flight_.size(); }

 private:
  void run() { body_(*this); }

  void got_end_req(tlm::tlm_generic_payload& t, core::TimePs at) {
    Record& r = records_.at(in_flight_.at(&t));
    if (r.end_req != ~0ull) return;  // already (BEGIN_RESP implies END_REQ)
    r.end_req = at;
    request_open_ = false;
    end_req_event_.notify(sc_core::SC_ZERO_TIME);
  }
  void got_response(tlm::tlm_generic_payload& t, core::TimePs at) {
    Record& r = records_.at(in_flight_.at(&t));
    r.begin_resp = at;
    r.status = t.get_response_status();
  }
  void done(tlm::tlm_generic_payload& t) {
    in_flight_.erase(&t);
    pool_.release(&t);
    resp_event_.notify(sc_core::SC_ZERO_TIME);
  }

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    const bool known = in_flight_.count(&t) != 0;
    EXPECT_TRUE(known) << "backward call for a transaction not in flight";
    if (!known) return tlm::TLM_COMPLETED;
    const core::TimePs at = core::now_ps() + core::to_ps(delay);
    if (phase == tlm::END_REQ) {
      EXPECT_EQ(records_.at(in_flight_.at(&t)).end_req, ~0ull) << "END_REQ twice";
      got_end_req(t, at);
      return tlm::TLM_ACCEPTED;
    }
    EXPECT_EQ(phase, tlm::BEGIN_RESP);
    EXPECT_EQ(response_open_, nullptr) << "BEGIN_RESP while another response is open";
    got_end_req(t, at);
    got_response(t, at);
    switch (respond_) {
      case Respond::Completed:
        done(t);
        return tlm::TLM_COMPLETED;
      case Respond::Updated:
        phase = tlm::END_RESP;
        done(t);
        return tlm::TLM_UPDATED;
      case Respond::Accepted:
        response_open_ = &t;
        peq_.notify(t, tlm::END_RESP, delay + end_resp_delay_);
        return tlm::TLM_ACCEPTED;
    }
    return tlm::TLM_ACCEPTED;
  }

  void end_resp(tlm::tlm_generic_payload& t, const tlm::tlm_phase& /*phase*/) {
    response_open_ = nullptr;
    tlm::tlm_phase phase = tlm::END_RESP;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum st = socket->nb_transport_fw(t, phase, delay);
    EXPECT_EQ(st, tlm::TLM_COMPLETED) << "END_RESP must be answered TLM_COMPLETED";
    done(t);
  }

  core::PayloadPool pool_;
  tlm_utils::peq_with_cb_and_phase<NbInitiator> peq_;
  std::function<void(NbInitiator&)> body_;
  Respond respond_ = Respond::Completed;
  sc_core::sc_time end_resp_delay_;
  std::vector<Record> records_;
  std::unordered_map<tlm::tlm_generic_payload*, std::size_t> in_flight_;
  bool request_open_ = false;
  tlm::tlm_generic_payload* response_open_ = nullptr;
  sc_core::sc_event end_req_event_, resp_event_;
};

}  // namespace vtoe::test
