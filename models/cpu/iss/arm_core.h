// An ARMv7-A core in user mode: A32 and T32 states with interworking, VFPv3-D16, and a
// decoded-instruction cache (each address is decoded once; a write to a code page drops that
// page's decoded instructions).
//
// The core is plain C++ (no SystemC): it runs instructions against a GuestMemory and hands SVC to
// a SupervisorCall handler (Linux system-call emulation, or a test). Retired instructions are
// counted by class, so that timing models can sit behind it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/cpu/iss/guest_memory.h"
#include "models/cpu/iss/insn.h"

namespace vtoe::cpu::iss {

// An encoding the core does not implement (the architectural Undefined Instruction exception).
class UndefinedInstruction : public std::runtime_error {
 public:
  UndefinedInstruction(uint32_t addr, uint32_t raw, bool thumb, uint8_t len);
  uint32_t addr;
  uint32_t raw;
  bool thumb;
};

// An unaligned address for an instruction that requires alignment (LDRD/STRD, LDM/STM,
// LDREX/STREX, VFP loads and stores): the architecture's alignment fault (SIGBUS on Linux).
// Ordinary LDR/STR/LDRH/STRH may be unaligned (SCTLR.A = 0, as Linux runs user code).
class AlignmentFault : public std::runtime_error {
 public:
  AlignmentFault(uint32_t addr, uint32_t size);
  uint32_t addr;
};

class ArmCore;

// Receives SVC instructions (the core has no operating system of its own).
class SupervisorCall {
 public:
  virtual ~SupervisorCall() = default;
  virtual void svc(ArmCore& core, uint32_t imm) = 0;
};

class ArmCore {
 public:
  static constexpr int kClasses = static_cast<int>(InsnClass::Count);

  explicit ArmCore(GuestMemory& mem);
  ~ArmCore();
  ArmCore(const ArmCore&) = delete;
  ArmCore& operator=(const ArmCore&) = delete;

  GuestMemory& memory() { return mem_; }
  void set_svc_handler(SupervisorCall* h) { svc_ = h; }

  uint32_t reg(int n) const { return n == 15 ? pc_ : r_[n]; }
  void set_reg(int n, uint32_t v);
  // Address of the next instruction; bit 0 of `addr` selects Thumb state.
  void set_pc(uint32_t addr);
  uint32_t pc() const { return pc_; }
  bool thumb() const { return thumb_; }
  // N Z C V Q in bits 31..27, GE in 19..16, T in bit 5, user mode.
  uint32_t cpsr() const;
  void set_nzcv(uint32_t bits31_28);
  uint32_t tls() const { return tls_; }
  void set_tls(uint32_t v) { tls_ = v; }
  uint32_t sreg(int n) const { return s_[n]; }
  void set_sreg(int n, uint32_t v) { s_[n] = v; }
  uint64_t dreg(int n) const { return s_[2 * n] | (uint64_t{s_[2 * n + 1]} << 32); }
  void set_dreg(int n, uint64_t v);
  uint32_t fpscr() const;
  void set_fpscr(uint32_t v);

  // Runs until halt() or `max` instructions; returns how many retired.
  uint64_t run(uint64_t max = ~uint64_t{0});
  // One instruction (run() is the fast way to execute many).
  void step();
  void halt() { halted_ = true; }
  bool halted() const { return halted_; }

  uint64_t retired() const;
  uint64_t retired(InsnClass c) const { return retired_[static_cast<int>(c)]; }
  uint64_t decoded() const { return decoded_; }

 private:
  struct DecodedPage {
    Insn a32[GuestMemory::kPageSize / 4];
    Insn t32[GuestMemory::kPageSize / 2];
  };

  class GuestFpScope;
  void step_inner();
  void enter_guest_fp();
  void leave_guest_fp();
  const Insn& fetch_decoded() {  // the common case: decoded before
    DecodedPage* p = pages_[pc_ >> GuestMemory::kPageBits].get();
    if (p) {
      uint32_t off = pc_ & (GuestMemory::kPageSize - 1);
      const Insn& s = thumb_ ? p->t32[off >> 1] : p->a32[off >> 2];
      if (s.op != Op::None) return s;
    }
    return lookup(pc_);
  }
  const Insn& lookup(uint32_t pc);
  void drop_page(uint32_t page);
  Insn decode(uint32_t pc);
  bool cond_pass(uint32_t cond) const;
  void execute(const Insn& in);
  void execute_vfp(const Insn& in);
  void execute_vfp_op(const Insn& in, bool dbl);
  // Executors stored in Insn::fn: data processing per operation and operand kind, loads and
  // stores per size and offset kind, branches, and everything else through execute().
  template <uint8_t Sub, uint8_t Kind>
  static void exec_dp(ArmCore& c, const Insn& in);
  template <uint8_t Sub, bool RegOff>
  static void exec_ls(ArmCore& c, const Insn& in);
  static void exec_branch(ArmCore& c, const Insn& in);
  static void exec_other(ArmCore& c, const Insn& in) { c.execute(in); }
  static ExecFn executor_for(const Insn& in);
  template <uint8_t Kind, size_t... S>
  static constexpr std::array<ExecFn, sizeof...(S)> dp_table(std::index_sequence<S...>);
  void load_store_multi(const Insn& in);
  void multiply(const Insn& in);
  void media(const Insn& in);
  void parallel(const Insn& in);
  void write_reg(int n, uint32_t v) {
    if (n == 15) alu_write_pc(v);
    else r_[n] = v;
  }
  void alu_write_pc(uint32_t v);  // A32: interworking; T32: stays in Thumb
  void bx_write_pc(uint32_t v);   // interworking branch
  void set_nz(uint32_t v) {
    n_ = v >> 31;
    z_ = v == 0;
  }
  [[noreturn]] void undefined(const Insn& in) const;
  static void check_aligned(uint32_t addr, uint32_t size) {
    if (addr & (size - 1)) throw AlignmentFault(addr, size);
  }

  GuestMemory& mem_;
  SupervisorCall* svc_ = nullptr;
  uint32_t r_[16] = {};  // r_[15] holds the PC as instructions read it (address + 8 or + 4)
  uint32_t pc_ = 0;      // address of the current instruction
  uint32_t next_ = 0;    // address of the next one (branches write it)
  bool thumb_ = false;
  uint32_t n_ = 0, z_ = 0, c_ = 0, v_ = 0, q_ = 0, ge_ = 0;
  uint8_t itstate_ = 0;
  bool in_it_ = false;
  bool halted_ = false;
  bool monitor_ = false;  // local exclusive monitor (one core: no other observer)
  uint32_t monitor_addr_ = 0;
  uint32_t tls_ = 0;
  uint32_t s_[32] = {};
  uint32_t fpscr_ = 0;
  // Host floating-point environment while guest code runs (see GuestFpScope).
  bool in_guest_fp_ = false;
  int guest_fp_flags_ = 0;  // host FE_* flags of the guest between runs
  int host_fp_flags_ = 0, host_rounding_ = 0;
  std::vector<std::unique_ptr<DecodedPage>> pages_;
  // Pages dropped by a write while one of their instructions may still be executing; freed at
  // the next decode.
  std::vector<std::unique_ptr<DecodedPage>> dropped_;
  std::array<uint64_t, kClasses> retired_ = {};
  uint64_t decoded_ = 0;
};

}  // namespace vtoe::cpu::iss
