#include "models/toe/dispatch_policy.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace vtoe::toe {

namespace {

void check_heads(const std::vector<QueueHead>& heads, std::size_t queues, const char* policy) {
  if (heads.size() != queues) {
    throw std::invalid_argument(std::string(policy) + " policy made for " + std::to_string(queues) +
                                " queues was given " + std::to_string(heads.size()) + " heads");
  }
}

std::size_t check_queue(int queue, std::size_t queues, const char* policy) {
  if (queue < 0 || static_cast<std::size_t>(queue) >= queues) {
    throw std::out_of_range(std::string(policy) + " policy: served() for queue " +
                            std::to_string(queue) + " of " + std::to_string(queues));
  }
  return static_cast<std::size_t>(queue);
}

}  // namespace

DispatchPolicyKind parse_dispatch_policy(const std::string& name) {
  if (name == "fcfs") return DispatchPolicyKind::Fcfs;
  if (name == "rr") return DispatchPolicyKind::RoundRobin;
  if (name == "dwrr") return DispatchPolicyKind::Dwrr;
  throw std::invalid_argument("unknown dispatch policy '" + name + "' (expected fcfs, rr or dwrr)");
}

const char* to_string(DispatchPolicyKind kind) {
  switch (kind) {
    case DispatchPolicyKind::Fcfs:
      return "fcfs";
    case DispatchPolicyKind::RoundRobin:
      return "rr";
    case DispatchPolicyKind::Dwrr:
      return "dwrr";
  }
  return "?";
}

// ---- FCFS ---------------------------------------------------------------------------------------

int FcfsPolicy::pick(const std::vector<QueueHead>& heads) {
  int best = -1;
  for (std::size_t i = 0; i < heads.size(); ++i) {
    if (heads[i].empty) continue;
    if (best < 0 || heads[i].arrival < heads[static_cast<std::size_t>(best)].arrival) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

// ---- Round robin --------------------------------------------------------------------------------

RoundRobinPolicy::RoundRobinPolicy(std::size_t queues) : queues_(queues) {}

int RoundRobinPolicy::pick(const std::vector<QueueHead>& heads) {
  check_heads(heads, queues_, "rr");
  // From ptr_ round to ptr_ - 1, wrapping without a division per step.
  for (std::size_t q = ptr_; q < queues_; ++q)
    if (!heads[q].empty) return static_cast<int>(q);
  for (std::size_t q = 0; q < ptr_ && q < queues_; ++q)
    if (!heads[q].empty) return static_cast<int>(q);
  return -1;
}

void RoundRobinPolicy::served(int queue, std::uint32_t) {
  ptr_ = (check_queue(queue, queues_, "rr") + 1) % queues_;
}

// ---- DWRR ---------------------------------------------------------------------------------------

DwrrPolicy::DwrrPolicy(std::vector<std::uint32_t> quanta, bool reset_idle_deficit)
    : quanta_(std::move(quanta)),
      deficit_(quanta_.size(), 0),
      reset_idle_deficit_(reset_idle_deficit) {
  for (std::size_t i = 0; i < quanta_.size(); ++i) {
    if (quanta_[i] == 0) {
      throw std::invalid_argument("dwrr quantum of queue " + std::to_string(i) + " is 0");
    }
  }
}

int DwrrPolicy::pick(const std::vector<QueueHead>& heads) {
  const std::size_t n = quanta_.size();
  check_heads(heads, n, "dwrr");
  // Fig. 4's loop spins while every queue is empty; the caller gets -1 instead. A queue only runs
  // empty while the pointer is on it (only dispatching takes commands out), so clearing every empty
  // queue's deficit here is standard DRR's "deficit := 0 when the queue empties", and it also
  // covers a queue flushed by other means.
  bool busy = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!heads[i].empty) {
      busy = true;
    } else if (reset_idle_deficit_) {
      deficit_[i] = 0;
    }
  }
  if (!busy) return -1;

  for (;;) {
    // One pass of Fig. 4's WHILE loop over all queues, starting at the pointer.
    for (std::size_t step = 0; step < n; ++step) {
      const std::size_t q = ptr_;
      if (!heads[q].empty) {
        if (heads[q].size <= deficit_[q]) return static_cast<int>(q);  // pointer stays on q
        deficit_[q] += quanta_[q];
      }
      ptr_ = (q + 1) % n;
    }
    // A whole pass served nothing, and the pointer is back where it started. The next passes do the
    // same, only crediting quanta, until the queue needing the fewest rounds has enough: queue i is
    // served no earlier than pass r_i = ceil((size_i - deficit_i) / quantum_i), since before it,
    // deficit_i + (r_i - 1) * quantum_i < size_i. Skip min(r_i) passes at once (no livelock, and
    // O(n) however large a head is next to the quanta); the pass after them serves someone.
    std::uint64_t skip = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t i = 0; i < n; ++i) {
      if (heads[i].empty) continue;
      const std::uint64_t need = heads[i].size > deficit_[i] ? heads[i].size - deficit_[i] : 0;
      skip = std::min(skip, (need + quanta_[i] - 1) / quanta_[i]);
    }
    if (skip == 0) continue;
    for (std::size_t i = 0; i < n; ++i) {
      if (!heads[i].empty) deficit_[i] += skip * quanta_[i];
    }
  }
}

void DwrrPolicy::served(int queue, std::uint32_t size) {
  std::uint64_t& d = deficit_[check_queue(queue, quanta_.size(), "dwrr")];
  d -= std::min<std::uint64_t>(d, size);
}

// ---- Factory ------------------------------------------------------------------------------------

std::unique_ptr<DispatchPolicy> make_dispatch_policy(DispatchPolicyKind kind, std::size_t queues,
                                                     std::vector<std::uint32_t> quanta,
                                                     std::uint32_t default_quantum) {
  switch (kind) {
    case DispatchPolicyKind::Fcfs:
      return std::make_unique<FcfsPolicy>();
    case DispatchPolicyKind::RoundRobin:
      return std::make_unique<RoundRobinPolicy>(queues);
    case DispatchPolicyKind::Dwrr:
      if (quanta.empty()) {
        quanta.assign(queues, default_quantum);
      } else if (quanta.size() != queues) {
        throw std::invalid_argument(
            "dwrr needs one quantum per queue: " + std::to_string(quanta.size()) + " quanta for " +
            std::to_string(queues) + " queues");
      }
      return std::make_unique<DwrrPolicy>(std::move(quanta));
  }
  throw std::invalid_argument("unknown dispatch policy kind");
}

}  // namespace vtoe::toe
