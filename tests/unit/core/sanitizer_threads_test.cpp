// The sanitizer build (preset asan) links SystemC with POSIX-thread processes
// (scripts/build-systemc.sh pthreads): each SC_THREAD runs on a thread of its own, and what a
// thread still waiting at the end of a simulation holds in its locals is reachable for
// LeakSanitizer. With QuickThreads coroutines (Debian's libsystemc) both tests fail under ASan:
// the thread shares the main thread, and its mmap'ed stack is not scanned, so the block is a leak.
#include <gtest/gtest.h>
#include <pthread.h>

#include <memory>
#include <systemc>
#include <vector>

#include "tests/support/sc_test_main.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define VTOE_ASAN 1
#endif

using namespace sc_core;

namespace {

// Allocates a block, keeps it in a local only and waits for an event that never comes.
struct Holder : sc_module {
  SC_HAS_PROCESS(Holder);
  explicit Holder(const sc_module_name& n) : sc_module(n) { SC_THREAD(run); }
  void run() {
    thread = pthread_self();
    auto block = std::make_unique<std::vector<int>>(4096, 7);
    started = true;
    wait(never);
    held = block->size();  // not reached
  }
  sc_event never;
  pthread_t thread{};
  bool started = false;
  std::size_t held = 0;
};

}  // namespace

TEST(SanitizerThreads, WaitingThreadsLocalsAreReachableAndThreadsAreRealThreads) {
#ifndef VTOE_ASAN
  GTEST_SKIP() << "only meaningful in the sanitizer build (preset asan)";
#else
  Holder h("holder");
  sc_start(sc_time(1, SC_US));
  ASSERT_TRUE(h.started);
  EXPECT_FALSE(pthread_equal(h.thread, pthread_self())) << "SystemC processes are coroutines";
  // The block is held by the waiting thread's local: no leak.
  EXPECT_EQ(__lsan_do_recoverable_leak_check(), 0);
#endif
}

VTOE_TEST_MAIN
