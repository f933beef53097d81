#include "models/gic/gic.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vtoe::gic {

const char* to_string(LrState s) {
  switch (s) {
    case LrState::Invalid:
      return "invalid";
    case LrState::Pending:
      return "pending";
    case LrState::Active:
      return "active";
    case LrState::PendingActive:
      return "pending+active";
  }
  return "?";
}

namespace {

// Priority level (0..31) of a virtual priority, as indexed in GICH_APR.
int virtual_level(std::uint8_t prio) { return prio >> 3; }

bool virtual_group_enabled(const VgicState& s, const ListRegister& lr) {
  return (s.vmcr & (lr.group1 ? vmcr::kGrp1En : vmcr::kGrp0En)) != 0;
}

}  // namespace

std::uint8_t virtual_running_priority(const VgicState& s) {
  if (s.apr == 0) return kIdlePriority;
  int level = 0;
  while (!(s.apr & (1u << level))) ++level;
  return static_cast<std::uint8_t>(level << 3);
}

int best_virtual_pending(const VgicState& s) {
  if (!(s.hcr & hcr::kEn)) return -1;
  const auto mask = static_cast<std::uint8_t>((s.vmcr >> vmcr::kPriMaskShift) << 3);
  const std::uint8_t limit = std::min(mask, virtual_running_priority(s));
  int best = -1;
  for (int i = 0; i < kListRegisters; ++i) {
    const ListRegister& lr = s.lr[static_cast<std::size_t>(i)];
    // A pending+active interrupt cannot be acknowledged again until it is deactivated.
    if (lr.state != LrState::Pending || !virtual_group_enabled(s, lr) || lr.priority >= limit)
      continue;
    if (best < 0 || lr.priority < s.lr[static_cast<std::size_t>(best)].priority) best = i;
  }
  return best;  // ties: lowest LR index
}

int acknowledge_virtual(VgicState& s) {
  const int i = best_virtual_pending(s);
  if (i < 0) return -1;
  ListRegister& lr = s.lr[static_cast<std::size_t>(i)];
  lr.state = LrState::Active;
  s.apr |= 1u << virtual_level(lr.priority);
  return i;
}

int end_virtual_interrupt(VgicState& s, int vid) {
  // Priority drop: the highest active priority, whichever interrupt it belongs to (as in GICv2).
  if (s.apr != 0) s.apr &= s.apr - 1;
  // Deactivation: the LR holding this virtual ID in an active state.
  int found = -1;
  for (int i = 0; i < kListRegisters; ++i) {
    const ListRegister& lr = s.lr[static_cast<std::size_t>(i)];
    if (lr.virtual_id == vid && lr.active()) {
      found = i;
      break;
    }
  }
  if (found < 0) {
    // Not in the list registers: count it for the hypervisor (GICH_HCR.EOICount, saturating here).
    if (hcr::eoi_count(s.hcr) < 31) s.hcr += 1u << hcr::kEoiCountShift;
    return -1;
  }
  ListRegister& lr = s.lr[static_cast<std::size_t>(found)];
  if (lr.state == LrState::PendingActive) {
    lr.state = LrState::Pending;
  } else {
    lr.state = LrState::Invalid;
    if (lr.eoi_maintenance && !lr.hw()) s.eisr |= 1u << found;
  }
  return found;
}

Gic::Gic(const sc_core::sc_module_name& name, int num_spis)
    : core::Module(name),
      spi("spi", static_cast<std::size_t>(num_spis < 0 ? 0 : num_spis)),
      irq("irq"),
      virq("virq"),
      maintenance("maintenance"),
      num_spis_(num_spis),
      acks_(stats_.counter("acks", "physical interrupts acknowledged (GICC_IAR)")),
      eois_(stats_.counter("eois", "physical end-of-interrupts (GICC_EOIR)")),
      spurious_(stats_.counter("spurious", "physical acknowledges that returned 1023")),
      virtual_acks_(stats_.counter("virtual_acks", "virtual interrupts acknowledged (GICV_IAR)")),
      virtual_eois_(stats_.counter("virtual_eois", "virtual end-of-interrupts (GICV_EOIR)")),
      virtual_spurious_(
          stats_.counter("virtual_spurious", "virtual acknowledges that returned 1023")),
      lr_writes_(stats_.counter("lr_writes", "list register writes by the hypervisor")),
      saves_(stats_.counter("saves", "virtual interface states saved (VM switched out)")),
      restores_(stats_.counter("restores", "virtual interface states restored (VM switched in)")),
      maintenance_irqs_(stats_.counter("maintenance", "rising edges of the maintenance line")),
      bad_eois_(
          stats_.counter("bad_eois", "EOIs/deactivations of interrupts that were not active")) {
  if (num_spis < 0 || kFirstSpi + num_spis > 1020) {
    throw std::invalid_argument(std::string(this->name()) + ": num_spis must be in 0..988, got " +
                                std::to_string(num_spis));
  }
  irqs_.resize(static_cast<std::size_t>(num_ids()));

  SC_METHOD(update_);
  for (auto& p : spi) sensitive << p;
  sensitive << changed_ev_;
}

// ---------------------------------------------------------------------------------------------
// Helpers

void Gic::check_id(int id, const char* what) const {
  if (id < 0 || id >= num_ids()) {
    throw std::out_of_range(std::string(name()) + ": " + what + ": interrupt ID " +
                            std::to_string(id) + " out of range 0.." +
                            std::to_string(num_ids() - 1));
  }
}

void Gic::check_lr(int i) const {
  if (i < 0 || i >= kListRegisters) {
    throw std::out_of_range(std::string(name()) + ": list register " + std::to_string(i) +
                            " out of range 0.." + std::to_string(kListRegisters - 1));
  }
}

void Gic::changed_() {
  const auto st = sc_core::sc_get_status();
  if (st == sc_core::SC_RUNNING || st == sc_core::SC_PAUSED) {
    changed_ev_.notify(sc_core::SC_ZERO_TIME);
  }
  // Before simulation starts, update_ runs in the initialization phase anyway.
}

bool Gic::pending_(int id) const {
  const Irq& q = irqs_[static_cast<std::size_t>(id)];
  if (q.latched) return true;
  if (q.edge) return false;
  if (id == kMaintenanceId) return maintenance_asserted();
  return q.level;
}

int Gic::best_pending_() const {
  if (!dist_enabled_ || !cpu_enabled_) return -1;
  const std::uint8_t limit = std::min(pmr_, running_priority());
  int best = -1;
  std::uint8_t best_prio = 0xFF;
  for (const int id : enabled_ids_) {  // ascending, so ties keep the lowest ID
    const Irq& q = irqs_[static_cast<std::size_t>(id)];
    if (q.active || q.prio >= limit || !pending_(id)) continue;
    if (best < 0 || q.prio < best_prio) {  // ties: lowest ID
      best = id;
      best_prio = q.prio;
    }
  }
  return best;
}

bool Gic::virtual_group_enabled_(const ListRegister& lr) const {
  return virtual_group_enabled(cur_, lr);
}

int Gic::best_virtual_pending_() const { return best_virtual_pending(cur_); }

// ---------------------------------------------------------------------------------------------
// Processes

void Gic::start_of_simulation() {
  irq_driven_ = irq.read();
  virq_driven_ = virq.read();
  maintenance_driven_ = maintenance.read();
}

void Gic::update_() {
  sample_inputs_();
  drive_outputs_();
}

void Gic::sample_inputs_() {
  for (int i = 0; i < num_spis_; ++i) {
    Irq& q = irqs_[static_cast<std::size_t>(kFirstSpi + i)];
    const bool v = spi[static_cast<std::size_t>(i)].read();
    if (q.edge && v && !q.level) q.latched = true;
    q.level = v;
  }
}

void Gic::drive_outputs_() {
  // Only this method writes the outputs, so a level equal to the one written last is already
  // the signal's value: writing it again would change nothing (and cost a virtual call each).
  const bool i = irq_asserted();
  if (i != irq_driven_) irq.write(irq_driven_ = i);
  const bool v = virq_asserted();
  if (v != virq_driven_) virq.write(virq_driven_ = v);
  const bool m = maintenance_asserted();
  if (m != maintenance_driven_) maintenance.write(maintenance_driven_ = m);
  const bool rising = m && !maintenance_was_;
  maintenance_was_ = m;
  if (rising) {
    ++maintenance_irqs_;
    VTOE_LOG(log_, Debug) << "maintenance misr=0x" << std::hex << misr() << " eisr=0x" << eisr();
    if (maintenance_handler_) maintenance_handler_();
  }
}

// ---------------------------------------------------------------------------------------------
// Distributor

void Gic::set_distributor_enabled(bool on) {
  dist_enabled_ = on;
  changed_();
}

void Gic::enable(int id, bool on) {
  check_id(id, "enable");
  irqs_[static_cast<std::size_t>(id)].enabled = on;
  const auto at = std::lower_bound(enabled_ids_.begin(), enabled_ids_.end(), id);
  const bool listed = at != enabled_ids_.end() && *at == id;
  if (on && !listed) enabled_ids_.insert(at, id);
  if (!on && listed) enabled_ids_.erase(at);
  changed_();
}

void Gic::set_priority(int id, std::uint8_t prio) {
  check_id(id, "set_priority");
  irqs_[static_cast<std::size_t>(id)].prio = prio;
  changed_();
}

void Gic::set_edge_triggered(int id, bool edge) {
  check_id(id, "set_edge_triggered");
  irqs_[static_cast<std::size_t>(id)].edge = edge;
  changed_();
}

void Gic::set_pending(int id) {
  check_id(id, "set_pending");
  irqs_[static_cast<std::size_t>(id)].latched = true;
  changed_();
}

void Gic::clear_pending(int id) {
  check_id(id, "clear_pending");
  irqs_[static_cast<std::size_t>(id)].latched = false;
  changed_();
}

void Gic::set_active(int id, bool on) {
  check_id(id, "set_active");
  irqs_[static_cast<std::size_t>(id)].active = on;
  changed_();
}

void Gic::set_ppi_level(int id, bool level) {
  if (id < kFirstPpi || id >= kFirstSpi || id == kMaintenanceId) {
    throw std::out_of_range(std::string(name()) + ": set_ppi_level: " + std::to_string(id) +
                            " is not a PPI with an input line (16..31 but 25)");
  }
  Irq& q = irqs_[static_cast<std::size_t>(id)];
  if (q.edge && level && !q.level) q.latched = true;
  q.level = level;
  changed_();
}

bool Gic::is_edge_triggered(int id) const {
  check_id(id, "is_edge_triggered");
  return irqs_[static_cast<std::size_t>(id)].edge;
}

bool Gic::is_enabled(int id) const {
  check_id(id, "is_enabled");
  return irqs_[static_cast<std::size_t>(id)].enabled;
}

bool Gic::is_pending(int id) const {
  check_id(id, "is_pending");
  return pending_(id);
}

bool Gic::is_active(int id) const {
  check_id(id, "is_active");
  return irqs_[static_cast<std::size_t>(id)].active;
}

std::uint8_t Gic::priority(int id) const {
  check_id(id, "priority");
  return irqs_[static_cast<std::size_t>(id)].prio;
}

bool Gic::line_level(int id) const {
  check_id(id, "line_level");
  if (id == kMaintenanceId) return maintenance_asserted();
  return irqs_[static_cast<std::size_t>(id)].level;
}

// ---------------------------------------------------------------------------------------------
// Physical CPU interface

void Gic::set_cpu_interface_enabled(bool on) {
  cpu_enabled_ = on;
  changed_();
}

void Gic::set_priority_mask(std::uint8_t pmr) {
  pmr_ = pmr;
  changed_();
}

void Gic::set_split_eoi(bool on) { split_eoi_ = on; }

std::uint8_t Gic::running_priority() const {
  std::uint8_t r = kIdlePriority;
  for (const Drop& d : drops_) r = std::min(r, d.prio);
  return r;
}

int Gic::highest_pending() const {
  const int id = best_pending_();
  return id < 0 ? kSpuriousId : id;
}

bool Gic::irq_asserted() const { return best_pending_() >= 0; }

int Gic::acknowledge() {
  const int id = best_pending_();
  if (id < 0) {
    ++spurious_;
    return kSpuriousId;
  }
  Irq& q = irqs_[static_cast<std::size_t>(id)];
  q.active = true;
  q.latched = false;  // a level-sensitive line still high keeps it pending (active+pending)
  drops_.push_back(Drop{id, q.prio});
  ++acks_;
  VTOE_LOG(log_, Debug) << "ack " << id << " prio " << int(q.prio);
  changed_();
  return id;
}

void Gic::deactivate_(int id, const char* who) {
  Irq& q = irqs_[static_cast<std::size_t>(id)];
  if (!q.active) {
    ++bad_eois_;
    VTOE_LOG(log_, Warn) << who << " of interrupt " << id << " which is not active (ignored)";
    return;
  }
  q.active = false;  // a level input still high makes it pending again by itself
}

void Gic::end_of_interrupt(int id) {
  if (id == kSpuriousId) return;  // EOI of a spurious ID is ignored, as in GICv2
  check_id(id, "end_of_interrupt");
  ++eois_;
  bool dropped = false;
  for (auto it = drops_.end(); it != drops_.begin();) {  // most recent acknowledge first
    --it;
    if (it->id == id) {
      drops_.erase(it);
      dropped = true;
      break;
    }
  }
  if (!dropped) {
    ++bad_eois_;
    VTOE_LOG(log_, Warn) << "EOI of interrupt " << id << " which was not acknowledged (ignored)";
    return;
  }
  if (!split_eoi_) deactivate_(id, "EOI");
  VTOE_LOG(log_, Debug) << "eoi " << id;
  changed_();
}

void Gic::deactivate(int id) {
  if (id == kSpuriousId) return;
  check_id(id, "deactivate");
  deactivate_(id, "deactivate");
  changed_();
}

// ---------------------------------------------------------------------------------------------
// Virtual interface control (GICH)

void Gic::write_lr(int i, const ListRegister& lr) {
  check_lr(i);
  if (lr.virtual_id < 0 || lr.virtual_id >= kSpuriousId) {
    throw std::out_of_range(std::string(name()) + ": write_lr: virtual ID " +
                            std::to_string(lr.virtual_id) + " out of range 0..1022");
  }
  if (lr.hw()) check_id(lr.physical_id, "write_lr (physical ID)");
  ListRegister v = lr;
  v.priority &= kVirtualPriorityMask;
  cur_.lr[static_cast<std::size_t>(i)] = v;
  cur_.eisr &= ~(1u << i);
  ++lr_writes_;
  VTOE_LOG(log_, Debug) << "LR" << i << " <- vid " << v.virtual_id << " " << to_string(v.state)
                        << " prio " << int(v.priority);
  changed_();
}

ListRegister Gic::read_lr(int i) const {
  check_lr(i);
  return cur_.lr[static_cast<std::size_t>(i)];
}

int Gic::free_lr() const {
  for (int i = 0; i < kListRegisters; ++i) {
    if (!cur_.lr[static_cast<std::size_t>(i)].valid()) return i;
  }
  return -1;
}

int Gic::pending_lr_count() const {
  int n = 0;
  for (const auto& lr : cur_.lr) n += lr.pending() ? 1 : 0;
  return n;
}

int Gic::valid_lr_count() const {
  int n = 0;
  for (const auto& lr : cur_.lr) n += lr.valid() ? 1 : 0;
  return n;
}

void Gic::write_hcr(std::uint32_t v) {
  cur_.hcr = v;
  changed_();
}

void Gic::write_vmcr(std::uint32_t v) {
  cur_.vmcr = v;
  changed_();
}

void Gic::write_apr(std::uint32_t v) {
  cur_.apr = v;
  changed_();
}

std::uint32_t Gic::elrsr() const {
  std::uint32_t m = 0;
  for (int i = 0; i < kListRegisters; ++i) {
    if (!cur_.lr[static_cast<std::size_t>(i)].valid()) m |= 1u << i;
  }
  return m;
}

std::uint32_t Gic::misr() const {
  std::uint32_t m = 0;
  if (cur_.eisr != 0) m |= misr::kEoi;
  if ((cur_.hcr & hcr::kUie) && valid_lr_count() <= 1) m |= misr::kU;
  if ((cur_.hcr & hcr::kLrenpie) && hcr::eoi_count(cur_.hcr) != 0) m |= misr::kLrenp;
  if ((cur_.hcr & hcr::kNpie) && pending_lr_count() == 0) m |= misr::kNp;
  return m;
}

void Gic::clear_eoi_status(std::uint32_t mask) {
  cur_.eisr &= ~mask;
  changed_();
}

bool Gic::maintenance_asserted() const { return (cur_.hcr & hcr::kEn) && misr() != 0; }

VgicState Gic::save() {
  ++saves_;
  VTOE_LOG(log_, Debug) << "save: " << valid_lr_count() << " valid LRs";
  return cur_;
}

void Gic::restore(const VgicState& s) {
  cur_ = s;
  for (auto& lr : cur_.lr) lr.priority &= kVirtualPriorityMask;
  ++restores_;
  VTOE_LOG(log_, Debug) << "restore: " << valid_lr_count() << " valid LRs";
  changed_();
}

// ---------------------------------------------------------------------------------------------
// Virtual CPU interface (GICV)

void Gic::virtual_set_enabled(bool grp0, bool grp1) {
  cur_.vmcr &= ~(vmcr::kGrp0En | vmcr::kGrp1En);
  if (grp0) cur_.vmcr |= vmcr::kGrp0En;
  if (grp1) cur_.vmcr |= vmcr::kGrp1En;
  changed_();
}

void Gic::virtual_set_priority_mask(std::uint8_t pmr) {
  cur_.vmcr = (cur_.vmcr & ~vmcr::kPriMaskMask) |
              (static_cast<std::uint32_t>(pmr >> 3) << vmcr::kPriMaskShift);
  changed_();
}

std::uint8_t Gic::virtual_running_priority() const {
  return gic::virtual_running_priority(cur_);
}

int Gic::virtual_highest_pending() const {
  const int i = best_virtual_pending_();
  return i < 0 ? kSpuriousId : cur_.lr[static_cast<std::size_t>(i)].virtual_id;
}

bool Gic::virq_asserted() const { return best_virtual_pending_() >= 0; }

int Gic::virtual_acknowledge() {
  const int i = acknowledge_virtual(cur_);
  if (i < 0) {
    ++virtual_spurious_;
    return kSpuriousId;
  }
  const ListRegister& lr = cur_.lr[static_cast<std::size_t>(i)];
  ++virtual_acks_;
  VTOE_LOG(log_, Debug) << "vack " << lr.virtual_id << " (LR" << i << ")";
  changed_();
  return lr.virtual_id;
}

void Gic::virtual_end_of_interrupt(int vid) {
  if (vid == kSpuriousId) return;
  ++virtual_eois_;
  const int found = end_virtual_interrupt(cur_, vid);
  if (found < 0) {
    VTOE_LOG(log_, Debug) << "veoi " << vid << " not in LRs, EOICount " << hcr::eoi_count(cur_.hcr);
    changed_();
    return;
  }
  const ListRegister& lr = cur_.lr[static_cast<std::size_t>(found)];
  if (lr.hw()) deactivate_(lr.physical_id, "virtual EOI (hardware-linked)");
  VTOE_LOG(log_, Debug) << "veoi " << vid << " (LR" << found << " -> " << to_string(lr.state)
                        << ")";
  changed_();
}

}  // namespace vtoe::gic
