// PSCI (ARM DEN 0022) as QEMU's virt machine answers it, without the processors: the caller
// (the platform's firmware-call hook on SMC or HVC) passes r0-r3 and the calling core's index,
// writes the result back to r0 and carries out the action. Plain C++, no SystemC.
//
// The cores are 0 to N-1 with MPIDR affinity Aff0 = the index (QEMU virt's numbering below 8
// cores); a target names a core by its affinity fields (MPIDR bits [23:0]). Core 0 starts on,
// the others off (QEMU's start-powered-off for secondaries).
//
//   PSCI_VERSION                  1.1 (what QEMU 7.2 reports)
//   PSCI_FEATURES                 SUCCESS for the functions below, NOT_SUPPORTED otherwise
//   CPU_ON (32/64)                an off core: SUCCESS -> Action::CpuOn (target, entry point with
//                                 the Thumb bit, context id for its r0), the core now on; a core
//                                 on: ALREADY_ON; no such core: INVALID_PARAMETERS
//   AFFINITY_INFO (32/64)         lowest affinity level 0: ON (0) / OFF (1) for a core,
//                                 INVALID_PARAMETERS for no such core; a higher level: ON (QEMU:
//                                 "everything above affinity level 0 is always on")
//   MIGRATE_INFO_TYPE             2 (no migration needed: trusted OS not present)
//   CPU_OFF                       the caller off -> Action::CpuOff; the last core on ->
//                                 Action::PowerOff (the run ends: nothing could wake it)
//   SYSTEM_OFF                    Action::PowerOff (the run ends with status 0)
//   SYSTEM_RESET                  Action::Reset (the run ends with kResetExitStatus)
//   CPU_SUSPEND                   returns SUCCESS at once (a wake-up event ends the standby)
//   anything else                 NOT_SUPPORTED (-1), counted by function ID
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace vtoe::psci {

namespace fn {
constexpr std::uint32_t kVersion = 0x84000000;
constexpr std::uint32_t kCpuSuspend = 0x84000001, kCpuSuspend64 = 0xC4000001;
constexpr std::uint32_t kCpuOff = 0x84000002;
constexpr std::uint32_t kCpuOn = 0x84000003, kCpuOn64 = 0xC4000003;
constexpr std::uint32_t kAffinityInfo = 0x84000004, kAffinityInfo64 = 0xC4000004;
constexpr std::uint32_t kMigrateInfoType = 0x84000006;
constexpr std::uint32_t kSystemOff = 0x84000008;
constexpr std::uint32_t kSystemReset = 0x84000009;
constexpr std::uint32_t kFeatures = 0x8400000A;
}  // namespace fn

namespace ret {
constexpr std::int32_t kSuccess = 0, kNotSupported = -1, kInvalidParameters = -2, kDenied = -3,
                       kAlreadyOn = -4;
}  // namespace ret

constexpr std::uint32_t kVersion = 0x00010001;  // major 1, minor 1
// The exit status of a run that ended by SYSTEM_RESET (distinct from SYSTEM_OFF's 0).
constexpr int kResetExitStatus = 3;

enum class Action { None, PowerOff, Reset, CpuOn, CpuOff };

struct Result {
  std::uint32_t r0 = 0;  // what the caller writes back to r0
  Action action = Action::None;
  // CpuOn: the core to start, where (bit 0: Thumb) and its r0.
  int target = 0;
  std::uint32_t entry = 0, context_id = 0;
};

// AFFINITY_INFO's answers.
constexpr std::uint32_t kAffinityOn = 0, kAffinityOff = 1;

class Psci {
 public:
  // `mpidr` is core 0's MPIDR (affinity fields compared with CPU_ON's target); `cores` 1 to 8.
  explicit Psci(std::uint32_t mpidr = 0x80000000, int cores = 1);

  // Is `function` (r0 of the call) a PSCI function ID at all (0x84000000-0x8400001F or the 64-bit
  // range 0xC4000000-0xC400001F)? Other SMC/HVC calls are not PSCI's.
  static bool is_psci(std::uint32_t function) { return (function & 0xBFFFFFE0u) == 0x84000000u; }
  // A call by core `caller`.
  Result call(std::uint32_t function, std::uint32_t a1, std::uint32_t a2, std::uint32_t a3,
              int caller = 0);

  int cores() const { return static_cast<int>(on_.size()); }
  bool is_on(int core) const { return on_[static_cast<std::size_t>(core)]; }

  std::uint64_t calls() const { return calls_; }
  // Calls answered NOT_SUPPORTED, by function ID.
  const std::map<std::uint32_t, std::uint64_t>& unsupported() const { return unsupported_; }

 private:
  bool is_me(std::uint32_t target) const {
    return (target & 0x00FFFFFFu) == (mpidr_ & 0x00FFFFFFu);
  }
  Result call_smp(std::uint32_t function, std::uint32_t a1, std::uint32_t a2, std::uint32_t a3,
                  int caller);
  // The core whose affinity `target` names, or -1.
  int core_of(std::uint32_t target) const;

  std::uint32_t mpidr_;
  std::vector<bool> on_;
  std::uint64_t calls_ = 0;
  std::map<std::uint32_t, std::uint64_t> unsupported_;
};

}  // namespace vtoe::psci
