// A guest operating system (or, native, the host OS itself): its TOE driver, socket layer and
// applications, running on a core, reaching its devices through a register port and an
// interrupt port (see hardware_ports.h).
#pragma once

#include <memory>
#include <systemc>
#include <vector>

#include "guest/apps.h"
#include "guest/costs.h"
#include "guest/guest_memory.h"
#include "models/core/param.h"
#include "models/cpu/hardware_ports.h"
#include "guest/socket_api.h"
#include "guest/timer_tick.h"
#include "guest/toe_driver.h"
#include "models/core/module.h"
#include "models/cpu/core.h"

namespace vtoe::guest {

struct GuestParams {
  int owner = 0;  // VM index for CPU accounting
  GuestCosts costs;
  TimerTickParams tick;
  DriverParams driver;
  SocketParams sockets;
  std::vector<Workload> workloads;
};

// The scenario keys that fill GuestParams: the cost table, the driver's rings and the socket
// buffers (owner, local address and workloads are the platform builder's).
const std::vector<core::Param<GuestParams>>& guest_params();

class GuestOs : public core::Module {
 public:
  // `app_cores`: the core each workload's process runs on (a multi-core host); missing or null
  // entries: `core`, where the driver's interrupt handler and kernel thread run.
  GuestOs(const sc_core::sc_module_name& name, cpu::Core& core, GuestMemory& memory,
          const GuestParams& params, cpu::RegisterPort& regs, cpu::InterruptPort& irq,
          cpu::TimerPort* timer = nullptr,  // null: native, the tick reaches the kernel at once
          const std::vector<cpu::Core*>& app_cores = {});

  ToeDriver& driver() { return *driver_; }
  SocketLayer& sockets() { return *sockets_; }
  GuestMemory& memory() { return memory_; }
  const TimerTick* tick() const { return tick_.get(); }  // null without guest.tick
  const std::vector<std::unique_ptr<Application>>& apps() const { return apps_; }
  // All its applications' progress together (the first failure's error).
  AppCounters counters() const;

 private:
  GuestMemory& memory_;
  std::unique_ptr<TimerTick> tick_;
  std::unique_ptr<ToeDriver> driver_;
  std::unique_ptr<SocketLayer> sockets_;
  std::unique_ptr<CoopGroup> coop_;  // its processes' threads, when they are cooperative
  std::vector<std::unique_ptr<Application>> apps_;
};

}  // namespace vtoe::guest
