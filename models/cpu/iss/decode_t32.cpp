// T32 (Thumb-2) decoder: 16-bit and 32-bit encodings, following the ARMv7-A ARM, section A6.
#include "models/cpu/iss/insn.h"

namespace vtoe::cpu::iss {

namespace {

uint32_t bits(uint32_t v, int hi, int lo) { return (v >> lo) & ((2u << (hi - lo)) - 1); }
bool bit(uint32_t v, int n) { return (v >> n) & 1; }
uint8_t r3(uint32_t v, int lo) { return static_cast<uint8_t>((v >> lo) & 7); }
uint8_t r4(uint32_t v, int lo) { return static_cast<uint8_t>((v >> lo) & 15); }

Insn undef() {
  Insn i;
  i.op = Op::Undefined;
  i.cls = InsnClass::System;
  return i;
}

Insn dp(uint8_t op, uint8_t rd, uint8_t rn, uint8_t flags) {
  Insn i;
  i.op = Op::DataProc;
  i.sub = op;
  i.rd = rd;
  i.rn = rn;
  i.flags = flags;
  return i;
}

Insn dp_imm(uint8_t op, uint8_t rd, uint8_t rn, uint32_t imm, uint8_t flags) {
  Insn i = dp(op, rd, rn, flags);
  i.opnd = kOpImm;
  i.imm = imm;
  return i;
}

Insn dp_reg(uint8_t op, uint8_t rd, uint8_t rn, uint8_t rm, uint8_t flags, uint8_t type = kLsl,
            uint8_t amt = 0) {
  Insn i = dp(op, rd, rn, flags);
  i.opnd = kOpRegImm;
  i.rm = rm;
  i.shift_type = type;
  i.shift_amt = amt;
  return i;
}

Insn ls(uint8_t op, uint8_t rt, uint8_t rn, uint32_t imm, uint8_t flags = kFlagP | kFlagU) {
  Insn i;
  i.op = Op::LoadStore;
  i.sub = op;
  i.rd = rt;
  i.rn = rn;
  i.imm = imm;
  i.flags = flags;
  i.cls = op >= kLdr ? InsnClass::Load : InsnClass::Store;
  return i;
}

Insn multi(bool load, uint8_t rn, uint32_t list, uint8_t flags) {
  Insn i;
  i.op = Op::LoadStoreMulti;
  i.sub = load;
  i.rn = rn;
  i.imm = list;
  i.flags = flags;
  i.cls = load ? InsnClass::LoadMulti : InsnClass::StoreMulti;
  if (list == 0) return undef();
  return i;
}

Insn branch(uint32_t target, uint8_t sub, uint8_t cond = 14) {
  Insn i;
  i.op = Op::Branch;
  i.sub = sub;
  i.imm = target;
  i.cond = cond;
  i.cls = InsnClass::Branch;
  return i;
}

void imm_shift(Insn& i, uint32_t type, uint32_t imm5) {
  i.shift_type = static_cast<uint8_t>(type);
  i.shift_amt = static_cast<uint8_t>(imm5);
  if ((type == kLsr || type == kAsr) && imm5 == 0) i.shift_amt = 32;
  if (type == kRor && imm5 == 0) i.shift_type = kRrx;
}

Insn nop() {
  Insn i;
  i.op = Op::Nop;
  i.cls = InsnClass::Nop;
  return i;
}

Insn t16(uint32_t h, uint32_t addr) {
  constexpr uint8_t s = kFlagSNotIt;
  uint32_t pc = addr + 4;
  switch (h >> 12) {
    case 0:
    case 1: {
      uint32_t op = bits(h, 12, 11);
      if (op < 3) {  // LSL LSR ASR (imm); LSL #0 is MOVS
        Insn i = dp_reg(kMov, r3(h, 0), 0, r3(h, 3), s);
        imm_shift(i, op, bits(h, 10, 6));
        return i;
      }
      uint8_t rd = r3(h, 0), rn = r3(h, 3);
      uint8_t o = bit(h, 9) ? kSub : kAdd;
      if (bit(h, 10)) return dp_imm(o, rd, rn, bits(h, 8, 6), s);
      return dp_reg(o, rd, rn, r3(h, 6), s);
    }
    case 2:
    case 3: {
      uint8_t rd = r3(h, 8);
      uint32_t imm = bits(h, 7, 0);
      switch (bits(h, 12, 11)) {
        case 0:
          return dp_imm(kMov, rd, 0, imm, s);
        case 1:
          return dp_imm(kCmp, 0, rd, imm, kFlagS);
        case 2:
          return dp_imm(kAdd, rd, rd, imm, s);
        default:
          return dp_imm(kSub, rd, rd, imm, s);
      }
    }
    case 4:
      if (bits(h, 11, 10) == 0) {  // data processing
        uint8_t rdn = r3(h, 0), rm = r3(h, 3);
        switch (bits(h, 9, 6)) {
          case 0:
            return dp_reg(kAnd, rdn, rdn, rm, s);
          case 1:
            return dp_reg(kEor, rdn, rdn, rm, s);
          case 2:
          case 3:
          case 4:
          case 7: {
            static const uint8_t kType[8] = {0, 0, kLsl, kLsr, kAsr, 0, 0, kRor};
            Insn i = dp(kMov, rdn, 0, s);
            i.opnd = kOpRegReg;
            i.rm = rdn;
            i.rs = rm;
            i.shift_type = kType[bits(h, 9, 6)];
            return i;
          }
          case 5:
            return dp_reg(kAdc, rdn, rdn, rm, s);
          case 6:
            return dp_reg(kSbc, rdn, rdn, rm, s);
          case 8:
            return dp_reg(kTst, 0, rdn, rm, kFlagS);
          case 9:
            return dp_imm(kRsb, rdn, rm, 0, s);
          case 10:
            return dp_reg(kCmp, 0, rdn, rm, kFlagS);
          case 11:
            return dp_reg(kCmn, 0, rdn, rm, kFlagS);
          case 12:
            return dp_reg(kOrr, rdn, rdn, rm, s);
          case 13: {
            Insn i;
            i.op = Op::Mul;
            i.rd = rdn;
            i.rn = rm;
            i.rm = rdn;
            i.ra = 15;
            i.flags = s;
            i.cls = InsnClass::Multiply;
            return i;
          }
          case 14:
            return dp_reg(kBic, rdn, rdn, rm, s);
          default:
            return dp_reg(kMvn, rdn, 0, rm, s);
        }
      }
      if (bits(h, 11, 10) == 1) {  // special data, branch and exchange
        uint8_t rdn = static_cast<uint8_t>(r3(h, 0) | (bit(h, 7) << 3)), rm = r4(h, 3);
        switch (bits(h, 9, 8)) {
          case 0:
            return dp_reg(kAdd, rdn, rdn, rm, 0);
          case 1:
            return dp_reg(kCmp, 0, rdn, rm, kFlagS);
          case 2:
            return dp_reg(kMov, rdn, 0, rm, 0);
          default: {
            Insn i;
            i.op = Op::BranchReg;
            i.sub = bit(h, 7);
            i.rm = rm;
            i.cls = InsnClass::Branch;
            return i;
          }
        }
      }
      // LDR (literal)
      return ls(kLdr, r3(h, 8), 15, bits(h, 7, 0) << 2);
    case 5: {
      static const uint8_t kOps[8] = {kStr, kStrh, kStrb, kLdrsb, kLdr, kLdrh, kLdrb, kLdrsh};
      Insn i = ls(kOps[bits(h, 11, 9)], r3(h, 0), r3(h, 3), 0);
      i.flags |= kFlagRegOff;
      i.rm = r3(h, 6);
      return i;
    }
    case 6:
      return ls(bit(h, 11) ? kLdr : kStr, r3(h, 0), r3(h, 3), bits(h, 10, 6) << 2);
    case 7:
      return ls(bit(h, 11) ? kLdrb : kStrb, r3(h, 0), r3(h, 3), bits(h, 10, 6));
    case 8:
      return ls(bit(h, 11) ? kLdrh : kStrh, r3(h, 0), r3(h, 3), bits(h, 10, 6) << 1);
    case 9:
      return ls(bit(h, 11) ? kLdr : kStr, r3(h, 8), 13, bits(h, 7, 0) << 2);
    case 10:
      if (!bit(h, 11)) {  // ADR: a constant once the address is known
        Insn i;
        i.op = Op::Movw;
        i.rd = r3(h, 8);
        i.imm = (pc & ~3u) + (bits(h, 7, 0) << 2);
        return i;
      }
      return dp_imm(kAdd, r3(h, 8), 13, bits(h, 7, 0) << 2, 0);
    case 11:
      switch (bits(h, 11, 8)) {
        case 0:
          return dp_imm(bit(h, 7) ? kSub : kAdd, 13, 13, bits(h, 6, 0) << 2, 0);
        case 1:
        case 3:
        case 9:
        case 11: {
          Insn i;
          i.op = Op::Cbz;
          i.sub = bit(h, 11);
          i.rn = r3(h, 0);
          i.imm = pc + ((bit(h, 9) << 6) | (bits(h, 7, 3) << 1));
          i.cls = InsnClass::Branch;
          return i;
        }
        case 2: {
          static const uint8_t kExt[4] = {kSxth, kSxtb, kUxth, kUxtb};
          Insn i;
          i.op = Op::Extend;
          i.sub = kExt[bits(h, 7, 6)];
          i.rd = r3(h, 0);
          i.rm = r3(h, 3);
          i.rn = 15;
          return i;
        }
        case 6: {
          if ((h & 0xFFE8) != 0xB660) return undef();  // CPSIE / CPSID (SETEND is not here)
          Insn i;
          i.op = Op::Cps;
          i.sub = bit(h, 4) ? 4 : 2;
          i.imm = bits(h, 2, 0) << 6;
          i.cls = InsnClass::System;
          return i;
        }
        case 4:
        case 5:
          return multi(false, 13, bits(h, 7, 0) | (bit(h, 8) << 14), kFlagP | kFlagW);
        case 10: {
          if (bits(h, 7, 6) == 2) return undef();
          static const uint8_t kRev[4] = {0, 1, 0, 2};
          Insn i;
          i.op = Op::Rev;
          i.sub = kRev[bits(h, 7, 6)];
          i.rd = r3(h, 0);
          i.rm = r3(h, 3);
          return i;
        }
        case 12:
        case 13:
          return multi(true, 13, bits(h, 7, 0) | (bit(h, 8) << 15), kFlagU | kFlagW);
        case 14: {  // BKPT #imm8
          Insn i;
          i.op = Op::Bkpt;
          i.imm = bits(h, 7, 0);
          i.cls = InsnClass::System;
          return i;
        }
        case 15: {
          if (bits(h, 3, 0) == 0) {
            if (bits(h, 7, 4) == 2 || bits(h, 7, 4) == 3) {  // WFE, WFI
              Insn i;
              i.op = Op::Wfi;
              i.sub = bits(h, 7, 4) == 2;
              i.cls = InsnClass::System;
              return i;
            }
            return nop();
          }
          if (bits(h, 7, 4) == 15) return undef();
          Insn i;
          i.op = Op::It;
          i.imm = bits(h, 7, 0);
          i.cls = InsnClass::System;
          return i;
        }
        default:
          return undef();
      }
    case 12: {
      uint8_t rn = r3(h, 8);
      uint32_t list = bits(h, 7, 0);
      bool load = bit(h, 11);
      uint8_t w = (load && (list >> rn) & 1) ? 0 : kFlagW;
      return multi(load, rn, list, kFlagU | w);
    }
    case 13: {
      uint32_t cond = bits(h, 11, 8);
      if (cond == 14) return undef();
      if (cond == 15) {
        Insn i;
        i.op = Op::Svc;
        i.imm = bits(h, 7, 0);
        i.cls = InsnClass::System;
        return i;
      }
      int32_t off = static_cast<int8_t>(bits(h, 7, 0)) * 2;
      return branch(pc + static_cast<uint32_t>(off), 0, static_cast<uint8_t>(cond));
    }
    default: {  // 11100: B
      int32_t off = static_cast<int32_t>(bits(h, 10, 0) << 21) >> 20;
      return branch(pc + static_cast<uint32_t>(off), 0);
    }
  }
}

uint32_t thumb_expand_imm(uint32_t imm12, uint8_t& carry) {
  uint32_t v = bits(imm12, 7, 0);
  carry = 2;
  if (bits(imm12, 11, 10) == 0) {
    switch (bits(imm12, 9, 8)) {
      case 0:
        return v;
      case 1:
        return v | (v << 16);
      case 2:
        return (v << 8) | (v << 24);
      default:
        return v | (v << 8) | (v << 16) | (v << 24);
    }
  }
  uint32_t unrot = 0x80 | bits(imm12, 6, 0), rot = bits(imm12, 11, 7);
  uint32_t r = (unrot >> rot) | (unrot << (32 - rot));
  carry = static_cast<uint8_t>(r >> 31);
  return r;
}

// The op field shared by the modified-immediate and shifted-register data-processing forms.
Insn t32_dp(uint32_t op, bool s, uint8_t rn, uint8_t rd) {
  static const int8_t kOps[16] = {kAnd, kBic, kOrr, kOrn, kEor, -1,   -1,   -1,
                                  kAdd, -1,   kAdc, kSbc, -1,   kSub, kRsb, -1};
  int o = kOps[op];
  if (o < 0) return undef();
  if (rd == 15 && s) {
    if (o == kAnd)
      o = kTst;
    else if (o == kEor)
      o = kTeq;
    else if (o == kAdd)
      o = kCmn;
    else if (o == kSub)
      o = kCmp;
    else
      return undef();
  }
  if (rn == 15) {
    if (o == kOrr)
      o = kMov;
    else if (o == kOrn)
      o = kMvn;
    else
      return undef();
  }
  return dp(static_cast<uint8_t>(o), rd, rn, s ? kFlagS : 0);
}

Insn t32_load_store_single(uint32_t h1, uint32_t h2) {
  uint32_t size = bits(h1, 6, 5);
  bool load = bit(h1, 4), sign = bit(h1, 8);
  uint8_t rn = r4(h1, 0), rt = r4(h2, 12);
  if (size == 3 || (!load && sign) || (sign && size == 2)) return undef();
  static const uint8_t kLoad[2][3] = {{kLdrb, kLdrh, kLdr}, {kLdrsb, kLdrsh, 0}};
  static const uint8_t kStore[3] = {kStrb, kStrh, kStr};
  uint8_t op = load ? kLoad[sign][size] : kStore[size];
  if (load && rt == 15 && size < 2) return nop();  // PLD, PLI
  if (rn == 15) {
    if (!load) return undef();
    return ls(op, rt, 15, bits(h2, 11, 0), kFlagP | (bit(h1, 7) ? kFlagU : 0));
  }
  if (bit(h1, 7)) return ls(op, rt, rn, bits(h2, 11, 0));
  if (bit(h2, 11)) {
    uint8_t f = 0;
    if (bit(h2, 10)) f |= kFlagP;
    if (bit(h2, 9)) f |= kFlagU;
    if (bit(h2, 8)) f |= kFlagW;
    if (!(f & kFlagP)) f |= kFlagW;  // post-indexed
    if (!(f & (kFlagP | kFlagW))) return undef();
    Insn i = ls(op, rt, rn, bits(h2, 7, 0), f);
    if (bits(h2, 11, 8) == 0xE) i.rs = 1;  // LDRT, STRT, ...: PL0's permissions, no write-back
    return i;
  }
  if (bits(h2, 11, 6) != 0) return undef();
  Insn i = ls(op, rt, rn, 0);
  i.flags |= kFlagRegOff;
  i.rm = r4(h2, 0);
  i.shift_type = kLsl;
  i.shift_amt = static_cast<uint8_t>(bits(h2, 5, 4));
  return i;
}

Insn t32_dual_excl_table(uint32_t h1, uint32_t h2, uint32_t addr) {
  uint32_t op1 = bits(h1, 8, 7), op2 = bits(h1, 5, 4), op3 = bits(h2, 7, 4);
  uint8_t rn = r4(h1, 0), rt = r4(h2, 12), rt2 = r4(h2, 8);
  Insn i;
  if (op1 == 0 && op2 < 2) {  // STREX, LDREX
    i.op = op2 ? Op::LoadEx : Op::StoreEx;
    i.sub = 4;
    i.rn = rn;
    i.imm = bits(h2, 7, 0) << 2;
    if (op2) {
      i.rd = rt;
      i.cls = InsnClass::Load;
    } else {
      i.rd = rt2;
      i.rm = rt;
      i.cls = InsnClass::Store;
    }
    return i;
  }
  if (op1 == 1 && op2 < 2) {
    if (op2 == 1 && op3 < 2) {  // TBB, TBH
      i.op = Op::TableBranch;
      i.sub = static_cast<uint8_t>(op3);
      i.rn = rn;
      i.rm = r4(h2, 0);
      i.cls = InsnClass::Branch;
      return i;
    }
    static const uint8_t kSize[4] = {1, 2, 0, 8};
    if (op3 < 4 || op3 == 6 || op3 > 7) return undef();
    i.sub = kSize[op3 - 4];
    i.rn = rn;
    if (op2) {
      i.op = Op::LoadEx;
      i.rd = rt;
      i.ra = rt2;
      i.cls = InsnClass::Load;
    } else {
      i.op = Op::StoreEx;
      i.rd = r4(h2, 0);
      i.rm = rt;
      i.ra = rt2;
      i.cls = InsnClass::Store;
    }
    return i;
  }
  // LDRD, STRD (immediate, literal)
  uint8_t f = 0;
  if (bit(h1, 8)) f |= kFlagP;
  if (bit(h1, 7)) f |= kFlagU;
  if (bit(h1, 5)) f |= kFlagW;
  if (!(f & kFlagP)) f |= kFlagW;
  i = ls(bit(h1, 4) ? kLdrd : kStrd, rt, rn, bits(h2, 7, 0) << 2, f);
  i.ra = rt2;
  (void)addr;
  return i;
}

Insn t32_data_reg(uint32_t h1, uint32_t h2) {
  uint32_t op1 = bits(h1, 7, 4), op2 = bits(h2, 7, 4);
  uint8_t rn = r4(h1, 0), rd = r4(h2, 8), rm = r4(h2, 0);
  Insn i;
  i.rd = rd;
  i.rn = rn;
  i.rm = rm;
  if (op1 < 8 && op2 == 0) {  // shifts by register
    i = dp(kMov, rd, 0, bit(h1, 4) ? kFlagS : 0);
    i.opnd = kOpRegReg;
    i.rm = rn;
    i.rs = rm;
    i.shift_type = static_cast<uint8_t>(bits(h1, 6, 5));
    return i;
  }
  if (op1 < 6 && (op2 & 8)) {  // extend and add
    static const uint8_t kExt[6] = {kSxth, kUxth, kSxtb16, kUxtb16, kSxtb, kUxtb};
    i.op = Op::Extend;
    i.sub = kExt[op1];
    i.shift_amt = static_cast<uint8_t>(bits(h2, 5, 4) * 8);
    return i;
  }
  if ((op1 & 8) && !(op2 & 8)) {  // parallel add/subtract
    static const int8_t kOp[8] = {4, 0, 1, -1, 5, 3, 2, -1};
    static const int8_t kPre[8] = {0, 1, 2, -1, 4, 5, 6, -1};
    int o = kOp[op1 & 7], p = kPre[op2 & 7];
    if (o < 0 || p < 0) return undef();
    i.op = Op::Parallel;
    i.sub = static_cast<uint8_t>(p);
    i.shift_type = static_cast<uint8_t>(o);
    return i;
  }
  if ((op1 & 0xC) == 8 && (op2 & 0xC) == 8) {
    uint32_t a = op1 & 3, b = op2 & 3;
    if (a == 0) {  // QADD QDADD QSUB QDSUB
      static const uint8_t kQ[4] = {0, 2, 1, 3};
      i.op = Op::SatArith;
      i.sub = kQ[b];
      return i;
    }
    if (a == 1) {
      static const uint8_t kRev[4] = {0, 1, 3, 2};
      i.op = Op::Rev;
      i.sub = kRev[b];
      return i;
    }
    if (a == 2 && b == 0) {
      i.op = Op::Sel;
      return i;
    }
    if (a == 3 && b == 0) {
      i.op = Op::Clz;
      return i;
    }
  }
  return undef();
}

Insn t32_multiply(uint32_t h1, uint32_t h2) {
  uint32_t op1 = bits(h1, 6, 4), op2 = bits(h2, 5, 4);
  Insn i;
  i.rn = r4(h1, 0);
  i.rm = r4(h2, 0);
  i.rd = r4(h2, 8);
  i.ra = r4(h2, 12);
  i.cls = InsnClass::Multiply;
  switch (op1) {
    case 0:
      if (op2 > 1) return undef();
      i.op = Op::Mul;
      i.sub = static_cast<uint8_t>(op2);
      return i;
    case 1:
      i.op = Op::MulHalf;
      i.shift_type = static_cast<uint8_t>(op2 >> 1 | (op2 & 1) << 1);
      return i;
    case 2:
    case 4:
      if (op2 > 1) return undef();
      i.op = Op::MulDual;
      i.sub = op1 == 4;
      i.shift_type = static_cast<uint8_t>(op2);
      return i;
    case 3:
      if (op2 > 1) return undef();
      i.op = Op::MulHalf;
      i.sub = 1;
      i.shift_type = static_cast<uint8_t>(op2 << 1);
      return i;
    case 5:
    case 6:
      if (op2 > 1) return undef();
      i.op = Op::MulMost;
      i.sub = op1 == 6;
      i.shift_type = static_cast<uint8_t>(op2);
      return i;
    default:
      if (op2 != 0) return undef();
      i.op = Op::Usad8;
      return i;
  }
}

Insn t32_long_multiply(uint32_t h1, uint32_t h2) {
  uint32_t op1 = bits(h1, 6, 4), op2 = bits(h2, 7, 4);
  Insn i;
  i.rn = r4(h1, 0);
  i.rm = r4(h2, 0);
  i.rd = r4(h2, 12);
  i.ra = r4(h2, 8);
  i.cls = InsnClass::Multiply;
  if ((op1 == 1 || op1 == 3) && op2 == 15) {
    i.op = Op::Div;
    i.sub = op1 == 3;
    i.rd = r4(h2, 8);
    i.cls = InsnClass::Divide;
    return i;
  }
  if ((op1 == 4 || op1 == 5) && (op2 & 0xE) == 0xC) {  // SMLALD, SMLSLD
    i.op = Op::MulDual;
    i.sub = op1 == 4 ? 2 : 3;
    i.shift_type = static_cast<uint8_t>(op2 & 1);
    return i;
  }
  if (op1 == 4 && (op2 & 0xC) == 8) {  // SMLALxy
    i.op = Op::MulHalf;
    i.sub = 2;
    i.shift_type = static_cast<uint8_t>(bit(h2, 5) | (bit(h2, 4) << 1));
    return i;
  }
  i.op = Op::MulLong;
  if (op1 == 0 && op2 == 0)
    i.sub = 2;
  else if (op1 == 2 && op2 == 0)
    i.sub = 0;
  else if (op1 == 4 && op2 == 0)
    i.sub = 3;
  else if (op1 == 6 && op2 == 0)
    i.sub = 1;
  else if (op1 == 6 && op2 == 6)
    i.sub = 4;
  else
    return undef();
  return i;
}

Insn t32_plain_imm(uint32_t h1, uint32_t h2, uint32_t addr) {
  uint32_t op = bits(h1, 8, 4);
  uint8_t rn = r4(h1, 0), rd = r4(h2, 8);
  uint32_t imm12 = (bit(h1, 10) << 11) | (bits(h2, 14, 12) << 8) | bits(h2, 7, 0);
  uint32_t imm5 = (bits(h2, 14, 12) << 2) | bits(h2, 7, 6);
  Insn i;
  i.rd = rd;
  i.rn = rn;
  switch (op) {
    case 0:
    case 10:
      if (rn == 15) {  // ADR
        i.op = Op::Movw;
        uint32_t base = (addr + 4) & ~3u;
        i.imm = op == 0 ? base + imm12 : base - imm12;
        return i;
      }
      return dp_imm(op == 0 ? kAdd : kSub, rd, rn, imm12, 0);
    case 4:
    case 12:
      i.op = op == 4 ? Op::Movw : Op::Movt;
      i.imm = (bits(h1, 3, 0) << 12) | imm12;
      return i;
    case 16:
    case 18:
    case 24:
    case 26: {
      bool u = op >= 24;
      i.op = Op::Sat;
      i.rm = rn;
      if ((op & 2) && imm5 == 0) {  // SSAT16, USAT16
        i.sub = u ? 3 : 2;
        i.imm = bits(h2, 3, 0) + (u ? 0 : 1);
        return i;
      }
      i.sub = u;
      i.imm = bits(h2, 4, 0) + (u ? 0 : 1);
      imm_shift(i, bit(h1, 5) ? kAsr : kLsl, imm5);
      if (i.shift_type == kAsr && imm5 == 0) return undef();
      return i;
    }
    case 20:
    case 28:
      i.op = Op::BitField;
      i.sub = op == 20 ? 1 : 0;
      i.shift_amt = static_cast<uint8_t>(imm5);
      i.imm = bits(h2, 4, 0) + 1;
      if (imm5 + i.imm > 32) return undef();
      return i;
    case 22: {
      uint32_t msb = bits(h2, 4, 0);
      if (msb < imm5) return undef();
      i.op = Op::BitField;
      i.sub = 2;
      i.shift_amt = static_cast<uint8_t>(imm5);
      i.imm = msb - imm5 + 1;
      return i;
    }
    default:
      return undef();
  }
}

Insn t32_branch_misc(uint32_t h1, uint32_t h2, uint32_t addr) {
  uint32_t op1 = bits(h2, 14, 12);
  uint32_t s = bit(h1, 10), j1 = bit(h2, 13), j2 = bit(h2, 11);
  uint32_t pc = addr + 4;
  if ((op1 & 5) == 0) {
    if (bits(h1, 9, 7) != 7) {  // B<cond> T3
      uint32_t imm =
          (s << 20) | (j2 << 19) | (j1 << 18) | (bits(h1, 5, 0) << 12) | (bits(h2, 10, 0) << 1);
      int32_t off = static_cast<int32_t>(imm << 11) >> 11;
      return branch(pc + static_cast<uint32_t>(off), 0, static_cast<uint8_t>(bits(h1, 9, 6)));
    }
    uint32_t op = bits(h1, 10, 4);
    Insn i;
    i.cls = InsnClass::System;
    if ((op == 0x38 || op == 0x39) && !bit(h2, 5)) {  // MSR CPSR / SPSR (not banked)
      i.op = Op::Msr;
      i.rm = r4(h1, 0);
      i.sub = static_cast<uint8_t>(bits(h2, 11, 8));
      i.ra = op & 1;
      i.opnd = kOpRegImm;
      return i;
    }
    if (op == 0x3A) {
      if (bits(h2, 10, 8) == 0) {                          // hints
        if (bits(h2, 7, 0) == 2 || bits(h2, 7, 0) == 3) {  // WFE, WFI
          i.op = Op::Wfi;
          i.sub = bits(h2, 7, 0) == 2;
          return i;
        }
        return nop();
      }
      uint32_t imod = bits(h2, 10, 9);  // CPS
      if (imod == 1 || (imod == 0 && !bit(h2, 8))) return undef();
      i.op = Op::Cps;
      i.sub = static_cast<uint8_t>((imod == 2 ? 2 : imod == 3 ? 4 : 0) | bit(h2, 8));
      i.imm = (bits(h2, 7, 5) << 6) | bits(h2, 4, 0);
      return i;
    }
    if (op == 0x3D && bits(h1, 3, 0) == 14 && bits(h2, 11, 8) == 15) {  // SUBS PC, LR, #imm8
      i.op = Op::ExcReturn;
      i.sub = kSub;
      i.opnd = kOpImm;
      i.rn = 14;
      i.rd = 15;
      i.imm = bits(h2, 7, 0);
      return i;
    }
    if (op == 0x3B) {
      uint32_t o = bits(h2, 7, 4);
      if (o == 2) {
        i.op = Op::Clrex;
        return i;
      }
      if (o >= 4 && o <= 6) return nop();  // DSB DMB ISB
      return undef();
    }
    if ((op == 0x3E || op == 0x3F) && !bit(h2, 5)) {  // MRS Rd, CPSR / SPSR (not banked)
      i.op = Op::Mrs;
      i.rd = r4(h2, 8);
      i.ra = bit(h1, 4);
      return i;
    }
    uint32_t sysm = (bit(h2, 4) << 4) | bits(h2, 11, 8) | (bit(h1, 4) << 5);
    if ((op == 0x3E || op == 0x3F) && bit(h2, 5)) {  // MRS Rd, <banked register>
      i.op = Op::MrsBanked;
      i.rd = r4(h2, 8);
      i.imm = (bit(h2, 4) << 4) | bits(h1, 3, 0) | (bit(h1, 4) << 5);
      return i;
    }
    if ((op == 0x38 || op == 0x39) && bit(h2, 5)) {  // MSR <banked register>, Rn
      i.op = Op::MsrBanked;
      i.rm = r4(h1, 0);
      i.imm = sysm;
      return i;
    }
    if (op == 0x7E && bits(h2, 15, 12) == 8) {  // HVC #imm16
      i.op = Op::Hvc;
      i.imm = (bits(h1, 3, 0) << 12) | bits(h2, 11, 0);
      return i;
    }
    if (op == 0x7F && h2 == 0x8000) {  // SMC #imm4
      i.op = Op::Smc;
      i.imm = bits(h1, 3, 0);
      return i;
    }
    return undef();
  }
  uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
  uint32_t imm =
      (s << 24) | (i1 << 23) | (i2 << 22) | (bits(h1, 9, 0) << 12) | (bits(h2, 10, 0) << 1);
  uint32_t off = static_cast<uint32_t>(static_cast<int32_t>(imm << 7) >> 7);
  if (op1 & 4) {
    if (op1 & 1) return branch((pc + off) | 1, 1);  // BL
    if (bit(h2, 0)) return undef();
    return branch(((pc & ~3u) + off) & ~3u, 2);  // BLX to ARM
  }
  return branch(pc + off, 0);
}

Insn t32(uint32_t h1, uint32_t h2, uint32_t addr) {
  uint32_t op1 = bits(h1, 12, 11);
  uint32_t op2 = bits(h1, 10, 4);
  uint32_t w = (h1 << 16) | h2;
  if (op1 == 1) {
    if ((op2 & 0x64) == 0x00) {  // load/store multiple
      uint32_t op = bits(h1, 8, 7);
      if ((op == 0 || op == 3) && !bit(h1, 4) && r4(h1, 0) == 13 && (h2 & 0xFFE0) == 0xC000) {
        Insn i;  // SRSDB (op 0), SRSIA (op 3) sp{!}, #mode
        i.op = Op::Srs;
        i.imm = bits(h2, 4, 0);
        i.flags = static_cast<uint8_t>((op == 0 ? kFlagP : kFlagU) | (bit(h1, 5) ? kFlagW : 0));
        i.cls = InsnClass::Store;
        return i;
      }
      if ((op == 0 || op == 3) && bit(h1, 4) && h2 == 0xC000 && r4(h1, 0) != 15) {
        Insn i;  // RFEDB (op 0), RFEIA (op 3) Rn{!}
        i.op = Op::Rfe;
        i.rn = r4(h1, 0);
        i.flags = static_cast<uint8_t>((op == 0 ? kFlagP : kFlagU) | (bit(h1, 5) ? kFlagW : 0));
        i.cls = InsnClass::Branch;
        return i;
      }
      bool load = bit(h1, 4);
      uint8_t f = bit(h1, 5) ? kFlagW : 0;
      uint32_t list = h2 & (load ? 0xDFFF : 0x5FFF);
      if (op == 1) return multi(load, r4(h1, 0), list, f | kFlagU);
      if (op == 2) return multi(load, r4(h1, 0), list, f | kFlagP);
      return undef();
    }
    if ((op2 & 0x64) == 0x04) return t32_dual_excl_table(h1, h2, addr);
    if ((op2 & 0x60) == 0x20) {  // data processing, shifted register
      Insn i = t32_dp(bits(h1, 8, 5), bit(h1, 4), r4(h1, 0), r4(h2, 8));
      if (i.op == Op::Undefined) {
        if (bits(h1, 8, 5) == 6) {  // PKHBT, PKHTB
          i = Insn();
          i.op = Op::Pkh;
          i.sub = bit(h2, 5);
          i.rd = r4(h2, 8);
          i.rn = r4(h1, 0);
          i.rm = r4(h2, 0);
          imm_shift(i, i.sub ? kAsr : kLsl, (bits(h2, 14, 12) << 2) | bits(h2, 7, 6));
        }
        return i;
      }
      i.opnd = kOpRegImm;
      i.rm = r4(h2, 0);
      imm_shift(i, bits(h2, 5, 4), (bits(h2, 14, 12) << 2) | bits(h2, 7, 6));
      return i;
    }
    return decode_coproc(w, addr, true);
  }
  if (op1 == 2) {
    if (bit(h2, 15)) return t32_branch_misc(h1, h2, addr);
    if (!bit(h1, 9)) {  // data processing, modified immediate
      Insn i = t32_dp(bits(h1, 8, 5), bit(h1, 4), r4(h1, 0), r4(h2, 8));
      if (i.op == Op::Undefined) return i;
      i.opnd = kOpImm;
      uint32_t imm12 = (bit(h1, 10) << 11) | (bits(h2, 14, 12) << 8) | bits(h2, 7, 0);
      i.imm = thumb_expand_imm(imm12, i.imm_carry);
      return i;
    }
    return t32_plain_imm(h1, h2, addr);
  }
  // op1 == 3
  if ((op2 & 0x71) == 0x00 || (op2 & 0x67) == 0x01 || (op2 & 0x67) == 0x03 ||
      (op2 & 0x67) == 0x05) {
    return t32_load_store_single(h1, h2);
  }
  if ((op2 & 0x70) == 0x20) return t32_data_reg(h1, h2);
  if ((op2 & 0x78) == 0x30) return t32_multiply(h1, h2);
  if ((op2 & 0x78) == 0x38) return t32_long_multiply(h1, h2);
  return undef();  // unconditional coprocessor forms (T = 1), Advanced SIMD
}

}  // namespace

Insn decode_t32(uint16_t hw1, uint16_t hw2, uint32_t addr) {
  Insn i;
  if ((hw1 >> 11) >= 0x1D) {
    i = t32(hw1, hw2, addr);
    i.len = 4;
    i.raw = (static_cast<uint32_t>(hw1) << 16) | hw2;
  } else {
    i = t16(hw1, addr);
    i.len = 2;
    i.raw = static_cast<uint32_t>(hw1) << 16;
  }
  i.flags |= kFlagThumb;
  return i;
}

}  // namespace vtoe::cpu::iss
