#include "models/core/stats.h"

#include <algorithm>
#include <stdexcept>

#include "models/core/sim_time.h"

namespace vtoe::core {

StatRegistry& StatRegistry::instance() {
  static StatRegistry registry;
  return registry;
}

void StatRegistry::add(StatGroup* group) { groups_.push_back(group); }

void StatRegistry::remove(StatGroup* group) {
  groups_.erase(std::remove(groups_.begin(), groups_.end(), group), groups_.end());
}

void StatRegistry::mark_baseline(std::uint64_t now_ps) {
  for (auto* g : groups_) g->mark_baseline(now_ps);
}

void Counter::settle() const {
  const std::uint64_t now = now_ps();
  // The sums in locals: the stores into pending_ might alias the members, which kept them in
  // memory, a store and a load per increment.
  std::uint64_t value = value_;
  std::uint64_t adds = timed_adds_;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < pending_count_; ++i) {
    const Pending p = pending_[i];
    if (p.due_ps <= now) {
      value += p.n;
      ++adds;
    } else
      pending_[kept++] = p;
  }
  value_ = value;
  timed_adds_ = adds;
  pending_count_ = kept;
  settle_at_ = std::max<std::size_t>(64, 2 * kept);
}

void Counter::grow_pending() { pending_.resize(std::max<std::size_t>(64, 2 * pending_.size())); }

void Accumulator::level(double v, std::uint64_t now_ps) {
  if (!weighted_) {
    weighted_ = true;
    min_ = max_ = level_;  // the level was 0 from the start (or the baseline) until now
  }
  sum_ += level_ * static_cast<double>(now_ps - since_ps_);
  since_ps_ = now_ps;
  level_ = v;
  ++count_;
  min_ = std::min(min_, v);
  max_ = std::max(max_, v);
}

double Accumulator::area(std::uint64_t now_ps) const {
  return weighted_ ? sum_ + level_ * static_cast<double>(now_ps - since_ps_) : 0.0;
}

double Accumulator::mean(std::uint64_t now_ps) const {
  if (!weighted_) return mean();
  return now_ps > start_ps_ ? area(now_ps) / static_cast<double>(now_ps - start_ps_) : level_;
}

void Accumulator::mark_baseline(std::uint64_t now_ps) {
  if (!weighted_) {
    *this = Accumulator();
    return;
  }
  sum_ = 0;
  count_ = 0;
  since_ps_ = start_ps_ = now_ps;
  min_ = max_ = level_;
}

StatGroup::StatGroup(std::string name) : name_(std::move(name)) {
  StatRegistry::instance().add(this);
}

StatGroup::~StatGroup() { StatRegistry::instance().remove(this); }

Counter& StatGroup::counter(const std::string& name, const std::string& description) {
  for (auto& e : counter_index_)
    if (e.name == name) return *e.counter;
  counters_.emplace_back();
  counter_index_.push_back({name, description, &counters_.back()});
  return counters_.back();
}

Accumulator& StatGroup::accumulator(const std::string& name, const std::string& description) {
  for (auto& e : acc_index_)
    if (e.name == name) return *e.acc;
  accs_.emplace_back();
  acc_index_.push_back({name, description, &accs_.back()});
  return accs_.back();
}

const Counter& StatGroup::counter(const std::string& name) const {
  for (const auto& e : counter_index_)
    if (e.name == name) return *e.counter;
  throw std::out_of_range("statistics of '" + name_ + "' have no counter '" + name + "'");
}

const Accumulator& StatGroup::accumulator(const std::string& name) const {
  for (const auto& e : acc_index_)
    if (e.name == name) return *e.acc;
  throw std::out_of_range("statistics of '" + name_ + "' have no accumulator '" + name + "'");
}

void StatGroup::mark_baseline(std::uint64_t now_ps) {
  for (auto& c : counters_) c.mark_baseline();
  for (auto& a : accs_) a.mark_baseline(now_ps);
}

}  // namespace vtoe::core
