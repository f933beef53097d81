// The Internet checksum (RFC 1071): 16-bit ones-complement sum, 8 bytes per step.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/tcpip/types.h"

namespace vtoe::tcpip {

/// Ones-complement sum of `data` read as big-endian 16-bit words (a trailing odd byte is padded
/// with zero), added to `init` (a previous folded sum). Returns the folded 16-bit sum (not
/// inverted). Chunks can be chained through `init` as long as every chunk but the last has an
/// even length.
std::uint16_t ones_sum(const std::uint8_t* data, std::size_t len, std::uint32_t init = 0);

/// Copies `len` bytes from `src` to `dst` and returns ones_sum(dst, len, init): one pass over
/// the bytes instead of a copy and then a sum (a segment's payload entering its frame).
std::uint16_t ones_sum_copy(std::uint8_t* dst, const std::uint8_t* src, std::size_t len,
                            std::uint32_t init = 0);

/// The checksum to store in a header: ~ones_sum(data, len, init). A buffer whose stored checksum
/// is correct gives internet_checksum(...) == 0.
std::uint16_t internet_checksum(const std::uint8_t* data, std::size_t len, std::uint32_t init = 0);

/// Folded sum of the TCP/UDP IPv4 pseudo-header (src, dst, zero, protocol, length).
std::uint32_t pseudo_header_sum(Ipv4 src, Ipv4 dst, std::uint8_t proto, std::uint16_t len);

/// Straightforward 16-bit-at-a-time reference implementation (tests).
std::uint16_t ones_sum_reference(const std::uint8_t* data, std::size_t len, std::uint32_t init = 0);

}  // namespace vtoe::tcpip
