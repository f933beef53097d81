// The CASL hypervisor's VMM scheduler: Xen's credit scheduler (credit1) with BOOST and Tickle
// (paper §4.2, §5.4, Figs. 7 and 13), with one run queue per physical core (pCPU) and Xen's load
// balancing between them. What it schedules are vCPUs; the comments below say "VM" where a VM
// has one vCPU (every VM of the paper's platform), which is also what the VmScheduler face
// (pCPU 0) sees.
//
// Several pCPUs (params.pcpus > 1), as csched_schedule / csched_load_balance / __runq_tickle:
//  - Each vCPU has an affinity (params.affinity: the pCPUs it may run on, pinning when one) and a
//    home pCPU (Xen's v->processor: first the vCPU's place, round robin over its affinity, then
//    the pCPU it last ran on). A waking or descheduled vCPU queues on its home's run queue.
//  - A decision on pCPU p (pick_on) looks at p's own queue; when its best waiter is only OVER or
//    there is none, p steals: it scans the other pCPUs' queues, p+1, p+2, ... (mod pcpus), and
//    takes the best waiter there that is strictly better (BOOST/UNDER over OVER, anything over
//    idle) and whose affinity allows p, from the first pCPU that has one. The stolen vCPU's home
//    becomes p (a migration, counted).
//  - A wake asks its home pCPU for a decision when that pCPU is idle or (Tickle) runs a vCPU of
//    strictly lower priority; otherwise, when the home is busy, it asks the first idle pCPU of
//    its affinity (from home+1 on) to decide, which then steals it. wake_on() returns the pCPUs
//    that must call pick_on() now.
//  - Ticks debit every running vCPU; each pCPU has its own slice end, rate limit and pending
//    Tickle/tick check.
// Credit. Weights are per domain (params.domain maps a vCPU to its VM; default: each vCPU its
// own domain); a domain's share of the refill is split evenly among its vCPUs (the first ones
// get the remainder), so a VM's weight means the same with one vCPU or several. Xen's
// credit1 splits among the *active* vCPUs only; here the split is static (docs/hypervisor.md).
// With one pCPU, every vCPU in its own domain, everything below holds exactly as written.
//
// Semantics, made precise:
//
// Credit. Each VM has a credit balance. Credits are debited for CPU time the VM actually used
// (accurate accounting): every picosecond between the pick() that gave it the core and the
// pick()/block() that took it away costs credits_per_tick / tick credits. The debit is applied at
// the scheduler ticks, which fall at absolute times k * tick (k = 1, 2, ...; shifted by
// tick_phase when it is set: the host tick's phase against the guests' ticks), for the run time
// accrued since the previous tick. After the debits of a tick, if the sum of all VMs' balances is
// negative, every VM receives new credit: the refill hands out
//   refill_total = credits_per_tick * (timeslice / tick) * vm_count
// credits split in proportion to the weights (VM i gets share_i). The refill caps balances: a
// BLOCKED (idle) VM at share_i, so it cannot hoard more than its one refill's worth; a runnable VM
// at 2 * refill_total. Why not share_i for a runnable VM too: a heavy VM that is still waiting for
// its turn when the refill comes would lose credit it is owed, and weights would not hold (4:1:2:2
// measured 29/15/28/28 % instead of 44/11/22/22 %). Busy VMs with weights up to 100:1 and up to 32
// VMs peaked at 1.72 * refill_total, so the runnable cap only bounds pathological cases. Credit
// removed by a cap is counted in CreditVmStats::credit_dropped. Every VM starts with share_i.
// Balances are kept exactly in integer units of 1/tick_ps credit.
//
// States. UNDER: balance > 0. OVER: balance <= 0. BOOST (when params.boost): a VM woken from
// BLOCKED by an I/O event (wake(vm, io_event = true)) enters BOOST (only if it is UNDER when
// params.boost_only_under, as Xen's code does; the paper and the default boost any woken VM).
// A boosted VM keeps BOOST while it waits; once it runs, it loses BOOST when it is descheduled
// (slice end, preemption) or at the first tick that finds it running, whichever comes first (as in
// Xen, where the tick's accounting of the running vCPU ends its boost). BLOCKED: not runnable
// (never woken, or block() since the last wake()). States change only at ticks, wakes, blocks and
// deschedules; the running VM's UNDER/OVER state follows the balance after each tick's debit.
//
// Run queue. Priority BOOST > UNDER > OVER; FIFO within a priority. A woken VM and a descheduled
// VM (slice end, preemption) go to the tail of the queue of their priority. A waiting VM whose
// UNDER/OVER state flips at a tick keeps its place in enqueue order relative to the VMs of its new
// priority (Xen's stable runq sort).
//
// Decisions (pick). The running VM keeps the core until its slice (timeslice from when it was
// picked) is over, it blocks, or a higher-priority VM preempts it, which happens only
//  - by Tickle (below), or
//  - at a tick, only with params.tick_preempt (off by default): the tick's debit left the running
//    VM OVER while a waiting VM still has credit (> 0); BOOST alone does not count here.
// By default ticks only do accounting, exactly as Xen's csched_tick, so without Tickle a woken
// (even boosted) VM waits for the running VM's slice end or block. Weights then hold over long runs
// (4:1:2:2: 42.0/12.0/23.0/23.0 % over 3 s, 44.2/11.2/22.3/22.3 % over 30 s), since a VM that
// goes OVER early in its slice still uses all of it; tick_preempt makes them tight over short
// runs too (44.0/11.3/22.3/22.3 % over 3 s) at the cost of more VM switches.
// At slice end the running VM goes to the tail of its queue and the head of the best non-empty
// queue runs (the same VM when it is alone, which starts a new slice). The preempted VM goes to the
// tail of its queue too. A VM is never picked while blocked. Extra pick() calls (at times other
// than next_event(), wake() == true, or a block) change nothing.
//
// Tickle. wake() returns true (the core must call pick() now) when the core is idle, or when
// params.tickle is on and the woken VM's priority is strictly higher than the running VM's current
// priority (BOOST over UNDER/OVER, UNDER over OVER). The following pick() then preempts the running
// VM (it goes to the tail of its queue, losing BOOST) in favour of the best waiting VM. With tickle
// off, a boosted VM waits until the running VM's slice ends or it blocks, and wins that decision.
//
// Rate limit (params.ratelimit, Xen's sched_ratelimit_us; 0 = off, the paper's scheduler). A VM
// switched onto the core keeps it for at least ratelimit unless it blocks: a Tickle or tick
// preemption that comes earlier is deferred to (switch-in time + ratelimit), when the decision is
// made again with the priorities of that moment. Without it a chatty I/O VM whose interrupt arrives
// during every switch can preempt another VM before it runs a single instruction (starvation).
// Slice ends are unaffected (ratelimit <= timeslice). A lone VM renewing its slice keeps its
// switch-in time.
//
// Time. The scheduler keeps no clock: every call carries `now` (non-decreasing, else
// std::invalid_argument), and ticks up to `now` are processed at the start of each call, so the
// result does not depend on whether the core called exactly at the tick. next_event() returns the
// earlier of the next tick and the running VM's slice end while a VM runs (so pick() sees every
// tick), `now` when a decision is due (a VM waits on an idle core, a Tickle is pending, or a tick
// passed since the last pick() with tick_preempt on), and kNoEvent when no VM is runnable.
//
// Contract for pick(running, now): while the VM the previous pick() returned still holds the core
// (it has not blocked), `running` must be that VM; anything else is a caller bug and throws
// std::logic_error. After it blocked, `running` may be -1 or any VM (it is ignored).
// Deterministic: integer arithmetic, no randomness, no unordered containers.
#pragma once

#include <cstdint>
#include <vector>

#include "models/cpu/vm_scheduler.h"

namespace vtoe::hypervisor {

using cpu::kNoEvent;
using cpu::TimePs;
using cpu::VmScheduler;

constexpr TimePs kPsPerMs = 1'000'000'000;
constexpr unsigned kMaxWeight = 65535;  // as Xen

struct CreditParams {
  TimePs tick = 10 * kPsPerMs;       // credit accounting period
  TimePs tick_phase = 0;             // ticks fall at tick_phase + k * tick (< tick; 0: k >= 1)
  TimePs timeslice = 30 * kPsPerMs;  // VM switch interval
  bool boost = true;                 // I/O wake-ups from BLOCKED enter BOOST
  bool tickle = true;                // a higher-priority waking VM preempts at once
  bool boost_only_under = false;     // Xen's rule: only an UNDER VM can be boosted
  bool tick_preempt = false;         // at a tick, an OVER running VM yields to a VM with credit
  TimePs ratelimit = 0;              // a switched-in VM runs at least this long before preemption
  std::vector<unsigned> weights;     // per domain, 1..kMaxWeight; empty = 256 each
  int credits_per_tick = 100;        // credits debited per tick of CPU time used
  int pcpus = 1;                     // physical cores, each with its run queue
  std::vector<int> domain;           // per vCPU: its VM (0..); empty = vCPU i is domain i
  std::vector<std::vector<int>> affinity;  // per vCPU: allowed pCPUs; empty (all or one) = any
};

enum class CreditState : int { Boost = 0, Under = 1, Over = 2, Blocked = 3 };
const char* to_string(CreditState state);

struct CreditVmStats {
  TimePs run_ps = 0;                    // CPU time used, accounted up to the last call
  std::uint64_t picks = 0;              // times it was switched onto the core
  std::uint64_t slices = 0;             // slices begun (a lone VM renewing its slice counts)
  std::uint64_t wakes = 0;              // wake() calls that made it runnable
  std::uint64_t boosts = 0;             // times it entered BOOST
  std::uint64_t tickles = 0;            // wakes that asked to preempt another running VM
  std::uint64_t preempted = 0;          // times it lost the core before its slice end
  std::uint64_t ratelimited = 0;        // preemptions of it deferred by the rate limit (once each)
  std::uint64_t wake_to_run_count = 0;  // wakes followed by a run (before blocking again)
  TimePs wake_to_run_total_ps = 0;      // sum of wake -> first run latencies
  TimePs wake_to_run_max_ps = 0;
  double credit_min = 0;  // extremes of the balance seen after each tick (credits)
  double credit_max = 0;
  double credit_dropped = 0;     // credits removed by the refill cap
  std::uint64_t migrations = 0;  // times another pCPU stole it from its home's queue
};

struct CreditStats {
  std::vector<CreditVmStats> vm;  // per vCPU
  std::uint64_t ticks = 0;
  std::uint64_t refills = 0;
  std::vector<TimePs> pcpu_busy_ps;  // per pCPU: time a vCPU held it, up to the last call
};

class CreditScheduler final : public VmScheduler {
 public:
  // All vCPUs start BLOCKED with a full share of credit; the core wakes them when they have
  // work. `vm_count` is the number of vCPUs. Throws std::invalid_argument on vm_count < 1, zero
  // tick/timeslice/credits_per_tick, a ratelimit above the timeslice, weights of the wrong size
  // (one per domain) or outside 1..kMaxWeight, credit amounts that would overflow, pcpus < 1, a
  // domain list of the wrong size or with a domain without vCPUs, or an affinity naming no pCPU
  // or one outside 0..pcpus-1.
  explicit CreditScheduler(int vm_count, CreditParams params = {});

  // The one-core face (pCPU 0) the core model calls; with several pCPUs it only sees pCPU 0.
  int vm_count() const override { return static_cast<int>(vms_.size()); }
  bool wake(int vm, bool io_event, TimePs now) override;
  void block(int vm, TimePs now) override;
  int pick(int running, TimePs now) override { return pick_on(0, running, now); }
  TimePs next_event(TimePs now) const override { return next_event_on(0, now); }
  const char* state_name(int vm) const override { return to_string(state(vm)); }

  // Several pCPUs. wake_on: as wake(); returns the pCPUs that must call pick_on() now (at most
  // two: the home for a preemption or an idle home, or one idle pCPU that will steal it).
  std::vector<int> wake_on(int vcpu, bool io_event, TimePs now);
  // pick() on pCPU `pcpu`; `running` is the vCPU on it (-1 none), with pick()'s contract.
  int pick_on(int pcpu, int running, TimePs now);
  TimePs next_event_on(int pcpu, TimePs now) const;
  int pcpu_count() const { return static_cast<int>(pcpus_.size()); }
  int running_on(int pcpu) const;  // the vCPU pCPU `pcpu` runs, -1 when idle
  int home(int vcpu) const { return at(vcpu).home; }

  // Processes ticks and run-time accounting up to `now` without a decision (e.g. before reading
  // stats at the end of a run).
  void advance(TimePs now);
  CreditState state(int vm) const;
  double credit(int vm) const;        // balance in credits (debits applied at ticks)
  double credit_share(int vm) const;  // credits the VM receives per refill (cap when BLOCKED)
  double refill_total() const;        // credits one refill hands out (cap: twice that, runnable)
  int running() const { return running_on(0); }
  const CreditParams& params() const { return params_; }
  const CreditStats& stats() const { return stats_; }

 private:
  struct Vm {
    std::int64_t credit = 0;    // units of 1/tick_ps credit
    std::int64_t share = 0;     // refill amount (and cap while BLOCKED), same units
    std::int64_t unbilled = 0;  // run time since the last tick, same units, debited at the tick
    bool runnable = false;
    bool queued = false;
    bool boosted = false;
    std::uint64_t seq = 0;  // enqueue order
    bool wake_pending = false;
    TimePs wake_time = 0;
    int home = 0;               // run queue it waits on (Xen's v->processor)
    int on = -1;                // pCPU it runs on, -1 when not running
    std::vector<bool> allowed;  // affinity, per pCPU
  };
  // One physical core: what runs there and its pending decisions.
  struct Pcpu {
    int current = -1;
    TimePs slice_end = 0;
    TimePs switched_in = 0;  // when current was last switched onto it (rate limit)
    bool deferred = false;   // a preemption of current waits for the rate limit (counted once)
    TimePs run_mark = 0;     // accounting of current done up to here
    bool tickle_pending = false;
    bool tick_check_pending = false;  // a tick passed while a vCPU ran: the next pick() checks
  };

  const Vm& at(int vm) const;
  const Pcpu& pcpu_at(int pcpu) const;
  int rank(int vm) const;  // 0 BOOST, 1 UNDER, 2 OVER
  // Best waiter on `queue`'s run queue that may run on `on` (-1 none).
  int best_waiter(int queue, int on) const;
  // Xen's csched_load_balance: the local best unless it is OVER or none, else a stolen vCPU.
  int balance(int pcpu, int local);
  void enqueue(int vm);
  void charge(Pcpu& p, TimePs t);
  void charge_all(TimePs t);
  bool all_idle() const;
  void do_tick();
  void start(int pcpu, int vm, TimePs now);

  CreditParams params_;
  std::vector<Vm> vms_;
  std::vector<Pcpu> pcpus_;
  CreditStats stats_;
  TimePs now_ = 0;        // latest time seen
  TimePs next_tick_ = 0;  // first tick not yet processed
  std::uint64_t seq_ = 0;
  std::int64_t refill_total_ = 0;  // units of 1/tick_ps credit
};

}  // namespace vtoe::hypervisor
