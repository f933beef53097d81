// A progress line for long runs: simulated time, speed and an estimate of the time left, on
// standard error when it is a terminal and only after a few seconds of wall time (never in files
// or CI logs, which are not terminals).
#pragma once

#include <chrono>
#include <cstdint>

#include "models/core/sim_time.h"

namespace vtoe::app {

class Progress {
 public:
  // `enabled` false (or stderr not a terminal): nothing is ever printed.
  Progress(core::TimePs end_ps, bool enabled);
  ~Progress();  // clears the line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void update(core::TimePs now_ps);

 private:
  core::TimePs end_ps_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace vtoe::app
