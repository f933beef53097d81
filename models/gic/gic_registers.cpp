#include "models/gic/gic_registers.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace vtoe::gic {

namespace {

// The ID registers QEMU's GICv2 returns (hw/intc/arm_gic.c, gic_id_gicv2), read as bytes at
// 0xFD0 + 4 * i.
constexpr std::uint8_t kGicv2Id[12] = {0x04, 0x00, 0x00, 0x00, 0x90, 0xb4,
                                       0x2b, 0x00, 0x0d, 0xf0, 0x05, 0xb1};
constexpr std::uint32_t kImplementer = 0x43b;  // ARM (JEP106 0x43b)
constexpr std::uint32_t kCtlrEoiMode = 1u << 9;
constexpr std::uint32_t kCtlrMask = 0x21F;  // EnableGrp0/1, AckCtl, FIQEn, CBPR, EOImode

// ListRegs - 1, PREbits - 1 = 4, PRIbits - 1 = 4 (five bits of priority, as the list registers).
constexpr std::uint32_t kVtrValue = (kListRegisters - 1) | (4u << 26) | (4u << 29);
constexpr int kVmcrVmbpShift = 21, kVmcrVmabpShift = 18;

}  // namespace

GicRegisters::GicRegisters(const sc_core::sc_module_name& name, Gic& gic)
    : core::Peripheral(name, core::PeripheralParams{}),
      distributor("distributor"),
      cpu("cpu"),
      hyp("hyp"),
      vcpu("vcpu"),
      gic_(check_cpus(gic)),
      group_(static_cast<std::size_t>(gic.num_cpus() * kFirstSpi + gic.num_spis()), 0),
      gicd_bank_(std::string(this->name()) + ".gicd"),
      gicc_bank_(std::string(this->name()) + ".gicc"),
      gich_bank_(std::string(this->name()) + ".gich"),
      gicv_bank_(std::string(this->name()) + ".gicv"),
      gicd_ctlr_(gicd_bank_, reg_info::kGicdCtlr),
      gicd_typer_(gicd_bank_, reg_info::kGicdTyper),
      gicd_iidr_(gicd_bank_, reg_info::kGicdIidr),
      gicd_igroupr_(gicd_bank_, reg_info::kGicdIgroupr),
      gicd_isenabler_(gicd_bank_, reg_info::kGicdIsenabler),
      gicd_icenabler_(gicd_bank_, reg_info::kGicdIcenabler),
      gicd_ispendr_(gicd_bank_, reg_info::kGicdIspendr),
      gicd_icpendr_(gicd_bank_, reg_info::kGicdIcpendr),
      gicd_isactiver_(gicd_bank_, reg_info::kGicdIsactiver),
      gicd_icactiver_(gicd_bank_, reg_info::kGicdIcactiver),
      gicd_ipriorityr_(gicd_bank_, reg_info::kGicdIpriorityr),
      gicd_itargetsr_(gicd_bank_, reg_info::kGicdItargetsr),
      gicd_icfgr_(gicd_bank_, reg_info::kGicdIcfgr),
      gicd_sgir_(gicd_bank_, reg_info::kGicdSgir),
      gicd_id_(gicd_bank_, reg_info::kGicdId),
      gicc_ctlr_(gicc_bank_, reg_info::kGiccCtlr),
      gicc_pmr_(gicc_bank_, reg_info::kGiccPmr),
      gicc_bpr_(gicc_bank_, reg_info::kGiccBpr),
      gicc_iar_(gicc_bank_, reg_info::kGiccIar),
      gicc_eoir_(gicc_bank_, reg_info::kGiccEoir),
      gicc_rpr_(gicc_bank_, reg_info::kGiccRpr),
      gicc_hppir_(gicc_bank_, reg_info::kGiccHppir),
      gicc_abpr_(gicc_bank_, reg_info::kGiccAbpr),
      gicc_aiar_(gicc_bank_, reg_info::kGiccAiar),
      gicc_aeoir_(gicc_bank_, reg_info::kGiccAeoir),
      gicc_ahppir_(gicc_bank_, reg_info::kGiccAhppir),
      gicc_apr_(gicc_bank_, reg_info::kGiccApr),
      gicc_nsapr_(gicc_bank_, reg_info::kGiccNsapr),
      gicc_iidr_(gicc_bank_, reg_info::kGiccIidr),
      gicc_dir_(gicc_bank_, reg_info::kGiccDir),
      gich_hcr_(gich_bank_, reg_info::kGichHcr),
      gich_vtr_(gich_bank_, reg_info::kGichVtr),
      gich_vmcr_(gich_bank_, reg_info::kGichVmcr),
      gich_misr_(gich_bank_, reg_info::kGichMisr),
      gich_eisr0_(gich_bank_, reg_info::kGichEisr0),
      gich_eisr1_(gich_bank_, reg_info::kGichEisr1),
      gich_elrsr0_(gich_bank_, reg_info::kGichElrsr0),
      gich_elrsr1_(gich_bank_, reg_info::kGichElrsr1),
      gich_apr_(gich_bank_, reg_info::kGichApr),
      gich_lr_(gich_bank_, reg_info::kGichLr),
      gicv_ctlr_(gicv_bank_, reg_info::kGicvCtlr),
      gicv_pmr_(gicv_bank_, reg_info::kGicvPmr),
      gicv_bpr_(gicv_bank_, reg_info::kGicvBpr),
      gicv_iar_(gicv_bank_, reg_info::kGicvIar),
      gicv_eoir_(gicv_bank_, reg_info::kGicvEoir),
      gicv_rpr_(gicv_bank_, reg_info::kGicvRpr),
      gicv_hppir_(gicv_bank_, reg_info::kGicvHppir),
      gicv_abpr_(gicv_bank_, reg_info::kGicvAbpr),
      gicv_aiar_(gicv_bank_, reg_info::kGicvAiar),
      gicv_aeoir_(gicv_bank_, reg_info::kGicvAeoir),
      gicv_ahppir_(gicv_bank_, reg_info::kGicvAhppir),
      gicv_apr_(gicv_bank_, reg_info::kGicvApr),
      gicv_iidr_(gicv_bank_, reg_info::kGicvIidr) {
  serve(distributor);
  serve(cpu);
  serve(hyp);
  serve(vcpu);
  map(distributor, gicd_bank_, 0, reg::kDistributorSize);
  map(cpu, gicc_bank_, 0, reg::kCpuSize);
  map(hyp, gich_bank_, 0, reg::kHypSize);
  map(vcpu, gicv_bank_, 0, reg::kVcpuSize);
  gicd_bank_.expect_all(reg_info::kDistributorBank, std::size(reg_info::kDistributorBank));
  gicc_bank_.expect_all(reg_info::kCpuBank, std::size(reg_info::kCpuBank));
  gich_bank_.expect_all(reg_info::kHypBank, std::size(reg_info::kHypBank));
  gicv_bank_.expect_all(reg_info::kVcpuBank, std::size(reg_info::kVcpuBank));
  bank_by_cpu();
  decode_distributor();
  decode_cpu();
  decode_hyp();
  decode_vcpu();
  reset_state();
}

void GicRegisters::reset_state() {
  // The architecture's reset state.
  std::fill(group_.begin(), group_.end(), 0);
  gic_.set_distributor_enabled(false);
  for (int c = 0; c < gic_.num_cpus(); ++c) {
    gic_.set_cpu_interface_enabled(false, c);
    gic_.set_priority_mask(0, c);
    gic_.set_split_eoi(false, c);
    for (int id = 0; id < kFirstSpi; ++id) {  // each CPU's banked SGIs and PPIs
      gic_.set_priority(id, 0, c);
      gic_.set_edge_triggered(id, id < kFirstPpi, c);
      if (id < kFirstPpi) gic_.enable(id, true, c);
    }
    // GICH_HCR: the virtual interface off; GICH_VMCR: GICV's reset state with VMBP = 2 and
    // VMABP = 3 (the binary points GICV_BPR/ABPR show, as QEMU's).
    gic_.write_hcr(0, c);
    for (int i = 0; i < kListRegisters; ++i) gic_.write_lr(i, decode_lr(0), c);  // GICH_LRn = 0
    gic_.write_vmcr((2u << kVmcrVmbpShift) | (3u << kVmcrVmabpShift), c);
  }
  for (int id = kFirstSpi; id < gic_.num_ids(); ++id) {
    gic_.set_priority(id, 0);
    gic_.set_edge_triggered(id, false);
    gic_.set_targets(id, 0x01);  // as QEMU's GIC after reset on CPU 0's view: CPU 0
  }
}

std::uint32_t GicRegisters::bus_read(Socket& s, std::uint32_t offset, unsigned size, int by) {
  std::uint64_t v = 0;
  read(s, offset, v, size, by);
  return static_cast<std::uint32_t>(v);
}

std::uint32_t GicRegisters::read_distributor(std::uint32_t offset, unsigned size, int by) {
  return bus_read(distributor, offset, size, by);
}
void GicRegisters::write_distributor(std::uint32_t offset, std::uint32_t value, unsigned size,
                                     int by) {
  write(distributor, offset, value, size, by);
}
std::uint32_t GicRegisters::read_cpu(std::uint32_t offset, int by) {
  return bus_read(cpu, offset, 4, by);
}
void GicRegisters::write_cpu(std::uint32_t offset, std::uint32_t value, int by) {
  write(cpu, offset, value, 4, by);
}
std::uint32_t GicRegisters::read_hyp(std::uint32_t offset, int by) {
  return bus_read(hyp, offset, 4, by);
}
void GicRegisters::write_hyp(std::uint32_t offset, std::uint32_t value, int by) {
  write(hyp, offset, value, 4, by);
}
std::uint32_t GicRegisters::read_vcpu(std::uint32_t offset, int by) {
  return bus_read(vcpu, offset, 4, by);
}
void GicRegisters::write_vcpu(std::uint32_t offset, std::uint32_t value, int by) {
  write(vcpu, offset, value, 4, by);
}

Gic& GicRegisters::check_cpus(Gic& gic) {
  if (gic.num_cpus() > kMaxRegisterCpus)
    throw std::invalid_argument(std::string(gic.name()) + ": GICv2's registers name at most " +
                                std::to_string(kMaxRegisterCpus) + " CPU interfaces, the GIC has " +
                                std::to_string(gic.num_cpus()));
  return gic;
}

int GicRegisters::interrupt_of(std::uint32_t v) {
  // GICC_EOIR / GICC_DIR: the interrupt ID [9:0] and, for an SGI, its source CPU [12:10].
  const std::uint32_t id = v & 0x3FFu;
  return static_cast<int>(id < static_cast<std::uint32_t>(kFirstPpi) ? v & 0x1FFFu : id);
}

int GicRegisters::cpu_() const {
  const int a = accessor();
  return a >= 0 && a < gic_.num_cpus() ? a : 0;
}

std::size_t GicRegisters::group_index(int id, int c) const {
  return static_cast<std::size_t>(id < kFirstSpi ? c * kFirstSpi + id
                                                 : gic_.num_cpus() * kFirstSpi + id - kFirstSpi);
}

int GicRegisters::physical_hppir() const {
  const int c = cpu_();
  if (!gic_.distributor_enabled() || !gic_.cpu_interface_enabled(c)) return kSpuriousId;
  int best = kSpuriousId;
  std::uint8_t best_prio = 0xFF;
  const CpuMask bit = CpuMask{1} << c;
  for (int id = 0; id < gic_.num_ids(); ++id) {
    if (!gic_.is_enabled(id, c) || gic_.is_active(id, c) || !gic_.is_pending(id, c)) continue;
    if (gic_.num_cpus() > 1 && !(gic_.targets(id, c) & bit)) continue;
    const std::uint8_t p = gic_.priority(id, c);
    if (p < gic_.priority_mask(c) && (best == kSpuriousId || p < best_prio)) {
      best = id;
      best_prio = p;
    }
  }
  return best;
}

int GicRegisters::virtual_hppir() const {
  const int c = cpu_();
  const std::uint32_t vmcr = gic_.vmcr(c);
  if (!(gic_.hcr(c) & hcr::kEn)) return kSpuriousId;
  const auto pmr = static_cast<std::uint8_t>((vmcr >> vmcr::kPriMaskShift) << 3);
  int best = kSpuriousId;
  std::uint8_t best_prio = 0xFF;
  for (int i = 0; i < kListRegisters; ++i) {
    const ListRegister lr = gic_.read_lr(i, c);
    const bool group_on = vmcr & (lr.group1 ? vmcr::kGrp1En : vmcr::kGrp0En);
    if (lr.state != LrState::Pending || !group_on || lr.priority >= pmr) continue;
    if (best == kSpuriousId || lr.priority < best_prio) {
      best = lr.virtual_id;
      best_prio = lr.priority;
    }
  }
  return best;
}

std::uint32_t GicRegisters::empty_lrs() const {
  std::uint32_t v = 0;
  for (int i = 0; i < kListRegisters; ++i) {
    const ListRegister lr = gic_.read_lr(i, cpu_());
    if (!lr.valid() && !(lr.eoi_maintenance && !lr.hw())) v |= 1u << i;
  }
  return v;
}

std::uint32_t GicRegisters::eoi_lrs() const {
  std::uint32_t v = 0;
  for (int i = 0; i < kListRegisters; ++i) {
    const ListRegister lr = gic_.read_lr(i, cpu_());
    if (!lr.valid() && lr.eoi_maintenance && !lr.hw()) v |= 1u << i;
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Distributor

std::uint32_t GicRegisters::bits_of(unsigned index, bool (Gic::*test)(int, int) const) const {
  std::uint32_t v = 0;
  const int first = static_cast<int>(index * 32);
  const int c = cpu_();
  for (int i = 0; i < 32 && first + i < gic_.num_ids(); ++i) {
    if ((gic_.*test)(first + i, c)) v |= 1u << i;
  }
  return v;
}

void GicRegisters::set_bits(unsigned index, std::uint64_t array, std::uint32_t value, bool on) {
  const int first = static_cast<int>(index * 32);
  const int c = cpu_();
  for (int i = 0; i < 32 && first + i < gic_.num_ids(); ++i) {
    if (!(value & (1u << i))) continue;
    const int id = first + i;
    if (array == reg::kGicdIsenabler || array == reg::kGicdIcenabler) {
      if (id < kFirstPpi) continue;  // SGIs are always enabled (IMPLEMENTATION DEFINED; QEMU too)
      gic_.enable(id, on, c);
    } else if (array == reg::kGicdIspendr || array == reg::kGicdIcpendr) {
      if (id < kFirstPpi) continue;  // SGIs: GICD_SPENDSGIR/CPENDSGIR, ignored here (as QEMU)
      if (on)
        gic_.set_pending(id, c);
      else
        gic_.clear_pending(id, c);
    } else {
      gic_.set_active(id, on, c);
    }
  }
}

void GicRegisters::decode_distributor() {
  gicd_ctlr_.on_read([this](unsigned) { return gic_.distributor_enabled() ? 1u : 0u; });
  gicd_ctlr_.on_write(
      [this](unsigned, std::uint32_t v, std::uint32_t) { gic_.set_distributor_enabled(v & 1u); });
  // ITLinesNumber [4:0], CPUNumber [7:5] = CPU interfaces - 1.
  gicd_typer_.on_read([this](unsigned) {
    return static_cast<std::uint32_t>(gic_.num_ids() / 32 - 1) |
           (static_cast<std::uint32_t>(gic_.num_cpus() - 1) << 5);
  });
  gicd_iidr_.on_read([](unsigned) { return kImplementer; });
  gicd_igroupr_.on_read([this](unsigned index) {
    std::uint32_t v = 0;
    const int first = static_cast<int>(index * 32);
    for (int i = 0; i < 32 && first + i < gic_.num_ids(); ++i)
      if (group_[group_index(first + i, cpu_())]) v |= 1u << i;
    return v;
  });
  gicd_igroupr_.on_write([this](unsigned index, std::uint32_t v, std::uint32_t) {
    const int first = static_cast<int>(index * 32);
    for (int i = 0; i < 32 && first + i < gic_.num_ids(); ++i)
      group_[group_index(first + i, cpu_())] = (v >> i) & 1u;
  });
  // The one-bit-per-ID arrays: a set register and a clear register read the same state.
  struct BitArray {
    R* reg;
    std::uint64_t offset;
    bool (Gic::*test)(int, int) const;
    bool on;
  };
  for (const BitArray& a :
       {BitArray{&gicd_isenabler_, reg::kGicdIsenabler, &Gic::is_enabled, true},
        BitArray{&gicd_icenabler_, reg::kGicdIcenabler, &Gic::is_enabled, false},
        BitArray{&gicd_ispendr_, reg::kGicdIspendr, &Gic::is_pending, true},
        BitArray{&gicd_icpendr_, reg::kGicdIcpendr, &Gic::is_pending, false},
        BitArray{&gicd_isactiver_, reg::kGicdIsactiver, &Gic::is_active, true},
        BitArray{&gicd_icactiver_, reg::kGicdIcactiver, &Gic::is_active, false}}) {
    const auto test = a.test;
    const std::uint64_t array = a.offset;
    const bool on = a.on;
    a.reg->on_read([this, test](unsigned index) { return bits_of(index, test); });
    a.reg->on_write([this, array, on](unsigned index, std::uint32_t v, std::uint32_t) {
      set_bits(index, array, v, on);
    });
  }
  // One byte per ID; a narrower access touches only its bytes.
  gicd_ipriorityr_.on_read([this](unsigned index) {
    std::uint32_t v = 0;
    for (int b = 0; b < 4; ++b) {
      const int id = static_cast<int>(index * 4) + b;
      if (id < gic_.num_ids())
        v |= static_cast<std::uint32_t>(gic_.priority(id, cpu_())) << (8 * b);
    }
    return v;
  });
  gicd_ipriorityr_.on_write([this](unsigned index, std::uint32_t v, std::uint32_t mask) {
    for (int b = 0; b < 4; ++b) {
      const int id = static_cast<int>(index * 4) + b;
      if (id < gic_.num_ids() && ((mask >> (8 * b)) & 0xFFu))
        gic_.set_priority(id, static_cast<std::uint8_t>(v >> (8 * b)), cpu_());
    }
  });
  // One byte per ID. A uniprocessor GIC's are RAZ/WI (GICv2 4.3.12, and QEMU); otherwise
  // ITARGETSR0-7 (SGIs, PPIs) read as the accessing CPU's own bit and ignore writes, and an
  // SPI's byte holds its targets.
  gicd_itargetsr_.on_read([this](unsigned index) {
    if (gic_.num_cpus() == 1) return 0u;
    std::uint32_t v = 0;
    for (int b = 0; b < 4; ++b) {
      const int id = static_cast<int>(index * 4) + b;
      if (id < gic_.num_ids()) v |= static_cast<std::uint32_t>(gic_.targets(id, cpu_())) << (8 * b);
    }
    return v;
  });
  gicd_itargetsr_.on_write([this](unsigned index, std::uint32_t v, std::uint32_t mask) {
    if (gic_.num_cpus() == 1) return;
    for (int b = 0; b < 4; ++b) {
      const int id = static_cast<int>(index * 4) + b;
      if (id >= kFirstSpi && id < gic_.num_ids() && ((mask >> (8 * b)) & 0xFFu))
        gic_.set_targets(id, (v >> (8 * b)) & 0xFFu);
    }
  });
  gicd_icfgr_.on_read([this](unsigned index) {
    std::uint32_t v = 0;
    const int first = static_cast<int>(index * 16);
    for (int i = 0; i < 16 && first + i < gic_.num_ids(); ++i)
      if (gic_.is_edge_triggered(first + i, cpu_())) v |= 2u << (2 * i);
    return v;
  });
  gicd_icfgr_.on_write([this](unsigned index, std::uint32_t v, std::uint32_t) {
    const int first = static_cast<int>(index * 16);
    for (int i = 0; i < 16 && first + i < gic_.num_ids(); ++i) {
      // SGIs are always edge-triggered; PPIs and SPIs take Int_config[1].
      if (first + i >= kFirstPpi)
        gic_.set_edge_triggered(first + i, (v >> (2 * i + 1)) & 1u, cpu_());
    }
  });
  gicd_sgir_.on_write([this](unsigned, std::uint32_t v, std::uint32_t) {
    const std::uint32_t filter = (v >> 24) & 3u, list = (v >> 16) & 0xFFu;
    const int id = static_cast<int>(v & 0xFu);
    // TargetListFilter: 0 the CPUs in the list, 1 every CPU but the sender, 2 the sender only
    // (3 is reserved: nobody).
    const int self = cpu_();
    const auto all = static_cast<std::uint32_t>((1u << gic_.num_cpus()) - 1u);
    const std::uint32_t to = filter == 0   ? list & all
                             : filter == 1 ? all & ~(1u << self)
                             : filter == 2 ? 1u << self
                                           : 0u;
    if (to != 0) gic_.send_sgi(id, to, self);
  });
  gicd_id_.on_read([](unsigned index) -> std::uint32_t { return kGicv2Id[index]; });
}

void GicRegisters::decode_cpu() {
  gicc_ctlr_.on_write([this](unsigned, std::uint32_t v, std::uint32_t mask) {
    gicc_ctlr_.store(0, v, mask);
    gic_.set_cpu_interface_enabled(gicc_ctlr_ & 3u, cpu_());
    gic_.set_split_eoi(gicc_ctlr_ & kCtlrEoiMode, cpu_());
  });
  gicc_pmr_.on_read([this](unsigned) -> std::uint32_t { return gic_.priority_mask(cpu_()); });
  gicc_pmr_.on_write([this](unsigned, std::uint32_t v, std::uint32_t) {
    gic_.set_priority_mask(static_cast<std::uint8_t>(v), cpu_());
  });
  // IAR: an SGI's source CPU in bits [12:10]. A debugger's look at IAR acknowledges nothing.
  for (R* iar : {&gicc_iar_, &gicc_aiar_}) {
    iar->on_read([this](unsigned) { return static_cast<std::uint32_t>(gic_.acknowledge(cpu_())); });
    iar->on_peek([this](unsigned) { return static_cast<std::uint32_t>(physical_hppir()); });
  }
  for (R* eoir : {&gicc_eoir_, &gicc_aeoir_})
    eoir->on_write([this](unsigned, std::uint32_t v, std::uint32_t) {
      gic_.end_of_interrupt(interrupt_of(v), cpu_());
    });
  gicc_rpr_.on_read([this](unsigned) -> std::uint32_t { return gic_.running_priority(cpu_()); });
  for (R* hppir : {&gicc_hppir_, &gicc_ahppir_})
    hppir->on_read([this](unsigned) { return static_cast<std::uint32_t>(physical_hppir()); });
  // GICC_APR0-3 and NSAPR0-3: read as zero, writes ignored (Linux clears them at start-up).
  for (R* apr : {&gicc_apr_, &gicc_nsapr_}) {
    apr->on_read([](unsigned) { return 0u; });
    apr->on_write([](unsigned, std::uint32_t, std::uint32_t) {});
  }
  gicc_iidr_.on_read([](unsigned) { return (2u << 16) | kImplementer; });  // version 2
  gicc_dir_.on_write([this](unsigned, std::uint32_t v, std::uint32_t) {
    if ((v & 0x3FFu) < static_cast<std::uint32_t>(gic_.num_ids()))
      gic_.deactivate(interrupt_of(v), cpu_());
  });
}

// ---------------------------------------------------------------------------------------------
// Virtual interface control

std::uint32_t GicRegisters::encode_lr(const ListRegister& lr) {
  std::uint32_t v = static_cast<std::uint32_t>(lr.virtual_id) & 0x3FFu;
  if (lr.hw()) {
    v |= (static_cast<std::uint32_t>(lr.physical_id) & 0x3FFu) << 10;
    v |= 1u << 31;
  } else if (lr.eoi_maintenance) {
    v |= 1u << 19;
  }
  v |= static_cast<std::uint32_t>(lr.priority >> 3) << 23;
  v |= static_cast<std::uint32_t>(lr.state) << 28;
  if (lr.group1) v |= 1u << 30;
  return v;
}

ListRegister GicRegisters::decode_lr(std::uint32_t v) {
  ListRegister lr;
  lr.virtual_id = static_cast<int>(v & 0x3FFu);
  const bool hw = v & (1u << 31);
  lr.physical_id = hw ? static_cast<int>((v >> 10) & 0x3FFu) : -1;
  lr.eoi_maintenance = !hw && (v & (1u << 19));
  lr.priority = static_cast<std::uint8_t>(((v >> 23) & 0x1Fu) << 3);
  lr.state = static_cast<LrState>((v >> 28) & 3u);
  lr.group1 = v & (1u << 30);
  return lr;
}

void GicRegisters::decode_hyp() {
  gich_lr_.on_read(
      [this](unsigned i) { return encode_lr(gic_.read_lr(static_cast<int>(i), cpu_())); });
  gich_lr_.on_write([this](unsigned i, std::uint32_t v, std::uint32_t) {
    gic_.write_lr(static_cast<int>(i), decode_lr(v), cpu_());
  });
  gich_hcr_.on_read([this](unsigned) { return gic_.hcr(cpu_()); });
  gich_hcr_.on_write([this](unsigned, std::uint32_t v, std::uint32_t) {
    gic_.write_hcr(v & (hcr::kEn | hcr::kUie | hcr::kLrenpie | hcr::kNpie | hcr::kEoiCountMask),
                   cpu_());
  });
  gich_vtr_.on_read([](unsigned) { return kVtrValue; });
  gich_vmcr_.on_read([this](unsigned) { return gic_.vmcr(cpu_()); });
  gich_vmcr_.on_write(
      [this](unsigned, std::uint32_t v, std::uint32_t) { gic_.write_vmcr(v, cpu_()); });
  gich_misr_.on_read([this](unsigned) { return gic_.misr(cpu_()); });
  gich_eisr0_.on_read([this](unsigned) { return eoi_lrs(); });
  gich_elrsr0_.on_read([this](unsigned) { return empty_lrs(); });
  gich_eisr1_.on_read([](unsigned) { return 0u; });
  gich_elrsr1_.on_read([](unsigned) { return 0u; });
  gich_apr_.on_read([this](unsigned) { return gic_.apr(cpu_()); });
  gich_apr_.on_write(
      [this](unsigned, std::uint32_t v, std::uint32_t) { gic_.write_apr(v, cpu_()); });
}

void GicRegisters::decode_vcpu() {
  // GICV_CTLR is GICH_VMCR's low bits (EnableGrp0/1, AckCtl, FIQEn, CBPR) and VEM (bit 9).
  gicv_ctlr_.on_read([this](unsigned) { return gic_.vmcr(cpu_()) & kCtlrMask; });
  gicv_ctlr_.on_write([this](unsigned, std::uint32_t v, std::uint32_t) {
    gic_.write_vmcr((gic_.vmcr(cpu_()) & ~kCtlrMask) | (v & kCtlrMask), cpu_());
  });
  gicv_pmr_.on_read([this](unsigned) { return (gic_.vmcr(cpu_()) >> vmcr::kPriMaskShift) << 3; });
  gicv_pmr_.on_write([this](unsigned, std::uint32_t v, std::uint32_t) {
    gic_.virtual_set_priority_mask(static_cast<std::uint8_t>(v), cpu_());
  });
  gicv_bpr_.on_read([this](unsigned) { return (gic_.vmcr(cpu_()) >> kVmcrVmbpShift) & 7u; });
  gicv_bpr_.on_write([this](unsigned, std::uint32_t v, std::uint32_t) {
    gic_.write_vmcr((gic_.vmcr(cpu_()) & ~(7u << kVmcrVmbpShift)) | ((v & 7u) << kVmcrVmbpShift),
                    cpu_());
  });
  gicv_abpr_.on_read([this](unsigned) { return (gic_.vmcr(cpu_()) >> kVmcrVmabpShift) & 7u; });
  gicv_abpr_.on_write([this](unsigned, std::uint32_t v, std::uint32_t) {
    gic_.write_vmcr((gic_.vmcr(cpu_()) & ~(7u << kVmcrVmabpShift)) | ((v & 7u) << kVmcrVmabpShift),
                    cpu_());
  });
  for (R* iar : {&gicv_iar_, &gicv_aiar_}) {
    iar->on_read(
        [this](unsigned) { return static_cast<std::uint32_t>(gic_.virtual_acknowledge(cpu_())); });
    iar->on_peek([this](unsigned) { return static_cast<std::uint32_t>(virtual_hppir()); });
  }
  for (R* eoir : {&gicv_eoir_, &gicv_aeoir_})
    eoir->on_write([this](unsigned, std::uint32_t v, std::uint32_t) {
      gic_.virtual_end_of_interrupt(static_cast<int>(v & 0x3FFu), cpu_());
    });
  gicv_rpr_.on_read(
      [this](unsigned) -> std::uint32_t { return gic_.virtual_running_priority(cpu_()); });
  for (R* hppir : {&gicv_hppir_, &gicv_ahppir_})
    hppir->on_read([this](unsigned) { return static_cast<std::uint32_t>(virtual_hppir()); });
  // One virtual active-priorities register (32 levels): APR0 is GICH_APR, as QEMU's GICV;
  // Linux's gic_cpu_init zeroes all four.
  gicv_apr_.on_read([this](unsigned i) { return i == 0 ? gic_.apr(cpu_()) : 0u; });
  gicv_apr_.on_write([this](unsigned i, std::uint32_t v, std::uint32_t) {
    if (i == 0) gic_.write_apr(v, cpu_());
  });
  gicv_iidr_.on_read([](unsigned) { return (2u << 16) | kImplementer; });
}

}  // namespace vtoe::gic
