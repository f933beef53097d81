// VFPv3-D16 execution. Arithmetic runs on the host's IEEE 754 binary32/binary64 (same results,
// rounding to the FPSCR mode); NaN results follow the ARM rules (operand NaN propagated and
// quietened, otherwise the default NaN), which differ from x86's.
#include <cfenv>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "models/cpu/iss/arm_core.h"

namespace vtoe::cpu::iss {

namespace {

template <typename F>
using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;

template <typename F>
Bits<F> to_bits(F f) {
  Bits<F> b;
  std::memcpy(&b, &f, sizeof f);
  return b;
}
template <typename F>
F from_bits(Bits<F> b) {
  F f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
template <typename F>
constexpr Bits<F> quiet_bit() {
  return static_cast<Bits<F>>(sizeof(F) == 4 ? 0x00400000ull : 0x0008000000000000ull);
}
template <typename F>
F default_nan() {
  return from_bits<F>(static_cast<Bits<F>>(sizeof(F) == 4 ? 0x7fc00000ull : 0x7ff8000000000000ull));
}
template <typename F>
bool is_snan(F f) {
  return std::isnan(f) && !(to_bits(f) & quiet_bit<F>());
}
template <typename F>
F quiet(F f) {
  return from_bits<F>(to_bits(f) | quiet_bit<F>());
}
// ARM's choice among NaN operands: the first signalling one, else the first quiet one. A
// signalling NaN operand is an Invalid Operation.
template <typename F>
F pick_nan(F a, F b) {
  if (is_snan(a) || is_snan(b)) std::feraiseexcept(FE_INVALID);
  if (is_snan(a)) return quiet(a);
  if (is_snan(b)) return quiet(b);
  return std::isnan(a) ? a : b;
}
template <typename F>
F fixnan(F r) {
  return std::isnan(r) ? default_nan<F>() : r;
}
template <typename F>
F neg(F f) {
  return from_bits<F>(to_bits(f) ^ (Bits<F>{1} << (sizeof(F) * 8 - 1)));
}
template <typename F>
F fmul(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return pick_nan(a, b);
  return fixnan(a * b);
}
template <typename F>
F fadd(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return pick_nan(a, b);
  return fixnan(a + b);
}

// Float to 32-bit integer as VCVT does: saturating and NaN -> 0 (Invalid Operation), Inexact
// when rounded.
template <typename F>
uint32_t to_int(F f, bool is_signed, bool toward_zero) {
  if (std::isnan(f)) {
    std::feraiseexcept(FE_INVALID);
    return 0;
  }
  double x = static_cast<double>(f);
  double d = toward_zero ? std::trunc(x) : std::nearbyint(x);
  double lo = is_signed ? -2147483648.0 : 0.0, hi = is_signed ? 2147483647.0 : 4294967295.0;
  if (d < lo || d > hi) {
    std::feraiseexcept(FE_INVALID);
    d = d < lo ? lo : hi;
  } else if (d != x) {
    std::feraiseexcept(FE_INEXACT);
  }
  return is_signed ? static_cast<uint32_t>(static_cast<int32_t>(d)) : static_cast<uint32_t>(d);
}

// FPSCR's cumulative exception bits from host FE_* flags.
uint32_t exception_bits(int e) {
  return ((e & FE_INVALID) ? 1u : 0u) | ((e & FE_DIVBYZERO) ? 2u : 0u) |
         ((e & FE_OVERFLOW) ? 4u : 0u) | ((e & FE_UNDERFLOW) ? 8u : 0u) |
         ((e & FE_INEXACT) ? 16u : 0u);
}

// VCMP raises Invalid Operation for a signalling NaN, VCMPE for any NaN.
template <typename F>
uint32_t compare_flags(F a, F b, bool quiet_nan_invalid) {
  if (std::isnan(a) || std::isnan(b)) {
    if (quiet_nan_invalid || is_snan(a) || is_snan(b)) std::feraiseexcept(FE_INVALID);
    return 0x3u << 28;  // unordered: C V
  }
  if (a == b) return 0x6u << 28;  // Z C
  if (a < b) return 0x8u << 28;   // N
  return 0x2u << 28;              // C
}

int host_rounding(uint32_t fpscr) {
  switch ((fpscr >> 22) & 3) {
    case 0:
      return FE_TONEAREST;
    case 1:
      return FE_UPWARD;
    case 2:
      return FE_DOWNWARD;
    default:
      return FE_TOWARDZERO;
  }
}

}  // namespace

// The cumulative exception flags live in the host's own sticky IEEE flags while the guest runs
// (no clearing and testing around every operation): FPSCR reads merge them in, FPSCR writes
// clear them. Around run() and step() the host's environment is saved and restored, so the
// simulator's own arithmetic (and a SystemC kernel around it) never sees the guest's rounding
// mode or flags.
void ArmCore::set_fpscr(uint32_t v) {
  // Kept: NZCV, AHP/DN/FZ, rounding mode, stride/len (must be 0 on Linux), cumulative flags.
  st_.fpscr = v & 0xffff9f9fu;
  st_.fp_flags = 0;
  if (in_guest_fp_) {
    std::feclearexcept(FE_ALL_EXCEPT);
    std::fesetround(host_rounding(st_.fpscr));
  }
}

uint32_t ArmCore::fpscr() const {
  return st_.fpscr | exception_bits(in_guest_fp_ ? std::fetestexcept(FE_ALL_EXCEPT) : st_.fp_flags);
}

void ArmCore::enter_guest_fp() {
  host_fp_flags_ = std::fetestexcept(FE_ALL_EXCEPT);
  host_rounding_ = std::fegetround();
  std::feclearexcept(FE_ALL_EXCEPT);
  if (st_.fp_flags) std::feraiseexcept(st_.fp_flags);
  std::fesetround(host_rounding(st_.fpscr));
  in_guest_fp_ = true;
}

void ArmCore::leave_guest_fp() {
  in_guest_fp_ = false;
  st_.fp_flags = std::fetestexcept(FE_ALL_EXCEPT);
  std::feclearexcept(FE_ALL_EXCEPT);
  if (host_fp_flags_) std::feraiseexcept(host_fp_flags_);
  std::fesetround(host_rounding_);
}

void ArmCore::execute_vfp(const Insn& in) {
  if (st_.system && !check_vfp_enabled(in)) return;  // trapped to Hyp mode
  if (!in_guest_fp_) enter_guest_fp();  // (GuestFpScope: left at the end of the run)
  execute_vfp_op(in, in.flags & kFlagDouble);
}

// CheckVFPEnabled (ARM ARM B1.11.1, B4.1.40): CPACR's cp10/cp11 access (not in Hyp mode), then
// HCPTR.TCP10/TCP11 (a Hyp trap from the other modes, undefined in Hyp mode), then FPEXC.EN,
// which the system registers (FPSID, MVFR0/1, FPEXC) do not need.
bool ArmCore::check_vfp_enabled(const Insn& in) {
  // VMRS/VMSR of a system register other than FPSCR from PL0 is undefined before any Hyp trap
  // (as QEMU 7.2 takes it).
  if ((in.sub == kVmrs || in.sub == kVmsr) && in.rn != 1 &&
      st_.mode == static_cast<uint8_t>(Mode::Usr)) {
    undefined(in);
  }
  const uint32_t cp10 = (st_.cp15.cpacr >> 20) & 3;
  if (st_.mode != kHyp) {
    const bool pl0 = st_.mode == static_cast<uint8_t>(Mode::Usr);
    if (cp10 == 0 || cp10 == 2 || (pl0 && cp10 != 3)) undefined(in);
  }
  if (st_.has_hyp && (st_.cp15.hcptr & (3u << 10))) {
    // From Hyp mode: the Undefined Instruction vector (HVBAR + 0x04) with the trap's syndrome
    // (EC 0x07), as QEMU 7.2 takes it.
    hyp_trap(hsr_ec::kCp10, trap_cond(in) | 0xa, in, 0x04);
    return false;
  }
  const bool sysreg = (in.sub == kVmrs || in.sub == kVmsr) && in.rn != 1;
  if (!sysreg && !(st_.cp15.fpexc & (1u << 30))) undefined(in);
  return true;
}

// VMRS of FPSID, MVFR0/1, FPEXC (PL1 and Hyp mode). The values describe what the ISS implements,
// VFPv3-D16 without Advanced SIMD or VFPv4 (QEMU's cortex-a15 reports NEON and VFPv4, which
// would make Linux and glibc use instructions the ISS does not have).
uint32_t ArmCore::vfp_system_register(const Insn& in) {
  if (!st_.system || st_.mode == static_cast<uint8_t>(Mode::Usr)) undefined(in);
  // From PL1, HCR.TID0 traps FPSID and HCR.TID3 MVFR0/1 to Hyp mode (EC 0x08, the ISS of an
  // MRC p10, 7, Rt, cN, c0, 0 with COND 0xE, as QEMU 7.2 reports it); Xen sets TID3 for its
  // guests and emulates them.
  const uint32_t hcr = st_.cp15.hcr;
  if (below_hyp() &&
      ((in.rn == 0 && (hcr & kHcrTid0)) || ((in.rn == 6 || in.rn == 7) && (hcr & kHcrTid3)))) {
    hyp_trap(hsr_ec::kMrcCp10Id,
             (1u << 24) | (0xEu << 20) | (7u << 14) | (uint32_t{in.rn} << 10) |
                 (uint32_t{in.rd} << 5) | 1u,
             in);
    return 0;
  }
  switch (in.rn) {
    case 0:
      return 0x410430f0;  // FPSID: ARM, VFPv3+ subarchitecture, as QEMU's cortex-a15
    case 6:
      return 0x00000000;  // MVFR1: no Advanced SIMD, no half precision, no fused MAC
    case 7:
      return 0x10110221;  // MVFR0: 16 double registers, single, double, divide, sqrt
    case 8:
      return st_.cp15.fpexc;
    default:
      undefined(in);
  }
}

void ArmCore::execute_vfp_op(const Insn& in, bool dbl) {
  auto getf = [&](int r) { return from_bits<float>(st_.s[r]); };
  auto setf = [&](int r, float f) { st_.s[r] = to_bits(f); };
  auto getd = [&](int r) { return from_bits<double>(dreg(r)); };
  auto setd = [&](int r, double f) { set_dreg(r, to_bits(f)); };

  // Two-operand arithmetic in either precision.
  auto arith = [&](auto zero) {
    using F = decltype(zero);
    auto get = [&](int r) -> F {
      if constexpr (sizeof(F) == 4)
        return getf(r);
      else
        return getd(r);
    };
    auto set = [&](int r, F f) {
      if constexpr (sizeof(F) == 4)
        setf(r, f);
      else
        setd(r, f);
    };
    F d = get(in.rd), n = get(in.rn), m = get(in.rm);
    switch (in.sub) {
      case kVmla:
        set(in.rd, fadd(d, fmul(n, m)));
        return;
      case kVmls:
        set(in.rd, fadd(d, neg(fmul(n, m))));
        return;
      case kVnmls:
        set(in.rd, fadd(neg(d), fmul(n, m)));
        return;
      case kVnmla:
        set(in.rd, fadd(neg(d), neg(fmul(n, m))));
        return;
      case kVmul:
        set(in.rd, fmul(n, m));
        return;
      case kVnmul:
        set(in.rd, neg(fmul(n, m)));
        return;
      case kVadd:
        set(in.rd, fadd(n, m));
        return;
      case kVsub:  // FPSub: NaN operands propagate as they are (not negated)
        set(in.rd, (std::isnan(n) || std::isnan(m)) ? pick_nan(n, m) : fixnan(n - m));
        return;
      case kVdiv:
        set(in.rd, (std::isnan(n) || std::isnan(m)) ? pick_nan(n, m) : fixnan(n / m));
        return;
      case kVmovReg:
        set(in.rd, m);
        return;
      case kVabs:
        set(in.rd, std::signbit(m) ? neg(m) : m);
        return;
      case kVneg:
        set(in.rd, neg(m));
        return;
      case kVsqrt:
        set(in.rd, std::isnan(m) ? pick_nan(m, m) : fixnan(std::sqrt(m)));
        return;
      case kVcmp:
      case kVcmpe:
        st_.fpscr = (st_.fpscr & 0x0fffffffu) | compare_flags(d, m, in.sub == kVcmpe);
        return;
      case kVcmpZ:
      case kVcmpeZ:
        st_.fpscr = (st_.fpscr & 0x0fffffffu) | compare_flags(d, F{0}, in.sub == kVcmpeZ);
        return;
      default:
        return;
    }
  };

  switch (in.sub) {
    case kVmovImm:
      if (dbl)
        set_dreg(in.rd, uint64_t{in.imm} << 32);
      else
        st_.s[in.rd] = in.imm;
      return;
    case kVcvtFD:
      if (dbl)
        setf(in.rd, static_cast<float>(getd(in.rm)));
      else
        setd(in.rd, static_cast<double>(getf(in.rm)));
      return;
    case kVcvtFromInt: {
      uint32_t v = st_.s[in.rm];
      bool sgn = in.shift_type;
      auto i = static_cast<int32_t>(v);
      if (dbl)
        setd(in.rd, sgn ? static_cast<double>(i) : static_cast<double>(v));
      else
        setf(in.rd, sgn ? static_cast<float>(i) : static_cast<float>(v));
      return;
    }
    case kVcvtToInt: {
      bool sgn = in.shift_type & 1, rz = in.shift_type & 2;
      st_.s[in.rd] = dbl ? to_int(getd(in.rm), sgn, rz) : to_int(getf(in.rm), sgn, rz);
      return;
    }
    case kVcvtFixed: {
      bool uns = in.shift_type & 1, to_fixed = in.shift_type & 2;
      int size = (in.shift_type & 4) ? 32 : 16;
      double scale = std::ldexp(1.0, static_cast<int>(in.imm));
      if (to_fixed) {
        double x = dbl ? getd(in.rd) : static_cast<double>(getf(in.rd));
        int64_t r = 0;
        std::fexcept_t before;
        std::fegetexceptflag(&before, FE_ALL_EXCEPT);
        if (!std::isnan(x)) {
          double scaled = x * scale, t = std::trunc(scaled);
          double lo = uns ? 0.0 : -std::ldexp(1.0, size - 1);
          double hi = uns ? std::ldexp(1.0, size) - 1 : std::ldexp(1.0, size - 1) - 1;
          r = static_cast<int64_t>(t < lo ? lo : t > hi ? hi : t);
          std::fesetexceptflag(&before, FE_ALL_EXCEPT);  // only what the conversion raises
          if (t < lo || t > hi)
            std::feraiseexcept(FE_INVALID);
          else if (t != scaled)
            std::feraiseexcept(FE_INEXACT);
        } else {
          std::feraiseexcept(FE_INVALID);
        }
        if (dbl)
          set_dreg(in.rd, static_cast<uint64_t>(r));  // sign-extended to 64 bits
        else
          st_.s[in.rd] = static_cast<uint32_t>(r);
      } else {
        uint32_t v = dbl ? static_cast<uint32_t>(dreg(in.rd)) : st_.s[in.rd];
        double x;
        if (size == 16)
          x = uns ? (v & 0xffff) : static_cast<int16_t>(v & 0xffff);
        else
          x = uns ? static_cast<double>(v) : static_cast<double>(static_cast<int32_t>(v));
        x /= scale;  // exact: a power of two
        if (dbl)
          setd(in.rd, x);
        else
          setf(in.rd, static_cast<float>(x));
      }
      return;
    }
    case kVmovCoreS:
      if (in.shift_type)
        write_reg(in.rd, st_.s[in.rn]);
      else
        st_.s[in.rn] = st_.r[in.rd];
      return;
    case kVmovCoreScalar:
      if (in.shift_type)
        write_reg(in.rd, st_.s[2 * in.rm + in.shift_amt]);
      else
        st_.s[2 * in.rm + in.shift_amt] = st_.r[in.rd];
      return;
    case kVmovCore2: {
      int lo = dbl ? 2 * in.rm : in.rm;
      if (lo + 1 > 31) undefined(in);
      if (in.shift_type) {
        st_.r[in.rd] = st_.s[lo];
        st_.r[in.ra] = st_.s[lo + 1];
      } else {
        st_.s[lo] = st_.r[in.rd];
        st_.s[lo + 1] = st_.r[in.ra];
      }
      return;
    }
    case kVmrs:
      if (in.rn != 1) {  // only FPSCR is readable in user mode
        const uint8_t mode = st_.mode;
        const uint32_t v = vfp_system_register(in);
        if (st_.mode == mode) st_.r[in.rd] = v;  // a read trapped to Hyp mode writes nothing
        return;
      }
      if (in.rd == 15)
        set_nzcv(st_.fpscr);
      else
        st_.r[in.rd] = fpscr();
      return;
    case kVmsr:
      if (in.rn != 1) {
        // FPEXC is the only writable one, and only above PL0.
        if (in.rn != 8 || st_.mode == static_cast<uint8_t>(Mode::Usr)) undefined(in);
        st_.cp15.fpexc = st_.r[in.rd] & 0x60000000u;  // EX is never set: no trapped exceptions
        return;
      }
      set_fpscr(st_.r[in.rd]);
      return;
    case kVldr:
    case kVstr: {
      uint32_t base = in.rn == 15 ? st_.r[15] & ~3u : st_.r[in.rn];
      uint32_t a = (in.flags & kFlagU) ? base + in.imm : base - in.imm;
      check_aligned(a, 4, in.sub == kVstr);
      int first = dbl ? 2 * in.rd : in.rd, words = dbl ? 2 : 1;
      for (int w = 0; w < words; ++w) {
        if (in.sub == kVldr)
          st_.s[first + w] = rd<uint32_t>(a + 4 * w);
        else
          wr<uint32_t>(a + 4 * w, st_.s[first + w]);
      }
      return;
    }
    case kVldm:
    case kVstm: {
      uint32_t words = in.imm * (dbl ? 2 : 1);
      uint32_t base = st_.r[in.rn];
      uint32_t a = (in.flags & kFlagU) ? base : base - 4 * words;
      check_aligned(a, 4, in.sub == kVstm);
      int first = dbl ? 2 * in.rd : in.rd;
      for (uint32_t w = 0; w < words; ++w) {
        if (in.sub == kVldm)
          st_.s[first + w] = rd<uint32_t>(a + 4 * w);
        else
          wr<uint32_t>(a + 4 * w, st_.s[first + w]);
      }
      if (in.flags & kFlagW)
        st_.r[in.rn] = (in.flags & kFlagU) ? base + 4 * words : base - 4 * words;
      return;
    }
    default:
      if (dbl)
        arith(0.0);
      else
        arith(0.0f);
      return;
  }
}

}  // namespace vtoe::cpu::iss
