// Integer execution, the run loop and the decoded-instruction cache. VFP is in arm_core_vfp.cpp.
#include "models/cpu/iss/arm_core.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "models/cpu/iss/cluster.h"

namespace vtoe::cpu::iss {

namespace {

std::string undefined_text(uint32_t addr, uint32_t raw, bool thumb, uint8_t len) {
  char buf[128];
  if (!thumb) {
    std::snprintf(buf, sizeof buf, "undefined instruction at 0x%08x: A32 encoding 0x%08x", addr,
                  raw);
  } else if (len == 2) {
    std::snprintf(buf, sizeof buf, "undefined instruction at 0x%08x: T32 encoding 0x%04x", addr,
                  raw >> 16);
  } else {
    std::snprintf(buf, sizeof buf, "undefined instruction at 0x%08x: T32 encoding 0x%04x 0x%04x",
                  addr, raw >> 16, raw & 0xffff);
  }
  return buf;
}

inline uint32_t shift_c(uint32_t v, uint8_t type, uint32_t n, uint32_t& c) {
  if (n == 0 && type != kRrx) return v;
  switch (type) {
    case kLsl:
      if (n < 32) {
        c = (v >> (32 - n)) & 1;
        return v << n;
      }
      c = n == 32 ? v & 1 : 0;
      return 0;
    case kLsr:
      if (n < 32) {
        c = (v >> (n - 1)) & 1;
        return v >> n;
      }
      c = n == 32 ? v >> 31 : 0;
      return 0;
    case kAsr:
      if (n < 32) {
        c = (v >> (n - 1)) & 1;
        return static_cast<uint32_t>(static_cast<int32_t>(v) >> n);
      }
      c = v >> 31;
      return c ? 0xffffffffu : 0;
    case kRor: {
      n &= 31;
      if (n == 0) {
        c = v >> 31;
        return v;
      }
      uint32_t r = (v >> n) | (v << (32 - n));
      c = r >> 31;
      return r;
    }
    default: {  // RRX
      uint32_t r = (c << 31) | (v >> 1);
      c = v & 1;
      return r;
    }
  }
}

inline uint32_t ror(uint32_t v, uint32_t n) { return n ? (v >> n) | (v << (32 - n)) : v; }

// Signed saturation to `bits` bits; sets `sat` when clamped.
inline int64_t ssat(int64_t v, uint32_t bits, bool& sat) {
  int64_t hi = (int64_t{1} << (bits - 1)) - 1, lo = -(int64_t{1} << (bits - 1));
  if (v > hi) {
    sat = true;
    return hi;
  }
  if (v < lo) {
    sat = true;
    return lo;
  }
  return v;
}

inline int64_t usat(int64_t v, uint32_t bits, bool& sat) {
  int64_t hi = (int64_t{1} << bits) - 1;
  if (v > hi) {
    sat = true;
    return hi;
  }
  if (v < 0) {
    sat = true;
    return 0;
  }
  return v;
}

inline int32_t sx16(uint32_t v) { return static_cast<int16_t>(v & 0xffff); }

}  // namespace

AlignmentFault::AlignmentFault(uint32_t a, uint32_t size, bool w)
    : std::runtime_error([&] {
        char buf[96];
        std::snprintf(buf, sizeof buf, "alignment fault: address 0x%08x is not %u-byte aligned", a,
                      size);
        return std::string(buf);
      }()),
      addr(a),
      write(w) {}

UndefinedInstruction::UndefinedInstruction(uint32_t a, uint32_t r, bool t, uint8_t len)
    : std::runtime_error(undefined_text(a, r, t, len)), addr(a), raw(r), thumb(t) {}

const char* to_string(InsnClass c) {
  switch (c) {
    case InsnClass::Alu:
      return "alu";
    case InsnClass::Multiply:
      return "multiply";
    case InsnClass::Divide:
      return "divide";
    case InsnClass::Load:
      return "load";
    case InsnClass::Store:
      return "store";
    case InsnClass::LoadMulti:
      return "load_multiple";
    case InsnClass::StoreMulti:
      return "store_multiple";
    case InsnClass::Branch:
      return "branch";
    case InsnClass::Vfp:
      return "vfp";
    case InsnClass::System:
      return "system";
    case InsnClass::Nop:
      return "nop";
    default:
      return "?";
  }
}

ArmCore::ArmCore(PagedMemory& mem)
    : mem_(mem), pages_(PagedMemory::kPages), code_map_(PagedMemory::kPages), mmu_(mem, st_) {
  mem_.set_code_write_listener([this](uint32_t page) {
    drop_page(page);
    if (cluster_) cluster_->code_written(cluster_index_, page);  // the others' copies too
  });
  mem_.set_unmap_listener([this] { mmu_.forget_host(); });
  set_fpscr(0);
}

ArmCore::~ArmCore() {
  mem_.set_code_write_listener(nullptr);
  mem_.set_unmap_listener(nullptr);
}

void ArmCore::set_reg(int n, uint32_t v) {
  if (n == 15) {
    st_.pc = v & (st_.thumb ? ~1u : ~3u);
  } else {
    st_.r[n] = v;
  }
}

void ArmCore::set_pc(uint32_t addr) {
  st_.thumb = addr & 1;
  st_.pc = addr & ~1u;
  st_.itstate = 0;
}

uint32_t ArmCore::cpsr() const {
  return (st_.nzcv << 28) | (st_.q << 27) | (uint32_t{st_.itstate & 3u} << 25) | (st_.ge << 16) |
         ((uint32_t{st_.itstate} >> 2) << 10) | st_.aif | (st_.thumb ? 0x20u : 0u) | st_.mode;
}

void ArmCore::write_cpsr(uint32_t v, uint32_t mask) {
  v = (v & mask) | (cpsr() & ~mask);
  set_nzcv(v);
  st_.q = (v >> 27) & 1;
  st_.ge = (v >> 16) & 15;
  st_.itstate = static_cast<uint8_t>(((v >> 25) & 3) | (((v >> 10) & 0x3f) << 2));
  st_.thumb = v & 0x20;
  st_.aif = v & 0x3c0;
  uint8_t m = v & 0x1f;
  if (m != st_.mode && valid_mode(m)) switch_mode(m);  // a reserved mode number is ignored
  update_attention();
}

int ArmCore::bank_of(uint8_t mode) {
  switch (static_cast<Mode>(mode)) {
    case Mode::Usr:
    case Mode::Sys:
      return 0;
    case Mode::Svc:
      return 1;
    case Mode::Abt:
      return 2;
    case Mode::Und:
      return 3;
    case Mode::Irq:
      return 4;
    case Mode::Fiq:
      return 5;
    case Mode::Hyp:
      return 6;
    default:
      return -1;
  }
}

void ArmCore::switch_mode(uint8_t mode) {
  int from = bank_of(st_.mode), to = bank_of(mode);
  if (mode != st_.mode) {
    uint64_t now = retired();
    mode_retired_[st_.mode & 31] += now - mode_start_;
    mode_start_ = now;
    for (int c = 0; c < kClasses; ++c) {
      const uint64_t k = retired(static_cast<InsnClass>(c));
      mode_class_retired_[st_.mode & 31][c] += k - mode_class_start_[c];
      mode_class_start_[c] = k;
    }
  }
  if (from != to) {
    st_.bank_sp[from] = st_.r[13];
    st_.bank_lr[lr_bank_of(st_.mode)] = st_.r[14];
    if (from == 5 || to == 5) {  // FIQ has its own r8-r12
      uint32_t* save = from == 5 ? st_.fiq_hi : st_.usr_hi;
      const uint32_t* load = from == 5 ? st_.usr_hi : st_.fiq_hi;
      for (int i = 0; i < 5; ++i) {
        save[i] = st_.r[8 + i];
        st_.r[8 + i] = load[i];
      }
    }
    st_.r[13] = st_.bank_sp[to];
    st_.r[14] = st_.bank_lr[lr_bank_of(mode)];
  }
  // What the PMU counts depends on the mode (its filters, Hyp mode): counts up to here in the old.
  const bool pmu = st_.system && mode != st_.mode && st_.pmu.active(st_.cp15.hdcr);
  if (pmu) st_.pmu.sync(pmu_context());
  st_.mode = mode;
  if (pmu) {
    st_.pmu.rebase(pmu_context());
    pmu_changed();
  }
  if (st_.system) update_mmu();  // the regime (and so the translation) may change with the mode
}

uint32_t ArmCore::banked_reg(Mode m, int n) const {
  int b = bank_of(static_cast<uint8_t>(m)), cur = bank_of(st_.mode);
  if (n >= 8 && n <= 12 && (b == 5) != (cur == 5))
    return b == 5 ? st_.fiq_hi[n - 8] : st_.usr_hi[n - 8];
  if (n == 13 && b != cur) return st_.bank_sp[b];
  if (n == 14 && lr_bank_of(static_cast<uint8_t>(m)) != lr_bank_of(st_.mode)) {
    return st_.bank_lr[lr_bank_of(static_cast<uint8_t>(m))];
  }
  return reg(n);
}

uint32_t& ArmCore::user_reg(int n) {
  int cur = bank_of(st_.mode);
  if (n >= 8 && n <= 12 && cur == 5) return st_.usr_hi[n - 8];
  if (n == 13 && cur != 0) return st_.bank_sp[0];
  if (n == 14 && lr_bank_of(st_.mode) != 0) return st_.bank_lr[0];
  return st_.r[n];
}

void ArmCore::set_system_mode(bool on) {
  st_.system = on;
  st_.wfi = false;
  if (on) {
    st_.cp15.sctlr = 0x00c50078;
    st_.cp15.vbar = 0;
    write_cpsr(kA | kI | kF | static_cast<uint32_t>(Mode::Svc), 0xffffffffu);
  } else {
    write_cpsr(static_cast<uint32_t>(Mode::Usr), 0x3df);  // user mode, nothing masked; T kept
  }
  update_mmu();
}

void ArmCore::invalidate_decoded(uint32_t addr, uint32_t len) {
  if (len == 0) return;
  uint64_t first = addr >> PagedMemory::kPageBits;
  uint64_t last = (uint64_t{addr} + len - 1) >> PagedMemory::kPageBits;
  for (uint64_t p = first; p <= last && p < PagedMemory::kPages; ++p) {
    drop_page(static_cast<uint32_t>(p));
  }
}

void ArmCore::return_from_hyp(uint32_t target) {
  hyp_exit_ = false;
  return_to(target, st_.spsr[bank_of(kHyp)]);
  st_.pc = st_.next;  // (return_to leaves the PC to the run loop, outside which this runs)
  update_attention();
}

void ArmCore::exception_return(uint32_t target) { return_to(target, st_.spsr[bank_of(st_.mode)]); }

void ArmCore::irq_entered() {
  if (in_irq_) return;  // (a nested one is part of the first's handling)
  in_irq_ = true;
  irq_return_pc_ = st_.pc;
  irq_from_mode_ = st_.mode;
  for (int c = 0; c < kClasses; ++c) irq_start_[c] = retired(static_cast<InsnClass>(c));
}

void ArmCore::hyp_entered(int cause) {
  in_hyp_span_ = true;
  hyp_cause_ = cause;
  for (int c = 0; c < kClasses; ++c) hyp_start_[c] = retired(static_cast<InsnClass>(c));
}

void ArmCore::return_to(uint32_t target, uint32_t spsr) {
  if (in_hyp_span_ && st_.mode == kHyp && (spsr & 0x1f) != kHyp) {
    in_hyp_span_ = false;  // (the return itself retires after: not counted)
    ++hyp_handled_[hyp_cause_];
    for (int c = 0; c < kClasses; ++c)
      hyp_retired_[hyp_cause_][c] += retired(static_cast<InsnClass>(c)) - hyp_start_[c];
  }
  const uint8_t to_mode = spsr & 0x1f;
  if (in_irq_ && (to_mode == static_cast<uint8_t>(Mode::Usr) ||
                  ((target & ~1u) == (irq_return_pc_ & ~1u) && to_mode == irq_from_mode_))) {
    // (The return itself retires after: not counted.)
    in_irq_ = false;
    ++irqs_handled_;
    for (int c = 0; c < kClasses; ++c)
      irq_retired_[c] += retired(static_cast<InsnClass>(c)) - irq_start_[c];
  }
  // A return to a mode the current one may not enter (Hyp from PL1, PL1 from Hyp is allowed;
  // a reserved mode) is UNPREDICTABLE: the mode is left as it is, as QEMU does.
  uint8_t m = spsr & 0x1f;
  if (!valid_mode(m) || (m == kHyp && st_.mode != kHyp)) spsr = (spsr & ~0x1fu) | st_.mode;
  write_cpsr(spsr, 0xffffffffu);
  st_.next = target & (st_.thumb ? ~1u : ~3u);
}

__attribute__((noinline, cold)) bool ArmCore::service_attention() {
  code_changed_ = false;
  if (halted_ || hyp_exit_ || st_.wfi) return false;
  if (yield_) {
    yield_ = false;
    yielded_ = true;
    update_attention();
    return false;
  }
  if (take_pending_interrupt()) {
    // The entry uses one of run()'s budget: back to run(), which counts it and goes on.
    entered_in_loop_ = true;
    return false;
  }
  update_attention();
  return true;
}

template <typename F>
bool ArmCore::guarded(F&& body) {
  try {
    body();
    return true;
  } catch (const GuestFault& f) {
    exc_.take_fault(f.fetch ? Exception::PrefetchAbort : Exception::DataAbort, f.addr, f.write,
                    false);
  } catch (const AlignmentFault& f) {
    exc_.take_fault(Exception::DataAbort, f.addr, f.write, true);
  } catch (const UndefinedInstruction&) {
    exc_.take_fault(Exception::Undefined, 0, false, false);
  } catch (const MmuAbort& a) {
    exc_.take_mmu_fault(a);
  }
  return false;
}

void ArmCore::set_nzcv(uint32_t v) { st_.nzcv = v >> 28; }

void ArmCore::set_dreg(int n, uint64_t v) {
  st_.s[2 * n] = static_cast<uint32_t>(v);
  st_.s[2 * n + 1] = static_cast<uint32_t>(v >> 32);
}

uint64_t ArmCore::retired() const {
  uint64_t n = 0;
  for (uint64_t c : retired_) n += c;
  return n;
}

Insn ArmCore::decode(uint32_t pc, uint32_t pa) {
  ++decoded_;
  if (!st_.thumb) return decode_a32(mem_.fetch32(pa), pc);
  uint16_t hw1 = mem_.fetch16(pa);
  uint16_t hw2 = 0;
  if ((hw1 >> 11) >= 0x1D) {
    uint32_t pa2 = pa + 2;  // the second halfword may be on the next (virtual) page
    if (mmu_.on() && ((pc + 2) & (PagedMemory::kPageSize - 1)) == 0) {
      pa2 = mmu_.translate(pc + 2, Mmu::kPermX);
    }
    hw2 = mem_.fetch16(pa2);
  }
  return decode_t32(hw1, hw2, pc);
}

void ArmCore::drop_all_decoded() {
  for (std::unique_ptr<DecodedPage>& p : pages_) {
    if (p) dropped_.push_back(std::move(p));  // freed at the next decode (one may be running)
  }
  new_code_generation();
}

void ArmCore::drop_page(uint32_t page) {
  if (!pages_[page]) return;
  dropped_.push_back(std::move(pages_[page]));
  new_code_generation();  // virtual pages may still point at it
}

void ArmCore::peer_code_marked(uint32_t page) {
  mem_.mark_code(page);
  mmu_.protect_code(page);
}

void ArmCore::peer_code_written(uint32_t page) {
  mem_.unmark_code(page);
  drop_page(page);
}

void ArmCore::tlb_flush_shareable() {
  tlb_flush();
  if (cluster_) cluster_->tlb_flush(cluster_index_);
}

void ArmCore::tlb_flush_va_shareable(uint32_t va) {
  tlb_flush_va(va);
  if (cluster_) cluster_->tlb_flush_va(cluster_index_, va);
}

// LDREX/STREX with the cluster's global monitor, by the RAM's host address (the access itself
// has just filled the TLB, or is about to fault). Outside RAM only the local monitor counts.
void ArmCore::exclusive_reserve(uint32_t a, uint8_t sub) {
  const unsigned len = sub == 1 || sub == 2 || sub == 4 ? sub : 8;
  if (const uint8_t* h = exclusive_host(a, len, false))
    cluster_->monitor().reserve(cluster_index_, h, len);
  else
    cluster_->monitor().clear(cluster_index_);
}

bool ArmCore::exclusive_claim(uint32_t a, uint8_t sub) {
  const unsigned len = sub == 1 || sub == 2 || sub == 4 ? sub : 8;
  const uint8_t* h = exclusive_host(a, len, true);
  if (!h) return true;
  return cluster_->monitor().claim(cluster_index_, h, len);
}

const uint8_t* ArmCore::exclusive_host(uint32_t a, unsigned len, bool write) {
  const uint32_t off = a & (PagedMemory::kPageSize - 1);
  if (off > PagedMemory::kPageSize - len) return nullptr;
  uint32_t pa = a;
  if (mmu_.on()) {
    const Mmu::FastTlbEntry& e = mmu_.fast(a >> PagedMemory::kPageBits);
    if (e.read_va == (a >> PagedMemory::kPageBits)) return e.host + off;
    pa = mmu_.translate(a, write ? Mmu::kPermW : Mmu::kPermR);  // a fault is the access's own
  }
  const uint8_t* p = mem_.host_page(pa >> PagedMemory::kPageBits);
  return p ? p + off : nullptr;
}

void ArmCore::update_mmu() {
  ctx_ = (generation_ << 2) | mmu_.update();
  fetch_vpage_ = ~0u;
  update_cache_hooks();
}

void ArmCore::update_cache_hooks() {
  constexpr uint32_t kSctlrC = 1u << 2, kSctlrI = 1u << 12;  // SCTLR and HSCTLR alike
  const uint32_t sctlr = st_.mode == kHyp ? st_.cp15.hsctlr : st_.cp15.sctlr;
  dhook_ = l1_ && st_.system && mmu_.on() && (sctlr & kSctlrC) ? l1_ : nullptr;
  ihook_ = l1_ && st_.system && (sctlr & kSctlrI) ? l1_ : nullptr;
  mmu_.set_data_cache(dhook_);
}

__attribute__((noinline)) void ArmCore::fetch_block(uint32_t pc, const Insn* in, uint32_t len) {
  if (!fetch_page_ || (pc >> PagedMemory::kPageBits) != fetch_vpage_) return;
  uint32_t bytes = 4 * len;
  if (st_.thumb) {
    bytes = 0;
    for (uint32_t i = 0; i < len; ++i) {
      bytes += in->len;
      in += in->len >> 1;
    }
  }
  const uint32_t off = pc & (PagedMemory::kPageSize - 1);
  if (bytes > PagedMemory::kPageSize - off) bytes = PagedMemory::kPageSize - off;
  ihook_->fetch((fetch_page_->pa_page << PagedMemory::kPageBits) | off, bytes);
}

void ArmCore::cache_maintenance(CacheOp op, uint32_t arg) {
  if (!l1_) return;
  const bool by_address = op == CacheOp::IcInvalidateMva || op == CacheOp::DcInvalidateMva ||
                          op == CacheOp::DcCleanMva || op == CacheOp::DcCleanInvalidateMva;
  if (by_address && mmu_.on()) {
    uint32_t pa = 0;
    if (!mmu_.debug_translate(arg, pa)) return;  // nothing mapped there: nothing cached
    arg = pa;
  }
  HostFpScope host_fp(*this);  // a write-back is a bus transaction
  l1_->maintain(op, arg);
}

void ArmCore::new_code_generation() {
  code_changed_ = attention_ = true;  // a basic block running may be on a page that went away
  if (++generation_ >= (1u << 30)) {  // ctx_ would wrap: forget every entry instead
    std::fill(code_map_.begin(), code_map_.end(), CodeMapEntry{});
    generation_ = 1;
  }
  update_mmu();
}

const Insn* ArmCore::current_insn() const {
  const CodeMapEntry& m = code_map_[st_.pc >> PagedMemory::kPageBits];
  if (m.ctx != ctx_) return nullptr;
  const uint32_t off = st_.pc & (PagedMemory::kPageSize - 1);
  return st_.thumb ? &m.page->t32[off >> 1] : &m.page->a32[off >> 2];
}

const Insn& ArmCore::lookup(uint32_t pc) {
  dropped_.clear();  // no instruction is executing now
  CodeMapEntry& m = code_map_[pc >> PagedMemory::kPageBits];
  if (m.ctx != ctx_) {
    uint32_t pa =
        mmu_.on() ? mmu_.translate(pc, Mmu::kPermX) : pc;  // execute permission checked here
    if (!mem_.mapped(pa) && !mem_.has_backend()) {
      if (mmu_.on()) {
        MmuFault f;
        f.kind = MmuFault::External;
        throw MmuAbort(pc, false, true, f);
      }
      throw GuestFault(pc, false, true);
    }
    const uint32_t pa_page = pa >> PagedMemory::kPageBits;
    const uint32_t va_page = pc >> PagedMemory::kPageBits;
    std::unique_ptr<DecodedPage>& owned = pages_[pa_page];
    if (owned && owned->va_page != va_page) {
      // Decoded at another virtual address: its absolute targets are that address's. Every
      // virtual page that runs it looks up again (a new generation).
      dropped_.push_back(std::move(owned));
      new_code_generation();
    }
    if (!owned) {
      owned = std::make_unique<DecodedPage>();
      owned->pa_page = pa_page;
      owned->va_page = va_page;
      mem_.mark_code(pa_page);  // a store to it now drops it (and bumps the generation)
      mmu_.protect_code(pa_page);
      if (cluster_) cluster_->code_marked(cluster_index_, pa_page);  // and a peer's store
    }
    m.page = owned.get();
    m.ctx = ctx_;
  }
  DecodedPage* p = m.page;
  fetch_vpage_ = pc >> PagedMemory::kPageBits;
  fetch_page_ = p;
  uint32_t off = pc & (PagedMemory::kPageSize - 1);
  Insn& slot = st_.thumb ? p->t32[off >> 1] : p->a32[off >> 2];
  if (slot.op == Op::None) {
    Insn in = decode(pc, (p->pa_page << PagedMemory::kPageBits) | off);
    in.fn = executor_for(in);
    // A 32-bit Thumb instruction that ends on the next page: decode it again each time, so that
    // a write to either page is seen (the cache only tracks the page it starts on).
    if (st_.thumb && in.len == 4 && off == PagedMemory::kPageSize - 2) {
      static thread_local Insn scratch;
      scratch = in;
      return scratch;
    }
    slot = in;
  }
  return slot;
}

// While guest code does floating point, the host's floating-point environment is the guest's
// (rounding mode from FPSCR, sticky exception flags = FPSCR's cumulative bits); outside, the
// host's own is back. Entered lazily, by the first VFP data-processing instruction of a run
// (execute_vfp): most runs have none (a kernel's), and switching costs four libm calls, about
// 3 % of a Linux run's time when done for every run.
class ArmCore::GuestFpScope {
 public:
  explicit GuestFpScope(ArmCore& c) : c_(c) {}
  ~GuestFpScope() {
    if (c_.in_guest_fp_) c_.leave_guest_fp();
  }
  GuestFpScope(const GuestFpScope&) = delete;
  GuestFpScope& operator=(const GuestFpScope&) = delete;

 private:
  ArmCore& c_;
};

uint64_t ArmCore::run(uint64_t max) {
  GuestFpScope fp(*this);
  bp_hit_ = false;
  bp_skip_ = true;
  // One pass per synchronous exception taken (system mode; the others are rethrown). The count
  // comes back from the retired-instruction and exception-entry counters, so that the loop
  // keeps its own in a register (an exception could not hand it back).
  const uint64_t start = retired(), entries = exc_.entries();
  for (;;) {
    const uint64_t done = retired() - start + (exc_.entries() - entries);
    if (done >= max) break;
    entered_in_loop_ = false;
    if (guarded([&] { run_loop(max - done); }) && !entered_in_loop_) break;
  }
  return retired() - start;
}

// Whether a basic block ends with this instruction: it may branch (write the PC), change the
// mode, the CPSR's IT, A, I or F bits, the MMU or the exception state, or it is rare enough not to
// be worth proving otherwise. Everything else runs straight on to the next address.
static bool ends_block(const Insn& in) {
  const bool writes_pc = in.rd == 15 || in.ra == 15;
  switch (in.op) {
    case Op::DataProc:
    case Op::Movw:
    case Op::Movt:
    case Op::Mul:
    case Op::MulLong:
    case Op::MulHalf:
    case Op::MulMost:
    case Op::MulDual:
    case Op::Div:
    case Op::Clz:
    case Op::Rev:
    case Op::Extend:
    case Op::BitField:
    case Op::Sat:
    case Op::SatArith:
    case Op::Parallel:
    case Op::Sel:
    case Op::Pkh:
    case Op::Usad8:
      return writes_pc;
    case Op::LoadStore:
      return (in.sub >= kLdr && writes_pc) || ((in.flags & kFlagW) && in.rn == 15);
    case Op::LoadStoreMulti:
      return in.rs != 0 || (in.sub == 1 && (in.imm & 0x8000)) ||
             ((in.flags & kFlagW) && in.rn == 15);
    case Op::Nop:
      return false;
    default:
      return true;
  }
}

// Forms the basic block that starts at `first` (the decoded instruction at `pc`, on the page of
// the last fetch): decodes ahead to its end and records every instruction's distance from it in
// Insn::blk. Returns the block's length.
__attribute__((noinline)) uint32_t ArmCore::form_block(uint32_t pc, const Insn& first) {
  DecodedPage* p = fetch_page_;
  Insn* const slots = st_.thumb ? p->t32 : p->a32;
  const uint32_t shift = st_.thumb ? 1 : 2;
  const uint32_t mask = PagedMemory::kPageSize - 1;
  Insn* const start = &slots[(pc & mask) >> shift];
  // The 32-bit Thumb instruction across a page end is decoded apart each time (see lookup).
  if (&first != start || !mem_.mapped(p->pa_page << PagedMemory::kPageBits)) return 1;
  Insn* walk[256];
  uint32_t n = 0;
  uint32_t a = pc;
  for (;;) {
    Insn& slot = slots[(a & mask) >> shift];
    if (slot.op == Op::None) {
      const uint32_t off = a & mask;
      // Decode ahead, but never a Thumb instruction that may continue on the next page.
      if (st_.thumb && off == PagedMemory::kPageSize - 2) break;
      Insn in = decode(a, (p->pa_page << PagedMemory::kPageBits) | off);
      in.fn = executor_for(in);
      slot = in;
    }
    walk[n++] = &slot;
    a += slot.len;
    if (ends_block(slot) || n == 255 || (a & mask) == 0) break;
  }
  for (uint32_t i = 0; i < n; ++i) walk[i]->blk = static_cast<uint8_t>(n - i);
  return n;
}

// Runs up to `len` instructions of the basic block at `pc`, `in`, one after the other; returns how
// many ran (fewer when an instruction asked for attention). Per state, so that the PC offset and
// the slot stride are constants. Only the block's last instruction may branch, so in A32 (every
// instruction 4 bytes) `st_.next` is set once, before the block, to the address after it; Thumb
// sets it per instruction. An early end (attention) sets it to the instruction after the one that
// ran.
template <bool Thumb>
__attribute__((always_inline)) inline uint32_t ArmCore::run_block(uint32_t pc, const Insn* in,
                                                                  uint32_t len) {
  uint32_t left = len;
  if (!Thumb) st_.next = pc + 4 * len;
  for (;;) {
    const uint32_t size = Thumb ? in->len : 4;
    st_.pc = pc;
    st_.r[15] = pc + (Thumb ? 4 : 8);
    if (Thumb) st_.next = pc + size;
    if (in->cond >= 14 || cond_pass(in->cond)) in->fn(*this, *in);
    count_retired(*in, left);
    if (--left == 0) break;
    if (attention_) {
      st_.next = pc + size;
      break;
    }
    pc += size;
    in += size >> (Thumb ? 1 : 2);
  }
  return len - left;
}

// The hot loop, kept apart from the exception handling around it. Without breakpoints and outside
// IT blocks it runs basic blocks: one fetch check, then the block's instructions one after the
// other (each sets st_.pc, r15 and st_.next as a fault or an exception entry inside it needs them).
// `attention_` is still looked at after every instruction: a device access may raise an interrupt
// (taken at the next instruction, as before) and a store into the block's page drops it.
__attribute__((noinline)) uint64_t ArmCore::run_loop(uint64_t max) {
  uint64_t n = 0;
  uint32_t pc = st_.pc;
  if (breakpoints_.empty()) {
    while (n < max) {
      if (attention_) {
        if (!service_attention()) break;
        pc = st_.pc;
      }
      if (__builtin_expect(st_.itstate != 0, 0)) {
        pc = step_inner(pc);
        ++n;
        continue;
      }
      const Insn* in = &fetch_decoded(pc);
      uint32_t len = in->blk;
      if (__builtin_expect(len == 0, 0)) len = form_block(pc, *in);
      if (__builtin_expect(len > max - n, 0)) len = static_cast<uint32_t>(max - n);
      if (__builtin_expect(ihook_ != nullptr, 0)) fetch_block(pc, in, len);
      st_.in_it = false;
      const uint32_t done =
          st_.thumb ? run_block<true>(pc, in, len) : run_block<false>(pc, in, len);
      n += done;
      pc = st_.next;
      st_.pc = pc;
    }
    return n;
  }
  // With breakpoints: a look at a byte per instruction, the list only on a page that has one.
  while (n < max) {
    if (attention_) {
      if (!service_attention()) break;
      pc = st_.pc;
    }
    if (bp_pages_[pc >> PagedMemory::kPageBits] && !bp_skip_ &&
        std::find(breakpoints_.begin(), breakpoints_.end(), pc) != breakpoints_.end()) {
      bp_hit_ = true;
      break;
    }
    bp_skip_ = false;
    pc = step_inner(pc);
    ++n;
  }
  return n;
}

void ArmCore::step() {
  GuestFpScope fp(*this);
  bp_hit_ = false;
  if (attention_) {
    code_changed_ = false;
    if (halted_ || hyp_exit_ || st_.wfi || take_pending_interrupt()) return;
    update_attention();
  }
  guarded([&] { step_inner(st_.pc); });
}

__attribute__((always_inline)) inline uint32_t ArmCore::step_inner(uint32_t pc) {
  const Insn& in = fetch_decoded(pc);
  if (__builtin_expect(ihook_ != nullptr, 0)) fetch_block(pc, &in, 1);
  st_.r[15] = pc + (st_.thumb ? 4 : 8);
  const uint32_t next = pc + in.len;
  st_.next = next;
  if (st_.itstate == 0) {
    st_.in_it = false;
    if (in.cond >= 14 || cond_pass(in.cond)) in.fn(*this, in);
  } else {
    // Advanced before the instruction runs, so that an SVC or an exception return inside the
    // block sees (and saves, or restores) the state of the instruction after it.
    st_.in_it = true;
    st_.it_at_start = st_.itstate;
    st_.itstate = it_advance(st_.itstate);
    if (cond_pass(st_.it_at_start >> 4)) in.fn(*this, in);
  }
  count_retired(in, 0);
  pc = st_.next;
  st_.pc = pc;
  return pc;
}

void ArmCore::alu_write_pc(uint32_t v) {
  if (st_.thumb) {
    st_.next = v & ~1u;
  } else {
    bx_write_pc(v);
  }
}

void ArmCore::bx_write_pc(uint32_t v) {
  if (v & 1) {
    st_.thumb = true;
    st_.next = v & ~1u;
  } else {
    st_.thumb = false;
    st_.next = v & ~3u;
  }
}

void ArmCore::undefined(const Insn& in) const {
  throw UndefinedInstruction(st_.pc, in.raw, st_.thumb, in.len);
}

void ArmCore::execute(const Insn& in) {
  switch (in.op) {
    case Op::DataProc:
    case Op::LoadStore:
    case Op::Branch:
      executor_for(in)(*this, in);
      return;
    case Op::BranchReg:
      exec_branch_reg(*this, in);
      return;
    case Op::Cbz:
      if ((st_.r[in.rn] == 0) != (in.sub != 0)) st_.next = in.imm;
      return;
    case Op::TableBranch: {
      uint32_t base = st_.r[in.rn], idx = st_.r[in.rm];
      uint32_t off = in.sub ? rd<uint16_t>(base + idx * 2) : rd<uint8_t>(base + idx);
      st_.next = st_.r[15] + off * 2;
      return;
    }
    case Op::LoadStoreMulti:
      load_store_multi(in);
      return;
    case Op::Movw:
      write_reg(in.rd, in.imm);
      return;
    case Op::Movt:
      write_reg(in.rd, (st_.r[in.rd] & 0xffff) | (in.imm << 16));
      return;
    case Op::It:
      st_.itstate = static_cast<uint8_t>(in.imm);
      return;
    case Op::Nop:
      return;
    case Op::Mul:
    case Op::MulLong:
    case Op::MulHalf:
    case Op::MulMost:
    case Op::MulDual:
    case Op::Div:
      multiply(in);
      return;
    case Op::LoadEx: {
      uint32_t a = st_.r[in.rn] + in.imm;
      check_aligned(a, in.sub, in.op == Op::StoreEx);
      switch (in.sub) {
        case 1:
          st_.r[in.rd] = rd<uint8_t>(a);
          break;
        case 2:
          st_.r[in.rd] = rd<uint16_t>(a);
          break;
        case 4:
          st_.r[in.rd] = rd<uint32_t>(a);
          break;
        default:
          st_.r[in.rd] = rd<uint32_t>(a);
          st_.r[in.ra] = rd<uint32_t>(a + 4);
          break;
      }
      st_.monitor = true;
      st_.monitor_addr = a;
      if (cluster_) exclusive_reserve(a, in.sub);
      return;
    }
    case Op::StoreEx: {
      uint32_t a = st_.r[in.rn] + in.imm;
      // An address the monitor does not hold fails without an access, so without an alignment
      // fault either (QEMU 7.2 compares the address first).
      if (st_.monitor && st_.monitor_addr == a && (!cluster_ || exclusive_claim(a, in.sub))) {
        check_aligned(a, in.sub, in.op == Op::StoreEx);
        switch (in.sub) {
          case 1:
            wr<uint8_t>(a, static_cast<uint8_t>(st_.r[in.rm]));
            break;
          case 2:
            wr<uint16_t>(a, static_cast<uint16_t>(st_.r[in.rm]));
            break;
          case 4:
            wr<uint32_t>(a, st_.r[in.rm]);
            break;
          default:
            wr<uint32_t>(a, st_.r[in.rm]);
            wr<uint32_t>(a + 4, st_.r[in.ra]);
            break;
        }
        st_.r[in.rd] = 0;
      } else {
        st_.r[in.rd] = 1;
        if (cluster_) cluster_->monitor().clear(cluster_index_);
      }
      st_.monitor = false;
      return;
    }
    case Op::Clrex:
      st_.monitor = false;
      if (cluster_) cluster_->monitor().clear(cluster_index_);
      return;
    case Op::Mrs:
      if (in.ra) {  // SPSR: undefined in User mode; System mode's (UNPREDICTABLE) is a
        // register of its own, as in QEMU 7.2
        if (st_.mode == static_cast<uint8_t>(Mode::Usr)) undefined(in);
        st_.r[in.rd] = spsr();
      } else {
        st_.r[in.rd] = cpsr() & ~0x0700FC20u;  // the execution-state bits (IT, J, T) read as zero
      }
      return;
    case Op::Msr:
      msr(in);
      return;
    case Op::Mrc: {
      const uint8_t mode = st_.mode;
      const uint32_t v = in.sub == 14 ? cp15_.cp14_access(in, true, 0)
                                      : static_cast<uint32_t>(cp15_.access(in, false, true, 0));
      // A read trapped to Hyp mode writes no register (the hypervisor emulates it).
      if (st_.mode == mode) write_reg(in.rd, v);
      return;
    }
    case Op::Mcr:
      if (in.sub == 14)
        cp15_.cp14_access(in, false, st_.r[in.rd]);
      else
        cp15_.access(in, false, false, st_.r[in.rd]);
      return;
    case Op::Mrrc: {
      const uint8_t mode = st_.mode;
      uint64_t v = cp15_.access(in, true, true, 0);
      if (st_.mode != mode) return;  // trapped to Hyp mode: no register written
      st_.r[in.rd] = static_cast<uint32_t>(v);
      st_.r[in.ra] = static_cast<uint32_t>(v >> 32);
      return;
    }
    case Op::Mcrr:
      cp15_.access(in, true, false, (uint64_t{st_.r[in.ra]} << 32) | st_.r[in.rd]);
      return;
    case Op::Hvc:
      hvc(in);
      return;
    case Op::Smc:
      smc(in);
      return;
    case Op::Eret:
      eret(in);
      return;
    case Op::MrsBanked:
      mrs_banked(in);
      return;
    case Op::MsrBanked:
      msr_banked(in);
      return;
    case Op::Bkpt:
      bkpt(in);
      return;
    case Op::Srs:
      srs(in);
      return;
    case Op::Rfe:
      rfe(in);
      return;
    case Op::Svc:
      if (st_.system) {
        if (st_.mode == kHyp) {  // an SVC in Hyp mode stays in Hyp mode
          exc_.enter_hyp_with_syndrome(hsr_ec::kSvc, in.imm & 0xffff, in.len == 4, 0x08, st_.next);
          return;
        }
        take_exception(Exception::Svc, st_.next, cpsr());
        return;
      }
      if (!svc_) undefined(in);
      svc_->svc(*this, in.imm);
      return;
    case Op::ExcReturn: {
      // Undefined in User mode; in System mode (UNPREDICTABLE) a return with System mode's
      // SPSR, as QEMU 7.2 does.
      if (st_.mode == static_cast<uint8_t>(Mode::Usr)) undefined(in);
      if (st_.mode == kHyp) {
        // T32 ERET is SUBS PC, LR, #0: in Hyp mode it returns to ELR_hyp. Every other exception
        // return by an ALU instruction is undefined in Hyp mode (ALUExceptionReturn; QEMU 7.2).
        if (!st_.thumb || in.imm != 0) undefined(in);
        eret(in);
        return;
      }
      Insn alu = in;
      alu.op = Op::DataProc;
      alu.rd = 16;
      alu.flags &= static_cast<uint8_t>(~(kFlagS | kFlagSNotIt));
      executor_for(alu)(*this, alu);
      exception_return(st_.r[16]);
      return;
    }
    case Op::Cps:
      cps(in);
      return;
    case Op::Wfi:
      wfi(in);
      return;
    case Op::Vfp:
      execute_vfp(in);
      return;
    case Op::Undefined:
    case Op::None:
      undefined(in);
    default:
      media(in);
      return;
  }
}

template <uint8_t Sub, uint8_t Kind, uint8_t Flags>
void ArmCore::exec_dp(ArmCore& c, const Insn& in) {
  uint32_t carry = c.flag_c();
  uint32_t b;
  if constexpr (Kind == kOpImm) {
    b = in.imm;
    if (in.imm_carry != 2) carry = in.imm_carry;
  } else if constexpr (Kind == kOpRegImm) {
    b = shift_c(c.st_.r[in.rm], in.shift_type, in.shift_amt, carry);
  } else if constexpr (Kind == kRegPlain) {  // LSL #0: the register itself, carry unchanged
    b = c.st_.r[in.rm];
  } else if constexpr (Kind == kRegImmShift + kLsl) {  // LSL #1-31: no case for 32 or more
    b = shift_c(c.st_.r[in.rm], kLsl, in.shift_amt & 31u, carry);
  } else if constexpr (Kind >= kRegImmShift) {  // the shift type known: no switch
    b = shift_c(c.st_.r[in.rm], Kind - kRegImmShift, in.shift_amt, carry);
  } else {
    b = shift_c(c.st_.r[in.rm], in.shift_type, c.st_.r[in.rs] & 0xff, carry);
  }
  uint32_t a = c.st_.r[in.rn];
  bool s;
  if constexpr (Flags == kDpFlagsNever)
    s = false;
  else if constexpr (Flags == kDpFlagsAlways)
    s = true;
  else if constexpr (Flags == kDpFlagsOutsideIt)
    s = !c.st_.in_it;
  else
    s = (in.flags & kFlagS) || ((in.flags & kFlagSNotIt) && !c.st_.in_it);
  // Not the PC (decided when decoded): the result goes straight to the register.
  const auto write = [&](uint32_t res) {
    if constexpr (Flags == kDpFlagsGeneral)
      c.write_reg(in.rd, res);
    else
      c.st_.r[in.rd] = res;
  };
  constexpr bool kLogical = Sub == kAnd || Sub == kTst || Sub == kEor || Sub == kTeq ||
                            Sub == kOrr || Sub == kOrn || Sub == kMov || Sub == kBic || Sub == kMvn;
  constexpr bool kNoWrite = Sub == kTst || Sub == kTeq || Sub == kCmp || Sub == kCmn;
  if constexpr (kLogical) {
    uint32_t res;
    if constexpr (Sub == kAnd || Sub == kTst)
      res = a & b;
    else if constexpr (Sub == kEor || Sub == kTeq)
      res = a ^ b;
    else if constexpr (Sub == kOrr)
      res = a | b;
    else if constexpr (Sub == kOrn)
      res = a | ~b;
    else if constexpr (Sub == kMov)
      res = b;
    else if constexpr (Sub == kBic)
      res = a & ~b;
    else
      res = ~b;
    if (s) c.set_nzc(res, carry);
    if constexpr (!kNoWrite) write(res);
  } else {
    uint32_t x, y, cin;  // an addition: x + y + cin
    if constexpr (Sub == kSub || Sub == kCmp)
      x = a, y = ~b, cin = 1;
    else if constexpr (Sub == kRsb)
      x = b, y = ~a, cin = 1;
    else if constexpr (Sub == kAdd || Sub == kCmn)
      x = a, y = b, cin = 0;
    else if constexpr (Sub == kAdc)
      x = a, y = b, cin = c.flag_c();
    else if constexpr (Sub == kSbc)
      x = a, y = ~b, cin = c.flag_c();
    else
      x = b, y = ~a, cin = c.flag_c();  // RSC
    uint64_t u = uint64_t{x} + y + cin;
    uint32_t res = static_cast<uint32_t>(u);
    if (s) c.set_nzcv_bits(res, static_cast<uint32_t>(u >> 32), ((x ^ res) & (y ^ res)) >> 31);
    if constexpr (!kNoWrite) write(res);
  }
}

template <uint8_t Sub, bool RegOff, uint8_t Form, bool Cached>
void ArmCore::exec_ls(ArmCore& c, const Insn& in) {
  // The fast path, without a call (so without the register saves a call needs): one access to
  // host memory, found in the software TLB (or, with the MMU off, in the guest memory's pages).
  // Everything else (a TLB miss, a permission to check, a device, a page crossing, a code page,
  // the double forms) is exec_ls_slow, which starts again from the beginning.
  if constexpr (Sub != kStrd && Sub != kLdrd) {
    constexpr bool kGeneral = Form == kLsGeneral;
    uint32_t base = c.st_.r[in.rn];
    if (kGeneral && in.rn == 15) base &= ~3u;
    uint32_t off = in.imm;
    if constexpr (RegOff) {
      uint32_t carry = c.flag_c();
      off = shift_c(c.st_.r[in.rm], in.shift_type, in.shift_amt, carry);
    }
    const bool add = kGeneral ? (in.flags & kFlagU) != 0 : Form != kLsOffsetSub;
    const bool pre = kGeneral ? (in.flags & kFlagP) != 0 : Form != kLsPostAdd;
    const bool wback =
        kGeneral ? (in.flags & kFlagW) != 0 : Form == kLsPostAdd || Form == kLsPreAdd;
    const uint32_t offaddr = add ? base + off : base - off;
    const uint32_t a = pre ? offaddr : base;
    constexpr bool kStore = Sub < kLdr;
    using T = std::conditional_t<
        Sub == kStr || Sub == kLdr, uint32_t,
        std::conditional_t<Sub == kStrh || Sub == kLdrh || Sub == kLdrsh, uint16_t, uint8_t>>;
    if (uint8_t* h = c.host_address<T, kStore>(a)) {
      if constexpr (Cached) {
        if (c.dhook_) c.dhook_->data(h, sizeof(T), kStore);
      }
      if constexpr (kStore) {
        const T v = static_cast<T>(c.st_.r[in.rd]);
        std::memcpy(h, &v, sizeof(T));
        if (wback) c.st_.r[in.rn] = offaddr;
      } else {
        T t;
        std::memcpy(&t, h, sizeof(T));
        uint32_t v = t;
        if constexpr (Sub == kLdrsb)
          v = static_cast<uint32_t>(static_cast<int8_t>(t));
        else if constexpr (Sub == kLdrsh)
          v = static_cast<uint32_t>(static_cast<int16_t>(t));
        if (wback) c.st_.r[in.rn] = offaddr;
        if (kGeneral && in.rd == 15)
          c.bx_write_pc(v);
        else
          c.st_.r[in.rd] = v;
      }
      return;
    }
  }
  exec_ls_slow<Sub, RegOff>(c, in);
}

template <uint8_t Sub, bool RegOff>
__attribute__((noinline)) void ArmCore::exec_ls_slow(ArmCore& c, const Insn& in) {
  uint32_t base = c.st_.r[in.rn];
  if (in.rn == 15) base &= ~3u;
  uint32_t off = in.imm;
  if constexpr (RegOff) {
    uint32_t carry = c.flag_c();
    off = shift_c(c.st_.r[in.rm], in.shift_type, in.shift_amt, carry);
  }
  uint32_t offaddr = (in.flags & kFlagU) ? base + off : base - off;
  uint32_t a = (in.flags & kFlagP) ? offaddr : base;
  if constexpr (Sub == kStrd || Sub == kLdrd) {
    check_aligned(a, 4, Sub == kStrd);
  } else if (c.st_.cp15.sctlr & kSctlrA) {  // SCTLR.A: every access aligned to its size
    constexpr uint32_t kSize = Sub == kStr || Sub == kLdr                      ? 4
                               : Sub == kStrh || Sub == kLdrh || Sub == kLdrsh ? 2
                                                                               : 1;
    check_aligned(a, kSize, Sub < kLdr);
  }
  uint32_t v = 0, v2 = 0;
  if constexpr (Sub == kStr)
    c.wr<uint32_t>(a, c.st_.r[in.rd]);
  else if constexpr (Sub == kStrb)
    c.wr<uint8_t>(a, static_cast<uint8_t>(c.st_.r[in.rd]));
  else if constexpr (Sub == kStrh)
    c.wr<uint16_t>(a, static_cast<uint16_t>(c.st_.r[in.rd]));
  else if constexpr (Sub == kStrd) {
    c.wr<uint32_t>(a, c.st_.r[in.rd]);
    c.wr<uint32_t>(a + 4, c.st_.r[in.ra]);
  } else if constexpr (Sub == kLdr)
    v = c.rd<uint32_t>(a);
  else if constexpr (Sub == kLdrb)
    v = c.rd<uint8_t>(a);
  else if constexpr (Sub == kLdrh)
    v = c.rd<uint16_t>(a);
  else if constexpr (Sub == kLdrsb)
    v = static_cast<uint32_t>(static_cast<int8_t>(c.rd<uint8_t>(a)));
  else if constexpr (Sub == kLdrsh)
    v = static_cast<uint32_t>(static_cast<int16_t>(c.rd<uint16_t>(a)));
  else {
    v = c.rd<uint32_t>(a);
    v2 = c.rd<uint32_t>(a + 4);
  }
  if (in.flags & kFlagW) c.st_.r[in.rn] = offaddr;
  if constexpr (Sub == kLdrd) {
    c.st_.r[in.rd] = v;
    c.st_.r[in.ra] = v2;
  } else if constexpr (Sub >= kLdr) {
    if (in.rd == 15)
      c.bx_write_pc(v);
    else
      c.st_.r[in.rd] = v;
  }
}

template <bool Acc>
void ArmCore::exec_mul(ArmCore& c, const Insn& in) {
  uint32_t p = c.st_.r[in.rn] * c.st_.r[in.rm];
  if constexpr (Acc) p = in.sub ? c.st_.r[in.ra] - p : c.st_.r[in.ra] + p;
  c.st_.r[in.rd] = p;
}

template <uint8_t Sub>
void ArmCore::exec_mul_long(ArmCore& c, const Insn& in) {
  const uint32_t a = c.st_.r[in.rn], b = c.st_.r[in.rm];
  uint64_t res;
  if constexpr (Sub == 0 || Sub == 1)
    res = uint64_t{a} * b;
  else
    res = static_cast<uint64_t>(int64_t{static_cast<int32_t>(a)} * static_cast<int32_t>(b));
  if constexpr (Sub == 1 || Sub == 3) res += (uint64_t{c.st_.r[in.ra]} << 32) | c.st_.r[in.rd];
  c.st_.r[in.rd] = static_cast<uint32_t>(res);
  c.st_.r[in.ra] = static_cast<uint32_t>(res >> 32);
}

void ArmCore::exec_branch(ArmCore& c, const Insn& in) {
  if (in.sub) c.st_.r[14] = c.st_.thumb ? c.st_.next | 1 : c.st_.next;
  if (in.sub == 2) c.st_.thumb = !c.st_.thumb;
  c.st_.next = in.imm & ~1u;
}

void ArmCore::exec_branch_reg(ArmCore& c, const Insn& in) {
  uint32_t target = c.st_.r[in.rm];
  if (in.sub) c.st_.r[14] = c.st_.thumb ? c.st_.next | 1 : c.st_.next;
  c.bx_write_pc(target);
}

template <uint8_t Kind, uint8_t Flags, size_t... S>
constexpr std::array<ExecFn, sizeof...(S)> ArmCore::dp_table(std::index_sequence<S...>) {
  return {&ArmCore::exec_dp<static_cast<uint8_t>(S), Kind, Flags>...};
}

template <uint8_t Sub>
ExecFn ArmCore::ls_executor(bool reg, uint8_t form, bool cached) {
  static constexpr ExecFn kImm[] = {
      &exec_ls<Sub, false, kLsGeneral>, &exec_ls<Sub, false, kLsOffsetAdd>,
      &exec_ls<Sub, false, kLsOffsetSub>, &exec_ls<Sub, false, kLsPreAdd>,
      &exec_ls<Sub, false, kLsPostAdd>};
  static constexpr ExecFn kReg[] = {
      &exec_ls<Sub, true, kLsGeneral>, &exec_ls<Sub, true, kLsOffsetAdd>,
      &exec_ls<Sub, true, kLsOffsetSub>, &exec_ls<Sub, true, kLsPreAdd>,
      &exec_ls<Sub, true, kLsPostAdd>};
  static constexpr ExecFn kImmCached[] = {
      &exec_ls<Sub, false, kLsGeneral, true>, &exec_ls<Sub, false, kLsOffsetAdd, true>,
      &exec_ls<Sub, false, kLsOffsetSub, true>, &exec_ls<Sub, false, kLsPreAdd, true>,
      &exec_ls<Sub, false, kLsPostAdd, true>};
  static constexpr ExecFn kRegCached[] = {
      &exec_ls<Sub, true, kLsGeneral, true>, &exec_ls<Sub, true, kLsOffsetAdd, true>,
      &exec_ls<Sub, true, kLsOffsetSub, true>, &exec_ls<Sub, true, kLsPreAdd, true>,
      &exec_ls<Sub, true, kLsPostAdd, true>};
  if (cached) return reg ? kRegCached[form] : kImmCached[form];
  return reg ? kReg[form] : kImm[form];
}

template <uint8_t Flags>
ExecFn ArmCore::dp_executor(const Insn& in) {
  using Ops = std::make_index_sequence<kOrn + 1>;
  static constexpr auto kImm = dp_table<kOpImm, Flags>(Ops());
  static constexpr auto kRegImm = dp_table<kOpRegImm, Flags>(Ops());
  static constexpr auto kRegReg = dp_table<kOpRegReg, Flags>(Ops());
  static constexpr std::array<std::array<ExecFn, kOrn + 1>, kRrx + 1> kRegShift = {
      dp_table<kRegImmShift + kLsl, Flags>(Ops()), dp_table<kRegImmShift + kLsr, Flags>(Ops()),
      dp_table<kRegImmShift + kAsr, Flags>(Ops()), dp_table<kRegImmShift + kRor, Flags>(Ops()),
      dp_table<kRegImmShift + kRrx, Flags>(Ops())};
  static constexpr auto kReg = dp_table<kRegPlain, Flags>(Ops());
  if (in.opnd == kOpImm) return kImm[in.sub];
  if (in.opnd == kOpRegImm && in.shift_type == kLsl && in.shift_amt == 0) return kReg[in.sub];
  if (in.opnd == kOpRegImm)
    return in.shift_type <= kRrx ? kRegShift[in.shift_type][in.sub] : kRegImm[in.sub];
  return kRegReg[in.sub];
}

ExecFn ArmCore::executor_for(const Insn& in) const {
  switch (in.op) {
    case Op::DataProc: {
      // Whether it sets the flags and whether it writes the PC are known now: the common forms
      // get an executor without those checks.
      const bool writes_pc =
          in.rd == 15 && in.sub != kTst && in.sub != kTeq && in.sub != kCmp && in.sub != kCmn;
      if (writes_pc) return dp_executor<kDpFlagsGeneral>(in);
      if (in.flags & kFlagS) return dp_executor<kDpFlagsAlways>(in);
      if (in.flags & kFlagSNotIt) return dp_executor<kDpFlagsOutsideIt>(in);
      return dp_executor<kDpFlagsNever>(in);
    }
    case Op::LoadStore: {
      if (in.rs) return &exec_ls_unprivileged;
      // The addressing mode is known now: the common ones get an executor without its checks
      // (neither the base nor a loaded register is the PC).
      const bool reg = in.flags & kFlagRegOff;
      // SCTLR.A: the slow executors, which check the alignment (drop_all_decoded when it
      // changes), so that the fast ones never look at it.
      if (st_.cp15.sctlr & kSctlrA) {
        switch (in.sub) {
          case kStr:
            return reg ? &exec_ls_slow<kStr, true> : &exec_ls_slow<kStr, false>;
          case kStrb:
            return reg ? &exec_ls_slow<kStrb, true> : &exec_ls_slow<kStrb, false>;
          case kStrh:
            return reg ? &exec_ls_slow<kStrh, true> : &exec_ls_slow<kStrh, false>;
          case kLdr:
            return reg ? &exec_ls_slow<kLdr, true> : &exec_ls_slow<kLdr, false>;
          case kLdrb:
            return reg ? &exec_ls_slow<kLdrb, true> : &exec_ls_slow<kLdrb, false>;
          case kLdrh:
            return reg ? &exec_ls_slow<kLdrh, true> : &exec_ls_slow<kLdrh, false>;
          case kLdrsb:
            return reg ? &exec_ls_slow<kLdrsb, true> : &exec_ls_slow<kLdrsb, false>;
          case kLdrsh:
            return reg ? &exec_ls_slow<kLdrsh, true> : &exec_ls_slow<kLdrsh, false>;
          default:
            break;
        }
      }
      const bool p = in.flags & kFlagP, u = in.flags & kFlagU, w = in.flags & kFlagW;
      uint8_t form = kLsGeneral;
      if (in.rn != 15 && (in.sub < kLdr || in.rd != 15) && in.sub != kStrd && in.sub != kLdrd) {
        if (p && !w)
          form = u ? kLsOffsetAdd : kLsOffsetSub;
        else if (u && w)
          form = p ? kLsPreAdd : kLsPostAdd;
      }
      switch (in.sub) {
        case kStr:
          return ls_executor<kStr>(reg, form, l1_ != nullptr);
        case kStrb:
          return ls_executor<kStrb>(reg, form, l1_ != nullptr);
        case kStrh:
          return ls_executor<kStrh>(reg, form, l1_ != nullptr);
        case kStrd:
          return reg ? &exec_ls<kStrd, true, kLsGeneral> : &exec_ls<kStrd, false, kLsGeneral>;
        case kLdr:
          return ls_executor<kLdr>(reg, form, l1_ != nullptr);
        case kLdrb:
          return ls_executor<kLdrb>(reg, form, l1_ != nullptr);
        case kLdrh:
          return ls_executor<kLdrh>(reg, form, l1_ != nullptr);
        case kLdrsb:
          return ls_executor<kLdrsb>(reg, form, l1_ != nullptr);
        case kLdrsh:
          return ls_executor<kLdrsh>(reg, form, l1_ != nullptr);
        default:
          return reg ? &exec_ls<kLdrd, true, kLsGeneral> : &exec_ls<kLdrd, false, kLsGeneral>;
      }
    }
    case Op::Branch:
      return &exec_branch;
    case Op::BranchReg:
      return &exec_branch_reg;
    case Op::LoadStoreMulti:
      return in.rs ? &exec_other : &exec_multi;  // the S-bit forms are rare
    case Op::Mul:
      if (in.flags & (kFlagS | kFlagSNotIt)) return &exec_multiply;
      return in.ra == 15 ? &exec_mul<false> : &exec_mul<true>;
    case Op::MulLong: {
      static constexpr ExecFn kLong[] = {&exec_mul_long<0>, &exec_mul_long<1>, &exec_mul_long<2>,
                                         &exec_mul_long<3>};
      if ((in.flags & (kFlagS | kFlagSNotIt)) || in.sub > 3) return &exec_multiply;
      return kLong[in.sub];
    }
    case Op::MulHalf:
    case Op::MulMost:
    case Op::MulDual:
    case Op::Div:
      return &exec_multiply;
    case Op::Movw:
      return &exec_movw;
    case Op::Clz:
    case Op::Rev:
    case Op::Extend:
    case Op::BitField:
      return &exec_media;
    default:
      return &exec_other;
  }
}

void ArmCore::msr(const Insn& in) {
  uint32_t v = in.opnd == kOpImm ? in.imm : st_.r[in.rm];
  uint32_t mask = ((in.sub & 8) ? 0xff000000u : 0u) | ((in.sub & 4) ? 0x00ff0000u : 0u) |
                  ((in.sub & 2) ? 0x0000ff00u : 0u) | ((in.sub & 1) ? 0x000000ffu : 0u);
  if (in.ra) {  // SPSR: every bit of the fields written (System mode's as MRS reads it)
    int b = bank_of(st_.mode);
    if (st_.mode == static_cast<uint8_t>(Mode::Usr)) undefined(in);
    st_.spsr[b] = (st_.spsr[b] & ~mask) | (v & mask);
    return;
  }
  // User mode writes the APSR (N Z C V Q, GE); privileged modes also E, A, I, F and the mode.
  // The execution-state bits (IT, J, T) are never written by MSR.
  mask &= privileged() ? 0xf80f03dfu : 0xf80f0000u;
  // No entry to Hyp mode, nor from it to another, by MSR (UNPREDICTABLE: the mode is kept).
  if ((mask & 0x1f) && ((v & 0x1f) == kHyp) != (st_.mode == kHyp)) mask &= ~0x1fu;
  write_cpsr(v, mask);
}

void ArmCore::cps(const Insn& in) {
  if (!privileged()) return;  // a NOP in user mode
  uint32_t v = cpsr();
  if (in.sub & 2) v &= ~(in.imm & 0x1c0u);
  if (in.sub & 4) v |= in.imm & 0x1c0u;
  uint32_t mask = 0x1df;
  if (in.sub & 1) v = (v & ~0x1fu) | (in.imm & 0x1fu);
  // As MSR: CPS neither enters nor leaves Hyp mode (UNPREDICTABLE: the mode is kept).
  if (((v & 0x1f) == kHyp) != (st_.mode == kHyp)) mask &= ~0x1fu;
  write_cpsr(v, mask);
}

namespace {
// The lowest address an LDM/STM of `n` registers touches (IA, IB, DA, DB from the U and P bits).
uint32_t multi_start_address(const Insn& in, uint32_t base, uint32_t n) {
  if (in.flags & kFlagU) return (in.flags & kFlagP) ? base + 4 : base;
  return (in.flags & kFlagP) ? base - 4 * n : base - 4 * n + 4;
}

// The number of registers in a 16-bit list (inline: without -mpopcnt, __builtin_popcount is a
// library call).
uint32_t register_count(uint32_t list) {
  uint32_t v = list - ((list >> 1) & 0x5555u);
  v = (v & 0x3333u) + ((v >> 2) & 0x3333u);
  v = (v + (v >> 4)) & 0x0f0fu;
  return (v + (v >> 8)) & 0x1fu;
}
}  // namespace

void ArmCore::load_store_multi_user(const Insn& in) {
  // Undefined in User mode (UNPREDICTABLE) and in Hyp mode (UNDEFINED; QEMU 7.2 runs it there);
  // in System mode (UNPREDICTABLE too) the user registers are its own and an exception return
  // uses its SPSR, as in QEMU 7.2.
  if (st_.mode == static_cast<uint8_t>(Mode::Usr) || st_.mode == kHyp) undefined(in);
  uint32_t list = in.imm;
  uint32_t n = register_count(list);
  uint32_t base = st_.r[in.rn];
  uint32_t a = multi_start_address(in, base, n);
  check_aligned(a, 4, in.sub == 0);
  if (in.sub == 0) {  // STM^: the user-mode registers
    for (int i = 0; i < 16; ++i) {
      if (list & (1u << i)) {
        wr<uint32_t>(a, user_reg(i));
        a += 4;
      }
    }
    return;
  }
  uint32_t vals[16];
  for (int i = 0; i < 16; ++i) {
    if (list & (1u << i)) {
      vals[i] = rd<uint32_t>(a);
      a += 4;
    }
  }
  if (!(list & 0x8000)) {  // LDM^ without the PC: the user-mode registers
    for (int i = 0; i < 15; ++i) {
      if (list & (1u << i)) user_reg(i) = vals[i];
    }
    return;
  }
  // LDM with the PC: the current mode's registers, then CPSR = SPSR (exception return).
  if (in.flags & kFlagW) st_.r[in.rn] = (in.flags & kFlagU) ? base + 4 * n : base - 4 * n;
  for (int i = 0; i < 15; ++i) {
    if (list & (1u << i)) st_.r[i] = vals[i];
  }
  exception_return(vals[15]);
}

void ArmCore::load_store_multi(const Insn& in) {
  if (in.rs) {
    load_store_multi_user(in);
    return;
  }
  uint32_t list = in.imm;
  uint32_t n = register_count(list);
  uint32_t base = st_.r[in.rn];
  uint32_t a = multi_start_address(in, base, n);
  uint32_t wb = (in.flags & kFlagU) ? base + 4 * n : base - 4 * n;
  check_aligned(a, 4, in.sub == 0);
  // The fast path: the registers' words on one page of host memory (as rd and wr would find it).
  if ((a & (PagedMemory::kPageSize - 1)) + 4 * n <= PagedMemory::kPageSize) {
    uint8_t* h = in.sub == 0 ? host_address<uint32_t, true>(a) : host_address<uint32_t, false>(a);
    if (h) {
      if (__builtin_expect(dhook_ != nullptr, 0)) dhook_->data(h, 4 * n, in.sub == 0);
      // Over the list's set bits (lowest first), not all 16: fewer branches, and predictable.
      if (in.sub == 0) {
        for (uint32_t rest = list; rest; rest &= rest - 1) {
          std::memcpy(h, &st_.r[__builtin_ctz(rest)], 4);
          h += 4;
        }
        if (in.flags & kFlagW) st_.r[in.rn] = wb;
        return;
      }
      uint32_t pc_value = 0;
      if (list & 0x8000) std::memcpy(&pc_value, h + 4 * (n - 1), 4);
      if (in.flags & kFlagW) st_.r[in.rn] = wb;
      for (uint32_t rest = list & 0x7fff; rest; rest &= rest - 1) {
        std::memcpy(&st_.r[__builtin_ctz(rest)], h, 4);
        h += 4;
      }
      if (list & 0x8000) bx_write_pc(pc_value);
      return;
    }
  }
  if (in.sub == 0) {
    for (int i = 0; i < 16; ++i) {
      if (list & (1u << i)) {
        wr<uint32_t>(a, st_.r[i]);
        a += 4;
      }
    }
    if (in.flags & kFlagW) st_.r[in.rn] = wb;
    return;
  }
  uint32_t vals[16];
  for (int i = 0; i < 16; ++i) {
    if (list & (1u << i)) {
      vals[i] = rd<uint32_t>(a);
      a += 4;
    }
  }
  if (in.flags & kFlagW) st_.r[in.rn] = wb;
  for (int i = 0; i < 15; ++i) {
    if (list & (1u << i)) st_.r[i] = vals[i];
  }
  if (list & 0x8000) bx_write_pc(vals[15]);
}

void ArmCore::multiply(const Insn& in) {
  uint32_t a = st_.r[in.rn], b = st_.r[in.rm];
  bool s = (in.flags & kFlagS) || ((in.flags & kFlagSNotIt) && !st_.in_it);
  switch (in.op) {
    case Op::Mul: {
      uint32_t p = a * b;
      if (in.ra != 15) p = in.sub ? st_.r[in.ra] - p : st_.r[in.ra] + p;
      st_.r[in.rd] = p;
      if (s) set_nz(p);
      return;
    }
    case Op::MulLong: {
      uint64_t acc = (uint64_t{st_.r[in.ra]} << 32) | st_.r[in.rd];
      uint64_t res;
      uint64_t sprod =
          static_cast<uint64_t>(int64_t{static_cast<int32_t>(a)} * static_cast<int32_t>(b));
      switch (in.sub) {
        case 0:
          res = uint64_t{a} * b;
          break;
        case 1:
          res = uint64_t{a} * b + acc;
          break;
        case 2:
          res = sprod;
          break;
        case 3:
          res = sprod + acc;
          break;
        default:
          res = uint64_t{a} * b + st_.r[in.rd] + st_.r[in.ra];
          break;  // UMAAL
      }
      st_.r[in.rd] = static_cast<uint32_t>(res);
      st_.r[in.ra] = static_cast<uint32_t>(res >> 32);
      if (s) {
        st_.nzcv =
            (st_.nzcv & 3u) | (static_cast<uint32_t>(res >> 63) << 3) | (uint32_t{res == 0} << 2);
      }
      return;
    }
    case Op::MulHalf: {
      int32_t x = (in.shift_type & 1) ? static_cast<int32_t>(a) >> 16 : sx16(a);
      int32_t y = (in.shift_type & 2) ? static_cast<int32_t>(b) >> 16 : sx16(b);
      if (in.sub == 0 || in.sub == 1) {
        int64_t p = in.sub == 0 ? int64_t{x} * y : (int64_t{static_cast<int32_t>(a)} * y) >> 16;
        if (in.ra != 15) {
          p += static_cast<int32_t>(st_.r[in.ra]);
          if (p != static_cast<int32_t>(p)) st_.q = 1;
        }
        st_.r[in.rd] = static_cast<uint32_t>(p);
        return;
      }
      uint64_t acc = (uint64_t{st_.r[in.ra]} << 32) | st_.r[in.rd];
      uint64_t res = acc + static_cast<uint64_t>(int64_t{x} * y);
      st_.r[in.rd] = static_cast<uint32_t>(res);
      st_.r[in.ra] = static_cast<uint32_t>(res >> 32);
      return;
    }
    case Op::MulMost: {
      // Modulo 2^64, as the architecture keeps bits 63:32 only: (Ra << 32) +/- the product
      // overflows int64_t (undefined behaviour, found by UBSan) for e.g. Ra = 0x7fffffff.
      int64_t prod = int64_t{static_cast<int32_t>(a)} * static_cast<int32_t>(b);
      uint64_t p = static_cast<uint64_t>(prod);
      uint64_t acc = in.ra == 15 ? 0 : uint64_t{st_.r[in.ra]} << 32;
      uint64_t res = in.sub ? acc - p : acc + p;
      if (in.shift_type) res += 0x80000000u;
      st_.r[in.rd] = static_cast<uint32_t>(res >> 32);
      return;
    }
    case Op::MulDual: {
      uint32_t m = in.shift_type ? ror(b, 16) : b;
      int64_t p1 = int64_t{sx16(a)} * sx16(m);
      int64_t p2 = int64_t{static_cast<int32_t>(a) >> 16} * (static_cast<int32_t>(m) >> 16);
      int64_t res = (in.sub & 1) ? p1 - p2 : p1 + p2;
      if (in.sub >= 2) {  // SMLALD, SMLSLD: 64-bit accumulate, no Q
        uint64_t acc = (uint64_t{st_.r[in.ra]} << 32) | st_.r[in.rd];
        acc += static_cast<uint64_t>(res);
        st_.r[in.rd] = static_cast<uint32_t>(acc);
        st_.r[in.ra] = static_cast<uint32_t>(acc >> 32);
        return;
      }
      if (in.ra != 15) res += static_cast<int32_t>(st_.r[in.ra]);
      if (res != static_cast<int32_t>(res)) st_.q = 1;
      st_.r[in.rd] = static_cast<uint32_t>(res);
      return;
    }
    default: {  // Div
      uint32_t res;
      if (b == 0) {
        res = 0;
      } else if (in.sub) {
        res = a / b;
      } else if (a == 0x80000000u && b == 0xffffffffu) {
        res = a;
      } else {
        res = static_cast<uint32_t>(static_cast<int32_t>(a) / static_cast<int32_t>(b));
      }
      st_.r[in.rd] = res;
      return;
    }
  }
}

void ArmCore::media(const Insn& in) {
  uint32_t m = st_.r[in.rm];
  switch (in.op) {
    case Op::Clz:
      st_.r[in.rd] = m ? static_cast<uint32_t>(__builtin_clz(m)) : 32;
      return;
    case Op::Rev:
      switch (in.sub) {
        case 0:
          st_.r[in.rd] = __builtin_bswap32(m);
          return;
        case 1:
          st_.r[in.rd] = ((m & 0x00ff00ff) << 8) | ((m >> 8) & 0x00ff00ff);
          return;
        case 2:
          st_.r[in.rd] =
              static_cast<uint32_t>(static_cast<int16_t>(((m & 0xff) << 8) | ((m >> 8) & 0xff)));
          return;
        default: {
          uint32_t r = 0;
          for (int i = 0; i < 32; ++i) r |= ((m >> i) & 1) << (31 - i);
          st_.r[in.rd] = r;
          return;
        }
      }
    case Op::Extend: {
      uint32_t v = ror(m, in.shift_amt);
      uint32_t add = in.rn == 15 ? 0 : st_.r[in.rn];
      uint32_t r;
      switch (in.sub) {
        case kSxtb:
          r = static_cast<uint32_t>(static_cast<int8_t>(v)) + add;
          break;
        case kSxth:
          r = static_cast<uint32_t>(static_cast<int16_t>(v)) + add;
          break;
        case kUxtb:
          r = (v & 0xff) + add;
          break;
        case kUxth:
          r = (v & 0xffff) + add;
          break;
        default: {  // SXTB16, UXTB16 (and the accumulating forms), per halfword
          uint32_t lo = v & 0xff, hi = (v >> 16) & 0xff;
          if (in.sub == kSxtb16) {
            lo = static_cast<uint32_t>(static_cast<int8_t>(lo));
            hi = static_cast<uint32_t>(static_cast<int8_t>(hi));
          }
          r = ((lo + add) & 0xffff) | (((hi + (add >> 16)) & 0xffff) << 16);
          break;
        }
      }
      st_.r[in.rd] = r;
      return;
    }
    case Op::BitField: {
      uint32_t lsb = in.shift_amt, w = in.imm;
      uint32_t mask = w >= 32 ? 0xffffffffu : (1u << w) - 1;
      uint32_t n = in.rn == 15 ? 0 : st_.r[in.rn];
      if (in.sub == 0) {
        st_.r[in.rd] = (n >> lsb) & mask;
      } else if (in.sub == 1) {
        uint32_t f = (n >> lsb) & mask;
        st_.r[in.rd] = static_cast<uint32_t>(static_cast<int32_t>(f << (32 - w)) >> (32 - w));
      } else {
        st_.r[in.rd] = (st_.r[in.rd] & ~(mask << lsb)) | ((n & mask) << lsb);
      }
      return;
    }
    case Op::Sat: {
      bool sat = false;
      if (in.sub < 2) {
        uint32_t c = flag_c();
        int32_t v = static_cast<int32_t>(shift_c(m, in.shift_type, in.shift_amt, c));
        st_.r[in.rd] = static_cast<uint32_t>(in.sub ? usat(v, in.imm, sat) : ssat(v, in.imm, sat));
      } else {
        int64_t lo = sx16(m), hi = static_cast<int32_t>(m) >> 16;
        if (in.sub == 2) {
          lo = ssat(lo, in.imm, sat);
          hi = ssat(hi, in.imm, sat);
        } else {
          lo = usat(lo, in.imm, sat);
          hi = usat(hi, in.imm, sat);
        }
        st_.r[in.rd] = (static_cast<uint32_t>(lo) & 0xffff) | (static_cast<uint32_t>(hi) << 16);
      }
      if (sat) st_.q = 1;
      return;
    }
    case Op::SatArith: {
      bool sat = false;
      int64_t x = static_cast<int32_t>(m), y = static_cast<int32_t>(st_.r[in.rn]);
      if (in.sub >= 2) y = ssat(2 * y, 32, sat);
      int64_t r = (in.sub & 1) ? x - y : x + y;
      st_.r[in.rd] = static_cast<uint32_t>(ssat(r, 32, sat));
      if (sat) st_.q = 1;
      return;
    }
    case Op::Parallel:
      parallel(in);
      return;
    case Op::Sel: {
      uint32_t n = st_.r[in.rn], r = 0;
      for (int i = 0; i < 4; ++i) {
        uint32_t mask = 0xffu << (8 * i);
        r |= ((st_.ge >> i) & 1) ? (n & mask) : (m & mask);
      }
      st_.r[in.rd] = r;
      return;
    }
    case Op::Pkh: {
      uint32_t c = flag_c();
      uint32_t v = shift_c(m, in.shift_type, in.shift_amt, c), n = st_.r[in.rn];
      st_.r[in.rd] = in.sub ? (n & 0xffff0000u) | (v & 0xffff) : (n & 0xffff) | (v & 0xffff0000u);
      return;
    }
    case Op::Usad8: {
      uint32_t n = st_.r[in.rn], sum = in.ra == 15 ? 0 : st_.r[in.ra];
      for (int i = 0; i < 4; ++i) {
        int d = static_cast<int>((n >> (8 * i)) & 0xff) - static_cast<int>((m >> (8 * i)) & 0xff);
        sum += static_cast<uint32_t>(d < 0 ? -d : d);
      }
      st_.r[in.rd] = sum;
      return;
    }
    default:
      undefined(in);
  }
}

// SADD16 ... UHSUB8: in.sub = prefix (0 S, 1 Q, 2 SH, 4 U, 5 UQ, 6 UH), shift_type = operation
// (0 ADD16, 1 ASX, 2 SAX, 3 SUB16, 4 ADD8, 5 SUB8). Only the plain S/U forms set GE.
void ArmCore::parallel(const Insn& in) {
  uint32_t n = st_.r[in.rn], m = st_.r[in.rm];
  bool sign = in.sub < 4;
  int kind = in.sub & 3;  // 0 plain, 1 saturating, 2 halving
  bool bytes = in.shift_type >= 4;
  int lanes = bytes ? 4 : 2, width = bytes ? 8 : 16;
  uint32_t lane_mask = bytes ? 0xff : 0xffff;
  uint32_t res = 0, ge = 0;
  for (int i = 0; i < lanes; ++i) {
    auto lane = [&](uint32_t v, int k) -> int64_t {
      uint32_t u = (v >> (width * k)) & lane_mask;
      if (!sign) return u;
      return bytes ? static_cast<int8_t>(u) : static_cast<int16_t>(u);
    };
    int64_t a = lane(n, i), b, r;
    bool add;
    switch (in.shift_type) {
      case 0:
      case 4:
        b = lane(m, i);
        add = true;
        break;
      case 3:
      case 5:
        b = lane(m, i);
        add = false;
        break;
      case 1:
        b = lane(m, 1 - i);
        add = i == 1;
        break;  // ASX: lo = n.lo - m.hi, hi = n.hi + m.lo
      default:
        b = lane(m, 1 - i);
        add = i == 0;
        break;  // SAX: lo = n.lo + m.hi, hi = n.hi - m.lo
    }
    r = add ? a + b : a - b;
    if (kind == 0) {
      bool g = sign ? r >= 0 : (add ? r >= (int64_t{1} << width) : r >= 0);
      if (g) ge |= bytes ? (1u << i) : (3u << (2 * i));
    } else if (kind == 1) {
      bool sat = false;
      r = sign ? ssat(r, width, sat) : usat(r, width, sat);
    } else {
      r >>= 1;
    }
    res |= (static_cast<uint32_t>(r) & lane_mask) << (width * i);
  }
  if (kind == 0) st_.ge = ge;
  st_.r[in.rd] = res;
}

// LDRT, STRT, LDRBT, STRBT, LDRHT, STRHT, LDRSBT, LDRSHT: from PL1 with PL0's permissions
// (from PL0, and with translation off, as the plain forms; in Hyp mode, where they are
// UNPREDICTABLE, as the plain forms too, as QEMU 7.2).
void ArmCore::exec_ls_unprivileged(ArmCore& c, const Insn& in) {
  const uint32_t base = c.st_.r[in.rn];
  uint32_t off = in.imm;
  if (in.flags & kFlagRegOff) {
    uint32_t carry = c.flag_c();
    off = shift_c(c.st_.r[in.rm], in.shift_type, in.shift_amt, carry);
  }
  const uint32_t offaddr = (in.flags & kFlagU) ? base + off : base - off;
  const uint32_t a = (in.flags & kFlagP) ? offaddr : base;
  const bool pl0 = c.st_.system && c.mmu_.on() && c.st_.mode != kHyp &&
                   c.st_.mode != static_cast<uint8_t>(Mode::Usr);
  const bool store = in.sub < kLdr;
  const uint32_t size = in.sub == kStr || in.sub == kLdr                         ? 4
                        : in.sub == kStrh || in.sub == kLdrh || in.sub == kLdrsh ? 2
                                                                                 : 1;
  if (c.st_.cp15.sctlr & kSctlrA) check_aligned(a, size, store);
  uint32_t v = 0;
  switch (in.sub) {
    case kStr:
      pl0 ? c.mmu_.write<uint32_t>(a, c.st_.r[in.rd], true) : c.wr<uint32_t>(a, c.st_.r[in.rd]);
      break;
    case kStrb:
      pl0 ? c.mmu_.write<uint8_t>(a, static_cast<uint8_t>(c.st_.r[in.rd]), true)
          : c.wr<uint8_t>(a, static_cast<uint8_t>(c.st_.r[in.rd]));
      break;
    case kStrh:
      pl0 ? c.mmu_.write<uint16_t>(a, static_cast<uint16_t>(c.st_.r[in.rd]), true)
          : c.wr<uint16_t>(a, static_cast<uint16_t>(c.st_.r[in.rd]));
      break;
    case kLdr:
      v = pl0 ? c.mmu_.read<uint32_t>(a, true) : c.rd<uint32_t>(a);
      break;
    case kLdrb:
      v = pl0 ? c.mmu_.read<uint8_t>(a, true) : c.rd<uint8_t>(a);
      break;
    case kLdrh:
      v = pl0 ? c.mmu_.read<uint16_t>(a, true) : c.rd<uint16_t>(a);
      break;
    case kLdrsb:
      v = static_cast<uint32_t>(
          static_cast<int8_t>(pl0 ? c.mmu_.read<uint8_t>(a, true) : c.rd<uint8_t>(a)));
      break;
    case kLdrsh:
      v = static_cast<uint32_t>(
          static_cast<int16_t>(pl0 ? c.mmu_.read<uint16_t>(a, true) : c.rd<uint16_t>(a)));
      break;
    default:
      c.undefined(in);
  }
  if (in.flags & kFlagW) c.st_.r[in.rn] = offaddr;
  if (!store) c.st_.r[in.rd] = v;
}

}  // namespace vtoe::cpu::iss
