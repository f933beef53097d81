#include "models/psci/psci.h"

namespace vtoe::psci {

namespace {
std::uint32_t u(std::int32_t v) { return static_cast<std::uint32_t>(v); }
}  // namespace

Result Psci::call(std::uint32_t function, std::uint32_t a1, std::uint32_t /*a2*/,
                  std::uint32_t /*a3*/) {
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
