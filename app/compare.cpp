#include "app/compare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace vtoe::app {

namespace {

using nlohmann::json;

json load(const std::string& where) {
  std::filesystem::path p(where);
  if (std::filesystem::is_directory(p)) p /= "results.json";
  std::ifstream in(p);
  if (!in)
    throw std::runtime_error(p.string() + ": cannot read (a results.json or a run directory)");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(p.string() + ": not JSON: " + e.what());
  }
}

// Flattens to "path -> leaf". Items of a list of objects that have a "name" are addressed by it
// (vms.vm1.tx_mbps), so adding a VM does not shift every later path. A latency distribution's
// CDF steps are left out: its percentiles carry the comparison, and steps move with every bucket.
void flatten(const json& j, const std::string& path, std::map<std::string, json>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "cdf" && it.value().is_array()) continue;
      flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      const json& item = j[i];
      const std::string key = item.is_object() && item.contains("name") && item["name"].is_string()
                                  ? item["name"].get<std::string>()
                                  : std::to_string(i);
      flatten(item, path + "." + key, out);
    }
  } else {
    out[path] = j;
  }
}

std::string show(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_number_float()) {
    std::ostringstream s;
    s << std::setprecision(10) << v.get<double>();
    return s.str();
  }
  return v.dump();
}

struct Row {
  std::string path, a, b, change;
  double rank = 0;  // |relative change|; infinity for added, removed or changed non-numbers
};

}  // namespace

int compare_results(const CompareOptions& opts, std::ostream& out) {
  std::map<std::string, json> fa, fb;
  flatten(load(opts.a), "", fa);
  flatten(load(opts.b), "", fb);
  std::vector<Row> moved, same;
  std::map<std::string, bool> paths;
  for (const auto& [k, v] : fa) paths[k] = true;
  for (const auto& [k, v] : fb) paths[k] = true;
  for (const auto& [path, unused] : paths) {
    (void)unused;
    const auto ia = fa.find(path), ib = fb.find(path);
    const json va = ia == fa.end() ? json() : ia->second;
    const json vb = ib == fb.end() ? json() : ib->second;
    Row row{path, show(va), show(vb), "", 0};
    bool differs = false;
    if (va.is_number() && vb.is_number()) {
      const double x = va.get<double>(), y = vb.get<double>();
      const double d = y - x;
      const double rel = x != 0 ? d / std::fabs(x) : (d == 0 ? 0 : INFINITY);
      differs = std::fabs(d) > opts.tolerance_abs && std::fabs(rel) * 100 > opts.tolerance_pct;
      std::ostringstream c;
      if (d != 0) {
        c << std::showpos << std::setprecision(6) << d << std::noshowpos;
        if (std::isfinite(rel))
          c << " (" << std::showpos << std::fixed << std::setprecision(2) << rel * 100
            << std::noshowpos << " %)";
      }
      row.change = c.str();
      row.rank = std::fabs(rel);
    } else if (va != vb) {
      differs = true;
      row.change = ia == fa.end() ? "only in B" : ib == fb.end() ? "only in A" : "changed";
      row.rank = INFINITY;
    }
    (differs ? moved : same).push_back(row);
  }
  std::stable_sort(moved.begin(), moved.end(),
                   [](const Row& x, const Row& y) { return x.rank > y.rank; });
  auto print = [&](const std::vector<Row>& rows) {
    std::size_t w = 4;
    for (const Row& r : rows) w = std::max(w, r.path.size());
    for (const Row& r : rows)
      out << std::left << std::setw(static_cast<int>(w)) << r.path << "  " << std::setw(14) << r.a
          << "  " << std::setw(14) << r.b << "  " << r.change << "\n";
  };
  print(moved);
  if (opts.all) print(same);
  std::ostringstream tol;
  tol << opts.tolerance_pct << " %";
  if (opts.tolerance_abs > 0) tol << " or " << opts.tolerance_abs << " absolute";
  out << moved.size() << " of " << paths.size() << " values differ beyond " << tol.str() << "\n";
  return moved.empty() ? 0 : 1;
}

}  // namespace vtoe::app
