// Runs a test's body as one SystemC thread: construct it before sc_start().
#pragma once

#include <functional>
#include <systemc>
#include <utility>

namespace vtoe::test {

struct Proc : sc_core::sc_module {
  SC_HAS_PROCESS(Proc);
  Proc(const sc_core::sc_module_name& n, std::function<void()> body)
      : sc_module(n), body_(std::move(body)) {
    SC_THREAD(run);
  }
  void run() {
    body_();
    done = true;
  }
  std::function<void()> body_;
  bool done = false;  // the body returned
};

}  // namespace vtoe::test
