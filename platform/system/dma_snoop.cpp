#include "platform/system/dma_snoop.h"

namespace vtoe::platform::system {

DmaSnoop::DmaSnoop(const sc_core::sc_module_name& name,
                   std::function<void(std::uint64_t, std::uint64_t, bool)> on_access)
    : sc_core::sc_module(name), in("in"), out("out"), on_access_(std::move(on_access)) {
  in.register_b_transport(this, &DmaSnoop::b_transport);
  in.register_nb_transport_fw(this, &DmaSnoop::nb_transport_fw);
  in.register_get_direct_mem_ptr(this, &DmaSnoop::get_direct_mem_ptr);
  in.register_transport_dbg(this, &DmaSnoop::transport_dbg);
  out.register_nb_transport_bw(this, &DmaSnoop::nb_transport_bw);
  out.register_invalidate_direct_mem_ptr(this, &DmaSnoop::invalidate);
}

void DmaSnoop::look(const tlm::tlm_generic_payload& t) {
  if (!t.is_read() && !t.is_write()) return;
  ++snooped_;
  if (on_access_) on_access_(t.get_address(), t.get_data_length(), t.is_write());
}

}  // namespace vtoe::platform::system
