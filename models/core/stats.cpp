#include "models/core/stats.h"

#include <algorithm>
#include <stdexcept>

namespace vtoe::core {

StatRegistry& StatRegistry::instance() {
  static StatRegistry registry;
  return registry;
}

void StatRegistry::add(StatGroup* group) { groups_.push_back(group); }

void StatRegistry::remove(StatGroup* group) {
  groups_.erase(std::remove(groups_.begin(), groups_.end(), group), groups_.end());
}

void StatRegistry::mark_baseline() {
  for (auto* g : groups_) g->mark_baseline();
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

void StatGroup::mark_baseline() {
  for (auto& c : counters_) c.mark_baseline();
  for (auto& a : accs_) a.mark_baseline();
}

}  // namespace vtoe::core
