// The shared test bench every GoogleTest bench builds on (DESIGN.md §6, habit 7).
//
// A bench owns its SystemC objects as members, runs the test body as a SystemC thread and checks
// afterwards. SystemC elaborates once per process; ctest runs each TEST in a process of its own.
// Put VTOE_TEST_MAIN once in the test source: SystemC warnings then fail the test.
//
//   TEST(Dram, FourKiBWrite) {
//     mem::Dram dram("dram");
//     test::Initiator cpu("cpu", [&](test::Initiator& self) {
//       self.write32(0x100, 7);                   // timed: waits for the annotated delay
//       EXPECT_EQ(self.read32(0x100), 7u);
//     });
//     cpu.socket.bind(dram.in);
//     sc_core::sc_start();
//     EXPECT_EQ(test::counter(dram.stats(), "transactions"), 2u);
//   }
//
// Pieces: Clock (cycles <-> time), Initiator (a TLM initiator whose thread runs the body, with
// blocking access and 32-bit register helpers), Memory (a backing store target with peek/poke),
// IrqSink (counts and times the rising edges of an interrupt line), counter()/accumulator()
// (statistics lookups that fail the test on an unknown name), pattern().
#pragma once

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <utility>
#include <vector>

#include "models/core/sim_time.h"
#include "models/core/stats.h"
#include "tests/support/sc_proc.h"
#include "tests/support/sc_test_main.h"

namespace vtoe::test {

// A clock of a given frequency: cycle counts to time, and waiting whole cycles.
class Clock {
 public:
  explicit Clock(double hz) : hz_(hz) {}
  double hz() const { return hz_; }
  core::TimePs period_ps() const { return core::cycles_to_ps(1, hz_); }
  sc_core::sc_time cycles(double n) const { return core::ps(core::cycles_to_ps(n, hz_)); }
  void wait_cycles(double n) const { sc_core::wait(cycles(n)); }

 private:
  double hz_;
};

// A TLM-2.0 initiator whose SC_THREAD runs the test's body.
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

  // Register helpers: one 32-bit access that waits for its delay; a failed access fails the test.
  std::uint32_t read32(std::uint64_t addr) {
    std::uint32_t v = 0;
    timed(tlm::TLM_READ_COMMAND, addr, reinterpret_cast<std::uint8_t*>(&v), 4);
    return v;
  }
  void write32(std::uint64_t addr, std::uint32_t value) {
    timed(tlm::TLM_WRITE_COMMAND, addr, reinterpret_cast<std::uint8_t*>(&value), 4);
  }
  // Any length, timed the same way; returns the response status.
  tlm::tlm_response_status timed(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                                 unsigned len) {
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_response_status st = access(cmd, addr, data, len, delay);
    EXPECT_EQ(st, tlm::TLM_OK_RESPONSE) << "access to 0x" << std::hex << addr << " failed";
    sc_core::wait(delay);
    return st;
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

// A backing memory: a TLM target over [0, size) with a fixed latency per access, and direct
// peek/poke for set-up and checks. Out-of-range accesses get an address error.
class Memory : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Memory> in;

  Memory(const sc_core::sc_module_name& name, std::uint64_t size,
         sc_core::sc_time latency = sc_core::SC_ZERO_TIME)
      : sc_core::sc_module(name), in("in"), bytes_(size, 0), latency_(latency) {
    in.register_b_transport(this, &Memory::b_transport);
    in.register_transport_dbg(this, &Memory::transport_dbg);
  }

  void poke(std::uint64_t addr, const void* src, std::size_t len) {
    check(addr, len);
    std::memcpy(bytes_.data() + addr, src, len);
  }
  void peek(std::uint64_t addr, void* dst, std::size_t len) const {
    check(addr, len);
    std::memcpy(dst, bytes_.data() + addr, len);
  }
  std::uint32_t peek32(std::uint64_t addr) const {
    std::uint32_t v = 0;
    peek(addr, &v, 4);
    return v;
  }
  std::uint64_t reads() const { return reads_; }
  std::uint64_t writes() const { return writes_; }

 private:
  void check(std::uint64_t addr, std::size_t len) const {
    if (addr + len > bytes_.size() || addr + len < addr)
      throw std::out_of_range("test memory: access outside [0, size)");
  }
  bool in_range(const tlm::tlm_generic_payload& gp) const {
    const std::uint64_t a = gp.get_address(), n = gp.get_data_length();
    return a + n <= bytes_.size() && a + n >= a;
  }
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (!in_range(gp)) {
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    transport_dbg(gp);
    (gp.is_write() ? writes_ : reads_) += 1;
    delay += latency_;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  unsigned transport_dbg(tlm::tlm_generic_payload& gp) {
    if (!in_range(gp)) return 0;
    std::uint8_t* at = bytes_.data() + gp.get_address();
    if (gp.is_write())
      std::memcpy(at, gp.get_data_ptr(), gp.get_data_length());
    else
      std::memcpy(gp.get_data_ptr(), at, gp.get_data_length());
    return gp.get_data_length();
  }

  std::vector<std::uint8_t> bytes_;
  sc_core::sc_time latency_;
  std::uint64_t reads_ = 0, writes_ = 0;
};

// Watches an interrupt line: counts rising edges and records when they happened.
class IrqSink : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> irq;

  SC_HAS_PROCESS(IrqSink);
  explicit IrqSink(const sc_core::sc_module_name& name) : sc_core::sc_module(name), irq("irq") {
    SC_METHOD(on_edge);
    sensitive << irq.pos();
    dont_initialize();
  }

  std::size_t edges() const { return times_ps_.size(); }
  const std::vector<core::TimePs>& times_ps() const { return times_ps_; }
  bool level() const { return irq.read(); }
  // From a test thread: waits until the line is high or `timeout` passes; true if it is high.
  bool wait_high(const sc_core::sc_time& timeout) {
    if (!irq.read()) sc_core::wait(timeout, irq.posedge_event());
    return irq.read();
  }

 private:
  void on_edge() { times_ps_.push_back(core::now_ps()); }
  std::vector<core::TimePs> times_ps_;
};

// Statistics by name; an unknown name fails the test (and returns a value no check expects).
inline std::uint64_t counter(const core::StatGroup& group, const std::string& name) {
  for (const auto& c : group.counters())
    if (c.name == name) return c.counter->value();
  ADD_FAILURE() << "no counter " << name << " in " << group.name();
  return ~0ull;
}
inline const core::Accumulator* accumulator(const core::StatGroup& group, const std::string& name) {
  for (const auto& a : group.accumulators())
    if (a.name == name) return a.acc;
  ADD_FAILURE() << "no accumulator " << name << " in " << group.name();
  return nullptr;
}

inline std::vector<std::uint8_t> pattern(std::size_t len, std::uint8_t seed) {
  std::vector<std::uint8_t> v(len);
  for (std::size_t i = 0; i < len; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
  return v;
}

}  // namespace vtoe::test
