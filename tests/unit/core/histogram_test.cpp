// core::LogHistogram: bucket edges tile the integers, quantiles match the sorted samples (the
// reference) to within one bucket (0.8 %) and never below, since() subtracts a warm-up copy.
#include "models/core/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "tests/support/bench.h"

using vtoe::core::LogHistogram;

TEST(LogHistogram, BucketsTileTheIntegersWithBoundedWidth) {
  std::uint64_t next = 0;
  for (std::size_t b = 0; b < 40 * 128; ++b) {
    ASSERT_EQ(LogHistogram::lower_edge(b), next) << "bucket " << b;
    const std::uint64_t hi = LogHistogram::upper_edge(b);
    ASSERT_EQ(LogHistogram::bucket_of(LogHistogram::lower_edge(b)), b);
    ASSERT_EQ(LogHistogram::bucket_of(hi), b);
    // Width at most 1/128 of the lower edge (exact below 128).
    ASSERT_LE(static_cast<double>(hi - LogHistogram::lower_edge(b)),
              static_cast<double>(LogHistogram::lower_edge(b)) / 128.0);
    next = hi + 1;
  }
}

TEST(LogHistogram, QuantilesAgreeWithSortedSamples) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(std::log(20e6), 0.6);  // ~20 us in ps, a long tail
  std::vector<std::uint64_t> samples;
  LogHistogram h;
  for (int i = 0; i < 5000; ++i) {
    const auto v = static_cast<std::uint64_t>(dist(rng));
    samples.push_back(v);
    h.record(v);
  }
  std::sort(samples.begin(), samples.end());
  for (double q : {0.01, 0.5, 0.99, 0.999, 1.0}) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * samples.size() - 1e-9));
    const std::uint64_t exact = samples[rank - 1];
    const std::uint64_t got = h.quantile(q);
    EXPECT_GE(got, exact) << "q " << q;
    EXPECT_LE(static_cast<double>(got), static_cast<double>(exact) * (1 + 1.0 / 128)) << "q " << q;
  }
  EXPECT_EQ(h.count(), 5000u);
  EXPECT_LE(h.min(), samples.front());
  EXPECT_GE(h.max(), samples.back());
  const auto cdf = h.cumulative();
  ASSERT_FALSE(cdf.empty());
  EXPECT_EQ(cdf.back().second, 5000u);
  for (std::size_t i = 1; i < cdf.size(); ++i) EXPECT_LT(cdf[i - 1].first, cdf[i].first);
  EXPECT_THROW((void)h.quantile(0), std::invalid_argument);
}

TEST(LogHistogram, SinceSubtractsTheWarmUp) {
  LogHistogram h;
  for (int i = 0; i < 10; ++i) h.record(1000);  // warm-up: slow
  const LogHistogram base = h;
  for (int i = 0; i < 4; ++i) h.record(5);
  const LogHistogram w = h.since(base);
  EXPECT_EQ(w.count(), 4u);
  EXPECT_EQ(w.quantile(0.5), 5u);
  EXPECT_EQ(w.max(), 5u);
  EXPECT_TRUE(LogHistogram{}.since(LogHistogram{}).empty());
  EXPECT_THROW((void)base.since(h), std::invalid_argument);
}

TEST(LogHistogram, MergeAddsTheSamplesOfAnother) {
  LogHistogram a, b, both;
  for (std::uint64_t v : {5u, 700u, 90000u}) {
    a.record(v);
    both.record(v);
  }
  for (std::uint64_t v : {3u, 1u << 20}) {
    b.record(v);
    both.record(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), 5u);
  EXPECT_EQ(a.cumulative(), both.cumulative());
  EXPECT_EQ(a.quantile(0.5), both.quantile(0.5));
  EXPECT_EQ(a.max(), both.max());
}

VTOE_TEST_MAIN
