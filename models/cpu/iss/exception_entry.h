// Exception entry of one core (ARM ARM B1.8, B1.9): the PL1 vectors (VBAR or high vectors,
// SCTLR.TE), Hyp mode's (HVBAR, the Hyp trap vector 0x14, HSR with its syndrome, ELR_hyp),
// interrupt routing by CPSR and HCR (physical, virtual, virtual abort), and the faults an
// instruction throws (undefined, bus errors, alignment, the MMU's aborts) turned into the
// exception the architecture takes, with its fault status and address registers. It counts what
// it takes. It works on the core's state (ArmState) and its mode switch.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/cpu/iss/insn.h"
#include "models/cpu/iss/mmu.h"

namespace vtoe::cpu::iss {

class ArmCore;

// Exceptions of system mode, counted by kind (taken to a PL1 mode or to Hyp mode). HypTrap is
// the Hyp trap vector (0x14): HVC from PL1, trapped instructions, stage-2 aborts.
enum class Exception : uint8_t {
  Undefined,
  Svc,
  PrefetchAbort,
  DataAbort,
  Irq,
  Fiq,
  HypTrap,
  Count
};
const char* to_string(Exception e);

// HSR exception classes (ARM ARM B3.13.6) the core reports.
namespace hsr_ec {
constexpr uint8_t kUnknown = 0x00, kWfiWfe = 0x01, kMcrMrcCp15 = 0x03, kMcrrMrrcCp15 = 0x04,
                  kMcrMrcCp14 = 0x05, kCp10 = 0x07, kMrcCp10Id = 0x08, kSvc = 0x11, kHvc = 0x12,
                  kSmc = 0x13, kPrefetchAbortLower = 0x20, kPrefetchAbortHyp = 0x21,
                  kDataAbortLower = 0x24, kDataAbortHyp = 0x25;
}

// The same synchronous exception taken again and again at the same instruction with no
// progress between (ExceptionEntry::kStormEntries times in a row, at most kStormGap instructions
// retired between two): a handler that faults at once, a vector table of undefined
// instructions, a handler that returns to retry what it cannot fix. Thrown out of run()/step()
// with the vector, the modes and the faulting instruction in what().
class ExceptionLoop : public std::runtime_error {
 public:
  explicit ExceptionLoop(const std::string& what) : std::runtime_error(what) {}
};

class ExceptionEntry {
 public:
  static constexpr uint32_t kStormEntries = 10000;
  static constexpr uint64_t kStormGap = 4;

  explicit ExceptionEntry(ArmCore& core) : core_(core) {}
  ExceptionEntry(const ExceptionEntry&) = delete;
  ExceptionEntry& operator=(const ExceptionEntry&) = delete;

  // Entry to a PL1 mode at its vector, with LR and SPSR of that mode.
  void take_exception(Exception e, uint32_t lr, uint32_t spsr);
  // Entry to Hyp mode (B1.8.4): vector HVBAR + offset, ELR_hyp = return address.
  void enter_hyp(uint32_t offset, uint32_t return_addr, uint32_t spsr);
  // Entry to Hyp mode with a syndrome in HSR (counted by class; at 0x14 also as a Hyp trap).
  void enter_hyp_with_syndrome(uint8_t ec, uint32_t iss, bool il32, uint32_t offset,
                               uint32_t return_addr);
  // A synchronous exception to Hyp mode with its syndrome: from Hyp mode at `hyp_offset`, from
  // the other modes at the Hyp trap vector. The return address is the instruction itself.
  void hyp_trap(uint8_t ec, uint32_t iss, const Insn& in, uint32_t hyp_offset = 0x14);
  // The condition field a trapped instruction reports in HSR.ISS (CV = 1).
  uint32_t trap_cond(const Insn& in) const;
  static uint32_t hsr_value(uint8_t ec, uint32_t iss, bool il32) {
    return (uint32_t{ec} << 26) | (il32 ? 1u << 25 : 0u) | (iss & 0x1ffffff);
  }

  // What the interrupt inputs and HCR make takeable now: 0 none, else a code for
  // take_pending_interrupt.
  int pending_interrupt() const;
  bool take_pending_interrupt();

  // A synchronous exception an instruction threw (in a catch block: syscall emulation and a
  // fetch fault in the very vector table rethrow it).
  // Both throw ExceptionLoop when the entry completes a storm (kStormEntries).
  void take_fault(Exception e, uint32_t fault_addr, bool write, bool alignment);
  void take_mmu_fault(const MmuAbort& a);
  // BKPT: a debug event taken as a prefetch abort (ABT mode, or Hyp's 0x0C with EC 0x21).
  void take_debug_event(bool il32);

  // Every exception entry (to PL1 modes and to Hyp mode, synchronous and interrupts): what
  // run(max) and a platform's instruction bound count beside retired instructions.
  uint64_t entries() const { return entries_; }
  // Prefetch aborts taken because an instruction could not be fetched (not BKPT's).
  uint64_t fetch_faults() const { return fetch_faults_; }
  // The last synchronous exception taken ("" if none): its kind, the faulting instruction with
  // its address and mode, the vector and the mode it entered, and how many times in a row.
  std::string last_fault() const;

  // The entry counters, for a snapshot (the storm detector's run of repeats starts afresh).
  struct Counts {
    uint64_t entries, fetch_faults;
    std::array<uint64_t, static_cast<int>(Exception::Count)> taken, hyp_taken;
    std::array<uint64_t, 64> hyp_ec;
  };
  Counts counts() const { return {entries_, fetch_faults_, taken_, hyp_taken_, hyp_ec_}; }
  void restore_counts(const Counts& c) {
    entries_ = c.entries;
    fetch_faults_ = c.fetch_faults;
    taken_ = c.taken;
    hyp_taken_ = c.hyp_taken;
    hyp_ec_ = c.hyp_ec;
    have_last_ = false;
    repeats_ = 0;
  }

  uint64_t taken(Exception e) const { return taken_[static_cast<int>(e)]; }
  uint64_t hyp_entries(uint8_t ec) const { return hyp_ec_[ec & 63]; }
  uint64_t hyp_interrupts(Exception e) const { return hyp_taken_[static_cast<int>(e)]; }

 private:
  // Where a synchronous exception was raised (before its entry), and what the entry did.
  struct Site {
    uint32_t pc = 0;
    uint8_t mode = 0;
    bool thumb = false;
  };
  Site site() const;
  // ISV with SAS, SSE and SRT for a data abort to Hyp mode on a single load or store without
  // write-back (what a hypervisor emulates), and il32; 0 (and false) for anything else.
  uint32_t data_abort_iss(bool& il32) const;
  void take_fault_entry(Exception e, uint32_t fault_addr, bool write, bool alignment);
  void take_mmu_fault_entry(const MmuAbort& a);
  // After a synchronous entry from `from`: counts repeats without progress, throws at a storm.
  void check_progress(const Site& from, Exception kind);

  ArmCore& core_;
  uint64_t entries_ = 0, fetch_faults_ = 0;
  // The last synchronous exception and its run of repeats.
  bool have_last_ = false;
  Site last_from_;
  Exception last_kind_ = Exception::Undefined;
  uint32_t last_vector_ = 0;
  uint8_t last_to_mode_ = 0;
  uint64_t last_retired_ = 0;
  uint32_t repeats_ = 0;
  std::array<uint64_t, static_cast<int>(Exception::Count)> taken_ = {};      // to PL1 modes
  std::array<uint64_t, static_cast<int>(Exception::Count)> hyp_taken_ = {};  // to Hyp mode
  std::array<uint64_t, 64> hyp_ec_ = {};
};

}  // namespace vtoe::cpu::iss
