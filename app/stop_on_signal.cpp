#include "app/stop_on_signal.h"

namespace vtoe::app {

volatile std::sig_atomic_t StopOnSignal::signal_ = 0;
void (*StopOnSignal::also_)(int) = nullptr;

StopOnSignal::StopOnSignal(void (*also)(int)) {
  signal_ = 0;
  also_ = also;
  previous_int_ = std::signal(SIGINT, &StopOnSignal::handle);
  previous_term_ = std::signal(SIGTERM, &StopOnSignal::handle);
}

StopOnSignal::~StopOnSignal() {
  std::signal(SIGINT, previous_int_);
  std::signal(SIGTERM, previous_term_);
  also_ = nullptr;
}

std::string StopOnSignal::signal_name() {
  if (signal_ == 0) return "";
  return signal_ == SIGINT ? "SIGINT" : "SIGTERM";
}

void StopOnSignal::handle(int sig) {
  signal_ = sig;
  if (also_) also_(sig);
  std::signal(sig, SIG_DFL);
}

}  // namespace vtoe::app
