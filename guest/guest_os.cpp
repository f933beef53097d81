#include "guest/guest_os.h"

namespace vtoe::guest {

GuestOs::GuestOs(const sc_core::sc_module_name& name, cpu::Core& core, GuestMemory& memory,
                 const GuestParams& params, cpu::RegisterPort& regs, cpu::InterruptPort& irq)
    : core::Module(name), memory_(memory) {
  driver_ = std::make_unique<ToeDriver>("driver", core, params.owner, memory_, params.costs,
                                        params.driver, regs, irq);
  sockets_ = std::make_unique<SocketLayer>("sockets", *driver_, core, memory_, params.costs,
                                           params.sockets);
  for (std::size_t i = 0; i < params.workloads.size(); ++i)
    apps_.push_back(std::make_unique<Application>(("app" + std::to_string(i)).c_str(),
                                                  params.workloads[i], *sockets_, core,
                                                  params.owner, params.costs));
}

}  // namespace vtoe::guest
