// Bench for the per-CPU GIC: SPI targets (GICD_ITARGETSR, GICv2's 1-N model), banked SGIs and
// PPIs, per-CPU acknowledge / EOI / running priority, SGIs to a target list (with their source
// CPU in GICC_IAR), one virtual interface per CPU, and the register face decoding the banked
// registers for the core that makes the access (SidebandExtension::cpu).
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstring>
#include <stdexcept>
#include <systemc>
#include <tlm>

#include "models/core/sideband.h"
#include "models/gic/gic.h"
#include "models/gic/gic_registers.h"
#include "tests/support/bench.h"
#include "tests/unit/gic/gic_bench.h"

using gic_test::Proc;
using gic_test::settle;
using vtoe::gic::Gic;
using vtoe::gic::GicRegisters;
using vtoe::gic::kSpuriousId;
using vtoe::gic::ListRegister;
using vtoe::gic::LrState;
namespace hcr = vtoe::gic::hcr;

namespace {

// A GIC of `cpus` CPU interfaces: SPI lines driven by the test, each CPU's outputs on signals.
struct Smp {
  explicit Smp(int cpus, int spis = 8)
      : gic("gic", spis, cpus),
        line("line", static_cast<std::size_t>(spis)),
        irq("irq", static_cast<std::size_t>(cpus)),
        virq("virq", static_cast<std::size_t>(cpus)),
        maintenance("maintenance", static_cast<std::size_t>(cpus)),
        maintenance_calls(static_cast<std::size_t>(cpus), 0) {
    for (int i = 0; i < spis; ++i)
      gic.spi[static_cast<std::size_t>(i)](line[static_cast<std::size_t>(i)]);
    for (int k = 0; k < cpus; ++k) {
      const auto at = static_cast<std::size_t>(k);
      gic.irq[at](irq[at]);
      gic.virq[at](virq[at]);
      gic.maintenance[at](maintenance[at]);
      gic.on_maintenance([this, at] { ++maintenance_calls[at]; }, k);
    }
  }
  void set_line(int id, bool v) {
    line[static_cast<std::size_t>(id - vtoe::gic::kFirstSpi)].write(v);
  }
  bool irq_of(int k) { return irq[static_cast<std::size_t>(k)].read(); }
  bool virq_of(int k) { return virq[static_cast<std::size_t>(k)].read(); }
  std::uint64_t count(const char* name) { return gic.stats().counter(name).value(); }

  Gic gic;
  sc_core::sc_vector<sc_core::sc_signal<bool>> line;
  sc_core::sc_vector<sc_core::sc_signal<bool>> irq, virq, maintenance;
  std::vector<int> maintenance_calls;
};

void run(Proc& p) {
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_TRUE(p.done) << "the script did not finish (a fatal assertion in it?)";
  EXPECT_EQ(gic_test::sc_warnings(), 0u);
}

}  // namespace

TEST(GicPerCpu, SpiReachesOnlyTheCpuItTargets) {
  Smp b(2);
  Proc p("p", [&] {
    b.gic.enable(33, true);
    b.gic.set_targets(33, 0b10);
    b.set_line(33, true);
    settle();
    EXPECT_FALSE(b.irq_of(0));
    EXPECT_TRUE(b.irq_of(1));
    EXPECT_EQ(b.gic.acknowledge(0), kSpuriousId);  // CPU 0 is not a target
    EXPECT_EQ(b.gic.acknowledge(1), 33);
    b.set_line(33, false);
    b.gic.end_of_interrupt(33, 1);
    settle();
    EXPECT_FALSE(b.irq_of(1));
    EXPECT_EQ(b.gic.targets(33), 0b10u);
  });
  run(p);
}

TEST(GicPerCpu, SpiTargetingSeveralCpusIsTakenByTheFirstToAcknowledge) {
  Smp b(3);
  Proc p("p", [&] {
    b.gic.enable(34, true);
    b.gic.set_targets(34, 0b110);
    b.gic.set_pending(34);
    settle();
    EXPECT_FALSE(b.irq_of(0));
    EXPECT_TRUE(b.irq_of(1));
    EXPECT_TRUE(b.irq_of(2));
    EXPECT_EQ(b.gic.acknowledge(2), 34);
    settle();
    // Active on CPU 2: CPU 1 stops signalling it and has nothing to take.
    EXPECT_FALSE(b.irq_of(1));
    EXPECT_EQ(b.gic.acknowledge(1), kSpuriousId);
    b.gic.end_of_interrupt(34, 2);
    EXPECT_FALSE(b.gic.is_active(34));
  });
  run(p);
}

TEST(GicPerCpu, RetargetingMovesAPendingSpiAndMasksBeyondTheCpusAreDropped) {
  Smp b(2);
  Proc p("p", [&] {
    b.gic.enable(32, true);
    b.set_line(32, true);
    settle();
    EXPECT_TRUE(b.irq_of(0));  // reset target: CPU 0
    EXPECT_FALSE(b.irq_of(1));
    b.gic.set_targets(32, 0xF2);  // CPUs 1 and 4-7: only CPU 1 exists
    settle();
    EXPECT_EQ(b.gic.targets(32), 0b10u);
    EXPECT_FALSE(b.irq_of(0));
    EXPECT_TRUE(b.irq_of(1));
    b.gic.set_targets(32, 0);  // nowhere to go: pending, signalled to nobody
    settle();
    EXPECT_TRUE(b.gic.is_pending(32));
    EXPECT_FALSE(b.irq_of(0));
    EXPECT_FALSE(b.irq_of(1));
  });
  run(p);
}

TEST(GicPerCpu, UniprocessorGicDeliversSpisToCpu0WhateverTheTargets) {
  Smp b(1);
  Proc p("p", [&] {
    b.gic.enable(33, true);
    b.gic.set_targets(33, 0);
    b.set_line(33, true);
    settle();
    EXPECT_TRUE(b.irq_of(0));
    EXPECT_EQ(b.gic.acknowledge(), 33);
  });
  run(p);
}

TEST(GicPerCpu, PpisAreBankedPerCpu) {
  Smp b(2);
  Proc p("p", [&] {
    // PPI 27 enabled on CPU 1 only, with a priority of its own there.
    b.gic.enable(27, true, 1);
    b.gic.set_priority(27, 0x40, 1);
    EXPECT_TRUE(b.gic.is_enabled(27, 1));
    EXPECT_FALSE(b.gic.is_enabled(27, 0));
    EXPECT_EQ(b.gic.priority(27, 0), vtoe::gic::kDefaultPriority);
    b.gic.set_ppi_level(27, true, 0);  // CPU 0's timer fires: disabled there
    settle();
    EXPECT_FALSE(b.irq_of(0));
    EXPECT_FALSE(b.irq_of(1));
    EXPECT_FALSE(b.gic.is_pending(27, 1));
    b.gic.set_ppi_level(27, true, 1);
    settle();
    EXPECT_TRUE(b.irq_of(1));
    EXPECT_FALSE(b.irq_of(0));
    EXPECT_EQ(b.gic.acknowledge(1), 27);
    EXPECT_EQ(b.gic.running_priority(1), 0x40);
    EXPECT_EQ(b.gic.running_priority(0), vtoe::gic::kIdlePriority);
    EXPECT_TRUE(b.gic.is_active(27, 1));
    EXPECT_FALSE(b.gic.is_active(27, 0));
  });
  run(p);
}

TEST(GicPerCpu, SgiToATargetListIsPendingPerTargetWithItsSourceInIar) {
  Smp b(3);
  Proc p("p", [&] {
    for (int k = 0; k < 3; ++k) b.gic.enable(3, true, k);
    b.gic.send_sgi(3, 0b110, 0);  // CPU 0 -> CPUs 1 and 2
    settle();
    EXPECT_FALSE(b.gic.is_pending(3, 0));
    EXPECT_TRUE(b.gic.is_pending(3, 1));
    EXPECT_TRUE(b.gic.is_pending(3, 2));
    EXPECT_FALSE(b.irq_of(0));
    EXPECT_TRUE(b.irq_of(1));
    // Two sources for CPU 1: one acknowledge each, lowest source first.
    b.gic.send_sgi(3, 0b010, 2);
    EXPECT_EQ(b.gic.sgi_sources(3, 1), 0b101u);
    EXPECT_EQ(b.gic.acknowledge(1), 3);            // source 0: CPUID 0
    EXPECT_EQ(b.gic.acknowledge(1), kSpuriousId);  // active: not again before its EOI
    b.gic.end_of_interrupt(3, 1);
    EXPECT_EQ(b.gic.acknowledge(1), 3 | (2 << 10));  // source 2 in GICC_IAR[12:10]
    b.gic.end_of_interrupt(3 | (2 << 10), 1);
    EXPECT_FALSE(b.gic.is_pending(3, 1));
    EXPECT_FALSE(b.gic.is_active(3, 1));
    EXPECT_EQ(b.gic.acknowledge(2), 3);
    b.gic.end_of_interrupt(3, 2);
    EXPECT_EQ(b.count("bad_eois"), 0u);
  });
  run(p);
}

TEST(GicPerCpu, AcknowledgeAndEoiBelongToTheCpuInterfaceThatTookTheInterrupt) {
  Smp b(2);
  Proc p("p", [&] {
    b.gic.enable(32, true);
    b.gic.set_priority(32, 0x80);
    b.gic.set_targets(32, 0b01);
    b.gic.set_pending(32);
    EXPECT_EQ(b.gic.acknowledge(0), 32);
    EXPECT_EQ(b.gic.running_priority(0), 0x80);
    EXPECT_EQ(b.gic.running_priority(1), vtoe::gic::kIdlePriority);
    b.gic.logger().set_level(vtoe::core::LogLevel::Off);  // the bad EOI below warns
    b.gic.end_of_interrupt(32, 1);  // CPU 1 never acknowledged it: ignored and counted
    EXPECT_EQ(b.count("bad_eois"), 1u);
    EXPECT_TRUE(b.gic.is_active(32));
    b.gic.end_of_interrupt(32, 0);
    EXPECT_FALSE(b.gic.is_active(32));
    EXPECT_EQ(b.gic.running_priority(0), vtoe::gic::kIdlePriority);
    // Priority masks are per CPU too.
    b.gic.set_targets(32, 0b11);
    b.gic.set_priority_mask(0x80, 1);  // 0x80 is not below CPU 1's mask
    b.gic.set_pending(32);
    settle();
    EXPECT_TRUE(b.irq_of(0));
    EXPECT_FALSE(b.irq_of(1));
    EXPECT_THROW(b.gic.acknowledge(2), std::out_of_range);  // no CPU interface 2
  });
  run(p);
}

TEST(GicPerCpu, MoreCpusThanTheModelTakesIsRefused) {
  EXPECT_THROW(Gic("too_many", 1, vtoe::gic::kMaxCpus + 1), std::invalid_argument);
  EXPECT_THROW(Gic("none", 1, 0), std::invalid_argument);
}

TEST(GicPerCpu, EachCpuHasItsOwnVirtualInterface) {
  Smp b(2);
  Proc p("p", [&] {
    b.gic.write_lr(0, ListRegister::make_pending(48, 0xA0), 1);
    settle();
    EXPECT_FALSE(b.virq_of(0));
    EXPECT_TRUE(b.virq_of(1));
    EXPECT_EQ(b.gic.virtual_acknowledge(0), kSpuriousId);
    EXPECT_EQ(b.gic.virtual_acknowledge(1), 48);
    EXPECT_EQ(b.gic.read_lr(0, 1).state, LrState::Active);
    EXPECT_EQ(b.gic.read_lr(0, 0).state, LrState::Invalid);
    b.gic.virtual_end_of_interrupt(48, 1);
    EXPECT_EQ(b.gic.eisr(1), 1u);  // emptied with the EOI bit: CPU 1's maintenance
    settle();
    EXPECT_EQ(b.maintenance_calls[1], 1);
    EXPECT_EQ(b.maintenance_calls[0], 0);
    EXPECT_TRUE(b.maintenance[1].read());
    EXPECT_FALSE(b.maintenance[0].read());
    // CPU 1's maintenance is its own PPI 25: pending there, not on CPU 0.
    EXPECT_TRUE(b.gic.is_pending(vtoe::gic::kMaintenanceId, 1));
    EXPECT_FALSE(b.gic.is_pending(vtoe::gic::kMaintenanceId, 0));
    b.gic.clear_eoi_status(1, 1);
    // Save on one CPU, restore on the other: the state moves with the VM.
    b.gic.write_lr(2, ListRegister::make_pending(50, 0x40), 1);
    const auto saved = b.gic.save(1);
    b.gic.restore(vtoe::gic::VgicState{}, 1);
    b.gic.restore(saved, 0);
    settle();
    EXPECT_TRUE(b.virq_of(0));
    EXPECT_FALSE(b.virq_of(1));
    EXPECT_EQ(b.gic.virtual_highest_pending(0), 50);
    b.gic.write_hcr(0, 0);  // CPU 0's interface off: nothing signalled there
    settle();
    EXPECT_FALSE(b.virq_of(0));
    EXPECT_EQ(b.gic.hcr(1), hcr::kEn);
  });
  run(p);
}

TEST(GicPerCpu, HardwareLinkedVirtualEoiDeactivatesThatCpusBankedPpi) {
  Smp b(2);
  Proc p("p", [&] {
    b.gic.enable(27, true, 1);
    b.gic.set_ppi_level(27, true, 1);
    b.gic.set_split_eoi(true, 1);
    EXPECT_EQ(b.gic.acknowledge(1), 27);
    b.gic.end_of_interrupt(27, 1);  // priority drop only
    b.gic.set_ppi_level(27, false, 1);
    EXPECT_TRUE(b.gic.is_active(27, 1));
    b.gic.write_lr(0, ListRegister::make_pending(27, 0xA0, 27), 1);
    EXPECT_EQ(b.gic.virtual_acknowledge(1), 27);
    b.gic.virtual_end_of_interrupt(27, 1);
    EXPECT_FALSE(b.gic.is_active(27, 1));
    EXPECT_EQ(b.count("bad_eois"), 0u);
  });
  run(p);
}

// ---- The register face: banked registers decoded for the accessing core ----

namespace {

struct Sockets : sc_core::sc_module {
  explicit Sockets(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
  tlm_utils::simple_initiator_socket<Sockets> d{"d"}, c{"c"}, h{"h"}, v{"v"};

  // A 32-bit bus read of GICC `offset` by core `cpu` (the sideband names it).
  std::uint32_t read_cpu_as(int cpu, std::uint32_t offset) {
    tlm::tlm_generic_payload gp;
    std::uint32_t value = 0;
    vtoe::core::SidebandExtension sb;
    sb.cpu = static_cast<std::uint16_t>(cpu);
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(offset);
    gp.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
    gp.set_data_length(4);
    gp.set_streaming_width(4);
    gp.set_extension(&sb);
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    c->b_transport(gp, t);
    gp.clear_extension(&sb);
    EXPECT_EQ(gp.get_response_status(), tlm::TLM_OK_RESPONSE);
    return value;
  }
};

struct RegSmp : Smp {
  explicit RegSmp(int cpus) : Smp(cpus, 32), regs("regs", gic) {
    s.d.bind(regs.distributor);
    s.c.bind(regs.cpu);
    s.h.bind(regs.hyp);
    s.v.bind(regs.vcpu);
  }
  // Enables the distributor and every CPU interface, all priorities let through.
  void open() {
    regs.write_distributor(0x000, 1);
    for (int k = 0; k < gic.num_cpus(); ++k) {
      regs.write_cpu(0x00, 1, k);
      regs.write_cpu(0x04, 0xFF, k);
    }
  }
  GicRegisters regs;
  Sockets s{"s"};
};

}  // namespace

TEST(GicPerCpuRegisters, TyperCountsTheCpusAndItargetsrRoutesSpis) {
  RegSmp b(3);
  Proc p("p", [&] {
    b.open();
    EXPECT_EQ((b.regs.read_distributor(0x004) >> 5) & 7u, 2u);  // CPUNumber: 3 CPUs
    // ITARGETSR0-7: each CPU reads its own bit; writes are ignored.
    EXPECT_EQ(b.regs.read_distributor(0x800, 4, 0), 0x01010101u);
    EXPECT_EQ(b.regs.read_distributor(0x800, 4, 2), 0x04040404u);
    b.regs.write_distributor(0x800, 0, 4, 2);
    EXPECT_EQ(b.regs.read_distributor(0x800, 4, 2), 0x04040404u);
    // SPI 33 to CPU 2 (a byte write), enabled, pending: CPU 2 takes it.
    EXPECT_EQ(b.regs.read_distributor(0x821, 1), 0x01u);  // reset: CPU 0
    b.regs.write_distributor(0x821, 0x04, 1);
    EXPECT_EQ(b.regs.read_distributor(0x821, 1), 0x04u);
    b.regs.write_distributor(0x104, 1u << 1);  // ISENABLER1: ID 33
    b.regs.write_distributor(0x204, 1u << 1);  // ISPENDR1
    settle();
    EXPECT_FALSE(b.irq_of(0));
    EXPECT_TRUE(b.irq_of(2));
    EXPECT_EQ(b.regs.read_cpu(0x0C, 0), kSpuriousId);
    EXPECT_EQ(b.regs.read_cpu(0x18, 2), 33u);  // GICC_HPPIR of CPU 2
    EXPECT_EQ(b.regs.read_cpu(0x0C, 2), 33u);
    b.regs.write_cpu(0x10, 33, 2);
    EXPECT_FALSE(b.gic.is_active(33));
  });
  run(p);
}

TEST(GicPerCpuRegisters, SgirFiltersReachTheirCpusAndIarGivesTheSourceThroughTheBus) {
  RegSmp b(3);
  Proc p("p", [&] {
    b.open();
    b.regs.write_distributor(0xF00, (1u << 24) | 5u, 4, 1);  // CPU 1 -> all others: 0 and 2
    EXPECT_TRUE(b.gic.is_pending(5, 0));
    EXPECT_FALSE(b.gic.is_pending(5, 1));
    EXPECT_TRUE(b.gic.is_pending(5, 2));
    b.regs.write_distributor(0xF00, (0x02u << 16) | 6u, 4, 2);  // CPU 2 -> list {1}
    b.regs.write_distributor(0xF00, (2u << 24) | 7u, 4, 0);     // CPU 0 -> itself
    EXPECT_TRUE(b.gic.is_pending(6, 1));
    EXPECT_FALSE(b.gic.is_pending(6, 2));
    EXPECT_TRUE(b.gic.is_pending(7, 0));
    EXPECT_FALSE(b.gic.is_pending(7, 1));
    // Acknowledged over the bus by CPU 2 (the sideband says so): SGI 5 from CPU 1.
    EXPECT_EQ(b.s.read_cpu_as(2, 0x0C), 5u | (1u << 10));
    b.regs.write_cpu(0x10, 5u | (1u << 10), 2);
    EXPECT_FALSE(b.gic.is_active(5, 2));
    EXPECT_TRUE(b.gic.is_pending(5, 0));  // CPU 0's copy is untouched
    EXPECT_EQ(b.s.read_cpu_as(1, 0x0C), 6u | (2u << 10));
    EXPECT_EQ(b.gic.stats().counter("bad_eois").value(), 0u);
  });
  run(p);
}

TEST(GicPerCpuRegisters, BankedEnablesAndVirtualInterfacesFollowTheAccessor) {
  RegSmp b(2);
  Proc p("p", [&] {
    b.regs.write_distributor(0x100, 1u << 27, 4, 1);  // ISENABLER0 by CPU 1: its PPI 27
    EXPECT_TRUE(b.gic.is_enabled(27, 1));
    EXPECT_FALSE(b.gic.is_enabled(27, 0));
    EXPECT_EQ(b.regs.read_distributor(0x100, 4, 0) & (1u << 27), 0u);
    // GICH_LR0 written by CPU 1's hypervisor: only CPU 1's GICV shows it.
    b.regs.write_hyp(0x00, hcr::kEn, 1);
    b.regs.write_hyp(0x100, GicRegisters::encode_lr(ListRegister::make_pending(40, 0x00)), 1);
    b.regs.write_vcpu(0x00, 1, 1);  // GICV_CTLR: group 0 on
    b.regs.write_vcpu(0x04, 0xFF, 1);
    EXPECT_EQ(b.regs.read_hyp(0x30, 0), 0xFu);  // CPU 0's LRs all empty
    EXPECT_EQ(b.regs.read_hyp(0x30, 1), 0xEu);
    EXPECT_EQ(b.regs.read_vcpu(0x0C, 0), kSpuriousId);
    EXPECT_EQ(b.regs.read_vcpu(0x0C, 1), 40u);
  });
  run(p);
}

TEST(GicPerCpuRegisters, MoreCpusThanGicv2CanNameIsRefused) {
  Gic gic("big", 1, vtoe::gic::kMaxRegisterCpus + 1);
  EXPECT_THROW(GicRegisters("big_regs", gic), std::invalid_argument);
}

VTOE_TEST_MAIN
