#include "models/tcpip/checksum.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define VTOE_CHECKSUM_AVX2 1
#endif

namespace vtoe::tcpip {
namespace {

#ifdef VTOE_CHECKSUM_AVX2
// The sum of the 32-bit little-endian words of `blocks` 32-byte blocks (copied to `dst` when
// Copy), exact in 64 bits. Congruent modulo 0xffff to the 16-bit ones-complement sum, so the
// callers fold it like their own. A third of the instructions per byte of the 64-bit loop below;
// chosen at run time (the build targets baseline x86-64).
template <bool Copy>
__attribute__((target("avx2"))) std::uint64_t sum_blocks_avx2(std::uint8_t* dst,
                                                              const std::uint8_t* src,
                                                              std::size_t blocks) {
  const __m256i zero = _mm256_setzero_si256();
  __m256i lo = zero;
  __m256i hi = zero;
  for (std::size_t i = 0; i < blocks; ++i) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 32 * i));
    if (Copy) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 32 * i), x);
    lo = _mm256_add_epi64(lo, _mm256_unpacklo_epi32(x, zero));
    hi = _mm256_add_epi64(hi, _mm256_unpackhi_epi32(x, zero));
  }
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(lo, hi));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
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
