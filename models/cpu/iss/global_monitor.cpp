#include "models/cpu/iss/global_monitor.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace vtoe::cpu::iss {

GlobalMonitor::GlobalMonitor(int cores) : cores_(cores) {
  if (cores < 1 || cores > kMaxCores)
    throw std::invalid_argument("a global monitor serves 1 to 8 cores, not " +
                                std::to_string(cores));
}

GlobalMonitor::Slot& GlobalMonitor::at(int core) {
  if (core < 0 || core >= cores_)
    throw std::out_of_range("global monitor: no core " + std::to_string(core));
  return slots_[static_cast<std::size_t>(core)];
}

void GlobalMonitor::reserve(int core, const std::uint8_t* host, unsigned len) {
  Slot& s = at(core);
  s.valid = true;
  s.host = host;
  s.len = len;
  s.value = 0;
  std::memcpy(&s.value, host, len);
}

bool GlobalMonitor::claim(int core, const std::uint8_t* host, unsigned len) {
  Slot& s = at(core);
  std::uint64_t now = 0;
  if (s.valid && s.host == host && s.len == len) std::memcpy(&now, host, len);
  const bool ok = s.valid && s.host == host && s.len == len && now == s.value;
  s.valid = false;
  if (!ok) {
    ++failures_;
    return false;
  }
  ++claims_;
  const std::uintptr_t g = granule(host);
  for (int c = 0; c < cores_; ++c) {
    Slot& o = slots_[static_cast<std::size_t>(c)];
    if (o.valid && granule(o.host) == g) o.valid = false;
  }
  return true;
}

}  // namespace vtoe::cpu::iss
