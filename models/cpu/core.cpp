#include "models/cpu/core.h"

#include <algorithm>
#include <stdexcept>

namespace vtoe::cpu {

using core::TimePs;

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
      busy_(static_cast<std::size_t>(std::max(owners, 1))),
      switches_(stats_.counter("context_switches", "switches between different contexts")),
      preemptions_(stats_.counter(
          "preemptions",
          "a running context lost the core before finishing (higher priority or slice end)")) {
  if (params_.freq_hz <= 0)
    throw std::invalid_argument(std::string(this->name()) + ": frequency must be > 0");
  for (auto& b : busy_) b.fill(0);
  SC_METHOD(on_tick);
  sensitive << tick_;
  dont_initialize();
}

Core::Context& Core::add_context(const std::string& name, int priority, int owner) {
  if (owner < 0 || owner >= owners()) throw std::out_of_range("Core::add_context: bad owner");
  contexts_.emplace_back();
  Context& c = contexts_.back();
  c.name_ = name;
  c.priority_ = priority;
  c.owner_ = owner;
  return c;
}

void Core::execute(Context& ctx, double cycles, CycleClass cls) {
  if (cycles <= 0) return;
  if (ctx.pending_)
    throw std::logic_error("Core::execute: context " + ctx.name_ + " is already running");
  account();
  ctx.remaining_ps_ = cycles_ps(cycles);
  ctx.cls_ = cls;
  ctx.pending_ = true;
  ctx.seq_ = next_seq_++;
  ready_.push_back(&ctx);
  reschedule();
  sc_core::wait(ctx.done_);
}

// Charges the time since the last decision to whoever had the core.
void Core::account() {
  const TimePs now = core::now_ps();
  TimePs elapsed = now - seg_start_;
  seg_start_ = now;
  if (!current_) {
    idle_ += elapsed;
    return;
  }
  Context& c = *current_;
  c.slice_used_ps_ += elapsed;
  const TimePs ov = std::min(elapsed, c.overhead_ps_);
  c.overhead_ps_ -= ov;
  busy_[c.owner_][static_cast<int>(CycleClass::GuestKernel)] += ov;
  elapsed -= ov;
  const TimePs work = std::min(elapsed, c.remaining_ps_);
  c.remaining_ps_ -= work;
  busy_[c.owner_][static_cast<int>(c.cls_)] += work;
  idle_ += elapsed - work;  // cannot happen with exact ticks; keeps the books balanced
}

Core::Context* Core::pick() const {
  Context* best = nullptr;
  for (Context* c : ready_)
    if (!best || c->priority_ < best->priority_ ||
        (c->priority_ == best->priority_ && c->seq_ < best->seq_))
      best = c;
  return best;
}

void Core::reschedule() {
  // Retire a finished request.
  if (current_ && current_->remaining_ps_ == 0 && current_->overhead_ps_ == 0) {
    Context* done = current_;
    done->pending_ = false;
    ready_.erase(std::find(ready_.begin(), ready_.end(), done));
    current_ = nullptr;
    done->done_.notify(sc_core::SC_ZERO_TIME);
  }
  // Time slice over and someone of the same priority waits: go to the back of the line.
  if (current_ && current_->slice_used_ps_ >= params_.timeslice_ps) {
    for (Context* c : ready_)
      if (c != current_ && c->priority_ == current_->priority_) {
        current_->seq_ = next_seq_++;
        break;
      }
  }
  Context* next = pick();
  if (next != current_) {
    if (current_ && next) ++preemptions_;
    if (current_) current_->slice_used_ps_ = 0;
    if (next) {
      next->slice_used_ps_ = 0;
      if (last_ran_ && last_ran_ != next) ++switches_;
      last_ran_ = next;
      // A process switch costs the same whether or not interrupt handlers ran in between.
      if (next->priority_ >= params_.switch_cost_min_priority) {
        if (last_process_ && last_process_ != next)
          next->overhead_ps_ += cycles_ps(params_.switch_cycles);
        last_process_ = next;
      }
    }
    current_ = next;
  }
  tick_.cancel();
  if (!current_) return;
  TimePs until = current_->overhead_ps_ + current_->remaining_ps_;
  for (Context* c : ready_)
    if (c != current_ && c->priority_ == current_->priority_) {
      const TimePs left = params_.timeslice_ps > current_->slice_used_ps_
                              ? params_.timeslice_ps - current_->slice_used_ps_
                              : 0;
      until = std::min(until, std::max<TimePs>(left, 1));
      break;
    }
  tick_.notify(core::ps(until));
}

void Core::on_tick() {
  account();
  reschedule();
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
  baseline_at_ = core::now_ps();
}

}  // namespace vtoe::cpu
