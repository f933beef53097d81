// libFuzzer harness: frames into a lone protocol engine (ARP, IPv4, ICMP, UDP, TCP with a
// listener and an open connection to the fuzzer's address). The input is a sequence of frames,
// each a 2-byte length and its bytes; time advances 1 ms per frame and the engine's timers run.
// Anything may be dropped, answered or reset; nothing may crash, leak or hang.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "models/tcpip/stack.h"

using namespace vtoe::tcpip;

namespace {

struct Sink : StackListener {
  std::size_t frames = 0;
  void transmit(Frame&& f) override { frames += f.size() > 0; }
  void tcp_event(Event, const EventInfo&) override {}
};

constexpr TimePs kMs = 1'000'000'000ull;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Sink sink;
  StackConfig cfg;
  cfg.mac = MacAddr::local(2);
  cfg.ip = 0x0A000002;  // 10.0.0.2
  cfg.max_connections = 16;
  Stack stack(cfg, sink);
  stack.listen(80, 4, 0);
  stack.udp_bind(7);
  stack.connect(0x0A000001, 5001, 0, 0);  // SYN_SENT to 10.0.0.1, which the input may answer
  TimePs now = 0;
  std::size_t i = 0;
  while (i + 2 <= size) {
    const std::size_t len = (data[i] | (data[i + 1] << 8)) % 1600;
    i += 2;
    const std::size_t n = len < size - i ? len : size - i;
    stack.receive_frame(data + i, n, now);
    i += n;
    now += kMs;
    while (stack.next_deadline() <= now) stack.poll(now);
  }
  // Let every timer (retransmissions, TIME-WAIT, ARP) run out: 3 simulated minutes.
  for (int k = 0; k < 1000 && stack.next_deadline() <= now + 180'000 * kMs; ++k) {
    now = stack.next_deadline();
    stack.poll(now);
  }
  return 0;
}
