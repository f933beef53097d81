// Timeline trace in Chrome's trace-event format (opens in Perfetto / chrome://tracing): spans
// ("X" events) and instants ("i") on named lanes, grouped by component, and counter tracks ("C":
// a value over time, the time series' quantities). Only what falls inside
// the trace window is kept. Off unless enabled; models check Tracer::on() first, so a run without
// a trace pays one predictable branch per hook.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/core/module.h"

namespace vtoe::core {

class Tracer {
 public:
  static Tracer& instance();
  static bool on() { return enabled_; }

  // Records events in [from, to), at most `max_events` of them (0: no bound).
  void enable(TimePs from, TimePs to, std::size_t max_events = 0);
  void disable() { enabled_ = false; }
  // Events left out because the bound was reached, and the time of the first of them.
  std::uint64_t left_out() const { return left_out_; }
  TimePs full_at() const { return full_at_; }
  TimePs from() const { return from_; }
  TimePs to() const { return to_; }

  // A lane ("thread") inside a component ("process"); created on first use.
  int lane(const std::string& component, const std::string& lane_name);
  // A span [start, end) on `lane`, clipped to the window.
  void span(int lane, const std::string& name, TimePs start, TimePs end, const char* category);
  void instant(int lane, const std::string& name, TimePs at, const char* category);
  // A counter track `name` under `component` holds `value` from `at` on.
  void counter(const std::string& component, const std::string& name, TimePs at, double value);
  // How lanes and spans name VM i of the platform whose modules are named under `prefix` (""
  // for the main platform, a platform host's name for its own): its scenario name once
  // set_vm_names() was called for that platform, else "vmI". `component` is the module that
  // asks (its name picks the platform by the longest prefix it starts with).
  void set_vm_names(std::vector<std::string> names, const std::string& prefix = "") {
    vm_names_[prefix] = std::move(names);
  }
  std::string vm_label(int vm, const std::string& component = "") const;
  std::size_t events() const { return events_.size(); }
  // Writes {"traceEvents": [...]} to `path`; throws std::runtime_error naming the path.
  void write(const std::string& path) const;

 private:
  struct Event {
    char phase;
    int lane;
    TimePs ts, dur;
    std::string name;
    const char* category;
    double value = 0;  // 'C' events
  };
  struct Lane {
    int pid, tid;
    std::string component, name;
  };
  // Whether an event at `at` still fits under the bound (counts it as left out if not).
  bool room(TimePs at);

  static bool enabled_;
  TimePs from_ = 0, to_ = 0;
  std::size_t max_events_ = 0;
  std::uint64_t left_out_ = 0;
  TimePs full_at_ = 0;
  std::vector<Event> events_;
  std::vector<Lane> lanes_;
  std::map<std::pair<std::string, std::string>, int> lane_ids_;
  std::map<std::string, int> pids_;
  std::map<std::string, std::vector<std::string>> vm_names_;  // by module-name prefix
};

}  // namespace vtoe::core
