// Test bench pieces for memory-side models: an initiator whose SC_THREAD runs a test body, and
// sc_main that makes SystemC warnings fail the test.
#pragma once

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <tlm>
#include <utility>
#include <vector>

#include "models/core/stats.h"
#include "tests/support/sc_test_main.h"

namespace vtoe::test {

class Initiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Initiator> socket;

  SC_HAS_PROCESS(Initiator);
  Initiator(const sc_core::sc_module_name& name, std::function<void(Initiator&)> body)
      : sc_core::sc_module(name), socket("socket"), body_(std::move(body)) {
    SC_THREAD(run);
  }

  // One blocking access; `delay` is the annotated delay in and out. Does not wait.
  tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                                  unsigned len, sc_core::sc_time& delay) {
    tlm::tlm_generic_payload trans;
    setup(trans, cmd, addr, data, len);
    socket->b_transport(trans, delay);
    EXPECT_EQ(trans.get_address(), addr) << "address not restored";
    return trans.get_response_status();
  }

  static void setup(tlm::tlm_generic_payload& trans, tlm::tlm_command cmd, std::uint64_t addr,
                    std::uint8_t* data, unsigned len) {
    trans.set_command(cmd);
    trans.set_address(addr);
    trans.set_data_ptr(data);
    trans.set_data_length(len);
    trans.set_streaming_width(len);
    trans.set_byte_enable_ptr(nullptr);
    trans.set_byte_enable_length(0);
    trans.set_dmi_allowed(false);
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }

 private:
  void run() { body_(*this); }
  std::function<void(Initiator&)> body_;
};

// Value of the counter `name` in `group`; fails the test if there is none.
inline std::uint64_t counter(const core::StatGroup& group, const std::string& name) {
  for (const auto& c : group.counters()) {
    if (c.name == name) return c.counter->value();
  }
  ADD_FAILURE() << "no counter " << name << " in " << group.name();
  return ~0ull;
}

inline std::vector<std::uint8_t> pattern(std::size_t len, std::uint8_t seed) {
  std::vector<std::uint8_t> v(len);
  for (std::size_t i = 0; i < len; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

}  // namespace vtoe::test
