// The VMM scheduler interface: which VM's vCPU runs on the one physical core.
//
// The scheduler is plain C++ with no SystemC inside and keeps no clock of its own: the core model
// passes the current simulated time (picoseconds) into every call, and asks next_event() when it
// should call pick() again. Calls must come with non-decreasing `now`.
#pragma once

#include <cstdint>

namespace vtoe::cpu {

using TimePs = std::uint64_t;
constexpr TimePs kNoEvent = UINT64_MAX;

// Decides which VM's vCPU runs on the one physical core. The core model calls it; it keeps no
// clock.
class VmScheduler {
 public:
  virtual ~VmScheduler() = default;
  virtual int vm_count() const = 0;
  // VM `vm` has work to run (a guest context became ready) while it was not runnable.
  // io_event: it was woken by an I/O completion (a virtual interrupt) rather than by its own
  // timer/work. Returns true when the VM should preempt the running one right now (Tickle).
  virtual bool wake(int vm, bool io_event, TimePs now) = 0;
  // VM `vm` has nothing left to run (all its contexts blocked: the guest executes WFI).
  virtual void block(int vm, TimePs now) = 0;
  // The core asks which VM should run now; it calls this at next_event() times, after wake()
  // returned true, and when the running VM blocked. `running` is the VM on the core (-1 none).
  // Returns the VM to run (may equal `running`), or -1 when no VM is runnable.
  virtual int pick(int running, TimePs now) = 0;
  // Absolute time at which the scheduler wants pick() called again (tick or slice end); kNoEvent
  // if none.
  virtual TimePs next_event(TimePs now) const = 0;
  // For results and traces.
  virtual const char* state_name(int vm) const = 0;  // "BOOST", "UNDER", "OVER", "BLOCKED"
};

}  // namespace vtoe::cpu
