#include "models/net/pcap_writer.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <stdexcept>

namespace vtoe::net {

namespace {
PcapLimits& current_limits() {
  static PcapLimits limits;
  return limits;
}
std::vector<const PcapWriter*>& writers() {
  static std::vector<const PcapWriter*> open;
  return open;
}
constexpr std::uint64_t kRecordHeader = 16;
}  // namespace

void PcapWriter::set_limits(const PcapLimits& limits) { current_limits() = limits; }
const PcapLimits& PcapWriter::limits() { return current_limits(); }
const std::vector<const PcapWriter*>& PcapWriter::open_writers() { return writers(); }

PcapWriter::PcapWriter(const std::string& path) : path_(path), limits_(current_limits()) {
  pcap_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, static_cast<int>(limits_.snap_len),
                                               PCAP_TSTAMP_PRECISION_NANO);
  if (pcap_ == nullptr) throw std::runtime_error("pcap: cannot create a handle for '" + path + "'");
  dumper_ = pcap_dump_open(pcap_, path.c_str());
  if (dumper_ == nullptr) {
    const std::string why = pcap_geterr(pcap_);
    pcap_close(pcap_);
    pcap_ = nullptr;
    throw std::runtime_error("pcap: cannot open '" + path + "' for writing: " + why);
  }
  writers().push_back(this);
}

PcapWriter::~PcapWriter() {
  auto& open = writers();
  open.erase(std::remove(open.begin(), open.end(), this), open.end());
  if (dumper_ != nullptr) {
    pcap_dump_flush(dumper_);
    pcap_dump_close(dumper_);
  }
  if (pcap_ != nullptr) pcap_close(pcap_);
}

void PcapWriter::write(const std::uint8_t* data, std::size_t len, core::TimePs time) {
  if (limits_.to_ps != 0 && (time < limits_.from_ps || time >= limits_.to_ps)) return;
  write_record(data, len, time / 1000);
}

void PcapWriter::write_at_ns(const std::uint8_t* data, std::size_t len, std::uint64_t ns) {
  wall_clock_ = true;
  write_record(data, len, ns);
}

void PcapWriter::write_record(const std::uint8_t* data, std::size_t len, std::uint64_t ns) {
  pcap_pkthdr header{};
  header.ts.tv_sec = static_cast<decltype(header.ts.tv_sec)>(ns / 1'000'000'000);
  // With nanosecond precision libpcap stores nanoseconds in the tv_usec field.
  header.ts.tv_usec = static_cast<decltype(header.ts.tv_usec)>(ns % 1'000'000'000);
  header.len = static_cast<bpf_u_int32>(len);
  header.caplen = static_cast<bpf_u_int32>(std::min<std::size_t>(len, limits_.snap_len));
  // Once a frame is left out, every later one is too: a capture with a hole in it would show
  // retransmissions and losses that did not happen.
  const std::uint64_t record = kRecordHeader + header.caplen;
  if (left_out_ != 0 || (limits_.max_bytes != 0 && bytes_ + record > limits_.max_bytes)) {
    if (left_out_++ == 0) full_at_ns_ = ns;
    return;
  }
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &header, data);
  bytes_ += record;
  ++records_;
}

void PcapWriter::flush() {
  if (pcap_dump_flush(dumper_) != 0) {
    throw std::runtime_error("pcap: cannot flush '" + path_ + "'");
  }
}

}  // namespace vtoe::net
