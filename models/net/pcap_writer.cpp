#include "models/net/pcap_writer.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

namespace {
// pcapng blocks (draft-ietf-opsawg-pcapng): little-endian as this host writes them (the section
// header's byte-order magic tells readers).
constexpr std::uint32_t kShb = 0x0A0D0D0A, kIdb = 1, kEpb = 6;
constexpr std::uint64_t kShbBytes = 28, kIdbBytes = 32, kEpbBytes = 32;
std::uint64_t padded(std::uint64_t n) { return (n + 3) & ~std::uint64_t{3}; }
}  // namespace

void PcapWriter::put(const void* data, std::size_t n) {
  if (n != 0 && std::fwrite(data, 1, n, file_) != n)
    throw std::runtime_error("pcap: cannot write '" + path_ + "'");
}

PcapWriter::PcapWriter(const std::string& path) : path_(path), limits_(current_limits()) {
  if (limits_.pcapng) {
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr)
      throw std::runtime_error("pcap: cannot open '" + path + "' for writing: " +
                               std::strerror(errno));
    const std::uint32_t shb[7] = {kShb, 28, 0x1A2B3C4D, 1, 0xffffffff, 0xffffffff, 28};
    const std::uint16_t shb_version[2] = {1, 0};
    put(&shb[0], 8);
    put(&shb[2], 4);
    put(shb_version, 4);
    put(&shb[4], 12);  // section length -1 (unknown), the total length again
    // Interface 0: Ethernet, the snap length; if_tsresol (9) = 10^-9 s; end of options.
    const std::uint32_t idb_head[2] = {kIdb, 32};
    const std::uint16_t link[2] = {1, 0};
    const std::uint32_t snap = limits_.snap_len;
    const std::uint8_t tsresol[8] = {9, 0, 1, 0, 9, 0, 0, 0};
    const std::uint32_t idb_tail[2] = {0, 32};  // opt_endofopt, total length
    put(idb_head, 8);
    put(link, 4);
    put(&snap, 4);
    put(tsresol, 8);
    put(idb_tail, 8);
    bytes_ = kShbBytes + kIdbBytes;
    writers().push_back(this);
    return;
  }
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
  if (file_ != nullptr) std::fclose(file_);
}

void PcapWriter::write(const std::uint8_t* data, std::size_t len, core::TimePs time,
                       const std::string* comment) {
  if (limits_.to_ps != 0 && (time < limits_.from_ps || time >= limits_.to_ps)) return;
  write_record(data, len, time / 1000, comment);
}

void PcapWriter::write_at_ns(const std::uint8_t* data, std::size_t len, std::uint64_t ns) {
  wall_clock_ = true;
  write_record(data, len, ns);
}

void PcapWriter::write_record(const std::uint8_t* data, std::size_t len, std::uint64_t ns,
                              const std::string* comment) {
  if (file_ != nullptr) {  // pcapng: an enhanced packet block
    const auto cap = static_cast<std::uint32_t>(std::min<std::size_t>(len, limits_.snap_len));
    const std::uint64_t note = comment && !comment->empty() ? comment->size() : 0;
    // Options: the comment (4 + its bytes, padded) and opt_endofopt (4), or none at all.
    const std::uint64_t options = note ? 4 + padded(note) + 4 : 0;
    const std::uint64_t block = kEpbBytes + padded(cap) + options;
    if (left_out_ != 0 || (limits_.max_bytes != 0 && bytes_ + block > limits_.max_bytes)) {
      if (left_out_++ == 0) full_at_ns_ = ns;
      return;
    }
    const std::uint32_t head[7] = {kEpb,
                                   static_cast<std::uint32_t>(block),
                                   0,
                                   static_cast<std::uint32_t>(ns >> 32),
                                   static_cast<std::uint32_t>(ns),
                                   cap,
                                   static_cast<std::uint32_t>(len)};
    static const std::uint8_t zeros[4] = {0, 0, 0, 0};
    put(head, sizeof head);
    put(data, cap);
    put(zeros, padded(cap) - cap);
    if (note) {
      const std::uint16_t opt[2] = {1, static_cast<std::uint16_t>(note)};  // opt_comment
      put(opt, 4);
      put(comment->data(), note);
      put(zeros, padded(note) - note);
      put(zeros, 4);  // opt_endofopt
    }
    const std::uint32_t total = static_cast<std::uint32_t>(block);
    put(&total, 4);
    bytes_ += block;
    ++records_;
    return;
  }
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
  if (file_ != nullptr) {
    if (std::fflush(file_) != 0) throw std::runtime_error("pcap: cannot flush '" + path_ + "'");
    return;
  }
  if (pcap_dump_flush(dumper_) != 0) {
    throw std::runtime_error("pcap: cannot flush '" + path_ + "'");
  }
}

}  // namespace vtoe::net
