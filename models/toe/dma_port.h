// Issues one of the TOE's memory transactions on a DMA master's initiator socket (the masters'
// sockets meet at the TOE's `dma` socket through a DmaHub), tagged with the sideband (VM,
// channel, stream) so the SystemMMU can translate them.
#pragma once

#include <cstdint>
#include <tlm>

#include "models/core/module.h"
#include "models/core/sideband.h"

namespace vtoe::toe {

struct DmaResult {
  bool ok = true;
  core::TimePs delay_ps = 0;  // annotated completion delay reported by the memory system
};

// Performs one transaction and returns its status and delay; does not wait (callers in threads
// wait for the delay, callers in methods schedule their consequences after it).
inline DmaResult dma_transfer(tlm::tlm_initiator_socket<>& socket, tlm::tlm_command cmd,
                              std::uint64_t addr, std::uint8_t* data, std::uint32_t len,
                              const core::SidebandExtension& sideband) {
  tlm::tlm_generic_payload gp;
  core::SidebandExtension ext = sideband;
  gp.set_command(cmd);
  gp.set_address(addr);
  gp.set_data_ptr(data);
  gp.set_data_length(len);
  gp.set_streaming_width(len);
  gp.set_byte_enable_ptr(nullptr);
  gp.set_dmi_allowed(false);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  gp.set_extension(&ext);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(gp, delay);
  gp.clear_extension(&ext);
  return {gp.is_response_ok(), core::to_ps(delay)};
}

}  // namespace vtoe::toe
