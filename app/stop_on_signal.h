// SIGINT and SIGTERM as a request to end a run early, with what was simulated so far kept.
#pragma once

#include <csignal>
#include <string>

namespace vtoe::app {

/// While it lives, SIGINT and SIGTERM only set a flag that the runner looks at between steps of
/// the simulation (and call `also`, which must be async-signal-safe: the NetVP pacer's stop
/// request). Once: the handler then gives the signal back to its default action, so a second one
/// ends the program as usual.
class StopOnSignal {
 public:
  explicit StopOnSignal(void (*also)(int) = nullptr);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  /// The signal that came (SIGINT, SIGTERM), or 0. Kept after the object ends, until the next
  /// one is made, so that the caller can choose its exit status.
  static int signal_number() { return signal_; }
  /// "SIGINT" or "SIGTERM"; "" while no signal came.
  static std::string signal_name();
  /// The exit status of a program ended by that signal, as the shell reports one (128 + its
  /// number: 130 for SIGINT, 143 for SIGTERM); 0 while no signal came.
  static int exit_status() { return signal_ ? 128 + signal_ : 0; }

 private:
  static void handle(int sig);
  static volatile std::sig_atomic_t signal_;
  static void (*also_)(int);
  void (*previous_int_)(int) = SIG_DFL;
  void (*previous_term_)(int) = SIG_DFL;
};

}  // namespace vtoe::app
