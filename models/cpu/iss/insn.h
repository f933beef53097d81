// A decoded ARMv7-A instruction: the form that both decoders (A32, T32) produce and the core runs.
//
// Decoding happens once per address (the core's decoded-instruction cache); everything the
// executor would otherwise extract from the encoding each time is a field here. A32 and T32
// encodings of one operation decode to the same Op, so the executor is written once.
#pragma once

#include <cstdint>

namespace vtoe::cpu::iss {

enum class Op : uint8_t {
  None = 0,   // not decoded yet (a zeroed cache slot)
  Undefined,  // raises an Undefined Instruction error naming the encoding
  Nop,        // hints, barriers, preload
  DataProc,   // sub = DpOp; operand 2 per `opnd`
  Movw,       // rd = imm
  Movt,       // rd[31:16] = imm
  Mul,        // sub: 0 MUL/MLA (ra = 15 for none), 1 MLS
  MulLong,    // sub: 0 UMULL 1 UMLAL 2 SMULL 3 SMLAL 4 UMAAL; rd = lo, ra = hi
  MulHalf,    // SMULxy/SMLAxy (sub 0), SMULWy/SMLAWy (1), SMLALxy (2); shift_type = x | y << 1
  MulMost,    // SMMUL/SMMLA (sub 0), SMMLS (1); shift_type = round
  MulDual,    // SMUAD/SMLAD (sub 0), SMUSD/SMLSD (1), SMLALD (2), SMLSLD (3); shift_type = swap;
              // the long forms: rd = lo, ra = hi
  Div,        // sub: 0 SDIV, 1 UDIV
  LoadStore,  // sub = LsOp; rs = 1: the unprivileged form (LDRT, STRBT, ...: PL0's permissions)
  LoadStoreMulti,  // sub: 0 STM, 1 LDM; imm = register list
  LoadEx,          // sub: size 1/2/4/8
  StoreEx,         // sub: size 1/2/4/8; rd = status
  Clrex,
  Branch,       // imm = target; sub: 0 B, 1 BL, 2 BLX (switches state)
  BranchReg,    // rm; sub: 0 BX, 1 BLX
  Cbz,          // rn, imm = target; sub: 1 = CBNZ
  TableBranch,  // rn, rm; sub: 0 TBB, 1 TBH
  It,           // imm = firstcond:mask
  Clz,
  Rev,       // sub: 0 REV, 1 REV16, 2 REVSH, 3 RBIT
  Extend,    // sub: ExtOp; rn = 15 for no accumulate; shift_amt = rotation
  BitField,  // sub: 0 UBFX, 1 SBFX, 2 BFI (rn = 15: BFC); shift_amt = lsb, imm = width
  Sat,       // sub: 0 SSAT, 1 USAT, 2 SSAT16, 3 USAT16; imm = saturate_to
  SatArith,  // sub: 0 QADD, 1 QSUB, 2 QDADD, 3 QDSUB
  Parallel,  // sub = prefix (0 S,1 Q,2 SH,4 U,5 UQ,6 UH), shift_type = op (0..5 as ADD16..SUB8)
  Sel,
  Pkh,    // sub: 0 PKHBT, 1 PKHTB
  Usad8,  // ra = 15 for USAD8
  Mrs,    // ra = 1: SPSR
  Msr,    // sub = field mask (8 f, 4 s, 2 x, 1 c); ra = 1: SPSR; opnd kOpImm: imm, else rm
  Mrc,    // CP15 (sub 0) or CP14 (sub 14) read into rd; imm = cp15_key(crn, opc1, crm, opc2)
  Mcr,    // CP15 or CP14 write from rd; imm and sub as Mrc
  Svc,
  Vfp,        // sub = VfpOp
  ExcReturn,  // <op>S PC, ... (A32) and SUBS PC, LR, #imm (T32): DataProc fields, CPSR = SPSR
  Cps,        // sub: bit 1 enable, bit 2 disable, bit 0 change mode; imm = A I F (bits 8:6) | mode
  Wfi,        // sub: 0 WFI, 1 WFE
  // System mode with the Virtualization Extensions.
  Hvc,        // imm = imm16
  Smc,        // imm = imm4
  Eret,       // A32 ERET (the T32 one is SUBS PC, LR, #0: ExcReturn)
  MrsBanked,  // rd; imm = SYSm | R << 5 (MRS Rd, <banked register>)
  MsrBanked,  // rm; imm as MrsBanked
  Mrrc,       // CP15 64-bit read into rd (low), ra (high); imm = cp15_key64(opc1, crm)
  Mcrr,       // CP15 64-bit write from rd (low), ra (high); imm as Mrrc
  Bkpt,       // imm = imm16 (A32) or imm8 (T32): a debug event, taken as a prefetch abort
  Srs,        // imm = mode; flags P, U, W as LDM/STM (DA, DB, IA, IB)
  Rfe,        // rn; flags P, U, W as LDM/STM
};

// CP15 register key of MRC/MCR (coprocessor 15, as the ARM ARM names them).
constexpr uint32_t cp15_key(uint32_t crn, uint32_t opc1, uint32_t crm, uint32_t opc2) {
  return (crn << 12) | (opc1 << 8) | (crm << 4) | opc2;
}

// CP15 64-bit register key of MRRC/MCRR.
constexpr uint32_t cp15_key64(uint32_t opc1, uint32_t crm) { return (opc1 << 4) | crm; }

enum DpOp : uint8_t {
  kAnd,
  kEor,
  kSub,
  kRsb,
  kAdd,
  kAdc,
  kSbc,
  kRsc,
  kTst,
  kTeq,
  kCmp,
  kCmn,
  kOrr,
  kMov,
  kBic,
  kMvn,
  kOrn
};

enum LsOp : uint8_t { kStr, kStrb, kStrh, kStrd, kLdr, kLdrb, kLdrh, kLdrsb, kLdrsh, kLdrd };

enum ExtOp : uint8_t { kSxtb, kSxth, kSxtb16, kUxtb, kUxth, kUxtb16 };

enum VfpOp : uint8_t {
  kVmla,
  kVmls,
  kVnmls,
  kVnmla,
  kVmul,
  kVnmul,
  kVadd,
  kVsub,
  kVdiv,
  kVmovImm,
  kVmovReg,
  kVabs,
  kVneg,
  kVsqrt,
  kVcmp,
  kVcmpe,
  kVcmpZ,
  kVcmpeZ,
  kVcvtFD,          // between single and double (sz = source)
  kVcvtFromInt,     // shift_type: 1 signed
  kVcvtToInt,       // shift_type: bit 0 signed, bit 1 round toward zero
  kVcvtFixed,       // in place on rd; shift_type: bit 0 unsigned, bit 1 to fixed, bit 2 32-bit;
                    // imm = fraction bits
  kVmovCoreS,       // rd core <- S[rn] (shift_type 1) or S[rn] <- rd core (0)
  kVmovCoreScalar,  // 32-bit half of D: rm = D reg, shift_amt = index; shift_type 1 = to core
  kVmovCore2,  // two core regs (rd, ra) <-> D[rm] (sz) or S[rm],S[rm+1]; shift_type 1 = to core
  kVmrs,
  kVmsr,  // rn = system register number; rd = 15 with VMRS: APSR_nzcv
  kVldr,
  kVstr,  // imm = offset magnitude
  kVldm,
  kVstm,  // imm = register count; P/U/W flags
};

// Operand-2 kinds of DataProc.
enum Opnd : uint8_t { kOpImm, kOpRegImm, kOpRegReg };

// Shift types; RRX is ROR #0 in the encoding.
enum Shift : uint8_t { kLsl, kLsr, kAsr, kRor, kRrx };

// Insn::flags bits.
constexpr uint8_t kFlagS = 1;        // sets flags
constexpr uint8_t kFlagSNotIt = 2;   // sets flags only outside an IT block (16-bit Thumb)
constexpr uint8_t kFlagP = 4;        // pre-indexed (load/store), "before" (multiple)
constexpr uint8_t kFlagU = 8;        // add offset / increment
constexpr uint8_t kFlagW = 16;       // write back
constexpr uint8_t kFlagRegOff = 32;  // register offset (load/store)
constexpr uint8_t kFlagDouble = 64;  // VFP: double precision
constexpr uint8_t kFlagThumb = 128;  // decoded from T32 (PC reads, writes to PC)
// LoadStoreMulti: Insn::rs = 1 marks LDM/STM with the S bit (user registers; LDM with PC in the
// list: exception return).

// Instruction classes for the retired-instruction statistics.
enum class InsnClass : uint8_t {
  Alu,
  Multiply,
  Divide,
  Load,
  Store,
  LoadMulti,
  StoreMulti,
  Branch,
  Vfp,
  System,
  Nop,
  Count
};
const char* to_string(InsnClass c);

class ArmCore;
struct Insn;
// The executor chosen for an instruction when it is decoded (specialised for the common forms).
using ExecFn = void (*)(ArmCore&, const Insn&);

struct Insn {
  ExecFn fn = nullptr;
  Op op = Op::None;
  uint8_t cond = 14;  // 14 = always
  uint8_t len = 4;    // bytes
  uint8_t sub = 0;
  uint8_t rd = 0, rn = 0, rm = 0, rs = 0, ra = 0;
  uint8_t opnd = 0;  // DataProc operand-2 kind
  uint8_t shift_type = 0;
  uint8_t shift_amt = 0;
  uint8_t flags = 0;
  uint8_t imm_carry = 2;  // carry out of an immediate operand: 0, 1, or 2 = unchanged
  InsnClass cls = InsnClass::Alu;
  // The basic block from here (ArmCore's run loop): how many instructions, this one included,
  // run straight on in this page before one that may branch or change the core's state
  // (0: not formed yet).
  uint8_t blk = 0;
  uint32_t imm = 0;
  uint32_t raw = 0;  // the encoding (T32: first halfword in the upper 16 bits)
};

static_assert(sizeof(Insn) == 32, "a decoded instruction fills half a cache line");

// Decoders: addr is the instruction's address (targets and PC-relative constants are resolved).
Insn decode_a32(uint32_t raw, uint32_t addr);
// hw2 is only read when hw1 starts a 32-bit encoding.
Insn decode_t32(uint16_t hw1, uint16_t hw2, uint32_t addr);
// Coprocessor space shared by both states: w = the encoding with bits 31:28 ignored.
Insn decode_coproc(uint32_t w, uint32_t addr, bool thumb);

}  // namespace vtoe::cpu::iss
