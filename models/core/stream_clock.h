// StreamClock: the latency of each message of one byte stream, from where a sender hands it over
// to where a receiver takes it (docs/outputs.md, "Latency"). Message k of the stream is its bytes
// [(k-1) * size, k * size); the sender says how far it has handed the stream over, the receiver
// how far it has taken it, each with the simulated time. A message is stamped when the sender's
// reach first covers its last byte, and its latency recorded when the receiver's does.
//
// Plain C++: a guest application and a simulated peer (layers apart) share one through the
// platform that builds both. Memory: one stamp per message handed over and not yet taken (a
// TCP connection's buffers' worth at most).
#pragma once

#include <cstdint>
#include <deque>

#include "models/core/histogram.h"
#include "models/core/sim_time.h"

namespace vtoe::core {

class StreamClock {
 public:
  // The latencies go into `into` if given (a histogram kept elsewhere), else into latency().
  explicit StreamClock(std::uint64_t message_size, LogHistogram* into = nullptr)
      : size_(message_size ? message_size : 1), out_(into ? into : &latency_) {}
  StreamClock(const StreamClock&) = delete;
  StreamClock& operator=(const StreamClock&) = delete;

  // The sender has handed over the stream's bytes before `end` at `t`.
  void handed(std::uint64_t end, TimePs t) {
    for (; next_stamp_ * size_ <= end; ++next_stamp_) stamps_.push_back(t);
  }
  // The receiver has taken the stream's bytes before `end` at `t`.
  void taken(std::uint64_t end, TimePs t) {
    for (; !stamps_.empty() && next_take_ * size_ <= end; ++next_take_) {
      out_->record(t >= stamps_.front() ? t - stamps_.front() : 0);
      stamps_.pop_front();
    }
  }
  const LogHistogram& latency() const { return latency_; }
  std::uint64_t message_size() const { return size_; }

 private:
  std::uint64_t size_;
  std::uint64_t next_stamp_ = 1;  // the next message (1-based) to stamp
  std::uint64_t next_take_ = 1;   // the oldest stamped message not yet taken
  std::deque<TimePs> stamps_;
  LogHistogram latency_;
  LogHistogram* out_;
};

}  // namespace vtoe::core
