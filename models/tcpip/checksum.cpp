#include "models/tcpip/checksum.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define VTOE_CHECKSUM_AVX2 1
#endif

namespace vtoe::tcpip {
namespace {

#ifdef VTOE_CHECKSUM_AVX2
// Block k: loaded (and stored to dst when Copy), its 16-bit words biased and summed in pairs.
template <bool Copy>
__attribute__((target("avx2"), always_inline)) inline __m256i madd_block(
    std::uint8_t* dst, const std::uint8_t* src, std::size_t k, __m256i flip, __m256i ones) {
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32 * k));
  if (Copy) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32 * k), x);
  return _mm256_madd_epi16(_mm256_xor_si256(x, flip), ones);
}

// A sum of `blocks` 32-byte blocks (copied to `dst` when Copy) congruent modulo 0xffff to their
// 16-bit ones-complement sum (65536 = 1 mod 0xffff), exact in 64 bits; the callers fold it like
// their own. Each 16-bit word u is biased to the signed u - 32768 (its top bit flipped) so that
// one vpmaddwd adds pairs of them into 32-bit lanes; the bias, 65536 per lane and block, is
// added back at the end. Four blocks per step. Chosen at run time (the build targets baseline
// x86-64).
template <bool Copy>
__attribute__((target("avx2"))) std::uint64_t sum_blocks_avx2(std::uint8_t* dst,
                                                              const std::uint8_t* src,
                                                              std::size_t blocks) {
  const __m256i flip = _mm256_set1_epi16(static_cast<short>(0x8000));
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i total = _mm256_setzero_si256();  // four 64-bit lanes
  std::size_t i = 0;
  while (i < blocks) {
    // Each 32-bit lane gains at least -65536 and at most 65534 per block: 16,384 blocks (4,096
    // per accumulator) stay well inside 32 bits.
    const std::size_t end = blocks - i > 16384 ? i + 16384 : blocks;
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (; i + 4 <= end; i += 4) {
      a0 = _mm256_add_epi32(a0, madd_block<Copy>(dst, src, i, flip, ones));
      a1 = _mm256_add_epi32(a1, madd_block<Copy>(dst, src, i + 1, flip, ones));
      a2 = _mm256_add_epi32(a2, madd_block<Copy>(dst, src, i + 2, flip, ones));
      a3 = _mm256_add_epi32(a3, madd_block<Copy>(dst, src, i + 3, flip, ones));
    }
    for (; i < end; ++i) a0 = _mm256_add_epi32(a0, madd_block<Copy>(dst, src, i, flip, ones));
    const __m256i a = _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3));
    total = _mm256_add_epi64(total, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(a)));
    total = _mm256_add_epi64(total, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(a, 1)));
  }
  const __m128i t =
      _mm_add_epi64(_mm256_castsi256_si128(total), _mm256_extracti128_si256(total, 1));
  const std::int64_t sum = _mm_cvtsi128_si64(t) + _mm_extract_epi64(t, 1);
  return static_cast<std::uint64_t>(sum + static_cast<std::int64_t>(blocks) * 8 * 65536);
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

inline std::uint32_t fold(std::uint64_t acc) {
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return static_cast<std::uint32_t>(acc);
}

inline void add64(std::uint64_t& acc, std::uint64_t v) {
  acc += v;
  acc += (acc < v);  // end-around carry
}

}  // namespace

std::uint16_t ones_sum(const std::uint8_t* data, std::size_t len, std::uint32_t init) {
  // Words are summed in native byte order; the ones-complement sum is byte-order independent
  // (RFC 1071 §2(B)), so one swap at the end gives the big-endian sum.
  std::uint64_t acc = 0;
  const std::uint8_t* p = data;
#ifdef VTOE_CHECKSUM_AVX2
  if (len >= 64 && have_avx2()) {
    const std::size_t blocks = len / 32;
    add64(acc, sum_blocks_avx2<false>(nullptr, p, blocks));
    p += 32 * blocks;
    len -= 32 * blocks;
  }
#endif
  while (len >= 32) {
    std::uint64_t v0, v1, v2, v3;
    std::memcpy(&v0, p, 8);
    std::memcpy(&v1, p + 8, 8);
    std::memcpy(&v2, p + 16, 8);
    std::memcpy(&v3, p + 24, 8);
    add64(acc, v0);
    add64(acc, v1);
    add64(acc, v2);
    add64(acc, v3);
    p += 32;
    len -= 32;
  }
  while (len >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    add64(acc, v);
    p += 8;
    len -= 8;
  }
  if (len > 0) {
    std::uint64_t v = 0;  // tail bytes keep their position inside the 8-byte lane
    std::memcpy(&v, p, len);
    add64(acc, v);
  }
  std::uint32_t s = fold(acc);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  s = ((s & 0xff) << 8) | (s >> 8);
#endif
  return static_cast<std::uint16_t>(fold(static_cast<std::uint64_t>(s) + init));
}

std::uint16_t ones_sum_copy(std::uint8_t* dst, const std::uint8_t* src, std::size_t len,
                            std::uint32_t init) {
  std::uint64_t acc = 0;
#ifdef VTOE_CHECKSUM_AVX2
  if (len >= 64 && have_avx2()) {
    const std::size_t blocks = len / 32;
    add64(acc, sum_blocks_avx2<true>(dst, src, blocks));
    src += 32 * blocks;
    dst += 32 * blocks;
    len -= 32 * blocks;
  }
#endif
  while (len >= 32) {
    std::uint64_t v0, v1, v2, v3;
    std::memcpy(&v0, src, 8);
    std::memcpy(&v1, src + 8, 8);
    std::memcpy(&v2, src + 16, 8);
    std::memcpy(&v3, src + 24, 8);
    std::memcpy(dst, &v0, 8);
    std::memcpy(dst + 8, &v1, 8);
    std::memcpy(dst + 16, &v2, 8);
    std::memcpy(dst + 24, &v3, 8);
    add64(acc, v0);
    add64(acc, v1);
    add64(acc, v2);
    add64(acc, v3);
    src += 32;
    dst += 32;
    len -= 32;
  }
  while (len >= 8) {
    std::uint64_t v;
    std::memcpy(&v, src, 8);
    std::memcpy(dst, &v, 8);
    add64(acc, v);
    src += 8;
    dst += 8;
    len -= 8;
  }
  if (len > 0) {
    std::uint64_t v = 0;
    std::memcpy(&v, src, len);
    std::memcpy(dst, src, len);
    add64(acc, v);
  }
  std::uint32_t s = fold(acc);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  s = ((s & 0xff) << 8) | (s >> 8);
#endif
  return static_cast<std::uint16_t>(fold(static_cast<std::uint64_t>(s) + init));
}

std::uint16_t internet_checksum(const std::uint8_t* data, std::size_t len, std::uint32_t init) {
  return static_cast<std::uint16_t>(~ones_sum(data, len, init) & 0xffff);
}

std::uint32_t pseudo_header_sum(Ipv4 src, Ipv4 dst, std::uint8_t proto, std::uint16_t len) {
  std::uint64_t s = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
  return fold(s);
}

std::uint16_t ones_sum_reference(const std::uint8_t* data, std::size_t len, std::uint32_t init) {
  std::uint64_t s = init;
  std::size_t i = 0;
  for (; i + 1 < len; i += 2) s += (static_cast<std::uint32_t>(data[i]) << 8) | data[i + 1];
  if (i < len) s += static_cast<std::uint32_t>(data[i]) << 8;
  return static_cast<std::uint16_t>(fold(s));
}

}  // namespace vtoe::tcpip
