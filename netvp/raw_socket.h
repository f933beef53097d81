// A Linux AF_PACKET raw socket on one interface: the host side of the NetVP bridge (paper §4.3).
// Frames arriving on the interface (promiscuous, since the simulated guests' MAC addresses are
// not the interface's) land in a receive ring shared with the kernel (PACKET_RX_RING), which the
// simulation reads at each pacer tick: no thread, no system call and no wake-up per frame
// (docs/performance.md). When the ring is full the kernel drops and counts. Frames too long for
// a ring slot (GSO/GRO super-segments) come whole through the socket's queue (TP_STATUS_COPY).
// A writer thread sends what the simulation queued, so that the kernel's work for each frame
// sent (on a veth, the peer's whole receive path runs in the sender's context: 57 % of the
// simulation thread's time when it sent directly) runs beside the simulation instead of inside
// it. Frames the interface's offloads left unfinished (partial checksums, TSO/GRO super-segments;
// the kernel says which in the ring's frame header or in PACKET_AUXDATA) are finished on the way
// in (IngressFixup). Needs CAP_NET_RAW (root); errors name the interface and the system's reason.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "netvp/ingress_fixup.h"

namespace vtoe::netvp {

class RawSocket {
 public:
  // `ring_frames`: frames from the wire held until the simulation takes them, and frames for
  // the wire held for the kernel. `mtu`: the largest IP packet the simulated side takes; longer
  // TCP segments are cut.
  RawSocket(const std::string& interface, std::size_t ring_frames, std::size_t mtu = 1500);
  ~RawSocket();
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  // Queues one Ethernet frame (without FCS) for the writer thread, in order; false if the send
  // queue is full (the frame is dropped; the caller counts it). Frames the kernel refuses are
  // counted here (send_errors). Called by the simulation thread.
  bool send(std::vector<std::uint8_t>&& frame);
  // Wakes the writer for what send() queued since the last flush. The simulation calls it at
  // each pacer tick and the queue flushes itself every kFlushFrames frames: one wake-up per
  // batch, not per frame.
  void flush();
  // Appends every frame that arrived since the last call to `out`, oldest first. Called by the
  // simulation thread only (it alone reads the ring).
  void drain(std::vector<std::vector<std::uint8_t>>& out);
  // Blocks until a frame is waiting for drain() or the steady clock reaches `until` (or a
  // signal arrives).
  void wait_readable(std::chrono::steady_clock::time_point until);

  const std::string& interface() const { return interface_; }
  std::uint64_t received() const { return received_; }
  // Frames the kernel dropped because the ring was full (or, for an oversized frame, because
  // the socket's queue was).
  std::uint64_t queue_drops();
  std::uint64_t send_errors() const { return send_errors_.load(); }
  const IngressStats& ingress() const { return fixup_.stats(); }

  static constexpr std::size_t kFlushFrames = 32;

 private:
  void writer();
  void send_batch(const std::vector<std::vector<std::uint8_t>>& batch);
  void take(const std::uint8_t* data, std::size_t len, bool csum_not_ready,
            std::vector<std::vector<std::uint8_t>>& out);
  bool read_copied(std::vector<std::vector<std::uint8_t>>& out);

  std::string interface_;
  int fd_ = -1;
  int ifindex_ = 0;
  // The receive ring: `slots_` frames of 2 KiB (kSlotSize) in one mapping.
  std::uint8_t* ring_ = nullptr;
  std::size_t ring_bytes_ = 0;
  std::size_t slots_ = 0;
  std::size_t next_slot_ = 0;
  std::vector<std::uint8_t> copy_buf_;  // an oversized frame read from the socket's queue
  std::size_t capacity_;
  IngressFixup fixup_;
  std::uint64_t received_ = 0;
  std::uint64_t ring_drops_ = 0;
  std::atomic<std::uint64_t> send_errors_{0};
  std::mutex send_mutex_;
  std::condition_variable send_ready_;
  std::vector<std::vector<std::uint8_t>> send_queue_;  // under send_mutex_
  std::size_t unflushed_ = 0;                          // simulation thread only
  bool flush_requested_ = false;                       // under send_mutex_
  bool stopping_ = false;                              // under send_mutex_
  std::thread writer_;
};

}  // namespace vtoe::netvp
