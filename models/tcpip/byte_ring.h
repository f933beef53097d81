// A byte ring buffer for TCP send/receive queues. Storage grows lazily (power of two) up to the
// logical capacity, so idle or half-open connections cost no buffer memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vtoe::tcpip {

class ByteRing {
 public:
  explicit ByteRing(std::size_t capacity = 0) : cap_(capacity) {}

  std::size_t capacity() const { return cap_; }
  std::size_t size() const { return size_; }
  std::size_t free() const { return cap_ - size_; }
  bool empty() const { return size_ == 0; }

  /// Counts bytes without keeping them (a receiver that looks at each byte as it arrives and
  /// then only discards): write_at() and push() store nothing, peek() and pop() give zeros and
  /// spans() nothing; sizes, offsets and capacity behave as before. For an empty ring.
  void set_counting_only() {
    counting_only_ = true;
    release();
  }
  bool counting_only() const { return counting_only_; }

  /// Appends up to free() bytes; returns the number appended.
  std::size_t push(const std::uint8_t* data, std::size_t n);
  /// Writes bytes at `offset` from the head without changing size() (out-of-order data).
  /// Requires offset + n <= capacity().
  void write_at(std::size_t offset, const std::uint8_t* data, std::size_t n);
  /// Makes n more bytes (previously placed with write_at) part of size().
  void commit(std::size_t n);
  /// Copies up to n bytes starting `offset` bytes after the head; returns bytes copied.
  std::size_t peek(std::size_t offset, std::uint8_t* out, std::size_t n) const;
  /// Copies and removes up to n bytes from the head.
  std::size_t pop(std::uint8_t* out, std::size_t n);
  /// Removes n bytes from the head (n <= size()).
  void consume(std::size_t n);
  /// The (up to two) contiguous pieces of [offset, offset + n) (requires offset + n <= size()).
  void spans(std::size_t offset, std::size_t n, const std::uint8_t*& p1, std::size_t& n1,
             const std::uint8_t*& p2, std::size_t& n2) const;
  /// Drops all contents and storage.
  void release();

 private:
  void ensure(std::size_t extent);

  std::vector<std::uint8_t> buf_;
  std::size_t cap_ = 0;
  std::size_t mask_ = 0;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::size_t extent_ = 0;  // bytes from head that hold data (>= size_, includes write_at data)
  bool counting_only_ = false;
};

}  // namespace vtoe::tcpip
