// A booted system platform's snapshot and its file (docs/iss-mode.md, "Booted snapshots").
//
// Taken at a quiescent point (the core asleep in WFI with nothing pending at that instant, the
// devices' DMA never used), it holds what it takes to go on from there exactly as the run that
// booted does: the core (IssCpu::Saved: the architectural state and the counters), the platform's
// monitor, the RAM's contents (pages that are not all zero), and everything the core did to the
// devices up to then (DeviceInputLog), which a restore replays to bring the GIC, the UART, the
// TOE, the link and the peer to the same state with the same events pending. What only caches
// state (the TLB, decoded code, the L1 caches' lines, the DRAM's open rows after a refresh) is
// brought to its empty state in both runs (IssCpu::settle).
//
// The file is read only by the binary that wrote it: `key` (the runner's description of what
// the snapshot depends on, the binary included) must match, and the core's state is written as
// the plain data it is. Writing goes to a temporary file renamed into place, so a reader never
// sees half a snapshot and two runs writing the same one do not mix.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/cpu/iss/iss_cpu.h"
#include "platform/system/device_input_log.h"

namespace vtoe::platform::system {

struct Snapshot {
  std::string key;
  std::uint64_t time = 0;        // sc_time value of the snapshot's point
  std::uint64_t resolution = 0;  // the kernel's time resolution, in femtoseconds
  cpu::iss::IssCpu::Saved cpu{};
  std::uint64_t monitor_last = 0, monitor_asleep = 0;  // SystemPlatform's monitor
  std::vector<DeviceInputLog::Input> inputs;
  std::vector<std::uint8_t> input_bytes;
  std::uint64_t ram_size = 0;
  std::vector<std::uint32_t> ram_pages;  // indices of the 4 KiB pages saved, ascending
  std::vector<std::uint8_t> ram_data;    // their contents, in that order
};

constexpr std::uint64_t kSnapshotPage = 4096;

// A snapshot file that cannot be read: its path and what is wrong.
class SnapshotError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws SnapshotError (naming the file) when it cannot be written.
void save_snapshot(const Snapshot& s, const std::string& path);
// Throws SnapshotError naming the file and what is wrong: missing, not a snapshot, written by
// another format, truncated.
Snapshot load_snapshot(const std::string& path);
// The key a file holds (its header only); "" when it is not a readable snapshot.
std::string snapshot_key(const std::string& path);

}  // namespace vtoe::platform::system
