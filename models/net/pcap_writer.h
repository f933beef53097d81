// PcapWriter: writes Ethernet frames (DLT_EN10MB, no FCS) to a pcap file with nanosecond
// timestamps taken from simulated time. The output depends only on the frames and their times
// (no wall clock), so identical runs give byte-identical files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "models/core/module.h"

// libpcap types, kept out of every includer.
struct pcap;
struct pcap_dumper;

namespace vtoe::net {

class PcapWriter {
 public:
  static constexpr int kSnapLen = 65535;

  // Creates (truncates) `path`. Throws std::runtime_error naming the path if it cannot be opened.
  explicit PcapWriter(const std::string& path);
  ~PcapWriter();  // flushes and closes
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // One record at simulated time `time` (ps, truncated to ns). Frames longer than kSnapLen are
  // captured truncated (the record keeps the original length).
  void write(const std::uint8_t* data, std::size_t len, core::TimePs time);
  // One record at `ns` nanoseconds since the Unix epoch (NetVP's captures use the wall clock, so
  // that mergecap lines them up with a tcpdump taken on the real hosts).
  void write_at_ns(const std::uint8_t* data, std::size_t len, std::uint64_t ns);
  void flush();

  const std::string& path() const { return path_; }
  std::uint64_t records() const { return records_; }

 private:
  std::string path_;
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  std::uint64_t records_ = 0;
};

}  // namespace vtoe::net
