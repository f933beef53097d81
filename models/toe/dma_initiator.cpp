#include "models/toe/dma_initiator.h"

#include <stdexcept>
#include <string>

namespace vtoe::toe {

namespace {
// The target completed the transaction at BEGIN_REQ (TLM_COMPLETED): its response is due after
// the annotated delay, with no backward-path call.
DECLARE_EXTENDED_PHASE(completed_early);
}  // namespace

struct DmaInitiator::Txn {
  tlm::tlm_generic_payload gp;
  core::SidebandExtension ext;
  Done done;
  bool finished = false;
  bool waited_for = false;       // transfer(): the thread frees it after reading the status
  bool accept_unwaited = false;  // issue(until_accepted = false)
  sc_core::sc_event response_ev;

  explicit Txn(tlm::tlm_mm_interface* mm) : gp(mm) { gp.set_extension(&ext); }
  ~Txn() { gp.clear_extension(&ext); }  // the member is not the payload's to delete
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;
};

struct DmaInitiator::Booking {
  tlm::tlm_generic_payload gp;
  core::SidebandExtension ext;

  Booking() { gp.set_extension(&ext); }
  ~Booking() { gp.clear_extension(&ext); }  // the member is not the payload's to delete
  Booking(const Booking&) = delete;
  Booking& operator=(const Booking&) = delete;
};

DmaInitiator::DmaInitiator(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), socket("socket"), peq_(this, &DmaInitiator::on_phase) {
  socket.register_nb_transport_bw(this, &DmaInitiator::nb_transport_bw);
}

DmaInitiator::~DmaInitiator() = default;

DmaResult DmaInitiator::book(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                             std::uint32_t len, const core::SidebandExtension& sideband) {
  // A payload's construction and its extension array cost more than the booking: kept.
  if (book_depth_ == book_slots_.size()) book_slots_.push_back(std::make_unique<Booking>());
  Booking& slot = *book_slots_[book_depth_++];
  tlm::tlm_generic_payload& gp = slot.gp;
  slot.ext = sideband;
  gp.set_command(cmd);
  gp.set_address(addr);
  gp.set_data_ptr(data);
  gp.set_data_length(len);
  gp.set_streaming_width(len);
  gp.set_byte_enable_ptr(nullptr);
  gp.set_dmi_allowed(false);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(gp, delay);
  --book_depth_;
  return DmaResult{gp.is_response_ok(), core::to_ps(delay)};
}

DmaInitiator::Txn& DmaInitiator::acquire(tlm::tlm_command cmd, std::uint64_t addr,
                                         std::uint8_t* data, std::uint32_t len,
                                         const core::SidebandExtension& sideband) {
  if (spare_.empty()) {
    txns_.push_back(std::make_unique<Txn>(static_cast<tlm::tlm_mm_interface*>(this)));
    spare_.push_back(txns_.back().get());
  }
  Txn& t = *spare_.back();
  spare_.pop_back();
  t.gp.set_command(cmd);
  t.gp.set_address(addr);
  t.gp.set_data_ptr(data);
  t.gp.set_data_length(len);
  t.gp.set_streaming_width(len);
  t.gp.set_byte_enable_ptr(nullptr);
  t.gp.set_dmi_allowed(false);
  t.gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  t.ext = sideband;
  t.done = nullptr;
  t.finished = false;
  t.waited_for = false;
  t.accept_unwaited = false;
  t.gp.acquire();
  return t;
}

void DmaInitiator::free(tlm::tlm_generic_payload* gp) {
  for (const auto& t : txns_) {
    if (&t->gp == gp) {
      t->done = nullptr;
      spare_.push_back(t.get());
      return;
    }
  }
}

DmaResult DmaInitiator::transfer(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                                 std::uint32_t len, const core::SidebandExtension& sideband) {
  if (!at_) return book(cmd, addr, data, len, sideband);
  Txn& t = acquire(cmd, addr, data, len, sideband);
  t.waited_for = true;
  send(t, false);  // the response implies END_REQ: one wake-up, not two
  while (!t.finished) sc_core::wait(t.response_ev);
  const bool ok = t.gp.is_response_ok();
  t.gp.release();
  return {ok, 0};
}

void DmaInitiator::issue(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                         std::uint32_t len, const core::SidebandExtension& sideband, Done done,
                         bool until_accepted) {
  if (!at_) throw std::logic_error(std::string(name()) + ": issue() needs platform.timing: at");
  Txn& t = acquire(cmd, addr, data, len, sideband);
  t.done = std::move(done);
  t.accept_unwaited = !until_accepted;
  send(t, until_accepted);
}

void DmaInitiator::send(Txn& t, bool until_accepted) {
  while (requesting_ != nullptr) sc_core::wait(request_free_ev_);
  requesting_ = &t.gp;
  ++in_flight_;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const tlm::tlm_sync_enum status = socket->nb_transport_fw(t.gp, phase, delay);
  if (status == tlm::TLM_COMPLETED) {
    requesting_ = nullptr;  // no END_REQ will come: the request channel is free at once
    peq_.notify(t.gp, completed_early, delay);
  } else if (status == tlm::TLM_UPDATED) {
    peq_.notify(t.gp, phase, delay);  // END_REQ, or BEGIN_RESP with END_REQ implied
  }
  // The request is accepted when END_REQ (or a response) has been seen.
  while (until_accepted && requesting_ == &t.gp) sc_core::wait(request_free_ev_);
}

tlm::tlm_sync_enum DmaInitiator::nb_transport_bw(tlm::tlm_generic_payload& gp,
                                                 tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (delay != sc_core::SC_ZERO_TIME || (phase != tlm::END_REQ && phase != tlm::BEGIN_RESP)) {
    peq_.notify(gp, phase, delay);
    return tlm::TLM_ACCEPTED;
  }
  // Due now: handled here rather than one delta cycle later through the queue (nothing can
  // happen to this transaction in between). A response is ended at once (TLM_COMPLETED:
  // END_RESP implied), so the memory system's response channel frees without another call.
  Txn* t = find(gp);
  if (t == nullptr) return tlm::TLM_COMPLETED;
  const bool ended_request = requesting_ == &gp;  // END_REQ, or implied by the response
  if (ended_request) request_ended();
  if (phase == tlm::END_REQ) return tlm::TLM_ACCEPTED;
  phase = tlm::END_RESP;
  finish(*t, ended_request);
  return tlm::TLM_COMPLETED;
}

DmaInitiator::Txn* DmaInitiator::find(tlm::tlm_generic_payload& gp) {
  for (const auto& x : txns_) {
    if (&x->gp == &gp && !x->finished) return x.get();
  }
  SC_REPORT_ERROR(name(), "phase for a transaction not in flight");
  return nullptr;
}

void DmaInitiator::request_ended() {
  requesting_ = nullptr;
  request_free_ev_.notify();
}

void DmaInitiator::on_phase(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase) {
  Txn* t = find(gp);
  if (t == nullptr) return;
  if (phase == tlm::END_REQ) {
    if (requesting_ == &gp) request_ended();
    return;
  }
  if (phase == tlm::BEGIN_RESP) {
    const bool ended_request = requesting_ == &gp;  // END_REQ implied by the response
    if (ended_request) request_ended();
    tlm::tlm_phase end = tlm::END_RESP;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->nb_transport_fw(gp, end, delay);
    finish(*t, ended_request);
    return;
  }
  if (phase == completed_early) {
    finish(*t);
    return;
  }
  SC_REPORT_ERROR(name(), "unexpected phase on the backward path");
}

void DmaInitiator::finish(Txn& t, bool ended_request) {
  t.finished = true;
  --in_flight_;
  const bool ok = t.gp.is_response_ok();
  if (t.waited_for) {
    t.response_ev.notify();
    return;  // the waiting thread releases it
  }
  Done done = std::move(t.done);
  const bool unwaited = ended_request && t.accept_unwaited;
  t.gp.release();
  answer_ends_unwaited_request_ = unwaited;
  if (done) done(ok);
  answer_ends_unwaited_request_ = false;
}

}  // namespace vtoe::toe
