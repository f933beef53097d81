// The host side of one TOE control channel's ring protocol, written once: the guest's TOE driver,
// the hypervisor's device-emulation manager (which drives a physical channel for its VMs) and the
// test benches all program the channel, post contexts and drain the ECQ through it.
//
// It keeps the host's ring state (where each ring is, the next slot to fill, the last head the TOE
// reported, the next ECQ entry to read). Register and memory accesses go through an Access the
// caller supplies for each call, so that each user charges its own costs (guest kernel cycles
// through its register port, hypervisor cycles through device_access, nothing in a bench).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "models/toe/descriptors.h"

namespace vtoe::toe {

class HostRingDriver {
 public:
  // How the host reaches the channel and its ring memory.
  class Access {
   public:
    virtual ~Access() = default;
    // Register access at `offset` inside the channel's page.
    virtual void write_reg(std::uint64_t offset, std::uint32_t value) = 0;
    virtual std::uint32_t read_reg(std::uint64_t offset) = 0;
    virtual void read_mem(std::uint64_t addr, void* dst, std::size_t len) = 0;
    virtual void write_mem(std::uint64_t addr, const void* src, std::size_t len) = 0;
    // A host->TOE ring is full even after re-reading its head: wait until the TOE may have taken
    // contexts (an event, a poll interval).
    virtual void wait_for_space() = 0;
    // The context is in the ring and the doorbell is next (for a user's statistics).
    virtual void posted() {}
  };

  explicit HostRingDriver(std::uint32_t entries) : entries_(entries) {}

  // Zeroes the four rings at `ring_addr` and programs the channel: each ring's size and base, then
  // enable with interrupts.
  void start(Access& access, const std::array<std::uint64_t, kRings>& ring_addr);
  bool started() const { return started_; }

  // Writes one 32-byte context into a host->TOE ring and rings its doorbell (the tail register).
  // While the ring looks full, re-reads the head and waits. Returns the number of waits.
  std::uint32_t post(Access& access, Ring ring, const void* desc);

  // Reads the next valid ECQ entry into `out` and clears its valid flag; false if there is none.
  bool next_completion(Access& access, EcqDesc& out);
  // Hands the ECQ slots read so far back to the TOE (writes the ECQ head register).
  void release_completions(Access& access);

  std::uint32_t entries() const { return entries_; }
  std::uint64_t ring_addr(Ring ring) const { return addr_[static_cast<int>(ring)]; }
  std::uint32_t tail(Ring ring) const { return tail_[static_cast<int>(ring)]; }
  std::uint32_t ecq_head() const { return head_[static_cast<int>(Ring::Ecq)]; }

  static std::uint64_t ring_reg(Ring ring, std::uint64_t sub) {
    return reg::kRingBase + static_cast<std::uint64_t>(ring) * reg::kRingStride + sub;
  }

 private:
  bool full(int r) const { return ((tail_[r] + 1) & (entries_ - 1)) == head_[r]; }

  std::uint32_t entries_;
  bool started_ = false;
  std::array<std::uint64_t, kRings> addr_{};
  std::array<std::uint32_t, kRings> tail_{};  // host->TOE: next slot to fill
  std::array<std::uint32_t, kRings> head_{};  // host->TOE: last head seen; ECQ: next entry to read
};

}  // namespace vtoe::toe
