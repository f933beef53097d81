// One TOE DMA master's way into the memory system (the control channels' ring fetches and
// completion writes, the Tx and Rx DMA, the CCB's record transfers). Each transaction carries the
// master's sideband (VM, channel, stream) so the SystemMMU can translate it.
//
// Two timing modes, chosen by the platform (`platform.timing`):
//   lt  every transaction is one b_transport; the memory system returns the completion delay and
//       the caller waits it (threads) or schedules its consequences after it (methods).
//   at  the TLM-2.0 base protocol with its four phases: BEGIN_REQ on the forward path, END_REQ
//       when the memory system accepts the request (a busy target withholds it: back-pressure),
//       BEGIN_RESP on the backward path when the data has moved, END_RESP back. The request
//       exclusion rule holds per master: a new BEGIN_REQ waits for the previous END_REQ; several
//       requests may be awaiting their responses at once (issue()).
//
// Payloads come from a pool owned by the initiator (a tlm_mm_interface), so the transactions in
// flight never live on a waiting thread's stack.
#pragma once

#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/sideband.h"
#include "models/core/sim_time.h"

namespace vtoe::toe {

struct DmaResult {
  bool ok = true;
  core::TimePs delay_ps = 0;  // lt: completion delay still to wait; at: 0 (already waited)
};

class DmaInitiator : public sc_core::sc_module, private tlm::tlm_mm_interface {
 public:
  using Done = std::function<void(bool ok)>;

  tlm_utils::simple_initiator_socket<DmaInitiator> socket;

  explicit DmaInitiator(const sc_core::sc_module_name& name);
  ~DmaInitiator() override;

  template <typename Target>
  void bind(Target& target) {
    socket.bind(target);
  }

  void set_approximately_timed(bool at) { at_ = at; }
  bool approximately_timed() const { return at_; }

  // One b_transport in either mode: the status and the completion delay; never waits (any
  // context). The CCB's record transfers use it from the receive path, which cannot wait.
  DmaResult book(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::uint32_t len,
                 const core::SidebandExtension& sideband);

  // Thread context. lt: book(). at: the four phases; returns once the response has arrived
  // (delay_ps 0).
  DmaResult transfer(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                     std::uint32_t len, const core::SidebandExtension& sideband);

  // Thread context, at only: sends BEGIN_REQ once the previous request has been accepted and
  // returns when this one has been (END_REQ); `done(ok)` runs when its response arrives (from a
  // method: it must not wait). `data` must stay valid until then. A caller that will wait for
  // the response anyway (nothing else to issue) passes until_accepted = false: issue() returns
  // once BEGIN_REQ is sent, which saves the thread a wake-up at END_REQ.
  void issue(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::uint32_t len,
             const core::SidebandExtension& sideband, Done done, bool until_accepted = true);

  // Transactions sent and not yet answered (at).
  std::size_t in_flight() const { return in_flight_; }
  // A request was sent and has not been accepted yet (END_REQ, or a response implying it).
  bool request_pending() const { return requesting_ != nullptr; }

  // True while the `done` of a request issued with until_accepted = false runs, if its response
  // also ended the request (END_REQ implied): a thread waiting in issue() for END_REQ would
  // resume at this very point, so a caller that wakes its thread with an immediate notification
  // here keeps the timing it had when it waited (a delta notification would wake it one delta
  // cycle later).
  bool answer_ends_unwaited_request() const { return answer_ends_unwaited_request_; }

 private:
  struct Txn;

  Txn& acquire(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, std::uint32_t len,
               const core::SidebandExtension& sideband);
  void free(tlm::tlm_generic_payload* gp) override;
  // Sends BEGIN_REQ (after the previous END_REQ) and, if asked, waits for this request's END_REQ.
  void send(Txn& t, bool until_accepted = true);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void on_phase(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase);
  Txn* find(tlm::tlm_generic_payload& gp);  // the transaction in flight, or null (reported)
  void request_ended();
  void finish(Txn& t, bool ended_request = false);

  bool at_ = false;
  std::vector<std::unique_ptr<Txn>> txns_;  // every payload ever made (owned)
  std::vector<Txn*> spare_;
  // book()'s payloads, one per booking in progress (a target may call back into this
  // initiator), each with its sideband extension set once: the deepest in use is
  // book_slots_[book_depth_ - 1].
  struct Booking;
  std::vector<std::unique_ptr<Booking>> book_slots_;
  std::size_t book_depth_ = 0;
  tlm::tlm_generic_payload* requesting_ = nullptr;  // sent BEGIN_REQ, END_REQ not yet seen
  sc_core::sc_event request_free_ev_;
  std::size_t in_flight_ = 0;
  bool answer_ends_unwaited_request_ = false;
  tlm_utils::peq_with_cb_and_phase<DmaInitiator> peq_;
};

}  // namespace vtoe::toe
