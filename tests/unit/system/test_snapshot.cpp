// Booted snapshots' parts (platform/system): DeviceInputLog records what a core does to the
// devices (not to the RAM) and replays it at the same times, noticing a device that answers
// otherwise; the snapshot file keeps every section and names the file and what is wrong with a
// bad one. tests/system/test_iss_mode.py checks the whole: a run restored from a booted Linux
// gives the booting run's results byte for byte.
#include <gtest/gtest.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "platform/system/device_input_log.h"
#include "platform/system/snapshot.h"
#include "tests/support/bench.h"

using namespace sc_core;
using vtoe::platform::system::DeviceInputLog;
using vtoe::platform::system::load_snapshot;
using vtoe::platform::system::save_snapshot;
using vtoe::platform::system::Snapshot;
using vtoe::platform::system::snapshot_key;
using vtoe::platform::system::SnapshotError;
using vtoe::test::Initiator;

namespace {

constexpr std::uint64_t kRamBase = 0x40000000, kRamSize = 0x1000;

// A device: logs (time, address, value written) and answers a read with `base` + the number of
// accesses so far, so that its state shows in what it answers.
class Device : public sc_module {
 public:
  tlm_utils::simple_target_socket<Device> in;
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>> seen;
  std::uint32_t base;

  Device(const sc_module_name& name, std::uint32_t b) : sc_module(name), in("in"), base(b) {
    in.register_b_transport(this, &Device::b_transport);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_time& delay) {
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    if (t.get_address() >= kRamBase) return;  // the RAM behind the same socket: no state
    std::uint32_t v = 0;
    if (t.is_write()) {
      std::memcpy(&v, t.get_data_ptr(), 4);
    } else {
      v = base + static_cast<std::uint32_t>(seen.size());
      std::memcpy(t.get_data_ptr(), &v, 4);
    }
    seen.emplace_back(sc_time_stamp().value(), t.get_address(), v);
    delay += sc_time(5, SC_NS);
  }
};

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + std::to_string(::getpid()) + "-" + name;
}

}  // namespace

TEST(DeviceInputLog, ReplaysTheCoresDeviceAccessesAtTheirTimesAndSeesADivergence) {
  Device recorded_dev("recorded_dev", 100), replayed_dev("replayed_dev", 100),
      other_dev("other_dev", 7);
  DeviceInputLog log("log", kRamBase, kRamSize), replay("replay", kRamBase, kRamSize),
      diverging("diverging", kRamBase, kRamSize);
  Initiator core("core", [](Initiator& self) {
    self.write32(0x0900'0000, 0x61);
    wait(20, SC_NS);
    std::uint8_t ram[4] = {1, 2, 3, 4};
    sc_time d = SC_ZERO_TIME;
    self.access(tlm::TLM_WRITE_COMMAND, kRamBase + 0x10, ram, 4, d);  // the RAM's: not logged
    EXPECT_EQ(self.read32(0x0800'0004), 101u);
    wait(7, SC_NS);
    self.write32(0x0800'0008, 0xdead);
  });
  core.socket.bind(log.in);
  log.out.bind(recorded_dev.in);
  // (Two idle initiators' worth of replays: each log replays into a device of its own.)
  replay.out.bind(replayed_dev.in);
  diverging.out.bind(other_dev.in);
  Initiator idle1("idle1", [](Initiator&) {}), idle2("idle2", [](Initiator&) {});
  idle1.socket.bind(replay.in);
  idle2.socket.bind(diverging.in);

  log.start_recording();
  sc_start(100, SC_NS);
  ASSERT_EQ(recorded_dev.seen.size(), 3u);
  const std::vector<DeviceInputLog::Input> inputs = log.inputs();
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(inputs[0].kind, DeviceInputLog::Input::Write);
  EXPECT_EQ(inputs[1].kind, DeviceInputLog::Input::Read);
  EXPECT_EQ(inputs[1].address, 0x0800'0004u);
  const std::uint32_t event[5] = {9, 1, 2, 3, 4};
  log.record(event);  // an input that does not cross the bus
  ASSERT_EQ(log.inputs().size(), 4u);

  // Replayed 200 ns later than recorded: the same accesses at the same distances.
  const std::uint64_t shift = sc_time(200, SC_NS).value();
  std::vector<DeviceInputLog::Input> later = log.inputs();
  for (DeviceInputLog::Input& i : later) i.time += shift;
  std::vector<std::uint32_t> events;
  replay.replay(later, log.bytes(), [&](const DeviceInputLog::Input& i) {
    events.push_back(i.args[0]);
    EXPECT_EQ(sc_time_stamp().value(), i.time);
  });
  diverging.replay(later, log.bytes(), nullptr);
  sc_start(300, SC_NS);
  EXPECT_TRUE(replay.replayed());
  EXPECT_EQ(replay.divergence(), "");
  EXPECT_EQ(events, std::vector<std::uint32_t>{9});
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>> want;
  for (const auto& [t, a, v] : recorded_dev.seen) want.emplace_back(t + shift, a, v);
  EXPECT_EQ(replayed_dev.seen, want);
  // A device that answers otherwise: the first such read is named.
  EXPECT_TRUE(diverging.replayed());
  EXPECT_NE(diverging.divergence().find("a read of 4 bytes at 0x8000004"), std::string::npos)
      << diverging.divergence();
}

TEST(SnapshotFile, KeepsEverySection) {
  Snapshot s;
  s.key = "vtoe booted snapshot\nbinary: 1 byte\n";
  s.time = 1234567;
  s.resolution = 1000;
  s.cpu.state.r[3] = 0xabcd;
  s.cpu.state.cp15.sctlr = 0x00c5187d;
  s.cpu.cycles = 99;
  s.cpu.timer_levels = {false, true, false};
  s.monitor_last = 5;
  s.monitor_asleep = 6;
  s.inputs.resize(2);
  s.inputs[1].address = 0x0c000000;
  s.inputs[1].kind = DeviceInputLog::Input::Write;
  s.inputs[1].length = 4;
  s.input_bytes = {1, 2, 3, 4};
  s.ram_size = 4 * vtoe::platform::system::kSnapshotPage;
  s.ram_pages = {1, 3};
  s.ram_data.assign(2 * vtoe::platform::system::kSnapshotPage, 0x77);
  const std::string path = temp_path("keeps.snap");
  save_snapshot(s, path);
  EXPECT_EQ(snapshot_key(path), s.key);
  const Snapshot r = load_snapshot(path);
  EXPECT_EQ(r.key, s.key);
  EXPECT_EQ(r.time, s.time);
  EXPECT_EQ(r.resolution, s.resolution);
  EXPECT_EQ(r.cpu.state.r[3], 0xabcdu);
  EXPECT_EQ(r.cpu.state.cp15.sctlr, 0x00c5187du);
  EXPECT_EQ(r.cpu.cycles, 99u);
  EXPECT_TRUE(r.cpu.timer_levels[1]);
  EXPECT_EQ(r.monitor_last, 5u);
  EXPECT_EQ(r.monitor_asleep, 6u);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[1].address, 0x0c000000u);
  EXPECT_EQ(r.input_bytes, s.input_bytes);
  EXPECT_EQ(r.ram_pages, s.ram_pages);
  EXPECT_EQ(r.ram_data, s.ram_data);
  std::filesystem::remove(path);
}

TEST(SnapshotFile, ABadFileIsNamedWithWhatIsWrong) {
  auto error = [](const std::string& path) {
    try {
      load_snapshot(path);
    } catch (const SnapshotError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("/nonexistent/boot.snap"),
            "snapshot /nonexistent/boot.snap: cannot open: No such file or directory");
  const std::string junk = temp_path("junk.snap");
  std::ofstream(junk) << "this is not a snapshot at all";
  EXPECT_EQ(error(junk), "snapshot " + junk + ": not a vtoe snapshot");
  EXPECT_EQ(snapshot_key(junk), "");

  Snapshot s;
  s.key = "k";
  s.ram_size = 2 * vtoe::platform::system::kSnapshotPage;
  s.ram_pages = {0};
  s.ram_data.assign(vtoe::platform::system::kSnapshotPage, 1);
  const std::string cut = temp_path("cut.snap");
  save_snapshot(s, cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) - 100);
  EXPECT_EQ(error(cut), "snapshot " + cut + ": it ends early (a truncated file)");
  EXPECT_EQ(snapshot_key(cut), "k");  // the header is still there

  EXPECT_THROW(save_snapshot(s, "/nonexistent/dir/boot.snap"), SnapshotError);
  std::filesystem::remove(junk);
  std::filesystem::remove(cut);
}

VTOE_TEST_MAIN
