// Bench for guest::ShmRing: a writer and a reader on two cores share a plain byte array. Messages
// cross whole (large ones in several slots), the reader's polling and the copies are charged,
// zero copy charges pages instead of bytes, and a third party writing garbage over the ring
// cannot crash the reader: it counts the garbage, resynchronises, and later messages arrive intact.
#include "guest/shm_ring.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "tests/support/bench.h"

using namespace vtoe;

namespace {

constexpr std::uint64_t kBase = 0x9000'0000;
constexpr std::uint64_t kBytes = 16 * 1024;
constexpr std::uint64_t kSlot = 1024;

struct Bench {
  std::vector<std::uint8_t> bytes = std::vector<std::uint8_t>(kBytes);
  guest::GuestMemory memory{kBase, bytes.size(),
                            [this](std::uint64_t a, void* d, std::size_t n, bool write) {
                              std::uint8_t* at = bytes.data() + (a - kBase);
                              if (write)
                                std::memcpy(at, d, n);
                              else
                                std::memcpy(d, at, n);
                            }};
  cpu::Core writer_core{"writer_core", cpu::CoreParams{}, 1};
  cpu::Core reader_core{"reader_core", cpu::CoreParams{}, 1};
  cpu::Core::Context& writer = writer_core.add_context("writer", 2, 0);
  cpu::Core::Context& reader = reader_core.add_context("reader", 2, 0);
  guest::GuestCosts costs;
  core::StatGroup stats{"ring"};
  core::Counter& garbage = stats.counter("garbage", "bad indices and lengths");
  guest::ShmRing tx{memory, kBase, kBytes, kSlot, writer_core, costs, garbage};
  guest::ShmRing rx{memory, kBase, kBytes, kSlot, reader_core, costs, garbage};
};

std::vector<std::uint8_t> message(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = static_cast<std::uint8_t>(seed + i * 7);
  return m;
}

}  // namespace

TEST(ShmRing, MessagesCrossWholeAndLargeOnesTakeSeveralSlots) {
  Bench b;
  const std::vector<std::size_t> sizes = {8, 1016, 1017, 40000};  // 40000: more than the ring
  std::vector<std::vector<std::uint8_t>> got;
  test::Proc w("w", [&] {
    for (std::size_t i = 0; i < sizes.size(); ++i)
      ASSERT_TRUE(b.tx.send(b.writer, message(sizes[i], static_cast<std::uint8_t>(i)).data(),
                            sizes[i], false, {}));
  });
  test::Proc r("r", [&] {
    std::vector<std::uint8_t> buf(64 * 1024);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const long long n = b.rx.recv(b.reader, buf.data(), buf.size(), false, {});
      got.emplace_back(buf.begin(), buf.begin() + n);
    }
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
  ASSERT_TRUE(w.done && r.done);
  ASSERT_EQ(got.size(), sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i)
    EXPECT_EQ(got[i], message(sizes[i], static_cast<std::uint8_t>(i))) << "message " << i;
  EXPECT_EQ(b.garbage.value(), 0u);
  EXPECT_EQ(b.tx.slots(), (kBytes - guest::ShmRing::kHeaderBytes) / kSlot);
}

TEST(ShmRing, TheReaderSeesAMessageWithinOnePollAndBothCopiesAreCharged) {
  Bench b;
  core::TimePs sent = 0, seen = 0, idle = 1;
  test::Proc w("w", [&] {
    sc_core::wait(sc_core::sc_time(10, sc_core::SC_US));  // the reader is spinning by now
    const auto m = message(8, 1);
    ASSERT_TRUE(b.tx.send(b.writer, m.data(), m.size(), false, {}));
    sent = core::now_ps();
  });
  test::Proc r("r", [&] {
    std::uint8_t buf[64];
    EXPECT_EQ(b.rx.recv(b.reader, buf, sizeof buf, false, {}), 8);
    seen = core::now_ps();
    idle = b.reader_core.idle_ps();
  });
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
  ASSERT_TRUE(w.done && r.done);
  const double cycle_ps = 500;  // 2 GHz
  const double copy_in = b.costs.copy_fixed + 8 * b.costs.copy_per_byte;
  const double copy_out = b.costs.copy_fixed + 8 * b.costs.copy_per_byte_rx;
  EXPECT_EQ(sent, 10'000'000 + static_cast<core::TimePs>(copy_in * cycle_ps));
  EXPECT_GT(seen, sent);
  EXPECT_LE(seen, sent + static_cast<core::TimePs>((b.costs.poll + copy_out) * cycle_ps));
  // The reader spun the whole time: its core was never idle.
  EXPECT_EQ(idle, 0u);
}

TEST(ShmRing, ZeroCopyChargesPagesInsteadOfBytesAboveTheThreshold) {
  Bench b;
  core::TimePs copied = 0, remapped = 0, small = 0;
  test::Proc w("w", [&] {
    const auto big = message(64 * 1024, 3);
    const auto tiny = message(64, 4);
    auto timed = [&](const std::vector<std::uint8_t>& m, bool zc) {
      const core::TimePs t0 = core::now_ps();
      EXPECT_TRUE(b.tx.send(b.writer, m.data(), m.size(), zc, {}));
      return core::now_ps() - t0;
    };
    remapped = timed(big, true);
    small = timed(tiny, true);
    copied = timed(big, false);
  });
  test::Proc r("r", [&] {
    std::vector<std::uint8_t> buf(64 * 1024);
    for (bool zc : {true, true, false}) b.rx.recv(b.reader, buf.data(), buf.size(), zc, {});
  });
  sc_core::sc_start(sc_core::sc_time(10, sc_core::SC_MS));
  ASSERT_TRUE(w.done && r.done);
  EXPECT_GE(copied, static_cast<core::TimePs>(64 * 1024 * b.costs.copy_per_byte * 500));
  // 16 pages remapped; the ring is smaller than the message, so the writer also waits for room.
  EXPECT_LT(remapped, copied / 3);
  EXPECT_GE(remapped, static_cast<core::TimePs>(16 * b.costs.page_remap * 500));
  // Below the threshold zero copy is an ordinary copy.
  EXPECT_EQ(small,
            static_cast<core::TimePs>((b.costs.copy_fixed + 64 * b.costs.copy_per_byte) * 500));
}

TEST(ShmRing, GarbageFromTheOtherSideIsCountedAndSurvived) {
  Bench b;
  std::uint64_t intact_after = 0, received = 0;
  bool writer_stop = false, reader_stop = false;
  const core::TimePs garbage_end = 300'000'000;  // 300 us
  test::Proc w("w", [&] {
    for (std::uint8_t i = 0; !writer_stop; ++i) {
      const auto m = message(100 + i % 3 * 900, i);
      if (!b.tx.send(b.writer, m.data(), m.size(), false, [&] { return writer_stop; })) break;
      sc_core::wait(sc_core::sc_time(2, sc_core::SC_US));
    }
  });
  test::Proc r("r", [&] {
    std::vector<std::uint8_t> buf(4096);
    for (;;) {
      const long long n =
          b.rx.recv(b.reader, buf.data(), buf.size(), false, [&] { return reader_stop; });
      if (n < 0) break;
      ++received;
      // A message that arrives after the garbage stopped is one the writer wrote.
      if (core::now_ps() > garbage_end + 20'000'000 && n >= 100 &&
          static_cast<std::size_t>(n) <= buf.size()) {
        const std::uint8_t seed = buf[0];
        if (std::vector<std::uint8_t>(buf.begin(), buf.begin() + n) ==
            message(static_cast<std::size_t>(n), seed))
          ++intact_after;
      }
    }
  });
  // The bad VM: random bytes all over the ring, headers and indices included.
  test::Proc bad("bad", [&] {
    std::mt19937_64 rng(7);
    while (core::now_ps() < garbage_end) {
      sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
      for (int k = 0; k < 64; ++k) {
        const std::uint64_t at = rng() % (kBytes - 8);
        const std::uint64_t v = rng();
        b.memory.write(kBase + at, &v, sizeof v);
      }
      const std::uint64_t index = rng();
      b.memory.write(kBase + (rng() & 1) * 64, &index, sizeof index);  // a tail or a head
    }
    sc_core::wait(sc_core::sc_time(500, sc_core::SC_US));
    writer_stop = reader_stop = true;
  });
  sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_MS));
  EXPECT_TRUE(bad.done);
  EXPECT_TRUE(r.done) << "the reader returns when told to stop";
  EXPECT_GT(b.garbage.value(), 0u);
  EXPECT_GT(received, 0u);
  EXPECT_GT(intact_after, 50u) << "after the garbage stops, messages cross intact again";
}

VTOE_TEST_MAIN
