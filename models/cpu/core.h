// A processor core on which modelled software consumes cycles.
//
// Software is written as SystemC threads; each thread belongs to a Context (a process, a kernel
// thread, an interrupt handler, a hypervisor handler) and calls execute(ctx, cycles, class) to
// spend CPU time. The core runs one context at a time:
//  - hypervisor contexts first (they preempt any guest: exceptions taken to Hyp mode);
//  - then the contexts of the VM whose vCPU is on the core. Which VM that is, is decided by a
//    VmScheduler when one is set (virtualized platforms); without one every guest context is
//    eligible (native platform);
//  - among them the highest priority ready context, round robin with a time slice among equal
//    priorities; a higher priority context preempts a lower one at once.
// Costs the core pays between contexts (process switches, VM switches, trapped WFI) are
// "overheads": burned before the next context runs and charged to their own class and owner.
// Every picosecond of the core is accounted to one owner (VM) and class: guest user, guest
// kernel, hypervisor, or to idle when nothing is ready.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/core/param.h"
#include "models/cpu/vm_scheduler.h"

namespace vtoe::cpu {

enum class CycleClass : int { GuestUser = 0, GuestKernel = 1, Hypervisor = 2 };
constexpr int kCycleClasses = 3;
const char* to_string(CycleClass cls);

// Scheduling domain of hypervisor contexts (guest contexts use their VM index).
constexpr int kHypervisorDomain = -1;

struct CoreParams {
  double freq_hz = 2e9;
  // Slice after which a ready context of the same priority and VM gets the core (guest context
  // switch interval).
  core::TimePs timeslice_ps = 2'500'000'000;  // 2.5 ms
  // Cycles charged (as guest kernel) when the core switches between two different contexts of
  // priority >= switch_cost_min_priority of one VM (process switches; interrupt entry has its
  // own cost in the handler).
  double switch_cycles = 0;
  int switch_cost_min_priority = 2;
};

// What the hypervisor does around VM scheduling decisions (virtualized platforms only).
struct VmHooks {
  double switch_cycles = 0;  // hypervisor cycles of one VM switch (state save/restore)
  bool trap_wfi = true;      // an idle vCPU traps (WFI) and gives the core up
  double wfi_cycles = 0;     // hypervisor cycles of handling a trapped WFI
  double tick_cycles = 0;    // hypervisor cycles of the scheduler's timer interrupt
  std::function<void(int from, int to)> on_switch;  // e.g. save/restore the vGIC (paper Fig. 8)
  std::function<void(int vm)> on_wfi;               // count the exit
  std::function<void(int vm)> on_timer;             // the scheduler timer interrupted `vm`
  // Whether the scheduler's timer interrupts `vm` at all (null: always). A tickless (nohz_full)
  // core whose vCPU runs alone takes no tick: the decision is made without an exit or its cost.
  std::function<bool(int vm)> timer_interrupts;
  // Halt polling (KVM's halt_poll_ns): after a trapped WFI the hypervisor spins up to this long,
  // charged to the VM as hypervisor time, before it blocks the vCPU; work that arrives meanwhile
  // runs at once, without a scheduler wake-up or VM switch. 0 = block at once.
  core::TimePs halt_poll_ps = 0;
};

// The scenario keys that fill CoreParams.
const std::vector<core::Param<CoreParams>>& core_params();

class Core : public core::Module {
 public:
  class Context;

 private:
  // The ready contexts, in queues of one scheduling domain and priority each: a doubly linked
  // FIFO through the contexts themselves (a context joins at the back with the core's next
  // sequence number, so each queue is in sequence order). The queues are kept in the order
  // hypervisor first, then by VM and priority, so the best ready context is the head of the first
  // queue that has one; joining, leaving and finding a queue peer take no search and no
  // allocation, with thousands of ready server processes as with three contexts.
  struct ReadyQueue {
    bool guest = true;  // false: hypervisor contexts, ahead of every guest queue
    int domain = 0;
    int priority = 0;
    Context* head = nullptr;
    Context* tail = nullptr;
    std::size_t size = 0;
  };

 public:
  class Context {
   public:
    const std::string& name() const { return name_; }
    int priority() const { return priority_; }
    int domain() const { return domain_; }
    bool busy() const { return pending_; }
    Core& core() const { return *core_; }  // the core it runs on

   private:
    friend class Core;
    Core* core_ = nullptr;
    std::string name_;
    int priority_ = 0;
    int domain_ = 0;        // VM index, or kHypervisorDomain
    bool io_wake_ = false;  // its becoming ready is an I/O event for its VM (interrupt handler)
    bool pending_ = false;
    bool more_ = false;  // its thread makes another request as soon as this one ends (then_more)
    core::TimePs remaining_ps_ = 0;  // work left in the current request
    CycleClass cls_ = CycleClass::GuestKernel;
    // A request of two pieces (execute with a Work first): what is left of the first piece,
    // charged as lead_cls_ before the rest is charged as cls_.
    core::TimePs lead_ps_ = 0;
    CycleClass lead_cls_ = CycleClass::GuestKernel;
    // A request with a cut (execute_past_cut): the work left until the cut, the work after it
    // (dropped if the request ends there), and whether it did.
    core::TimePs to_cut_ps_ = 0;
    core::TimePs after_cut_ps_ = 0;
    bool ended_at_cut_ = false;
    int charge_ = 0;         // owner the current request is charged to
    std::uint64_t seq_ = 0;  // FIFO order among equal priorities
    core::TimePs slice_used_ps_ = 0;
    core::TimePs run_start_ = 0;  // when it last got the core (timeline traces)
    sc_core::sc_event done_;
    // When done_ is timed to wake the thread at its request's end (kNoEvent: not so armed).
    core::TimePs done_due_ = kNoEvent;
    // Its ready queue on the core it runs on, and its neighbours there while pending.
    ReadyQueue* queue_ = nullptr;
    Context* queue_prev_ = nullptr;
    Context* queue_next_ = nullptr;
  };

  SC_HAS_PROCESS(Core);
  Core(const sc_core::sc_module_name& name, const CoreParams& params, int owners = 1);

  // A guest context of VM `vm` (lower priority number = higher priority). `io_wake` marks
  // interrupt handlers: their VM's wake-up counts as an I/O event for the VM scheduler.
  Context& add_context(const std::string& name, int priority, int vm = 0, bool io_wake = false);
  // A hypervisor context: runs whatever VM is on the core, before any guest context.
  Context& add_hypervisor_context(const std::string& name, int priority = 0);

  // Hands VM selection to `scheduler` (virtualized platforms). Call before simulation starts.
  void set_vm_scheduler(cpu::VmScheduler* scheduler, const VmHooks& hooks);

  // Spend `cycles` on the core as `cls`; returns when they have been executed. Call only from
  // the SystemC thread that stands for `ctx`. A context of another core (a process of a
  // multi-core host calling a kernel layer built with core 0) runs on its own core. `charge_to` is
  // the owner (VM) the time is charged to; by default the context's VM (hypervisor contexts: the VM
  // on the core).
  void execute(Context& ctx, double cycles, CycleClass cls, int charge_to = -1);

  // Cycles of one class (e.g. an application's per-message work before its system call).
  struct Work {
    double cycles = 0;
    CycleClass cls = CycleClass::GuestKernel;
  };
  // Two pieces of work that the software does back to back, with nothing between them that
  // another process or a device could see (no shared state read or written, no wait): one
  // request, so one decision and one timed wake-up instead of two. Each piece is rounded to
  // picoseconds as it would be alone, and charged to its own class, `first` before the rest.
  void execute(Context& ctx, Work first, double cycles, CycleClass cls, int charge_to = -1);

  // A request whose software, after `first` and `cycles` (the cut), looks at state other
  // contexts may change and, finding it as it was, goes on with `later` (cycles charged as `cls`,
  // each element rounded on its own, as the separate request they would be). The request goes on
  // past the cut only if nothing could have happened there: no other context became ready or had
  // the core from the request's start to the cut (it would have run, or changed what the software
  // looks at, at the end of a separate request). Otherwise it ends at the cut, as a request of
  // `first` and `cycles` alone would have. Returns true if it ran through (the caller does what
  // it would have done after the look, with the state it saw before the request), false if it
  // ended at the cut (the caller looks, and makes its next request as usual).
  bool execute_past_cut(Context& ctx, Work first, double cycles, CycleClass cls,
                        std::initializer_list<double> later, int charge_to = -1);

  double freq_hz() const { return params_.freq_hz; }
  core::TimePs cycles_ps(double cycles) const {
    return core::cycles_to_ps(cycles, params_.freq_hz);
  }
  int running_vm() const { return running_vm_; }
  // The running VM's vCPU has exited and the hypervisor halt-polls for it: an interrupt now finds
  // the hypervisor in control and is no exit.
  bool halt_polling() const { return polling_; }

  // Multi-core hosts with vCPU migration. hand_over: VM `vm`'s contexts that run here (none of
  // them on the core now: the VM waits or is blocked) run on `to` from now on, their pending
  // requests in `to`'s ready set. request_vm_decision: another core's scheduling made a VM
  // decision due here (an idle core that should steal); it is made in a zero-time notification.
  void hand_over(int vm, Core& to);
  void request_vm_decision();

  // Accounting since the last baseline, in picoseconds of core time (brought up to now).
  core::TimePs busy_ps(int owner, CycleClass cls);
  core::TimePs idle_ps();
  core::TimePs accounted_ps();  // sum of all classes and idle since baseline
  void mark_baseline();
  int owners() const { return static_cast<int>(busy_.size()); }
  std::uint64_t context_switches() const { return switches_.value(); }
  std::uint64_t vm_switches() const { return vm_switches_.value(); }
  // Virtualized: time since the baseline that VM `vm`'s vCPU held the core, as the host sees a
  // vCPU thread: guest work, guest idle without a WFI exit, hypervisor work while it was loaded
  // and halt polling.
  core::TimePs vcpu_ps(int vm);
  // Closes the spans still open in a timeline trace (call at the end of a run).
  void flush_trace();

  // The next request of `ctx` ends with its thread going on, in the same instant, to another
  // request (only zero-time work between them, such as an interrupt handler's acknowledge and
  // its ECQ reads). The decision made at that end then does not time the wake-up of the context
  // it picks, which the next request would cancel at once (a cancelled timed notification stays
  // in the kernel's queue until its time); should the thread wait instead, the wake-up is timed
  // a delta cycle later, for the same time. Decisions and accounts are the same either way.
  void then_more(Context& ctx) { ctx.more_ = true; }

 private:
  struct Overhead {
    core::TimePs ps;
    CycleClass cls;
    int owner;
    const char* what;  // for traces
  };
  // Both execute()s: a request of `lead` then `rest` ps, then `after_cut` ps past a cut.
  void request(Context& ctx, TimePs lead, CycleClass lead_cls, TimePs rest, CycleClass cls,
               TimePs after_cut, int charge_to);
  // The request of `c` ends at its cut (something could have happened there).
  void end_at_cut(Context& c);
  void on_tick();
  void decide_soon();  // a decision in a zero-time notification (another core's doing)
  void on_wfi_check();
  void on_deferred_wake();  // times the wake-up a then_more decision left (its thread waited)
  core::TimePs account();   // returns now
  // The queued overheads take the first `elapsed` ps from `at`; returns what is left of it.
  core::TimePs burn_overheads(core::TimePs at, core::TimePs elapsed);
  void reschedule(core::TimePs now);
  void decide_vm(core::TimePs now);
  Context* pick() const;
  // The queue of c's domain and priority on this core (made on first use, outside the hot path).
  ReadyQueue& queue_for(const Context& c);
  // Join the back of its queue (with a fresh sequence number from this core) and leave it.
  void make_ready(Context& c);
  void make_unready(Context& c);
  bool has_queue_peer(const Context& c) const;  // another ready context of c's VM and priority
  void add_overhead(double cycles, CycleClass cls, int owner, const char* what);
  void trace_run(const Context& c, core::TimePs end);
  int charge_owner(int wanted) const;

  CoreParams params_;
  std::deque<Context> contexts_;          // deque: stable addresses
  std::vector<Context*> hosted_;          // the contexts that run here (its own, and handed over)
  std::deque<ReadyQueue> queues_;         // deque: stable addresses
  std::vector<ReadyQueue*> queue_order_;  // hypervisor first, then by VM and priority
  std::size_t ready_count_ = 0;           // contexts in all queues
  Context* current_ = nullptr;
  Context* last_ran_ = nullptr;
  std::vector<Context*> last_process_;  // per VM: last context of process priority (switch costs)
  std::deque<Overhead> overheads_;
  core::TimePs seg_start_ = 0;
  std::uint64_t next_seq_ = 1;
  std::vector<std::array<core::TimePs, kCycleClasses>> busy_;
  core::TimePs idle_ = 0;
  sc_core::sc_event tick_;
  core::TimePs tick_due_ = cpu::kNoEvent;  // when tick_ is due to fire (kNoEvent: not pending)
  // The context whose done_ is timed for its request's end: when that end is the next decision,
  // the thread is woken then and makes the decision itself (no tick method, no delta cycle).
  Context* armed_ = nullptr;
  Context* deciding_ = nullptr;  // the context whose own thread is running reschedule()
  // The context whose request has not passed its cut yet and may still go on past it: it runs
  // alone on the core since its request began (at most one; cleared once past the cut).
  Context* uncut_ = nullptr;
  // A then_more decision left current_'s wake-up untimed: due at deferred_due_ unless the next
  // decision (normally the thread's next request, in this same instant) times it; otherwise
  // deferred_wake_ (a delta notification) does.
  bool defer_wake_ = false;  // the decision being made is one whose thread goes on
  bool wake_deferred_ = false;
  core::TimePs deferred_due_ = 0;
  sc_core::sc_event deferred_wake_;

  // VM scheduling (virtualized platforms).
  cpu::VmScheduler* vm_sched_ = nullptr;
  VmHooks hooks_;
  int running_vm_ = 0;            // native: everything is VM 0
  std::vector<int> vm_ready_;     // ready guest contexts per VM
  std::vector<bool> vm_blocked_;  // the VM scheduler was told the VM blocked
  bool vm_decision_due_ = false;
  sc_core::sc_event wfi_check_;  // is the running vCPU still idle once this instant settled?
  bool wfi_check_armed_ = false;
  bool wfi_due_ = false;
  core::TimePs vm_next_event_ = cpu::kNoEvent;
  core::TimePs vm_since_ = 0;  // when the running VM got the core (timeline traces)
  int loaded_vm_ = -1;         // whose vCPU state is on the core (it stays while the core idles)
  std::vector<core::TimePs> vcpu_ps_;  // per VM: vCPU on the core, closed spans since baseline
  core::TimePs vcpu_since_ = 0;        // when running_vm_'s current span (or the baseline) began
  bool polling_ = false;               // halt polling for running_vm_ until poll_until_
  core::TimePs poll_until_ = 0;

  core::Counter& switches_;
  core::Counter& preemptions_;
  core::Counter& vm_switches_;
  core::Counter& halt_poll_hits_;
  core::Counter& halt_poll_misses_;
};

}  // namespace vtoe::cpu
