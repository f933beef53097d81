// The GICv2's memory-mapped face, as a driver (Linux's irq-gic, a hypervisor's vGIC, a bare-metal
// test) sees it: four TLM-2.0 targets over one behavioural Gic (gic.h).
//
//   distributor  GICD  (QEMU virt: 0x0800_0000)  CTLR, TYPER, IIDR, IGROUPR, I[SC]ENABLER,
//                      I[SC]PENDR, I[SC]ACTIVER, IPRIORITYR, ITARGETSR, ICFGR, SGIR, ID registers
//   cpu          GICC  (0x0801_0000)             CTLR, PMR, BPR, IAR, EOIR, RPR, HPPIR, ABPR,
//                      APR, IIDR, DIR
//   hyp          GICH  (0x0803_0000)             HCR, VTR, VMCR, MISR, EISR0, ELRSR0, APR, LR0-3
//   vcpu         GICV  (0x0804_0000)             the GICC layout, acting on the list registers
//
// As many CPU interfaces as the Gic has, no Security Extensions (as QEMU's virt machine without
// secure=on): GICD_TYPER says ITLinesNumber = (IDs / 32) - 1, CPUNumber = CPUs - 1,
// SecurityExtn 0. The banked registers (the distributor's for IDs 0-31, and all of GICC, GICH
// and GICV) are decoded for the core that makes the access: the SidebandExtension's `cpu` of
// the bus access (0 without one; a core beyond the GIC's interfaces is taken as CPU 0), or the
// `by` argument of the access functions below. A uniprocessor GIC's GICD_ITARGETSR reads as
// zero and ignores writes; with several CPUs an SPI's byte holds its targets and GICD_SGIR
// reaches the CPUs its filter names. Registers are 32-bit; IPRIORITYR and ITARGETSR also take
// byte accesses. The constructor puts the Gic into the architecture's
// reset state (distributor and CPU interface off, priorities 0, PMR 0, SGIs edge-triggered and
// always enabled, as QEMU's GIC),
// which differs from the Gic's own model-friendly defaults used by the behavioural platform.
//
// The registers are described once (gic.regs.yaml -> docs/registers.md, the C header ARM code
// includes, gic_regs.h) and decoded by core::Peripheral: bad accesses (an offset with no
// register, a wrong size, a write to a read-only register) are ignored or read as zero, as the
// GIC architecture and QEMU do, and are counted and warned with the region and offset; a guest
// never stops the simulator here. Interrupt groups are stored and read back but do not change
// signalling (both groups go to IRQ; FIQ is not modelled). The registers take no simulated time
// (annotated delay unchanged).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/peripheral.h"
#include "models/gic/gic.h"
#include "models/gic/gic_regs.h"

namespace vtoe::gic {

// Region sizes as QEMU's virt machine maps them.
constexpr std::uint64_t kDistributorSize = 0x10000;
constexpr std::uint64_t kCpuInterfaceSize = 0x10000;  // GICC_DIR is at 0x1000
constexpr std::uint64_t kHypInterfaceSize = 0x10000;
constexpr std::uint64_t kVirtualCpuInterfaceSize = 0x10000;

class GicRegisters : public core::Peripheral {
 public:
  Socket distributor;
  Socket cpu;
  Socket hyp;
  Socket vcpu;

  GicRegisters(const sc_core::sc_module_name& name, Gic& gic);

  // The register accesses themselves (offset into the region), for tests and debuggers: as a
  // bus access of `size` bytes by core `by` (side effects and bad-access counting included).
  std::uint32_t read_distributor(std::uint32_t offset, unsigned size = 4, int by = 0);
  void write_distributor(std::uint32_t offset, std::uint32_t value, unsigned size = 4, int by = 0);
  std::uint32_t read_cpu(std::uint32_t offset, int by = 0);
  void write_cpu(std::uint32_t offset, std::uint32_t value, int by = 0);
  std::uint32_t read_hyp(std::uint32_t offset, int by = 0);
  void write_hyp(std::uint32_t offset, std::uint32_t value, int by = 0);
  std::uint32_t read_vcpu(std::uint32_t offset, int by = 0);
  void write_vcpu(std::uint32_t offset, std::uint32_t value, int by = 0);

  // GICH_LR encoding <-> ListRegister.
  static std::uint32_t encode_lr(const ListRegister& lr);
  static ListRegister decode_lr(std::uint32_t v);

 private:
  using R = core::Reg<std::uint32_t>;
  std::uint32_t bus_read(Socket& s, std::uint32_t offset, unsigned size, int by);
  // `gic`, if GICv2's registers can name its CPU interfaces (at most 8), else invalid_argument.
  static Gic& check_cpus(Gic& gic);
  // The CPU whose banked registers the access being decoded reaches.
  int cpu_() const;
  // GICC_EOIR / GICC_DIR's value as Gic takes it: the ID, with an SGI's source CPU.
  static int interrupt_of(std::uint32_t v);
  std::size_t group_index(int id, int cpu) const;
  void reset_state() override;
  void decode_distributor();
  void decode_cpu();
  void decode_hyp();
  void decode_vcpu();
  // GICC_HPPIR / GICV_HPPIR: the highest-priority pending interrupt the priority mask lets
  // through, whatever the running priority (as GICv2 and QEMU define it; the Gic's own
  // highest_pending() also applies the running priority).
  int physical_hppir() const;
  int virtual_hppir() const;
  // GICH_ELRSR / GICH_EISR from the list registers' contents, as the architecture derives them:
  // an invalid LR that asks for an EOI maintenance interrupt (EOI = 1, HW = 0) is not empty but
  // in EISR until the hypervisor rewrites it.
  std::uint32_t empty_lrs() const;
  std::uint32_t eoi_lrs() const;
  // One bit per ID of the 32 IDs of register `index` of a one-bit-per-ID array.
  std::uint32_t bits_of(unsigned index, bool (Gic::*test)(int, int) const) const;
  void set_bits(unsigned index, std::uint64_t array, std::uint32_t value, bool on);

  Gic& gic_;
  std::vector<std::uint8_t> group_;  // GICD_IGROUPR: per CPU its IDs 0-31, then the SPIs
  core::RegisterBank gicd_bank_, gicc_bank_, gich_bank_, gicv_bank_;
  R gicd_ctlr_, gicd_typer_, gicd_iidr_, gicd_igroupr_, gicd_isenabler_, gicd_icenabler_,
      gicd_ispendr_, gicd_icpendr_, gicd_isactiver_, gicd_icactiver_, gicd_ipriorityr_,
      gicd_itargetsr_, gicd_icfgr_, gicd_sgir_, gicd_id_;
  R gicc_ctlr_, gicc_pmr_, gicc_bpr_, gicc_iar_, gicc_eoir_, gicc_rpr_, gicc_hppir_, gicc_abpr_,
      gicc_aiar_, gicc_aeoir_, gicc_ahppir_, gicc_apr_, gicc_nsapr_, gicc_iidr_, gicc_dir_;
  R gich_hcr_, gich_vtr_, gich_vmcr_, gich_misr_, gich_eisr0_, gich_eisr1_, gich_elrsr0_,
      gich_elrsr1_, gich_apr_, gich_lr_;
  R gicv_ctlr_, gicv_pmr_, gicv_bpr_, gicv_iar_, gicv_eoir_, gicv_rpr_, gicv_hppir_, gicv_abpr_,
      gicv_aiar_, gicv_aeoir_, gicv_ahppir_, gicv_apr_, gicv_iidr_;
};

}  // namespace vtoe::gic
