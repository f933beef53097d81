// QoS command dispatch policies (paper §3.1, Figs. 3 and 4; evaluated in §5.3, Figs. 11 and 12).
//
// The TOE's I/O command dispatcher serves one queue per VM (control channel) and, whenever it can
// pass another command on, asks a policy which queue's head command goes next. Plain C++: the
// policy sees only a snapshot of the queue heads, so it is usable from the SystemC dispatcher and
// testable on its own.
//
//   fcfs  first come, first served: the head that arrived first, across all queues.
//   rr    the paper's "basic round robin": one command per non-empty queue in turn, whatever its
//         size, so a VM sending bigger messages gets more bandwidth (Fig. 11a).
//   dwrr  deficit weighted round robin, the pseudocode of Fig. 4: byte-fair (Fig. 11b) and
//         weighted by per-queue quanta (Fig. 12), with the standard DRR deficit reset (see
//         DwrrPolicy).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vtoe::toe {

enum class DispatchPolicyKind { Fcfs, RoundRobin, Dwrr };

// "fcfs" | "rr" | "dwrr"; anything else throws std::invalid_argument.
DispatchPolicyKind parse_dispatch_policy(const std::string& name);
// The name parse_dispatch_policy accepts.
const char* to_string(DispatchPolicyKind kind);

// What the policy sees of each queue (one per VM / channel): is it empty, the size in bytes of the
// command at its head, and the arrival sequence number of that head command (for FCFS).
struct QueueHead {
  bool empty = true;
  std::uint32_t size = 0;
  std::uint64_t arrival = 0;
};

class DispatchPolicy {
 public:
  virtual ~DispatchPolicy() = default;
  // Chooses the queue whose head command is dispatched next, or -1 if all are empty. Calling it
  // again with the same heads returns the same queue. The caller then dequeues that head and calls
  // served(q, size). `heads` has one entry per queue the policy was made for (FCFS: any number);
  // a wrong count throws std::invalid_argument.
  virtual int pick(const std::vector<QueueHead>& heads) = 0;
  virtual void served(int queue, std::uint32_t size) = 0;
  virtual DispatchPolicyKind kind() const = 0;
};

// First come, first served: the non-empty head with the smallest arrival number (ties: lowest
// queue index).
class FcfsPolicy final : public DispatchPolicy {
 public:
  int pick(const std::vector<QueueHead>& heads) override;
  void served(int, std::uint32_t) override {}
  DispatchPolicyKind kind() const override { return DispatchPolicyKind::Fcfs; }
};

// Basic round robin: the first non-empty queue at or after the pointer; serving queue q moves the
// pointer to q + 1.
class RoundRobinPolicy final : public DispatchPolicy {
 public:
  explicit RoundRobinPolicy(std::size_t queues);
  int pick(const std::vector<QueueHead>& heads) override;
  void served(int queue, std::uint32_t size) override;
  DispatchPolicyKind kind() const override { return DispatchPolicyKind::RoundRobin; }

 private:
  std::size_t queues_;
  std::size_t ptr_ = 0;
};

// Deficit weighted round robin, Fig. 4 of the paper: deficit counters start at 0, the pointer at
// queue 0. At the pointer's queue: if it is non-empty and its head fits in the deficit, that head
// is dispatched and its size debited, and the pointer stays (the next pick continues with the same
// queue); otherwise the queue's quantum is credited and the pointer advances. An empty queue is
// skipped. A queue's share of the bytes is its quantum's share of the busy queues' quanta.
//
// Deviation from the literal figure (on by default): the deficit of an empty queue is reset to 0,
// as in standard DRR (Shreedhar & Varghese, SIGCOMM '95), where a queue that runs empty leaves the
// active list with its deficit cleared. Fig. 4 as written lets an idle queue keep up to one quantum
// plus one message of credit, which it spends in a burst, ahead of its share, when its VM sends
// again. Passing reset_idle_deficit = false gives the figure verbatim (for comparison).
//
// pick() always terminates: it returns -1 at once if every queue is empty, and a head bigger than
// the quanta is served after enough rounds; whole rounds in which nothing can be served are skipped
// arithmetically, so even a 4 GiB head against a 1-byte quantum costs O(queues).
class DwrrPolicy final : public DispatchPolicy {
 public:
  // One quantum (bytes credited per round, > 0) per queue; throws std::invalid_argument on a zero
  // quantum.
  explicit DwrrPolicy(std::vector<std::uint32_t> quanta, bool reset_idle_deficit = true);
  int pick(const std::vector<QueueHead>& heads) override;
  void served(int queue, std::uint32_t size) override;
  DispatchPolicyKind kind() const override { return DispatchPolicyKind::Dwrr; }

  std::uint64_t deficit(std::size_t queue) const { return deficit_.at(queue); }
  std::uint32_t quantum(std::size_t queue) const { return quanta_.at(queue); }
  std::size_t pointer() const { return ptr_; }

 private:
  std::vector<std::uint32_t> quanta_;
  std::vector<std::uint64_t> deficit_;
  std::size_t ptr_ = 0;
  bool reset_idle_deficit_;
};

// Builds a policy for `queues` queues. `quanta` (DWRR only) holds the bytes credited per round to
// each queue; empty means default_quantum for all. Weights 4:1:2:2 are quanta 4q:1q:2q:2q. Throws
// std::invalid_argument if quanta is neither empty nor one per queue, or a quantum is 0.
std::unique_ptr<DispatchPolicy> make_dispatch_policy(DispatchPolicyKind kind, std::size_t queues,
                                                     std::vector<std::uint32_t> quanta = {},
                                                     std::uint32_t default_quantum = 16000);

}  // namespace vtoe::toe
