// PSCI (ARM DEN 0022) as QEMU's virt machine answers it for one core, without the processor:
// the caller (the platform's firmware-call hook on SMC or HVC) passes r0-r3 and writes the
// result back to r0. Plain C++, no SystemC.
//
//   PSCI_VERSION                  1.1 (what QEMU 7.2 reports)
//   PSCI_FEATURES                 SUCCESS for the functions below, NOT_SUPPORTED otherwise
//   CPU_ON (32/64)                ALREADY_ON for core 0 (the one running), INVALID_PARAMETERS for
//                                 any other MPIDR (there is none)
//   AFFINITY_INFO (32/64)         ON (0) for core 0, INVALID_PARAMETERS otherwise
//   MIGRATE_INFO_TYPE             2 (no migration needed: trusted OS not present)
//   CPU_OFF                       the run ends (the only core is off) -> Action::PowerOff
//   SYSTEM_OFF                    Action::PowerOff (the run ends with status 0)
//   SYSTEM_RESET                  Action::Reset (the run ends with kResetExitStatus)
//   CPU_SUSPEND                   returns SUCCESS at once (a wake-up event ends the standby)
//   anything else                 NOT_SUPPORTED (-1), counted by function ID
#pragma once

#include <cstdint>
#include <map>

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

enum class Action { None, PowerOff, Reset };

struct Result {
  std::uint32_t r0 = 0;  // what the caller writes back to r0
  Action action = Action::None;
};

class Psci {
 public:
  // `mpidr` is the running core's MPIDR (affinity fields compared with CPU_ON's target).
  explicit Psci(std::uint32_t mpidr = 0x80000000) : mpidr_(mpidr) {}

  // Is `function` (r0 of the call) a PSCI function ID at all (0x84000000-0x8400001F or the 64-bit
  // range 0xC4000000-0xC400001F)? Other SMC/HVC calls are not PSCI's.
  static bool is_psci(std::uint32_t function) { return (function & 0xBFFFFFE0u) == 0x84000000u; }
  Result call(std::uint32_t function, std::uint32_t a1, std::uint32_t a2, std::uint32_t a3);

  std::uint64_t calls() const { return calls_; }
  // Calls answered NOT_SUPPORTED, by function ID.
  const std::map<std::uint32_t, std::uint64_t>& unsupported() const { return unsupported_; }

 private:
  bool is_me(std::uint32_t target) const {
    return (target & 0x00FFFFFFu) == (mpidr_ & 0x00FFFFFFu);
  }

  std::uint32_t mpidr_;
  std::uint64_t calls_ = 0;
  std::map<std::uint32_t, std::uint64_t> unsupported_;
};

}  // namespace vtoe::psci
