// Bench for gic::Gic: distributor + physical CPU interface, virtual interface (list registers),
// maintenance, hardware-linked interrupts and save/restore across VM switches (paper Fig. 8).
#include <gtest/gtest.h>

#include <systemc>

#include "tests/unit/gic/gic_bench.h"
#include "tests/support/bench.h"

using gic_test::Bench;
using gic_test::Proc;
using gic_test::settle;
using vtoe::gic::kSpuriousId;
using vtoe::gic::ListRegister;
using vtoe::gic::LrState;
using vtoe::gic::VgicState;
namespace hcr = vtoe::gic::hcr;
namespace misr = vtoe::gic::misr;

namespace {

void run(Bench& b, Proc& p) {
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_TRUE(p.done) << "the script did not finish (a fatal assertion in it?)";
  EXPECT_EQ(gic_test::sc_warnings(), 0u);
  (void)b;
}

}  // namespace

// ---- Distributor and physical CPU interface ----

TEST(GicDistributor, LevelSpiRaisesIrqAckReturnsIdAndEoiWithLineHighRepends) {
  Bench b;
  Proc p("p", [&] {
    b.gic.enable(33, true);
    settle();
    EXPECT_FALSE(b.irq.read());
    EXPECT_EQ(b.gic.acknowledge(), kSpuriousId);  // nothing pending yet

    b.set_line(33, true);
    settle();
    EXPECT_TRUE(b.irq.read());
    EXPECT_TRUE(b.gic.is_pending(33));
    EXPECT_EQ(b.gic.highest_pending(), 33);
    EXPECT_EQ(b.gic.acknowledge(), 33);
    EXPECT_TRUE(b.gic.is_active(33));
    settle();
    EXPECT_FALSE(b.irq.read()) << "an active interrupt is not signalled again";
    EXPECT_EQ(b.gic.acknowledge(), kSpuriousId);

    b.gic.end_of_interrupt(33);  // line still high: pending again
    settle();
    EXPECT_FALSE(b.gic.is_active(33));
    EXPECT_TRUE(b.gic.is_pending(33));
    EXPECT_TRUE(b.irq.read());
    EXPECT_EQ(b.gic.acknowledge(), 33);

    b.set_line(33, false);  // device deasserts before the EOI: nothing more
    b.gic.end_of_interrupt(33);
    settle();
    EXPECT_FALSE(b.irq.read());
    EXPECT_FALSE(b.gic.is_pending(33));
    EXPECT_EQ(b.gic.acknowledge(), kSpuriousId);
  });
  run(b, p);
  EXPECT_EQ(b.count("acks"), 2u);
  EXPECT_EQ(b.count("eois"), 2u);
  EXPECT_EQ(b.count("spurious"), 3u);
  EXPECT_EQ(b.count("bad_eois"), 0u);
}

TEST(GicDistributor, PrioritiesOrderAcknowledgeAndHigherPriorityPreempts) {
  Bench b;
  Proc p("p", [&] {
    for (int id : {32, 33, 34}) b.gic.enable(id, true);
    b.gic.set_priority(32, 0x80);
    b.gic.set_priority(33, 0x20);
    b.gic.set_priority(34, 0x40);
    for (int id : {32, 33, 34}) b.set_line(id, true);
    settle();
    EXPECT_EQ(b.gic.acknowledge(), 33);
    EXPECT_EQ(b.gic.running_priority(), 0x20);
    settle();
    EXPECT_FALSE(b.irq.read()) << "lower priorities cannot preempt 0x20";
    EXPECT_EQ(b.gic.acknowledge(), kSpuriousId);
    b.set_line(33, false);
    settle();
    b.gic.end_of_interrupt(33);
    EXPECT_EQ(b.gic.acknowledge(), 34);
    b.set_line(34, false);
    settle();
    b.gic.end_of_interrupt(34);
    EXPECT_EQ(b.gic.acknowledge(), 32);
    EXPECT_EQ(b.gic.running_priority(), 0x80);

    // While 32 (0x80) runs, 33 (0x20) arrives and preempts: nested acknowledge.
    b.set_line(33, true);
    settle();
    EXPECT_TRUE(b.irq.read());
    EXPECT_EQ(b.gic.acknowledge(), 33);
    b.set_line(33, false);
    settle();
    b.gic.end_of_interrupt(33);
    EXPECT_EQ(b.gic.running_priority(), 0x80);
    b.set_line(32, false);
    settle();
    b.gic.end_of_interrupt(32);
    EXPECT_EQ(b.gic.running_priority(), vtoe::gic::kIdlePriority);
    settle();
    EXPECT_FALSE(b.irq.read());
  });
  run(b, p);
  EXPECT_EQ(b.count("bad_eois"), 0u);
}

TEST(GicDistributor, EqualPrioritiesAcknowledgeLowestIdFirst) {
  Bench b;
  Proc p("p", [&] {
    for (int id : {36, 34, 35}) {
      b.gic.enable(id, true);
      b.set_line(id, true);
    }
    settle();
    for (int id : {34, 35, 36}) {
      EXPECT_EQ(b.gic.acknowledge(), id);
      b.set_line(id, false);
      settle();
      b.gic.end_of_interrupt(id);
    }
  });
  run(b, p);
}

TEST(GicDistributor, DisabledOrMaskedInterruptsNeverSignal) {
  Bench b;
  Proc p("p", [&] {
    b.set_line(35, true);  // not enabled
    for (int i = 0; i < 5; ++i) {
      settle();
      EXPECT_FALSE(b.irq.read());
      EXPECT_EQ(b.gic.acknowledge(), kSpuriousId);
    }
    EXPECT_TRUE(b.gic.is_pending(35)) << "disabled interrupts still record pending state";

    // Enabled but at or below the priority mask.
    b.gic.set_priority(35, 0xC0);
    b.gic.set_priority_mask(0xC0);
    b.gic.enable(35, true);
    settle();
    EXPECT_FALSE(b.irq.read());
    EXPECT_EQ(b.gic.acknowledge(), kSpuriousId);

    // Distributor or CPU interface off.
    b.gic.set_priority_mask(0xFF);
    b.gic.set_distributor_enabled(false);
    settle();
    EXPECT_FALSE(b.irq.read());
    b.gic.set_distributor_enabled(true);
    b.gic.set_cpu_interface_enabled(false);
    settle();
    EXPECT_FALSE(b.irq.read());
    EXPECT_EQ(b.gic.acknowledge(), kSpuriousId);

    b.gic.set_cpu_interface_enabled(true);
    settle();
    EXPECT_TRUE(b.irq.read()) << "the held level is delivered once unmasked";
    b.gic.enable(35, false);
    settle();
    EXPECT_FALSE(b.irq.read()) << "disabling withdraws the request";
  });
  run(b, p);
  EXPECT_EQ(b.count("acks"), 0u);
  EXPECT_EQ(b.count("spurious"), 7u);
}

TEST(GicDistributor, EdgeAndSoftwarePendingAreConsumedByAcknowledge) {
  Bench b;
  Proc p("p", [&] {
    b.gic.set_edge_triggered(38, true);
    b.gic.enable(38, true);
    b.set_line(38, true);
    settle();
    b.set_line(38, false);  // a pulse
    settle();
    EXPECT_TRUE(b.irq.read());
    EXPECT_EQ(b.gic.acknowledge(), 38);
    b.gic.end_of_interrupt(38);
    settle();
    EXPECT_FALSE(b.irq.read()) << "an edge is delivered once";

    b.gic.enable(3, true);  // SGI 3, software-generated
    b.gic.set_pending(3);
    settle();
    EXPECT_TRUE(b.irq.read());
    EXPECT_EQ(b.gic.acknowledge(), 3);
    b.gic.end_of_interrupt(3);
    EXPECT_EQ(b.gic.acknowledge(), kSpuriousId);
  });
  run(b, p);
}

TEST(GicDistributor, BadEoiIsIgnoredAndCounted) {
  Bench b;
  Proc p("p", [&] {
    b.gic.logger().set_level(vtoe::core::LogLevel::Off);
    b.gic.enable(33, true);
    b.set_line(33, true);
    settle();
    b.gic.end_of_interrupt(33);  // never acknowledged
    EXPECT_EQ(b.gic.acknowledge(), 33);
    b.gic.end_of_interrupt(kSpuriousId);  // ignored silently
    EXPECT_TRUE(b.gic.is_active(33));
  });
  run(b, p);
  EXPECT_EQ(b.count("bad_eois"), 1u);
  EXPECT_THROW(b.gic.enable(32 + 8, true), std::out_of_range);
  EXPECT_THROW(b.gic.write_lr(4, ListRegister{}), std::out_of_range);
}

// ---- Virtual interface ----

TEST(GicVirtual, LrWriteRaisesVirqAckActivatesEoiInvalidatesWithMaintenance) {
  Bench b;
  Proc p("p", [&] {
    settle();
    EXPECT_FALSE(b.virq.read());
    EXPECT_EQ(b.gic.free_lr(), 0);
    b.gic.write_lr(0, ListRegister::make_pending(27, 0xA0));
    EXPECT_EQ(b.gic.pending_lr_count(), 1);
    EXPECT_EQ(b.gic.free_lr(), 1);
    settle();
    EXPECT_TRUE(b.virq.read());
    EXPECT_FALSE(b.irq.read()) << "virtual interrupts do not touch the physical line";

    EXPECT_EQ(b.gic.virtual_acknowledge(), 27);
    EXPECT_EQ(b.gic.read_lr(0).state, LrState::Active);
    EXPECT_EQ(b.gic.virtual_running_priority(), 0xA0);
    EXPECT_EQ(b.gic.pending_lr_count(), 0);
    settle();
    EXPECT_FALSE(b.virq.read());
    EXPECT_FALSE(b.maintenance.read());
    EXPECT_EQ(b.maintenance_calls, 0);

    b.gic.virtual_end_of_interrupt(27);
    EXPECT_EQ(b.gic.read_lr(0).state, LrState::Invalid);
    EXPECT_EQ(b.gic.eisr(), 1u);
    EXPECT_EQ(b.gic.misr(), misr::kEoi);
    EXPECT_EQ(b.gic.virtual_running_priority(), vtoe::gic::kIdlePriority);
    settle();
    EXPECT_TRUE(b.maintenance.read());
    EXPECT_EQ(b.maintenance_calls, 1);
    EXPECT_EQ(b.gic.free_lr(), 0);

    b.gic.write_lr(0, ListRegister{});  // the hypervisor handles it: EISR clears
    settle();
    EXPECT_FALSE(b.maintenance.read());
    EXPECT_EQ(b.gic.virtual_acknowledge(), kSpuriousId);
  });
  run(b, p);
  EXPECT_EQ(b.count("virtual_acks"), 1u);
  EXPECT_EQ(b.count("virtual_eois"), 1u);
  EXPECT_EQ(b.count("lr_writes"), 2u);
  EXPECT_EQ(b.count("maintenance"), 1u);
}

TEST(GicVirtual, TwoLrsAcknowledgedInPriorityOrder) {
  Bench b;
  Proc p("p", [&] {
    b.gic.write_lr(0, ListRegister::make_pending(50, 0x80));
    b.gic.write_lr(1, ListRegister::make_pending(60, 0x20));
    settle();
    EXPECT_TRUE(b.virq.read());
    EXPECT_EQ(b.gic.virtual_highest_pending(), 60);
    EXPECT_EQ(b.gic.virtual_acknowledge(), 60);
    settle();
    EXPECT_FALSE(b.virq.read()) << "0x80 cannot preempt a running 0x20";
    EXPECT_EQ(b.gic.virtual_acknowledge(), kSpuriousId);
    b.gic.virtual_end_of_interrupt(60);
    settle();
    EXPECT_TRUE(b.virq.read());
    EXPECT_EQ(b.gic.virtual_acknowledge(), 50);
    b.gic.virtual_end_of_interrupt(50);
    EXPECT_EQ(b.gic.valid_lr_count(), 0);
    EXPECT_EQ(b.gic.eisr(), 3u);
  });
  run(b, p);
}

TEST(GicVirtual, HigherPriorityVirtualInterruptPreemptsAndEoiDropsInOrder) {
  Bench b;
  Proc p("p", [&] {
    b.gic.write_lr(0, ListRegister::make_pending(50, 0x80));
    EXPECT_EQ(b.gic.virtual_acknowledge(), 50);
    b.gic.write_lr(1, ListRegister::make_pending(60, 0x20));
    settle();
    EXPECT_TRUE(b.virq.read());
    EXPECT_EQ(b.gic.virtual_acknowledge(), 60);
    EXPECT_EQ(b.gic.virtual_running_priority(), 0x20);
    b.gic.virtual_end_of_interrupt(60);
    EXPECT_EQ(b.gic.virtual_running_priority(), 0x80);
    b.gic.virtual_end_of_interrupt(50);
    EXPECT_EQ(b.gic.apr(), 0u);
  });
  run(b, p);
}

TEST(GicVirtual, DisabledMaskedOrGroupOffInterfaceRaisesNoVirq) {
  Bench b;
  Proc p("p", [&] {
    b.gic.write_lr(0, ListRegister::make_pending(40, 0x90));
    b.gic.write_hcr(0);  // hypervisor: GICH_HCR.En = 0
    settle();
    EXPECT_FALSE(b.virq.read());
    EXPECT_EQ(b.gic.virtual_acknowledge(), kSpuriousId);
    b.gic.write_hcr(hcr::kEn);
    b.gic.virtual_set_priority_mask(0x90);  // guest masks 0x90 and below
    settle();
    EXPECT_FALSE(b.virq.read());
    b.gic.virtual_set_priority_mask(0xF8);
    b.gic.virtual_set_enabled(false, true);  // group 0 off
    settle();
    EXPECT_FALSE(b.virq.read());
    b.gic.virtual_set_enabled(true, true);
    settle();
    EXPECT_TRUE(b.virq.read());
    EXPECT_EQ(b.gic.virtual_acknowledge(), 40);
  });
  run(b, p);
  EXPECT_EQ(b.count("virtual_spurious"), 1u);
}

TEST(GicVirtual, PendingActiveReturnsToPendingOnEoi) {
  Bench b;
  Proc p("p", [&] {
    b.gic.write_lr(2, ListRegister::make_pending(44, 0x40));
    EXPECT_EQ(b.gic.virtual_acknowledge(), 44);
    // The device fires again while the guest handles it: the hypervisor marks it pending+active.
    ListRegister lr = b.gic.read_lr(2);
    lr.state = LrState::PendingActive;
    b.gic.write_lr(2, lr);
    EXPECT_EQ(b.gic.virtual_acknowledge(), kSpuriousId) << "not again before deactivation";
    b.gic.virtual_end_of_interrupt(44);
    EXPECT_EQ(b.gic.read_lr(2).state, LrState::Pending);
    EXPECT_EQ(b.gic.eisr(), 0u) << "no EOI maintenance: the LR did not empty";
    EXPECT_EQ(b.gic.virtual_acknowledge(), 44);
    b.gic.virtual_end_of_interrupt(44);
    EXPECT_EQ(b.gic.read_lr(2).state, LrState::Invalid);
    EXPECT_EQ(b.gic.eisr(), 1u << 2);
  });
  run(b, p);
}

TEST(GicVirtual, UnderflowNoPendingAndEoiCountMaintenance) {
  Bench b;
  Proc p("p", [&] {
    b.gic.write_lr(0, ListRegister::make_pending(40, 0x40));
    b.gic.write_lr(1, ListRegister::make_pending(41, 0x40));
    b.gic.write_hcr(hcr::kEn | hcr::kUie);
    settle();
    EXPECT_FALSE(b.maintenance.read()) << "two valid LRs: no underflow";
    EXPECT_EQ(b.gic.virtual_acknowledge(), 40);
    ListRegister quiet = b.gic.read_lr(0);
    quiet.eoi_maintenance = false;
    b.gic.write_lr(0, quiet);
    b.gic.virtual_end_of_interrupt(40);
    EXPECT_EQ(b.gic.eisr(), 0u);
    EXPECT_EQ(b.gic.misr(), misr::kU);
    settle();
    EXPECT_TRUE(b.maintenance.read());
    EXPECT_EQ(b.maintenance_calls, 1);

    b.gic.write_hcr(hcr::kEn | hcr::kNpie);  // now: "no pending LR"
    settle();
    EXPECT_FALSE(b.maintenance.read());
    EXPECT_EQ(b.gic.virtual_acknowledge(), 41);
    EXPECT_EQ(b.gic.misr(), misr::kNp);
    b.gic.write_hcr(hcr::kEn | hcr::kLrenpie);
    b.gic.virtual_end_of_interrupt(41);
    b.gic.clear_eoi_status(~0u);
    b.gic.virtual_end_of_interrupt(99);  // not in the LRs: EOICount
    EXPECT_EQ(hcr::eoi_count(b.gic.hcr()), 1u);
    EXPECT_EQ(b.gic.misr(), misr::kLrenp);
    settle();
    EXPECT_TRUE(b.maintenance.read());
    b.gic.write_hcr(hcr::kEn | hcr::kLrenpie);  // the hypervisor consumed the count
    settle();
    EXPECT_FALSE(b.maintenance.read());
  });
  run(b, p);
}

TEST(GicVirtual, MaintenanceIsPpi25OnThePhysicalInterface) {
  Bench b;
  Proc p("p", [&] {
    b.gic.enable(vtoe::gic::kMaintenanceId, true);
    b.gic.write_lr(0, ListRegister::make_pending(40, 0x40));
    EXPECT_EQ(b.gic.virtual_acknowledge(), 40);
    b.gic.virtual_end_of_interrupt(40);
    settle();
    EXPECT_TRUE(b.irq.read());
    EXPECT_EQ(b.gic.acknowledge(), vtoe::gic::kMaintenanceId);
    b.gic.write_lr(0, ListRegister{});  // handler clears the cause
    b.gic.end_of_interrupt(vtoe::gic::kMaintenanceId);
    settle();
    EXPECT_FALSE(b.irq.read());
    EXPECT_FALSE(b.gic.is_pending(vtoe::gic::kMaintenanceId));
  });
  run(b, p);
}

TEST(GicVirtual, HardwareLinkedLrDeactivatesThePhysicalInterrupt) {
  Bench b;
  Proc p("p", [&] {
    b.gic.set_split_eoi(true);
    b.gic.enable(39, true);
    b.set_line(39, true);
    settle();
    // Hypervisor takes the physical interrupt, drops its priority, forwards it to the guest.
    ASSERT_EQ(b.gic.acknowledge(), 39);
    b.gic.end_of_interrupt(39);
    EXPECT_TRUE(b.gic.is_active(39)) << "split EOI: priority dropped, still active";
    EXPECT_EQ(b.gic.running_priority(), vtoe::gic::kIdlePriority);
    b.gic.write_lr(0, ListRegister::make_pending(72, 0xA0, 39));
    settle();
    EXPECT_FALSE(b.irq.read());
    EXPECT_TRUE(b.virq.read());
    EXPECT_EQ(b.gic.virtual_acknowledge(), 72);
    b.gic.virtual_end_of_interrupt(72);
    EXPECT_FALSE(b.gic.is_active(39)) << "the guest's EOI deactivated the physical interrupt";
    EXPECT_EQ(b.gic.eisr(), 0u) << "no EOI maintenance for hardware-linked LRs";
    settle();
    EXPECT_TRUE(b.irq.read()) << "line still high: pending again";
    b.set_line(39, false);
    settle();
    EXPECT_FALSE(b.irq.read());
  });
  run(b, p);
  EXPECT_EQ(b.count("bad_eois"), 0u);
}

// ---- Paper Fig. 8: the hypervisor backs up and restores the GICH at every VM switch ----

TEST(GicVmSwitch, ListRegistersSurviveVmSwitches) {
  Bench b;
  Proc p("p", [&] {
    // VM A runs with two pending virtual interrupts.
    b.gic.write_lr(0, ListRegister::make_pending(33, 0x80));
    b.gic.write_lr(1, ListRegister::make_pending(34, 0x40));
    settle();
    EXPECT_TRUE(b.virq.read());
    EXPECT_EQ(b.gic.pending_lr_count(), 2);

    // Switch A -> B (fresh VM).
    const VgicState a = b.gic.save();
    b.gic.restore(VgicState{});
    settle();
    EXPECT_FALSE(b.virq.read()) << "B must not see A's interrupts";
    EXPECT_EQ(b.gic.pending_lr_count(), 0);
    EXPECT_EQ(b.gic.virtual_acknowledge(), kSpuriousId);

    // B gets its own interrupt, takes it, and is switched out while it is still active.
    ASSERT_EQ(b.gic.free_lr(), 0);
    b.gic.write_lr(0, ListRegister::make_pending(33, 0x60));  // same vid as A's, other VM
    b.gic.write_lr(1, ListRegister::make_pending(35, 0xA0));
    settle();
    EXPECT_TRUE(b.virq.read());
    EXPECT_EQ(b.gic.virtual_acknowledge(), 33);
    const VgicState bs = b.gic.save();

    // Switch B -> A: A's two interrupts are still pending, acknowledged in priority order.
    b.gic.restore(a);
    settle();
    EXPECT_TRUE(b.virq.read());
    EXPECT_EQ(b.gic.virtual_running_priority(), vtoe::gic::kIdlePriority)
        << "B's active priority does not leak into A";
    EXPECT_EQ(b.gic.pending_lr_count(), 2);
    EXPECT_EQ(b.gic.virtual_acknowledge(), 34);
    b.gic.virtual_end_of_interrupt(34);
    EXPECT_EQ(b.gic.virtual_acknowledge(), 33);
    EXPECT_EQ(b.gic.read_lr(0).priority, 0x80) << "A's LR0, not B's";
    b.gic.virtual_end_of_interrupt(33);
    EXPECT_EQ(b.gic.virtual_acknowledge(), kSpuriousId);
    b.gic.write_lr(0, ListRegister{});
    b.gic.write_lr(1, ListRegister{});
    const VgicState a2 = b.gic.save();

    // Switch A -> B: B's state is intact (33 active at 0x60, 35 pending but below it).
    b.gic.restore(bs);
    settle();
    EXPECT_EQ(b.gic.read_lr(0).state, LrState::Active);
    EXPECT_EQ(b.gic.read_lr(1).state, LrState::Pending);
    EXPECT_EQ(b.gic.virtual_running_priority(), 0x60);
    EXPECT_FALSE(b.virq.read()) << "35 (0xA0) cannot preempt B's active 0x60";
    b.gic.virtual_end_of_interrupt(33);
    settle();
    EXPECT_TRUE(b.virq.read());
    EXPECT_EQ(b.gic.virtual_acknowledge(), 35);
    b.gic.virtual_end_of_interrupt(35);
    EXPECT_EQ(b.gic.valid_lr_count(), 0);
    EXPECT_EQ(a2.apr, 0u);
    for (const auto& lr : a2.lr) EXPECT_FALSE(lr.valid());
  });
  run(b, p);
  EXPECT_EQ(b.count("saves"), 3u);
  EXPECT_EQ(b.count("restores"), 3u);
}

TEST(GicVmSwitch, PendingEoiMaintenanceTravelsWithTheVm) {
  Bench b;
  Proc p("p", [&] {
    b.gic.write_lr(3, ListRegister::make_pending(33, 0x80));
    EXPECT_EQ(b.gic.virtual_acknowledge(), 33);
    b.gic.virtual_end_of_interrupt(33);
    const VgicState a = b.gic.save();  // switched out before handling the maintenance
    b.gic.restore(VgicState{});
    settle();
    EXPECT_FALSE(b.maintenance.read());
    b.gic.restore(a);
    settle();
    EXPECT_TRUE(b.maintenance.read());
    EXPECT_EQ(b.gic.eisr(), 1u << 3);
  });
  run(b, p);
}

VTOE_TEST_MAIN
