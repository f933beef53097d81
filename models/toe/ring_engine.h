// One descriptor ring in host memory, as the TOE sees it: base, size, head and tail registers,
// fetch of new contexts (host->TOE rings) and write-back of completions (TOE->host ring). The same
// engine serves CmdQ, SendQ, RecvQ and ECQ; the channel owns four of them.
#pragma once

#include <cstdint>
#include <string>

#include "models/toe/descriptors.h"

namespace vtoe::toe {

class RingEngine {
 public:
  // Register interface. Invalid programming (size not a power of two, index past the end) is
  // refused and latched as an error instead of being used.
  bool write_register(std::uint64_t offset, std::uint32_t value, std::string* error);
  std::uint32_t read_register(std::uint64_t offset) const;

  bool configured() const { return size_ >= 2 && addr_ != 0; }
  std::uint32_t size() const { return size_; }
  std::uint32_t head() const { return head_; }
  std::uint32_t tail() const { return tail_; }

  // Host->TOE: contexts posted but not yet consumed.
  std::uint32_t pending() const { return configured() ? (tail_ - head_) & (size_ - 1) : 0; }
  // Contiguous pending contexts starting at head (fetch stops at the ring's end).
  std::uint32_t pending_contiguous() const;
  std::uint64_t entry_addr(std::uint32_t index) const {
    return addr_ + static_cast<std::uint64_t>(index & (size_ - 1)) * kDescBytes;
  }
  // Moves the head past up to `n` fetched contexts, never past the tail: a host that rewound
  // its tail (or reprogrammed the ring) while they were fetched would otherwise see the head
  // overtake the tail, turning the ring into size - 1 contexts it never posted. Returns how many.
  std::uint32_t consume(std::uint32_t n) {
    if (n > pending()) n = pending();
    head_ = (head_ + n) & (size_ - 1);
    return n;
  }
  // Bumped by every write of the base or size (which also reset both indices): contexts
  // fetched under an older generation belong to a ring that no longer exists.
  std::uint32_t generation() const { return generation_; }

  // TOE->host: free slots (one always stays empty to tell full from empty).
  std::uint32_t space() const {
    return configured() ? size_ - 1 - ((tail_ - head_) & (size_ - 1)) : 0;
  }
  std::uint32_t produce_index() const { return tail_; }
  void produce() { tail_ = (tail_ + 1) & (size_ - 1); }

 private:
  std::uint64_t addr_ = 0;
  std::uint32_t size_ = 0;
  std::uint32_t head_ = 0;
  std::uint32_t tail_ = 0;
  std::uint32_t generation_ = 0;
};

}  // namespace vtoe::toe
