// A one-way message ring in memory that two VMs (or two processes) share, polled by its reader:
// the inter-VM shared-memory channel of SocksDirect (a monitor sets the region up; here the
// hypervisor maps its pages into both VMs' stage 2). No system call, no interrupt: the writer
// copies a message into slots and publishes its tail index; the reader spins on that index.
//
// Layout in the region: the writer's tail (a cache line of its own), the reader's head (one
// line), then `slots` slots of [u32 length, u32 flags, payload]. Each side keeps its own index
// privately and only publishes it; what it reads of the other side's is checked, so a VM that
// writes garbage into the ring can make the other lose messages, never crash it or the
// simulator (garbage is counted and the reader resynchronises at the writer's tail).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "guest/costs.h"
#include "guest/guest_memory.h"
#include "models/core/stats.h"
#include "models/cpu/core.h"

namespace vtoe::guest {

class ShmRing {
 public:
  using Ctx = cpu::Core::Context;
  using Stop = std::function<bool()>;
  static constexpr std::uint64_t kHeaderBytes = 128;  // tail line + head line
  static constexpr std::uint64_t kSlotHeader = 8;     // u32 length, u32 flags
  static constexpr std::uint32_t kLastChunk = 1;      // the message's last slot
  static constexpr std::uint64_t kPage = 4096;        // page remapping moves whole pages

  // The ring at [addr, addr + bytes) of `mem` (the caller's view of the shared region), with
  // slots of `slot_bytes`. `garbage` counts indices and lengths that failed their checks.
  ShmRing(GuestMemory& mem, std::uint64_t addr, std::uint64_t bytes, std::uint64_t slot_bytes,
          cpu::Core& core, const GuestCosts& costs, core::Counter& garbage);

  std::uint64_t slots() const { return slots_; }
  std::uint64_t payload_per_slot() const { return slot_bytes_ - kSlotHeader; }

  // Writer: one message of `len` bytes, copied into slots (user-space memcpy), polling while the
  // ring is full. `zero_copy`: a message of at least guest.costs.remap_threshold bytes moves by
  // page remapping instead of a copy (its pages are charged, its bytes still travel in the
  // model's slots). False when `stop` said so before all of it went.
  bool send(Ctx& ctx, const std::uint8_t* data, std::size_t len, bool zero_copy, const Stop& stop);
  // Reader: polls until a whole message is there and copies up to `max` bytes of it out (the
  // rest is dropped); returns its length, or -1 when `stop` said so first.
  long long recv(Ctx& ctx, std::uint8_t* out, std::size_t max, bool zero_copy, const Stop& stop);

 private:
  std::uint64_t read_u64(std::uint64_t offset) const;
  void write_u64(std::uint64_t offset, std::uint64_t v) const;
  std::uint64_t slot_addr(std::uint64_t index) const {
    return addr_ + kHeaderBytes + (index % slots_) * slot_bytes_;
  }
  void poll(Ctx& ctx);
  double move_cycles(std::size_t len, double per_byte, bool zero_copy) const;

  GuestMemory& mem_;
  std::uint64_t addr_, slot_bytes_, slots_;
  cpu::Core& core_;
  GuestCosts costs_;
  core::Counter& garbage_;
  std::uint64_t tail_ = 0;  // writer's own (published at offset 0)
  std::uint64_t head_ = 0;  // reader's own (published at offset 64)
};

}  // namespace vtoe::guest
