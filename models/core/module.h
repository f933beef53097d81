// Base of every vtoe model: a SystemC module that owns a logger and a statistics group named after
// its hierarchical name.
#pragma once

#include <cstdint>
#include <systemc>

#include "models/core/logger.h"
#include "models/core/sim_time.h"
#include "models/core/stats.h"

namespace vtoe::core {

class Module : public sc_core::sc_module {
 public:
  explicit Module(const sc_core::sc_module_name& name)
      : sc_core::sc_module(name), log_(this->name()), stats_(this->name()) {
    check_time_resolution();
  }

  Logger& logger() { return log_; }
  StatGroup& stats() { return stats_; }

 protected:
  Logger log_;
  StatGroup stats_;
};

}  // namespace vtoe::core
