// Bench for hypervisor::DirectAccessManager: channel assignment (VMs that fit, and more VMs than
// channels: the last channel shared through device emulation), the set-up of direct VMs
// (stage 2, SMMU context, channel owner and address), and the TOE's interrupt in bit-vector mode
// on a real core, GIC and hypervisor, with the multi-channel control unit's vector as a small
// device on the bus.
#include "hypervisor/direct_access_manager.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstring>
#include <systemc>
#include <vector>

#include "models/cpu/bus_port.h"
#include "models/cpu/native_ports.h"
#include "models/gic/gic.h"
#include "models/mem/interconnect.h"
#include "models/smmu/smmu.h"
#include "models/toe/descriptors.h"
#include "models/toe/toe.h"
#include "tests/support/bench.h"

using namespace vtoe;
using cpu::CycleClass;
using hypervisor::ChannelAssignment;

namespace {

constexpr std::uint64_t kToeRegs = 0x4000'0000;
constexpr std::uint64_t kGuestRegsIpa = 0x4000'0000;
constexpr double kStallCycles = 100;  // per hypervisor register access (bus latency 0)
constexpr int kToeSpi = 0;

// The multi-channel control unit's interrupt bit vector: bits are raised by the channels, a
// write clears the bits it names, and the interrupt line is high while the vector is non-zero.
struct ControlUnit : sc_core::sc_module {
  tlm_utils::simple_target_socket<ControlUnit> in{"in"};
  sc_core::sc_signal<bool>& line;
  std::uint32_t vector = 0;
  int reads = 0;
  std::vector<std::uint32_t> writes;
  SC_HAS_PROCESS(ControlUnit);
  sc_core::sc_event changed;
  ControlUnit(sc_core::sc_module_name n, sc_core::sc_signal<bool>& irq) : sc_module(n), line(irq) {
    in.register_b_transport(this, &ControlUnit::b_transport);
    SC_METHOD(drive_line);  // the line's only driver
    sensitive << changed;
    dont_initialize();
  }
  void drive_line() { line.write(vector != 0); }
  void raise(std::uint32_t bits) {
    vector |= bits;
    changed.notify(sc_core::SC_ZERO_TIME);
  }
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
    EXPECT_EQ(gp.get_address(), toe::reg::kIrqVector);
    std::uint32_t v = 0;
    if (gp.is_write()) {
      std::memcpy(&v, gp.get_data_ptr(), 4);
      writes.push_back(v);
      vector &= ~v;
      changed.notify(sc_core::SC_ZERO_TIME);
    } else {
      ++reads;
      std::memcpy(gp.get_data_ptr(), &vector, 4);
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

hypervisor::HypervisorParams hyp_params(int vms) {
  hypervisor::HypervisorParams p;
  p.vms = vms;
  return p;
}

// A virtualized machine of `vms` VMs over `channels` TOE channels, the manager bound to the
// TOE's interrupt as the platform binds it.
struct Bench {
  int vms, channels;
  hypervisor::HypervisorParams hp;
  cpu::Core core;
  gic::Gic gic{"gic", 1};
  sc_core::sc_signal<bool> irq{"irq"}, virq{"virq"}, maint{"maint"}, spi{"spi"};
  mem::Interconnect bus{"bus"};
  ControlUnit control_unit{"control_unit", spi};
  cpu::BusPort port{"cpu_bus"};
  cpu::BusRegisterPort regs{port.socket(), core, kStallCycles};
  hypervisor::Hypervisor hyp;
  hypervisor::DirectAccessManager da;
  int emulated_calls = 0;

  Bench(int vms_, int channels_)
      : vms(vms_),
        channels(channels_),
        hp(hyp_params(vms_)),
        core("core", cpu::CoreParams{}, vms_),
        hyp("hyp", hp, core, gic, regs),
        da(params(), hyp) {
    gic.irq[0](irq);
    hyp.irq[0](irq);
    gic.virq[0](virq);
    gic.maintenance[0](maint);
    gic.spi[kToeSpi](spi);
    bus.map(kToeRegs + toe::reg::kControlUnitBase, 0x1000, control_unit.in, "control_unit");
    port.out.bind(bus.in);
    da.set_emulated_channel_handler([this](cpu::Core::Context&) { ++emulated_calls; });
    hyp.set_irq_handler(gic::kFirstSpi + kToeSpi,
                        [this](cpu::Core::Context& ctx) { da.handle_interrupt(ctx); });
  }
  hypervisor::DirectAccessParams params() const {
    hypervisor::DirectAccessParams p;
    p.assignment = hypervisor::assign_channels(static_cast<std::size_t>(vms), channels);
    p.channels = channels;
    p.toe_regs_pa = kToeRegs;
    p.guest_regs_ipa = kGuestRegsIpa;
    for (int vm = 0; vm < vms; ++vm) p.addresses.push_back(0x0a00'0001u + vm);
    return p;
  }
  bool virq_pending(int vm) { return hyp.interrupt_port(vm).pending(); }
  core::TimePs hyp_busy(int vm) { return core.busy_ps(vm, CycleClass::Hypervisor); }
};

}  // namespace

TEST(ChannelAssignment, EachVmItsOwnChannelWhileTheyFit) {
  const std::vector<ChannelAssignment> three_of_four = {{0, true}, {1, true}, {2, true}};
  EXPECT_EQ(hypervisor::assign_channels(3, 4), three_of_four);
  const std::vector<ChannelAssignment> two_of_two = {{0, true}, {1, true}};
  EXPECT_EQ(hypervisor::assign_channels(2, 2), two_of_two);
  EXPECT_TRUE(hypervisor::assign_channels(0, 2).empty());
}

TEST(ChannelAssignment, MoreVmsThanChannelsShareTheLastThroughDeviceEmulation) {
  const std::vector<ChannelAssignment> four_on_three = {
      {0, true}, {1, true}, {2, false}, {2, false}};
  EXPECT_EQ(hypervisor::assign_channels(4, 3), four_on_three);
  const std::vector<ChannelAssignment> three_on_two = {{0, true}, {1, false}, {1, false}};
  EXPECT_EQ(hypervisor::assign_channels(3, 2), three_on_two);
  // One channel for two VMs: both are emulated on it.
  const std::vector<ChannelAssignment> two_on_one = {{0, false}, {0, false}};
  EXPECT_EQ(hypervisor::assign_channels(2, 1), two_on_one);
}

TEST(DirectAccessManager, EmulatedChannelIsTheSharedOne) {
  Bench b(4, 3);
  EXPECT_EQ(b.da.emulated_channel(), 2);
  EXPECT_EQ(b.da.vector_pa(), kToeRegs + toe::reg::kControlUnitBase + toe::reg::kIrqVector);
}

TEST(DirectAccessManager, NoEmulatedChannelWhenEveryVmIsDirect) {
  Bench b(3, 3);
  EXPECT_EQ(b.da.emulated_channel(), -1);
}

TEST(DirectAccessManager, ConnectMapsEachDirectVmsChannelAndIsolatesItsDma) {
  Bench b(4, 3);  // VMs 0, 1 direct on channels 0, 1; VMs 2, 3 emulated on channel 2
  smmu::Smmu smmu("smmu");
  toe::ToeParams tp;
  tp.channels = 3;
  tp.irq_mode = toe::IrqMode::BitVector;
  toe::Toe toe("toe", tp);
  b.da.connect_channels(smmu, toe);
  for (int vm = 0; vm < 2; ++vm) {
    const auto t = b.hyp.stage2(vm).translate(kGuestRegsIpa + 0x24, true);
    ASSERT_TRUE(t) << "vm" << vm;
    EXPECT_EQ(t->pa, kToeRegs + static_cast<std::uint64_t>(vm) * toe::reg::kChannelStride + 0x24);
    EXPECT_EQ(t->attr, smmu::MemAttr::Device);  // reached with no exit
    EXPECT_TRUE(smmu.has_context(static_cast<std::uint32_t>(vm)));
    EXPECT_EQ(toe.channel(vm).sideband().vm_id, vm);
    EXPECT_EQ(toe.channel(vm).sideband().stream_id, static_cast<std::uint32_t>(vm));
    EXPECT_EQ(toe.channel(vm).address(), 0x0a00'0001u + vm);
  }
  // The emulated VMs' accesses trap; their channel is left to the device-emulation side.
  for (int vm = 2; vm < 4; ++vm) EXPECT_FALSE(b.hyp.stage2(vm).translate(kGuestRegsIpa, false));
  EXPECT_FALSE(smmu.has_context(2));
  EXPECT_EQ(toe.channel(2).address(), 0u);
}

TEST(DirectAccessManager, EachSetBitRaisesItsVmsVirtualInterruptAndTheVectorIsCleared) {
  Bench b(4, 3);  // VMs 0, 1 direct on channels 0, 1; VMs 2, 3 emulated on channel 2
  test::Proc dev("dev", [&] {
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    b.control_unit.raise(0b011);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_TRUE(b.virq_pending(0));
  EXPECT_TRUE(b.virq_pending(1));
  EXPECT_FALSE(b.virq_pending(2));
  EXPECT_FALSE(b.virq_pending(3));
  EXPECT_EQ(b.emulated_calls, 0);
  EXPECT_EQ(b.control_unit.vector, 0u);
  EXPECT_EQ(b.control_unit.reads, 1);
  ASSERT_EQ(b.control_unit.writes.size(), 1u);
  EXPECT_EQ(b.control_unit.writes[0], 0b011u);  // the bits read, written back to clear them
  // The IRQ exit (no VM on the core: charged to VM 0), the read, the clear and the decode go to
  // the VM of the lowest direct channel; each injection to its own VM.
  const auto& c = b.hp.costs;
  EXPECT_EQ(b.hyp_busy(0), b.core.cycles_ps(c.exit + c.irq) + 2 * b.core.cycles_ps(kStallCycles) +
                               b.core.cycles_ps(c.bitvector) + b.core.cycles_ps(c.vgic_inject));
  EXPECT_EQ(b.hyp_busy(1), b.core.cycles_ps(c.vgic_inject));
  EXPECT_EQ(b.hyp_busy(2), 0u);
  EXPECT_EQ(b.hyp_busy(3), 0u);
}

TEST(DirectAccessManager, EmulatedChannelsBitGoesToTheDeviceEmulationManager) {
  Bench b(4, 3);
  test::Proc dev("dev", [&] {
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    b.control_unit.raise(0b110);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_EQ(b.emulated_calls, 1);
  EXPECT_FALSE(b.virq_pending(0));
  EXPECT_TRUE(b.virq_pending(1));
  EXPECT_FALSE(b.virq_pending(2));  // the manager injects for its VMs itself
  EXPECT_FALSE(b.virq_pending(3));
  EXPECT_EQ(b.control_unit.vector, 0u);
}

TEST(DirectAccessManager, InterruptsOfSeveralVmsAcrossTwoSignals) {
  Bench b(3, 3);  // all direct
  test::Proc dev("dev", [&] {
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    b.control_unit.raise(0b100);
    sc_core::wait(sc_core::sc_time(100, sc_core::SC_US));
    b.control_unit.raise(0b001);
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_TRUE(b.virq_pending(0));
  EXPECT_FALSE(b.virq_pending(1));
  EXPECT_TRUE(b.virq_pending(2));
  EXPECT_EQ(b.control_unit.reads, 2);
  EXPECT_EQ(b.control_unit.writes, (std::vector<std::uint32_t>{0b100, 0b001}));
}

TEST(DirectAccessManager, ZeroVectorReadsOnceAndDoesNothingElse) {
  Bench b(2, 2);
  auto& ctx = b.core.add_hypervisor_context("test.irq");
  test::Proc p("p", [&] { b.da.handle_interrupt(ctx); });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_TRUE(p.done);
  EXPECT_EQ(b.control_unit.reads, 1);
  EXPECT_TRUE(b.control_unit.writes.empty());
  EXPECT_FALSE(b.virq_pending(0));
  EXPECT_FALSE(b.virq_pending(1));
  EXPECT_EQ(b.emulated_calls, 0);
  EXPECT_EQ(b.hyp_busy(0), b.core.cycles_ps(kStallCycles));  // the read alone
  EXPECT_EQ(b.hyp_busy(1), 0u);
}

VTOE_TEST_MAIN
