// Sits on the TOE's DMA path (between the SystemMMU and the interconnect) and passes everything
// through (BusPassThrough); for each
// request (b_transport, nb_transport's BEGIN_REQ) it tells `on_access` the physical range and
// whether it is a write, before the request goes on. The platform hands that to the core's
// caches (IssCpu::snoop): the device tree says the TOE is dma-coherent, so its writes invalidate
// the lines they touch and its reads clean dirty ones (docs/caches.md).
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>
#include <tlm>

#include "platform/system/bus_pass_through.h"

namespace vtoe::platform::system {

class DmaSnoop : public BusPassThrough {
 public:
  DmaSnoop(const sc_core::sc_module_name& name,
           std::function<void(std::uint64_t addr, std::uint64_t len, bool write)> on_access);

  std::uint64_t snooped() const { return snooped_; }

 private:
  void before_request(const tlm::tlm_generic_payload& t) override;

  std::function<void(std::uint64_t, std::uint64_t, bool)> on_access_;
  std::uint64_t snooped_ = 0;
};

}  // namespace vtoe::platform::system
