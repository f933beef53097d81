#include "models/gic/gic_registers.h"

#include <cstring>
#include <sstream>

namespace vtoe::gic {

namespace {

// GICD offsets (GICv2 architecture specification, 4.1.2).
constexpr std::uint32_t kCtlr = 0x000, kTyper = 0x004, kIidr = 0x008;
constexpr std::uint32_t kIgroupr = 0x080, kIsenabler = 0x100, kIcenabler = 0x180;
constexpr std::uint32_t kIspendr = 0x200, kIcpendr = 0x280, kIsactiver = 0x300, kIcactiver = 0x380;
constexpr std::uint32_t kIpriorityr = 0x400, kItargetsr = 0x800, kIcfgr = 0xC00, kSgir = 0xF00;
constexpr std::uint32_t kPidr = 0xFD0;  // ID registers 0xFD0-0xFFC
// The ID registers QEMU's GICv2 returns (hw/intc/arm_gic.c, gic_id_gicv2), read as bytes at
// 0xFD0 + 4 * i.
constexpr std::uint8_t kGicv2Id[12] = {0x04, 0x00, 0x00, 0x00, 0x90, 0xb4,
                                       0x2b, 0x00, 0x0d, 0xf0, 0x05, 0xb1};
constexpr std::uint32_t kImplementer = 0x43b;  // ARM (JEP106 0x43b)

// GICC/GICV offsets (4.1.3, 5.3).
constexpr std::uint32_t kCCtlr = 0x00, kPmr = 0x04, kBpr = 0x08, kIar = 0x0C, kEoir = 0x10,
                        kRpr = 0x14, kHppir = 0x18, kAbpr = 0x1C, kAiar = 0x20, kAeoir = 0x24,
                        kAhppir = 0x28, kApr0 = 0xD0, kNsapr0 = 0xE0, kCIidr = 0xFC, kDir = 0x1000;
constexpr std::uint32_t kCtlrEoiMode = 1u << 9;
constexpr std::uint32_t kCtlrMask = 0x21F;  // EnableGrp0/1, AckCtl, FIQEn, CBPR, EOImode

// GICH offsets (5.3).
constexpr std::uint32_t kHcr = 0x00, kVtr = 0x04, kVmcr = 0x08, kMisr = 0x10, kEisr0 = 0x20,
                        kEisr1 = 0x24, kElrsr0 = 0x30, kElrsr1 = 0x34, kHApr = 0xF0, kLr0 = 0x100;
// ListRegs - 1, PREbits - 1 = 4, PRIbits - 1 = 4 (five bits of priority, as the list registers).
constexpr std::uint32_t kVtrValue = (kListRegisters - 1) | (4u << 26) | (4u << 29);
constexpr int kVmcrVmbpShift = 21, kVmcrVmabpShift = 18;

}  // namespace

GicRegisters::GicRegisters(const sc_core::sc_module_name& name, Gic& gic)
    : core::Module(name),
      distributor("distributor"),
      cpu("cpu"),
      hyp("hyp"),
      vcpu("vcpu"),
      gic_(gic),
      group_(static_cast<std::size_t>(gic.num_ids()), 0),
      bad_accesses_(stats_.counter("bad_accesses",
                                   "GIC register accesses to no register or of the wrong size")) {
  distributor.register_b_transport(this, &GicRegisters::distributor_transport);
  cpu.register_b_transport(this, &GicRegisters::cpu_transport);
  hyp.register_b_transport(this, &GicRegisters::hyp_transport);
  vcpu.register_b_transport(this, &GicRegisters::vcpu_transport);
  // The architecture's reset state.
  gic_.set_distributor_enabled(false);
  gic_.set_cpu_interface_enabled(false);
  gic_.set_priority_mask(0);
  gic_.set_split_eoi(false);
  for (int id = 0; id < gic_.num_ids(); ++id) {
    gic_.set_priority(id, 0);
    gic_.set_edge_triggered(id, id < kFirstPpi);
    if (id < kFirstPpi) gic_.enable(id, true);
  }
  // GICH_HCR: the virtual interface off; GICH_VMCR: GICV's reset state with VMBP = 2 and
  // VMABP = 3 (the binary points GICV_BPR/ABPR show, as QEMU's).
  gic_.write_hcr(0);
  for (int i = 0; i < kListRegisters; ++i) gic_.write_lr(i, decode_lr(0));  // GICH_LRn = 0
  gic_.write_vmcr((2u << kVmcrVmbpShift) | (3u << kVmcrVmabpShift));
}

int GicRegisters::physical_hppir() const {
  if (!gic_.distributor_enabled() || !gic_.cpu_interface_enabled()) return kSpuriousId;
  int best = kSpuriousId;
  std::uint8_t best_prio = 0xFF;
  for (int id = 0; id < gic_.num_ids(); ++id) {
    if (!gic_.is_enabled(id) || gic_.is_active(id) || !gic_.is_pending(id)) continue;
    const std::uint8_t p = gic_.priority(id);
    if (p < gic_.priority_mask() && (best == kSpuriousId || p < best_prio)) {
      best = id;
      best_prio = p;
    }
  }
  return best;
}

int GicRegisters::virtual_hppir() const {
  const std::uint32_t vmcr = gic_.vmcr();
  if (!(gic_.hcr() & hcr::kEn)) return kSpuriousId;
  const auto pmr = static_cast<std::uint8_t>((vmcr >> vmcr::kPriMaskShift) << 3);
  int best = kSpuriousId;
  std::uint8_t best_prio = 0xFF;
  for (int i = 0; i < kListRegisters; ++i) {
    const ListRegister lr = gic_.read_lr(i);
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
    const ListRegister lr = gic_.read_lr(i);
    if (!lr.valid() && !(lr.eoi_maintenance && !lr.hw())) v |= 1u << i;
  }
  return v;
}

std::uint32_t GicRegisters::eoi_lrs() const {
  std::uint32_t v = 0;
  for (int i = 0; i < kListRegisters; ++i) {
    const ListRegister lr = gic_.read_lr(i);
    if (!lr.valid() && lr.eoi_maintenance && !lr.hw()) v |= 1u << i;
  }
  return v;
}

void GicRegisters::bad_access(const char* region, std::uint32_t offset, const char* why) {
  ++bad_accesses_;
  std::ostringstream s;
  s << region << " offset 0x" << std::hex << offset << ": " << why;
  log_.write(core::LogLevel::Warn, s.str());
}

void GicRegisters::transport(Region r, tlm::tlm_generic_payload& t) {
  static const char* const names[] = {"GICD", "GICC", "GICH", "GICV"};
  const auto offset = static_cast<std::uint32_t>(t.get_address());
  const unsigned len = t.get_data_length();
  unsigned char* data = t.get_data_ptr();
  t.set_response_status(tlm::TLM_OK_RESPONSE);
  if (t.get_byte_enable_ptr() || t.get_streaming_width() != len) {
    t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  // Byte access is architected for IPRIORITYR and ITARGETSR only; anything else is a word.
  const bool byte_ok = r == Region::Distributor && offset >= kIpriorityr && offset < kIcfgr;
  const bool word = len == 4 && (offset & 3) == 0;
  if (!word && !(byte_ok && (len == 1 || len == 2 || len == 4))) {
    bad_access(names[static_cast<int>(r)], offset, "not a 32-bit aligned access (ignored)");
    if (t.is_read()) std::memset(data, 0, len);
    return;
  }
  std::uint32_t v = 0;
  if (t.is_write()) std::memcpy(&v, data, len);
  switch (r) {
    case Region::Distributor:
      if (t.is_read())
        v = read_distributor(offset, len);
      else
        write_distributor(offset, v, len);
      break;
    case Region::Cpu:
      if (t.is_read())
        v = read_cpu(offset);
      else
        write_cpu(offset, v);
      break;
    case Region::Hyp:
      if (t.is_read())
        v = read_hyp(offset);
      else
        write_hyp(offset, v);
      break;
    case Region::Vcpu:
      if (t.is_read())
        v = read_vcpu(offset);
      else
        write_vcpu(offset, v);
      break;
  }
  if (t.is_read()) std::memcpy(data, &v, len);
}

// ---------------------------------------------------------------------------------------------
// Distributor

std::uint32_t GicRegisters::bits_of(std::uint32_t offset, std::uint32_t base,
                                    bool (Gic::*test)(int) const) {
  std::uint32_t v = 0;
  const int first = static_cast<int>((offset - base) * 8);
  for (int i = 0; i < 32 && first + i < gic_.num_ids(); ++i) {
    if ((gic_.*test)(first + i)) v |= 1u << i;
  }
  return v;
}

void GicRegisters::set_bits(std::uint32_t offset, std::uint32_t base, std::uint32_t value,
                            bool on) {
  const int first = static_cast<int>((offset - base) * 8);
  for (int i = 0; i < 32 && first + i < gic_.num_ids(); ++i) {
    if (!(value & (1u << i))) continue;
    const int id = first + i;
    if (base == kIsenabler || base == kIcenabler) {
      if (id < kFirstPpi) continue;  // SGIs are always enabled (IMPLEMENTATION DEFINED; QEMU too)
      gic_.enable(id, on);
    } else if (base == kIspendr || base == kIcpendr) {
      if (id < kFirstPpi) continue;  // SGIs: GICD_SPENDSGIR/CPENDSGIR, ignored here (as QEMU)
      if (on)
        gic_.set_pending(id);
      else
        gic_.clear_pending(id);
    } else {
      gic_.set_active(id, on);
    }
  }
}

std::uint32_t GicRegisters::read_distributor(std::uint32_t offset, unsigned size) {
  const int ids = gic_.num_ids();
  auto in_ids = [&](std::uint32_t base, int per_byte) {
    return static_cast<int>((offset - base) * per_byte) < ids;
  };
  if (offset == kCtlr) return gic_.distributor_enabled() ? 1u : 0u;
  if (offset == kTyper) return static_cast<std::uint32_t>(ids / 32 - 1);
  if (offset == kIidr) return kImplementer;
  if (offset >= kIgroupr && offset < kIsenabler) {
    if (!in_ids(kIgroupr, 8)) return 0;
    std::uint32_t v = 0;
    const int first = static_cast<int>((offset - kIgroupr) * 8);
    for (int i = 0; i < 32 && first + i < ids; ++i) {
      if (group_[static_cast<std::size_t>(first + i)]) v |= 1u << i;
    }
    return v;
  }
  if (offset >= kIsenabler && offset < kIspendr) {
    const std::uint32_t base = offset < kIcenabler ? kIsenabler : kIcenabler;
    return in_ids(base, 8) ? bits_of(offset, base, &Gic::is_enabled) : 0;
  }
  if (offset >= kIspendr && offset < kIsactiver) {
    const std::uint32_t base = offset < kIcpendr ? kIspendr : kIcpendr;
    return in_ids(base, 8) ? bits_of(offset, base, &Gic::is_pending) : 0;
  }
  if (offset >= kIsactiver && offset < kIpriorityr) {
    const std::uint32_t base = offset < kIcactiver ? kIsactiver : kIcactiver;
    return in_ids(base, 8) ? bits_of(offset, base, &Gic::is_active) : 0;
  }
  if (offset >= kIpriorityr && offset < kIcfgr) {
    const bool prio = offset < kItargetsr;
    std::uint32_t v = 0;
    for (unsigned b = 0; b < size; ++b) {
      const int id = static_cast<int>(offset - (prio ? kIpriorityr : kItargetsr) + b);
      if (id >= ids) continue;
      std::uint32_t byte;
      if (prio)
        byte = gic_.priority(id);
      else
        byte = 0;  // one CPU interface: GICD_ITARGETSR is RAZ/WI (GICv2 4.3.12, and QEMU)
      v |= byte << (8 * b);
    }
    return v;
  }
  if (offset >= kIcfgr && offset < 0xD00) {
    if (!in_ids(kIcfgr, 4)) return 0;
    std::uint32_t v = 0;
    const int first = static_cast<int>((offset - kIcfgr) * 4);
    for (int i = 0; i < 16 && first + i < ids; ++i) {
      if (gic_.is_edge_triggered(first + i)) v |= 2u << (2 * i);
    }
    return v;
  }
  if (offset == kSgir) {
    bad_access("GICD", offset, "read of the write-only GICD_SGIR (reads as zero)");
    return 0;
  }
  if (offset >= kPidr && offset < 0x1000) return kGicv2Id[(offset - kPidr) / 4];
  bad_access("GICD", offset, "read of no register (reads as zero)");
  return 0;
}

void GicRegisters::write_distributor(std::uint32_t offset, std::uint32_t value, unsigned size) {
  const int ids = gic_.num_ids();
  if (offset == kCtlr) {
    gic_.set_distributor_enabled(value & 1u);
    return;
  }
  if (offset >= kIgroupr && offset < kIsenabler) {
    const int first = static_cast<int>((offset - kIgroupr) * 8);
    for (int i = 0; i < 32 && first + i < ids; ++i) {
      group_[static_cast<std::size_t>(first + i)] = (value >> i) & 1u;
    }
    return;
  }
  if (offset >= kIsenabler && offset < kIpriorityr) {
    const std::uint32_t bases[] = {kIsenabler, kIcenabler, kIspendr,
                                   kIcpendr,   kIsactiver, kIcactiver};
    const std::uint32_t base = bases[(offset - kIsenabler) / 0x80];
    if (static_cast<int>((offset - base) * 8) < ids) {
      set_bits(offset, base, value, base == kIsenabler || base == kIspendr || base == kIsactiver);
    }
    return;
  }
  if (offset >= kIpriorityr && offset < kIcfgr) {
    const bool prio = offset < kItargetsr;
    for (unsigned b = 0; b < size; ++b) {
      const int id = static_cast<int>(offset - (prio ? kIpriorityr : kItargetsr) + b);
      if (id >= ids) continue;
      const auto byte = static_cast<std::uint8_t>(value >> (8 * b));
      if (prio) gic_.set_priority(id, byte);
    }
    return;
  }
  if (offset >= kIcfgr && offset < 0xD00) {
    const int first = static_cast<int>((offset - kIcfgr) * 4);
    for (int i = 0; i < 16 && first + i < ids; ++i) {
      // SGIs are always edge-triggered; PPIs and SPIs take Int_config[1].
      if (first + i >= kFirstPpi) gic_.set_edge_triggered(first + i, (value >> (2 * i + 1)) & 1u);
    }
    return;
  }
  if (offset == kSgir) {
    const std::uint32_t filter = (value >> 24) & 3u, list = (value >> 16) & 0xFFu;
    const int id = static_cast<int>(value & 0xFu);
    // One CPU interface (number 0): a list naming it, or "this CPU only", reaches it;
    // "all others" reaches nobody.
    if ((filter == 0 && (list & 1u)) || filter == 2) gic_.set_pending(id);
    return;
  }
  if (offset == kTyper || offset == kIidr || (offset >= kPidr && offset < 0x1000)) {
    bad_access("GICD", offset, "write to a read-only register (ignored)");
    return;
  }
  bad_access("GICD", offset, "write to no register (ignored)");
}

// ---------------------------------------------------------------------------------------------
// Physical CPU interface

std::uint32_t GicRegisters::read_cpu(std::uint32_t offset) {
  // GICC_APR0-3 and NSAPR0-3: read as zero, writes ignored (Linux clears them at start-up).
  if (offset >= kApr0 && offset < kCIidr - 0xC) return 0;
  switch (offset) {
    case kCCtlr:
      return gicc_ctlr_;
    case kPmr:
      return gic_.priority_mask();
    case kBpr:
      return gicc_bpr_;
    case kIar:
    case kAiar:
      return static_cast<std::uint32_t>(gic_.acknowledge());  // SGI source CPU 0: bits [12:10] 0
    case kRpr:
      return gic_.running_priority();
    case kHppir:
    case kAhppir:
      return static_cast<std::uint32_t>(physical_hppir());
    case kAbpr:
      return gicc_abpr_;
    case kApr0:
    case kNsapr0:
      return 0;
    case kCIidr:
      return (2u << 16) | kImplementer;  // architecture version 2
    default:
      break;
  }
  bad_access("GICC", offset, "read of no register or of a write-only one (reads as zero)");
  return 0;
}

void GicRegisters::write_cpu(std::uint32_t offset, std::uint32_t value) {
  if (offset >= kApr0 && offset < kCIidr - 0xC) return;  // APR0-3, NSAPR0-3
  switch (offset) {
    case kCCtlr:
      gicc_ctlr_ = value & kCtlrMask;
      gic_.set_cpu_interface_enabled(value & 3u);
      gic_.set_split_eoi(value & kCtlrEoiMode);
      return;
    case kPmr:
      gic_.set_priority_mask(static_cast<std::uint8_t>(value));
      return;
    case kBpr:
      gicc_bpr_ = value & 7u;
      return;
    case kEoir:
    case kAeoir:
      gic_.end_of_interrupt(static_cast<int>(value & 0x3FFu));
      return;
    case kAbpr:
      gicc_abpr_ = value & 7u;
      return;
    case kApr0:
    case kNsapr0:
      return;
    case kDir: {
      const int id = static_cast<int>(value & 0x3FFu);
      if (id < gic_.num_ids()) gic_.deactivate(id);
      return;
    }
    default:
      break;
  }
  bad_access("GICC", offset, "write to no register or to a read-only one (ignored)");
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

std::uint32_t GicRegisters::read_hyp(std::uint32_t offset) {
  if (offset >= kLr0 && offset < kLr0 + 4 * kListRegisters) {
    return encode_lr(gic_.read_lr(static_cast<int>((offset - kLr0) / 4)));
  }
  switch (offset) {
    case kHcr:
      return gic_.hcr();
    case kVtr:
      return kVtrValue;
    case kVmcr:
      return gic_.vmcr();
    case kMisr:
      return gic_.misr();
    case kEisr0:
      return eoi_lrs();
    case kElrsr0:
      return empty_lrs();
    case kEisr1:
    case kElrsr1:
      return 0;
    case kHApr:
      return gic_.apr();
    default:
      break;
  }
  bad_access("GICH", offset, "read of no register (reads as zero)");
  return 0;
}

void GicRegisters::write_hyp(std::uint32_t offset, std::uint32_t value) {
  if (offset >= kLr0 && offset < kLr0 + 4 * kListRegisters) {
    gic_.write_lr(static_cast<int>((offset - kLr0) / 4), decode_lr(value));
    return;
  }
  switch (offset) {
    case kHcr:
      gic_.write_hcr(value &
                     (hcr::kEn | hcr::kUie | hcr::kLrenpie | hcr::kNpie | hcr::kEoiCountMask));
      return;
    case kVmcr:
      gic_.write_vmcr(value);
      return;
    case kHApr:
      gic_.write_apr(value);
      return;
    default:
      break;
  }
  bad_access("GICH", offset, "write to no register or to a read-only one (ignored)");
}

// ---------------------------------------------------------------------------------------------
// Virtual CPU interface

std::uint32_t GicRegisters::read_vcpu(std::uint32_t offset) {
  switch (offset) {
    case kCCtlr:
      // GICV_CTLR is GICH_VMCR's low bits (EnableGrp0/1, AckCtl, FIQEn, CBPR) and VEM (bit 9).
      return gic_.vmcr() & kCtlrMask;
    case kPmr:
      return (gic_.vmcr() >> vmcr::kPriMaskShift) << 3;
    case kBpr:
      return (gic_.vmcr() >> kVmcrVmbpShift) & 7u;
    case kAbpr:
      return (gic_.vmcr() >> kVmcrVmabpShift) & 7u;
    case kIar:
    case kAiar:
      return static_cast<std::uint32_t>(gic_.virtual_acknowledge());
    case kRpr:
      return gic_.virtual_running_priority();
    case kHppir:
    case kAhppir:
      return static_cast<std::uint32_t>(virtual_hppir());
    case kApr0:
      return gic_.apr();
    case kCIidr:
      return (2u << 16) | kImplementer;
    default:
      break;
  }
  bad_access("GICV", offset, "read of no register or of a write-only one (reads as zero)");
  return 0;
}

void GicRegisters::write_vcpu(std::uint32_t offset, std::uint32_t value) {
  switch (offset) {
    case kCCtlr:
      gic_.write_vmcr((gic_.vmcr() & ~kCtlrMask) | (value & kCtlrMask));
      return;
    case kPmr:
      gic_.virtual_set_priority_mask(static_cast<std::uint8_t>(value));
      return;
    case kBpr:
      gic_.write_vmcr((gic_.vmcr() & ~(7u << kVmcrVmbpShift)) | ((value & 7u) << kVmcrVmbpShift));
      return;
    case kAbpr:
      gic_.write_vmcr((gic_.vmcr() & ~(7u << kVmcrVmabpShift)) | ((value & 7u) << kVmcrVmabpShift));
      return;
    case kEoir:
    case kAeoir:
      gic_.virtual_end_of_interrupt(static_cast<int>(value & 0x3FFu));
      return;
    default:
      break;
  }
  bad_access("GICV", offset, "write to no register or to a read-only one (ignored)");
}

}  // namespace vtoe::gic
