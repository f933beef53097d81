// Local buffer memory shared by all of a stack's connections (a TOE's SRAM). Each connection
// holds what it has queued to send, what it has received and not yet handed over, and the
// receive window it has promised its peer (the peer may send that much at any moment, so it is
// reserved). A connection grows its share only while the pool has room: a full pool closes
// receive windows (zero window: the peer waits, nothing is dropped) and stops writers.
#pragma once

#include <algorithm>
#include <cstddef>

namespace vtoe::tcpip {

class BufferPool {
 public:
  explicit BufferPool(std::size_t capacity) : capacity_(capacity) {}

  std::size_t capacity() const { return capacity_; }
  std::size_t used() const { return used_; }
  std::size_t free() const { return used_ >= capacity_ ? 0 : capacity_ - used_; }
  std::size_t peak() const { return peak_; }
  std::size_t promised() const { return promised_; }
  // Room for receive windows to grow: promised windows may take at most half of the pool, so
  // that connections which promise windows and receive nothing cannot starve the writers.
  std::size_t promise_room() const {
    const std::size_t budget = capacity_ / 2;
    return std::min(free(), promised_ >= budget ? 0 : budget - promised_);
  }

  // A holder's data and promised shares change at once (no transient peak in between).
  void adjust_both(std::size_t& held, std::size_t now, std::size_t& promised_held,
                   std::size_t promise_now) {
    used_ = used_ - held - promised_held + now + promise_now;
    promised_ = promised_ - promised_held + promise_now;
    held = now;
    promised_held = promise_now;
    peak_ = std::max(peak_, used_);
  }
  // A holder's data share changes from `held` to `now`; `held` is updated.
  void adjust(std::size_t& held, std::size_t now) {
    used_ = used_ - held + now;
    held = now;
    peak_ = std::max(peak_, used_);
  }
  // The same for the receive window a holder has promised (part of its use, and of promised()).
  void adjust_promise(std::size_t& held, std::size_t now) {
    promised_ = promised_ - held + now;
    adjust(held, now);
  }

 private:
  std::size_t capacity_;
  std::size_t used_ = 0;
  std::size_t promised_ = 0;
  std::size_t peak_ = 0;
};

}  // namespace vtoe::tcpip
