// net::PcapWriter: a readable nanosecond pcap, byte-identical output, errors, and a tshark decode.
#include "models/net/pcap_writer.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/unit/net/net_bench.h"

using vtoe::net::Frame;
using vtoe::net::PcapWriter;

namespace {

std::string temp_path(const std::string& stem) {
  return ::testing::TempDir() + stem + "_" + std::to_string(::getpid()) + ".pcap";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void put16(Frame& f, std::size_t at, std::uint16_t v) {
  f[at] = static_cast<std::uint8_t>(v >> 8);
  f[at + 1] = static_cast<std::uint8_t>(v);
}

const std::array<std::uint8_t, 6> kMacA{0x02, 0x00, 0x00, 0x00, 0x00, 0x0a};
const std::array<std::uint8_t, 6> kMacB{0x02, 0x00, 0x00, 0x00, 0x00, 0x0b};

// ARP request: who has 10.0.0.2? tell 10.0.0.1 (42 bytes).
Frame arp_request() {
  Frame f(42, 0);
  for (int i = 0; i < 6; ++i) {
    f[i] = 0xff;
    f[6 + i] = kMacA[i];
    f[22 + i] = kMacA[i];  // sender hardware address
  }
  put16(f, 12, 0x0806);
  put16(f, 14, 1);       // Ethernet
  put16(f, 16, 0x0800);  // IPv4
  f[18] = 6;
  f[19] = 4;
  put16(f, 20, 1);  // request
  const std::uint8_t spa[4] = {10, 0, 0, 1};
  const std::uint8_t tpa[4] = {10, 0, 0, 2};
  for (int i = 0; i < 4; ++i) {
    f[28 + i] = spa[i];
    f[38 + i] = tpa[i];
  }
  return f;
}

// IPv4/UDP datagram 10.0.0.1:5000 -> 10.0.0.2:7 with `payload` bytes, correct IP checksum,
// UDP checksum 0 (none).
Frame udp_frame(std::size_t payload) {
  Frame f(14 + 20 + 8 + payload, 0);
  for (int i = 0; i < 6; ++i) {
    f[i] = kMacB[i];
    f[6 + i] = kMacA[i];
  }
  put16(f, 12, 0x0800);
  f[14] = 0x45;
  put16(f, 16, static_cast<std::uint16_t>(20 + 8 + payload));
  put16(f, 18, 1);       // id
  put16(f, 20, 0x4000);  // DF
  f[22] = 64;
  f[23] = 17;
  const std::uint8_t src[4] = {10, 0, 0, 1};
  const std::uint8_t dst[4] = {10, 0, 0, 2};
  for (int i = 0; i < 4; ++i) {
    f[26 + i] = src[i];
    f[30 + i] = dst[i];
  }
  std::uint32_t sum = 0;
  for (std::size_t i = 14; i < 34; i += 2) sum += static_cast<std::uint32_t>(f[i] << 8 | f[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  put16(f, 24, static_cast<std::uint16_t>(~sum));
  put16(f, 34, 5000);
  put16(f, 36, 7);
  put16(f, 38, static_cast<std::uint16_t>(8 + payload));
  for (std::size_t i = 0; i < payload; ++i) f[42 + i] = static_cast<std::uint8_t>('a' + i % 26);
  return f;
}

void write_sample(const std::string& path) {
  PcapWriter w(path);
  const Frame arp = arp_request();
  const Frame udp = udp_frame(100);
  w.write(arp.data(), arp.size(), 1'000'000);          // 1 us
  w.write(udp.data(), udp.size(), 2'500'000'000'001);  // 2.5 s + 1 ps -> 2.5 s
  EXPECT_EQ(w.records(), 2u);
}

}  // namespace

TEST(PcapWriter, ReadableWithNanosecondTimestamps) {
  const std::string path = temp_path("writer");
  write_sample(path);
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* in =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  ASSERT_NE(in, nullptr) << err;
  EXPECT_EQ(pcap_datalink(in), DLT_EN10MB);
  EXPECT_EQ(pcap_snapshot(in), PcapWriter::kSnapLen);
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  ASSERT_EQ(pcap_next_ex(in, &hdr, &data), 1);
  EXPECT_EQ(hdr->ts.tv_sec, 0);
  EXPECT_EQ(hdr->ts.tv_usec, 1000);
  EXPECT_EQ(Frame(data, data + hdr->caplen), arp_request());
  ASSERT_EQ(pcap_next_ex(in, &hdr, &data), 1);
  EXPECT_EQ(hdr->ts.tv_sec, 2);
  EXPECT_EQ(hdr->ts.tv_usec, 500'000'000);
  EXPECT_EQ(Frame(data, data + hdr->caplen), udp_frame(100));
  EXPECT_EQ(pcap_next_ex(in, &hdr, &data), PCAP_ERROR_BREAK);
  pcap_close(in);
  std::remove(path.c_str());
}

TEST(PcapWriter, IdenticalInputGivesIdenticalBytes) {
  const std::string a = temp_path("same_a");
  const std::string b = temp_path("same_b");
  write_sample(a);
  write_sample(b);
  const std::string bytes = slurp(a);
  EXPECT_EQ(bytes.size(), 24u + 16 + 42 + 16 + 142);
  EXPECT_EQ(bytes, slurp(b));
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST(PcapWriter, FramesLongerThanSnapLenAreTruncated) {
  const std::string path = temp_path("snap");
  {
    PcapWriter w(path);
    const Frame big(70'000, 0x42);
    w.write(big.data(), big.size(), 0);
  }
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* in =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  ASSERT_NE(in, nullptr) << err;
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  ASSERT_EQ(pcap_next_ex(in, &hdr, &data), 1);
  EXPECT_EQ(hdr->len, 70'000u);
  EXPECT_EQ(hdr->caplen, static_cast<bpf_u_int32>(PcapWriter::kSnapLen));
  pcap_close(in);
  std::remove(path.c_str());
}

TEST(PcapWriter, TheSnapLengthAndTheSizeBoundHoldAndWhatIsLeftOutIsCounted) {
  const std::string path = temp_path("bound");
  // Room for the file header and two records of 100 bytes kept of each 1000-byte frame.
  const std::uint64_t bound = 24 + 2 * (16 + 100);
  vtoe::net::PcapWriter::set_limits({100, bound});
  {
    PcapWriter w(path);
    vtoe::net::PcapWriter::set_limits({});  // a writer keeps the limits it was opened with
    ASSERT_EQ(PcapWriter::open_writers().size(), 1u);
    EXPECT_EQ(PcapWriter::open_writers()[0], &w);
    const Frame frame(1000, 0x42);
    for (int i = 0; i < 5; ++i) w.write(frame.data(), frame.size(), (i + 1) * 1000ull);
    EXPECT_EQ(w.records(), 2u);
    EXPECT_EQ(w.bytes(), bound);
    EXPECT_EQ(w.left_out(), 3u);
    EXPECT_EQ(w.full_at_ns(), 3u);  // the third frame, at 3000 ps
    // A smaller frame that would still fit is left out too: no hole in the capture.
    const Frame small(10, 0x42);
    w.write(small.data(), small.size(), 6000);
    EXPECT_EQ(w.left_out(), 4u);
  }
  EXPECT_TRUE(PcapWriter::open_writers().empty());
  EXPECT_EQ(slurp(path).size(), bound);
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* in =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  ASSERT_NE(in, nullptr) << err;
  EXPECT_EQ(pcap_snapshot(in), 100);
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  ASSERT_EQ(pcap_next_ex(in, &hdr, &data), 1);
  EXPECT_EQ(hdr->len, 1000u);
  EXPECT_EQ(hdr->caplen, 100u);
  ASSERT_EQ(pcap_next_ex(in, &hdr, &data), 1);
  EXPECT_EQ(pcap_next_ex(in, &hdr, &data), PCAP_ERROR_BREAK);  // two records, no more
  pcap_close(in);
  std::remove(path.c_str());
}

TEST(PcapWriter, OpenErrorNamesThePath) {
  const std::string path = "/nonexistent-dir-vtoe/x.pcap";
  try {
    PcapWriter w(path);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(PcapWriter, TsharkDecodesWithoutMalformedPackets) {
#ifndef VTOE_TSHARK
  GTEST_SKIP() << "tshark not installed";
#else
  const std::string path = temp_path("tshark");
  write_sample(path);
  const std::string cmd =
      std::string(VTOE_TSHARK) + " -o ip.check_checksum:TRUE -V -r " + path + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out.find("Malformed"), std::string::npos) << out;
  EXPECT_EQ(out.find("Expert Info (Error"), std::string::npos) << out;  // e.g. bad checksum
  EXPECT_NE(out.find("Address Resolution Protocol (request)"), std::string::npos) << out;
  EXPECT_NE(out.find("User Datagram Protocol, Src Port: 5000, Dst Port: 7"), std::string::npos)
      << out;
  EXPECT_NE(out.find("Frame 2: 142 bytes on wire"), std::string::npos) << out;
  std::remove(path.c_str());
#endif
}

VTOE_TEST_MAIN
