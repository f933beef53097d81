// A traffic generator that drives the TOE model through its registers, as a device driver would:
// it lays the control channel's rings in memory, connects a socket to a peer, posts send contexts
// of `message` bytes (up to `window` in flight) and reaps the completions the TOE's interrupt
// announces. Only the installed vtoe headers are used.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <cstdint>
#include <systemc>
#include <tlm>

#include "models/mem/dram.h"
#include "models/toe/host_ring_driver.h"

class TrafficGenerator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<TrafficGenerator> bus{"bus"};  // to the TOE's registers
  sc_core::sc_in<bool> irq{"irq"};

  struct Params {
    std::uint64_t regs = 0x4000'0000;  // where the platform maps the TOE's registers
    std::uint32_t peer_ip = 0;
    std::uint16_t peer_port = 5001;
    std::uint32_t message = 8000;  // bytes per send context
    std::uint32_t count = 500;     // messages
    std::uint32_t window = 8;      // contexts in flight
  };

  SC_HAS_PROCESS(TrafficGenerator);
  TrafficGenerator(const sc_core::sc_module_name& name, vtoe::mem::Dram& memory,
                   const Params& params);

  std::uint64_t completed() const { return completed_; }
  sc_core::sc_time finished_at() const { return finished_at_; }

 private:
  struct Access;
  void run();
  void write_reg(std::uint64_t offset, std::uint32_t value);
  std::uint32_t read_reg(std::uint64_t offset);
  // Waits for the interrupt and counts the completions it announces; false on an error event.
  bool reap(vtoe::toe::EventType wanted);

  vtoe::mem::Dram& memory_;
  Params params_;
  vtoe::toe::HostRingDriver rings_{64};
  std::uint64_t completed_ = 0, connected_ = 0;
  sc_core::sc_time finished_at_;
};
