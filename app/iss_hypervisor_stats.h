// The "hypervisor" object of `vtoe system run --stats` and of results.json's "iss" section when
// guests run under the hypervisor model (hypervisor/iss_hypervisor.h): VM switches, the model's
// cycles, and per VM why it stopped, its CPU time, its exits by cause and the hypervisor's
// cycles by cause (over the whole run).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "hypervisor/iss_hypervisor.h"

namespace vtoe::app {

nlohmann::ordered_json hypervisor_stats(hypervisor::IssHypervisor& hyp, std::uint64_t model_cycles);

}  // namespace vtoe::app
