// An iperf3-compatible server (workload type iperf3), so that a real `iperf3 -c` (through NetVP)
// can test the guest as it tests any host. It speaks iperf3's control protocol on one port: the
// client's cookie, the JSON parameters, the data streams (each opening with the same cookie),
// the test's end, the JSON results both ways. TCP only, one test at a time, forward (the client
// sends) or reverse (-R, the guest sends), any number of parallel streams (-P); UDP, SCTP and
// bidirectional tests are refused with iperf3's "not implemented" error.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <systemc>
#include <vector>

#include "guest/socket_api.h"
#include "models/cpu/core.h"

namespace vtoe::guest {

struct AppCounters;
struct GuestCosts;
struct Workload;

class Iperf3Server {
 public:
  Iperf3Server(std::string name, const Workload& workload, SocketLayer& sockets, cpu::Core& core,
               cpu::Core::Context& ctx, int owner, const GuestCosts& costs, AppCounters& counters);

  // Serves tests until the workload stops; runs in the application's thread.
  void run(int listener);

 private:
  // One data stream, served by a process of its own (a context on the VM's core).
  struct Stream {
    cpu::Core::Context* ctx = nullptr;
    std::vector<std::uint8_t> buf;
    int sock = 0;          // 0 = idle
    bool running = false;  // set at TEST_RUNNING: the stream's process may start
    bool sender = false;
    bool counting = false;      // between TEST_RUNNING and TEST_END
    std::uint64_t counted = 0;  // the test's bytes, as iperf3 reports them
    sc_core::sc_event go;
  };

  void serve_test(int ctrl);
  bool recv_exact(int s, std::uint8_t* out, std::size_t n);
  bool send_all(int s, const void* data, std::size_t n);
  bool send_state(int s, std::int8_t state);
  bool recv_json(int s, std::string& text);  // 4-byte big-endian length, then the JSON
  bool send_json(int s, const std::string& text);
  void refuse(int ctrl);  // SERVER_ERROR with IEUNIMP, then close
  Stream& idle_stream();
  void stream_loop(Stream& st);

  std::string name_;
  const Workload& workload_;
  SocketLayer& sockets_;
  cpu::Core& core_;
  cpu::Core::Context& ctx_;
  int owner_;
  const GuestCosts& costs_;
  AppCounters& counters_;
  int listener_ = 0;
  std::deque<Stream> streams_;  // deque: the spawned processes keep references
  int senders_running_ = 0;
  sc_core::sc_event sender_done_;
};

}  // namespace vtoe::guest
