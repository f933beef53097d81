// The CASL hypervisor's VMM scheduler: Xen's credit scheduler (credit1) with BOOST and Tickle
// (paper §4.2, §5.4, Figs. 7 and 13), for one physical core.
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
  std::vector<unsigned> weights;     // per VM, 1..kMaxWeight; empty = 256 each
  int credits_per_tick = 100;        // credits debited per tick of CPU time used
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
  double credit_dropped = 0;  // credits removed by the refill cap
};

struct CreditStats {
  std::vector<CreditVmStats> vm;
  std::uint64_t ticks = 0;
  std::uint64_t refills = 0;
};

class CreditScheduler final : public VmScheduler {
 public:
  // All VMs start BLOCKED with a full share of credit; the core wakes them when they have work.
  // Throws std::invalid_argument on vm_count < 1, zero tick/timeslice/credits_per_tick, a
  // ratelimit above the timeslice, weights of the wrong size or outside 1..kMaxWeight, or credit
  // amounts that would overflow.
  explicit CreditScheduler(int vm_count, CreditParams params = {});

  int vm_count() const override { return static_cast<int>(vms_.size()); }
  bool wake(int vm, bool io_event, TimePs now) override;
  void block(int vm, TimePs now) override;
  int pick(int running, TimePs now) override;
  TimePs next_event(TimePs now) const override;
  const char* state_name(int vm) const override { return to_string(state(vm)); }

  // Processes ticks and run-time accounting up to `now` without a decision (e.g. before reading
  // stats at the end of a run).
  void advance(TimePs now);
  CreditState state(int vm) const;
  double credit(int vm) const;        // balance in credits (debits applied at ticks)
  double credit_share(int vm) const;  // credits the VM receives per refill (cap when BLOCKED)
  double refill_total() const;        // credits one refill hands out (cap: twice that, runnable)
  int running() const { return current_; }
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
  };

  const Vm& at(int vm) const;
  int rank(int vm) const;  // 0 BOOST, 1 UNDER, 2 OVER
  int best_waiter() const;
  void enqueue(int vm);
  void charge(TimePs t);
  void do_tick();
  void start(int vm, TimePs now);

  CreditParams params_;
  std::vector<Vm> vms_;
  CreditStats stats_;
  int current_ = -1;
  TimePs slice_end_ = 0;
  TimePs switched_in_ = 0;  // when current_ was last switched onto the core (rate limit)
  bool deferred_ = false;   // a preemption of current_ waits for the rate limit (counted once)
  TimePs run_mark_ = 0;     // accounting of current_ done up to here
  TimePs now_ = 0;          // latest time seen
  TimePs next_tick_ = 0;    // first tick not yet processed
  bool tickle_pending_ = false;
  bool tick_check_pending_ = false;  // a tick passed while a VM ran: the next pick() checks credit
  std::uint64_t seq_ = 0;
  std::int64_t refill_total_ = 0;  // units of 1/tick_ps credit
};

}  // namespace vtoe::hypervisor
