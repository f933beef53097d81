// A log-bucket histogram of non-negative integers (latencies in picoseconds), laid out as
// HdrHistogram lays out its counts: values below 2^kSubBits have a bucket each; above, every power
// of two is split into 2^kSubBits equal buckets, so a bucket is at most 1/2^kSubBits (0.8 %) of
// its values wide whatever the magnitude. No Debian package carries a C or C++ HdrHistogram
// (only Java and Go ports), and this layout is thirty lines.
//
// Quantiles are the upper edge of the bucket that holds the ceil(q * count)-th smallest sample,
// clamped to the smallest and largest bucket edges seen, so they are exact for small values and
// never below the true quantile. Integer arithmetic only: the same samples give the same numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace vtoe::core {

class LogHistogram {
 public:
  static constexpr int kSubBits = 7;

  void record(std::uint64_t value);
  std::uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Lower edge of the lowest and upper edge of the highest non-empty bucket (0 when empty).
  std::uint64_t min() const;
  std::uint64_t max() const;
  // The value at quantile q in (0, 1]; 0 when empty.
  std::uint64_t quantile(double q) const;
  // (upper bucket edge, samples up to and including that bucket) for every non-empty bucket, in
  // increasing order: the empirical CDF a plot draws as steps.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> cumulative() const;
  // The samples recorded since `base`, a copy of this histogram taken earlier (warm-up end).
  LogHistogram since(const LogHistogram& base) const;
  // Adds another histogram's samples (several processes of one workload).
  void merge(const LogHistogram& other);

  static std::size_t bucket_of(std::uint64_t value);
  static std::uint64_t lower_edge(std::size_t bucket);
  static std::uint64_t upper_edge(std::size_t bucket);

 private:
  std::vector<std::uint64_t> counts_;  // grows to the highest bucket used
  std::uint64_t count_ = 0;
};

}  // namespace vtoe::core
