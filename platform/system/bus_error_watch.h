// Sits between the processor and the interconnect and passes everything through
// (BusPassThrough); it watches for error responses. A core that jumps to unmapped
// memory with no vectors mapped either takes prefetch aborts at the abort vector for ever
// without retiring an instruction; after `limit` error responses in a row with no successful
// bus access between them, the watch calls `on_loop(address)` (the platform halts the core and
// reports the address) so that the run ends with a clear error instead of hanging.
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>

#include "platform/system/bus_pass_through.h"

namespace vtoe::platform::system {

class BusErrorWatch : public BusPassThrough {
 public:
  BusErrorWatch(const sc_core::sc_module_name& name, unsigned limit,
                std::function<void(std::uint64_t address)> on_loop);

  std::uint64_t errors() const { return errors_; }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) override;

  unsigned limit_;
  std::function<void(std::uint64_t)> on_loop_;
  unsigned in_a_row_ = 0;
  std::uint64_t errors_ = 0;
};

}  // namespace vtoe::platform::system
