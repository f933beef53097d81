// toe::DmaInitiator and toe::DmaHub under platform.timing: at. A scripted four-phase target
// accepts one request at a time (END_REQ after `accept`, withheld while it holds `depth`
// requests) and answers each `latency` after accepting it; the tests check the base protocol's
// rules as the masters see them: completion times, data, request exclusion, several requests
// awaiting responses, back-pressure and round-robin arbitration between masters in the hub.
#include "models/toe/dma_initiator.h"

#include <gtest/gtest.h>
#include <tlm_utils/peq_with_cb_and_phase.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "models/core/sideband.h"
#include "models/core/sim_time.h"
#include "models/toe/dma_hub.h"
#include "tests/support/bench.h"

using namespace sc_core;
using vtoe::core::now_ps;
using vtoe::core::SidebandExtension;
using vtoe::toe::DmaHub;
using vtoe::toe::DmaInitiator;
using vtoe::toe::DmaResult;

namespace {

constexpr std::uint64_t kNs = 1000;

class FourPhaseTarget : public sc_module {
 public:
  struct Seen {
    std::uint64_t addr;
    std::uint64_t begin_req_ps;
    int stream;
  };
  tlm_utils::simple_target_socket<FourPhaseTarget> in;
  std::vector<Seen> seen;
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(1 << 16, 0);
  std::uint64_t accept_ps = 10 * kNs;
  std::uint64_t latency_ps = 100 * kNs;
  std::size_t depth = 4;
  bool complete_early = false;      // answer BEGIN_REQ with TLM_COMPLETED (+latency)
  int overlapping_requests = 0;     // BEGIN_REQ while another request had no END_REQ yet
  int end_resp_calls = 0;           // END_RESP on the forward path
  int responses_ended_at_once = 0;  // BEGIN_RESP answered TLM_COMPLETED

  explicit FourPhaseTarget(const sc_module_name& name)
      : sc_module(name), in("in"), peq_(this, &FourPhaseTarget::on_phase) {
    in.register_nb_transport_fw(this, &FourPhaseTarget::nb_transport_fw);
  }

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& gp, tlm::tlm_phase& phase,
                                     sc_time& delay) {
    if (phase == tlm::BEGIN_REQ) {
      SidebandExtension* ext = nullptr;
      gp.get_extension(ext);
      seen.push_back({gp.get_address(), now_ps() + vtoe::core::to_ps(delay),
                      ext ? static_cast<int>(ext->stream_id) : -1});
      if (complete_early) {
        move_data(gp);
        delay += sc_time::from_value(latency_ps);
        return tlm::TLM_COMPLETED;
      }
      if (requesting_ != nullptr) ++overlapping_requests;
      requesting_ = &gp;
      peq_.notify(gp, phase, delay);
      return tlm::TLM_ACCEPTED;
    }
    if (phase == tlm::END_RESP) {
      ++end_resp_calls;
      responding_ = false;
      send_next_response();
      return tlm::TLM_COMPLETED;
    }
    ADD_FAILURE() << "unexpected phase";
    return tlm::TLM_COMPLETED;
  }

  void on_phase(tlm::tlm_generic_payload& gp, const tlm::tlm_phase& phase) {
    if (phase == tlm::BEGIN_REQ) {
      arrived_.push_back(&gp);
      try_accept();
    } else if (phase == tlm::END_REQ) {  // internal: the accept delay has passed
      tlm::tlm_phase p = tlm::END_REQ;
      sc_time d = SC_ZERO_TIME;
      requesting_ = nullptr;
      in->nb_transport_bw(gp, p, d);
      peq_.notify(gp, tlm::BEGIN_RESP, sc_time::from_value(latency_ps));
    } else if (phase == tlm::BEGIN_RESP) {  // internal: the data is ready
      move_data(gp);
      ready_.push_back(&gp);
      send_next_response();
    }
  }

  void try_accept() {
    while (!arrived_.empty() && held_ < depth) {
      tlm::tlm_generic_payload* gp = arrived_.front();
      arrived_.pop_front();
      ++held_;
      peq_.notify(*gp, tlm::END_REQ, sc_time::from_value(accept_ps));
    }
  }

  void send_next_response() {
    if (responding_ || ready_.empty()) return;
    tlm::tlm_generic_payload* gp = ready_.front();
    ready_.pop_front();
    --held_;
    responding_ = true;
    tlm::tlm_phase p = tlm::BEGIN_RESP;
    sc_time d = SC_ZERO_TIME;
    if (in->nb_transport_bw(*gp, p, d) == tlm::TLM_COMPLETED) {
      ++responses_ended_at_once;
      responding_ = false;
    }
    try_accept();
    if (!responding_) send_next_response();
  }

  void move_data(tlm::tlm_generic_payload& gp) {
    const std::uint64_t a = gp.get_address();
    if (a + gp.get_data_length() > mem.size()) {
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    if (gp.is_read())
      std::memcpy(gp.get_data_ptr(), mem.data() + a, gp.get_data_length());
    else
      std::memcpy(mem.data() + a, gp.get_data_ptr(), gp.get_data_length());
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  tlm_utils::peq_with_cb_and_phase<FourPhaseTarget> peq_;
  std::deque<tlm::tlm_generic_payload*> arrived_, ready_;
  tlm::tlm_generic_payload* requesting_ = nullptr;
  std::size_t held_ = 0;
  bool responding_ = false;
};

SidebandExtension stream(std::uint32_t id) {
  SidebandExtension s;
  s.stream_id = id;
  return s;
}

// A master: a DmaInitiator and a thread running the test's body.
class Master : public sc_module {
 public:
  DmaInitiator dma;
  SC_HAS_PROCESS(Master);
  Master(const sc_module_name& name, std::function<void(Master&)> body)
      : sc_module(name), dma("dma"), body_(std::move(body)) {
    dma.set_approximately_timed(true);
    SC_THREAD(run);
  }

 private:
  void run() { body_(*this); }
  std::function<void(Master&)> body_;
};

}  // namespace

TEST(DmaInitiator, TransferWaitsForTheResponseAndMovesTheData) {
  FourPhaseTarget target("target");
  std::uint64_t read_done = 0, write_done = 0;
  std::uint8_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {};
  bool ok_w = false, ok_r = false;
  Master m("m", [&](Master& self) {
    const DmaResult w = self.dma.transfer(tlm::TLM_WRITE_COMMAND, 0x100, in, 8, stream(3));
    write_done = now_ps();
    const DmaResult r = self.dma.transfer(tlm::TLM_READ_COMMAND, 0x100, out, 8, stream(3));
    read_done = now_ps();
    ok_w = w.ok && w.delay_ps == 0;
    ok_r = r.ok && r.delay_ps == 0;
  });
  m.dma.bind(target.in);
  sc_start();
  EXPECT_TRUE(ok_w);
  EXPECT_TRUE(ok_r);
  EXPECT_EQ(write_done, 110 * kNs);  // accept 10 ns + latency 100 ns
  EXPECT_EQ(read_done, 220 * kNs);
  EXPECT_EQ(std::memcmp(in, out, 8), 0);
  ASSERT_EQ(target.seen.size(), 2u);
  EXPECT_EQ(target.seen[0].stream, 3);
  EXPECT_EQ(m.dma.in_flight(), 0u);
}

TEST(DmaInitiator, IssueKeepsSeveralInFlightOneRequestAtATime) {
  FourPhaseTarget target("target");
  std::vector<std::uint64_t> accepted_at, answered_at;
  std::uint8_t buf[4][16] = {};
  Master m("m", [&](Master& self) {
    for (int i = 0; i < 4; ++i) {
      self.dma.issue(tlm::TLM_READ_COMMAND, 0x1000 * i, buf[i], 16, stream(1), [&](bool ok) {
        EXPECT_TRUE(ok);
        answered_at.push_back(now_ps());
      });
      accepted_at.push_back(now_ps());
    }
    EXPECT_EQ(self.dma.in_flight(), 4u - answered_at.size());
  });
  m.dma.bind(target.in);
  sc_start();
  EXPECT_EQ(target.overlapping_requests, 0);  // request exclusion: END_REQ before the next
  // Requests are accepted 10 ns apart; each is answered 100 ns after its acceptance.
  EXPECT_EQ(accepted_at, (std::vector<std::uint64_t>{10 * kNs, 20 * kNs, 30 * kNs, 40 * kNs}));
  EXPECT_EQ(answered_at, (std::vector<std::uint64_t>{110 * kNs, 120 * kNs, 130 * kNs, 140 * kNs}));
}

// issue(until_accepted = false): the caller's thread goes on once BEGIN_REQ is out; the answer
// comes at the same time as before. END_REQ came on its own here, so the answer does not say it
// ended the request.
TEST(DmaInitiator, IssueWithoutWaitingForEndReqReturnsAtOnce) {
  FourPhaseTarget target("target");
  std::uint64_t returned_at = 1, answered_at = 0;
  bool ended_request = true;
  std::uint8_t buf[16] = {};
  Master m("m", [&](Master& self) {
    self.dma.issue(
        tlm::TLM_READ_COMMAND, 0x40, buf, 16, stream(1),
        [&](bool ok) {
          EXPECT_TRUE(ok);
          answered_at = now_ps();
          ended_request = self.dma.answer_ends_unwaited_request();
        },
        /*until_accepted=*/false);
    returned_at = now_ps();
    EXPECT_TRUE(self.dma.request_pending());  // END_REQ is still to come
  });
  m.dma.bind(target.in);
  sc_start();
  EXPECT_EQ(returned_at, 0u);
  EXPECT_EQ(answered_at, 110 * kNs);
  EXPECT_FALSE(ended_request);
  EXPECT_FALSE(m.dma.answer_ends_unwaited_request());  // only while `done` runs
}

TEST(DmaInitiator, BackPressureHoldsTheMasterUntilTheTargetHasRoom) {
  FourPhaseTarget target("target");
  target.depth = 2;
  std::vector<std::uint64_t> accepted_at;
  std::uint8_t buf[4][16] = {};
  Master m("m", [&](Master& self) {
    for (int i = 0; i < 4; ++i) {
      self.dma.issue(tlm::TLM_READ_COMMAND, 64 * i, buf[i], 16, stream(1), [](bool) {});
      accepted_at.push_back(now_ps());
    }
  });
  m.dma.bind(target.in);
  sc_start();
  // Two fit; the third waits for the first answer (110 ns) and its accept delay.
  ASSERT_EQ(accepted_at.size(), 4u);
  EXPECT_EQ(accepted_at[0], 10 * kNs);
  EXPECT_EQ(accepted_at[1], 20 * kNs);
  EXPECT_EQ(accepted_at[2], 120 * kNs);
  EXPECT_EQ(accepted_at[3], 130 * kNs);
}

TEST(DmaInitiator, EarlyCompletionTakesItsAnnotatedDelay) {
  FourPhaseTarget target("target");
  target.complete_early = true;
  std::uint64_t done = 0;
  std::uint8_t buf[8] = {};
  Master m("m", [&](Master& self) {
    wait(sc_time::from_value(5 * kNs));
    EXPECT_TRUE(self.dma.transfer(tlm::TLM_READ_COMMAND, 0, buf, 8, stream(1)).ok);
    done = now_ps();
    EXPECT_FALSE(self.dma.transfer(tlm::TLM_READ_COMMAND, 1 << 20, buf, 8, stream(1)).ok);
  });
  m.dma.bind(target.in);
  sc_start();
  EXPECT_EQ(done, 105 * kNs);
}

TEST(DmaInitiator, LooselyTimedTransferReturnsTheDelayWithoutWaiting) {
  vtoe::test::Memory memory("memory", 4096, sc_time::from_value(70 * kNs));
  std::uint64_t returned_at = 1, delay = 0;
  std::uint8_t buf[8] = {};
  Master m("m", [&](Master& self) {
    self.dma.set_approximately_timed(false);
    const DmaResult r = self.dma.transfer(tlm::TLM_READ_COMMAND, 0, buf, 8, stream(1));
    returned_at = now_ps();
    delay = r.delay_ps;
  });
  m.dma.bind(memory.in);
  sc_start();
  EXPECT_EQ(returned_at, 0u);
  EXPECT_EQ(delay, 70 * kNs);
}

// The TOE's arrangement: masters meet in the hub, whose one socket leaves the parent.
class Parent : public sc_module {
 public:
  tlm::tlm_initiator_socket<> dma;
  DmaHub hub;
  explicit Parent(const sc_module_name& name) : sc_module(name), dma("dma"), hub("hub") {
    hub.out.bind(dma);
  }
};

// A response due now is ended in the call (TLM_COMPLETED, END_RESP implied), through the hub
// too, so the target's response channel frees without an END_RESP call; the times are those of
// the four phases all the same.
TEST(DmaHub, AResponseDueNowIsEndedInTheCall) {
  Parent parent("toe");
  FourPhaseTarget target("target");
  parent.dma.bind(target.in);
  std::vector<std::uint64_t> done_at;
  std::uint8_t buf[3][16] = {};
  Master m("m", [&](Master& self) {
    for (int i = 0; i < 3; ++i) {
      const DmaResult r =
          self.dma.transfer(tlm::TLM_READ_COMMAND, 0x100 * i, buf[i], 16, stream(2));
      EXPECT_TRUE(r.ok);
      done_at.push_back(now_ps());
    }
  });
  m.dma.bind(parent.hub.in);
  sc_start();
  EXPECT_EQ(done_at, (std::vector<std::uint64_t>{110 * kNs, 220 * kNs, 330 * kNs}));
  EXPECT_EQ(target.responses_ended_at_once, 3);
  EXPECT_EQ(target.end_resp_calls, 0);
  EXPECT_EQ(m.dma.in_flight(), 0u);
}

// A target that completes at once behind the hub: the master hears nothing until the response,
// which implies END_REQ. A thread that waited in issue() resumes with that answer; one that did
// not wait is told so (answer_ends_unwaited_request()), to be woken in the same delta cycle.
TEST(DmaHub, AnAnswerThatImpliesEndReqSaysSoOnlyToAnUnwaitedRequest) {
  Parent parent("toe");
  FourPhaseTarget target("target");
  target.complete_early = true;
  parent.dma.bind(target.in);
  std::vector<std::uint64_t> returned_at, answered_at;
  std::vector<bool> said;
  std::uint8_t buf[2][16] = {};
  Master m("m", [&](Master& self) {
    for (int i = 0; i < 2; ++i) {
      const bool wait_for_accept = i == 0;
      self.dma.issue(
          tlm::TLM_READ_COMMAND, 0x100 * i, buf[i], 16, stream(2),
          [&](bool ok) {
            EXPECT_TRUE(ok);
            answered_at.push_back(now_ps());
            said.push_back(self.dma.answer_ends_unwaited_request());
          },
          wait_for_accept);
      returned_at.push_back(now_ps());
      if (!wait_for_accept) wait(sc_time::from_value(200 * kNs));
    }
  });
  m.dma.bind(parent.hub.in);
  sc_start();
  EXPECT_EQ(returned_at, (std::vector<std::uint64_t>{100 * kNs, 100 * kNs}));
  EXPECT_EQ(answered_at, (std::vector<std::uint64_t>{100 * kNs, 200 * kNs}));
  EXPECT_EQ(said, (std::vector<bool>{false, true}));
}

TEST(DmaHub, FourPhaseRequestsFromTwoMastersAreGrantedInTurn) {
  Parent parent("toe");
  FourPhaseTarget target("target");
  target.depth = 1;  // the target holds one request: the masters queue in the hub
  parent.dma.bind(target.in);
  std::vector<int> answered_by;
  std::uint8_t buf[2][3][16] = {};
  auto body = [&](int id) {
    return [&, id](Master& self) {
      for (int i = 0; i < 3; ++i)
        self.dma.issue(tlm::TLM_READ_COMMAND, 0x1000 * id + 64 * i, buf[id][i], 16, stream(id),
                       [&, id](bool ok) {
                         EXPECT_TRUE(ok);
                         answered_by.push_back(id);
                       });
    };
  };
  Master a("a", body(0));
  Master b("b", body(1));
  a.dma.bind(parent.hub.in);
  b.dma.bind(parent.hub.in);
  sc_start();
  EXPECT_EQ(target.overlapping_requests, 0);  // the hub kept the request exclusion rule
  ASSERT_EQ(target.seen.size(), 6u);
  std::vector<int> order;
  for (const auto& s : target.seen) order.push_back(s.stream);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(answered_by, order);
  EXPECT_EQ(vtoe::test::counter(parent.hub.stats(), "at_requests"), 6u);
  EXPECT_GT(vtoe::test::counter(parent.hub.stats(), "at_requests_held"), 0u);
}

VTOE_TEST_MAIN
