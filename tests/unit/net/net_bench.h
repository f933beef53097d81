// Test bench pieces for network models: a driver whose SC_THREAD runs a test body, a frame sink
// that records arrival times, frame builders, and sc_main that makes SystemC warnings fail.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <systemc>
#include <utility>
#include <vector>

#include "models/core/module.h"
#include "models/net/frame.h"
#include "tests/support/bench.h"

namespace vtoe::test {

using Driver = Proc;  // a test's traffic source

struct Arrival {
  core::TimePs time;
  net::Frame frame;
};

class Collector : public net::FrameSink {
 public:
  void receive_frame(net::Frame&& frame) override {
    arrivals.push_back({core::now_ps(), std::move(frame)});
  }
  std::vector<Arrival> arrivals;
};

using Mac = std::array<std::uint8_t, 6>;

// Ethernet frame of `len` bytes (header included) to `dst`, with a 32-bit tag after the header.
inline net::Frame make_frame(const Mac& dst, std::size_t len, std::uint32_t tag = 0,
                             std::uint16_t ethertype = 0x88b5) {
  net::Frame f(len, 0);
  const Mac src{0x02, 0, 0, 0, 0, 0x99};
  for (int i = 0; i < 6; ++i) {
    f[i] = dst[i];
    f[6 + i] = src[i];
  }
  f[12] = static_cast<std::uint8_t>(ethertype >> 8);
  f[13] = static_cast<std::uint8_t>(ethertype);
  for (int i = 0; i < 4 && 14 + i < static_cast<int>(len); ++i) {
    f[14 + i] = static_cast<std::uint8_t>(tag >> (8 * i));
  }
  return f;
}

inline std::uint32_t tag_of(const net::Frame& f) {
  std::uint32_t t = 0;
  for (int i = 0; i < 4; ++i) t |= static_cast<std::uint32_t>(f[14 + i]) << (8 * i);
  return t;
}

}  // namespace vtoe::test
