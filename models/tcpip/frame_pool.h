// Frame buffers recycled instead of allocated: a frame's bytes (about 1.5 KB) are one heap
// allocation each, and at 10 Gbit/s the allocator's large-chunk path was a few per cent of a
// run. The last receiver of a frame (a stack that has consumed it) gives it back; a stack that
// builds a frame takes one. Nothing observable depends on it: a taken frame is zero-filled,
// exactly as a new one (or, for a builder that writes every byte, left as it was). One pool per
// thread (NetVP's socket thread builds frames of its own), bounded. Sanitizer builds allocate every
// frame, so that a frame used after it was given back is still caught.
#pragma once

#include <cstddef>

#include "models/tcpip/types.h"

namespace vtoe::tcpip {

class FramePool {
 public:
  // A frame of `len` zero bytes, checksums_valid false.
  static Frame take(std::size_t len);
  // A frame of `len` bytes whose values are unspecified (a recycled buffer keeps its old bytes),
  // checksums_valid false: for a builder that writes every byte, which then skips zero-filling
  // them first.
  static Frame take_for_overwrite(std::size_t len);
  // Gives a consumed frame's buffer back (anything may be passed; small ones are dropped).
  static void give(Frame&& frame);
};

}  // namespace vtoe::tcpip
