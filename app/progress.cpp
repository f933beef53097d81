#include "app/progress.h"

#include <unistd.h>

#include <cstdio>

namespace vtoe::app {

namespace {
// Shown after this much wall time, refreshed at most this often.
constexpr std::chrono::seconds kQuiet{3};
constexpr std::chrono::milliseconds kRefresh{500};
}  // namespace

Progress::Progress(core::TimePs end_ps, bool enabled)
    : end_ps_(end_ps),
      enabled_(enabled && isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

Progress::~Progress() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
}

void Progress::update(core::TimePs now_ps) {
  if (!enabled_) return;
  const auto wall = std::chrono::steady_clock::now();
  if (wall - start_ < kQuiet || wall - last_ < kRefresh) return;
  last_ = wall;
  shown_ = true;
  const double elapsed = std::chrono::duration<double>(wall - start_).count();
  const double sim_ms = static_cast<double>(now_ps) / 1e9;
  const double end_ms = static_cast<double>(end_ps_) / 1e9;
  const double speed = sim_ms / elapsed;  // simulated ms per wall second
  const double left = speed > 0 ? (end_ms - sim_ms) / speed : 0;
  std::fprintf(
      stderr,
      "\r\033[Kvtoe: %.1f of %.1f ms simulated (%.0f%%), %.2f sim ms per s, about %.0f s left",
      sim_ms, end_ms, end_ms > 0 ? 100 * sim_ms / end_ms : 0, speed, left);
  std::fflush(stderr);
}

}  // namespace vtoe::app
