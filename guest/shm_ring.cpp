#include "guest/shm_ring.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace vtoe::guest {

using cpu::CycleClass;

ShmRing::ShmRing(GuestMemory& mem, std::uint64_t addr, std::uint64_t bytes,
                 std::uint64_t slot_bytes, cpu::Core& core, const GuestCosts& costs,
                 core::Counter& garbage)
    : mem_(mem),
      addr_(addr),
      slot_bytes_(slot_bytes),
      slots_(bytes > kHeaderBytes ? (bytes - kHeaderBytes) / slot_bytes : 0),
      core_(core),
      costs_(costs),
      garbage_(garbage) {
  if (slot_bytes <= kSlotHeader || slots_ < 2)
    throw std::invalid_argument("shared-memory ring of " + std::to_string(bytes) +
                                " bytes holds fewer than two slots of " +
                                std::to_string(slot_bytes) + " bytes");
}

std::uint64_t ShmRing::read_u64(std::uint64_t offset) const {
  std::uint64_t v = 0;
  mem_.read(addr_ + offset, &v, sizeof v);
  return v;
}

void ShmRing::write_u64(std::uint64_t offset, std::uint64_t v) const {
  mem_.write(addr_ + offset, &v, sizeof v);
}

// One turn of a spin loop: a load of a line the other side owns (a cache miss when it changed).
void ShmRing::poll(Ctx& ctx) { core_.execute(ctx, costs_.poll, CycleClass::GuestUser); }

double ShmRing::move_cycles(std::size_t len, double per_byte, bool zero_copy) const {
  if (zero_copy && len >= costs_.remap_threshold)
    return costs_.page_remap * static_cast<double>((len + kPage - 1) / kPage);
  return costs_.copy_fixed + per_byte * static_cast<double>(len);
}

bool ShmRing::send(Ctx& ctx, const std::uint8_t* data, std::size_t len, bool zero_copy,
                   const Stop& stop) {
  core_.execute(ctx, move_cycles(len, costs_.copy_per_byte, zero_copy), CycleClass::GuestUser);
  std::size_t pos = 0;
  do {
    // Room: the reader's published head must lie within one ring behind our tail; anything
    // else is garbage and reads as a full ring (the reader republishes a sane head).
    for (;;) {
      const std::uint64_t head = read_u64(64);
      const bool sane = head <= tail_ && tail_ - head <= slots_;
      if (!sane) ++garbage_;
      if (sane && tail_ - head < slots_) break;
      if (stop && stop()) return false;
      // Our own line may have been overwritten too: a reader that resynchronised on garbage
      // waits for the true tail.
      if (read_u64(0) != tail_) write_u64(0, tail_);
      poll(ctx);
    }
    const std::size_t n = std::min<std::size_t>(len - pos, payload_per_slot());
    const std::uint32_t header[2] = {static_cast<std::uint32_t>(n),
                                     pos + n == len ? kLastChunk : 0u};
    const std::uint64_t slot = slot_addr(tail_);
    mem_.write(slot, header, sizeof header);
    if (n) mem_.write(slot + kSlotHeader, data + pos, n);
    pos += n;
    write_u64(0, ++tail_);  // publish: the slot is written before the index that shows it
  } while (pos < len);
  return true;
}

long long ShmRing::recv(Ctx& ctx, std::uint8_t* out, std::size_t max, bool zero_copy,
                        const Stop& stop) {
  std::size_t len = 0;
  for (;;) {
    const std::uint64_t tail = read_u64(0);
    if (tail == head_) {
      if (stop && stop()) return -1;
      // Our own line may have been overwritten: a writer waiting for room needs the true head.
      if (read_u64(64) != head_) write_u64(64, head_);
      poll(ctx);
      continue;
    }
    if (tail < head_ || tail - head_ > slots_) {
      // Not an index the writer can have published: resynchronise at it, drop what was there.
      ++garbage_;
      head_ = tail;
      len = 0;
      write_u64(64, head_);
      continue;
    }
    std::uint32_t header[2] = {0, 0};
    const std::uint64_t slot = slot_addr(head_);
    mem_.read(slot, header, sizeof header);
    if (header[0] > payload_per_slot()) {
      ++garbage_;  // a length no slot holds: skip the slot and the message it belonged to
      write_u64(64, ++head_);
      len = 0;
      continue;
    }
    const std::size_t room = len < max ? max - len : 0;
    const std::size_t take = std::min<std::size_t>(header[0], room);
    if (take) mem_.read(slot + kSlotHeader, out + len, take);
    len += header[0];
    write_u64(64, ++head_);
    if (header[1] & kLastChunk) break;
  }
  core_.execute(ctx, move_cycles(len, costs_.copy_per_byte_rx, zero_copy), CycleClass::GuestUser);
  return static_cast<long long>(len);
}

}  // namespace vtoe::guest
