// Bench for gic::Gic: SPI lines driven by the test, irq/virq/maintenance sampled from signals, and
// a thread that runs the test's script.
#pragma once

#include <functional>
#include <systemc>
#include <utility>

#include "models/gic/gic.h"
#include "tests/support/bench.h"

namespace gic_test {

using Proc = vtoe::test::Proc;

struct Bench {
  explicit Bench(int num_spis = 8)
      : gic("gic", num_spis),
        line("line", static_cast<std::size_t>(num_spis)),
        irq("irq"),
        virq("virq"),
        maintenance("maintenance") {
    for (int i = 0; i < num_spis; ++i) {
      gic.spi[static_cast<std::size_t>(i)](line[static_cast<std::size_t>(i)]);
    }
    gic.irq[0](irq);
    gic.virq[0](virq);
    gic.maintenance[0](maintenance);
    gic.on_maintenance([this] { ++maintenance_calls; });
  }

  void set_line(int id, bool v) {
    line[static_cast<std::size_t>(id - vtoe::gic::kFirstSpi)].write(v);
  }
  std::uint64_t count(const char* name) { return gic.stats().counter(name).value(); }

  vtoe::gic::Gic gic;
  sc_core::sc_vector<sc_core::sc_signal<bool>> line;
  sc_core::sc_signal<bool> irq;
  sc_core::sc_signal<bool> virq;
  sc_core::sc_signal<bool> maintenance;
  int maintenance_calls = 0;
};

// Lets the GIC's output process run (outputs follow state changes within a few delta cycles).
inline void settle() { sc_core::wait(sc_core::sc_time(1, sc_core::SC_NS)); }

inline std::uint64_t sc_warnings() {
  return sc_core::sc_report_handler::get_count(sc_core::SC_WARNING) +
         sc_core::sc_report_handler::get_count(sc_core::SC_ERROR);
}

}  // namespace gic_test
