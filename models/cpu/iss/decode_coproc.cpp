// Coprocessor space, shared by A32 and T32: VFPv3-D16 (coprocessors 10 and 11) and MRC/MCR p15
// (the core implements the few CP15 registers it knows, see ArmCore::cp15_read).
#include "models/cpu/iss/insn.h"

namespace vtoe::cpu::iss {

namespace {

uint32_t bits(uint32_t v, int hi, int lo) { return (v >> lo) & ((2u << (hi - lo)) - 1); }
bool bit(uint32_t v, int n) { return (v >> n) & 1; }

Insn undef() {
  Insn i;
  i.op = Op::Undefined;
  i.cls = InsnClass::System;
  return i;
}

// VFP register number: Vx:X for singles, X:Vx for doubles.
uint8_t vreg(uint32_t w, int four, int one, bool dbl) {
  uint32_t v = bits(w, four + 3, four), x = bit(w, one);
  return static_cast<uint8_t>(dbl ? (x << 4) | v : (v << 1) | x);
}

Insn vfp(VfpOp op, bool dbl) {
  Insn i;
  i.op = Op::Vfp;
  i.sub = op;
  i.cls = InsnClass::Vfp;
  if (dbl) i.flags |= kFlagDouble;
  return i;
}

Insn vfp_data(uint32_t w) {
  bool dbl = bit(w, 8);
  uint32_t opc1 = (bit(w, 23) << 2) | bits(w, 21, 20);
  bool o = bit(w, 6);
  uint8_t vd = vreg(w, 12, 22, dbl), vn = vreg(w, 16, 7, dbl), vm = vreg(w, 0, 5, dbl);
  Insn i;
  static const VfpOp kOps[5][2] = {
      {kVmla, kVmls}, {kVnmls, kVnmla}, {kVmul, kVnmul}, {kVadd, kVsub}, {kVdiv, kVdiv}};
  if (opc1 < 5) {
    if (opc1 == 4 && o) return undef();
    i = vfp(kOps[opc1][o], dbl);
  } else if (opc1 != 7) {
    return undef();  // fused multiply-add is VFPv4
  } else if (!o) {   // VMOV (immediate)
    i = vfp(kVmovImm, dbl);
    vn = vm = 0;  // the immediate's bits
    uint32_t imm8 = (bits(w, 19, 16) << 4) | bits(w, 3, 0);
    uint32_t b6 = bit(imm8, 6), sign = imm8 >> 7;
    if (dbl) {
      i.imm = (sign << 31) | ((b6 ^ 1) << 30) | ((b6 ? 0xFFu : 0u) << 22) |
              (bits(imm8, 5, 4) << 20) | (bits(imm8, 3, 0) << 16);
    } else {
      i.imm = (sign << 31) | ((b6 ^ 1) << 30) | ((b6 ? 0x1Fu : 0u) << 25) |
              (bits(imm8, 5, 4) << 23) | (bits(imm8, 3, 0) << 19);
    }
  } else {
    uint32_t opc2 = bits(w, 19, 16);
    bool b7 = bit(w, 7);
    vn = 0;  // one-operand forms: bits 19:16 are opc2, not a register
    switch (opc2) {
      case 0:
        i = vfp(b7 ? kVabs : kVmovReg, dbl);
        break;
      case 1:
        i = vfp(b7 ? kVsqrt : kVneg, dbl);
        break;
      case 4:
        i = vfp(b7 ? kVcmpe : kVcmp, dbl);
        break;
      case 5:
        i = vfp(b7 ? kVcmpeZ : kVcmpZ, dbl);
        break;
      case 7:
        if (!b7) return undef();
        i = vfp(kVcvtFD, dbl);
        vd = vreg(w, 12, 22, !dbl);              // the destination has the other size
        if (!dbl && bit(w, 22)) return undef();  // d16-d31 do not exist
        break;
      case 8:
        i = vfp(kVcvtFromInt, dbl);
        i.shift_type = b7;
        vm = vreg(w, 0, 5, false);
        break;
      case 10:
      case 11:
      case 14:
      case 15: {  // between floating and fixed point (in place)
        i = vfp(kVcvtFixed, dbl);
        uint32_t size = b7 ? 32 : 16, imm5 = (bits(w, 3, 0) << 1) | bit(w, 5);
        if (imm5 > size) return undef();
        i.imm = size - imm5;
        i.shift_type = static_cast<uint8_t>((opc2 & 1) | ((opc2 >> 2) & 1) << 1 | b7 << 2);
        vm = vd;
        break;
      }
      case 12:
      case 13:
        i = vfp(kVcvtToInt, dbl);
        i.shift_type = static_cast<uint8_t>((opc2 & 1) | (b7 << 1));
        vd = vreg(w, 12, 22, false);
        break;
      default:
        return undef();  // fixed-point conversions, half precision
    }
  }
  i.rd = vd;
  i.rn = vn;
  i.rm = vm;
  // D16: only d0-d15 exist.
  if (dbl && (bit(w, 22) || bit(w, 7) || bit(w, 5))) {
    bool d_single = i.sub == kVcvtFD || i.sub == kVcvtToInt;
    bool m_single = i.sub == kVcvtFromInt || i.sub == kVcvtFixed;  // bit 5: immediate
    bool n_used = i.sub <= kVdiv;
    if ((bit(w, 22) && !d_single) || (bit(w, 5) && !m_single) || (bit(w, 7) && n_used)) {
      return undef();
    }
  }
  return i;
}

Insn vfp_transfer(uint32_t w) {
  Insn i;
  bool to_core = bit(w, 20);
  uint8_t rt = static_cast<uint8_t>(bits(w, 15, 12));
  if (!bit(w, 8)) {
    uint32_t a = bits(w, 23, 21);
    if (a == 0) {
      i = vfp(kVmovCoreS, false);
      i.rn = vreg(w, 16, 7, false);
      i.rd = rt;
      i.shift_type = to_core;
      return i;
    }
    if (a == 7) {
      i = vfp(to_core ? kVmrs : kVmsr, false);
      i.rn = static_cast<uint8_t>(bits(w, 19, 16));
      i.rd = rt;
      i.cls = InsnClass::System;
      return i;
    }
    return undef();
  }
  if (!bit(w, 23) && !bit(w, 22) && bits(w, 6, 5) == 0 && !bit(w, 7)) {
    i = vfp(kVmovCoreScalar, true);
    i.rm = static_cast<uint8_t>(bits(w, 19, 16));
    i.shift_amt = bit(w, 21);
    i.rd = rt;
    i.shift_type = to_core;
    return i;
  }
  return undef();  // Advanced SIMD lanes and VDUP
}

Insn vfp_load_store(uint32_t w) {
  bool dbl = bit(w, 8);
  uint32_t puw = (bits(w, 24, 23) << 1) | bit(w, 21);
  bool load = bit(w, 20);
  uint32_t imm8 = bits(w, 7, 0);
  Insn i;
  if ((puw & 6) == 0) {  // 64-bit transfers
    if (bits(w, 24, 21) != 2 || bits(w, 7, 6) != 0 || !bit(w, 4)) return undef();
    i = vfp(kVmovCore2, dbl);
    i.rd = static_cast<uint8_t>(bits(w, 15, 12));
    i.ra = static_cast<uint8_t>(bits(w, 19, 16));
    i.rm = vreg(w, 0, 5, dbl);
    if (dbl && bit(w, 5)) return undef();
    i.shift_type = load;
    return i;
  }
  uint8_t vd = vreg(w, 12, 22, dbl);
  if (dbl && bit(w, 22)) return undef();
  if ((puw & 5) == 4) {  // VLDR, VSTR
    i = vfp(load ? kVldr : kVstr, dbl);
    i.imm = imm8 << 2;
    i.flags |= kFlagP | (bit(w, 23) ? kFlagU : 0);
  } else if (puw == 2 || puw == 3 || puw == 5) {  // VLDM/VSTM IA, IA!, DB!
    i = vfp(load ? kVldm : kVstm, dbl);
    uint32_t n = dbl ? imm8 / 2 : imm8;
    if (n == 0 || (dbl && (imm8 & 1)) || vd + n > (dbl ? 16u : 32u)) return undef();
    i.imm = n;
    if (puw & 4) i.flags |= kFlagP;
    if (puw & 2) i.flags |= kFlagU;
    if (puw & 1) i.flags |= kFlagW;
  } else {
    return undef();
  }
  i.cls = load ? InsnClass::Load : InsnClass::Store;
  i.rd = vd;
  i.rn = static_cast<uint8_t>(bits(w, 19, 16));
  return i;
}

}  // namespace

Insn decode_coproc(uint32_t w, uint32_t addr, bool thumb) {
  (void)addr;
  (void)thumb;
  uint32_t cp = bits(w, 11, 8);
  if ((cp & 0xE) != 0xA) {
    // MRC/MCR p15: which registers exist, and in which modes, the core decides when it runs.
    // MRC/MCR p14: the debug registers (sub = 14).
    if ((w & 0x0F000010) == 0x0E000010 && (cp == 15 || cp == 14) && bits(w, 15, 12) != 15) {
      Insn i;
      i.op = bit(w, 20) ? Op::Mrc : Op::Mcr;
      i.sub = static_cast<uint8_t>(cp == 14 ? 14 : 0);
      i.rd = static_cast<uint8_t>(bits(w, 15, 12));
      i.imm = cp15_key(bits(w, 19, 16), bits(w, 23, 21), bits(w, 3, 0), bits(w, 7, 5));
      i.cls = InsnClass::System;
      return i;
    }
    // MRRC/MCRR p15 (TTBRs, PAR, the timer's counters and comparators).
    if ((w & 0x0FE00000) == 0x0C400000 && cp == 15 && bits(w, 15, 12) != 15 &&
        bits(w, 19, 16) != 15 &&
        (!bit(w, 20) || bits(w, 15, 12) != bits(w, 19, 16))) {  // MRRC: Rt != Rt2
      Insn i;
      i.op = bit(w, 20) ? Op::Mrrc : Op::Mcrr;
      i.rd = static_cast<uint8_t>(bits(w, 15, 12));
      i.ra = static_cast<uint8_t>(bits(w, 19, 16));
      i.imm = cp15_key64(bits(w, 7, 4), bits(w, 3, 0));
      i.cls = InsnClass::System;
      return i;
    }
    // MRRC/MCRR p15 (TTBRs, PAR, the timer's counters and comparators).
    if ((w & 0x0FE00000) == 0x0C400000 && cp == 15 && bits(w, 15, 12) != 15 &&
        bits(w, 19, 16) != 15 &&
        (!bit(w, 20) || bits(w, 15, 12) != bits(w, 19, 16))) {  // MRRC: Rt != Rt2
      Insn i;
      i.op = bit(w, 20) ? Op::Mrrc : Op::Mcrr;
      i.rd = static_cast<uint8_t>(bits(w, 15, 12));
      i.ra = static_cast<uint8_t>(bits(w, 19, 16));
      i.imm = cp15_key64(bits(w, 7, 4), bits(w, 3, 0));
      i.cls = InsnClass::System;
      return i;
    }
    return undef();
  }
  if (bits(w, 27, 25) == 6) return vfp_load_store(w);
  if (bits(w, 27, 24) == 14) return bit(w, 4) ? vfp_transfer(w) : vfp_data(w);
  return undef();
}

}  // namespace vtoe::cpu::iss
