// CP15 as a table (cp15.h). Values of the identification registers are those QEMU 7.2 reports
// for `-cpu cortex-a15` on `-M virt` (checked by tests/system/target/cp15_ids.c against
// qemu-system-arm 7.2).
#include "models/cpu/iss/cp15.h"

#include <cstdio>
#include <type_traits>

#include "models/cpu/iss/arm_core.h"

namespace vtoe::cpu::iss {

namespace {

// Who may access a register.
constexpr uint8_t kPl0R = 1, kPl0W = 2, kPl1R = 4, kPl1W = 8, kHypR = 16, kHypW = 32;
constexpr uint8_t kPl1RW = kPl1R | kPl1W | kHypR | kHypW;  // PL1 registers: Hyp mode too
constexpr uint8_t kPl1RO = kPl1R | kHypR;
constexpr uint8_t kPl1WO = kPl1W | kHypW;
constexpr uint8_t kHypRW = kHypR | kHypW;
constexpr uint8_t kAllRW = kPl0R | kPl0W | kPl1RW;

// The HCR trap (or timer access control) that covers a register, beside HSTR.
enum Trap : uint8_t {
  kTrapNone,
  kTrapTvm,
  kTrapTid1,
  kTrapTid2,
  kTrapTid3,
  kTrapTac,
  kTrapTsw,
  kTrapTpc,
  kTrapTpu,
  kTrapTtlb,
  kTrapTidcp,
  // The generic timer: PL0 access by CNTKCTL, PL1 access to the physical ones by CNTHCTL.
  kTimerFrq,
  kTimerPct,
  kTimerVct,
  kTimerP,
  kTimerV,
  // The PMU: PL0 access by PMUSERENR.EN, Hyp traps by HDCR.TPM (and TPMCR for PMCR); kTrapTpm:
  // HDCR.TPM only (PMUSERENR, PMINTEN).
  kTrapPmu,
  kTrapPmcr,
  kTrapTpm
};

constexpr uint32_t kMidr = Cp15::kMidr;
constexpr uint32_t kCcsidr[3] = {0x701fe00a, 0x201fe00a, 0x711fe07a};  // L1 D, L1 I, L2

}  // namespace

struct Cp15::Reg {
  const char* name;
  bool is64;
  uint32_t key;  // cp15_key or cp15_key64
  uint8_t access;
  uint8_t trap;
  uint64_t (*read)(ArmCore&);         // null: write-only (an operation)
  void (*write)(ArmCore&, uint64_t);  // null: read-only
};

namespace {

// A PMU register write, then the overflow interrupt's level.
template <typename F>
void pmu_write(ArmCore& c, F&& f) {
  f(c.pmu());
  c.pmu_changed();
}

// The PMU with its counters brought up to date (PMOVSR reads the overflows up to now).
Pmu& pmu_synced(ArmCore& c) {
  if (c.pmu().active(c.state().cp15.hdcr)) {
    c.pmu().sync(c.pmu_context());
    c.pmu().rebase(c.pmu_context());
  }
  c.pmu_changed();
  return c.pmu();
}

}  // namespace

const std::vector<Cp15::Reg>& Cp15::table() {
  using C = ArmCore;
  auto k = [](uint32_t crn, uint32_t opc1, uint32_t crm, uint32_t opc2) {
    return cp15_key(crn, opc1, crm, opc2);
  };
  auto nop = [](C&, uint64_t) {};
  auto zero = [](C&) -> uint64_t { return 0; };
  auto flush = [](C& c, uint64_t) { c.tlb_flush(); };
  auto flush_mva = [](C& c, uint64_t v) { c.tlb_flush_va(static_cast<uint32_t>(v)); };
  // The Inner Shareable forms reach every core of the cluster (cluster.h).
  auto flush_is = [](C& c, uint64_t) { c.tlb_flush_shareable(); };
  auto flush_mva_is = [](C& c, uint64_t v) { c.tlb_flush_va_shareable(static_cast<uint32_t>(v)); };
  auto midr = [](C& c) -> uint64_t { return c.below_hyp() ? c.st_.cp15.vpidr : kMidr; };
  static const std::vector<Reg> table = with_pmu_counters(with_reserved_id_space({
      // c0: identification (QEMU's cortex-a15; ID_PFR1 without the Security Extensions, and
      // without the Virtualization Extensions when the core has no Hyp mode, as QEMU clears them)
      {"MIDR", false, k(0, 0, 0, 0), kPl1RO, kTrapNone, midr, nullptr},
      {"CTR", false, k(0, 0, 0, 1), kPl1RO, kTrapTid2, [](C&) -> uint64_t { return 0x8444c004; },
       nullptr},
      {"TCMTR", false, k(0, 0, 0, 2), kPl1RO, kTrapTid1, zero, nullptr},
      {"TLBTR", false, k(0, 0, 0, 3), kPl1RO, kTrapTid1, zero, nullptr},
      {"MIDR (alias)", false, k(0, 0, 0, 4), kPl1RO, kTrapNone, midr, nullptr},
      {"MPIDR", false, k(0, 0, 0, 5), kPl1RO, kTrapNone,
       [](C& c) -> uint64_t { return c.below_hyp() ? c.st_.cp15.vmpidr : c.st_.mpidr; }, nullptr},
      // REVIDR reads as MIDR on QEMU's cortex-a15 (an ARMv7 alias); HCR.TID1 still traps it.
      {"REVIDR", false, k(0, 0, 0, 6), kPl1RO, kTrapTid1, midr, nullptr},
      {"MIDR (alias)", false, k(0, 0, 0, 7), kPl1RO, kTrapNone, midr, nullptr},
      {"ID_PFR0", false, k(0, 0, 1, 0), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x00001131; }, nullptr},
      {"ID_PFR1", false, k(0, 0, 1, 1), kPl1RO, kTrapTid3,
       [](C& c) -> uint64_t { return c.st_.has_hyp ? 0x00011001 : 0x00010001; }, nullptr},
      {"ID_DFR0", false, k(0, 0, 1, 2), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x02010505; }, nullptr},  // QEMU 7.2: no memory-mapped PMU
      {"ID_AFR0", false, k(0, 0, 1, 3), kPl1RO, kTrapTid3, zero, nullptr},
      {"ID_MMFR0", false, k(0, 0, 1, 4), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x10201105; }, nullptr},
      {"ID_MMFR1", false, k(0, 0, 1, 5), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x20000000; }, nullptr},
      {"ID_MMFR2", false, k(0, 0, 1, 6), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x01240000; }, nullptr},
      {"ID_MMFR3", false, k(0, 0, 1, 7), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x02102211; }, nullptr},
      {"ID_ISAR0", false, k(0, 0, 2, 0), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x02101110; }, nullptr},
      {"ID_ISAR1", false, k(0, 0, 2, 1), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x13112111; }, nullptr},
      {"ID_ISAR2", false, k(0, 0, 2, 2), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x21232041; }, nullptr},
      {"ID_ISAR3", false, k(0, 0, 2, 3), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x11112131; }, nullptr},
      {"ID_ISAR4", false, k(0, 0, 2, 4), kPl1RO, kTrapTid3,
       [](C&) -> uint64_t { return 0x10011142; }, nullptr},
      {"ID_ISAR5", false, k(0, 0, 2, 5), kPl1RO, kTrapTid3, zero, nullptr},
      {"CCSIDR", false, k(0, 1, 0, 0), kPl1RO, kTrapTid2,
       [](C& c) -> uint64_t {
         uint32_t sel = c.st_.cp15.csselr;  // Level:InD; L1 data, L1 instruction, L2
         // With modelled caches, level 1 reports their geometry (the same by default).
         if (c.l1_ && sel <= 1) return c.l1_->ccsidr(sel == 1);
         return sel == 0 ? kCcsidr[0] : sel == 1 ? kCcsidr[1] : sel == 2 ? kCcsidr[2] : 0;
       },
       nullptr},
      {"CLIDR", false, k(0, 1, 0, 1), kPl1RO, kTrapTid2,
       [](C&) -> uint64_t { return 0x0a200023; }, nullptr},
      {"AIDR", false, k(0, 1, 0, 7), kPl1RO, kTrapTid1, zero, nullptr},
      {"CSSELR", false, k(0, 2, 0, 0), kPl1RW, kTrapTid2,
       [](C& c) -> uint64_t { return c.st_.cp15.csselr; },
       [](C& c, uint64_t v) { c.st_.cp15.csselr = static_cast<uint32_t>(v) & 0xf; }},
      {"VPIDR", false, k(0, 4, 0, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.vpidr; },
       [](C& c, uint64_t v) { c.st_.cp15.vpidr = static_cast<uint32_t>(v); }},
      {"VMPIDR", false, k(0, 4, 0, 5), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.vmpidr; },
       [](C& c, uint64_t v) { c.st_.cp15.vmpidr = static_cast<uint32_t>(v); }},
      // c1: system control
      {"SCTLR", false, k(1, 0, 0, 0), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.sctlr; },
       [](C& c, uint64_t v) {
         // Kept as written, as QEMU 7.2 keeps it (RES1 bits included: a write of 0 reads 0);
         // M, A, C, I, V, WXN, UWXN, AFE, TE act (C, I: the optional caches' timing).
         const uint32_t old = c.st_.cp15.sctlr;
         c.st_.cp15.sctlr = static_cast<uint32_t>(v);
         // The load/store executors are chosen by SCTLR.A (alignment checks or not).
         if ((old ^ c.st_.cp15.sctlr) & C::kSctlrA) c.drop_all_decoded();
         c.tlb_flush();
       }},
      {"ACTLR", false, k(1, 0, 0, 1), kPl1RW, kTrapTac,
       [](C& c) -> uint64_t { return c.st_.cp15.actlr; },
       [](C& c, uint64_t v) { c.st_.cp15.actlr = static_cast<uint32_t>(v); }},
      {"CPACR", false, k(1, 0, 0, 2), kPl1RW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.cpacr; },
       // cp10, cp11, and ASEDIS/D32DIS kept as written (QEMU 7.2; no Advanced SIMD here)
       [](C& c, uint64_t v) { c.st_.cp15.cpacr = static_cast<uint32_t>(v) & 0xc0f00000u; }},
      {"HSCTLR", false, k(1, 4, 0, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hsctlr; },
       [](C& c, uint64_t v) {
         // As written, as QEMU 7.2 keeps it (Xen reads back its CP15BEN and bit 6).
         c.st_.cp15.hsctlr = static_cast<uint32_t>(v);
         c.tlb_flush();
       }},
      {"HACTLR", false, k(1, 4, 0, 1), kHypRW, kTrapNone, zero, nop},
      {"HCR", false, k(1, 4, 1, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hcr; },
       [](C& c, uint64_t v) {
         c.st_.cp15.hcr = static_cast<uint32_t>(v) & 0x5fffffffu;
         c.tlb_flush();  // HCR.VM switches stage 2 on or off
         c.update_attention();
       }},
      {"HDCR", false, k(1, 4, 1, 1), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hdcr; },
       [](C& c, uint64_t v) {
         // HPMN and HPME decide which event counters count.
         c.st_.pmu.sync(c.pmu_context());
         c.st_.cp15.hdcr = static_cast<uint32_t>(v) & 0xfff;
         c.st_.pmu.rebase(c.pmu_context());
         c.pmu_changed();
       }},
      {"HCPTR", false, k(1, 4, 1, 2), kHypRW, kTrapNone,
       // Read as written, the RES1 bits included (as QEMU 7.2 keeps it; 0 at reset).
       [](C& c) -> uint64_t { return c.st_.cp15.hcptr; },
       [](C& c, uint64_t v) { c.st_.cp15.hcptr = static_cast<uint32_t>(v); }},
      {"HSTR", false, k(1, 4, 1, 3), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hstr; },
       [](C& c, uint64_t v) { c.st_.cp15.hstr = static_cast<uint32_t>(v); }},  // as QEMU 7.2
      {"HACR", false, k(1, 4, 1, 7), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hacr; },
       [](C& c, uint64_t v) { c.st_.cp15.hacr = static_cast<uint32_t>(v); }},
      // c2, c3: translation table bases and control, domains
      {"TTBR0", false, k(2, 0, 0, 0), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return static_cast<uint32_t>(c.st_.cp15.ttbr0); },
       [](C& c, uint64_t v) {
         // MCR writes bits [31:0]; [63:32] (MCRR's) are kept, as in QEMU 7.2.
         c.st_.cp15.ttbr0 = (c.st_.cp15.ttbr0 & ~0xffffffffull) | static_cast<uint32_t>(v);
         c.tlb_flush();
       }},
      {"TTBR1", false, k(2, 0, 0, 1), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return static_cast<uint32_t>(c.st_.cp15.ttbr1); },
       [](C& c, uint64_t v) {
         c.st_.cp15.ttbr1 = (c.st_.cp15.ttbr1 & ~0xffffffffull) | static_cast<uint32_t>(v);
         c.tlb_flush();
       }},
      {"TTBCR", false, k(2, 0, 0, 2), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.ttbcr; },
       [](C& c, uint64_t v) {
         // Without the Security Extensions PD0/PD1 do not exist; bits [21:19], [15:14] and
         // [6:3] are dropped in both formats, as QEMU 7.2 does before ARMv8.
         c.st_.cp15.ttbcr = static_cast<uint32_t>(v) & 0xb7c73787u;
         c.tlb_flush();
       }},
      {"HTCR", false, k(2, 4, 0, 2), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.htcr; },  // no RES1 bits, as QEMU 7.2
       [](C& c, uint64_t v) {
         c.st_.cp15.htcr = static_cast<uint32_t>(v) & 0x00003f07u;
         c.tlb_flush();
       }},
      {"VTCR", false, k(2, 4, 1, 2), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.vtcr; },  // no RES1 bit, as QEMU 7.2
       [](C& c, uint64_t v) {
         c.st_.cp15.vtcr = static_cast<uint32_t>(v) & 0x00003fdfu;
         c.tlb_flush();
       }},
      {"TTBR0", true, cp15_key64(0, 2), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.ttbr0; },
       [](C& c, uint64_t v) {
         c.st_.cp15.ttbr0 = v & 0x00ffffffffffffffull;
         c.tlb_flush();
       }},
      {"TTBR1", true, cp15_key64(1, 2), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.ttbr1; },
       [](C& c, uint64_t v) {
         c.st_.cp15.ttbr1 = v & 0x00ffffffffffffffull;
         c.tlb_flush();
       }},
      {"HTTBR", true, cp15_key64(4, 2), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.httbr; },
       [](C& c, uint64_t v) {
         c.st_.cp15.httbr = v & 0x000000ffffffffffull;
         c.tlb_flush();
       }},
      {"VTTBR", true, cp15_key64(6, 2), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.vttbr; },
       [](C& c, uint64_t v) {
         c.st_.cp15.vttbr = v & 0x00ff00ffffffffffull;
         c.tlb_flush();
       }},
      {"DACR", false, k(3, 0, 0, 0), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.dacr; },
       [](C& c, uint64_t v) {
         c.st_.cp15.dacr = static_cast<uint32_t>(v);
         c.tlb_flush();
       }},
      // c5, c6: fault status and address
      {"DFSR", false, k(5, 0, 0, 0), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.dfsr; },
       [](C& c, uint64_t v) { c.st_.cp15.dfsr = static_cast<uint32_t>(v); }},  // as QEMU 7.2
      {"IFSR", false, k(5, 0, 0, 1), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.ifsr; },
       [](C& c, uint64_t v) { c.st_.cp15.ifsr = static_cast<uint32_t>(v); }},  // as QEMU 7.2
      {"ADFSR", false, k(5, 0, 1, 0), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.adfsr; },
       [](C& c, uint64_t v) { c.st_.cp15.adfsr = static_cast<uint32_t>(v); }},
      {"AIFSR", false, k(5, 0, 1, 1), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.aifsr; },
       [](C& c, uint64_t v) { c.st_.cp15.aifsr = static_cast<uint32_t>(v); }},
      {"HADFSR", false, k(5, 4, 1, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hadfsr; },
       [](C& c, uint64_t v) { c.st_.cp15.hadfsr = static_cast<uint32_t>(v); }},
      {"HAIFSR", false, k(5, 4, 1, 1), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.haifsr; },
       [](C& c, uint64_t v) { c.st_.cp15.haifsr = static_cast<uint32_t>(v); }},
      {"HSR", false, k(5, 4, 2, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hsr; },
       [](C& c, uint64_t v) { c.st_.cp15.hsr = static_cast<uint32_t>(v); }},
      {"DFAR", false, k(6, 0, 0, 0), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.dfar; },
       [](C& c, uint64_t v) { c.st_.cp15.dfar = static_cast<uint32_t>(v); }},
      {"IFAR", false, k(6, 0, 0, 2), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.ifar; },
       [](C& c, uint64_t v) { c.st_.cp15.ifar = static_cast<uint32_t>(v); }},
      {"HDFAR", false, k(6, 4, 0, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hdfar; },
       [](C& c, uint64_t v) { c.st_.cp15.hdfar = static_cast<uint32_t>(v); }},
      {"HIFAR", false, k(6, 4, 0, 2), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hifar; },
       [](C& c, uint64_t v) { c.st_.cp15.hifar = static_cast<uint32_t>(v); }},
      {"HPFAR", false, k(6, 4, 0, 4), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hpfar; },
       [](C& c, uint64_t v) { c.st_.cp15.hpfar = static_cast<uint32_t>(v); }},  // as QEMU 7.2
      // c7: cache maintenance (on the modelled caches' tags, ArmCore::set_caches; without them
      // nothing to do: written code is tracked by the decoded-instruction cache anyway),
      // address translation, barriers
      {"ICIALLUIS", false, k(7, 0, 1, 0), kPl1WO, kTrapTpu, nullptr,
       [](C& c, uint64_t v) { c.cache_maintenance(CacheOp::IcInvalidateAll, static_cast<uint32_t>(v)); }},
      {"BPIALLIS", false, k(7, 0, 1, 6), kPl1WO, kTrapNone, nullptr, nop},
      {"PAR", false, k(7, 0, 4, 0), kPl1RW, kTrapNone,
       [](C& c) -> uint64_t { return static_cast<uint32_t>(c.st_.cp15.par); },
       [](C& c, uint64_t v) { c.st_.cp15.par = static_cast<uint32_t>(v); }},
      {"ICIALLU", false, k(7, 0, 5, 0), kPl1WO, kTrapTpu, nullptr,
       [](C& c, uint64_t v) { c.cache_maintenance(CacheOp::IcInvalidateAll, static_cast<uint32_t>(v)); }},
      {"ICIMVAU", false, k(7, 0, 5, 1), kPl1WO, kTrapTpu, nullptr,
       [](C& c, uint64_t v) { c.cache_maintenance(CacheOp::IcInvalidateMva, static_cast<uint32_t>(v)); }},
      {"CP15ISB", false, k(7, 0, 5, 4), kPl0W | kPl1WO, kTrapNone, nullptr, nop},
      {"BPIALL", false, k(7, 0, 5, 6), kPl1WO, kTrapNone, nullptr, nop},
      {"BPIMVA", false, k(7, 0, 5, 7), kPl1WO, kTrapNone, nullptr, nop},
      {"DCIMVAC", false, k(7, 0, 6, 1), kPl1WO, kTrapTpc, nullptr,
       [](C& c, uint64_t v) { c.cache_maintenance(CacheOp::DcInvalidateMva, static_cast<uint32_t>(v)); }},
      {"DCISW", false, k(7, 0, 6, 2), kPl1WO, kTrapTsw, nullptr,
       [](C& c, uint64_t v) { c.cache_maintenance(CacheOp::DcInvalidateSetWay, static_cast<uint32_t>(v)); }},
      {"ATS1CPR", false, k(7, 0, 8, 0), kPl1WO, kTrapNone, nullptr,
       [](C& c, uint64_t v) { c.address_translate(static_cast<uint32_t>(v), 0); }},
      {"ATS1CPW", false, k(7, 0, 8, 1), kPl1WO, kTrapNone, nullptr,
       [](C& c, uint64_t v) { c.address_translate(static_cast<uint32_t>(v), 1); }},
      {"ATS1CUR", false, k(7, 0, 8, 2), kPl1WO, kTrapNone, nullptr,
       [](C& c, uint64_t v) { c.address_translate(static_cast<uint32_t>(v), 2); }},
      {"ATS1CUW", false, k(7, 0, 8, 3), kPl1WO, kTrapNone, nullptr,
       [](C& c, uint64_t v) { c.address_translate(static_cast<uint32_t>(v), 3); }},
      {"ATS12NSOPR", false, k(7, 0, 8, 4), kHypW, kTrapNone, nullptr,
       [](C& c, uint64_t v) { c.address_translate(static_cast<uint32_t>(v), 4); }},
      {"ATS12NSOPW", false, k(7, 0, 8, 5), kHypW, kTrapNone, nullptr,
       [](C& c, uint64_t v) { c.address_translate(static_cast<uint32_t>(v), 5); }},
      {"ATS12NSOUR", false, k(7, 0, 8, 6), kHypW, kTrapNone, nullptr,
       [](C& c, uint64_t v) { c.address_translate(static_cast<uint32_t>(v), 6); }},
      {"ATS12NSOUW", false, k(7, 0, 8, 7), kHypW, kTrapNone, nullptr,
       [](C& c, uint64_t v) { c.address_translate(static_cast<uint32_t>(v), 7); }},
      {"DCCMVAC", false, k(7, 0, 10, 1), kPl1WO, kTrapTpc, nullptr,
       [](C& c, uint64_t v) { c.cache_maintenance(CacheOp::DcCleanMva, static_cast<uint32_t>(v)); }},
      {"DCCSW", false, k(7, 0, 10, 2), kPl1WO, kTrapTsw, nullptr,
       [](C& c, uint64_t v) { c.cache_maintenance(CacheOp::DcCleanSetWay, static_cast<uint32_t>(v)); }},
      {"CP15DSB", false, k(7, 0, 10, 4), kPl0W | kPl1WO, kTrapNone, nullptr, nop},
      {"CP15DMB", false, k(7, 0, 10, 5), kPl0W | kPl1WO, kTrapNone, nullptr, nop},
      {"DCCMVAU", false, k(7, 0, 11, 1), kPl1WO, kTrapTpu, nullptr,
       [](C& c, uint64_t v) { c.cache_maintenance(CacheOp::DcCleanMva, static_cast<uint32_t>(v)); }},
      {"DCCIMVAC", false, k(7, 0, 14, 1), kPl1WO, kTrapTpc, nullptr,
       [](C& c, uint64_t v) { c.cache_maintenance(CacheOp::DcCleanInvalidateMva, static_cast<uint32_t>(v)); }},
      {"DCCISW", false, k(7, 0, 14, 2), kPl1WO, kTrapTsw, nullptr,
       [](C& c, uint64_t v) { c.cache_maintenance(CacheOp::DcCleanInvalidateSetWay, static_cast<uint32_t>(v)); }},
      {"ATS1HR", false, k(7, 4, 8, 0), kHypW, kTrapNone, nullptr,
       [](C& c, uint64_t v) { c.address_translate(static_cast<uint32_t>(v), 8); }},
      {"ATS1HW", false, k(7, 4, 8, 1), kHypW, kTrapNone, nullptr,
       [](C& c, uint64_t v) { c.address_translate(static_cast<uint32_t>(v), 9); }},
      {"PAR", true, cp15_key64(0, 7), kPl1RW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.par; },
       [](C& c, uint64_t v) { c.st_.cp15.par = v; }},
      // c8: TLB maintenance. One TLB for all ASIDs and VMIDs: by-ASID and by-MVA operations
      // flush what they must and possibly more (never less).
      {"TLBIALLIS", false, k(8, 0, 3, 0), kPl1WO, kTrapTtlb, nullptr, flush_is},
      {"TLBIMVAIS", false, k(8, 0, 3, 1), kPl1WO, kTrapTtlb, nullptr, flush_mva_is},
      {"TLBIASIDIS", false, k(8, 0, 3, 2), kPl1WO, kTrapTtlb, nullptr, flush_is},
      {"TLBIMVAAIS", false, k(8, 0, 3, 3), kPl1WO, kTrapTtlb, nullptr, flush_mva_is},
      {"ITLBIALL", false, k(8, 0, 5, 0), kPl1WO, kTrapTtlb, nullptr, flush},
      {"ITLBIMVA", false, k(8, 0, 5, 1), kPl1WO, kTrapTtlb, nullptr, flush_mva},
      {"ITLBIASID", false, k(8, 0, 5, 2), kPl1WO, kTrapTtlb, nullptr, flush},
      {"DTLBIALL", false, k(8, 0, 6, 0), kPl1WO, kTrapTtlb, nullptr, flush},
      {"DTLBIMVA", false, k(8, 0, 6, 1), kPl1WO, kTrapTtlb, nullptr, flush_mva},
      {"DTLBIASID", false, k(8, 0, 6, 2), kPl1WO, kTrapTtlb, nullptr, flush},
      {"TLBIALL", false, k(8, 0, 7, 0), kPl1WO, kTrapTtlb, nullptr, flush},
      {"TLBIMVA", false, k(8, 0, 7, 1), kPl1WO, kTrapTtlb, nullptr, flush_mva},
      {"TLBIASID", false, k(8, 0, 7, 2), kPl1WO, kTrapTtlb, nullptr, flush},
      {"TLBIMVAA", false, k(8, 0, 7, 3), kPl1WO, kTrapTtlb, nullptr, flush_mva},
      {"TLBIALLHIS", false, k(8, 4, 3, 0), kHypW, kTrapNone, nullptr, flush_is},
      {"TLBIMVAHIS", false, k(8, 4, 3, 1), kHypW, kTrapNone, nullptr, flush_mva_is},
      {"TLBIALLNSNHIS", false, k(8, 4, 3, 4), kHypW, kTrapNone, nullptr, flush_is},
      {"TLBIALLH", false, k(8, 4, 7, 0), kHypW, kTrapNone, nullptr, flush},
      {"TLBIMVAH", false, k(8, 4, 7, 1), kHypW, kTrapNone, nullptr, flush_mva},
      {"TLBIALLNSNH", false, k(8, 4, 7, 4), kHypW, kTrapNone, nullptr, flush},
      // c9: the Performance Monitors (pmu.h)
      {"PMCR", false, k(9, 0, 12, 0), kAllRW, kTrapPmcr,
       [](C& c) -> uint64_t { return c.st_.pmu.pmcr(); },
       [](C& c, uint64_t v) { pmu_write(c, [&](Pmu& p) { p.set_pmcr(v, c.pmu_context()); }); }},
      {"PMCNTENSET", false, k(9, 0, 12, 1), kAllRW, kTrapPmu,
       [](C& c) -> uint64_t { return c.st_.pmu.cnten(); },
       [](C& c, uint64_t v) {
         pmu_write(c, [&](Pmu& p) { p.set_cnten(v, true, c.pmu_context()); });
       }},
      {"PMCNTENCLR", false, k(9, 0, 12, 2), kAllRW, kTrapPmu,
       [](C& c) -> uint64_t { return c.st_.pmu.cnten(); },
       [](C& c, uint64_t v) {
         pmu_write(c, [&](Pmu& p) { p.set_cnten(v, false, c.pmu_context()); });
       }},
      {"PMOVSR", false, k(9, 0, 12, 3), kAllRW, kTrapPmu,
       [](C& c) -> uint64_t { return pmu_synced(c).ovs(); },
       [](C& c, uint64_t v) { pmu_write(c, [&](Pmu& p) { p.clear_ovs(v); }); }},
      {"PMSWINC", false, k(9, 0, 12, 4), kPl0W | kPl1WO, kTrapPmu, nullptr,
       [](C& c, uint64_t v) { pmu_write(c, [&](Pmu& p) { p.swinc(v, c.pmu_context()); }); }},
      {"PMSELR", false, k(9, 0, 12, 5), kAllRW, kTrapPmu,
       [](C& c) -> uint64_t { return c.st_.pmu.selr(); },
       [](C& c, uint64_t v) { c.st_.pmu.set_selr(static_cast<uint32_t>(v)); }},
      {"PMCCNTR", false, k(9, 0, 13, 0), kAllRW, kTrapPmu,
       [](C& c) -> uint64_t {
         uint32_t v = c.st_.pmu.ccnt(c.pmu_context());
         c.pmu_changed();
         return v;
       },
       [](C& c, uint64_t v) {
         pmu_write(c, [&](Pmu& p) { p.set_ccnt(static_cast<uint32_t>(v), c.pmu_context()); });
       }},
      {"PMXEVTYPER", false, k(9, 0, 13, 1), kAllRW, kTrapPmu,
       [](C& c) -> uint64_t { return c.st_.pmu.evtyper(c.st_.pmu.selr()); },
       [](C& c, uint64_t v) {
         pmu_write(c, [&](Pmu& p) {
           p.set_evtyper(p.selr(), static_cast<uint32_t>(v), c.pmu_context());
         });
       }},
      {"PMXEVCNTR", false, k(9, 0, 13, 2), kAllRW, kTrapPmu,
       [](C& c) -> uint64_t {
         uint32_t v = c.st_.pmu.evcnt(c.st_.pmu.selr(), c.pmu_context());
         c.pmu_changed();
         return v;
       },
       [](C& c, uint64_t v) {
         pmu_write(c, [&](Pmu& p) {
           p.set_evcnt(p.selr(), static_cast<uint32_t>(v), c.pmu_context());
         });
       }},
      {"PMUSERENR", false, k(9, 0, 14, 0), kPl0R | kPl1RW, kTrapTpm,
       [](C& c) -> uint64_t { return c.st_.pmu.userenr(); },
       [](C& c, uint64_t v) { c.st_.pmu.set_userenr(static_cast<uint32_t>(v)); }},
      {"PMINTENSET", false, k(9, 0, 14, 1), kPl1RW, kTrapTpm,
       [](C& c) -> uint64_t { return c.st_.pmu.inten(); },
       [](C& c, uint64_t v) {
         pmu_write(c, [&](Pmu& p) { p.set_inten(static_cast<uint32_t>(v), true); });
       }},
      {"PMINTENCLR", false, k(9, 0, 14, 2), kPl1RW, kTrapTpm,
       [](C& c) -> uint64_t { return c.st_.pmu.inten(); },
       [](C& c, uint64_t v) {
         pmu_write(c, [&](Pmu& p) { p.set_inten(static_cast<uint32_t>(v), false); });
       }},
      // c9: Cortex-A15's L2 control (implementation defined: HCR.TIDCP)
      {"L2CTLR", false, k(9, 1, 0, 2), kPl1RW, kTrapTidcp, zero, nop},
      {"L2ECTLR", false, k(9, 1, 0, 3), kPl1RW, kTrapTidcp, zero, nop},
      // c10: memory attributes (PRRR/NMRR are MAIR0/MAIR1 with TTBCR.EAE)
      {"PRRR", false, k(10, 0, 2, 0), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.prrr; },
       [](C& c, uint64_t v) { c.st_.cp15.prrr = static_cast<uint32_t>(v); }},
      {"NMRR", false, k(10, 0, 2, 1), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.nmrr; },
       [](C& c, uint64_t v) { c.st_.cp15.nmrr = static_cast<uint32_t>(v); }},
      {"AMAIR0", false, k(10, 0, 3, 0), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.amair0; },
       [](C& c, uint64_t v) { c.st_.cp15.amair0 = static_cast<uint32_t>(v); }},
      {"AMAIR1", false, k(10, 0, 3, 1), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.amair1; },
       [](C& c, uint64_t v) { c.st_.cp15.amair1 = static_cast<uint32_t>(v); }},
      {"HMAIR0", false, k(10, 4, 2, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hmair0; },
       [](C& c, uint64_t v) { c.st_.cp15.hmair0 = static_cast<uint32_t>(v); }},
      {"HMAIR1", false, k(10, 4, 2, 1), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hmair1; },
       [](C& c, uint64_t v) { c.st_.cp15.hmair1 = static_cast<uint32_t>(v); }},
      {"HAMAIR0", false, k(10, 4, 3, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hamair0; },
       [](C& c, uint64_t v) { c.st_.cp15.hamair0 = static_cast<uint32_t>(v); }},
      {"HAMAIR1", false, k(10, 4, 3, 1), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hamair1; },
       [](C& c, uint64_t v) { c.st_.cp15.hamair1 = static_cast<uint32_t>(v); }},
      // c12: vectors, interrupt status
      {"VBAR", false, k(12, 0, 0, 0), kPl1RW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.vbar; },
       [](C& c, uint64_t v) { c.st_.cp15.vbar = static_cast<uint32_t>(v) & ~31u; }},
      {"ISR", false, k(12, 0, 1, 0), kPl1RO, kTrapNone,
       [](C& c) -> uint64_t {
         bool v_i = c.below_hyp() && (c.st_.cp15.hcr & C::kHcrImo);
         bool v_f = c.below_hyp() && (c.st_.cp15.hcr & C::kHcrFmo);
         bool v_a = c.below_hyp() && (c.st_.cp15.hcr & C::kHcrAmo);
         bool i = v_i ? c.st_.virq || (c.st_.cp15.hcr & C::kHcrVi) : c.st_.irq;
         bool f = v_f ? c.st_.vfiq || (c.st_.cp15.hcr & C::kHcrVf) : c.st_.fiq;
         bool a = v_a && (c.st_.cp15.hcr & C::kHcrVa);
         return (a ? C::kA : 0u) | (i ? C::kI : 0u) | (f ? C::kF : 0u);
       },
       nullptr},
      {"HVBAR", false, k(12, 4, 0, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.hvbar; },
       [](C& c, uint64_t v) { c.st_.cp15.hvbar = static_cast<uint32_t>(v) & ~31u; }},
      // c13: process and thread IDs (no FCSE: FCSEIDR reads as zero)
      {"FCSEIDR", false, k(13, 0, 0, 0), kPl1RW, kTrapNone, zero, nop},
      {"CONTEXTIDR", false, k(13, 0, 0, 1), kPl1RW, kTrapTvm,
       [](C& c) -> uint64_t { return c.st_.cp15.contextidr; },
       [](C& c, uint64_t v) {
         c.st_.cp15.contextidr = static_cast<uint32_t>(v);
         c.tlb_flush();  // the ASID (short-descriptor format) changes what the TLB may hold
       }},
      {"TPIDRURW", false, k(13, 0, 0, 2), kAllRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.tpidrurw; },
       [](C& c, uint64_t v) { c.st_.cp15.tpidrurw = static_cast<uint32_t>(v); }},
      {"TPIDRURO", false, k(13, 0, 0, 3), kPl0R | kPl1RW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.tls; },
       [](C& c, uint64_t v) { c.st_.tls = static_cast<uint32_t>(v); }},
      {"TPIDRPRW", false, k(13, 0, 0, 4), kPl1RW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.tpidrprw; },
       [](C& c, uint64_t v) { c.st_.cp15.tpidrprw = static_cast<uint32_t>(v); }},
      {"HTPIDR", false, k(13, 4, 0, 2), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.cp15.htpidr; },
       [](C& c, uint64_t v) { c.st_.cp15.htpidr = static_cast<uint32_t>(v); }},
      // c14: the generic timer
      {"CNTFRQ", false, k(14, 0, 0, 0), kPl0R | kPl1RW, kTimerFrq,
       [](C& c) -> uint64_t { return c.st_.timer.cntfrq; },
       [](C& c, uint64_t v) { c.st_.timer.cntfrq = static_cast<uint32_t>(v); }},
      {"CNTKCTL", false, k(14, 0, 1, 0), kPl1RW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.timer.cntkctl; },
       [](C& c, uint64_t v) { c.st_.timer.cntkctl = static_cast<uint32_t>(v); }},  // as QEMU 7.2
      {"CNTP_TVAL", false, k(14, 0, 2, 0), kAllRW, kTimerP,
       [](C& c) -> uint64_t { return c.st_.timer.tval(TimerKind::Physical, c.counter()); },
       [](C& c, uint64_t v) {
         c.st_.timer.set_tval(TimerKind::Physical, static_cast<uint32_t>(v), c.counter());
         c.timer_changed();
       }},
      {"CNTP_CTL", false, k(14, 0, 2, 1), kAllRW, kTimerP,
       [](C& c) -> uint64_t { return c.st_.timer.ctl(TimerKind::Physical, c.counter()); },
       [](C& c, uint64_t v) {
         c.st_.timer.set_ctl(TimerKind::Physical, static_cast<uint32_t>(v));
         c.timer_changed();
       }},
      {"CNTV_TVAL", false, k(14, 0, 3, 0), kAllRW, kTimerV,
       [](C& c) -> uint64_t { return c.st_.timer.tval(TimerKind::Virtual, c.counter()); },
       [](C& c, uint64_t v) {
         c.st_.timer.set_tval(TimerKind::Virtual, static_cast<uint32_t>(v), c.counter());
         c.timer_changed();
       }},
      {"CNTV_CTL", false, k(14, 0, 3, 1), kAllRW, kTimerV,
       [](C& c) -> uint64_t { return c.st_.timer.ctl(TimerKind::Virtual, c.counter()); },
       [](C& c, uint64_t v) {
         c.st_.timer.set_ctl(TimerKind::Virtual, static_cast<uint32_t>(v));
         c.timer_changed();
       }},
      {"CNTHCTL", false, k(14, 4, 1, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.timer.cnthctl; },
       [](C& c, uint64_t v) { c.st_.timer.cnthctl = static_cast<uint32_t>(v); }},  // as QEMU 7.2
      {"CNTHP_TVAL", false, k(14, 4, 2, 0), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.timer.tval(TimerKind::Hyp, c.counter()); },
       [](C& c, uint64_t v) {
         c.st_.timer.set_tval(TimerKind::Hyp, static_cast<uint32_t>(v), c.counter());
         c.timer_changed();
       }},
      {"CNTHP_CTL", false, k(14, 4, 2, 1), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.timer.ctl(TimerKind::Hyp, c.counter()); },
       [](C& c, uint64_t v) {
         c.st_.timer.set_ctl(TimerKind::Hyp, static_cast<uint32_t>(v));
         c.timer_changed();
       }},
      {"CNTPCT", true, cp15_key64(0, 14), kPl0R | kPl1RO, kTimerPct,
       [](C& c) -> uint64_t { return c.counter(); }, nullptr},
      {"CNTVCT", true, cp15_key64(1, 14), kPl0R | kPl1RO, kTimerVct,
       [](C& c) -> uint64_t { return c.st_.timer.count(TimerKind::Virtual, c.counter()); },
       nullptr},
      {"CNTP_CVAL", true, cp15_key64(2, 14), kAllRW, kTimerP,
       [](C& c) -> uint64_t { return c.st_.timer.cval(TimerKind::Physical); },
       [](C& c, uint64_t v) {
         c.st_.timer.set_cval(TimerKind::Physical, v);
         c.timer_changed();
       }},
      {"CNTV_CVAL", true, cp15_key64(3, 14), kAllRW, kTimerV,
       [](C& c) -> uint64_t { return c.st_.timer.cval(TimerKind::Virtual); },
       [](C& c, uint64_t v) {
         c.st_.timer.set_cval(TimerKind::Virtual, v);
         c.timer_changed();
       }},
      {"CNTVOFF", true, cp15_key64(4, 14), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.timer.cntvoff; },
       [](C& c, uint64_t v) {
         c.st_.timer.cntvoff = v;
         c.timer_changed();
       }},
      {"CNTHP_CVAL", true, cp15_key64(6, 14), kHypRW, kTrapNone,
       [](C& c) -> uint64_t { return c.st_.timer.cval(TimerKind::Hyp); },
       [](C& c, uint64_t v) {
         c.st_.timer.set_cval(TimerKind::Hyp, v);
         c.timer_changed();
       }},
  }));
  return table;
}

// ARMv7 reserves the rest of the identification space (CRn c0, opc1 0, CRm c2 opc2 6-7 and CRm
// c3-c7) as read-as-zero, and QEMU's cortex-a15 reads it so: Xen's identify_cpu reads ID_MMFR4,
// ID_ISAR6, ID_PFR2, ID_DFR1 and ID_MMFR5 there. Not ID group 3 in ARMv7 (ARMv8 traps it by
// HCR.TID3; QEMU traps it on v8 cores only).
std::vector<Cp15::Reg> Cp15::with_reserved_id_space(std::vector<Reg> t) {
  auto zero = [](ArmCore&) -> uint64_t { return 0; };
  for (uint32_t crm = 2; crm <= 7; ++crm) {
    for (uint32_t opc2 = crm == 2 ? 6 : 0; opc2 <= 7; ++opc2) {
      t.push_back({"ID (reserved, RAZ)", false, cp15_key(0, 0, crm, opc2), kPl1RO, kTrapNone, zero,
                   nullptr});
    }
  }
  return t;
}

// PMEVCNTRn (CRm 8) and PMEVTYPERn (CRm 12) for the six counters: ARMv8's names, which QEMU 7.2
// defines on its v7 cores too.
std::vector<Cp15::Reg> Cp15::with_pmu_counters(std::vector<Reg> t) {
  static const char* const kCntNames[] = {"PMEVCNTR0", "PMEVCNTR1", "PMEVCNTR2",
                                          "PMEVCNTR3", "PMEVCNTR4", "PMEVCNTR5"};
  static const char* const kTypeNames[] = {"PMEVTYPER0", "PMEVTYPER1", "PMEVTYPER2",
                                           "PMEVTYPER3", "PMEVTYPER4", "PMEVTYPER5"};
  auto add = [&t](auto n) {
    constexpr uint32_t kN = decltype(n)::value;
    t.push_back({kCntNames[kN], false, cp15_key(14, 0, 8, kN), kAllRW, kTrapPmu,
                 [](ArmCore& c) -> uint64_t {
                   const uint32_t v = c.pmu().evcnt(kN, c.pmu_context());
                   c.pmu_changed();
                   return v;
                 },
                 [](ArmCore& c, uint64_t v) {
                   pmu_write(c, [&](Pmu& p) {
                     p.set_evcnt(kN, static_cast<uint32_t>(v), c.pmu_context());
                   });
                 }});
    t.push_back({kTypeNames[kN], false, cp15_key(14, 0, 12, kN), kAllRW, kTrapPmu,
                 [](ArmCore& c) -> uint64_t { return c.pmu().evtyper(kN); },
                 [](ArmCore& c, uint64_t v) {
                   pmu_write(c, [&](Pmu& p) {
                     p.set_evtyper(kN, static_cast<uint32_t>(v), c.pmu_context());
                   });
                 }});
  };
  add(std::integral_constant<uint32_t, 0>{});
  add(std::integral_constant<uint32_t, 1>{});
  add(std::integral_constant<uint32_t, 2>{});
  add(std::integral_constant<uint32_t, 3>{});
  add(std::integral_constant<uint32_t, 4>{});
  add(std::integral_constant<uint32_t, 5>{});
  static_assert(Pmu::kCounters == 6);
  return t;
}

const Cp15::Reg* Cp15::find(bool is64, uint32_t key) {
  // A direct index over the 32-bit space (crn 4, opc1 3, crm 4, opc2 3 bits) and the 64-bit one
  // (opc1 4, crm 4): built once.
  static const auto index = [] {
    std::vector<int16_t> idx(1u << 16 | 256, -1);
    const auto& t = table();
    for (size_t i = 0; i < t.size(); ++i) {
      idx[t[i].is64 ? (1u << 16) + t[i].key : t[i].key] = static_cast<int16_t>(i);
    }
    return idx;
  }();
  uint32_t slot = is64 ? (1u << 16) + (key & 0xff) : key & 0xffff;
  int16_t i = index[slot];
  return i < 0 ? nullptr : &table()[static_cast<size_t>(i)];
}

uint64_t Cp15::access(const Insn& in, bool is64, bool read, uint64_t value) {
  ArmCore& c = core_;
  const uint32_t key = in.imm;
  // TPIDRURO, read by every glibc thread-pointer access: kept off the table walk.
  if (!is64 && read && key == cp15_key(13, 0, 0, 3)) return c.st_.tls;
  const uint32_t crn = is64 ? key & 15 : key >> 12;  // HSTR.Tn: CRn, or CRm of MCRR/MRRC
  const Reg* r = find(is64, key);
  const bool pl0 = c.st_.mode == static_cast<uint8_t>(Mode::Usr);
  const bool hyp = c.st_.mode == ArmCore::kHyp;
  auto trap = [&] {
    uint32_t iss = c.trap_cond(in) | (uint32_t{in.rd} << 5) | (read ? 1u : 0u);
    if (is64) {
      iss |= ((key >> 4) & 15) << 16 | (uint32_t{in.ra} << 10) | ((key & 15) << 1);
    } else {
      iss |= (key & 7) << 17 | ((key >> 8) & 7) << 14 | (crn << 10) | ((key >> 4) & 15) << 1;
    }
    c.hyp_trap(is64 ? hsr_ec::kMcrrMrrcCp15 : hsr_ec::kMcrMrcCp15, iss, in);
  };
  auto hstr_traps = [&] { return crn != 4 && crn != 14 && (c.st_.cp15.hstr >> crn) & 1; };
  if (!r) {
    // An encoding the core does not implement: still HSTR's, from PL1 (PL0 would be undefined
    // first), else undefined.
    if (c.below_hyp() && !pl0 && hstr_traps()) {
      trap();
      return 0;
    }
    c.undefined(in);
  }
  uint8_t need = pl0   ? (read ? kPl0R : kPl0W)
                 : hyp ? (read ? kHypR : kHypW)
                       : (read ? kPl1R : kPl1W);
  // Not accessible at this level, or readable but not writable (or the reverse).
  if (!(r->access & need)) c.undefined(in);
  // PL0 access to the timer by CNTKCTL.
  const uint32_t kctl = c.st_.timer.cntkctl;
  if (pl0 && c.st_.system) {
    bool ok = true;
    switch (r->trap) {
      case kTimerFrq:
        ok = kctl & 3;
        break;
      case kTimerPct:
        ok = kctl & 1;
        break;
      case kTimerVct:
        ok = kctl & 2;
        break;
      case kTimerP:
        ok = kctl & (1u << 9);
        break;
      case kTimerV:
        ok = kctl & (1u << 8);
        break;
      default:
        break;
    }
    if (!ok) c.undefined(in);
  }
  // PL0 access to the PMU by PMUSERENR.EN.
  if (pl0 && (r->trap == kTrapPmu || r->trap == kTrapPmcr) && !(c.st_.pmu.userenr() & 1)) {
    c.undefined(in);
  }
  if (c.below_hyp()) {
    bool t = hstr_traps();
    const uint32_t hcr = c.st_.cp15.hcr;
    switch (r->trap) {
      case kTrapTvm:
        t = t || (hcr & (read ? ArmCore::kHcrTrvm : ArmCore::kHcrTvm));
        break;
      case kTrapTid1:
        t = t || (hcr & ArmCore::kHcrTid1);
        break;
      case kTrapTid2:
        t = t || (hcr & ArmCore::kHcrTid2);
        break;
      case kTrapTid3:
        t = t || (hcr & ArmCore::kHcrTid3);
        break;
      case kTrapTac:
        t = t || (hcr & ArmCore::kHcrTac);
        break;
      case kTrapTsw:
        t = t || (hcr & ArmCore::kHcrTsw);
        break;
      case kTrapTpc:
        t = t || (hcr & ArmCore::kHcrTpc);
        break;
      case kTrapTpu:
        t = t || (hcr & ArmCore::kHcrTpu);
        break;
      case kTrapTtlb:
        t = t || (hcr & ArmCore::kHcrTtlb);
        break;
      case kTrapTidcp:
        t = t || (hcr & ArmCore::kHcrTidcp);
        break;
      case kTrapPmu:
      case kTrapTpm:
        t = t || (c.st_.cp15.hdcr & Pmu::kHdcrTpm);
        break;
      case kTrapPmcr:
        t = t || (c.st_.cp15.hdcr & (Pmu::kHdcrTpm | Pmu::kHdcrTpmcr));
        break;
      case kTimerPct:
        t = t || !(c.st_.timer.cnthctl & 1);
        break;  // CNTHCTL.PL1PCTEN
      case kTimerP:
        t = t || !(c.st_.timer.cnthctl & 2);
        break;  // CNTHCTL.PL1PCEN
      default:
        break;
    }
    if (t) {
      trap();
      return 0;
    }
  }
  if (read) return r->read(c);
  r->write(c, value);
  return 0;
}

// CP14: ThumbEE's two registers, and the ARMv7.1 debug registers Linux's hw_breakpoint probes
// and resets (PL1 and Hyp only; PL0 reads DBGDIDR, DBGDRAR and DBGDSAR), with
// QEMU's cortex-a15 DBGDIDR (6 breakpoints, 4 watchpoints, v7.1): storage only, no debug event
// is ever raised. Anything else in CP14 is undefined.
uint32_t Cp15::cp14_access(const Insn& in, bool read, uint32_t v) {
  ArmCore& c = core_;
  const uint32_t crn = in.imm >> 12, opc1 = (in.imm >> 8) & 7, crm = (in.imm >> 4) & 15,
                 opc2 = in.imm & 7;
  const bool pl0 = c.st_.mode == static_cast<uint8_t>(Mode::Usr);
  if (!c.st_.system) c.undefined(in);
  // ThumbEE's TEECR and TEEHBR (ID_PFR0 says ThumbEE, as QEMU's cortex-a15): Linux switches
  // TEEHBR with each thread. TEEHBR is PL0's too unless TEECR.XED. ThumbEE state itself (ENTERX)
  // is not implemented.
  if (opc1 == 6 && crm == 0 && opc2 == 0 && (crn == 0 || crn == 1)) {
    if (crn == 0) {
      if (pl0) c.undefined(in);
      if (read) return c.st_.cp14.teecr;
      c.st_.cp14.teecr = v & 1;
      return 0;
    }
    if (pl0 && (c.st_.cp14.teecr & 1)) c.undefined(in);
    if (read) return c.st_.cp14.teehbr;
    c.st_.cp14.teehbr = v & ~3u;
    return 0;
  }
  // The trivial Jazelle implementation's JIDR, JOSCR and JMCR (PL1): read as zero, writes
  // ignored, as in QEMU 7.2.
  if (opc1 == 7 && crm == 0 && opc2 == 0 && crn <= 2) {
    if (pl0) c.undefined(in);
    return 0;
  }
  if (opc1 != 0) c.undefined(in);
  // PL0 may read DBGDIDR, DBGDRAR and DBGDSAR (as in QEMU 7.2), nothing else.
  if (pl0 && !(read && opc2 == 0 && crm == 0 && crn <= 2)) {
    c.undefined(in);
  }
  uint32_t* reg = nullptr;
  uint32_t value = 0;
  bool write_only = false;
  // The HDCR bit that traps the register to Hyp mode from PL0 and PL1 (with TDE).
  uint32_t hdcr_trap = ArmCore::kHdcrTda;
  if (crn == 0 && opc2 >= 4) {  // DBGBVR, DBGBCR, DBGWVR, DBGWCR
    if (opc2 == 4 && crm < 6)
      reg = &c.st_.cp14.bvr[crm];
    else if (opc2 == 5 && crm < 6)
      reg = &c.st_.cp14.bcr[crm];
    else if (opc2 == 6 && crm < 4)
      reg = &c.st_.cp14.wvr[crm];
    else if (opc2 == 7 && crm < 4)
      reg = &c.st_.cp14.wcr[crm];
    else
      c.undefined(in);
  } else if (crn == 0 && crm == 0 && opc2 == 0) {
    value = 0x3515f021;  // DBGDIDR
  } else if (crn == 0 && crm == 1 && opc2 == 0) {
    value = c.st_.cp14.dscr;  // DBGDSCRint
  } else if (crn == 0 && crm == 2 && opc2 == 2) {
    reg = &c.st_.cp14.dscr;  // DBGDSCRext: MDBGEN (15) and the rest read back
  } else if (crn == 0 && crm == 7 && opc2 == 0) {
    reg = &c.st_.cp14.vcr;  // DBGVCR
  } else if ((crn == 1 || crn == 2) && crm == 0 && opc2 == 0) {
    value = 0;  // DBGDRAR, DBGDSAR: no memory-mapped debug
    hdcr_trap = ArmCore::kHdcrTdra;
  } else if (crn == 1 && crm == 0 && opc2 == 4) {
    if (read) c.undefined(in);  // DBGOSLAR: write-only; the OS lock is not modelled
    write_only = true;
    hdcr_trap = ArmCore::kHdcrTdosa;
  } else if (crn == 1 && crm == 1 && opc2 == 4) {
    value = 0;  // DBGOSLSR: unlocked
    hdcr_trap = ArmCore::kHdcrTdosa;
  } else if (crn == 1 && crm == 3 && opc2 == 4) {
    reg = &c.st_.cp14.osdlr;  // DBGOSDLR
    hdcr_trap = ArmCore::kHdcrTdosa;
  } else if (crn == 1 && crm == 5 && opc2 == 4) {
    value = 0;  // DBGPRSR
  } else {
    c.undefined(in);
  }
  if (!read && !reg && !write_only) c.undefined(in);  // a read-only register
  // HDCR.TDA/TDRA/TDOSA (or TDE) trap a PL0 or PL1 access that would otherwise succeed to Hyp
  // mode, EC 0x05 with the ISS of a CP15 trap (Xen traps every debug register of its guests;
  // Linux's hw_breakpoint then finds that it cannot enable monitor mode, as on QEMU).
  if (c.below_hyp() && (c.st_.cp15.hdcr & (hdcr_trap | ArmCore::kHdcrTde))) {
    c.hyp_trap(hsr_ec::kMcrMrcCp14,
               c.trap_cond(in) | opc2 << 17 | opc1 << 14 | crn << 10 | uint32_t{in.rd} << 5 |
                   crm << 1 | (read ? 1u : 0u),
               in);
    return 0;
  }
  if (read) return reg ? *reg : value;
  if (reg) *reg = v;
  return 0;
}

std::optional<uint32_t> Cp15::read(uint32_t crn, uint32_t opc1, uint32_t crm, uint32_t opc2) {
  const Reg* r = find(false, cp15_key(crn, opc1, crm, opc2));
  if (!r || !r->read) return std::nullopt;
  return static_cast<uint32_t>(r->read(core_));
}

std::optional<uint64_t> Cp15::read64(uint32_t opc1, uint32_t crm) {
  const Reg* r = find(true, cp15_key64(opc1, crm));
  if (!r || !r->read) return std::nullopt;
  return r->read(core_);
}

bool Cp15::write(uint32_t crn, uint32_t opc1, uint32_t crm, uint32_t opc2, uint32_t v) {
  const Reg* r = find(false, cp15_key(crn, opc1, crm, opc2));
  if (!r || !r->write) return false;
  r->write(core_, v);
  return true;
}

bool Cp15::write64(uint32_t opc1, uint32_t crm, uint64_t v) {
  const Reg* r = find(true, cp15_key64(opc1, crm));
  if (!r || !r->write) return false;
  r->write(core_, v);
  return true;
}

std::vector<std::string> Cp15::register_names() {
  std::vector<std::string> out;
  for (const Reg& r : table()) {
    char buf[96];
    if (r.is64) {
      std::snprintf(buf, sizeof buf, "%s 64-bit opc1=%u crm=%u", r.name, (r.key >> 4) & 15,
                    r.key & 15);
    } else {
      std::snprintf(buf, sizeof buf, "%s crn=%u opc1=%u crm=%u opc2=%u", r.name, r.key >> 12,
                    (r.key >> 8) & 7, (r.key >> 4) & 15, r.key & 7);
    }
    out.emplace_back(buf);
  }
  return out;
}

}  // namespace vtoe::cpu::iss
