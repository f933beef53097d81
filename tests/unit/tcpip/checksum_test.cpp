// Internet checksum (RFC 1071) vectors and differential tests against a reference.
#include "models/tcpip/checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "models/tcpip/headers.h"

namespace vtoe::tcpip {
namespace {

TEST(Checksum, Rfc1071Example) {
  // RFC 1071 §3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2.
  const std::uint8_t d[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(ones_sum(d, sizeof d), 0xddf2);
  EXPECT_EQ(internet_checksum(d, sizeof d), 0x220d);
}

TEST(Checksum, Ipv4HeaderVector) {
  // A well-known header whose checksum field is b861.
  std::uint8_t h[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                      0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(internet_checksum(h, sizeof h), 0);  // verifies
  h[10] = h[11] = 0;
  EXPECT_EQ(internet_checksum(h, sizeof h), 0xb861);
}

TEST(Checksum, OddLengthsPadWithZero) {
  const std::uint8_t one[] = {0xab};
  EXPECT_EQ(ones_sum(one, 1), 0xab00);
  const std::uint8_t three[] = {0x12, 0x34, 0x56};
  EXPECT_EQ(ones_sum(three, 3), 0x1234 + 0x5600);
  // End-around carry: ffff + 0001 = 0001 (ones complement)
  const std::uint8_t carry[] = {0xff, 0xff, 0x00, 0x01};
  EXPECT_EQ(ones_sum(carry, 4), 0x0001);
  EXPECT_EQ(ones_sum(nullptr, 0), 0);
  EXPECT_EQ(internet_checksum(nullptr, 0), 0xffff);
}

TEST(Checksum, MatchesReferenceForAllLengthsAndAlignments) {
  std::mt19937 rng(42);
  std::vector<std::uint8_t> buf(2100);
  for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
  for (std::size_t off = 0; off < 8; ++off) {
    for (std::size_t len = 0; len <= 1600; len += (len < 80 ? 1 : 37)) {
      ASSERT_EQ(ones_sum(buf.data() + off, len), ones_sum_reference(buf.data() + off, len))
          << "off=" << off << " len=" << len;
      ASSERT_EQ(ones_sum(buf.data() + off, len, 0x1234),
                ones_sum_reference(buf.data() + off, len, 0x1234));
    }
  }
  // All-ones data stresses the carries of the 64-bit accumulator.
  std::vector<std::uint8_t> ff(4096, 0xff);
  for (std::size_t len : {7u, 8u, 9u, 31u, 32u, 33u, 4095u, 4096u})
    EXPECT_EQ(ones_sum(ff.data(), len), ones_sum_reference(ff.data(), len)) << len;
  // Long buffers: the vector loop's 32-bit lanes are emptied every 16,384 blocks of 32 bytes.
  std::vector<std::uint8_t> big(16384 * 32 * 2 + 100, 0xff);
  std::vector<std::uint8_t> copy(big.size());
  for (std::size_t len : {16384u * 32, 16384u * 32 + 32, 16384u * 64 + 100}) {
    EXPECT_EQ(ones_sum(big.data(), len), ones_sum_reference(big.data(), len)) << len;
    EXPECT_EQ(ones_sum_copy(copy.data(), big.data(), len), ones_sum_reference(big.data(), len));
  }
  for (auto& b : big) b = static_cast<std::uint8_t>(rng());
  EXPECT_EQ(ones_sum(big.data() + 1, big.size() - 1),
            ones_sum_reference(big.data() + 1, big.size() - 1));
}

TEST(Checksum, CopyAndSumMatchesSumOfTheCopy) {
  std::mt19937 rng(11);
  std::vector<std::uint8_t> src(1700);
  for (auto& b : src) b = static_cast<std::uint8_t>(rng());
  for (std::size_t off = 0; off < 8; ++off) {
    for (std::size_t len = 0; len <= 1600; len += (len < 80 ? 1 : 41)) {
      std::vector<std::uint8_t> dst(len + 16, 0xee);
      const std::uint16_t s = ones_sum_copy(dst.data() + 3, src.data() + off, len, 0x4321);
      ASSERT_TRUE(std::equal(src.begin() + off, src.begin() + off + len, dst.begin() + 3))
          << "off=" << off << " len=" << len;
      ASSERT_EQ(dst[2], 0xee);
      ASSERT_EQ(dst[3 + len], 0xee) << "wrote past the end, len=" << len;
      ASSERT_EQ(s, ones_sum_reference(src.data() + off, len, 0x4321)) << "len=" << len;
    }
  }
}

TEST(Checksum, ChainingEvenChunks) {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> buf(1001);
  for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
  const std::uint16_t whole = ones_sum(buf.data(), buf.size());
  const std::uint16_t first = ones_sum(buf.data(), 500);
  EXPECT_EQ(ones_sum(buf.data() + 500, 501, first), whole);
}

TEST(Checksum, PseudoHeaderAndTransport) {
  // UDP datagram whose checksum, computed by hand, must verify; corrupting one byte must not.
  const Ipv4 src = 0xc0a80001, dst = 0xc0a800c7;
  std::uint8_t udp[] = {0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0c, 0x00, 0x00, 'a', 'b', 'c', 'd'};
  const std::uint16_t c = transport_checksum(src, dst, kIpProtoUdp, udp, sizeof udp);
  // Reference: sum of pseudo header words and segment words, computed independently.
  std::uint32_t s = 0xc0a8 + 0x0001 + 0xc0a8 + 0x00c7 + 17 + 12;
  s += 0x04d2 + 0x162e + 0x000c + 0x0000 + 0x6162 + 0x6364;
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  EXPECT_EQ(c, static_cast<std::uint16_t>(~s));
  store_be16(udp + 6, c);
  EXPECT_TRUE(verify_transport_checksum(src, dst, kIpProtoUdp, udp, sizeof udp));
  udp[9] ^= 1;
  EXPECT_FALSE(verify_transport_checksum(src, dst, kIpProtoUdp, udp, sizeof udp));
}

}  // namespace
}  // namespace vtoe::tcpip

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
