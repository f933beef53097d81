// CP15 (and the CP14 registers a kernel probes) of one core, as a table: every register and
// operation the core implements, with who may access it (PL0, PL1, Hyp mode), which Hyp trap
// covers it, and how it reads and writes. An encoding that is not in the table raises Undefined
// Instruction (register_names() lists the table, so that coverage is visible).
//
// The registers themselves are the core's state (ArmState::cp15, ::cp14, ::timer): this object
// is the access path, as QEMU's cpreg tables are. Writes have their side effects on the core
// (TLB flushes, the timer listener, a new translation regime), and a trapped access enters Hyp
// mode through the core's exception entry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/cpu/iss/insn.h"

namespace vtoe::cpu::iss {

class ArmCore;

class Cp15 {
 public:
  static constexpr uint32_t kMidr = 0x414fc0f0;   // Cortex-A15 r4p0, as QEMU 7.2 reports it
  // Multiprocessor Extensions, affinity 0: core 0's (ArmCore::set_mpidr gives the others theirs).
  static constexpr uint32_t kMpidr = 0x80000000;

  explicit Cp15(ArmCore& core) : core_(core) {}
  Cp15(const Cp15&) = delete;
  Cp15& operator=(const Cp15&) = delete;

  // MRC/MCR (is64 false) or MRRC/MCRR of the instruction at the core's PC: the access checks, the
  // Hyp traps (HSTR, HCR, CNTHCTL; the trap is taken and 0 returned), then the read (returned) or
  // the write of `value`. Throws UndefinedInstruction.
  uint64_t access(const Insn& in, bool is64, bool read, uint64_t value);
  // MRC/MCR p14: ThumbEE's TEECR/TEEHBR and the debug registers; throws UndefinedInstruction.
  uint32_t cp14_access(const Insn& in, bool read, uint32_t value);

  // A register by its coordinates, without access checks, traps or side effects on reading;
  // nullopt: not implemented (or write-only).
  std::optional<uint32_t> read(uint32_t crn, uint32_t opc1, uint32_t crm, uint32_t opc2);
  std::optional<uint64_t> read64(uint32_t opc1, uint32_t crm);
  // Writes one with its side effects, without access checks or traps. False: not implemented or
  // not writable.
  bool write(uint32_t crn, uint32_t opc1, uint32_t crm, uint32_t opc2, uint32_t v);
  bool write64(uint32_t opc1, uint32_t crm, uint64_t v);

  // "name crn opc1 crm opc2" per register and operation (coverage listing).
  static std::vector<std::string> register_names();

 private:
  struct Reg;
  static const std::vector<Reg>& table();
  static std::vector<Reg> with_reserved_id_space(std::vector<Reg> t);
  static std::vector<Reg> with_pmu_counters(std::vector<Reg> t);
  static const Reg* find(bool is64, uint32_t key);

  ArmCore& core_;
};

}  // namespace vtoe::cpu::iss
