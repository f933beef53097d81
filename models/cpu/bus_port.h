// The core's bus interface: the initiator socket its software's loads and stores to devices
// (uncached register accesses) leave through.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <tlm>

#include "models/core/module.h"

namespace vtoe::cpu {

class BusPort : public core::Module {
 public:
  tlm_utils::simple_initiator_socket<BusPort> out;
  explicit BusPort(const sc_core::sc_module_name& name) : core::Module(name), out("out") {}
  tlm::tlm_initiator_socket<>& socket() { return out; }
};

}  // namespace vtoe::cpu
