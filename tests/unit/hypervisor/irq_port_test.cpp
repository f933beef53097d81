// The GIC's IRQ output reaches the CPU side through ports SystemC checks: the hypervisor's `irq`
// (virtualized platforms) and the native CPU interface's `irq`. Left unbound, elaboration fails
// instead of the interrupt being silently lost.
#include <gtest/gtest.h>

#include <string>

#include "hypervisor/hypervisor.h"
#include "models/cpu/bus_port.h"
#include "models/cpu/native_ports.h"
#include "models/gic/gic.h"
#include "tests/support/bench.h"

using namespace vtoe;

namespace {
void expect_unbound_port_error() {
  try {
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
    FAIL() << "elaboration accepted an unbound interrupt port";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("port not bound"), std::string::npos) << e.what();
  }
}
// A GIC with one SPI and its output lines bound: the source of the interrupt line under test.
struct GicWithLines {
  gic::Gic gic{"gic", 1};
  sc_core::sc_signal<bool> irq{"irq"}, virq{"virq"}, maint{"maint"}, spi{"spi"};
  GicWithLines() {
    gic.irq[0](irq);
    gic.virq[0](virq);
    gic.maintenance[0](maint);
    gic.spi[0](spi);
  }
};

}  // namespace

TEST(IrqPorts, UnboundHypervisorIrqFailsElaboration) {
  hypervisor::HypervisorParams hp;
  hp.vms = 1;
  cpu::Core core("core", cpu::CoreParams{}, 1);
  GicWithLines g;
  cpu::BusPort port("cpu_bus");
  cpu::BusRegisterPort regs(port.socket(), core, 100);
  hypervisor::Hypervisor hyp("hyp", hp, core, g.gic, regs);  // hyp.irq left unbound
  expect_unbound_port_error();
}

TEST(IrqPorts, UnboundNativeCpuInterfaceFailsElaboration) {
  GicWithLines g;
  cpu::GicInterruptPort cpu_if("cpu_if", g.gic);  // cpu_if.irq left unbound
  expect_unbound_port_error();
}

TEST(IrqPorts, BoundNativeCpuInterfaceSeesTheGicsInterrupt) {
  GicWithLines g;
  cpu::GicInterruptPort cpu_if("cpu_if", g.gic);
  cpu_if.irq(g.irq);
  g.gic.enable(gic::kFirstSpi, true);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_FALSE(cpu_if.pending());
  g.spi.write(true);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_TRUE(cpu_if.pending());
  EXPECT_EQ(cpu_if.acknowledge(), gic::kFirstSpi);
}

VTOE_TEST_MAIN
