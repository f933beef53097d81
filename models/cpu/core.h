// A processor core on which modelled software consumes cycles.
//
// Software is written as SystemC threads; each thread belongs to a Context (a process, a kernel
// thread, an interrupt handler) and calls execute(ctx, cycles, class) to spend CPU time. The core
// runs one context at a time: the highest priority ready context, round robin with a time slice
// among equal priorities, and a higher priority context preempts a lower one at once. Every
// picosecond of the core is accounted to one owner (VM) and class: guest user, guest kernel,
// hypervisor, or to idle when nothing is ready.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/module.h"

namespace vtoe::cpu {

enum class CycleClass : int { GuestUser = 0, GuestKernel = 1, Hypervisor = 2 };
constexpr int kCycleClasses = 3;
const char* to_string(CycleClass cls);

struct CoreParams {
  double freq_hz = 2e9;
  // Slice after which a ready context of the same priority gets the core (guest context switch).
  core::TimePs timeslice_ps = 2'500'000'000;  // 2.5 ms
  // Cycles charged (as guest kernel) when the core switches between two different contexts of
  // priority >= switch_cost_min_priority (process switches; interrupt entry has its own cost).
  double switch_cycles = 0;
  int switch_cost_min_priority = 2;
};

class Core : public core::Module {
 public:
  class Context {
   public:
    const std::string& name() const { return name_; }
    int priority() const { return priority_; }
    int owner() const { return owner_; }
    bool busy() const { return pending_; }

   private:
    friend class Core;
    std::string name_;
    int priority_ = 0;
    int owner_ = 0;
    bool pending_ = false;
    core::TimePs remaining_ps_ = 0;  // work left in the current request
    core::TimePs overhead_ps_ = 0;   // switch cost to run before the request, as guest kernel
    CycleClass cls_ = CycleClass::GuestKernel;
    std::uint64_t seq_ = 0;  // FIFO order among equal priorities
    core::TimePs slice_used_ps_ = 0;
    sc_core::sc_event done_;
  };

  SC_HAS_PROCESS(Core);
  Core(const sc_core::sc_module_name& name, const CoreParams& params, int owners = 1);

  // Lower number = higher priority. Owner is the VM index the context's cycles are charged to.
  Context& add_context(const std::string& name, int priority, int owner = 0);

  // Spend `cycles` on the core as `cls`; returns when they have been executed. Call only from
  // the SystemC thread that stands for `ctx`.
  void execute(Context& ctx, double cycles, CycleClass cls);

  double freq_hz() const { return params_.freq_hz; }
  core::TimePs cycles_ps(double cycles) const {
    return core::cycles_to_ps(cycles, params_.freq_hz);
  }

  // Accounting since the last baseline, in picoseconds of core time (brought up to now).
  core::TimePs busy_ps(int owner, CycleClass cls);
  core::TimePs idle_ps();
  core::TimePs accounted_ps();  // sum of all classes and idle since baseline
  void mark_baseline();
  int owners() const { return static_cast<int>(busy_.size()); }
  std::uint64_t context_switches() const { return switches_.value(); }

 private:
  void on_tick();
  void account();
  void reschedule();
  Context* pick() const;

  CoreParams params_;
  std::deque<Context> contexts_;  // deque: stable addresses
  std::vector<Context*> ready_;
  Context* current_ = nullptr;
  Context* last_ran_ = nullptr;
  Context* last_process_ = nullptr;  // last context of process priority (for switch costs)
  core::TimePs seg_start_ = 0;
  core::TimePs baseline_at_ = 0;
  std::uint64_t next_seq_ = 1;
  std::vector<std::array<core::TimePs, kCycleClasses>> busy_;
  core::TimePs idle_ = 0;
  sc_core::sc_event tick_;
  core::Counter& switches_;
  core::Counter& preemptions_;
};

}  // namespace vtoe::cpu
