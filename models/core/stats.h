// Statistics: named counters and accumulators grouped per module, registered in creation order
// (so every dump is deterministic). A baseline taken at the end of warm-up is subtracted on report.
//
// Registration and lookup are separate: a model registers with counter(name, description) and keeps
// the reference; a reader (a test, a tool) looks one up with counter(name), which throws
// std::out_of_range naming the group and the counter when there is none, so a misspelt name fails
// instead of reading a fresh zero. Results that the program reports come from the models' typed
// accessors, not from names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

namespace vtoe::core {

class Counter {
 public:
  void add(std::uint64_t n = 1) { value_ += n; }
  Counter& operator++() {
    ++value_;
    return *this;
  }
  Counter& operator+=(std::uint64_t n) {
    value_ += n;
    return *this;
  }
  // Adds `n` at simulated time `due_ps` (now or later): a model that computes when something
  // will happen (a frame's last bit leaving a MAC) counts it then without scheduling an event.
  // Readers see it from that time on, as if it had been added then.
  void add_at(std::uint64_t due_ps, std::uint64_t n = 1) {
    // The fields stored one by one: a `{due_ps, n}` temporary pushed into the vector was built
    // on the stack and copied with one 16-byte load of two 8-byte stores, which the CPU cannot
    // forward (a stall of about a dozen cycles per call, the largest cost of a MAC's send_at).
    if (pending_count_ == pending_.size()) grow_pending();
    Pending& p = pending_[pending_count_++];
    p.due_ps = due_ps;
    p.n = n;
    if (pending_count_ >= settle_at_) settle();
  }
  std::uint64_t value() const {
    if (derived_) return derived_value();
    if (pending_count_ != 0) settle();
    return value_;
  }
  // How many add_at() additions are due by now, whatever their amounts (the others are not
  // counted: they would cost every counter an instruction).
  std::uint64_t timed_adds() const {
    if (pending_count_ != 0) settle();
    return timed_adds_;
  }
  // Value since the last baseline (warm-up end).
  std::uint64_t measured() const { return value() - baseline_; }
  void mark_baseline() { baseline_ = value(); }

  // Derived counters, for a statistic that follows from others a model counts anyway (one
  // timed increment per event instead of two); they must not be added to themselves.
  // This counter is the sum of `a` and `b` from now on (a total over parts).
  void sum_of(const Counter& a, const Counter& b) {
    derived_ = true;
    parts_[0] = &a;
    parts_[1] = &b;
  }
  // This counter is amounts.timed_adds() (frames, for a counter of bytes that takes one add_at()
  // per frame and no other additions).
  void count_of_timed(const Counter& amounts) {
    derived_ = true;
    parts_[0] = &amounts;
    parts_[1] = nullptr;
  }

 private:
  struct Pending {
    std::uint64_t due_ps;
    std::uint64_t n;
  };
  // Adds the pending increments that are due by now (any order: a link's totals mix its two
  // directions), and sets when to look again so that the scans cost O(1) per increment.
  void settle() const;
  void grow_pending();  // more room in pending_ (out of line: rare)
  std::uint64_t derived_value() const {
    return parts_[1] ? parts_[0]->value() + parts_[1]->value() : parts_[0]->timed_adds();
  }

  mutable std::uint64_t value_ = 0;
  mutable std::uint64_t timed_adds_ = 0;
  std::uint64_t baseline_ = 0;
  mutable std::vector<Pending> pending_;  // the first pending_count_ are the increments
  mutable std::size_t pending_count_ = 0;
  mutable std::size_t settle_at_ = 64;
  bool derived_ = false;
  const Counter* parts_[2] = {nullptr, nullptr};
};

// Sum/count/min/max of samples (e.g. a latency at each completion). A quantity that holds a value
// between changes (a queue's occupancy) is reported with level() instead: its mean is then over
// time, so a queue sampled only when it grows, or while it is empty, does not mislead.
class Accumulator {
 public:
  void sample(double v) {
    sum_ += v;
    ++count_;
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }
  // The quantity is `v` from `now_ps` on (time-weighted: mean() weighs each value by how long it
  // held). Changes must come in time order.
  void level(double v, std::uint64_t now_ps);
  bool time_weighted() const { return weighted_; }
  // The level now (the last level() value).
  double current() const { return level_; }
  std::uint64_t count() const { return count_; }
  // Sample mean, or for level(): the mean over the time since the baseline up to `now_ps`.
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  double mean(std::uint64_t now_ps) const;
  // Integral of the level over time since the baseline, in value * ps (time series take deltas).
  double area(std::uint64_t now_ps) const;
  double min() const { return count_ || weighted_ ? min_ : 0.0; }
  double max() const { return count_ || weighted_ ? max_ : 0.0; }
  // A time-weighted accumulator keeps its current level across the baseline.
  void mark_baseline(std::uint64_t now_ps);

 private:
  double sum_ = 0;
  std::uint64_t count_ = 0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
  bool weighted_ = false;
  double level_ = 0;
  std::uint64_t since_ps_ = 0, start_ps_ = 0;
};

class StatGroup;

// Every group registers itself here; the runner marks the baseline and dumps all groups.
class StatRegistry {
 public:
  static StatRegistry& instance();
  void add(StatGroup* group);
  void remove(StatGroup* group);
  const std::vector<StatGroup*>& groups() const { return groups_; }
  void mark_baseline(std::uint64_t now_ps);

 private:
  std::vector<StatGroup*> groups_;
};

class StatGroup {
 public:
  struct CounterEntry {
    std::string name;
    std::string description;
    Counter* counter;
  };
  struct AccumulatorEntry {
    std::string name;
    std::string description;
    Accumulator* acc;
  };

  explicit StatGroup(std::string name);
  ~StatGroup();
  StatGroup(const StatGroup&) = delete;
  StatGroup& operator=(const StatGroup&) = delete;

  // Registration: creates the statistic (or returns the one already registered under `name`).
  // References stay valid for the group's lifetime.
  Counter& counter(const std::string& name, const std::string& description);
  Accumulator& accumulator(const std::string& name, const std::string& description);

  // Lookup: the statistic registered under `name`; throws std::out_of_range if there is none.
  const Counter& counter(const std::string& name) const;
  const Accumulator& accumulator(const std::string& name) const;

  const std::string& name() const { return name_; }
  const std::vector<CounterEntry>& counters() const { return counter_index_; }
  const std::vector<AccumulatorEntry>& accumulators() const { return acc_index_; }
  void mark_baseline(std::uint64_t now_ps);

 private:
  std::string name_;
  std::deque<Counter> counters_;  // deque: stable addresses
  std::deque<Accumulator> accs_;
  std::vector<CounterEntry> counter_index_;
  std::vector<AccumulatorEntry> acc_index_;
};

}  // namespace vtoe::core
