#include "platform/system/dma_snoop.h"

namespace vtoe::platform::system {

DmaSnoop::DmaSnoop(const sc_core::sc_module_name& name,
                   std::function<void(std::uint64_t, std::uint64_t, bool)> on_access)
    : BusPassThrough(name), on_access_(std::move(on_access)) {}

void DmaSnoop::before_request(const tlm::tlm_generic_payload& t) {
  if (!t.is_read() && !t.is_write()) return;
  ++snooped_;
  if (on_access_) on_access_(t.get_address(), t.get_data_length(), t.is_write());
}

}  // namespace vtoe::platform::system
