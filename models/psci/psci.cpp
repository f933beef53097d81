#include "models/psci/psci.h"

#include <stdexcept>
#include <string>

namespace vtoe::psci {

namespace {
std::uint32_t u(std::int32_t v) { return static_cast<std::uint32_t>(v); }
}  // namespace

Psci::Psci(std::uint32_t mpidr, int cores) : mpidr_(mpidr) {
  if (cores < 1 || cores > 8)
    throw std::invalid_argument("PSCI: 1 to 8 cores, not " + std::to_string(cores));
  on_.assign(static_cast<std::size_t>(cores), false);
  on_[0] = true;
}

int Psci::core_of(std::uint32_t target) const {
  const std::uint32_t aff = target & 0x00FFFFFFu;
  const std::uint32_t base = mpidr_ & 0x00FFFFFFu;  // core 0's
  if (aff < base || aff - base >= on_.size()) return -1;
  return static_cast<int>(aff - base);
}

Result Psci::call(std::uint32_t function, std::uint32_t a1, std::uint32_t a2, std::uint32_t a3,
                  int caller) {
  if (on_.size() > 1) {
    switch (function) {
      case fn::kCpuOn:
      case fn::kCpuOn64:
      case fn::kAffinityInfo:
      case fn::kAffinityInfo64:
      case fn::kCpuOff:
        return call_smp(function, a1, a2, a3, caller);
      default:
        break;  // the others do not depend on the cores: as with one
    }
  }
  ++calls_;
  Result r;
  switch (function) {
    case fn::kVersion:
      r.r0 = kVersion;
      break;
    case fn::kFeatures:
      switch (a1) {
        case fn::kVersion:
        case fn::kCpuSuspend:
        case fn::kCpuSuspend64:
        case fn::kCpuOff:
        case fn::kCpuOn:
        case fn::kCpuOn64:
        case fn::kAffinityInfo:
        case fn::kAffinityInfo64:
        case fn::kMigrateInfoType:
        case fn::kSystemOff:
        case fn::kSystemReset:
        case fn::kFeatures:
          r.r0 = u(ret::kSuccess);
          break;
        default:
          r.r0 = u(ret::kNotSupported);
      }
      break;
    case fn::kCpuOn:
    case fn::kCpuOn64:
      r.r0 = u(is_me(a1) ? ret::kAlreadyOn : ret::kInvalidParameters);
      break;
    case fn::kAffinityInfo:
    case fn::kAffinityInfo64:
      r.r0 = u(is_me(a1) ? 0 : ret::kInvalidParameters);
      break;
    case fn::kMigrateInfoType:
      r.r0 = 2;
      break;
    case fn::kCpuSuspend:
    case fn::kCpuSuspend64:
      r.r0 = u(ret::kSuccess);
      break;
    case fn::kCpuOff:
    case fn::kSystemOff:
      r.action = Action::PowerOff;
      break;
    case fn::kSystemReset:
      r.action = Action::Reset;
      break;
    default:
      ++unsupported_[function];
      r.r0 = u(ret::kNotSupported);
  }
  return r;
}

}  // namespace vtoe::psci

namespace vtoe::psci {

// Several cores: CPU_ON, CPU_OFF and AFFINITY_INFO act on their power states (QEMU 7.2's
// target/arm/psci.c and arm-powerctl.c).
Result Psci::call_smp(std::uint32_t function, std::uint32_t a1, std::uint32_t a2, std::uint32_t a3,
                      int caller) {
  Result r;
  switch (function) {
    case fn::kCpuOn:
    case fn::kCpuOn64: {
      ++calls_;
      const int t = core_of(a1);
      if (t < 0) {
        r.r0 = u(ret::kInvalidParameters);
      } else if (on_[static_cast<std::size_t>(t)]) {
        r.r0 = u(ret::kAlreadyOn);
      } else {
        on_[static_cast<std::size_t>(t)] = true;
        r.r0 = u(ret::kSuccess);
        r.action = Action::CpuOn;
        r.target = t;
        r.entry = a2;
        r.context_id = a3;
      }
      return r;
    }
    case fn::kAffinityInfo:
    case fn::kAffinityInfo64: {
      ++calls_;
      const int t = core_of(a1);
      if (a2 != 0)
        r.r0 = kAffinityOn;  // QEMU: every level above 0 is always on
      else if (t < 0)
        r.r0 = u(ret::kInvalidParameters);
      else
        r.r0 = on_[static_cast<std::size_t>(t)] ? kAffinityOn : kAffinityOff;
      return r;
    }
    case fn::kCpuOff: {
      ++calls_;
      on_[static_cast<std::size_t>(caller)] = false;
      bool any = false;
      for (bool on : on_) any = any || on;
      r.action = any ? Action::CpuOff : Action::PowerOff;
      return r;
    }
    default:
      return r;
  }
}

}  // namespace vtoe::psci
