// PcapWriter: writes Ethernet frames (DLT_EN10MB, no FCS) to a pcap file with nanosecond
// timestamps taken from simulated time. The output depends only on the frames and their times
// (no wall clock), so identical runs give byte-identical files.
//
// Format: classic pcap (libpcap's writer), or pcapng (PcapLimits::pcapng; written here, libpcap
// writes no pcapng): a section header, one interface (LINKTYPE_ETHERNET, the snap length,
// if_tsresol 9 = ns) and an enhanced packet block per frame, which may carry a comment
// (opt_comment: a link says which frames its loss model dropped). Wireshark shows the comment
// in the packet list (`frame.comment`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "models/core/module.h"

// libpcap types, kept out of every includer.
struct pcap;
struct pcap_dumper;

namespace vtoe::net {

// What every capture may hold (`vtoe run --pcap-snaplen`, `--pcap-limit`; docs/net.md).
struct PcapLimits {
  std::uint32_t snap_len = 65535;  // bytes kept of each frame (the record keeps its length)
  // The file's size at most, headers included; a frame that would pass it is left out, and so
  // is every later one. 0 = no bound.
  std::uint64_t max_bytes = 1ull << 30;
  // Frames written with write() (simulated time) at or after `from_ps` and before `to_ps` only;
  // to_ps == 0: no window. NetVP's wall-clock records (write_at_ns) are not windowed.
  core::TimePs from_ps = 0, to_ps = 0;
  bool pcapng = false;  // pcapng instead of pcap (files DIR/<link>.pcapng)
};

class PcapWriter {
 public:
  static constexpr int kSnapLen = 65535;  // the default snap length: whole frames

  // The limits of captures opened from now on (a run sets them before building its platform).
  static void set_limits(const PcapLimits& limits);
  static const PcapLimits& limits();
  // The captures open now, in the order they were opened.
  static const std::vector<const PcapWriter*>& open_writers();
  // The file name extension of captures opened from now on: ".pcap" or ".pcapng".
  static const char* extension() { return limits().pcapng ? ".pcapng" : ".pcap"; }

  // Creates (truncates) `path`. Throws std::runtime_error naming the path if it cannot be opened.
  explicit PcapWriter(const std::string& path);
  ~PcapWriter();  // flushes and closes
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // One record at simulated time `time` (ps, truncated to ns). Frames longer than the snap length
  // are captured truncated (the record keeps the original length); past the size bound, nothing.
  // `comment` (pcapng only; ignored in pcap): a note on the frame, e.g. why it was dropped.
  void write(const std::uint8_t* data, std::size_t len, core::TimePs time,
             const std::string* comment = nullptr);
  // One record at `ns` nanoseconds since the Unix epoch (NetVP's captures use the wall clock, so
  // that mergecap lines them up with a tcpdump taken on the real hosts).
  void write_at_ns(const std::uint8_t* data, std::size_t len, std::uint64_t ns);
  void flush();

  const std::string& path() const { return path_; }
  std::uint64_t records() const { return records_; }
  std::uint64_t bytes() const { return bytes_; }  // the file's size, headers included
  // Frames left out because the file reached limits().max_bytes, and the time (ns, as the
  // records' timestamps) of the first of them.
  std::uint64_t left_out() const { return left_out_; }
  std::uint64_t full_at_ns() const { return full_at_ns_; }
  std::uint64_t max_bytes() const { return limits_.max_bytes; }
  bool wall_clock() const { return wall_clock_; }  // timestamps since the Unix epoch (NetVP)

 private:
  void write_record(const std::uint8_t* data, std::size_t len, std::uint64_t ns,
                    const std::string* comment = nullptr);
  void put(const void* data, std::size_t n);  // pcapng: raw bytes to the file

  std::string path_;
  std::FILE* file_ = nullptr;  // pcapng
  PcapLimits limits_;
  pcap* pcap_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  std::uint64_t records_ = 0;
  std::uint64_t bytes_ = 24;  // the file header
  std::uint64_t left_out_ = 0;
  std::uint64_t full_at_ns_ = 0;
  bool wall_clock_ = false;
};

}  // namespace vtoe::net
