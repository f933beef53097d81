#include "models/tcpip/byte_ring.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace vtoe::tcpip {

void ByteRing::ensure(std::size_t extent) {
  if (extent <= buf_.size()) return;
  std::size_t n = buf_.empty() ? 4096 : buf_.size();
  while (n < extent) n *= 2;
  std::vector<std::uint8_t> nb(n);
  // Re-lay the live region [head, head + extent_) linearly at 0.
  const std::size_t live = extent_;
  if (live) {
    const std::size_t first = std::min(live, buf_.size() - head_);
    std::memcpy(nb.data(), buf_.data() + head_, first);
    if (live > first) std::memcpy(nb.data() + first, buf_.data(), live - first);
  }
  buf_.swap(nb);
  mask_ = buf_.size() - 1;
  head_ = 0;
}

void ByteRing::write_at(std::size_t offset, const std::uint8_t* data, std::size_t n) {
  if (n == 0) return;
  const std::size_t end = offset + n;
  if (counting_only_) {
    extent_ = std::max(extent_, end);
    return;
  }
  ensure(end);
  const std::size_t pos = (head_ + offset) & mask_;
  const std::size_t first = std::min(n, buf_.size() - pos);
  std::memcpy(buf_.data() + pos, data, first);
  if (n > first) std::memcpy(buf_.data(), data + first, n - first);
  extent_ = std::max(extent_, end);
}

std::size_t ByteRing::push(const std::uint8_t* data, std::size_t n) {
  n = std::min(n, free());
  if (n == 0) return 0;
  write_at(size_, data, n);
  size_ += n;
  return n;
}

void ByteRing::commit(std::size_t n) {
  size_ += n;
  extent_ = std::max(extent_, size_);
}

std::size_t ByteRing::peek(std::size_t offset, std::uint8_t* out, std::size_t n) const {
  if (offset >= size_) return 0;
  n = std::min(n, size_ - offset);
  if (counting_only_) {
    std::memset(out, 0, n);
    return n;
  }
  const std::size_t pos = (head_ + offset) & mask_;
  const std::size_t first = std::min(n, buf_.size() - pos);
  std::memcpy(out, buf_.data() + pos, first);
  if (n > first) std::memcpy(out + first, buf_.data(), n - first);
  return n;
}

std::size_t ByteRing::peek_written(std::size_t offset, std::uint8_t* out, std::size_t n) const {
  if (offset >= extent_ || counting_only_) return 0;
  n = std::min(n, extent_ - offset);
  const std::size_t pos = (head_ + offset) & mask_;
  const std::size_t first = std::min(n, buf_.size() - pos);
  std::memcpy(out, buf_.data() + pos, first);
  if (n > first) std::memcpy(out + first, buf_.data(), n - first);
  return n;
}

std::size_t ByteRing::pop(std::uint8_t* out, std::size_t n) {
  n = peek(0, out, n);
  consume(n);
  return n;
}

void ByteRing::consume(std::size_t n) {
  n = std::min(n, size_);
  if (n == 0) return;
  head_ = (head_ + n) & mask_;
  size_ -= n;
  consumed_ += n;
  extent_ -= n;
  if (extent_ == 0) head_ = 0;
}

void ByteRing::spans(std::size_t offset, std::size_t n, const std::uint8_t*& p1, std::size_t& n1,
                     const std::uint8_t*& p2, std::size_t& n2) const {
  p1 = p2 = nullptr;
  n1 = n2 = 0;
  if (n == 0 || counting_only_) return;
  const std::size_t pos = (head_ + offset) & mask_;
  n1 = std::min(n, buf_.size() - pos);
  p1 = buf_.data() + pos;
  if (n > n1) {
    n2 = n - n1;
    p2 = buf_.data();
  }
}

std::uint64_t ByteRing::next_id() {
  static std::atomic<std::uint64_t> ids{0};
  return ++ids;
}

std::uint8_t* ByteRing::tail_space(std::size_t skip, std::size_t n) {
  const std::size_t end = size_ + skip + n;
  if (n == 0 || counting_only_ || end > cap_) return nullptr;
  ensure(end);
  const std::size_t pos = (head_ + size_ + skip) & mask_;
  if (pos + n > buf_.size()) return nullptr;
  extent_ = std::max(extent_, end);  // kept in place if the storage grows before the commit
  return buf_.data() + pos;
}

std::size_t ByteRing::commit_written(std::size_t n) {
  n = std::min(n, free());
  commit(n);
  return n;
}

void ByteRing::release() {
  std::vector<std::uint8_t>().swap(buf_);
  mask_ = head_ = size_ = extent_ = 0;
  consumed_ = 0;
  id_ = next_id();
}

}  // namespace vtoe::tcpip
