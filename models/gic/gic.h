// Behavioural GICv2 for one CPU: distributor, physical CPU interface (GICC), virtual interface
// control (GICH, for the hypervisor) and virtual CPU interface (GICV, for the running guest).
//
// Software models (hypervisor, guest OS) call the C++ methods below from their own processes; there
// is no register/TLM interface. State changes take effect at once for the query and acknowledge
// methods; the output lines (`irq`, `virq`, `maintenance`) follow one delta cycle later, driven by
// a single internal process (so several software processes may call in without becoming drivers).
//
// Interrupt IDs follow GICv2: 0-15 SGIs, 16-31 PPIs, SPIs from 32 (input spi[i] is ID 32 + i),
// 1023 spurious. PPI 25 is the virtual-interface maintenance interrupt (as on GIC-400): its level
// is the `maintenance` line, so a hypervisor may enable ID 25 and take it through `irq` like any
// other.
//
// Paper §4.2 / Fig. 8: at every VM switch the hypervisor calls save() for the outgoing guest and
// restore() with the incoming guest's VgicState; the virtual CPU interface then acts on whatever
// list registers are loaded.
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
  Gic(const sc_core::sc_module_name& name, int num_spis);

  // Ports. All must be bound.
  sc_core::sc_vector<sc_core::sc_in<bool>>
      spi;                            // level-sensitive (or edge, see set_edge_triggered)
  sc_core::sc_out<bool> irq;          // physical IRQ to the CPU
  sc_core::sc_out<bool> virq;         // virtual IRQ to the CPU (the running guest)
  sc_core::sc_out<bool> maintenance;  // GICH maintenance interrupt (also PPI 25)

  int num_spis() const { return num_spis_; }
  int num_ids() const { return kFirstSpi + num_spis_; }

  // ---- Distributor (GICD) ----
  void set_distributor_enabled(bool on);         // GICD_CTLR; on at reset (model choice)
  void enable(int id, bool on);                  // GICD_ISENABLER / ICENABLER; all off at reset
  void set_priority(int id, std::uint8_t prio);  // GICD_IPRIORITYR; lower value = higher priority
  void set_edge_triggered(int id, bool edge);    // GICD_ICFGR; level-sensitive at reset
  void set_pending(int id);                      // GICD_ISPENDR (software-triggered, e.g. an SGI)
  void clear_pending(int id);                    // GICD_ICPENDR (latched state only, not a line)
  void set_active(int id, bool on);              // GICD_ISACTIVER / ICACTIVER
  // The level of a PPI's input line (IDs 16-31 but 25, e.g. a generic-timer output); SPIs come
  // in through the `spi` ports instead.
  void set_ppi_level(int id, bool level);
  bool is_edge_triggered(int id) const;
  bool is_enabled(int id) const;
  bool is_pending(int id) const;
  bool is_active(int id) const;
  std::uint8_t priority(int id) const;
  bool line_level(int id) const;  // sampled level of the SPI input (PPI 25: the maintenance line)

  // ---- Physical CPU interface (GICC) ----
  void set_cpu_interface_enabled(bool on);   // GICC_CTLR.Enable; on at reset (model choice)
  void set_priority_mask(std::uint8_t pmr);  // GICC_PMR: signal only priority < pmr; 0xFF reset
  void set_split_eoi(bool on);               // GICC_CTLR.EOImode: EOI drops priority only
  bool distributor_enabled() const { return dist_enabled_; }
  bool cpu_interface_enabled() const { return cpu_enabled_; }
  std::uint8_t priority_mask() const { return pmr_; }
  bool split_eoi() const { return split_eoi_; }
  int acknowledge();                         // GICC_IAR: ID made active, or 1023
  void end_of_interrupt(int id);             // GICC_EOIR: drop priority (+ deactivate)
  void deactivate(int id);                   // GICC_DIR (split EOI mode)
  int highest_pending() const;               // GICC_HPPIR: what acknowledge() would return
  std::uint8_t running_priority() const;     // GICC_RPR
  bool irq_asserted() const;                 // level `irq` is being driven to

  // ---- Virtual interface control (GICH), for the hypervisor ----
  void write_lr(int i, const ListRegister& lr);
  ListRegister read_lr(int i) const;
  int free_lr() const;              // lowest invalid LR, or -1
  int pending_lr_count() const;     // LRs in pending or pending+active
  int valid_lr_count() const;       // LRs not invalid
  void write_hcr(std::uint32_t v);  // GICH_HCR
  std::uint32_t hcr() const { return cur_.hcr; }
  void write_vmcr(std::uint32_t v);  // GICH_VMCR
  std::uint32_t vmcr() const { return cur_.vmcr; }
  void write_apr(std::uint32_t v);  // GICH_APR
  std::uint32_t apr() const { return cur_.apr; }
  std::uint32_t eisr() const { return cur_.eisr; }  // GICH_EISR
  std::uint32_t elrsr() const;                      // GICH_ELRSR: bit i = LR i invalid
  std::uint32_t misr() const;                       // GICH_MISR
  void clear_eoi_status(std::uint32_t mask);        // model convenience: clear EISR bits
  bool maintenance_asserted() const;                // HCR.En && MISR != 0
  VgicState save();                                 // outgoing VM (Fig. 8: backup)
  void restore(const VgicState& s);                 // incoming VM (Fig. 8: restore)
  // Called on each rising edge of the maintenance line, from the GIC's own method process (so it
  // must not wait()); the handler should clear the causes (rewrite emptied LRs, EOICount ...).
  void on_maintenance(std::function<void()> handler) { maintenance_handler_ = std::move(handler); }

  // ---- Virtual CPU interface (GICV), for the running guest ----
  void virtual_set_enabled(bool grp0, bool grp1 = true);  // GICV_CTLR -> VMCR group enables
  void virtual_set_priority_mask(std::uint8_t pmr);       // GICV_PMR -> VMCR.VMPriMask
  int virtual_acknowledge();                              // GICV_IAR: virtual ID or 1023
  void virtual_end_of_interrupt(int vid);                 // GICV_EOIR
  int virtual_highest_pending() const;                    // GICV_HPPIR
  std::uint8_t virtual_running_priority() const;          // GICV_RPR
  bool virq_asserted() const;                             // level `virq` is being driven to

 private:
  struct Irq {
    bool enabled = false;
    bool edge = false;
    bool latched = false;  // edge- or software-triggered pending state
    bool level = false;    // sampled input line
    bool active = false;
    std::uint8_t prio = kDefaultPriority;
  };
  struct Drop {  // an acknowledged interrupt whose priority is not yet dropped
    int id;
    std::uint8_t prio;
  };

  void check_id(int id, const char* what) const;
  void check_lr(int i) const;
  bool pending_(int id) const;
  int best_pending_() const;
  int best_virtual_pending_() const;
  bool virtual_group_enabled_(const ListRegister& lr) const;
  void deactivate_(int id, const char* who);
  void changed_();  // state changed: re-evaluate outputs in the next delta
  // SC_METHOD on the SPI lines and changed_ev_, the only writer of irq/virq/maintenance: samples
  // the lines (nothing changes for a line that did not move), then drives the outputs, so an SPI
  // reaches the outputs in the delta after it moved.
  void update_();
  void start_of_simulation() override;
  void sample_inputs_();
  void drive_outputs_();

  int num_spis_;
  std::vector<Irq> irqs_;
  std::vector<int> enabled_ids_;  // ascending; best_pending_() looks only at these (hot path)
  bool dist_enabled_ = true;
  bool cpu_enabled_ = true;
  bool split_eoi_ = false;
  std::uint8_t pmr_ = kIdlePriority;
  std::vector<Drop> drops_;  // running priority = highest (lowest value) among these

  VgicState cur_;  // the GICH contents: the switched-in VM's
  std::function<void()> maintenance_handler_;
  bool maintenance_was_ = false;
  // The levels of irq, virq and maintenance: read when the simulation starts, then the ones
  // update_ wrote last.
  bool irq_driven_ = false;
  bool virq_driven_ = false;
  bool maintenance_driven_ = false;
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
