#include "models/net/pcap_writer.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <stdexcept>

namespace vtoe::net {

PcapWriter::PcapWriter(const std::string& path) : path_(path) {
  pcap_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnapLen, PCAP_TSTAMP_PRECISION_NANO);
  if (pcap_ == nullptr) throw std::runtime_error("pcap: cannot create a handle for '" + path + "'");
  dumper_ = pcap_dump_open(pcap_, path.c_str());
  if (dumper_ == nullptr) {
    const std::string why = pcap_geterr(pcap_);
    pcap_close(pcap_);
    pcap_ = nullptr;
    throw std::runtime_error("pcap: cannot open '" + path + "' for writing: " + why);
  }
}

PcapWriter::~PcapWriter() {
  if (dumper_ != nullptr) {
    pcap_dump_flush(dumper_);
    pcap_dump_close(dumper_);
  }
  if (pcap_ != nullptr) pcap_close(pcap_);
}

void PcapWriter::write(const std::uint8_t* data, std::size_t len, core::TimePs time) {
  write_at_ns(data, len, time / 1000);
}

void PcapWriter::write_at_ns(const std::uint8_t* data, std::size_t len, std::uint64_t ns) {
  pcap_pkthdr header{};
  header.ts.tv_sec = static_cast<decltype(header.ts.tv_sec)>(ns / 1'000'000'000);
  // With nanosecond precision libpcap stores nanoseconds in the tv_usec field.
  header.ts.tv_usec = static_cast<decltype(header.ts.tv_usec)>(ns % 1'000'000'000);
  header.len = static_cast<bpf_u_int32>(len);
  header.caplen = static_cast<bpf_u_int32>(std::min<std::size_t>(len, kSnapLen));
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &header, data);
  ++records_;
}

void PcapWriter::flush() {
  if (pcap_dump_flush(dumper_) != 0) {
    throw std::runtime_error("pcap: cannot flush '" + path_ + "'");
  }
}

}  // namespace vtoe::net
