// The QoS dispatcher's view of N queues of send contexts (paper Fig. 4): each queue's head, with its
// size and arrival order, and the policy (FCFS, RR, DWRR) that picks the next head to serve. The
// TOE's dispatcher arbitrates its channels' SendQs through it, and the device-emulation manager in
// the hypervisor its VMs' virtual SendQs, so the bookkeeping exists once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/toe/dispatch_policy.h"

namespace vtoe::toe {

class QosQueue {
 public:
  QosQueue(DispatchPolicyKind kind, std::size_t queues, const std::vector<std::uint32_t>& quanta,
           std::uint32_t default_quantum);

  // Stamps a context as it arrives (FCFS serves the smallest stamp).
  std::uint64_t next_arrival() { return arrivals_++; }
  void set_head(std::size_t queue, std::uint32_t size, std::uint64_t arrival) {
    heads_.at(queue) = QueueHead{false, size, arrival};
  }
  // Hot (every dispatcher pass looks at every queue): unchecked, queue < queues().
  void clear_head(std::size_t queue) { heads_[queue] = QueueHead{}; }
  bool has_head(std::size_t queue) const { return !heads_[queue].empty; }

  // The queue whose head goes next, or -1 when every queue is empty. The caller dequeues that head,
  // calls served() and then sets or clears the queue's new head.
  int pick() { return policy_->pick(heads_); }
  void served(int queue, std::uint32_t size) { policy_->served(queue, size); }

  std::size_t queues() const { return heads_.size(); }
  const DispatchPolicy& policy() const { return *policy_; }

 private:
  std::unique_ptr<DispatchPolicy> policy_;
  std::vector<QueueHead> heads_;
  std::uint64_t arrivals_ = 0;
};

}  // namespace vtoe::toe
