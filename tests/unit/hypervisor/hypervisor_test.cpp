// Bench for hypervisor::Hypervisor: a core with two VMs, a GIC, a bus with a device behind it.
// Checks exits and their costs, stage-2 pass-through versus trap-and-emulate, virtual interrupt
// delivery to the right VM across VM switches, and physical interrupts taken as exits.
#include "hypervisor/hypervisor.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_target_socket.h>

#include <functional>
#include <systemc>
#include <vector>

#include "models/cpu/bus_port.h"
#include "models/cpu/native_ports.h"
#include "models/gic/gic.h"
#include "models/mem/interconnect.h"
#include "tests/support/bench.h"

using namespace vtoe;
using core::TimePs;
using cpu::CycleClass;

namespace {

constexpr TimePs kUs = 1'000'000;
constexpr std::uint64_t kDevPa = 0x5000'0000;
constexpr std::uint64_t kDevIpa = 0x4000'0000;

// A device that records the accesses it sees.
struct Device : sc_core::sc_module {
  tlm_utils::simple_target_socket<Device> in{"in"};
  std::vector<std::pair<std::uint64_t, std::uint32_t>> writes;
  SC_HAS_PROCESS(Device);
  explicit Device(sc_core::sc_module_name n) : sc_module(n) {
    in.register_b_transport(this, &Device::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
    std::uint32_t v = 0;
    std::memcpy(&v, gp.get_data_ptr(), 4);
    if (gp.is_write())
      writes.emplace_back(gp.get_address(), v);
    else
      std::memcpy(gp.get_data_ptr(), &(v = 0xabcd), 4);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

using Proc = vtoe::test::Proc;

struct Bench {
  explicit Bench(const std::function<void(hypervisor::HypervisorParams&)>& tweak = {})
      : hp([&] {
          hypervisor::HypervisorParams p;
          p.vms = 2;
          if (tweak) tweak(p);
          return p;
        }()) {
    gic.irq[0](irq);
    hyp.irq[0](irq);
    gic.virq[0](virq);
    gic.maintenance[0](maint);
    gic.spi[0](spi0);
    gic.spi[1](spi1);
    bus.map(kDevPa, 0x1000, dev.in, "dev");
    port.out.bind(bus.in);
  }
  hypervisor::HypervisorParams hp;
  cpu::Core core{"core", cpu::CoreParams{}, 2};
  gic::Gic gic{"gic", 2};
  sc_core::sc_signal<bool> irq{"irq"}, virq{"virq"}, maint{"maint"}, spi0{"spi0"}, spi1{"spi1"};
  mem::Interconnect bus{"bus"};
  Device dev{"dev"};
  cpu::BusPort port{"cpu_bus"};
  cpu::BusRegisterPort regs{port.socket(), core, 100};
  hypervisor::Hypervisor hyp{"hyp", hp, core, gic, regs};
};

}  // namespace

TEST(Hypervisor, TrappedAccessIsEmulatedCountedAndCharged) {
  Bench b;
  std::vector<std::tuple<int, std::uint64_t, bool, std::uint32_t>> seen;
  b.hyp.add_trap_handler(
      0, kDevIpa, 0x1000,
      [&](int vm, cpu::Core::Context&, std::uint64_t off, bool w, std::uint32_t& v) {
        seen.emplace_back(vm, off, w, v);
        if (!w) v = 77;
      });
  auto& ctx = b.core.add_context("vm0.driver", 1, 0);
  std::uint32_t read_back = 0;
  TimePs done = 0;
  Proc p("p", [&] {
    std::uint32_t v = 5;
    b.hyp.register_port(0).access(ctx, true, kDevIpa + 0x10, v);
    b.hyp.register_port(0).access(ctx, false, kDevIpa + 0x14, read_back);
    done = sc_core::sc_time_stamp().value();
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(std::get<1>(seen[0]), 0x10u);
  EXPECT_TRUE(std::get<2>(seen[0]));
  EXPECT_EQ(std::get<3>(seen[0]), 5u);
  EXPECT_EQ(read_back, 77u);
  EXPECT_EQ(b.hyp.exits(0).data_abort, 2u);
  EXPECT_TRUE(b.dev.writes.empty());  // nothing reached a device
  // Two exits of (exit + data_abort) cycles, and the WFI trapped when the vCPU went idle after,
  // all charged to VM 0 as hypervisor time.
  const auto& c = b.hp.costs;
  EXPECT_EQ(b.hyp.exits(0).wfi, 1u);
  EXPECT_EQ(b.core.busy_ps(0, CycleClass::Hypervisor),
            2 * b.core.cycles_ps(c.exit + c.data_abort) + b.core.cycles_ps(c.exit + c.wfi));
  EXPECT_GE(done, 2 * b.core.cycles_ps(c.exit + c.data_abort));
}

TEST(Hypervisor, DevicePageMappedInStage2IsReachedWithoutAnExit) {
  Bench b;
  b.hyp.stage2(1).map(kDevIpa, kDevPa, 0x1000, smmu::Perm::rw(), smmu::MemAttr::Device);
  auto& ctx = b.core.add_context("vm1.driver", 1, 1);
  std::uint32_t r = 0;
  Proc p("p", [&] {
    std::uint32_t v = 9;
    b.hyp.register_port(1).access(ctx, true, kDevIpa + 0x20, v);
    b.hyp.register_port(1).access(ctx, false, kDevIpa + 0x24, r);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  ASSERT_EQ(b.dev.writes.size(), 1u);
  EXPECT_EQ(b.dev.writes[0].first, 0x20u);  // the device sees its own offset at the PA
  EXPECT_EQ(b.dev.writes[0].second, 9u);
  EXPECT_EQ(r, 0xabcdu);
  EXPECT_EQ(b.hyp.exits(1).data_abort, 0u);
  // Only the WFI when it went idle costs hypervisor time.
  EXPECT_EQ(b.core.busy_ps(1, CycleClass::Hypervisor),
            b.hyp.exits(1).wfi * b.core.cycles_ps(b.hp.costs.exit + b.hp.costs.wfi));
  EXPECT_GT(b.core.busy_ps(1, CycleClass::GuestKernel), 0u);
}

TEST(Hypervisor, UnemulatedAccessIsCountedWriteDroppedReadZero) {
  Bench b;
  auto& ctx = b.core.add_context("vm0.driver", 1, 0);
  std::uint32_t r = 1234;
  Proc p("p", [&] {
    std::uint32_t v = 1;
    b.hyp.register_port(0).access(ctx, true, 0x9000'0000, v);
    b.hyp.register_port(0).access(ctx, false, 0x9000'0004, r);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_EQ(r, 0u);
  EXPECT_EQ(b.hyp.bad_accesses(), 2u);
  EXPECT_EQ(b.hyp.exits(0).data_abort, 2u);
  EXPECT_TRUE(b.dev.writes.empty());
}

TEST(Hypervisor, VirtualInterruptReachesOnlyItsVmAcrossSwitches) {
  Bench b;
  auto& busy0 = b.core.add_context("vm0.loop", 2, 0);
  auto& isr1 = b.core.add_context("vm1.isr", 0, 1, /*io_wake=*/true);
  int acked = -1;
  TimePs handled_at = 0;
  bool vm0_ever_pending = false;
  // VM 0 computes; VM 1 sleeps until its virtual interrupt comes.
  Proc p0("p0", [&] { b.core.execute(busy0, 20e6, CycleClass::GuestUser); });  // 10 ms
  Proc p1("p1", [&] {
    auto& port = b.hyp.interrupt_port(1);
    while (!port.pending()) sc_core::wait(port.pending_event());
    b.core.execute(isr1, 1000, CycleClass::GuestKernel);
    acked = port.acknowledge();
    port.end_of_interrupt(acked);
    handled_at = sc_core::sc_time_stamp().value();
  });
  Proc inj("inj", [&] {
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_MS));
    b.hyp.inject(1);  // VM 0 is on the core: VM 1's list registers are its saved copy
    for (int i = 0; i < 100; ++i) {
      vm0_ever_pending |= b.hyp.interrupt_port(0).pending();
      sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    }
  });
  sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_MS));
  EXPECT_EQ(acked, b.hp.toe_virq);
  EXPECT_FALSE(vm0_ever_pending);
  EXPECT_FALSE(b.hyp.interrupt_port(1).pending());
  // BOOST + Tickle: VM 1 preempts VM 0 at once instead of waiting for the 30 ms slice.
  EXPECT_GT(handled_at, 1'000 * kUs);
  EXPECT_LT(handled_at, 1'000 * kUs + 20 * kUs);
  EXPECT_GE(b.core.vm_switches(), 1u);
}

TEST(Hypervisor, PhysicalInterruptIsAnExitOfTheRunningVm) {
  Bench b;
  int handled = 0;
  sc_core::sc_event served;
  b.hyp.set_irq_handler(gic::kFirstSpi + 1, [&](cpu::Core::Context& ctx) {
    ++handled;
    // Quiet the device (a register write, which takes time) before the interrupt is ended.
    served.notify(sc_core::SC_ZERO_TIME);
    b.hyp.spend(ctx, 200, 1);
  });
  auto& busy1 = b.core.add_context("vm1.loop", 2, 1);
  Proc p1("p1", [&] { b.core.execute(busy1, 4e6, CycleClass::GuestUser); });  // 2 ms
  Proc device("device", [&] {
    sc_core::wait(sc_core::sc_time(500, sc_core::SC_US));
    b.spi1.write(true);  // a level interrupt, held until the handler served it
    sc_core::wait(served);
    b.spi1.write(false);
  });
  sc_core::sc_start(sc_core::sc_time(5, sc_core::SC_MS));
  EXPECT_EQ(handled, 1);
  EXPECT_EQ(b.hyp.exits(1).irq, 1u);
  EXPECT_EQ(b.hyp.exits(0).irq, 0u);
  EXPECT_GT(b.core.busy_ps(1, CycleClass::Hypervisor), 0u);
}

// A guest timer interrupt taken by the hypervisor: exit, IRQ handling, injection (cycles).
constexpr double kExit = 1000, kIrqAndInject = 3300 + 1500;

// VM 1 computes for 2 ms; its guest timer fires at 0.5 ms. Returns the bench after the run.
void run_timer_case(Bench& b, int timer_vm) {
  auto& busy1 = b.core.add_context("vm1.loop", 2, 1);
  Proc p1("p1", [&] { b.core.execute(busy1, 4e6, CycleClass::GuestUser); });
  Proc timer("timer", [&] {
    sc_core::wait(sc_core::sc_time(500, sc_core::SC_US));
    b.hyp.timer_port(timer_vm).deliver();
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
}

TEST(Hypervisor, GuestTimerFindingItsVcpuRunningIsAnExit) {
  Bench b;
  run_timer_case(b, 1);
  EXPECT_EQ(b.hyp.exits(1).vtimer, 1u);
  EXPECT_EQ(b.hyp.exits(1).timer, 0u);
  EXPECT_EQ(b.core.busy_ps(1, CycleClass::Hypervisor), b.core.cycles_ps(kExit + kIrqAndInject));
}

TEST(Hypervisor, DirectGuestTimerReachesItsRunningVcpuWithoutAnExit) {
  Bench b([](hypervisor::HypervisorParams& p) { p.direct_timer = true; });
  run_timer_case(b, 1);
  EXPECT_EQ(b.hyp.exits(1).vtimer, 0u);
  EXPECT_EQ(b.core.busy_ps(1, CycleClass::Hypervisor), 0u);
}

TEST(Hypervisor, DirectGuestTimerOfAVcpuNotOnTheCoreStillExitsTheRunningOne) {
  Bench b([](hypervisor::HypervisorParams& p) { p.direct_timer = true; });
  run_timer_case(b, 0);  // VM 0's timer while VM 1 runs
  EXPECT_EQ(b.hyp.exits(1).vtimer, 1u);
  EXPECT_EQ(b.hyp.exits(0).vtimer, 0u);
  EXPECT_EQ(b.core.busy_ps(0, CycleClass::Hypervisor), b.core.cycles_ps(kExit + kIrqAndInject));
}

TEST(Hypervisor, GuestTimerOnAnIdleCoreCostsNoExit) {
  Bench b;
  Proc timer("timer", [&] {
    sc_core::wait(sc_core::sc_time(500, sc_core::SC_US));
    b.hyp.timer_port(0).deliver();
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_EQ(b.hyp.exits(0).vtimer + b.hyp.exits(1).vtimer, 0u);
  EXPECT_EQ(b.core.busy_ps(0, CycleClass::Hypervisor), b.core.cycles_ps(kIrqAndInject));
}

TEST(Hypervisor, PostedDeviceInterruptIsNoExitOfTheRunningVm) {
  Bench b([](hypervisor::HypervisorParams& p) { p.direct_irq = true; });
  b.hyp.set_direct_irq_check([](int running, int) { return running == 1; });
  int handled = 0;
  bool posted = false;
  sc_core::sc_event served;
  b.hyp.set_irq_handler(gic::kFirstSpi + 1, [&](cpu::Core::Context& ctx) {
    ++handled;
    posted = b.hyp.posted_delivery(ctx);
    served.notify(sc_core::SC_ZERO_TIME);
    b.hyp.spend(ctx, 200, 1);  // quieting the device takes time (the DA manager's bus accesses)
  });
  auto& busy1 = b.core.add_context("vm1.loop", 2, 1);
  Proc p1("p1", [&] { b.core.execute(busy1, 4e6, CycleClass::GuestUser); });
  Proc device("device", [&] {
    sc_core::wait(sc_core::sc_time(500, sc_core::SC_US));
    b.spi1.write(true);
    sc_core::wait(served);
    b.spi1.write(false);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));  // VM 1 still computes
  EXPECT_EQ(handled, 1);
  EXPECT_TRUE(posted);
  EXPECT_EQ(b.hyp.exits(1).irq, 0u);
  // Only the handler's own work: no exit or IRQ-entry cycles.
  EXPECT_EQ(b.core.busy_ps(1, CycleClass::Hypervisor), b.core.cycles_ps(200));
}

// Two cores, a GIC with a CPU interface each: the interrupt goes to the core its SPI targets, is
// acknowledged there, exits the vCPU running there, and its handler runs on that core's IRQ
// context; with the core idle the cost is the VM's the interrupt serves.
TEST(Hypervisor, EachCoreTakesThePhysicalInterruptsItsCpuInterfaceIsSent) {
  hypervisor::HypervisorParams hp;
  hp.vms = 2;
  hp.scheduler.pcpus = 2;
  hp.scheduler.domain = {0, 1};
  hp.scheduler.affinity = {{0}, {1}};
  cpu::Core core0{"core0", cpu::CoreParams{}, 2}, core1{"core1", cpu::CoreParams{}, 2};
  gic::Gic gic{"gic", 2, 2};
  sc_core::sc_vector<sc_core::sc_signal<bool>> irq{"irq", 2}, virq{"virq", 2}, maint{"maint", 2};
  sc_core::sc_signal<bool> spi0{"spi0"}, spi1{"spi1"};
  mem::Interconnect bus{"bus"};
  Device dev{"dev"};
  cpu::BusPort port{"cpu_bus"};
  cpu::BusRegisterPort regs{port.socket(), core0, 100};
  hypervisor::Hypervisor hyp{"hyp", hp, core0, gic, regs};
  hyp.add_core(core1, 1);
  for (std::size_t k = 0; k < 2; ++k) {
    gic.irq[k](irq[k]);
    hyp.irq[k](irq[k]);
    gic.virq[k](virq[k]);
    gic.maintenance[k](maint[k]);
  }
  gic.spi[0](spi0);
  gic.spi[1](spi1);
  bus.map(kDevPa, 0x1000, dev.in, "dev");
  port.out.bind(bus.in);

  std::vector<const cpu::Core::Context*> ran_on;
  sc_core::sc_event served0, served1;
  hyp.set_irq_handler(
      gic::kFirstSpi + 0,
      [&](cpu::Core::Context& ctx) {
        ran_on.push_back(&ctx);
        served0.notify(sc_core::SC_ZERO_TIME);
        hyp.spend(ctx, 200, 1);  // quieting the device: its line is low by the EOI
        hyp.inject(1);
      },
      1);
  hyp.set_irq_handler(
      gic::kFirstSpi + 1,
      [&](cpu::Core::Context& ctx) {
        ran_on.push_back(&ctx);
        served1.notify(sc_core::SC_ZERO_TIME);
        hyp.spend(ctx, 100, 0);
      },
      0);
  gic.set_targets(gic::kFirstSpi + 0, 0b10);  // SPI 0 to core 1 (VM 1's)
  gic.set_targets(gic::kFirstSpi + 1, 0b01);  // SPI 1 to core 0 (VM 0's)
  // VM 0 computes on core 0 the whole time; core 1 is idle.
  auto& busy0 = core0.add_context("vm0.loop", 2, 0);
  Proc p0("p0", [&] { core0.execute(busy0, 4e6, CycleClass::GuestUser); });
  int guest_acks = 0;
  auto& isr1 = core1.add_context("vm1.isr", 1, 1);
  Proc guest1("guest1", [&] {
    cpu::InterruptPort& port1 = hyp.interrupt_port(1);
    sc_core::wait(port1.pending_event());
    core1.execute(isr1, 10, CycleClass::GuestKernel);
    const int id = port1.acknowledge();
    if (id == hyp.params().toe_virq) ++guest_acks;
    port1.end_of_interrupt(id);
  });
  Proc device("device", [&] {
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    spi0.write(true);
    sc_core::wait(served0);
    spi0.write(false);
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    spi1.write(true);
    sc_core::wait(served1);
    spi1.write(false);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  ASSERT_EQ(ran_on.size(), 2u);
  EXPECT_NE(ran_on[0], ran_on[1]);  // two cores' IRQ contexts
  const auto& c = hp.costs;
  // SPI 0 on idle core 1: no exit, its handling charged there to VM 1 (the interrupt's owner).
  // (Then VM 1's vCPU, woken by its virtual interrupt, idles again: a WFI exit.)
  EXPECT_EQ(hyp.exits(1).wfi, 1u);
  EXPECT_EQ(core1.busy_ps(1, CycleClass::Hypervisor),
            core1.cycles_ps(c.exit + c.irq + 200 + c.exit + c.wfi));
  EXPECT_EQ(hyp.exits(1).irq, 0u);
  EXPECT_EQ(guest_acks, 1);  // VM 1's virtual interrupt reached its vCPU on core 1
  // SPI 1 on core 0: an IRQ exit of VM 0, whose vCPU runs there.
  EXPECT_EQ(hyp.exits(0).irq, 1u);
  EXPECT_EQ(core0.busy_ps(0, CycleClass::Hypervisor), core0.cycles_ps(c.exit + c.irq + 100));
  EXPECT_EQ(core0.busy_ps(1, CycleClass::Hypervisor), 0u);
  EXPECT_EQ(gic.stats().counter("acks").value(), 2u);
  EXPECT_EQ(gic.stats().counter("bad_eois").value(), 0u);
}

VTOE_TEST_MAIN
