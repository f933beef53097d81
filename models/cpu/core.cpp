#include "models/cpu/core.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "models/core/tracer.h"

namespace vtoe::cpu {

const std::vector<core::Param<CoreParams>>& core_params() {
  using core::ParamKind;
  using P = CoreParams;
  static const std::vector<core::Param<P>> params = {
      core::param<P>(
          ParamKind::Frequency, "platform.cpu_freq", "2GHz", "Clock of each CPU core",
          [](P & s) -> auto& { return s.freq_hz; })
          .above("0Hz"),
  };
  return params;
}

const char* to_string(CycleClass cls) {
  switch (cls) {
    case CycleClass::GuestUser:
      return "guest_user";
    case CycleClass::GuestKernel:
      return "guest_kernel";
    case CycleClass::Hypervisor:
      return "hypervisor";
  }
  return "?";
}

Core::Core(const sc_core::sc_module_name& name, const CoreParams& params, int owners)
    : core::Module(name),
      params_(params),
      last_process_(static_cast<std::size_t>(std::max(owners, 1)), nullptr),
      busy_(static_cast<std::size_t>(std::max(owners, 1))),
      vm_ready_(static_cast<std::size_t>(std::max(owners, 1)), 0),
      vm_blocked_(static_cast<std::size_t>(std::max(owners, 1)), true),
      switches_(stats_.counter("context_switches", "switches between different contexts")),
      preemptions_(stats_.counter(
          "preemptions",
          "a running context lost the core before finishing (higher priority or slice end)")),
      vm_switches_(stats_.counter("vm_switches", "the VM on the core changed")),
      halt_poll_hits_(stats_.counter(
          "halt_poll_hits", "halt polling: work arrived while the hypervisor polled a WFI")),
      halt_poll_misses_(stats_.counter("halt_poll_misses",
                                       "halt polling: the poll ran out and the vCPU was blocked")) {
  if (params_.freq_hz <= 0)
    throw std::invalid_argument(std::string(this->name()) + ": frequency must be > 0");
  for (auto& b : busy_) b.fill(0);
  SC_METHOD(on_tick);
  sensitive << tick_;
  dont_initialize();
  SC_METHOD(on_wfi_check);
  sensitive << wfi_check_;
  dont_initialize();
  SC_METHOD(on_deferred_wake);
  sensitive << deferred_wake_;
  dont_initialize();
}

Core::Context& Core::add_context(const std::string& name, int priority, int vm, bool io_wake) {
  if (vm < 0 || vm >= owners()) throw std::out_of_range("Core::add_context: bad VM index");
  contexts_.emplace_back();
  Context& c = contexts_.back();
  c.core_ = this;
  hosted_.push_back(&c);
  c.name_ = name;
  c.priority_ = priority;
  c.domain_ = vm;
  c.io_wake_ = io_wake;
  c.queue_ = &queue_for(c);
  return c;
}

Core::Context& Core::add_hypervisor_context(const std::string& name, int priority) {
  contexts_.emplace_back();
  Context& c = contexts_.back();
  c.core_ = this;
  hosted_.push_back(&c);
  c.name_ = name;
  c.priority_ = priority;
  c.domain_ = kHypervisorDomain;
  c.queue_ = &queue_for(c);
  return c;
}

void Core::set_vm_scheduler(cpu::VmScheduler* scheduler, const VmHooks& hooks) {
  if (scheduler && scheduler->vm_count() != owners())
    throw std::invalid_argument("Core::set_vm_scheduler: scheduler and core disagree on VMs");
  vm_sched_ = scheduler;
  hooks_ = hooks;
  running_vm_ = scheduler ? -1 : 0;
  vcpu_ps_.assign(static_cast<std::size_t>(owners()), 0);
}

int Core::charge_owner(int wanted) const {
  if (wanted >= 0 && wanted < owners()) return wanted;
  return running_vm_ >= 0 ? running_vm_ : 0;
}

void Core::add_overhead(double cycles, CycleClass cls, int owner, const char* what) {
  if (cycles <= 0) return;
  overheads_.push_back({cycles_ps(cycles), cls, charge_owner(owner), what});
}

void Core::trace_run(const Context& c, TimePs end) {
  auto& t = core::Tracer::instance();
  const std::string lane =
      c.domain_ == kHypervisorDomain ? std::string("hypervisor") : t.vm_label(c.domain_, name());
  t.span(t.lane(name(), lane), c.name_, c.run_start_, end, "cpu");
}

void Core::flush_trace() {
  if (!core::Tracer::on()) return;
  account();
  const TimePs now = core::now_ps();
  if (current_) trace_run(*current_, now);
  if (vm_sched_ && running_vm_ >= 0) {
    auto& t = core::Tracer::instance();
    t.span(t.lane(name(), "vCPU on core"), t.vm_label(running_vm_, name()), vm_since_, now, "vm");
  }
}

void Core::execute(Context& ctx, double cycles, CycleClass cls, int charge_to) {
  execute(ctx, Work{}, cycles, cls, charge_to);
}

void Core::execute(Context& ctx, Work first, double cycles, CycleClass cls, int charge_to) {
  if (ctx.core_ != this) return ctx.core_->execute(ctx, first, cycles, cls, charge_to);
  const TimePs lead = first.cycles > 0 ? cycles_ps(first.cycles) : 0;
  const TimePs rest = cycles > 0 ? cycles_ps(cycles) : 0;
  if (first.cycles <= 0 && cycles <= 0) {
    ctx.more_ = false;
    return;
  }
  request(ctx, lead, first.cls, rest, cls, 0, charge_to);
}

bool Core::execute_past_cut(Context& ctx, Work first, double cycles, CycleClass cls,
                            std::initializer_list<double> later, int charge_to) {
  if (ctx.core_ != this)
    return ctx.core_->execute_past_cut(ctx, first, cycles, cls, later, charge_to);
  const TimePs lead = first.cycles > 0 ? cycles_ps(first.cycles) : 0;
  const TimePs rest = cycles > 0 ? cycles_ps(cycles) : 0;
  TimePs after = 0;
  for (double c : later)
    if (c > 0) after += cycles_ps(c);
  if (lead + rest == 0) {  // nothing before the cut: the look is now
    ctx.more_ = false;
    return false;
  }
  request(ctx, lead, first.cls, rest, cls, after, charge_to);
  return !ctx.ended_at_cut_;
}

void Core::request(Context& ctx, TimePs lead, CycleClass lead_cls, TimePs rest, CycleClass cls,
                   TimePs after_cut, int charge_to) {
  const bool more = ctx.more_;  // for this request only
  ctx.more_ = false;
  if (ctx.pending_)
    throw std::logic_error("Core::execute: context " + ctx.name_ + " is already running");
  const TimePs now = account();
  ctx.remaining_ps_ = lead + rest + after_cut;
  ctx.lead_ps_ = lead;
  ctx.lead_cls_ = lead_cls;
  ctx.cls_ = cls;
  ctx.to_cut_ps_ = after_cut > 0 ? lead + rest : 0;
  ctx.after_cut_ps_ = after_cut;
  ctx.ended_at_cut_ = false;
  if (uncut_) end_at_cut(*uncut_);  // another context's request: it no longer runs alone
  if (after_cut > 0) uncut_ = &ctx;
  ctx.charge_ = charge_owner(charge_to >= 0 ? charge_to : ctx.domain_);
  ctx.pending_ = true;
  ctx.seq_ = next_seq_++;
  make_ready(ctx);
  if (ctx.domain_ != kHypervisorDomain) {
    const int vm = ctx.domain_;
    if (vm_ready_[vm]++ == 0 && vm_sched_ && vm_blocked_[vm]) {
      vm_blocked_[vm] = false;
      const bool preempt = vm_sched_->wake(vm, ctx.io_wake_, now);
      VTOE_LOG(log_, Debug) << "vm" << vm << " wakes" << (ctx.io_wake_ ? " (I/O)" : "")
                            << (preempt ? ", preempts" : "");
      if (preempt || running_vm_ < 0) vm_decision_due_ = true;
    }
  }
  reschedule(now);
  for (;;) {
    sc_core::wait(ctx.done_);
    if (!ctx.pending_) return;  // retired by a decision made elsewhere (the tick, another thread)
    // Woken at its own request's end: make the decision the tick would have made, on the core
    // the context runs on now (a migrated vCPU's contexts move to another core).
    Core& c = *ctx.core_;
    ctx.done_due_ = cpu::kNoEvent;
    if (c.armed_ == &ctx) c.armed_ = nullptr;
    const TimePs woken = c.account();
    c.deciding_ = &ctx;
    c.defer_wake_ = more;
    c.reschedule(woken);
    c.deciding_ = nullptr;
    c.defer_wake_ = false;
    if (!ctx.pending_) return;
  }
}

void Core::end_at_cut(Context& c) {
  c.remaining_ps_ -= c.after_cut_ps_;
  c.after_cut_ps_ = 0;
  c.to_cut_ps_ = 0;
  c.ended_at_cut_ = true;
  uncut_ = nullptr;
}

void Core::hand_over(int vm, Core& to) {
  if (&to == this) return;
  if (vm < 0 || vm >= owners() || vm >= to.owners())
    throw std::out_of_range("Core::hand_over: bad VM index");
  account();
  to.account();
  std::vector<Context*> stay;
  for (Context* c : hosted_) {
    if (c->domain_ != vm) {
      stay.push_back(c);
      continue;
    }
    if (c == current_) throw std::logic_error("Core::hand_over: " + c->name_ + " is running");
    if (c->pending_) make_unready(*c);
    if (uncut_ == c) end_at_cut(*c);
    c->core_ = &to;
    c->queue_ = &to.queue_for(*c);
    to.hosted_.push_back(c);
    if (c->pending_) {
      if (armed_ == c) armed_ = nullptr;
      if (c->done_due_ != cpu::kNoEvent) {
        c->done_.cancel();
        c->done_due_ = cpu::kNoEvent;
      }
      --vm_ready_[vm];
      c->seq_ = to.next_seq_++;
      c->slice_used_ps_ = 0;
      to.make_ready(*c);
      ++to.vm_ready_[vm];
    }
    if (last_ran_ == c) last_ran_ = nullptr;
  }
  hosted_ = std::move(stay);
  last_process_[vm] = nullptr;
  vm_blocked_[vm] = true;  // for this core the VM is gone; the scheduler keeps its state
  to.vm_blocked_[vm] = to.vm_ready_[vm] == 0;
  to.decide_soon();  // what came in may be what `to` should run
}

void Core::request_vm_decision() {
  vm_decision_due_ = true;
  decide_soon();
}

void Core::decide_soon() {
  tick_.cancel();
  tick_due_ = core::now_ps();
  tick_.notify(sc_core::SC_ZERO_TIME);
}

// Charges the time since the last decision: pending overheads first, then the running context.
TimePs Core::account() {
  const TimePs now = core::now_ps();
  TimePs elapsed = now - seg_start_;
  const TimePs at = seg_start_;
  seg_start_ = now;
  if (elapsed == 0) return now;  // most calls: a second look in the same instant
  if (!overheads_.empty()) elapsed = burn_overheads(at, elapsed);
  if (current_ && elapsed > 0) {
    Context& c = *current_;
    const TimePs work = std::min(elapsed, c.remaining_ps_);
    c.remaining_ps_ -= work;
    c.slice_used_ps_ += work;
    if (&c == uncut_) {
      // Past its cut, the request is the separate one it stands for: a fresh time slice.
      const TimePs before_cut = std::min(work, c.to_cut_ps_);
      c.to_cut_ps_ -= before_cut;
      if (work > before_cut) {
        c.slice_used_ps_ = work - before_cut;
        c.after_cut_ps_ = 0;
        uncut_ = nullptr;
      }
    }
    TimePs rest = work;
    if (c.lead_ps_ > 0) {  // a two-piece request: its first piece first
      const TimePs take = std::min(rest, c.lead_ps_);
      busy_[c.charge_][static_cast<int>(c.lead_cls_)] += take;
      c.lead_ps_ -= take;
      rest -= take;
    }
    busy_[c.charge_][static_cast<int>(c.cls_)] += rest;
    elapsed -= work;
  }
  // Halt polling: the hypervisor spins on the VM's behalf instead of idling.
  if (polling_ && elapsed > 0 && running_vm_ >= 0)
    busy_[running_vm_][static_cast<int>(CycleClass::Hypervisor)] += elapsed;
  else
    idle_ += elapsed;
  return now;
}

TimePs Core::burn_overheads(TimePs at, TimePs elapsed) {
  while (elapsed > 0 && !overheads_.empty()) {
    Overhead& o = overheads_.front();
    const TimePs take = std::min(elapsed, o.ps);
    busy_[o.owner][static_cast<int>(o.cls)] += take;
    if (core::Tracer::on()) {
      auto& t = core::Tracer::instance();
      t.span(t.lane(name(), "overheads"), o.what, at, at + take, "cpu");
    }
    at += take;
    o.ps -= take;
    elapsed -= take;
    if (o.ps == 0) overheads_.pop_front();
  }
  return elapsed;
}

Core::Context* Core::pick() const {
  // Hypervisor contexts before guest ones; then priority; then FIFO (the queues' order).
  if (ready_count_ == 0) return nullptr;
  auto q = queue_order_.begin();
  while ((*q)->size == 0) ++q;  // some queue holds the ready contexts
  if (!(*q)->guest) return (*q)->head;
  if (vm_sched_) {  // only the VM on the core runs
    if (running_vm_ < 0) return nullptr;
    for (; q != queue_order_.end() && (*q)->domain <= running_vm_; ++q)
      if ((*q)->domain == running_vm_ && (*q)->size > 0) return (*q)->head;
    return nullptr;
  }
  // Natively all VMs' contexts compete: the best head of each VM's queues (with one VM, the
  // first).
  if (busy_.size() == 1) return (*q)->head;
  Context* best = nullptr;
  for (; q != queue_order_.end(); ++q) {
    const Context* c = (*q)->head;
    if (c && (!best || c->priority_ < best->priority_ ||
              (c->priority_ == best->priority_ && c->seq_ < best->seq_)))
      best = (*q)->head;
  }
  return best;
}

Core::ReadyQueue& Core::queue_for(const Context& c) {
  const bool guest = c.domain_ != kHypervisorDomain;
  const auto before = [](const ReadyQueue* q, const std::tuple<bool, int, int>& key) {
    return std::make_tuple(q->guest, q->domain, q->priority) < key;
  };
  const auto key = std::make_tuple(guest, c.domain_, c.priority_);
  auto at = std::lower_bound(queue_order_.begin(), queue_order_.end(), key, before);
  if (at != queue_order_.end() &&
      std::make_tuple((*at)->guest, (*at)->domain, (*at)->priority) == key)
    return **at;
  ReadyQueue& q = queues_.emplace_back();
  q.guest = guest;
  q.domain = c.domain_;
  q.priority = c.priority_;
  queue_order_.insert(at, &q);
  return q;
}

void Core::make_ready(Context& c) {
  ReadyQueue& q = *c.queue_;
  c.queue_prev_ = q.tail;
  c.queue_next_ = nullptr;
  (q.tail ? q.tail->queue_next_ : q.head) = &c;
  q.tail = &c;
  ++q.size;
  ++ready_count_;
}

void Core::make_unready(Context& c) {
  ReadyQueue& q = *c.queue_;
  (c.queue_prev_ ? c.queue_prev_->queue_next_ : q.head) = c.queue_next_;
  (c.queue_next_ ? c.queue_next_->queue_prev_ : q.tail) = c.queue_prev_;
  c.queue_prev_ = c.queue_next_ = nullptr;
  --q.size;
  --ready_count_;
}

bool Core::has_queue_peer(const Context& c) const {
  if (c.core_ == this) return c.queue_->size > (c.pending_ ? 1u : 0u);
  for (const ReadyQueue* q : queue_order_)
    if (q->guest == (c.domain_ != kHypervisorDomain) && q->domain == c.domain_ &&
        q->priority == c.priority_)
      return q->size > 0;
  return false;
}

// Asks the VM scheduler which VM's vCPU runs, when a decision is due.
void Core::decide_vm(TimePs now) {
  // The running vCPU has nothing to do. Its threads may just be between two requests in this
  // same instant, so only once the instant has settled does the guest execute WFI.
  if (polling_ && running_vm_ >= 0 && vm_ready_[running_vm_] > 0) {
    polling_ = false;  // work arrived while polling: it runs at once
    ++halt_poll_hits_;
  }
  if (polling_ && now >= poll_until_) {
    polling_ = false;  // nothing came: block the vCPU now
    ++halt_poll_misses_;
    if (running_vm_ >= 0 && vm_ready_[running_vm_] == 0 && !vm_blocked_[running_vm_]) {
      vm_blocked_[running_vm_] = true;
      vm_sched_->block(running_vm_, now);
      vm_decision_due_ = true;
    }
  }
  if (running_vm_ >= 0 && vm_ready_[running_vm_] == 0 && !vm_blocked_[running_vm_] &&
      hooks_.trap_wfi && !wfi_check_armed_ && !polling_) {
    wfi_check_armed_ = true;
    wfi_check_.notify(sc_core::sc_time::from_value(1));
  }
  if (wfi_due_) {
    wfi_due_ = false;
    if (running_vm_ >= 0 && vm_ready_[running_vm_] == 0 && !vm_blocked_[running_vm_] && !polling_) {
      if (hooks_.on_wfi) hooks_.on_wfi(running_vm_);
      add_overhead(hooks_.wfi_cycles, CycleClass::Hypervisor, running_vm_, "WFI trap");
      if (hooks_.halt_poll_ps > 0) {
        polling_ = true;  // spin before blocking (the trap's own cost comes first)
        poll_until_ = now + cycles_ps(hooks_.wfi_cycles) + hooks_.halt_poll_ps;
      } else {
        vm_blocked_[running_vm_] = true;
        vm_sched_->block(running_vm_, now);
        vm_decision_due_ = true;
      }
    }
  }
  // The scheduler's own deadline (tick or slice end) is a timer interrupt; a decision asked for
  // by a wake-up or a blocked vCPU is not.
  const bool timer = now >= vm_next_event_ && !vm_decision_due_;
  if (!vm_decision_due_ && !timer) return;
  vm_decision_due_ = false;
  // While the hypervisor halt-polls, the vCPU has already exited: the tick is no exit, and its
  // time is part of the poll (charged as hypervisor time already).
  if (timer && running_vm_ >= 0 && !polling_ &&
      (!hooks_.timer_interrupts || hooks_.timer_interrupts(running_vm_))) {
    // The scheduler's timer interrupt: an exit of the running VM.
    if (hooks_.on_timer) hooks_.on_timer(running_vm_);
    add_overhead(hooks_.tick_cycles, CycleClass::Hypervisor, running_vm_, "scheduler tick");
  }
  const int next = vm_sched_->pick(running_vm_, now);
  VTOE_LOG(log_, Debug) << "VM decision: running " << running_vm_ << " -> " << next
                        << (timer ? " (timer)" : "");
  if (next != running_vm_) {
    // Restoring another VM's state costs the same whether or not the core idled in between.
    if (next >= 0 && loaded_vm_ >= 0 && next != loaded_vm_) {
      ++vm_switches_;
      add_overhead(hooks_.switch_cycles, CycleClass::Hypervisor, next, "VM switch");
    }
    if (next >= 0) loaded_vm_ = next;
    if (core::Tracer::on() && running_vm_ >= 0) {
      auto& t = core::Tracer::instance();
      t.span(t.lane(name(), "vCPU on core"), t.vm_label(running_vm_, name()), vm_since_, now, "vm");
    }
    vm_since_ = now;
    if (running_vm_ >= 0) vcpu_ps_[running_vm_] += now - vcpu_since_;
    vcpu_since_ = now;
    polling_ = false;  // a switch ends any halt poll of the old VM
    if (hooks_.on_switch) hooks_.on_switch(running_vm_, next);
    running_vm_ = next;
  }
  vm_next_event_ = vm_sched_->next_event(now);
}

void Core::reschedule(TimePs now) {
  if (wake_deferred_) {  // this decision times what the last one left
    wake_deferred_ = false;
    deferred_wake_.cancel();
  }
  // A request before (or at) its cut goes on past it only while it has the core alone: had it
  // ended at the cut, another ready context would have had a turn there (or a VM decision been
  // made), or changed what its thread looks at. (A WFI check finds its VM with a ready context:
  // it changes nothing, as after the first part's end, where it would have been armed.)
  if (uncut_ && (ready_count_ > 1 || (current_ && current_ != uncut_) ||
                 (vm_sched_ && (vm_decision_due_ || polling_ || now >= vm_next_event_))))
    end_at_cut(*uncut_);
  // Retire a finished request.
  if (current_ && current_->remaining_ps_ == 0) {
    Context* done = current_;
    done->pending_ = false;
    make_unready(*done);
    if (done->domain_ != kHypervisorDomain) --vm_ready_[done->domain_];
    current_ = nullptr;
    if (armed_ == done) armed_ = nullptr;
    // Its thread returns from execute(): it is making this decision itself, or its timed done_
    // woke it at this instant already; otherwise wake it now.
    if (done != deciding_ && done->done_due_ != now) {
      if (done->done_due_ != cpu::kNoEvent) done->done_.cancel();
      done->done_.notify(sc_core::SC_ZERO_TIME);
    }
    done->done_due_ = cpu::kNoEvent;
  }
  if (vm_sched_) decide_vm(now);
  // Time slice over and someone of the same priority and VM waits: go to the back of the line.
  if (current_ && current_->slice_used_ps_ >= params_.timeslice_ps && has_queue_peer(*current_)) {
    make_unready(*current_);
    current_->seq_ = next_seq_++;
    make_ready(*current_);
  }
  Context* next = pick();
  if (next != current_) {
    if (core::Tracer::on()) {
      if (current_) trace_run(*current_, now);
      if (next) next->run_start_ = now;
    }
    if (current_) {
      ++preemptions_;
      current_->slice_used_ps_ = 0;
    }
    if (next) {
      next->slice_used_ps_ = 0;
      if (last_ran_ && last_ran_ != next) ++switches_;
      last_ran_ = next;
      // A process switch costs the same whether or not interrupt handlers ran in between.
      if (next->domain_ != kHypervisorDomain &&
          next->priority_ >= params_.switch_cost_min_priority) {
        Context*& last = last_process_[next->domain_];
        if (last && last != next)
          add_overhead(params_.switch_cycles, CycleClass::GuestKernel, next->domain_,
                       "process switch");
        last = next;
      }
    }
    current_ = next;
    if (uncut_ && uncut_ != next) end_at_cut(*uncut_);  // it does not get the core now
    VTOE_LOG(log_, Trace) << "runs " << (next ? next->name_ : std::string("nothing"))
                          << (next ? " (" + std::to_string(next->remaining_ps_) + " ps left)" : "");
  }
  TimePs until = cpu::kNoEvent;
  TimePs busy_ahead = 0;
  for (const Overhead& o : overheads_) busy_ahead += o.ps;
  TimePs completion = cpu::kNoEvent;
  if (current_) {
    until = completion = busy_ahead + current_->remaining_ps_;
    if (has_queue_peer(*current_)) {
      const TimePs left = params_.timeslice_ps > current_->slice_used_ps_
                              ? params_.timeslice_ps - current_->slice_used_ps_
                              : 0;
      until = std::min(until, busy_ahead + std::max<TimePs>(left, 1));
    }
  } else if (busy_ahead > 0) {
    until = busy_ahead;
  }
  if (vm_sched_ && vm_next_event_ != cpu::kNoEvent) {
    until = std::min(until, vm_next_event_ > now ? vm_next_event_ - now : 1);
  }
  if (polling_) {
    until = std::min(until, poll_until_ > now ? poll_until_ - now : 1);
  }
  const TimePs due = until == cpu::kNoEvent ? cpu::kNoEvent : now + until;
  // The next decision is the running request's end: its thread wakes then and decides (execute()),
  // which saves the tick method and a delta cycle per request.
  const bool direct = current_ && until == completion;
  if (armed_ && (!direct || armed_ != current_ || armed_->done_due_ != due)) {
    armed_->done_.cancel();
    armed_->done_due_ = cpu::kNoEvent;
    armed_ = nullptr;
  }
  if (direct && !armed_) {
    if (defer_wake_ && current_ != deciding_) {
      wake_deferred_ = true;
      deferred_due_ = due;
      deferred_wake_.notify(sc_core::SC_ZERO_TIME);
    } else {
      armed_ = current_;
      armed_->done_due_ = due;
      armed_->done_.notify(core::ps(until));
    }
  }
  const TimePs tick_due = direct ? cpu::kNoEvent : due;
  // Most decisions leave the next one where it was: keep the pending notification then (a
  // cancelled timed notification stays in SystemC's event queue until its time).
  if (tick_due == tick_due_) return;
  // A pending tick that comes no later than needed stays: a tick that finds nothing due changes
  // nothing (it accounts and decides again), while a cancelled timed notification would stay in
  // SystemC's queue until its time. An idle core's tick at the VM scheduler's next event thus
  // survives the busy spells in between instead of being cancelled and set again for each.
  if (tick_due_ != cpu::kNoEvent && (tick_due == cpu::kNoEvent || tick_due > tick_due_)) return;
  tick_.cancel();
  tick_due_ = tick_due;
  if (tick_due != cpu::kNoEvent) tick_.notify(core::ps(until));
}

void Core::on_tick() {
  tick_due_ = cpu::kNoEvent;  // the notification that ran this is used up
  reschedule(account());
}

void Core::on_deferred_wake() {
  if (!wake_deferred_) return;
  wake_deferred_ = false;
  // Nothing decided since (a decision would have cancelled this): current_ still runs to due.
  armed_ = current_;
  armed_->done_due_ = deferred_due_;
  armed_->done_.notify(core::ps(deferred_due_ - core::now_ps()));
}

void Core::on_wfi_check() {
  wfi_check_armed_ = false;
  wfi_due_ = true;
  reschedule(account());
}

TimePs Core::busy_ps(int owner, CycleClass cls) {
  account();
  return busy_.at(static_cast<std::size_t>(owner))[static_cast<int>(cls)];
}

TimePs Core::idle_ps() {
  account();
  return idle_;
}

TimePs Core::accounted_ps() {
  account();
  TimePs sum = idle_;
  for (auto& b : busy_)
    for (TimePs v : b) sum += v;
  return sum;
}

void Core::mark_baseline() {
  account();
  for (auto& b : busy_) b.fill(0);
  idle_ = 0;
  std::fill(vcpu_ps_.begin(), vcpu_ps_.end(), 0);
  vcpu_since_ = core::now_ps();
}

TimePs Core::vcpu_ps(int vm) {
  if (!vm_sched_) return 0;
  TimePs t = vcpu_ps_.at(static_cast<std::size_t>(vm));
  if (vm == running_vm_) t += core::now_ps() - vcpu_since_;
  return t;
}

}  // namespace vtoe::cpu
