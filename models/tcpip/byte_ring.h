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

  // In-place appends, for a writer that fills the bytes before they join the ring (a DMA engine
  // reading straight into a send buffer; a read may complete after others that follow it).
  /// The storage for bytes [size() + skip, size() + skip + n), written now and taken in later
  /// by commit_written(); null when that range passes capacity() or wraps around the storage.
  /// The bytes keep their place in the stream (their position is position() + size() + skip)
  /// while bytes are consumed or the storage grows.
  std::uint8_t* tail_space(std::size_t skip, std::size_t n);
  /// Appends up to free() of the n bytes written at the ring's end (tail_space with skip 0,
  /// or an earlier one whose preceding bytes have been taken in); returns how many.
  std::size_t commit_written(std::size_t n);
  /// Copies up to n bytes at `offset` from the head, committed or only written (write_at,
  /// tail_space); returns how many.
  std::size_t peek_written(std::size_t offset, std::uint8_t* out, std::size_t n) const;
  /// The stream position of the head: bytes consumed since the ring was made or released.
  std::uint64_t position() const { return consumed_; }
  /// Unique to this ring (and changed by release()): positions are comparable only within one.
  std::uint64_t id() const { return id_; }

 private:
  void ensure(std::size_t extent);

  std::vector<std::uint8_t> buf_;
  std::size_t cap_ = 0;
  std::size_t mask_ = 0;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::size_t extent_ = 0;  // bytes from head that hold data (>= size_, includes write_at data)
  bool counting_only_ = false;
  std::uint64_t consumed_ = 0;
  std::uint64_t id_ = next_id();
  static std::uint64_t next_id();
};

}  // namespace vtoe::tcpip
