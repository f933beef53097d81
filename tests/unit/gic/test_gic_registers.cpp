// Bench for gic::GicRegisters: the GICv2's memory-mapped face over the behavioural Gic. The
// values QEMU's virt GIC shows for the same accesses are checked end to end by tests/system
// (gic_sgi, gich_lr); this bench checks the mapping onto the Gic, the reset state and bad input.
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <systemc>

#include "models/gic/gic_registers.h"
#include "tests/support/bench.h"
#include "tests/unit/gic/gic_bench.h"

using gic_test::Bench;
using gic_test::Proc;
using gic_test::settle;
using vtoe::gic::GicRegisters;
using vtoe::gic::ListRegister;
using vtoe::gic::LrState;

namespace {

// Initiators for the regions a test does not drive through TLM (every target must be bound).
struct Sockets : sc_core::sc_module {
  explicit Sockets(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
  // The distributor may be driven by the test's own initiator instead.
  tlm_utils::simple_initiator_socket_optional<Sockets> s0{"s0"};
  tlm_utils::simple_initiator_socket<Sockets> s1{"s1"}, s2{"s2"}, s3{"s3"};
};

struct RegBench : Bench {
  explicit RegBench(bool bind_distributor = true) : Bench(64), regs("regs", gic) {
    if (bind_distributor) sockets.s0.bind(regs.distributor);
    sockets.s1.bind(regs.cpu);
    sockets.s2.bind(regs.hyp);
    sockets.s3.bind(regs.vcpu);
  }
  GicRegisters regs;
  Sockets sockets{"sockets"};
};

void run(Proc& p) {
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_TRUE(p.done) << "the script did not finish";
  EXPECT_EQ(gic_test::sc_warnings(), 0u);
}

}  // namespace

TEST(GicRegisters, ResetStateIsTheArchitecturesAndTyperCountsTheIds) {
  RegBench b;
  Proc p("p", [&] {
    EXPECT_EQ(b.regs.read_distributor(0x000), 0u);            // GICD_CTLR off
    EXPECT_EQ(b.regs.read_distributor(0x004), 96u / 32 - 1);  // 64 SPIs: ITLinesNumber 2
    EXPECT_EQ(b.regs.read_distributor(0x100), 0xFFFFu);       // SGIs always enabled
    EXPECT_EQ(b.regs.read_distributor(0xC00), 0xAAAAAAAAu);   // SGIs edge-triggered
    EXPECT_EQ(b.regs.read_distributor(0x400), 0u);            // priorities 0
    EXPECT_EQ(b.regs.read_cpu(0x04), 0u);                     // GICC_PMR 0: all masked
    EXPECT_EQ(b.regs.read_cpu(0x0C), 1023u);                  // nothing to acknowledge
    EXPECT_EQ(b.regs.read_hyp(0x00), 0u);                     // GICH_HCR
    EXPECT_EQ(b.regs.read_hyp(0x30), 0xFu);                   // every LR empty
    EXPECT_EQ(b.regs.read_hyp(0x04), 0x90000003u);            // 4 LRs, 5 priority bits
    settle();
    EXPECT_FALSE(b.irq.read());
  });
  run(p);
}

TEST(GicRegisters, SpiThroughTheRegistersRaisesIrqAndIarEoirComplete) {
  RegBench b;
  Proc p("p", [&] {
    b.regs.write_distributor(0x400 + 40, 0x80, 1);  // IPRIORITYR byte of ID 40
    b.regs.write_distributor(0x104, 1u << (40 - 32));
    b.regs.write_distributor(0x000, 1);
    b.regs.write_cpu(0x04, 0xF0);
    b.regs.write_cpu(0x00, 1);
    EXPECT_EQ(b.gic.priority(40), 0x80);
    EXPECT_TRUE(b.gic.is_enabled(40));
    b.set_line(40, true);
    settle();
    EXPECT_TRUE(b.irq.read());
    EXPECT_EQ(b.regs.read_distributor(0x204), 1u << 8);  // ISPENDR1
    EXPECT_EQ(b.regs.read_cpu(0x18), 40u);               // HPPIR
    EXPECT_EQ(b.regs.read_cpu(0x0C), 40u);               // IAR
    EXPECT_EQ(b.regs.read_cpu(0x14), 0x80u);             // RPR
    EXPECT_EQ(b.regs.read_distributor(0x304), 1u << 8);  // ISACTIVER1
    b.set_line(40, false);
    b.regs.write_cpu(0x10, 40);  // EOIR
    settle();
    EXPECT_FALSE(b.irq.read());
    EXPECT_EQ(b.regs.read_cpu(0x14), 0xFFu);
    // A PMR at the interrupt's priority masks it; HPPIR says so too.
    b.regs.write_cpu(0x04, 0x80);
    b.set_line(40, true);
    settle();
    EXPECT_FALSE(b.irq.read());
    EXPECT_EQ(b.regs.read_cpu(0x18), 1023u);
  });
  run(p);
}

TEST(GicRegisters, SgiFiltersAndPpiLevels) {
  RegBench b;
  Proc p("p", [&] {
    b.regs.write_distributor(0x000, 1);
    b.regs.write_cpu(0x04, 0xF0);
    b.regs.write_cpu(0x00, 1);
    b.regs.write_distributor(0xF00, (1u << 24) | 2u);  // all but self: nobody
    EXPECT_EQ(b.regs.read_distributor(0x200), 0u);
    b.regs.write_distributor(0xF00, (0u << 24) | (2u << 16) | 2u);  // a list without CPU 0
    EXPECT_EQ(b.regs.read_distributor(0x200), 0u);
    b.regs.write_distributor(0xF00, (2u << 24) | 2u);  // self
    EXPECT_EQ(b.regs.read_distributor(0x200), 1u << 2);
    EXPECT_EQ(b.regs.read_cpu(0x0C), 2u);
    b.regs.write_cpu(0x10, 2);
    // A timer-like PPI: level input, level-triggered.
    b.regs.write_distributor(0x100, 1u << 27);
    b.gic.set_ppi_level(27, true);
    EXPECT_EQ(b.regs.read_cpu(0x18), 27u);
    b.gic.set_ppi_level(27, false);
    EXPECT_EQ(b.regs.read_cpu(0x18), 1023u);
    EXPECT_THROW(b.gic.set_ppi_level(25, true), std::out_of_range);  // the maintenance PPI
  });
  run(p);
}

TEST(GicRegisters, ListRegistersThroughGichAndGicv) {
  RegBench b;
  Proc p("p", [&] {
    const ListRegister lr = ListRegister::make_pending(7, 0x40);
    EXPECT_EQ(GicRegisters::decode_lr(GicRegisters::encode_lr(lr)), lr);
    b.regs.write_hyp(0x100, (1u << 28) | (0x40u >> 3 << 23) | (1u << 19) | 7u);
    b.regs.write_hyp(0x00, 1);
    b.regs.write_vcpu(0x04, 0xF8);
    b.regs.write_vcpu(0x00, 1);
    settle();
    EXPECT_TRUE(b.virq.read());
    EXPECT_EQ(b.regs.read_hyp(0x30), 0xEu);
    EXPECT_EQ(b.regs.read_vcpu(0x0C), 7u);
    EXPECT_EQ(b.gic.read_lr(0).state, LrState::Active);
    EXPECT_EQ(b.regs.read_vcpu(0x14), 0x40u);
    EXPECT_EQ(b.regs.read_hyp(0xF0), 1u << (0x40 >> 3));
    b.regs.write_vcpu(0x10, 7);
    EXPECT_EQ(b.regs.read_hyp(0x100) >> 28, 0u);
    EXPECT_EQ(b.regs.read_hyp(0x30), 0xEu) << "EOI=1: not empty until the hypervisor sees it";
    EXPECT_EQ(b.regs.read_hyp(0x20), 1u);       // EISR0
    EXPECT_EQ(b.regs.read_hyp(0x10) & 1u, 1u);  // MISR.EOI
    EXPECT_EQ(b.regs.read_vcpu(0x08), 2u);      // GICV_BPR from VMCR
    // GICV_APR0 is GICH_APR, read and written; APR1-3 read as zero and ignore writes, with no
    // bad access (Linux's gic_cpu_init zeroes all four, as dom0 does under Xen).
    b.regs.write_vcpu(0xD0, 1u << 3);
    EXPECT_EQ(b.regs.read_hyp(0xF0), 1u << 3);
    for (std::uint32_t off : {0xD4u, 0xD8u, 0xDCu}) {
      b.regs.write_vcpu(off, 0xFFFFFFFFu);
      EXPECT_EQ(b.regs.read_vcpu(off), 0u);
    }
    b.regs.write_vcpu(0xD0, 0);
    EXPECT_EQ(b.regs.read_vcpu(0xD0), 0u);
    EXPECT_EQ(b.regs.stats().counter("bad_accesses").value(), 0u);
  });
  run(p);
}

TEST(GicRegisters, BadAccessesAreIgnoredCountedAndNeverFatal) {
  RegBench b(false);
  vtoe::test::Initiator cpu("cpu", [&](vtoe::test::Initiator& self) {
    std::uint8_t byte = 0x55;
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    // A byte write to GICD_CTLR is not architected: ignored, counted, OK response.
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, 0x000, &byte, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(self.read32(0x000), 0u);
    self.write32(0x004, 0xFFFF);  // TYPER is read-only
    EXPECT_EQ(self.read32(0x004), 64u / 32);
    EXPECT_EQ(self.read32(0xD00), 0u);  // no register
    // Byte accesses to IPRIORITYR are architected.
    std::uint8_t prio = 0xA8;
    EXPECT_EQ(self.access(tlm::TLM_WRITE_COMMAND, 0x400 + 33, &prio, 1, d), tlm::TLM_OK_RESPONSE);
    EXPECT_EQ(b.gic.priority(33), 0xA8);
  });
  cpu.socket.bind(b.regs.distributor);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_EQ(b.regs.stats().counter("bad_accesses").value(), 3u);
}

VTOE_TEST_MAIN
