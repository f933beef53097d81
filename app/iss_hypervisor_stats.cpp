#include "app/iss_hypervisor_stats.h"

namespace vtoe::app {

nlohmann::ordered_json hypervisor_stats(hypervisor::IssHypervisor& hyp,
                                        std::uint64_t model_cycles) {
  nlohmann::ordered_json h;
  h["vm_switches"] = hyp.vm_switches();
  h["model_cycles"] = model_cycles;
  nlohmann::ordered_json vms = nlohmann::ordered_json::array();
  const auto& sched = hyp.scheduler().stats();
  for (int vm = 0; vm < hyp.vm_count(); ++vm) {
    const auto& e = hyp.exits(vm);
    const auto& s = sched.vm.at(static_cast<std::size_t>(vm));
    vms.push_back({{"stop", hyp.vm_stop_reason(vm)},
                   {"run_seconds", static_cast<double>(s.run_ps) * 1e-12},
                   {"picks", s.picks},
                   {"exits",
                    {{"data_abort", e.data_abort},
                     {"irq", e.irq},
                     {"wfi", e.wfi},
                     {"hvc", e.hvc},
                     {"timer", e.timer},
                     {"vtimer", e.vtimer}}}});
    nlohmann::ordered_json cycles;
    using Cause = hypervisor::IssHypervisor::Cause;
    for (int c = 0; c < static_cast<int>(Cause::Count); ++c)
      cycles[hypervisor::IssHypervisor::to_string(static_cast<Cause>(c))] =
          hyp.cycles(vm, static_cast<Cause>(c));
    vms.back()["hypervisor_cycles"] = cycles;
    vms.back()["instructions"] = {{"user", hyp.guest_instructions(vm, true)},
                                  {"kernel", hyp.guest_instructions(vm, false)}};
  }
  h["vms"] = vms;
  return h;
}

}  // namespace vtoe::app
