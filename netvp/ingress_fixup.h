// Frames from a Linux interface with its default offloads on are not yet wire frames: a frame the
// local stack sent may carry a partial TCP/UDP checksum (TP_STATUS_CSUMNOTREADY: only the
// pseudo-header sum is filled in, the NIC would finish it), and with TSO/GSO or GRO a TCP segment
// may be many MSS long. The real NIC would finish the checksum and cut the segment; this does the
// same on ingress, so the simulated TOE sees what it would see on a wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vtoe::netvp {

struct IngressStats {
  std::uint64_t checksums_completed = 0;  // partial TCP/UDP checksums finished
  std::uint64_t segmented = 0;            // oversized TCP frames cut into MSS-sized ones
  std::uint64_t segments = 0;             // the frames those became
  std::uint64_t oversized_dropped = 0;    // oversized and not TCP/IPv4: cannot be cut
};

class IngressFixup {
 public:
  // `mtu`: the largest IP packet the simulated side takes (the TOE's toe.mtu).
  explicit IngressFixup(std::size_t mtu = 1500) : mtu_(mtu) {}

  // Appends to `out` the wire frames `frame` stands for: itself (checksum finished if
  // `csum_not_ready`), the MSS-sized segments of an oversized TCP frame, or nothing if it is
  // oversized and cannot be cut (counted).
  void fix(const std::uint8_t* frame, std::size_t len, bool csum_not_ready,
           std::vector<std::vector<std::uint8_t>>& out);
  const IngressStats& stats() const { return stats_; }

 private:
  std::size_t mtu_;
  IngressStats stats_;
};

}  // namespace vtoe::netvp
