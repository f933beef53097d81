// netvp::IngressFixup: what a Linux interface with its default offloads hands the raw socket is
// turned into wire frames: partial checksums finished, TSO/GRO super-segments cut at the MSS.
#include "netvp/ingress_fixup.h"

#include <gtest/gtest.h>

#include <vector>

#include "models/tcpip/checksum.h"
#include "models/tcpip/headers.h"
#include "tests/support/bench.h"

using namespace vtoe;
using tcpip::Frame;
using tcpip::FrameView;

namespace {

const tcpip::MacAddr kA = tcpip::MacAddr::local(1), kB = tcpip::MacAddr::local(2);
constexpr tcpip::Ipv4 kIpA = 0x0A000002, kIpB = 0x0A000001;

std::uint8_t byte_at(std::size_t i) { return static_cast<std::uint8_t>(i * 7 + 3); }

Frame tcp_frame(std::size_t payload, std::uint8_t flags, std::uint32_t seq = 1000) {
  std::vector<std::uint8_t> data(payload);
  for (std::size_t i = 0; i < payload; ++i) data[i] = byte_at(i);
  tcpip::TcpHeader h;
  h.src_port = 40000;
  h.dst_port = 5001;
  h.seq = seq;
  h.ack = 77;
  h.flags = flags;
  h.window = 512;
  tcpip::TcpOptions o;
  return tcpip::build_tcp_frame(kA, kB, kIpA, kIpB, h, o, data.data(), data.size(), 0x1234);
}

// What the kernel hands over for a locally sent frame with CHECKSUM_PARTIAL: the TCP checksum
// field holds only the folded pseudo-header sum.
void make_partial(Frame& f) {
  const std::size_t l4 = 14 + 20, len = f.size() - l4;
  const std::uint16_t pseudo = static_cast<std::uint16_t>(
      tcpip::pseudo_header_sum(kIpA, kIpB, 6, static_cast<std::uint16_t>(len)) & 0xffff);
  tcpip::store_be16(f.data() + l4 + 16, pseudo);
}

FrameView decode(const std::vector<std::uint8_t>& f) {
  FrameView v;
  EXPECT_TRUE(tcpip::decode_frame(f.data(), f.size(), v));
  return v;
}

}  // namespace

TEST(IngressFixup, APartialChecksumIsFinishedAndAFinishedOneLeftAlone) {
  netvp::IngressFixup fix(1500);
  Frame f = tcp_frame(100, 0x18);
  const Frame good = f;
  make_partial(f);
  EXPECT_FALSE(decode(f).checksums_ok);
  std::vector<std::vector<std::uint8_t>> out;
  fix.fix(f.data(), f.size(), /*csum_not_ready=*/true, out);
  fix.fix(good.data(), good.size(), /*csum_not_ready=*/false, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(decode(out[0]).checksums_ok);
  EXPECT_EQ(out[0], std::vector<std::uint8_t>(good.begin(), good.end()));
  EXPECT_EQ(out[1], std::vector<std::uint8_t>(good.begin(), good.end()));
  EXPECT_EQ(fix.stats().checksums_completed, 1u);
}

TEST(IngressFixup, ASuperSegmentIsCutAtTheMssWithSequenceFlagsAndChecksumsRight) {
  netvp::IngressFixup fix(1500);
  Frame f = tcp_frame(7300, 0x19);  // ACK PSH FIN, 7300 bytes: as TSO/GRO hands it over
  make_partial(f);
  std::vector<std::vector<std::uint8_t>> out;
  fix.fix(f.data(), f.size(), true, out);
  ASSERT_EQ(out.size(), 5u);  // 4 x 1460 + 1460
  std::size_t offset = 0;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const FrameView v = decode(out[k]);
    EXPECT_TRUE(v.checksums_ok) << k;
    EXPECT_LE(out[k].size(), 1514u);
    EXPECT_EQ(v.tcp.seq, 1000u + offset) << k;
    EXPECT_EQ(v.ip.id, 0x1234 + k) << k;
    const bool last = k + 1 == out.size();
    EXPECT_EQ(v.tcp.flags, last ? 0x19 : 0x10) << k;  // PSH and FIN on the last only
    for (std::size_t i = 0; i < v.payload_len; ++i) ASSERT_EQ(v.payload[i], byte_at(offset + i));
    offset += v.payload_len;
  }
  EXPECT_EQ(offset, 7300u);
  EXPECT_EQ(fix.stats().segmented, 1u);
  EXPECT_EQ(fix.stats().segments, 5u);
}

TEST(IngressFixup, OversizedFramesThatCannotBeCutAreDroppedAndCounted) {
  netvp::IngressFixup fix(1500);
  std::vector<std::uint8_t> payload(3000, 0x5a);
  Frame udp = tcpip::build_udp_frame(kA, kB, kIpA, kIpB, 5000, 7, payload.data(), payload.size());
  std::vector<std::uint8_t> junk(4000, 0xee);
  std::vector<std::vector<std::uint8_t>> out;
  fix.fix(udp.data(), udp.size(), false, out);
  fix.fix(junk.data(), junk.size(), false, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(fix.stats().oversized_dropped, 2u);
  // Short junk passes untouched: the TOE's own checks deal with it.
  fix.fix(junk.data(), 60, true, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], std::vector<std::uint8_t>(junk.begin(), junk.begin() + 60));
}

VTOE_TEST_MAIN
