#include "models/core/histogram.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vtoe::core {

namespace {
constexpr std::uint64_t kSub = 1ull << LogHistogram::kSubBits;

int floor_log2(std::uint64_t v) {
  int e = 0;
  while (v >>= 1) ++e;
  return e;
}
}  // namespace

std::size_t LogHistogram::bucket_of(std::uint64_t value) {
  if (value < kSub) return static_cast<std::size_t>(value);
  const int e = floor_log2(value);
  const int shift = e - kSubBits;
  const std::uint64_t sub = (value >> shift) & (kSub - 1);
  return static_cast<std::size_t>((static_cast<std::uint64_t>(shift) + 1) * kSub + sub);
}

std::uint64_t LogHistogram::lower_edge(std::size_t bucket) {
  if (bucket < kSub) return bucket;
  const std::uint64_t block = bucket / kSub;  // >= 1
  const std::uint64_t sub = bucket % kSub;
  return (kSub + sub) << (block - 1);
}

std::uint64_t LogHistogram::upper_edge(std::size_t bucket) {
  if (bucket < kSub) return bucket;
  const std::uint64_t block = bucket / kSub;
  return lower_edge(bucket) + (1ull << (block - 1)) - 1;
}

void LogHistogram::record(std::uint64_t value) {
  const std::size_t b = bucket_of(value);
  if (b >= counts_.size()) counts_.resize(b + 1, 0);
  ++counts_[b];
  ++count_;
}

std::uint64_t LogHistogram::min() const {
  for (std::size_t b = 0; b < counts_.size(); ++b)
    if (counts_[b]) return lower_edge(b);
  return 0;
}

std::uint64_t LogHistogram::max() const {
  for (std::size_t b = counts_.size(); b-- > 0;)
    if (counts_[b]) return upper_edge(b);
  return 0;
}

std::uint64_t LogHistogram::quantile(double q) const {
  if (!(q > 0 && q <= 1)) throw std::invalid_argument("LogHistogram::quantile: q not in (0, 1]");
  if (count_ == 0) return 0;
  // The rank of the sample, 1-based; the small epsilon keeps 0.99 * 100 from becoming 100.0000001.
  auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_) - 1e-9));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen >= rank) return upper_edge(b);
  }
  return max();
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> LogHistogram::cumulative() const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < counts_.size(); ++b) {
    if (!counts_[b]) continue;
    seen += counts_[b];
    out.emplace_back(upper_edge(b), seen);
  }
  return out;
}

LogHistogram LogHistogram::since(const LogHistogram& base) const {
  if (base.counts_.size() > counts_.size() || base.count_ > count_)
    throw std::invalid_argument("LogHistogram::since: the base is not an earlier copy");
  LogHistogram d = *this;
  for (std::size_t b = 0; b < base.counts_.size(); ++b) {
    if (base.counts_[b] > d.counts_[b])
      throw std::invalid_argument("LogHistogram::since: the base is not an earlier copy");
    d.counts_[b] -= base.counts_[b];
  }
  d.count_ -= base.count_;
  return d;
}

void LogHistogram::merge(const LogHistogram& other) {
  if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
  for (std::size_t b = 0; b < other.counts_.size(); ++b) counts_[b] += other.counts_[b];
  count_ += other.count_;
}

}  // namespace vtoe::core
