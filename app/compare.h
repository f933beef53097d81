// `vtoe compare A B`: what moved between two runs. A and B are results.json files (or run
// directories holding one); every number is compared, and those that differ by more than the
// tolerance are listed, largest relative change first. Used when a change of results is intended
// (what moved, by how much) and in scripts (exit status 1 when anything moved beyond tolerance).
#pragma once

#include <iosfwd>
#include <string>

namespace vtoe::app {

struct CompareOptions {
  std::string a, b;          ///< files or run directories
  double tolerance_pct = 0;  ///< a number within this relative change (percent) is unchanged
  double tolerance_abs = 0;  ///< ... or within this absolute change (for values near zero)
  bool all = false;          ///< list unchanged values too
};

/// Prints the differences to `out`. Returns 0 when nothing differs beyond tolerance, 1 when
/// something does. Throws std::runtime_error naming the file for a missing or unreadable input.
int compare_results(const CompareOptions& opts, std::ostream& out);

}  // namespace vtoe::app
