// A guest operating system (native here: the host OS itself): its TOE driver, socket layer and
// applications, running on a core, with a bus port `bus` for register accesses.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "guest/apps.h"
#include "guest/costs.h"
#include "guest/guest_memory.h"
#include "guest/socket_api.h"
#include "guest/toe_driver.h"
#include "models/core/module.h"
#include "models/cpu/core.h"

namespace vtoe::guest {

struct GuestParams {
  int owner = 0;  // VM index for CPU accounting
  GuestCosts costs;
  DriverParams driver;
  SocketParams sockets;
  std::vector<Workload> workloads;
};

class GuestOs : public core::Module {
 public:
  tlm_utils::simple_initiator_socket<GuestOs> bus;

  GuestOs(const sc_core::sc_module_name& name, cpu::Core& core, GuestMemory& memory,
          const GuestParams& params);

  ToeDriver& driver() { return *driver_; }
  SocketLayer& sockets() { return *sockets_; }
  const std::vector<std::unique_ptr<Application>>& apps() const { return apps_; }

 private:
  GuestMemory& memory_;
  std::unique_ptr<ToeDriver> driver_;
  std::unique_ptr<SocketLayer> sockets_;
  std::vector<std::unique_ptr<Application>> apps_;
};

}  // namespace vtoe::guest
