// The memory traffic of software on a core (platform.cpu_memory_traffic: on): the bytes its
// programmed-I/O copies and descriptor accesses move between the core and DRAM, as transactions
// on the core's bus port, so that the core and the DMA engines contend for the same DRAM.
//
// A piece of work of C cycles that moves N bytes is booked as ceil(N / burst) transactions (never
// per byte: the caches move whole lines, and lines go out in bursts), issued at even intervals
// over the C cycles. The core runs the C cycles; if the last transaction completes later, the
// core stalls for the rest (charged to the same class and owner: a stalled core is busy). Writes
// that do not stall (posted descriptor writes) only book the memory.
//
// The transactions carry timing only: a write puts back the bytes the DRAM already holds (read
// through the debug transport first), so booking never changes memory contents.
//
// Approximation: transactions are booked when the work is asked for, as if the context ran at
// once; a context preempted in between booked them early.
#pragma once

#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/module.h"
#include "models/cpu/core.h"

namespace vtoe::cpu {

class MemoryTraffic : public core::Module {
 public:
  MemoryTraffic(const sc_core::sc_module_name& name, tlm::tlm_initiator_socket<>& bus, Core& core,
                std::uint32_t burst_bytes = 4096);

  // `cycles` of work on `ctx` (thread context) during which `bytes` move to (write) or from
  // DRAM at physical address `pa`; returns when both the work and the transfers are done.
  // `stall` false: the transfers only book the memory (posted writes). `charge_to`: the VM the
  // cycles are charged to (-1: the context's own, as Core::execute).
  void work(Core::Context& ctx, double cycles, CycleClass cls, bool write, std::uint64_t pa,
            std::size_t bytes, bool stall = true, int charge_to = -1);

 private:
  tlm::tlm_initiator_socket<>& bus_;
  Core& core_;
  std::uint32_t burst_;
  std::vector<std::uint8_t> scratch_;

  core::Counter& bytes_read_;
  core::Counter& bytes_written_;
  core::Counter& transactions_;
  core::Counter& errors_;
  core::Counter& hypervisor_bytes_;
  core::Counter& stall_ps_;
};

}  // namespace vtoe::cpu
