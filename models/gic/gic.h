// Behavioural GICv2 for 1 to 8 CPUs: one distributor, and per CPU a physical CPU interface
// (GICC), a virtual interface control (GICH, for the hypervisor on that CPU) and a virtual CPU
// interface (GICV, for the guest running there).
//
// Software models (hypervisor, guest OS) call the C++ methods below from their own processes; the
// memory-mapped face is GicRegisters (gic_registers.h). Every per-CPU method takes the CPU as its
// last argument (default 0, so a uniprocessor platform never names it). State changes take effect
// at once for the query and acknowledge methods; the output lines (`irq[cpu]`, `virq[cpu]`,
// `maintenance[cpu]`) follow one delta cycle later, driven by a single internal process (so
// several software processes may call in without becoming drivers).
//
// Interrupt IDs follow GICv2: 0-15 SGIs, 16-31 PPIs, SPIs from 32 (input spi[i] is ID 32 + i),
// 1023 spurious. SGIs and PPIs are banked: each CPU has its own enable, priority, configuration,
// pending and active state for IDs 0-31 (a PPI's line is that CPU's, e.g. its generic timer). An
// SGI is pending per source CPU, as in GICv2: acknowledge() returns the ID with the source CPU in
// bits [12:10] (GICC_IAR's CPUID) and end_of_interrupt() takes that value back. SPIs are shared:
// GICD_ITARGETSR's byte per SPI (set_targets) names the CPUs it may go to; every targeted CPU
// interface signals it, and the first to acknowledge it takes it (GICv2's 1-N model: it is then
// active, so the others stop signalling it). Targets reset to CPU 0 (model choice), so a platform
// that never sets them delivers every SPI to CPU 0 as a uniprocessor GIC does; with one CPU the
// targets are not looked at.
//
// PPI 25 is the virtual-interface maintenance interrupt (as on GIC-400): its level is that CPU's
// `maintenance` line, so a hypervisor may enable ID 25 and take it through `irq` like any other.
//
// Paper §4.2 / Fig. 8: at every VM switch the hypervisor calls save() for the outgoing guest and
// restore() with the incoming guest's VgicState on that CPU's virtual interface; its virtual CPU
// interface then acts on whatever list registers are loaded.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <systemc>
#include <vector>

#include "models/core/module.h"

namespace vtoe::gic {

constexpr int kFirstPpi = 16;
constexpr int kFirstSpi = 32;
constexpr int kMaintenanceId = 25;  // PPI carrying the GICH maintenance interrupt
constexpr int kSpuriousId = 1023;
constexpr int kListRegisters = 4;
// GICv2 has CPU interfaces 0-7 (GICD_ITARGETSR and GICD_SGIR hold a byte of them), and the
// register face (GicRegisters) keeps to those. The behavioural model takes up to 64, for the
// annotated platform's larger hosts (model choice: target masks as wide as GICv3's affinity
// routing would reach).
constexpr int kMaxCpus = 64;
constexpr int kMaxRegisterCpus = 8;
using CpuMask = std::uint64_t;                   // bit n = CPU interface n
constexpr std::uint8_t kIdlePriority = 0xFF;     // running priority when nothing is active
constexpr std::uint8_t kDefaultPriority = 0xA0;  // reset priority of every interrupt (model choice)
// List registers and the virtual priority mask hold priority bits [7:3] (32 levels), as in GICv2.
constexpr std::uint8_t kVirtualPriorityMask = 0xF8;

enum class LrState : std::uint8_t { Invalid = 0, Pending = 1, Active = 2, PendingActive = 3 };
const char* to_string(LrState s);

// One GICH_LR. `physical_id >= 0` is the HW bit: the guest's virtual EOI also deactivates that
// physical interrupt (the hypervisor acknowledged it and only dropped its priority, see split EOI).
struct ListRegister {
  int virtual_id = 0;
  int physical_id = -1;
  LrState state = LrState::Invalid;
  std::uint8_t priority = kDefaultPriority;  // stored as priority & kVirtualPriorityMask
  bool group1 = false;                       // enabled by GICH_VMCR.VMGrp1En (else VMGrp0En)
  // EOI bit: request an EOI maintenance interrupt when the guest's EOI empties this LR. Ignored for
  // hardware-linked LRs, as in GICv2. On by default so that "an LR emptied" is always visible.
  bool eoi_maintenance = true;

  bool hw() const { return physical_id >= 0; }
  bool valid() const { return state != LrState::Invalid; }
  bool pending() const { return state == LrState::Pending || state == LrState::PendingActive; }
  bool active() const { return state == LrState::Active || state == LrState::PendingActive; }
  bool operator==(const ListRegister& o) const {
    return virtual_id == o.virtual_id && physical_id == o.physical_id && state == o.state &&
           priority == o.priority && group1 == o.group1 && eoi_maintenance == o.eoi_maintenance;
  }
  bool operator!=(const ListRegister& o) const { return !(*this == o); }

  // A pending virtual interrupt, ready for write_lr().
  static ListRegister make_pending(int vid, std::uint8_t prio, int pid = -1) {
    ListRegister lr;
    lr.virtual_id = vid;
    lr.physical_id = pid;
    lr.state = LrState::Pending;
    lr.priority = prio;
    return lr;
  }
};

// GICH_HCR bits (subset): En, UIE, LRENPIE, NPIE and the EOICount field [31:27].
namespace hcr {
constexpr std::uint32_t kEn = 1u << 0;       // virtual CPU interface enabled
constexpr std::uint32_t kUie = 1u << 1;      // underflow: maintenance when <= 1 LR is valid
constexpr std::uint32_t kLrenpie = 1u << 2;  // maintenance while EOICount != 0
constexpr std::uint32_t kNpie = 1u << 3;     // maintenance while no LR is pending
constexpr int kEoiCountShift = 27;
constexpr std::uint32_t kEoiCountMask = 0x1Fu << kEoiCountShift;
inline std::uint32_t eoi_count(std::uint32_t hcr) { return hcr >> kEoiCountShift; }
}  // namespace hcr

// GICH_VMCR bits (subset): the guest's view of GICV_CTLR (group enables) and GICV_PMR [31:27].
namespace vmcr {
constexpr std::uint32_t kGrp0En = 1u << 0;
constexpr std::uint32_t kGrp1En = 1u << 1;
constexpr int kPriMaskShift = 27;  // VMPriMask holds priority bits [7:3]
constexpr std::uint32_t kPriMaskMask = 0x1Fu << kPriMaskShift;
}  // namespace vmcr

// GICH_MISR bits: why the maintenance interrupt is asserted.
namespace misr {
constexpr std::uint32_t kEoi = 1u << 0;    // some GICH_EISR bit is set
constexpr std::uint32_t kU = 1u << 1;      // underflow (HCR.UIE and <= 1 valid LR)
constexpr std::uint32_t kLrenp = 1u << 2;  // HCR.LRENPIE and EOICount != 0
constexpr std::uint32_t kNp = 1u << 3;     // HCR.NPIE and no pending LR
}  // namespace misr

// Everything the GICH holds for one VM: what the hypervisor saves and restores at a VM switch.
// A default-constructed state is a fresh VM: no interrupts, interface enabled, nothing masked.
struct VgicState {
  std::array<ListRegister, kListRegisters> lr{};
  std::uint32_t hcr = hcr::kEn;
  std::uint32_t vmcr = vmcr::kGrp0En | vmcr::kGrp1En | vmcr::kPriMaskMask;
  // GICH_APR: bit n set = a virtual interrupt of priority level n (priority >> 3) is active and its
  // priority not yet dropped; the lowest set bit is the guest's running priority.
  std::uint32_t apr = 0;
  // GICH_EISR: LRs emptied by a guest EOI with the EOI bit set. Model choice: the bit is sticky
  // until the hypervisor writes that LR (or clears it with clear_eoi_status()); the architecture
  // derives it from the LR contents instead, which differs only for an empty LR rewritten with
  // EOI=1.
  std::uint32_t eisr = 0;
};

// The virtual CPU interface's rules applied to a VgicState: the GIC applies them to its live
// state, and the hypervisor to a VM's saved copy when that VM's vCPU acknowledges or ends an
// interrupt while it is off the core (the same rules either way: an acknowledge raises the
// running priority in `apr`, an EOI drops it).
std::uint8_t virtual_running_priority(const VgicState& s);
int best_virtual_pending(const VgicState& s);  // the LR to acknowledge next, or -1
int acknowledge_virtual(VgicState& s);         // the LR acknowledged, or -1 (spurious)
// The LR deactivated by the EOI of `vid`, or -1 if no LR holds it active (EOICount counts it).
int end_virtual_interrupt(VgicState& s, int vid);

class Gic : public core::Module {
 public:
  SC_HAS_PROCESS(Gic);
  Gic(const sc_core::sc_module_name& name, int num_spis, int num_cpus = 1);

  // Ports. All must be bound; the outputs have one element per CPU interface.
  sc_core::sc_vector<sc_core::sc_in<bool>>
      spi;  // level-sensitive (or edge, see set_edge_triggered)
  sc_core::sc_vector<sc_core::sc_out<bool>> irq;          // physical IRQ to each CPU
  sc_core::sc_vector<sc_core::sc_out<bool>> virq;         // virtual IRQ to each CPU's guest
  sc_core::sc_vector<sc_core::sc_out<bool>> maintenance;  // each GICH's maintenance (PPI 25)

  int num_spis() const { return num_spis_; }
  int num_ids() const { return kFirstSpi + num_spis_; }
  int num_cpus() const { return num_cpus_; }

  // ---- Distributor (GICD) ----
  // For IDs 0-31 the `cpu` argument picks the CPU's banked copy; for SPIs it is not used.
  void set_distributor_enabled(bool on);      // GICD_CTLR; on at reset (model choice)
  void enable(int id, bool on, int cpu = 0);  // GICD_ISENABLER / ICENABLER; all off at reset
  void set_priority(int id, std::uint8_t prio, int cpu = 0);  // GICD_IPRIORITYR; lower = higher
  void set_edge_triggered(int id, bool edge, int cpu = 0);    // GICD_ICFGR; level at reset
  // GICD_ISPENDR (software-triggered); an SGI is made pending from source `cpu` to itself.
  void set_pending(int id, int cpu = 0);
  void clear_pending(int id, int cpu = 0);        // GICD_ICPENDR (latched state only, not a line)
  void set_active(int id, bool on, int cpu = 0);  // GICD_ISACTIVER / ICACTIVER
  // GICD_ITARGETSR for an SPI: bit n = CPU interface n (bits beyond num_cpus() are dropped).
  // Reset 0x01. A mask of 0 leaves the SPI with nowhere to go (pending, never signalled).
  void set_targets(int id, CpuMask cpu_mask);
  // An SPI's targets; IDs 0-31 read as the CPU's own bit, as GICD_ITARGETSR0-7 do.
  CpuMask targets(int id, int cpu = 0) const;
  // GICD_SGIR: SGI `id` (0-15) from `source` to every CPU in `cpu_mask` (bits beyond num_cpus()
  // are dropped).
  void send_sgi(int id, CpuMask cpu_mask, int source);
  // The level of a PPI's input line on `cpu` (IDs 16-31 but 25, e.g. a generic-timer output);
  // SPIs come in through the `spi` ports instead.
  void set_ppi_level(int id, bool level, int cpu = 0);
  bool is_edge_triggered(int id, int cpu = 0) const;
  bool is_enabled(int id, int cpu = 0) const;
  bool is_pending(int id, int cpu = 0) const;
  bool is_active(int id, int cpu = 0) const;
  std::uint8_t priority(int id, int cpu = 0) const;
  // Sampled level of the SPI input (PPIs: that CPU's line; PPI 25: its maintenance line).
  bool line_level(int id, int cpu = 0) const;
  // Source CPUs (bit n = CPU n) from which SGI `id` is pending on `cpu`.
  CpuMask sgi_sources(int id, int cpu = 0) const;

  // ---- Physical CPU interfaces (GICC), one per CPU ----
  void set_cpu_interface_enabled(bool on, int cpu = 0);   // GICC_CTLR.Enable; on at reset
  void set_priority_mask(std::uint8_t pmr, int cpu = 0);  // GICC_PMR: priority < pmr; 0xFF reset
  void set_split_eoi(bool on, int cpu = 0);               // GICC_CTLR.EOImode: EOI drops only
  bool distributor_enabled() const { return dist_enabled_; }
  bool cpu_interface_enabled(int cpu = 0) const { return cpu_at(cpu).enabled; }
  std::uint8_t priority_mask(int cpu = 0) const { return cpu_at(cpu).pmr; }
  bool split_eoi(int cpu = 0) const { return cpu_at(cpu).split_eoi; }
  // GICC_IAR: the ID made active (an SGI's source CPU from bit 10: bits [12:10] for GICv2's
  // eight), or 1023.
  int acknowledge(int cpu = 0);
  void end_of_interrupt(int iar, int cpu = 0);  // GICC_EOIR (the IAR value): drop (+ deactivate)
  void deactivate(int iar, int cpu = 0);        // GICC_DIR (split EOI mode)
  int highest_pending(int cpu = 0) const;       // GICC_HPPIR: what acknowledge() would return
  std::uint8_t running_priority(int cpu = 0) const;  // GICC_RPR
  bool irq_asserted(int cpu = 0) const;              // level `irq[cpu]` is being driven to

  // ---- Virtual interface control (GICH), one per CPU, for the hypervisor on it ----
  void write_lr(int i, const ListRegister& lr, int cpu = 0);
  ListRegister read_lr(int i, int cpu = 0) const;
  int free_lr(int cpu = 0) const;                // lowest invalid LR, or -1
  int pending_lr_count(int cpu = 0) const;       // LRs in pending or pending+active
  int valid_lr_count(int cpu = 0) const;         // LRs not invalid
  void write_hcr(std::uint32_t v, int cpu = 0);  // GICH_HCR
  std::uint32_t hcr(int cpu = 0) const { return cpu_at(cpu).vgic.hcr; }
  void write_vmcr(std::uint32_t v, int cpu = 0);  // GICH_VMCR
  std::uint32_t vmcr(int cpu = 0) const { return cpu_at(cpu).vgic.vmcr; }
  void write_apr(std::uint32_t v, int cpu = 0);  // GICH_APR
  std::uint32_t apr(int cpu = 0) const { return cpu_at(cpu).vgic.apr; }
  std::uint32_t eisr(int cpu = 0) const { return cpu_at(cpu).vgic.eisr; }  // GICH_EISR
  std::uint32_t elrsr(int cpu = 0) const;                  // GICH_ELRSR: bit i = LR i invalid
  std::uint32_t misr(int cpu = 0) const;                   // GICH_MISR
  void clear_eoi_status(std::uint32_t mask, int cpu = 0);  // model convenience: clear EISR bits
  bool maintenance_asserted(int cpu = 0) const;            // HCR.En && MISR != 0
  VgicState save(int cpu = 0);                             // outgoing VM (Fig. 8: backup)
  void restore(const VgicState& s, int cpu = 0);           // incoming VM (Fig. 8: restore)
  // Called on each rising edge of `cpu`'s maintenance line, from the GIC's own method process (so
  // it must not wait()); the handler should clear the causes (rewrite emptied LRs, EOICount ...).
  void on_maintenance(std::function<void()> handler, int cpu = 0) {
    cpu_at(cpu).maintenance_handler = std::move(handler);
  }

  // ---- Virtual CPU interfaces (GICV), one per CPU, for the guest running there ----
  void virtual_set_enabled(bool grp0, bool grp1 = true, int cpu = 0);  // GICV_CTLR -> VMCR
  void virtual_set_priority_mask(std::uint8_t pmr, int cpu = 0);       // GICV_PMR -> VMPriMask
  int virtual_acknowledge(int cpu = 0);                      // GICV_IAR: virtual ID or 1023
  void virtual_end_of_interrupt(int vid, int cpu = 0);       // GICV_EOIR
  int virtual_highest_pending(int cpu = 0) const;            // GICV_HPPIR
  std::uint8_t virtual_running_priority(int cpu = 0) const;  // GICV_RPR
  bool virq_asserted(int cpu = 0) const;                     // level `virq[cpu]` is being driven to

 private:
  struct Irq {
    bool enabled = false;
    bool edge = false;
    bool latched = false;  // edge- or software-triggered pending state (SGIs: some source)
    bool level = false;    // sampled input line
    bool active = false;
    std::uint8_t prio = kDefaultPriority;
  };
  struct Drop {  // an acknowledged interrupt whose priority is not yet dropped
    int id;
    std::uint8_t prio;
  };
  // One CPU's banked interrupts (IDs 0-31) and its three interfaces.
  struct Cpu {
    std::array<Irq, kFirstSpi> banked{};
    std::array<CpuMask, kFirstPpi> sgi_sources{};    // per SGI: pending source CPUs
    std::array<int, kFirstPpi> sgi_active_source{};  // per SGI: the source acknowledged
    std::vector<int> enabled_banked;                 // ascending IDs 0-31 enabled here
    bool enabled = true;
    bool split_eoi = false;
    std::uint8_t pmr = kIdlePriority;
    std::vector<Drop> drops;  // running priority = highest (lowest value) among these
    VgicState vgic;           // the GICH contents: the VM switched in on this CPU
    std::function<void()> maintenance_handler;
    bool maintenance_was = false;
    // The levels of irq, virq and maintenance: read when the simulation starts, then the ones
    // update_ wrote last.
    bool irq_driven = false;
    bool virq_driven = false;
    bool maintenance_driven = false;
  };

  void check_id(int id, const char* what) const;
  void check_cpu(int cpu, const char* what) const;
  void check_lr(int i) const;
  int interrupt_id(int iar) const;  // the ID in a GICC_IAR value (an SGI's without its source)
  CpuMask all_cpus() const { return num_cpus_ == 64 ? ~CpuMask{0} : (CpuMask{1} << num_cpus_) - 1; }
  Cpu& cpu_at(int cpu);
  const Cpu& cpu_at(int cpu) const;
  Irq& irq_(int id, int cpu) {
    return id < kFirstSpi
               ? cpus_[static_cast<std::size_t>(cpu)].banked[static_cast<std::size_t>(id)]
               : spis_[static_cast<std::size_t>(id - kFirstSpi)];
  }
  const Irq& irq_(int id, int cpu) const {
    return id < kFirstSpi
               ? cpus_[static_cast<std::size_t>(cpu)].banked[static_cast<std::size_t>(id)]
               : spis_[static_cast<std::size_t>(id - kFirstSpi)];
  }
  bool pending_(int id, int cpu) const;
  int best_pending_(int cpu) const;
  void deactivate_(int id, int cpu, const char* who);
  void changed_();  // state changed: re-evaluate outputs in the next delta
  // SC_METHOD on the SPI lines and changed_ev_, the only writer of the outputs: samples the lines
  // (nothing changes for a line that did not move), then drives each CPU's outputs, so an SPI
  // reaches the outputs in the delta after it moved.
  void update_();
  void start_of_simulation() override;
  void sample_inputs_();
  void drive_outputs_();

  int num_spis_;
  int num_cpus_;
  std::vector<Irq> spis_;
  std::vector<CpuMask> targets_;   // per SPI: GICD_ITARGETSR
  std::vector<int> enabled_spis_;  // ascending; best_pending_() looks only at these (hot path)
  std::vector<Cpu> cpus_;
  bool dist_enabled_ = true;
  sc_core::sc_event changed_ev_;

  core::Counter& acks_;
  core::Counter& eois_;
  core::Counter& spurious_;
  core::Counter& virtual_acks_;
  core::Counter& virtual_eois_;
  core::Counter& virtual_spurious_;
  core::Counter& lr_writes_;
  core::Counter& saves_;
  core::Counter& restores_;
  core::Counter& maintenance_irqs_;
  core::Counter& bad_eois_;
};

}  // namespace vtoe::gic
