// VcdWriter: declarations in scopes, changes only, and its two bounds (a window of simulated
// time, a size in bytes) with what they left out.
#include "app/vcd_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using vtoe::app::VcdBounds;
using vtoe::app::VcdWriter;

constexpr std::uint64_t kNs = 1000;  // ps

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "." + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "." +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".vcd"))
      .string();
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// What a viewer reads: {dotted name: [(ns, value)]}, and the last time stamp.
struct Parsed {
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> changes;
  std::map<std::string, unsigned> widths;
  std::uint64_t last_ns = 0;
};

Parsed parse(const std::string& text) {
  Parsed p;
  std::map<std::string, std::string> names;
  std::vector<std::string> scope;
  std::istringstream in(text);
  std::string line;
  bool header = true;
  std::uint64_t t = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string w;
    words >> w;
    if (header) {
      if (w == "$scope") {
        std::string kind, name;
        words >> kind >> name;
        scope.push_back(name);
      } else if (w == "$upscope") {
        scope.pop_back();
      } else if (w == "$var") {
        std::string type, code, name;
        unsigned width = 0;
        words >> type >> width >> code >> name;
        std::string full;
        for (std::size_t i = 1; i < scope.size(); ++i) full += scope[i] + ".";
        names[code] = full + name;
        p.widths[full + name] = width;
      } else if (w == "$enddefinitions") {
        header = false;
      }
      continue;
    }
    if (w.empty() || w == "$dumpvars" || w == "$end") continue;
    if (w[0] == '#') {
      t = std::stoull(w.substr(1));
      p.last_ns = t;
    } else if (w[0] == 'b') {
      std::string code;
      words >> code;
      p.changes[names.at(code)].push_back({t, std::stoull(w.substr(1), nullptr, 2)});
    } else {
      p.changes[names.at(w.substr(1))].push_back({t, static_cast<std::uint64_t>(w[0] - '0')});
    }
  }
  return p;
}

TEST(VcdWriter, DeclaresScopesFromDottedNamesAndWritesOnlyChanges) {
  const std::string path = temp_path("vcd_changes");
  {
    VcdWriter vcd(path, VcdBounds{0, 0, 0});
    const std::size_t irq = vcd.add("gic.irq", 1);
    const std::size_t spi = vcd.add("gic.spi0", 1);
    const std::size_t queue = vcd.add("toe.channel0.sendq", 32);
    vcd.set(0, irq, 0);
    vcd.set(0, spi, 0);
    vcd.set(0, queue, 0);
    vcd.set(1500, irq, 1);     // 1.5 ns: written at 1 ns
    vcd.set(2 * kNs, irq, 1);  // no change: nothing written
    vcd.set(3 * kNs, queue, 5);
    vcd.set(4 * kNs, irq, 0);
    vcd.set(4 * kNs, queue, 0x1'0000'0003);  // wider than 32 bits: the low 32 are kept
    vcd.close(10 * kNs);
  }
  const Parsed p = parse(read(path));
  EXPECT_EQ(p.widths.at("gic.irq"), 1u);
  EXPECT_EQ(p.widths.at("toe.channel0.sendq"), 32u);
  using Changes = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  EXPECT_EQ(p.changes.at("gic.irq"), (Changes{{0, 0}, {1, 1}, {4, 0}}));
  EXPECT_EQ(p.changes.at("gic.spi0"), (Changes{{0, 0}}));
  EXPECT_EQ(p.changes.at("toe.channel0.sendq"), (Changes{{0, 0}, {3, 5}, {4, 3}}));
  EXPECT_EQ(p.last_ns, 10u);  // the end of the run, so that a viewer shows all of it
  std::filesystem::remove(path);
}

TEST(VcdWriter, KeepsOnlyTheWindowAndOpensItWithTheValuesAtItsStart) {
  const std::string path = temp_path("vcd_window");
  {
    VcdWriter vcd(path, VcdBounds{10 * kNs, 20 * kNs, 0});
    const std::size_t irq = vcd.add("gic.irq", 1);
    const std::size_t queue = vcd.add("toe.q", 8);
    vcd.set(0, irq, 0);
    vcd.set(0, queue, 0);
    vcd.set(5 * kNs, queue, 7);   // before the window: its value at the start
    vcd.set(12 * kNs, irq, 1);    // inside
    vcd.set(25 * kNs, irq, 0);    // after: not written
    vcd.set(26 * kNs, queue, 1);  // after
    vcd.close(30 * kNs);
    EXPECT_EQ(vcd.left_out(), 0u);  // the window is no bound: nothing counts as left out
  }
  const Parsed p = parse(read(path));
  using Changes = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  EXPECT_EQ(p.changes.at("gic.irq"), (Changes{{10, 0}, {12, 1}}));
  EXPECT_EQ(p.changes.at("toe.q"), (Changes{{10, 7}}));
  EXPECT_EQ(p.last_ns, 20u);  // the window's end
  std::filesystem::remove(path);
}

TEST(VcdWriter, AWindowWithoutChangesStillHoldsTheValues) {
  const std::string path = temp_path("vcd_quiet");
  {
    VcdWriter vcd(path, VcdBounds{10 * kNs, 0, 0});
    const std::size_t queue = vcd.add("toe.q", 8);
    vcd.set(0, queue, 4);
    vcd.close(30 * kNs);
  }
  const Parsed p = parse(read(path));
  using Changes = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  EXPECT_EQ(p.changes.at("toe.q"), (Changes{{10, 4}}));
  EXPECT_EQ(p.last_ns, 30u);
  std::filesystem::remove(path);
}

TEST(VcdWriter, StopsAtItsSizeAndCountsTheChangesLeftOut) {
  const std::string path = temp_path("vcd_bound");
  const std::uint64_t bound = 400;
  std::uint64_t written_changes = 0;
  {
    VcdWriter vcd(path, VcdBounds{0, 0, bound});
    const std::size_t line = vcd.add("gic.irq", 1);
    for (std::uint64_t k = 0; k < 100; ++k) vcd.set(k * kNs, line, k % 2);
    vcd.close(200 * kNs);
    EXPECT_GT(vcd.left_out(), 0u);
    EXPECT_LE(vcd.bytes(), bound);
    written_changes = 100 - vcd.left_out();
    // The bound was reached at the first change that did not fit.
    EXPECT_EQ(vcd.full_at_ps(), written_changes * kNs);
    EXPECT_EQ(vcd.max_bytes(), bound);
  }
  EXPECT_LE(std::filesystem::file_size(path), bound);
  EXPECT_GT(std::filesystem::file_size(path), bound - 20);  // it filled the bound
  const Parsed p = parse(read(path));
  EXPECT_EQ(p.changes.at("gic.irq").size(), written_changes);
  EXPECT_EQ(p.changes.at("gic.irq").back().first, written_changes - 1);  // the first ones
  std::filesystem::remove(path);
}

TEST(VcdWriter, WithoutABoundWritesEverything) {
  const std::string path = temp_path("vcd_unbounded");
  {
    VcdWriter vcd(path, VcdBounds{0, 0, 0});
    const std::size_t line = vcd.add("gic.irq", 1);
    for (std::uint64_t k = 0; k < 10000; ++k) vcd.set(k * kNs, line, k % 2);
    vcd.close(20000 * kNs);
    EXPECT_EQ(vcd.left_out(), 0u);
  }
  EXPECT_EQ(parse(read(path)).changes.at("gic.irq").size(), 10000u);
  std::filesystem::remove(path);
}

TEST(VcdWriter, NamesWithSpacesStayOneWord) {
  const std::string path = temp_path("vcd_spaces");
  {
    VcdWriter vcd(path, VcdBounds{0, 0, 0});
    vcd.set(0, vcd.add("vtoe_manager.web server.vsendq", 32), 3);
    vcd.close(kNs);
  }
  EXPECT_EQ(parse(read(path)).widths.count("vtoe_manager.web_server.vsendq"), 1u);
  std::filesystem::remove(path);
}

TEST(VcdWriter, NamesTheFileItCannotCreate) {
  try {
    VcdWriter vcd("/nonexistent-dir/wave.vcd", VcdBounds{});
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/wave.vcd"), std::string::npos);
  }
}

}  // namespace

// VcdWriter is plain C++, but vtoe_app pulls in libsystemc, whose main() needs an sc_main. This
// file's main() takes precedence over libsystemc's; sc_main runs the same tests if it is ever used.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
extern "C" int sc_main(int argc, char* argv[]) { return main(argc, argv); }
