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

Gic::Gic(const sc_core::sc_module_name& name, int num_spis, int num_cpus)
    : core::Module(name),
      spi("spi", static_cast<std::size_t>(num_spis < 0 ? 0 : num_spis)),
      irq("irq", static_cast<std::size_t>(num_cpus < 1 || num_cpus > kMaxCpus ? 1 : num_cpus)),
      virq("virq", irq.size()),
      maintenance("maintenance", irq.size()),
      num_spis_(num_spis),
      num_cpus_(num_cpus),
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
  if (num_cpus < 1 || num_cpus > kMaxCpus) {
    throw std::invalid_argument(std::string(this->name()) + ": num_cpus must be in 1.." +
                                std::to_string(kMaxCpus) + ", got " + std::to_string(num_cpus));
  }
  spis_.resize(static_cast<std::size_t>(num_spis));
  targets_.assign(static_cast<std::size_t>(num_spis), CpuMask{1});
  cpus_.resize(static_cast<std::size_t>(num_cpus));

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

void Gic::check_cpu(int cpu, const char* what) const {
  if (cpu < 0 || cpu >= num_cpus_) {
    throw std::out_of_range(std::string(name()) + ": " + what + ": CPU " + std::to_string(cpu) +
                            " out of range 0.." + std::to_string(num_cpus_ - 1));
  }
}

Gic::Cpu& Gic::cpu_at(int cpu) {
  check_cpu(cpu, "CPU interface");
  return cpus_[static_cast<std::size_t>(cpu)];
}

const Gic::Cpu& Gic::cpu_at(int cpu) const {
  check_cpu(cpu, "CPU interface");
  return cpus_[static_cast<std::size_t>(cpu)];
}

void Gic::check_lr(int i) const {
  if (i < 0 || i >= kListRegisters) {
    throw std::out_of_range(std::string(name()) + ": list register " + std::to_string(i) +
                            " out of range 0.." + std::to_string(kListRegisters - 1));
  }
}

int Gic::interrupt_id(int iar) const {
  // An SGI's value carries its source CPU from bit 10 (the value acknowledge() returned).
  if (iar >= 0 && (iar & 0x3FF) < kFirstPpi && (iar >> 10) < num_cpus_) return iar & 0x3FF;
  return iar;
}

void Gic::changed_() {
  const auto st = sc_core::sc_get_status();
  if (st == sc_core::SC_RUNNING || st == sc_core::SC_PAUSED) {
    changed_ev_.notify(sc_core::SC_ZERO_TIME);
  }
  // Before simulation starts, update_ runs in the initialization phase anyway.
}

bool Gic::pending_(int id, int cpu) const {
  const Irq& q = irq_(id, cpu);
  if (q.latched) return true;
  if (q.edge) return false;
  if (id == kMaintenanceId) return maintenance_asserted(cpu);
  return q.level;
}

int Gic::best_pending_(int cpu) const {
  const Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  if (!dist_enabled_ || !c.enabled) return -1;
  const std::uint8_t limit = std::min(c.pmr, running_priority(cpu));
  int best = -1;
  std::uint8_t best_prio = 0xFF;
  // Ascending IDs (the CPU's banked ones, then the SPIs), so ties keep the lowest ID.
  for (const int id : c.enabled_banked) {
    const Irq& q = c.banked[static_cast<std::size_t>(id)];
    if (q.active || q.prio >= limit || !pending_(id, cpu)) continue;
    if (best < 0 || q.prio < best_prio) {
      best = id;
      best_prio = q.prio;
    }
  }
  const bool uni = num_cpus_ == 1;
  const CpuMask bit = CpuMask{1} << cpu;
  for (const int id : enabled_spis_) {
    const auto s = static_cast<std::size_t>(id - kFirstSpi);
    const Irq& q = spis_[s];
    if (q.active || q.prio >= limit || (!uni && !(targets_[s] & bit)) || !pending_(id, cpu))
      continue;
    if (best < 0 || q.prio < best_prio) {
      best = id;
      best_prio = q.prio;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Processes

void Gic::start_of_simulation() {
  for (int k = 0; k < num_cpus_; ++k) {
    Cpu& c = cpus_[static_cast<std::size_t>(k)];
    c.irq_driven = irq[static_cast<std::size_t>(k)].read();
    c.virq_driven = virq[static_cast<std::size_t>(k)].read();
    c.maintenance_driven = maintenance[static_cast<std::size_t>(k)].read();
  }
}

void Gic::update_() {
  sample_inputs_();
  drive_outputs_();
}

void Gic::sample_inputs_() {
  for (int i = 0; i < num_spis_; ++i) {
    Irq& q = spis_[static_cast<std::size_t>(i)];
    const bool v = spi[static_cast<std::size_t>(i)].read();
    if (q.edge && v && !q.level) q.latched = true;
    q.level = v;
  }
}

void Gic::drive_outputs_() {
  // Only this method writes the outputs, so a level equal to the one written last is already
  // the signal's value: writing it again would change nothing (and cost a virtual call each).
  for (int k = 0; k < num_cpus_; ++k) {
    Cpu& c = cpus_[static_cast<std::size_t>(k)];
    const auto at = static_cast<std::size_t>(k);
    const bool i = irq_asserted(k);
    if (i != c.irq_driven) irq[at].write(c.irq_driven = i);
    const bool v = virq_asserted(k);
    if (v != c.virq_driven) virq[at].write(c.virq_driven = v);
    const bool m = maintenance_asserted(k);
    if (m != c.maintenance_driven) maintenance[at].write(c.maintenance_driven = m);
    const bool rising = m && !c.maintenance_was;
    c.maintenance_was = m;
    if (rising) {
      ++maintenance_irqs_;
      VTOE_LOG(log_, Debug) << "maintenance cpu " << k << " misr=0x" << std::hex << misr(k)
                            << " eisr=0x" << eisr(k);
      if (c.maintenance_handler) c.maintenance_handler();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Distributor

void Gic::set_distributor_enabled(bool on) {
  dist_enabled_ = on;
  changed_();
}

void Gic::enable(int id, bool on, int cpu) {
  check_id(id, "enable");
  check_cpu(cpu, "enable");
  irq_(id, cpu).enabled = on;
  std::vector<int>& list =
      id < kFirstSpi ? cpus_[static_cast<std::size_t>(cpu)].enabled_banked : enabled_spis_;
  const auto at = std::lower_bound(list.begin(), list.end(), id);
  const bool listed = at != list.end() && *at == id;
  if (on && !listed) list.insert(at, id);
  if (!on && listed) list.erase(at);
  changed_();
}

void Gic::set_priority(int id, std::uint8_t prio, int cpu) {
  check_id(id, "set_priority");
  check_cpu(cpu, "set_priority");
  irq_(id, cpu).prio = prio;
  changed_();
}

void Gic::set_edge_triggered(int id, bool edge, int cpu) {
  check_id(id, "set_edge_triggered");
  check_cpu(cpu, "set_edge_triggered");
  irq_(id, cpu).edge = edge;
  changed_();
}

void Gic::set_pending(int id, int cpu) {
  check_id(id, "set_pending");
  check_cpu(cpu, "set_pending");
  if (id < kFirstPpi) {
    send_sgi(id, CpuMask{1} << cpu, cpu);
    return;
  }
  irq_(id, cpu).latched = true;
  changed_();
}

void Gic::clear_pending(int id, int cpu) {
  check_id(id, "clear_pending");
  check_cpu(cpu, "clear_pending");
  if (id < kFirstPpi)
    cpus_[static_cast<std::size_t>(cpu)].sgi_sources[static_cast<std::size_t>(id)] = 0;
  irq_(id, cpu).latched = false;
  changed_();
}

void Gic::set_active(int id, bool on, int cpu) {
  check_id(id, "set_active");
  check_cpu(cpu, "set_active");
  irq_(id, cpu).active = on;
  changed_();
}

void Gic::set_targets(int id, CpuMask cpu_mask) {
  check_id(id, "set_targets");
  if (id < kFirstSpi) return;  // SGIs and PPIs go to their own CPU (GICD_ITARGETSR0-7 are RO)
  targets_[static_cast<std::size_t>(id - kFirstSpi)] = cpu_mask & all_cpus();
  changed_();
}

CpuMask Gic::targets(int id, int cpu) const {
  check_id(id, "targets");
  check_cpu(cpu, "targets");
  if (id < kFirstSpi) return CpuMask{1} << cpu;
  return targets_[static_cast<std::size_t>(id - kFirstSpi)];
}

void Gic::send_sgi(int id, CpuMask cpu_mask, int source) {
  if (id < 0 || id >= kFirstPpi) {
    throw std::out_of_range(std::string(name()) + ": send_sgi: " + std::to_string(id) +
                            " is not an SGI (0..15)");
  }
  check_cpu(source, "send_sgi (source)");
  for (int k = 0; k < num_cpus_; ++k) {
    if (!(cpu_mask & (CpuMask{1} << k))) continue;
    Cpu& c = cpus_[static_cast<std::size_t>(k)];
    c.sgi_sources[static_cast<std::size_t>(id)] |= CpuMask{1} << source;
    c.banked[static_cast<std::size_t>(id)].latched = true;
  }
  changed_();
}

CpuMask Gic::sgi_sources(int id, int cpu) const {
  if (id < 0 || id >= kFirstPpi) return 0;
  return cpu_at(cpu).sgi_sources[static_cast<std::size_t>(id)];
}

void Gic::set_ppi_level(int id, bool level, int cpu) {
  if (id < kFirstPpi || id >= kFirstSpi || id == kMaintenanceId) {
    throw std::out_of_range(std::string(name()) + ": set_ppi_level: " + std::to_string(id) +
                            " is not a PPI with an input line (16..31 but 25)");
  }
  check_cpu(cpu, "set_ppi_level");
  Irq& q = irq_(id, cpu);
  if (q.edge && level && !q.level) q.latched = true;
  q.level = level;
  changed_();
}

bool Gic::is_edge_triggered(int id, int cpu) const {
  check_id(id, "is_edge_triggered");
  check_cpu(cpu, "is_edge_triggered");
  return irq_(id, cpu).edge;
}

bool Gic::is_enabled(int id, int cpu) const {
  check_id(id, "is_enabled");
  check_cpu(cpu, "is_enabled");
  return irq_(id, cpu).enabled;
}

bool Gic::is_pending(int id, int cpu) const {
  check_id(id, "is_pending");
  check_cpu(cpu, "is_pending");
  return pending_(id, cpu);
}

bool Gic::is_active(int id, int cpu) const {
  check_id(id, "is_active");
  check_cpu(cpu, "is_active");
  return irq_(id, cpu).active;
}

std::uint8_t Gic::priority(int id, int cpu) const {
  check_id(id, "priority");
  check_cpu(cpu, "priority");
  return irq_(id, cpu).prio;
}

bool Gic::line_level(int id, int cpu) const {
  check_id(id, "line_level");
  check_cpu(cpu, "line_level");
  if (id == kMaintenanceId) return maintenance_asserted(cpu);
  return irq_(id, cpu).level;
}

// ---------------------------------------------------------------------------------------------
// Physical CPU interfaces

void Gic::set_cpu_interface_enabled(bool on, int cpu) {
  cpu_at(cpu).enabled = on;
  changed_();
}

void Gic::set_priority_mask(std::uint8_t pmr, int cpu) {
  cpu_at(cpu).pmr = pmr;
  changed_();
}

void Gic::set_split_eoi(bool on, int cpu) { cpu_at(cpu).split_eoi = on; }

std::uint8_t Gic::running_priority(int cpu) const {
  std::uint8_t r = kIdlePriority;
  for (const Drop& d : cpu_at(cpu).drops) r = std::min(r, d.prio);
  return r;
}

int Gic::highest_pending(int cpu) const {
  check_cpu(cpu, "highest_pending");
  const int id = best_pending_(cpu);
  if (id < 0) return kSpuriousId;
  if (id < kFirstPpi) {  // the source CPU an acknowledge would report: the lowest pending one
    const CpuMask src =
        cpus_[static_cast<std::size_t>(cpu)].sgi_sources[static_cast<std::size_t>(id)];
    int s = 0;
    while (s < kMaxCpus && !(src & (CpuMask{1} << s))) ++s;
    return id | ((s < kMaxCpus ? s : 0) << 10);
  }
  return id;
}

bool Gic::irq_asserted(int cpu) const {
  check_cpu(cpu, "irq_asserted");
  return best_pending_(cpu) >= 0;
}

int Gic::acknowledge(int cpu) {
  check_cpu(cpu, "acknowledge");
  const int id = best_pending_(cpu);
  if (id < 0) {
    ++spurious_;
    return kSpuriousId;
  }
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  Irq& q = irq_(id, cpu);
  q.active = true;
  int iar = id;
  if (id < kFirstPpi) {
    // SGI: one source at a time (the lowest); the others stay pending.
    CpuMask& src = c.sgi_sources[static_cast<std::size_t>(id)];
    int s = 0;
    while (s < kMaxCpus && !(src & (CpuMask{1} << s))) ++s;
    if (s == kMaxCpus) s = 0;
    src &= ~(CpuMask{1} << s);
    q.latched = src != 0;
    c.sgi_active_source[static_cast<std::size_t>(id)] = s;
    iar = id | (s << 10);
  } else {
    q.latched = false;  // a level-sensitive line still high keeps it pending (active+pending)
  }
  c.drops.push_back(Drop{id, q.prio});
  ++acks_;
  VTOE_LOG(log_, Debug) << "cpu " << cpu << " ack " << id << " prio " << int(q.prio);
  changed_();
  return iar;
}

void Gic::deactivate_(int id, int cpu, const char* who) {
  Irq& q = irq_(id, cpu);
  if (!q.active) {
    ++bad_eois_;
    VTOE_LOG(log_, Warn) << who << " of interrupt " << id << " which is not active (ignored)";
    return;
  }
  q.active = false;  // a level input still high makes it pending again by itself
}

void Gic::end_of_interrupt(int iar, int cpu) {
  if (iar == kSpuriousId) return;  // EOI of a spurious ID is ignored, as in GICv2
  check_cpu(cpu, "end_of_interrupt");
  const int id = interrupt_id(iar);
  check_id(id, "end_of_interrupt");
  ++eois_;
  Cpu& c = cpus_[static_cast<std::size_t>(cpu)];
  bool dropped = false;
  for (auto it = c.drops.end(); it != c.drops.begin();) {  // most recent acknowledge first
    --it;
    if (it->id == id) {
      c.drops.erase(it);
      dropped = true;
      break;
    }
  }
  if (!dropped) {
    ++bad_eois_;
    VTOE_LOG(log_, Warn) << "EOI of interrupt " << id << " which was not acknowledged (ignored)";
    return;
  }
  if (!c.split_eoi) deactivate_(id, cpu, "EOI");
  VTOE_LOG(log_, Debug) << "cpu " << cpu << " eoi " << id;
  changed_();
}

void Gic::deactivate(int iar, int cpu) {
  if (iar == kSpuriousId) return;
  check_cpu(cpu, "deactivate");
  const int id = interrupt_id(iar);
  check_id(id, "deactivate");
  deactivate_(id, cpu, "deactivate");
  changed_();
}

// ---------------------------------------------------------------------------------------------
// Virtual interface control (GICH)

void Gic::write_lr(int i, const ListRegister& lr, int cpu) {
  check_lr(i);
  Cpu& c = cpu_at(cpu);
  if (lr.virtual_id < 0 || lr.virtual_id >= kSpuriousId) {
    throw std::out_of_range(std::string(name()) + ": write_lr: virtual ID " +
                            std::to_string(lr.virtual_id) + " out of range 0..1022");
  }
  if (lr.hw()) check_id(lr.physical_id, "write_lr (physical ID)");
  ListRegister v = lr;
  v.priority &= kVirtualPriorityMask;
  c.vgic.lr[static_cast<std::size_t>(i)] = v;
  c.vgic.eisr &= ~(1u << i);
  ++lr_writes_;
  VTOE_LOG(log_, Debug) << "cpu " << cpu << " LR" << i << " <- vid " << v.virtual_id << " "
                        << to_string(v.state) << " prio " << int(v.priority);
  changed_();
}

ListRegister Gic::read_lr(int i, int cpu) const {
  check_lr(i);
  return cpu_at(cpu).vgic.lr[static_cast<std::size_t>(i)];
}

int Gic::free_lr(int cpu) const {
  const Cpu& c = cpu_at(cpu);
  for (int i = 0; i < kListRegisters; ++i) {
    if (!c.vgic.lr[static_cast<std::size_t>(i)].valid()) return i;
  }
  return -1;
}

int Gic::pending_lr_count(int cpu) const {
  int n = 0;
  for (const auto& lr : cpu_at(cpu).vgic.lr) n += lr.pending() ? 1 : 0;
  return n;
}

int Gic::valid_lr_count(int cpu) const {
  int n = 0;
  for (const auto& lr : cpu_at(cpu).vgic.lr) n += lr.valid() ? 1 : 0;
  return n;
}

void Gic::write_hcr(std::uint32_t v, int cpu) {
  cpu_at(cpu).vgic.hcr = v;
  changed_();
}

void Gic::write_vmcr(std::uint32_t v, int cpu) {
  cpu_at(cpu).vgic.vmcr = v;
  changed_();
}

void Gic::write_apr(std::uint32_t v, int cpu) {
  cpu_at(cpu).vgic.apr = v;
  changed_();
}

std::uint32_t Gic::elrsr(int cpu) const {
  const Cpu& c = cpu_at(cpu);
  std::uint32_t m = 0;
  for (int i = 0; i < kListRegisters; ++i) {
    if (!c.vgic.lr[static_cast<std::size_t>(i)].valid()) m |= 1u << i;
  }
  return m;
}

std::uint32_t Gic::misr(int cpu) const {
  const VgicState& s = cpu_at(cpu).vgic;
  std::uint32_t m = 0;
  if (s.eisr != 0) m |= misr::kEoi;
  if ((s.hcr & hcr::kUie) && valid_lr_count(cpu) <= 1) m |= misr::kU;
  if ((s.hcr & hcr::kLrenpie) && hcr::eoi_count(s.hcr) != 0) m |= misr::kLrenp;
  if ((s.hcr & hcr::kNpie) && pending_lr_count(cpu) == 0) m |= misr::kNp;
  return m;
}

void Gic::clear_eoi_status(std::uint32_t mask, int cpu) {
  cpu_at(cpu).vgic.eisr &= ~mask;
  changed_();
}

bool Gic::maintenance_asserted(int cpu) const {
  return (cpu_at(cpu).vgic.hcr & hcr::kEn) && misr(cpu) != 0;
}

VgicState Gic::save(int cpu) {
  const Cpu& c = cpu_at(cpu);
  ++saves_;
  VTOE_LOG(log_, Debug) << "cpu " << cpu << " save: " << valid_lr_count(cpu) << " valid LRs";
  return c.vgic;
}

void Gic::restore(const VgicState& s, int cpu) {
  Cpu& c = cpu_at(cpu);
  c.vgic = s;
  for (auto& lr : c.vgic.lr) lr.priority &= kVirtualPriorityMask;
  ++restores_;
  VTOE_LOG(log_, Debug) << "cpu " << cpu << " restore: " << valid_lr_count(cpu) << " valid LRs";
  changed_();
}

// ---------------------------------------------------------------------------------------------
// Virtual CPU interfaces (GICV)

void Gic::virtual_set_enabled(bool grp0, bool grp1, int cpu) {
  std::uint32_t& vmcr = cpu_at(cpu).vgic.vmcr;
  vmcr &= ~(vmcr::kGrp0En | vmcr::kGrp1En);
  if (grp0) vmcr |= vmcr::kGrp0En;
  if (grp1) vmcr |= vmcr::kGrp1En;
  changed_();
}

void Gic::virtual_set_priority_mask(std::uint8_t pmr, int cpu) {
  std::uint32_t& vmcr = cpu_at(cpu).vgic.vmcr;
  vmcr =
      (vmcr & ~vmcr::kPriMaskMask) | (static_cast<std::uint32_t>(pmr >> 3) << vmcr::kPriMaskShift);
  changed_();
}

std::uint8_t Gic::virtual_running_priority(int cpu) const {
  return gic::virtual_running_priority(cpu_at(cpu).vgic);
}

int Gic::virtual_highest_pending(int cpu) const {
  const VgicState& s = cpu_at(cpu).vgic;
  const int i = best_virtual_pending(s);
  return i < 0 ? kSpuriousId : s.lr[static_cast<std::size_t>(i)].virtual_id;
}

bool Gic::virq_asserted(int cpu) const { return best_virtual_pending(cpu_at(cpu).vgic) >= 0; }

int Gic::virtual_acknowledge(int cpu) {
  VgicState& s = cpu_at(cpu).vgic;
  const int i = acknowledge_virtual(s);
  if (i < 0) {
    ++virtual_spurious_;
    return kSpuriousId;
  }
  const ListRegister& lr = s.lr[static_cast<std::size_t>(i)];
  ++virtual_acks_;
  VTOE_LOG(log_, Debug) << "cpu " << cpu << " vack " << lr.virtual_id << " (LR" << i << ")";
  changed_();
  return lr.virtual_id;
}

void Gic::virtual_end_of_interrupt(int vid, int cpu) {
  if (vid == kSpuriousId) return;
  VgicState& s = cpu_at(cpu).vgic;
  ++virtual_eois_;
  const int found = end_virtual_interrupt(s, vid);
  if (found < 0) {
    VTOE_LOG(log_, Debug) << "veoi " << vid << " not in LRs, EOICount " << hcr::eoi_count(s.hcr);
    changed_();
    return;
  }
  const ListRegister& lr = s.lr[static_cast<std::size_t>(found)];
  // A hardware-linked LR deactivates its physical interrupt: an SPI, or this CPU's own PPI/SGI.
  if (lr.hw()) deactivate_(lr.physical_id, cpu, "virtual EOI (hardware-linked)");
  VTOE_LOG(log_, Debug) << "veoi " << vid << " (LR" << found << " -> " << to_string(lr.state)
                        << ")";
  changed_();
}

}  // namespace vtoe::gic
