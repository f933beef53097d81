// Plain RAM for the system platform: one host buffer that a processor reads and writes through
// DMI (read and write granted over the whole size), b_transport or transport_dbg.
//
// Unlike Dram (dram.h, the TOE platform's timed memory model with bandwidth and banks), Ram has
// no timing of its own: the ISS's CPI model carries memory time for DMI accesses (docs/iss.md),
// and a b_transport adds only `latency`. The buffer is an anonymous mapping, so untouched pages
// cost no host memory (128 MiB of guest RAM costs what the guest touches).
// With set_timing (the system platform when the core's caches are on), b_transport books the
// DRAM timing core the TOE platform's DRAM uses in its approximately-timed mode (DramTiming,
// dram_timing.h: banks, open rows, refresh, one data bus) and adds the booked completion to the
// delay, so that the caches' line fills and write-backs and the TOE's DMA contend; DMI accesses
// stay untimed (the caches' hits).
// An access outside [0, size) gets TLM_ADDRESS_ERROR_RESPONSE.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <memory>
#include <systemc>
#include <tlm>

#include "models/core/module.h"
#include "models/mem/dram.h"
#include "models/mem/dram_timing.h"

namespace vtoe::mem {

class Ram : public core::Module {
 public:
  tlm_utils::simple_target_socket<Ram> in;

  Ram(const sc_core::sc_module_name& name, std::uint64_t size,
      sc_core::sc_time latency = sc_core::SC_ZERO_TIME);
  ~Ram() override;
  Ram(const Ram&) = delete;
  Ram& operator=(const Ram&) = delete;

  std::uint64_t size() const { return size_; }
  // Host view of [offset, offset + len) (loaders, debuggers); throws std::out_of_range.
  std::uint8_t* host(std::uint64_t offset, std::uint64_t len);
  // Timed b_transport (see above), before the simulation starts; throws std::invalid_argument
  // on parameters DramTiming refuses.
  void set_timing(const DramParams& p);
  bool timed() const { return timing_ != nullptr; }
  // Timed only: transactions and bytes served, and the data bus's busy time (ps).
  std::uint64_t transactions() const { return transactions_; }
  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t busy_ps() const { return busy_ps_; }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& t);
  bool in_range(const tlm::tlm_generic_payload& t) const;

  std::uint64_t size_;
  sc_core::sc_time latency_;
  std::uint8_t* data_ = nullptr;
  std::unique_ptr<DramTiming> timing_;
  std::uint64_t transactions_ = 0, bytes_ = 0, busy_ps_ = 0;
};

}  // namespace vtoe::mem
