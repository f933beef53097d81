// The byte pattern every simulated application sends, so that receivers can check each byte end
// to end: byte i of a stream is (7 i + i / 256) mod 256. It repeats every 64 KiB, so it is served
// from precomputed bytes with memcpy / memcmp instead of a loop per byte (two periods back to back,
// so that any run of up to a period is there in one piece: view()).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace vtoe::core {

class StreamPattern {
 public:
  static constexpr std::size_t kPeriod = 65536;

  static std::uint8_t at(std::uint64_t i) {
    return static_cast<std::uint8_t>((i * 7 + (i >> 8)) & 0xff);
  }

  // Bytes [offset, offset + n) of the stream, where they are kept (n <= kPeriod): a sender hands
  // them on as they are instead of copying them into a buffer first (null when n > kPeriod).
  static const std::uint8_t* view(std::uint64_t offset, std::size_t n) {
    return n <= kPeriod ? table() + offset % kPeriod : nullptr;
  }

  // Writes bytes [offset, offset + n) of the stream to dst.
  static void fill(std::uint64_t offset, std::uint8_t* dst, std::size_t n) {
    const std::uint8_t* t = table();
    while (n > 0) {
      const std::size_t pos = offset % kPeriod;
      const std::size_t piece = n < kPeriod - pos ? n : kPeriod - pos;
      std::memcpy(dst, t + pos, piece);
      dst += piece;
      offset += piece;
      n -= piece;
    }
  }

  // Number of bytes in src that differ from stream bytes [offset, offset + n).
  static std::uint64_t mismatches(std::uint64_t offset, const std::uint8_t* src, std::size_t n) {
    const std::uint8_t* t = table();
    std::uint64_t bad = 0;
    while (n > 0) {
      const std::size_t pos = offset % kPeriod;
      const std::size_t piece = n < kPeriod - pos ? n : kPeriod - pos;
      if (std::memcmp(src, t + pos, piece) != 0)
        for (std::size_t i = 0; i < piece; ++i) bad += src[i] != t[pos + i];
      src += piece;
      offset += piece;
      n -= piece;
    }
    return bad;
  }

 private:
  static const std::uint8_t* table() {
    static const auto periods = [] {
      std::array<std::uint8_t, 2 * kPeriod> p{};
      for (std::size_t i = 0; i < p.size(); ++i) p[i] = at(i % kPeriod);
      return p;
    }();
    return periods.data();
  }
};

}  // namespace vtoe::core
