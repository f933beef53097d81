#include "hypervisor/credit_scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace vtoe::hypervisor {

const char* to_string(CreditState state) {
  switch (state) {
    case CreditState::Boost:
      return "BOOST";
    case CreditState::Under:
      return "UNDER";
    case CreditState::Over:
      return "OVER";
    case CreditState::Blocked:
      return "BLOCKED";
  }
  return "?";
}

CreditScheduler::CreditScheduler(int vm_count, CreditParams params) : params_(std::move(params)) {
  if (vm_count < 1) throw std::invalid_argument("CreditScheduler: vm_count must be >= 1");
  if (params_.tick == 0 || params_.timeslice == 0 || params_.credits_per_tick <= 0) {
    throw std::invalid_argument(
        "CreditScheduler: tick, timeslice and credits_per_tick must be > 0");
  }
  if (params_.tick_phase >= params_.tick)
    throw std::invalid_argument("CreditScheduler: tick_phase must be below the tick");
  if (params_.ratelimit > params_.timeslice) {
    throw std::invalid_argument("CreditScheduler: ratelimit " + std::to_string(params_.ratelimit) +
                                " ps exceeds the timeslice " + std::to_string(params_.timeslice) +
                                " ps");
  }
  if (params_.weights.empty()) params_.weights.assign(static_cast<std::size_t>(vm_count), 256);
  if (params_.weights.size() != static_cast<std::size_t>(vm_count)) {
    throw std::invalid_argument("CreditScheduler: " + std::to_string(params_.weights.size()) +
                                " weights for " + std::to_string(vm_count) + " VMs");
  }
  std::uint64_t weight_sum = 0;
  for (unsigned w : params_.weights) {
    if (w == 0 || w > kMaxWeight) {
      throw std::invalid_argument("CreditScheduler: weight " + std::to_string(w) + " outside 1.." +
                                  std::to_string(kMaxWeight));
    }
    weight_sum += w;
  }
  // One refill = credits_per_tick * (timeslice / tick) * vm_count credits; in units of
  // 1/tick_ps credit that is credits_per_tick * timeslice * vm_count. A balance stays within about
  // 2 * vm_count * total in magnitude (caps, and a refill at the first tick with a negative sum);
  // the limit keeps every balance, their sum and one tick's debit in an int64.
  const auto n = static_cast<std::uint64_t>(vm_count);
  const std::uint64_t limit = static_cast<std::uint64_t>(INT64_MAX) / (2 * n + 2);
  const auto cpt = static_cast<std::uint64_t>(params_.credits_per_tick);
  if (params_.timeslice > limit / cpt / n || params_.tick > limit / cpt) {
    throw std::invalid_argument(
        "CreditScheduler: credits_per_tick * timeslice or * tick too large");
  }
  const std::uint64_t total = cpt * params_.timeslice * n;
  vms_.resize(static_cast<std::size_t>(vm_count));
  stats_.vm.resize(vms_.size());
  for (std::size_t i = 0; i < vms_.size(); ++i) {
    // total * w / weight_sum without overflow: the remainder term is < weight_sum * kMaxWeight.
    const std::uint64_t w = params_.weights[i];
    const std::uint64_t share = total / weight_sum * w + total % weight_sum * w / weight_sum;
    if (share == 0) {
      throw std::invalid_argument("CreditScheduler: VM " + std::to_string(i) +
                                  " gets no credit (weight too small)");
    }
    vms_[i].share = static_cast<std::int64_t>(share);
    refill_total_ += vms_[i].share;
    vms_[i].credit = vms_[i].share;
    stats_.vm[i].credit_min = stats_.vm[i].credit_max = credit(static_cast<int>(i));
  }
  next_tick_ = params_.tick_phase ? params_.tick_phase : params_.tick;
}

const CreditScheduler::Vm& CreditScheduler::at(int vm) const {
  if (vm < 0 || vm >= vm_count()) {
    throw std::out_of_range("CreditScheduler: no VM " + std::to_string(vm));
  }
  return vms_[static_cast<std::size_t>(vm)];
}

CreditState CreditScheduler::state(int vm) const {
  const Vm& v = at(vm);
  if (!v.runnable) return CreditState::Blocked;
  return static_cast<CreditState>(rank(vm));
}

double CreditScheduler::credit(int vm) const {
  return static_cast<double>(at(vm).credit) / static_cast<double>(params_.tick);
}

double CreditScheduler::credit_share(int vm) const {
  return static_cast<double>(at(vm).share) / static_cast<double>(params_.tick);
}

double CreditScheduler::refill_total() const {
  return static_cast<double>(refill_total_) / static_cast<double>(params_.tick);
}

int CreditScheduler::rank(int vm) const {
  const Vm& v = vms_[static_cast<std::size_t>(vm)];
  if (v.boosted) return 0;
  return v.credit > 0 ? 1 : 2;
}

int CreditScheduler::best_waiter() const {
  int best = -1;
  for (int i = 0; i < vm_count(); ++i) {
    const Vm& v = vms_[static_cast<std::size_t>(i)];
    if (!v.queued) continue;
    if (best < 0 || rank(i) < rank(best) ||
        (rank(i) == rank(best) && v.seq < vms_[static_cast<std::size_t>(best)].seq)) {
      best = i;
    }
  }
  return best;
}

void CreditScheduler::enqueue(int vm) {
  Vm& v = vms_[static_cast<std::size_t>(vm)];
  v.queued = true;
  v.seq = ++seq_;
}

void CreditScheduler::charge(TimePs t) {
  if (current_ < 0) {
    run_mark_ = t;
    return;
  }
  const TimePs ran = t - run_mark_;
  stats_.vm[static_cast<std::size_t>(current_)].run_ps += ran;
  // ran < tick here (charge runs at every tick), so the product stays far below INT64_MAX.
  vms_[static_cast<std::size_t>(current_)].unbilled +=
      static_cast<std::int64_t>(ran) * params_.credits_per_tick;
  run_mark_ = t;
}

void CreditScheduler::do_tick() {
  ++stats_.ticks;
  std::int64_t sum = 0;
  for (Vm& v : vms_) {
    v.credit -= v.unbilled;
    v.unbilled = 0;
    sum += v.credit;
  }
  if (current_ >= 0) vms_[static_cast<std::size_t>(current_)].boosted = false;
  if (sum < 0) {
    ++stats_.refills;
    for (std::size_t i = 0; i < vms_.size(); ++i) {
      Vm& v = vms_[i];
      const std::int64_t cap = v.runnable ? 2 * refill_total_ : v.share;
      const std::int64_t filled = v.credit + v.share;
      if (filled > cap) {
        stats_.vm[i].credit_dropped +=
            static_cast<double>(filled - cap) / static_cast<double>(params_.tick);
      }
      v.credit = std::min(filled, cap);
    }
  }
  for (int i = 0; i < vm_count(); ++i) {
    CreditVmStats& s = stats_.vm[static_cast<std::size_t>(i)];
    s.credit_min = std::min(s.credit_min, credit(i));
    s.credit_max = std::max(s.credit_max, credit(i));
  }
}

void CreditScheduler::advance(TimePs now) {
  if (now < now_) {
    throw std::invalid_argument("CreditScheduler: time went back from " + std::to_string(now_) +
                                " to " + std::to_string(now) + " ps");
  }
  while (next_tick_ <= now) {
    // Idle core, nothing unbilled, non-negative sum: the remaining ticks change nothing.
    const bool quiet = current_ < 0 && std::all_of(vms_.begin(), vms_.end(),
                                                   [](const Vm& v) { return v.unbilled == 0; });
    std::int64_t sum = 0;
    for (const Vm& v : vms_) sum += v.credit;
    if (quiet && sum >= 0) {
      const TimePs skipped = (now - next_tick_) / params_.tick + 1;
      stats_.ticks += skipped;
      next_tick_ += skipped * params_.tick;
      break;
    }
    charge(next_tick_);
    do_tick();
    if (current_ >= 0 && params_.tick_preempt) tick_check_pending_ = true;
    next_tick_ += params_.tick;
  }
  charge(now);
  now_ = now;
}

bool CreditScheduler::wake(int vm, bool io_event, TimePs now) {
  at(vm);
  advance(now);
  Vm& v = vms_[static_cast<std::size_t>(vm)];
  if (v.runnable) return false;
  CreditVmStats& s = stats_.vm[static_cast<std::size_t>(vm)];
  v.runnable = true;
  ++s.wakes;
  if (io_event && params_.boost && (!params_.boost_only_under || v.credit > 0)) {
    v.boosted = true;
    ++s.boosts;
  }
  enqueue(vm);
  v.wake_pending = true;
  v.wake_time = now;
  if (current_ < 0) return true;  // the core is idle: decide now
  if (params_.tickle && rank(vm) < rank(current_)) {
    tickle_pending_ = true;
    ++s.tickles;
    return true;
  }
  return false;
}

void CreditScheduler::block(int vm, TimePs now) {
  at(vm);
  advance(now);
  Vm& v = vms_[static_cast<std::size_t>(vm)];
  if (!v.runnable) return;
  v.runnable = false;
  v.queued = false;
  v.boosted = false;
  v.wake_pending = false;
  if (vm == current_) current_ = -1;  // run time was charged up to now by advance()
}

void CreditScheduler::start(int vm, TimePs now) {
  Vm& v = vms_[static_cast<std::size_t>(vm)];
  CreditVmStats& s = stats_.vm[static_cast<std::size_t>(vm)];
  if (vm != current_) {
    ++s.picks;
    switched_in_ = now;
  }
  ++s.slices;
  v.queued = false;
  if (v.wake_pending) {
    const TimePs latency = now - v.wake_time;
    ++s.wake_to_run_count;
    s.wake_to_run_total_ps += latency;
    s.wake_to_run_max_ps = std::max(s.wake_to_run_max_ps, latency);
    v.wake_pending = false;
  }
  current_ = vm;
  deferred_ = false;
  slice_end_ = now + params_.timeslice;
  run_mark_ = now;
}

int CreditScheduler::pick(int running, TimePs now) {
  advance(now);
  // After a block() the core may still name the VM that blocked (even if it woke again since).
  if (current_ >= 0 && running != current_) {
    throw std::logic_error("CreditScheduler::pick: core says VM " + std::to_string(running) +
                           " runs, scheduler gave the core to VM " + std::to_string(current_));
  }
  const bool tickled = tickle_pending_;
  const bool ticked = tick_check_pending_;
  tickle_pending_ = false;
  tick_check_pending_ = false;
  const int cur = current_;
  if (cur >= 0) {
    Vm& c = vms_[static_cast<std::size_t>(cur)];
    if (now < slice_end_) {
      const int best = best_waiter();
      // Tickle: a strictly higher-priority VM woke. Tick: the running VM ran out of credit (OVER)
      // and a waiting VM still has credit (BOOST alone does not count without Tickle).
      bool preempt = false;
      if (best >= 0 && tickled) preempt = rank(best) < rank(cur);
      if (best >= 0 && ticked && rank(cur) == 2) {
        for (const Vm& v : vms_) preempt = preempt || (v.queued && v.credit > 0);
      }
      if (!preempt) {
        deferred_ = false;
        return cur;
      }
      if (now < switched_in_ + params_.ratelimit) {
        // Too soon after its switch-in: decide again when the rate limit expires.
        tickle_pending_ = tickled;
        tick_check_pending_ = ticked;
        if (!deferred_) ++stats_.vm[static_cast<std::size_t>(cur)].ratelimited;
        deferred_ = true;
        return cur;
      }
      ++stats_.vm[static_cast<std::size_t>(cur)].preempted;
      c.boosted = false;
      enqueue(cur);
      start(best, now);
      return current_;
    }
    // Slice end: to the tail of its queue; the best head runs (cur again if it is alone).
    c.boosted = false;
    enqueue(cur);
  }
  const int best = best_waiter();
  if (best < 0) {
    current_ = -1;
    return -1;
  }
  start(best, now);
  return current_;
}

TimePs CreditScheduler::next_event(TimePs now) const {
  if (current_ >= 0) {
    TimePs next = std::min(slice_end_, next_tick_);
    if (tickle_pending_ || tick_check_pending_) {
      next = std::min(next, switched_in_ + params_.ratelimit);
    }
    return std::max(now, next);
  }
  for (const Vm& v : vms_) {
    if (v.queued) return now;
  }
  return kNoEvent;
}

}  // namespace vtoe::hypervisor
