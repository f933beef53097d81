// A32 (ARM state) decoder. The encoding tables follow the ARMv7-A ARM, section A5.
#include "models/cpu/iss/insn.h"

namespace vtoe::cpu::iss {

namespace {

uint32_t bits(uint32_t v, int hi, int lo) { return (v >> lo) & ((2u << (hi - lo)) - 1); }
bool bit(uint32_t v, int n) { return (v >> n) & 1; }
uint8_t r4(uint32_t v, int lo) { return static_cast<uint8_t>((v >> lo) & 15); }

Insn undef() {
  Insn i;
  i.op = Op::Undefined;
  i.cls = InsnClass::System;
  return i;
}

// Immediate shift as encoded (type, imm5) -> normalized (LSR/ASR #0 mean 32, ROR #0 is RRX).
void set_imm_shift(Insn& i, uint32_t type, uint32_t imm5) {
  i.shift_type = static_cast<uint8_t>(type);
  i.shift_amt = static_cast<uint8_t>(imm5);
  if ((type == kLsr || type == kAsr) && imm5 == 0) i.shift_amt = 32;
  if (type == kRor && imm5 == 0) i.shift_type = kRrx;
}

Insn data_proc(uint32_t w, bool imm) {
  Insn i;
  i.op = Op::DataProc;
  i.sub = static_cast<uint8_t>(bits(w, 24, 21));
  if (bit(w, 20)) i.flags |= kFlagS;
  i.rn = r4(w, 16);
  i.rd = r4(w, 12);
  if (imm) {
    uint32_t rot = bits(w, 11, 8) * 2, v = bits(w, 7, 0);
    i.imm = rot ? (v >> rot) | (v << (32 - rot)) : v;
    i.imm_carry = rot ? static_cast<uint8_t>(i.imm >> 31) : 2;
    i.opnd = kOpImm;
  } else {
    i.rm = r4(w, 0);
    if (bit(w, 4)) {
      i.opnd = kOpRegReg;
      i.rs = r4(w, 8);
      i.shift_type = static_cast<uint8_t>(bits(w, 6, 5));
    } else {
      i.opnd = kOpRegImm;
      set_imm_shift(i, bits(w, 6, 5), bits(w, 11, 7));
    }
  }
  // S with Rd = PC is an exception return (CPSR = SPSR); the core refuses it in user mode.
  if ((i.flags & kFlagS) && i.rd == 15 && (i.sub < kTst || i.sub > kCmn)) {
    i.op = Op::ExcReturn;
    i.cls = InsnClass::System;
  }
  return i;
}

Insn misc(uint32_t w) {
  Insn i;
  if ((w & 0x0FB00EFF) == 0x01000200) {  // MRS Rd, <banked register>
    i.op = Op::MrsBanked;
    i.rd = r4(w, 12);
    i.imm = (bit(w, 8) << 4) | bits(w, 19, 16) | (bit(w, 22) << 5);
    i.cls = InsnClass::System;
    return i;
  }
  if ((w & 0x0FB0FEF0) == 0x0120F200) {  // MSR <banked register>, Rn
    i.op = Op::MsrBanked;
    i.rm = r4(w, 0);
    i.imm = (bit(w, 8) << 4) | bits(w, 19, 16) | (bit(w, 22) << 5);
    i.cls = InsnClass::System;
    return i;
  }
  if ((w & 0x0FFFFFFF) == 0x0160006E) {  // ERET
    i.op = Op::Eret;
    i.cls = InsnClass::System;
    return i;
  }
  if ((w & 0x0FF000F0) == 0x01400070) {  // HVC #imm16
    i.op = Op::Hvc;
    i.imm = (bits(w, 19, 8) << 4) | bits(w, 3, 0);
    i.cls = InsnClass::System;
    return i;
  }
  if ((w & 0xFFF000F0) == 0xE1200070) {  // BKPT #imm16 (always; other conditions UNPREDICTABLE)
    i.op = Op::Bkpt;
    i.imm = (bits(w, 19, 8) << 4) | bits(w, 3, 0);
    i.cls = InsnClass::System;
    return i;
  }
  if ((w & 0x0FFFFFF0) == 0x01600070) {  // SMC #imm4
    i.op = Op::Smc;
    i.imm = bits(w, 3, 0);
    i.cls = InsnClass::System;
    return i;
  }
  if ((w & 0x0FBF0FFF) == 0x010F0000) {  // MRS Rd, CPSR / SPSR
    i.op = Op::Mrs;
    i.rd = r4(w, 12);
    i.ra = bit(w, 22);
    i.cls = InsnClass::System;
    return i;
  }
  if ((w & 0x0FB0FFF0) == 0x0120F000) {  // MSR CPSR_<fields> / SPSR_<fields>, Rm
    i.op = Op::Msr;
    i.rm = r4(w, 0);
    i.sub = static_cast<uint8_t>(bits(w, 19, 16));
    i.ra = bit(w, 22);
    i.opnd = kOpRegImm;
    i.cls = InsnClass::System;
    return i;
  }
  if ((w & 0x0FFFFFD0) == 0x012FFF10) {
    i.op = Op::BranchReg;
    i.sub = bit(w, 5);
    i.rm = r4(w, 0);
    i.cls = InsnClass::Branch;
    return i;
  }
  if ((w & 0x0FFF0FF0) == 0x016F0F10) {
    i.op = Op::Clz;
    i.rd = r4(w, 12);
    i.rm = r4(w, 0);
    return i;
  }
  if ((w & 0x0F900FF0) == 0x01000050) {
    i.op = Op::SatArith;
    static const uint8_t kOps[4] = {0, 1, 2, 3};  // QADD QSUB QDADD QDSUB
    i.sub = kOps[bits(w, 22, 21)];
    i.rd = r4(w, 12);
    i.rn = r4(w, 16);
    i.rm = r4(w, 0);
    return i;
  }
  if ((w & 0x0F900090) == 0x01000080) {
    uint32_t op = bits(w, 22, 21);
    i.cls = InsnClass::Multiply;
    i.rn = r4(w, 0);
    i.rm = r4(w, 8);
    i.shift_type = static_cast<uint8_t>(bit(w, 5) | (bit(w, 6) << 1));
    if (op == 0 || op == 3) {  // SMLAxy, SMULxy
      i.op = Op::MulHalf;
      i.sub = 0;
      i.rd = r4(w, 16);
      i.ra = op == 3 ? 15 : r4(w, 12);
    } else if (op == 1) {  // SMLAWy (bit 5 = 0), SMULWy
      i.op = Op::MulHalf;
      i.sub = 1;
      i.rd = r4(w, 16);
      i.ra = bit(w, 5) ? 15 : r4(w, 12);
      i.shift_type = static_cast<uint8_t>(bit(w, 6) << 1);
    } else {  // SMLALxy
      i.op = Op::MulHalf;
      i.sub = 2;
      i.rd = r4(w, 12);
      i.ra = r4(w, 16);
    }
    return i;
  }
  return undef();
}

Insn mul_sync_extra(uint32_t w) {
  Insn i;
  uint32_t op2 = bits(w, 6, 5);
  if (op2 == 0) {
    if (!bit(w, 24)) {  // multiplies
      uint32_t op = bits(w, 23, 21);
      i.cls = InsnClass::Multiply;
      i.rn = r4(w, 0);
      i.rm = r4(w, 8);
      if (bit(w, 20)) i.flags |= kFlagS;
      switch (op) {
        case 0:
        case 1:  // MUL, MLA
          i.op = Op::Mul;
          i.rd = r4(w, 16);
          i.ra = op == 1 ? r4(w, 12) : 15;
          return i;
        case 2:  // UMAAL
          if (bit(w, 20)) return undef();
          i.op = Op::MulLong;
          i.sub = 4;
          i.rd = r4(w, 12);
          i.ra = r4(w, 16);
          return i;
        case 3:  // MLS
          if (bit(w, 20)) return undef();
          i.op = Op::Mul;
          i.sub = 1;
          i.rd = r4(w, 16);
          i.ra = r4(w, 12);
          return i;
        default:  // UMULL UMLAL SMULL SMLAL
          i.op = Op::MulLong;
          i.sub = static_cast<uint8_t>(op - 4);
          i.rd = r4(w, 12);
          i.ra = r4(w, 16);
          return i;
      }
    }
    // Synchronization primitives (SWP is not supported).
    uint32_t op = bits(w, 23, 20);
    static const uint8_t kSize[4] = {4, 8, 1, 2};
    if (op < 8) return undef();
    i.sub = kSize[(op >> 1) & 3];
    i.rn = r4(w, 16);
    if (op & 1) {
      i.op = Op::LoadEx;
      i.rd = r4(w, 12);
      i.ra = static_cast<uint8_t>((i.rd + 1) & 15);
      i.cls = InsnClass::Load;
    } else {
      i.op = Op::StoreEx;
      i.rd = r4(w, 12);
      i.rm = r4(w, 0);
      i.ra = static_cast<uint8_t>((i.rm + 1) & 15);
      i.cls = InsnClass::Store;
    }
    return i;
  }
  // Extra load/store: halfwords, signed bytes, doublewords.
  i.op = Op::LoadStore;
  bool load = bit(w, 20);
  if (op2 == 1)
    i.sub = load ? kLdrh : kStrh;
  else if (op2 == 2)
    i.sub = load ? kLdrsb : kLdrd;
  else
    i.sub = load ? kLdrsh : kStrd;
  i.cls = (i.sub >= kLdr) ? InsnClass::Load : InsnClass::Store;
  i.rn = r4(w, 16);
  i.rd = r4(w, 12);
  i.ra = static_cast<uint8_t>(i.rd + 1);
  if ((i.sub == kLdrd || i.sub == kStrd) && (i.rd & 1)) return undef();
  // P = 0, W = 1: LDRHT, STRHT, LDRSBT, LDRSHT (post-indexed, with PL0's permissions).
  if (!bit(w, 24) && bit(w, 21) && i.sub != kLdrd && i.sub != kStrd) i.rs = 1;
  if (bit(w, 24)) i.flags |= kFlagP;
  if (bit(w, 23)) i.flags |= kFlagU;
  if (bit(w, 21) || !bit(w, 24)) i.flags |= kFlagW;
  if (bit(w, 22)) {
    i.imm = (bits(w, 11, 8) << 4) | bits(w, 3, 0);
  } else {
    i.flags |= kFlagRegOff;
    i.rm = r4(w, 0);
    i.shift_type = kLsl;
  }
  return i;
}

Insn load_store(uint32_t w, bool reg) {
  Insn i;
  i.op = Op::LoadStore;
  bool load = bit(w, 20), byte = bit(w, 22);
  i.sub = load ? (byte ? kLdrb : kLdr) : (byte ? kStrb : kStr);
  i.cls = load ? InsnClass::Load : InsnClass::Store;
  i.rn = r4(w, 16);
  i.rd = r4(w, 12);
  if (bit(w, 24)) i.flags |= kFlagP;
  if (bit(w, 23)) i.flags |= kFlagU;
  if (bit(w, 21) || !bit(w, 24)) i.flags |= kFlagW;
  if (!bit(w, 24) && bit(w, 21)) i.rs = 1;  // LDRT, STRT, LDRBT, STRBT: PL0's permissions
  if (reg) {
    i.flags |= kFlagRegOff;
    i.rm = r4(w, 0);
    set_imm_shift(i, bits(w, 6, 5), bits(w, 11, 7));
  } else {
    i.imm = bits(w, 11, 0);
  }
  return i;
}

Insn media(uint32_t w) {
  Insn i;
  uint32_t op1 = bits(w, 24, 20), op2 = bits(w, 7, 5);
  i.rd = r4(w, 12);
  i.rn = r4(w, 16);
  i.rm = r4(w, 0);
  if ((op1 & 0x1C) == 0x00 || (op1 & 0x1C) == 0x04) {  // parallel add/subtract
    uint32_t pre = bits(w, 22, 20);  // 001 S, 010 Q, 011 SH, 101 U, 110 UQ, 111 UH
    static const int8_t kPre[8] = {-1, 0, 1, 2, -1, 4, 5, 6};
    static const int8_t kOp[8] = {0, 1, 2, 3, 4, -1, -1, 5};
    if (kPre[pre] < 0 || kOp[op2] < 0) return undef();
    i.op = Op::Parallel;
    i.sub = static_cast<uint8_t>(kPre[pre]);
    i.shift_type = static_cast<uint8_t>(kOp[op2]);
    return i;
  }
  if (op1 == 0x08 && (op2 & 1) == 0) {  // PKH
    i.op = Op::Pkh;
    i.sub = bit(w, 6);
    set_imm_shift(i, bit(w, 6) ? kAsr : kLsl, bits(w, 11, 7));
    return i;
  }
  if (op1 == 0x08 && op2 == 5) {
    i.op = Op::Sel;
    return i;
  }
  if ((op1 & 0x18) == 0x08 && op2 == 3) {  // extend (and add)
    static const int8_t kExt[8] = {kSxtb16, -1, kSxtb, kSxth, kUxtb16, -1, kUxtb, kUxth};
    int e = kExt[op1 & 7];
    if (e < 0) return undef();
    i.op = Op::Extend;
    i.sub = static_cast<uint8_t>(e);
    i.shift_amt = static_cast<uint8_t>(bits(w, 11, 10) * 8);
    return i;
  }
  if ((op1 & 0x1A) == 0x0A && (op2 & 1) == 0) {  // SSAT, USAT
    i.op = Op::Sat;
    i.sub = bit(w, 22);
    i.imm = bits(w, 20, 16) + (i.sub ? 0 : 1);
    i.rm = r4(w, 0);
    set_imm_shift(i, bit(w, 6) ? kAsr : kLsl, bits(w, 11, 7));
    return i;
  }
  if ((op1 == 0x0A || op1 == 0x0E) && op2 == 1) {  // SSAT16, USAT16
    i.op = Op::Sat;
    i.sub = op1 == 0x0A ? 2 : 3;
    i.imm = bits(w, 19, 16) + (op1 == 0x0A ? 1 : 0);
    return i;
  }
  if ((op1 == 0x0B || op1 == 0x0F) && (op2 == 1 || op2 == 5)) {  // REV REV16 RBIT REVSH
    i.op = Op::Rev;
    i.sub = op1 == 0x0B ? (op2 == 1 ? 0 : 1) : (op2 == 1 ? 3 : 2);
    return i;
  }
  if ((op1 & 0x18) == 0x10) {  // signed multiplies, divide
    i.cls = InsnClass::Multiply;
    i.rd = r4(w, 16);
    i.ra = r4(w, 12);
    i.rn = r4(w, 0);
    i.rm = r4(w, 8);
    if ((op1 == 0x11 || op1 == 0x13) && op2 == 0) {
      i.op = Op::Div;
      i.sub = op1 == 0x13;
      i.cls = InsnClass::Divide;
      return i;
    }
    if (op1 == 0x10 && (op2 & 6) == 0) {
      i.op = Op::MulDual;
      i.sub = 0;
      i.shift_type = bit(w, 5);
      return i;
    }
    if (op1 == 0x10 && (op2 & 6) == 2) {
      i.op = Op::MulDual;
      i.sub = 1;
      i.shift_type = bit(w, 5);
      return i;
    }
    if (op1 == 0x14 && (op2 & 4) == 0) {  // SMLALD, SMLSLD
      i.op = Op::MulDual;
      i.sub = (op2 & 2) ? 3 : 2;
      i.shift_type = bit(w, 5);
      i.rd = r4(w, 12);
      i.ra = r4(w, 16);
      return i;
    }
    if (op1 == 0x15 && ((op2 & 6) == 0 || (op2 & 6) == 6)) {
      i.op = Op::MulMost;
      i.sub = (op2 & 6) == 6;
      i.shift_type = bit(w, 5);
      return i;
    }
    return undef();
  }
  if (op1 == 0x18 && op2 == 0) {
    i.op = Op::Usad8;
    i.rd = r4(w, 16);
    i.ra = r4(w, 12);
    i.rn = r4(w, 0);
    i.rm = r4(w, 8);
    return i;
  }
  if ((op1 & 0x1A) == 0x1A && (op2 & 3) == 2) {  // SBFX, UBFX
    i.op = Op::BitField;
    i.sub = bit(w, 22) ? 0 : 1;
    i.rn = r4(w, 0);
    i.shift_amt = static_cast<uint8_t>(bits(w, 11, 7));
    i.imm = bits(w, 20, 16) + 1;
    if (i.shift_amt + i.imm > 32) return undef();
    return i;
  }
  if ((op1 & 0x1E) == 0x1C && (op2 & 3) == 0) {  // BFI, BFC
    i.op = Op::BitField;
    i.sub = 2;
    i.rn = r4(w, 0);
    uint32_t lsb = bits(w, 11, 7), msb = bits(w, 20, 16);
    if (msb < lsb) return undef();
    i.shift_amt = static_cast<uint8_t>(lsb);
    i.imm = msb - lsb + 1;
    return i;
  }
  return undef();
}

}  // namespace

Insn decode_a32(uint32_t w, uint32_t addr) {
  Insn i;
  uint32_t cond = w >> 28;
  if (cond == 15) {
    if ((w & 0x0E000000) == 0x0A000000) {  // BLX imm
      i.op = Op::Branch;
      i.sub = 2;
      int32_t off = static_cast<int32_t>(w << 8) >> 6;
      i.imm = (addr + 8 + static_cast<uint32_t>(off) + (bit(w, 24) << 1)) | 1;
      i.cls = InsnClass::Branch;
    } else if ((w & 0x0C300000) == 0x04100000) {  // PLD, PLDW, PLI
      i.op = Op::Nop;
      i.cls = InsnClass::Nop;
    } else if ((w & 0xFFFFFFE0) == 0xF57FF040 || (w & 0xFFFFFFF0) == 0xF57FF060) {
      i.op = Op::Nop;  // DSB DMB ISB: one core, in-order: nothing to wait for
      i.cls = InsnClass::Nop;
    } else if (w == 0xF57FF01F) {
      i.op = Op::Clrex;
      i.cls = InsnClass::System;
    } else if ((w & 0xFE5FFFE0) == 0xF84D0500) {  // SRS{DA,DB,IA,IB} sp{!}, #mode
      i.op = Op::Srs;
      i.imm = bits(w, 4, 0);
      i.flags = static_cast<uint8_t>((bit(w, 24) ? kFlagP : 0) | (bit(w, 23) ? kFlagU : 0) |
                                     (bit(w, 21) ? kFlagW : 0));
      i.cls = InsnClass::Store;
    } else if ((w & 0xFE50FFFF) == 0xF8100A00) {  // RFE{DA,DB,IA,IB} Rn{!}
      i.op = Op::Rfe;
      i.rn = r4(w, 16);
      i.flags = static_cast<uint8_t>((bit(w, 24) ? kFlagP : 0) | (bit(w, 23) ? kFlagU : 0) |
                                     (bit(w, 21) ? kFlagW : 0));
      i.cls = InsnClass::Branch;
      if (i.rn == 15) i = undef();
    } else if ((w & 0xFFF1FE20) == 0xF1000000) {  // CPS
      i.op = Op::Cps;
      uint32_t imod = bits(w, 19, 18);
      i.sub = static_cast<uint8_t>((imod == 2 ? 2 : imod == 3 ? 4 : 0) | bit(w, 17));
      i.imm = (w & 0x1C0) | bits(w, 4, 0);
      i.cls = InsnClass::System;
      if (imod == 1 || (imod == 0 && !bit(w, 17))) i = undef();
    } else {
      i = undef();
    }
    i.raw = w;
    return i;
  }
  switch (bits(w, 27, 25)) {
    case 0:
      if (bit(w, 7) && bit(w, 4)) {
        i = mul_sync_extra(w);
      } else if ((bits(w, 24, 23) == 2) && !bit(w, 20)) {
        i = misc(w);
      } else {
        i = data_proc(w, false);
      }
      break;
    case 1:
      if ((bits(w, 24, 23) == 2) && !bit(w, 20)) {
        uint32_t op = bits(w, 22, 21);
        if (op == 0 || op == 2) {  // MOVW, MOVT
          i.op = op == 0 ? Op::Movw : Op::Movt;
          i.rd = r4(w, 12);
          i.imm = (bits(w, 19, 16) << 12) | bits(w, 11, 0);
        } else if ((w & 0x0FFFFFFE) == 0x0320F002) {  // WFE, WFI (WFE waits the same way)
          i.op = Op::Wfi;
          i.sub = !bit(w, 0);
          i.cls = InsnClass::System;
        } else if ((w & 0x0FFFFF00) == 0x0320F000) {
          i.op = Op::Nop;
          i.cls = InsnClass::Nop;
        } else if ((w & 0x0FB0F000) == 0x0320F000) {  // MSR CPSR_<fields> / SPSR_<fields>, #imm
          i.op = Op::Msr;
          i.sub = static_cast<uint8_t>(bits(w, 19, 16));
          i.ra = bit(w, 22);
          i.opnd = kOpImm;
          uint32_t rot = bits(w, 11, 8) * 2, v = bits(w, 7, 0);
          i.imm = rot ? (v >> rot) | (v << (32 - rot)) : v;
          i.cls = InsnClass::System;
        } else {
          i = undef();
        }
      } else {
        i = data_proc(w, true);
      }
      break;
    case 2:
      i = load_store(w, false);
      break;
    case 3:
      i = bit(w, 4) ? media(w) : load_store(w, true);
      if ((w & 0x0FF000F0) == 0x07F000F0) i = undef();  // UDF
      break;
    case 4:
      i.op = Op::LoadStoreMulti;
      i.sub = bit(w, 20);
      if (bit(w, 22)) {  // user registers, or exception return (LDM with PC)
        i.rs = 1;
        if (bit(w, 21) && !(i.sub && bit(w, 15))) {  // write-back with user registers
          i = undef();
          break;
        }
      }
      i.cls = i.sub ? InsnClass::LoadMulti : InsnClass::StoreMulti;
      i.rn = r4(w, 16);
      i.imm = bits(w, 15, 0);
      if (bit(w, 24)) i.flags |= kFlagP;
      if (bit(w, 23)) i.flags |= kFlagU;
      if (bit(w, 21)) i.flags |= kFlagW;
      if (i.imm == 0) i = undef();
      break;
    case 5: {
      i.op = Op::Branch;
      i.sub = bit(w, 24);
      int32_t off = static_cast<int32_t>(w << 8) >> 6;
      i.imm = addr + 8 + static_cast<uint32_t>(off);
      i.cls = InsnClass::Branch;
      break;
    }
    default:
      if (bits(w, 27, 24) == 15) {
        i.op = Op::Svc;
        i.imm = bits(w, 23, 0);
        i.cls = InsnClass::System;
      } else {
        i = decode_coproc(w, addr, false);
      }
      break;
  }
  i.cond = static_cast<uint8_t>(cond);
  i.len = 4;
  i.raw = w;
  return i;
}

}  // namespace vtoe::cpu::iss
