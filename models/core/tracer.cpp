#include "models/core/tracer.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace vtoe::core {

bool Tracer::enabled_ = false;

Tracer& Tracer::instance() {
  static Tracer tracer;
  return tracer;
}

void Tracer::enable(TimePs from, TimePs to, std::size_t max_events) {
  from_ = from;
  to_ = to;
  max_events_ = max_events;
  left_out_ = 0;
  full_at_ = 0;
  enabled_ = to > from;
}

bool Tracer::room(TimePs at) {
  if (max_events_ == 0 || events_.size() < max_events_) return true;
  if (left_out_++ == 0) full_at_ = at;
  return false;
}

int Tracer::lane(const std::string& component, const std::string& lane_name) {
  const auto key = std::make_pair(component, lane_name);
  auto it = lane_ids_.find(key);
  if (it != lane_ids_.end()) return it->second;
  auto [p, fresh] = pids_.emplace(component, static_cast<int>(pids_.size()) + 1);
  (void)fresh;
  int tid = 1;
  for (const Lane& l : lanes_)
    if (l.pid == p->second) ++tid;
  lanes_.push_back({p->second, tid, component, lane_name});
  const int id = static_cast<int>(lanes_.size()) - 1;
  lane_ids_[key] = id;
  return id;
}

void Tracer::span(int lane, const std::string& name, TimePs start, TimePs end,
                  const char* category) {
  if (!enabled_ || end <= from_ || start >= to_ || end <= start) return;
  const TimePs s = start < from_ ? from_ : start;
  const TimePs e = end > to_ ? to_ : end;
  if (room(s)) events_.push_back({'X', lane, s, e - s, name, category});
}

void Tracer::instant(int lane, const std::string& name, TimePs at, const char* category) {
  if (!enabled_ || at < from_ || at >= to_) return;
  if (room(at)) events_.push_back({'i', lane, at, 0, name, category});
}

void Tracer::counter(const std::string& component, const std::string& name, TimePs at,
                     double value) {
  if (!enabled_ || at < from_ || at >= to_) return;
  if (room(at)) events_.push_back({'C', lane(component, name), at, 0, name, "counter", value});
}

std::string Tracer::vm_label(int vm, const std::string& component) const {
  const std::vector<std::string>* names = nullptr;
  std::size_t best = 0;
  for (const auto& [prefix, list] : vm_names_) {
    const bool under = prefix.empty() || (component.size() > prefix.size() &&
                                          component.compare(0, prefix.size(), prefix) == 0 &&
                                          component[prefix.size()] == '.');
    if (under && (!names || prefix.size() > best)) {
      names = &list;
      best = prefix.size();
    }
  }
  if (names && vm >= 0 && static_cast<std::size_t>(vm) < names->size())
    return (*names)[static_cast<std::size_t>(vm)];
  return "vm" + std::to_string(vm);
}

namespace {
std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}
// Microseconds with picosecond resolution, printed without float rounding.
std::string micros(TimePs ps) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%llu.%06llu", static_cast<unsigned long long>(ps / 1'000'000),
                static_cast<unsigned long long>(ps % 1'000'000));
  return buf;
}
}  // namespace

void Tracer::write(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write trace file '" + path + "'");
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&]() {
    if (!first) out << ",\n";
    first = false;
  };
  for (const auto& [name, pid] : pids_) {
    sep();
    out << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid
        << ",\"tid\":0,\"args\":{\"name\":\"" << escaped(name) << "\"}}";
  }
  for (const Lane& l : lanes_) {
    sep();
    out << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << l.pid << ",\"tid\":" << l.tid
        << ",\"args\":{\"name\":\"" << escaped(l.name) << "\"}}";
  }
  for (const Event& e : events_) {
    const Lane& l = lanes_[static_cast<std::size_t>(e.lane)];
    sep();
    out << "{\"ph\":\"" << e.phase << "\",\"cat\":\"" << e.category << "\",\"name\":\""
        << escaped(e.name) << "\",\"pid\":" << l.pid << ",\"tid\":" << l.tid
        << ",\"ts\":" << micros(e.ts);
    if (e.phase == 'X') {
      out << ",\"dur\":" << micros(e.dur);
    } else if (e.phase == 'C') {
      char v[32];
      std::snprintf(v, sizeof v, "%.9g", e.value);
      out << ",\"args\":{\"value\":" << v << "}";
    } else {
      out << ",\"s\":\"t\"";
    }
    out << "}";
  }
  out << "\n]}\n";
  if (!out) throw std::runtime_error("error writing trace file '" + path + "'");
}

}  // namespace vtoe::core
