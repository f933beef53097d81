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
  if (params_.pcpus < 1) throw std::invalid_argument("CreditScheduler: pcpus must be >= 1");
  const auto n_vcpus = static_cast<std::size_t>(vm_count);
  if (params_.domain.empty())
    for (int i = 0; i < vm_count; ++i) params_.domain.push_back(i);
  if (params_.domain.size() != n_vcpus) {
    throw std::invalid_argument("CreditScheduler: " + std::to_string(params_.domain.size()) +
                                " domain entries for " + std::to_string(vm_count) + " vCPUs");
  }
  int domains = 0;
  for (int d : params_.domain) {
    if (d < 0) throw std::invalid_argument("CreditScheduler: negative domain");
    domains = std::max(domains, d + 1);
  }
  std::vector<int> vcpus_of(static_cast<std::size_t>(domains), 0);
  for (int d : params_.domain) ++vcpus_of[static_cast<std::size_t>(d)];
  for (int d = 0; d < domains; ++d)
    if (vcpus_of[static_cast<std::size_t>(d)] == 0)
      throw std::invalid_argument("CreditScheduler: domain " + std::to_string(d) + " has no vCPU");
  if (params_.weights.empty()) params_.weights.assign(static_cast<std::size_t>(domains), 256);
  if (params_.weights.size() != static_cast<std::size_t>(domains)) {
    throw std::invalid_argument("CreditScheduler: " + std::to_string(params_.weights.size()) +
                                " weights for " + std::to_string(domains) + " VMs");
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
  // the limit keeps every balance, their sum and one tick's debit (of every pCPU) in an int64.
  const auto n = static_cast<std::uint64_t>(vm_count);
  const auto cores = static_cast<std::uint64_t>(params_.pcpus);
  const std::uint64_t limit = static_cast<std::uint64_t>(INT64_MAX) / (2 * n + 2);
  const auto cpt = static_cast<std::uint64_t>(params_.credits_per_tick);
  if (params_.timeslice > limit / cpt / n || params_.tick > limit / cpt / cores) {
    throw std::invalid_argument(
        "CreditScheduler: credits_per_tick * timeslice or * tick too large");
  }
  const std::uint64_t total = cpt * params_.timeslice * n;
  vms_.resize(n_vcpus);
  pcpus_.resize(static_cast<std::size_t>(params_.pcpus));
  stats_.vm.resize(n_vcpus);
  stats_.pcpu_busy_ps.assign(pcpus_.size(), 0);
  if (!params_.affinity.empty() && params_.affinity.size() != n_vcpus) {
    throw std::invalid_argument("CreditScheduler: " + std::to_string(params_.affinity.size()) +
                                " affinity entries for " + std::to_string(vm_count) + " vCPUs");
  }
  std::vector<int> placed(pcpus_.size(), 0);  // vCPUs placed per pCPU so far (spread them)
  for (std::size_t i = 0; i < vms_.size(); ++i) {
    Vm& v = vms_[i];
    v.allowed.assign(pcpus_.size(), params_.affinity.empty() || params_.affinity[i].empty());
    if (!params_.affinity.empty()) {
      for (int p : params_.affinity[i]) {
        if (p < 0 || p >= params_.pcpus)
          throw std::invalid_argument("CreditScheduler: vCPU " + std::to_string(i) +
                                      " pinned to pCPU " + std::to_string(p) + " of " +
                                      std::to_string(params_.pcpus));
        v.allowed[static_cast<std::size_t>(p)] = true;
      }
    }
    // Home: the allowed pCPU with the fewest vCPUs placed so far (lowest index on a tie).
    int home = -1;
    for (std::size_t p = 0; p < pcpus_.size(); ++p)
      if (v.allowed[p] && (home < 0 || placed[p] < placed[static_cast<std::size_t>(home)]))
        home = static_cast<int>(p);
    v.home = home;
    ++placed[static_cast<std::size_t>(home)];
  }
  // A domain's share, split evenly among its vCPUs (the first ones get the remainder).
  std::vector<int> seen(static_cast<std::size_t>(domains), 0);
  for (std::size_t i = 0; i < vms_.size(); ++i) {
    const auto d = static_cast<std::size_t>(params_.domain[i]);
    // total * w / weight_sum without overflow: the remainder term is < weight_sum * kMaxWeight.
    const std::uint64_t w = params_.weights[d];
    const std::uint64_t dshare = total / weight_sum * w + total % weight_sum * w / weight_sum;
    const auto k = static_cast<std::uint64_t>(vcpus_of[d]);
    const std::uint64_t share =
        dshare / k + (static_cast<std::uint64_t>(seen[d]++) < dshare % k ? 1 : 0);
    if (share == 0) {
      throw std::invalid_argument("CreditScheduler: VM " + std::to_string(d) +
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

const CreditScheduler::Pcpu& CreditScheduler::pcpu_at(int pcpu) const {
  if (pcpu < 0 || pcpu >= pcpu_count()) {
    throw std::out_of_range("CreditScheduler: no pCPU " + std::to_string(pcpu));
  }
  return pcpus_[static_cast<std::size_t>(pcpu)];
}

int CreditScheduler::running_on(int pcpu) const { return pcpu_at(pcpu).current; }

int CreditScheduler::best_waiter(int queue, int on) const {
  int best = -1;
  for (int i = 0; i < vm_count(); ++i) {
    const Vm& v = vms_[static_cast<std::size_t>(i)];
    if (!v.queued || v.home != queue || !v.allowed[static_cast<std::size_t>(on)]) continue;
    if (best < 0 || rank(i) < rank(best) ||
        (rank(i) == rank(best) && v.seq < vms_[static_cast<std::size_t>(best)].seq)) {
      best = i;
    }
  }
  return best;
}

int CreditScheduler::balance(int pcpu, int local) {
  if (local >= 0 && rank(local) < 2) return local;
  const int threshold = local >= 0 ? rank(local) : 3;  // steal only something strictly better
  for (int k = 1; k < pcpu_count(); ++k) {
    const int peer = (pcpu + k) % pcpu_count();
    const int stolen = best_waiter(peer, pcpu);
    if (stolen < 0 || rank(stolen) >= threshold) continue;
    vms_[static_cast<std::size_t>(stolen)].home = pcpu;
    ++stats_.vm[static_cast<std::size_t>(stolen)].migrations;
    return stolen;
  }
  return local;
}

void CreditScheduler::enqueue(int vm) {
  Vm& v = vms_[static_cast<std::size_t>(vm)];
  v.queued = true;
  v.seq = ++seq_;
}

void CreditScheduler::charge(Pcpu& p, TimePs t) {
  if (p.current < 0) {
    p.run_mark = t;
    return;
  }
  const TimePs ran = t - p.run_mark;
  stats_.vm[static_cast<std::size_t>(p.current)].run_ps += ran;
  stats_.pcpu_busy_ps[static_cast<std::size_t>(&p - pcpus_.data())] += ran;
  // ran < tick here (charge runs at every tick), so the product stays far below INT64_MAX.
  vms_[static_cast<std::size_t>(p.current)].unbilled +=
      static_cast<std::int64_t>(ran) * params_.credits_per_tick;
  p.run_mark = t;
}

void CreditScheduler::charge_all(TimePs t) {
  for (Pcpu& p : pcpus_) charge(p, t);
}

bool CreditScheduler::all_idle() const {
  return std::all_of(pcpus_.begin(), pcpus_.end(), [](const Pcpu& p) { return p.current < 0; });
}

void CreditScheduler::do_tick() {
  ++stats_.ticks;
  std::int64_t sum = 0;
  for (Vm& v : vms_) {
    v.credit -= v.unbilled;
    v.unbilled = 0;
    sum += v.credit;
  }
  for (const Pcpu& p : pcpus_)
    if (p.current >= 0) vms_[static_cast<std::size_t>(p.current)].boosted = false;
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
    // Idle cores, nothing unbilled, non-negative sum: the remaining ticks change nothing.
    const bool quiet = all_idle() && std::all_of(vms_.begin(), vms_.end(),
                                                 [](const Vm& v) { return v.unbilled == 0; });
    std::int64_t sum = 0;
    for (const Vm& v : vms_) sum += v.credit;
    if (quiet && sum >= 0) {
      const TimePs skipped = (now - next_tick_) / params_.tick + 1;
      stats_.ticks += skipped;
      next_tick_ += skipped * params_.tick;
      break;
    }
    charge_all(next_tick_);
    do_tick();
    if (params_.tick_preempt)
      for (Pcpu& p : pcpus_)
        if (p.current >= 0) p.tick_check_pending = true;
    next_tick_ += params_.tick;
  }
  charge_all(now);
  now_ = now;
}

bool CreditScheduler::wake(int vm, bool io_event, TimePs now) {
  const std::vector<int> poke = wake_on(vm, io_event, now);
  return std::find(poke.begin(), poke.end(), 0) != poke.end();
}

std::vector<int> CreditScheduler::wake_on(int vm, bool io_event, TimePs now) {
  at(vm);
  advance(now);
  Vm& v = vms_[static_cast<std::size_t>(vm)];
  if (v.runnable) return {};
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
  Pcpu& home = pcpus_[static_cast<std::size_t>(v.home)];
  if (home.current < 0) return {v.home};  // its core is idle: decide now
  if (params_.tickle && rank(vm) < rank(home.current)) {
    home.tickle_pending = true;
    ++s.tickles;
    return {v.home};
  }
  // Its home is busy: an idle pCPU it may run on steals it (Xen tickles an idler).
  for (int k = 1; k < pcpu_count(); ++k) {
    const int p = (v.home + k) % pcpu_count();
    if (v.allowed[static_cast<std::size_t>(p)] && pcpus_[static_cast<std::size_t>(p)].current < 0)
      return {p};
  }
  return {};
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
  if (v.on >= 0) {  // run time was charged up to now by advance()
    pcpus_[static_cast<std::size_t>(v.on)].current = -1;
    v.on = -1;
  }
}

void CreditScheduler::start(int pcpu, int vm, TimePs now) {
  Pcpu& p = pcpus_[static_cast<std::size_t>(pcpu)];
  Vm& v = vms_[static_cast<std::size_t>(vm)];
  CreditVmStats& s = stats_.vm[static_cast<std::size_t>(vm)];
  if (vm != p.current) {
    ++s.picks;
    p.switched_in = now;
    if (p.current >= 0) vms_[static_cast<std::size_t>(p.current)].on = -1;
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
  p.current = vm;
  v.on = pcpu;
  v.home = pcpu;
  p.deferred = false;
  p.slice_end = now + params_.timeslice;
  p.run_mark = now;
}

int CreditScheduler::pick_on(int pcpu, int running, TimePs now) {
  pcpu_at(pcpu);
  advance(now);
  Pcpu& p = pcpus_[static_cast<std::size_t>(pcpu)];
  // After a block() the core may still name the vCPU that blocked (even if it woke again since).
  if (p.current >= 0 && running != p.current) {
    throw std::logic_error("CreditScheduler::pick: core says VM " + std::to_string(running) +
                           " runs, scheduler gave the core to VM " + std::to_string(p.current));
  }
  const bool tickled = p.tickle_pending;
  const bool ticked = p.tick_check_pending;
  p.tickle_pending = false;
  p.tick_check_pending = false;
  const int cur = p.current;
  if (cur >= 0) {
    Vm& c = vms_[static_cast<std::size_t>(cur)];
    if (now < p.slice_end) {
      const int best = best_waiter(pcpu, pcpu);
      // Tickle: a strictly higher-priority VM woke. Tick: the running VM ran out of credit (OVER)
      // and a waiting VM still has credit (BOOST alone does not count without Tickle).
      bool preempt = false;
      if (best >= 0 && tickled) preempt = rank(best) < rank(cur);
      if (best >= 0 && ticked && rank(cur) == 2) {
        for (const Vm& v : vms_) preempt = preempt || (v.queued && v.home == pcpu && v.credit > 0);
      }
      if (!preempt) {
        p.deferred = false;
        return cur;
      }
      if (now < p.switched_in + params_.ratelimit) {
        // Too soon after its switch-in: decide again when the rate limit expires.
        p.tickle_pending = tickled;
        p.tick_check_pending = ticked;
        if (!p.deferred) ++stats_.vm[static_cast<std::size_t>(cur)].ratelimited;
        p.deferred = true;
        return cur;
      }
      ++stats_.vm[static_cast<std::size_t>(cur)].preempted;
      c.boosted = false;
      enqueue(cur);
      start(pcpu, best, now);
      return p.current;
    }
    // Slice end: to the tail of its queue; the best head runs (cur again if it is alone).
    c.boosted = false;
    enqueue(cur);
  }
  const int best = balance(pcpu, best_waiter(pcpu, pcpu));
  if (best < 0) {
    if (cur >= 0) vms_[static_cast<std::size_t>(cur)].on = -1;
    p.current = -1;
    return -1;
  }
  start(pcpu, best, now);
  return p.current;
}

TimePs CreditScheduler::next_event_on(int pcpu, TimePs now) const {
  const Pcpu& p = pcpu_at(pcpu);
  if (p.current >= 0) {
    TimePs next = std::min(p.slice_end, next_tick_);
    if (p.tickle_pending || p.tick_check_pending) {
      next = std::min(next, p.switched_in + params_.ratelimit);
    }
    return std::max(now, next);
  }
  // Idle: a decision is due while a vCPU waits that this pCPU may run (its own, or one to steal).
  for (const Vm& v : vms_) {
    if (v.queued && v.allowed[static_cast<std::size_t>(pcpu)]) return now;
  }
  return kNoEvent;
}

}  // namespace vtoe::hypervisor
