// net::EthernetLink: delay, ordering, deterministic Bernoulli loss, pcap tap.
#include "models/net/ethernet_link.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/unit/net/net_bench.h"

using namespace sc_core;
using vtoe::net::EthernetLink;
using vtoe::net::EthernetLinkParams;
using vtoe::net::Frame;
using vtoe::test::Collector;
using vtoe::test::Driver;
using vtoe::test::make_frame;
using vtoe::test::tag_of;

namespace {

const vtoe::test::Mac kDst{0x02, 0, 0, 0, 0, 0x02};

std::string temp_path(const std::string& stem) {
  return ::testing::TempDir() + stem + "_" + std::to_string(::getpid()) + ".pcap";
}

}  // namespace

TEST(EthernetLink, DeliversAfterTheDelayInOrderBothWays) {
  EthernetLinkParams p;
  p.delay_ps = 500'000;
  EthernetLink link("link", p);
  Collector at_a;
  Collector at_b;
  link.a_out.bind(at_a);
  link.b_out.bind(at_b);
  Driver drv("drv", [&] {
    for (std::uint32_t i = 0; i < 3; ++i) link.a_in->receive_frame(make_frame(kDst, 100, i));
    wait(sc_time::from_value(100'000));
    link.a_in->receive_frame(make_frame(kDst, 100, 3));
    link.b_in->receive_frame(make_frame(kDst, 200, 10));
    wait(sc_time::from_value(1'000));
    link.a_in->receive_frame(make_frame(kDst, 100, 4));
  });
  sc_start();
  ASSERT_EQ(at_b.arrivals.size(), 5u);
  const vtoe::core::TimePs want[5] = {500'000, 500'000, 500'000, 600'000, 601'000};
  for (std::uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(tag_of(at_b.arrivals[i].frame), i);
    EXPECT_EQ(at_b.arrivals[i].time, want[i]) << i;
  }
  ASSERT_EQ(at_a.arrivals.size(), 1u);
  EXPECT_EQ(tag_of(at_a.arrivals[0].frame), 10u);
  EXPECT_EQ(at_a.arrivals[0].time, 600'000u);
  EXPECT_EQ(link.frames(), 6u);
  EXPECT_EQ(link.frames_a_to_b(), 5u);
  EXPECT_EQ(link.frames_b_to_a(), 1u);
  EXPECT_EQ(link.bytes(), 5u * 100 + 200);
  EXPECT_EQ(link.drops(), 0u);
}

TEST(EthernetLink, ManyFramesInFlightKeepTheirOrder) {
  // More frames in flight than the initial ring holds, so it grows while wrapped.
  EthernetLinkParams p;
  p.delay_ps = 1'000'000;
  EthernetLink link("link", p);
  Collector at_a;
  Collector at_b;
  link.a_out.bind(at_a);
  link.b_out.bind(at_b);
  Driver drv("drv", [&] {
    for (std::uint32_t i = 0; i < 1000; ++i) {
      link.a_in->receive_frame(make_frame(kDst, 64, i));
      wait(sc_time::from_value(i % 3 == 0 ? 0 : 700));
    }
  });
  sc_start();
  ASSERT_EQ(at_b.arrivals.size(), 1000u);
  for (std::uint32_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(tag_of(at_b.arrivals[i].frame), i);
    if (i > 0) {
      ASSERT_GE(at_b.arrivals[i].time, at_b.arrivals[i - 1].time);
    }
  }
}

TEST(EthernetLink, JitterSpreadsEachFramesDelayWithinItsBoundAndKeepsTheOrder) {
  EthernetLinkParams p;
  p.delay_ps = 1'000'000;
  p.jitter_ps = 400'000;
  p.seed = 7;
  EthernetLink link("link", p);
  Collector at_a;
  Collector at_b;
  link.a_out.bind(at_a);
  link.b_out.bind(at_b);
  std::vector<vtoe::core::TimePs> entered;
  Driver drv("drv", [&] {
    for (std::uint32_t i = 0; i < 400; ++i) {
      entered.push_back(vtoe::core::now_ps());
      link.a_in->receive_frame(make_frame(kDst, 64, i));
      // Half the frames closer together than the jitter, half farther apart.
      wait(sc_time::from_value(i < 200 ? 50'000 : 1'000'000));
    }
  });
  sc_start();
  ASSERT_EQ(at_b.arrivals.size(), 400u);
  vtoe::core::TimePs lo = UINT64_MAX, hi = 0;
  for (std::uint32_t i = 0; i < 400; ++i) {
    ASSERT_EQ(tag_of(at_b.arrivals[i].frame), i);  // no overtaking
    const vtoe::core::TimePs d = at_b.arrivals[i].time - entered[i];
    ASSERT_GE(d, p.delay_ps) << i;
    if (i > 0) ASSERT_GE(at_b.arrivals[i].time, at_b.arrivals[i - 1].time);
    // Later than delay + jitter only when held behind the frame before it.
    if (d >= p.delay_ps + p.jitter_ps) ASSERT_EQ(at_b.arrivals[i].time, at_b.arrivals[i - 1].time);
    if (i >= 201) {  // spaced out: the draw itself
      ASSERT_LT(d, p.delay_ps + p.jitter_ps) << i;
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
  }
  // 199 uniform draws over 400 ns cover most of the range.
  EXPECT_LT(lo, p.delay_ps + 40'000);
  EXPECT_GT(hi, p.delay_ps + 360'000);
  EXPECT_EQ(link.drops(), 0u);
}

TEST(EthernetLink, CountsFramesThatEnterCarryingCePerDirection) {
  EthernetLink link("link", {});
  Collector at_a;
  Collector at_b;
  link.a_out.bind(at_a);
  link.b_out.bind(at_b);
  Driver drv("drv", [&] {
    // IPv4 frames: the tag's second byte is the TOS byte (ECN in its low two bits).
    link.a_in->receive_frame(make_frame(kDst, 64, 0x0300, 0x0800));  // CE
    link.a_in->receive_frame(make_frame(kDst, 64, 0x0100, 0x0800));  // ECT(1)
    link.a_in->receive_frame(make_frame(kDst, 64, 0x0300, 0x88b5));  // not IPv4
    link.b_in->receive_frame(make_frame(kDst, 64, 0x0300, 0x0800));  // CE
    link.b_in->receive_frame(make_frame(kDst, 20, 0x0300, 0x0800));  // too short for IPv4
  });
  sc_start();
  EXPECT_EQ(link.ce_counter(0).value(), 1u);
  EXPECT_EQ(link.ce_counter(1).value(), 1u);
  EXPECT_EQ(link.ce_marks(), 2u);
  EXPECT_EQ(link.stats().counter("a_to_b_ce_marks").value(), 1u);
  EXPECT_EQ(link.frames_counter(0).value(), 3u);
  EXPECT_EQ(link.bytes_counter(1).value(), 84u);
}

namespace {

// Runs `frames` frames through a fresh link named `name` in a child process (SystemC elaborates
// once per process) and returns the tags delivered A->B, one byte per frame: 1 delivered, 0 lost.
std::string run_lossy_child(const char* name, std::uint64_t seed, double loss, int frames,
                            bool reverse_traffic) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string result(static_cast<std::size_t>(frames), '0');
    {
      EthernetLinkParams p;
      p.delay_ps = 10'000;
      p.loss = loss;
      p.seed = seed;
      EthernetLink link(name, p);
      struct Mark : vtoe::net::FrameSink {
        std::string* out;
        void receive_frame(Frame&& f) override { (*out)[tag_of(f)] = '1'; }
      } mark;
      mark.out = &result;
      link.b_out.bind(mark);
      Collector at_a;
      link.a_out.bind(at_a);
      Driver drv("drv", [&] {
        for (int i = 0; i < frames; ++i) {
          link.a_in->receive_frame(make_frame(kDst, 60, static_cast<std::uint32_t>(i)));
          if (reverse_traffic) link.b_in->receive_frame(make_frame(kDst, 60, 0));
          wait(sc_time::from_value(1'000));
        }
      });
      sc_start();
      if (link.drops_a_to_b() !=
          static_cast<std::uint64_t>(std::count(result.begin(), result.end(), '0'))) {
        result = "drop counter mismatch";
      }
    }
    const char* p = result.data();
    std::size_t left = result.size();
    while (left > 0) {
      const ssize_t n = write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed";
  return out;
}

}  // namespace

TEST(EthernetLink, LossRateAndDeterminism) {
  constexpr int kFrames = 100'000;
  constexpr double kLoss = 0.1;
  const std::string first = run_lossy_child("link", 42, kLoss, kFrames, false);
  ASSERT_EQ(first.size(), static_cast<std::size_t>(kFrames)) << first;
  const auto dropped = std::count(first.begin(), first.end(), '0');
  // Binomial: sd = sqrt(n p (1-p)) ~ 95 frames; allow 5 sd.
  EXPECT_NEAR(static_cast<double>(dropped) / kFrames, kLoss, 0.005);

  // Same seed and name: the same frames are lost, even with traffic in the other direction.
  EXPECT_EQ(run_lossy_child("link", 42, kLoss, kFrames, false), first);
  EXPECT_EQ(run_lossy_child("link", 42, kLoss, kFrames, true), first);
  // Another seed or another link name: another pattern.
  EXPECT_NE(run_lossy_child("link", 43, kLoss, kFrames, false), first);
  EXPECT_NE(run_lossy_child("link2", 42, kLoss, kFrames, false), first);
  // The extremes.
  EXPECT_EQ(run_lossy_child("link", 42, 0.0, 1000, false), std::string(1000, '1'));
  EXPECT_EQ(run_lossy_child("link", 42, 1.0, 1000, false), std::string(1000, '0'));
}

TEST(EthernetLink, UnpluggedEndFailsElaboration) {
  EthernetLink link("link");
  Collector at_b;
  link.b_out.bind(at_b);  // nothing receives at A
  try {
    sc_start();
    FAIL() << "elaboration passed with link.a_out unbound";
  } catch (const sc_report& r) {
    const std::string what = r.what();
    EXPECT_NE(what.find("port not bound"), std::string::npos) << what;
    EXPECT_NE(what.find("link.a_out"), std::string::npos) << what;
  }
}

TEST(EthernetLink, RejectsLossOutsideZeroToOne) {
  EthernetLinkParams p;
  p.loss = 1.5;
  EXPECT_THROW(EthernetLink("link", p), std::invalid_argument);
}

TEST(EthernetLink, Uniform01UsesTheTop53Bits) {
  std::mt19937_64 a(5);
  std::mt19937_64 b(5);
  for (int i = 0; i < 1000; ++i) {
    const double u = EthernetLink::uniform01(a);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
    EXPECT_EQ(u, static_cast<double>(b() >> 11) / 9007199254740992.0);
  }
}

TEST(EthernetLink, PcapRecordsEveryFrameEnteringTheLink) {
  const std::string path = temp_path("link_tap");
  std::vector<Frame> sent;
  std::vector<vtoe::core::TimePs> times;
  {  // the link closes its capture file when it is destroyed
    EthernetLinkParams p;
    p.delay_ps = 1'000'000;
    p.loss = 1.0;  // every frame lost after the tap: the capture still has them all
    EthernetLink link("link", p);
    Collector at_a;
    Collector at_b;
    link.a_out.bind(at_a);
    link.b_out.bind(at_b);
    link.enable_pcap(path);
    Driver drv("drv", [&] {
      const vtoe::core::TimePs at[3] = {123'456, 1'500'000'123'999, 2'000'000'000'000};
      for (int i = 0; i < 3; ++i) {
        wait(sc_time::from_value(at[i] - vtoe::core::now_ps()));
        Frame f =
            make_frame(kDst, 60 + static_cast<std::size_t>(i) * 700, static_cast<std::uint32_t>(i));
        for (std::size_t k = 18; k < f.size(); ++k) f[k] = static_cast<std::uint8_t>(k * 13 + i);
        sent.push_back(f);
        times.push_back(vtoe::core::now_ps());
        if (i == 1) {
          link.b_in->receive_frame(std::move(f));
        } else {
          link.a_in->receive_frame(std::move(f));
        }
      }
    });
    sc_start();
    EXPECT_EQ(link.drops(), 3u);
  }

  char err[PCAP_ERRBUF_SIZE];
  pcap_t* in =
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  ASSERT_NE(in, nullptr) << err;
  EXPECT_EQ(pcap_datalink(in), DLT_EN10MB);
  EXPECT_EQ(pcap_get_tstamp_precision(in), PCAP_TSTAMP_PRECISION_NANO);
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(pcap_next_ex(in, &hdr, &data), 1) << i;
    const std::uint64_t ns = times[i] / 1000;
    EXPECT_EQ(static_cast<std::uint64_t>(hdr->ts.tv_sec), ns / 1'000'000'000) << i;
    EXPECT_EQ(static_cast<std::uint64_t>(hdr->ts.tv_usec), ns % 1'000'000'000) << i;
    EXPECT_EQ(hdr->len, sent[i].size());
    EXPECT_EQ(hdr->caplen, sent[i].size());
    EXPECT_EQ(Frame(data, data + hdr->caplen), sent[i]) << i;
  }
  EXPECT_EQ(pcap_next_ex(in, &hdr, &data), PCAP_ERROR_BREAK);
  pcap_close(in);
  std::remove(path.c_str());
}

VTOE_TEST_MAIN
