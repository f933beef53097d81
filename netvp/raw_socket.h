// A Linux AF_PACKET raw socket on one interface: the host side of the NetVP bridge (paper §4.3).
// A reader thread takes every frame arriving on the interface (promiscuous, since the simulated
// guests' MAC addresses are not the interface's) into a bounded queue that the simulation
// drains; when the queue is full, frames are dropped and counted. A writer thread sends what the
// simulation queued, so that the kernel's work for each frame sent (on a veth, the peer's whole
// receive path runs in the sender's context: 57 % of the simulation thread's time when it sent
// directly, docs/performance.md) runs beside the simulation instead of inside it. Frames the
// interface's offloads left unfinished (partial checksums, TSO/GRO super-segments; the kernel
// says which in PACKET_AUXDATA) are finished on the way in (IngressFixup).
// Needs CAP_NET_RAW (root); errors name the interface and the system's reason.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "netvp/ingress_fixup.h"

namespace vtoe::netvp {

class RawSocket {
 public:
  // `mtu`: the largest IP packet the simulated side takes; longer TCP segments are cut.
  RawSocket(const std::string& interface, std::size_t queue_frames, std::size_t mtu = 1500);
  ~RawSocket();
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  // Queues one Ethernet frame (without FCS) for the writer thread, in order; false if the send
  // queue is full (the frame is dropped; the caller counts it). Frames the kernel refuses are
  // counted here (send_errors).
  bool send(std::vector<std::uint8_t>&& frame);
  // Moves every queued frame into `out` (appended, oldest first).
  void drain(std::vector<std::vector<std::uint8_t>>& out);

  const std::string& interface() const { return interface_; }
  std::uint64_t received() const { return received_.load(); }
  std::uint64_t queue_drops() const { return queue_drops_.load(); }
  std::uint64_t send_errors() const { return send_errors_.load(); }
  IngressStats ingress() const;

 private:
  void reader();
  void writer();
  void send_batch(const std::vector<std::vector<std::uint8_t>>& batch);
  void take(const std::uint8_t* data, std::size_t len, bool csum_not_ready);

  std::string interface_;
  int fd_ = -1;
  int ifindex_ = 0;
  int wake_[2] = {-1, -1};  // pipe that stops the reader thread
  std::size_t capacity_;
  mutable std::mutex mutex_;
  IngressFixup fixup_;  // used by the reader thread under mutex_
  std::vector<std::vector<std::uint8_t>> fixed_;
  std::deque<std::vector<std::uint8_t>> queue_;
  std::atomic<std::uint64_t> received_{0};
  std::atomic<std::uint64_t> queue_drops_{0};
  std::atomic<std::uint64_t> send_errors_{0};
  std::mutex send_mutex_;
  std::condition_variable send_ready_;
  std::vector<std::vector<std::uint8_t>> send_queue_;
  bool stopping_ = false;  // under send_mutex_
  std::thread thread_;
  std::thread writer_;
};

}  // namespace vtoe::netvp
