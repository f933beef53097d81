// Guest applications: the workloads of the paper's experiments. Each runs as one process (a core
// context of process priority) in a SystemC thread and counts the bytes its socket calls moved.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <systemc>
#include <vector>

#include "guest/iperf3_server.h"
#include "guest/shm_ring.h"
#include "guest/socket_api.h"
#include "models/core/histogram.h"
#include "models/core/module.h"
#include "models/core/param.h"
#include "models/core/stream_clock.h"
#include "models/cpu/core.h"

namespace vtoe::guest {

// tcp_tx/tcp_rx/rpc talk to the peer; sink/echo are servers for any client (e.g. real Linux hosts
// through NetVP), each accepted connection served by a process of its own; iperf3 serves iperf3
// clients (guest/iperf3_server.h).
// flows: short flows one after another, each a connection of its own (connect, request,
// response, close), timed from connect() to the first and to the last response byte.
// connect: connections set up and torn down one after another, nothing sent (the connection
// setup rate; latency = connect() to established).
enum class WorkloadType { TcpTx, TcpRx, Cpu, Rpc, Sink, Echo, Iperf3, Flows, Connect };
// How a workload's messages travel (docs/guest.md, "Paths inside one host"): kernel sockets over
// the TOE; a polled shared-memory ring pair (shared_memory[]); or the TOE channel mapped into
// the process and polled, with no system call or interrupt (native and da).
enum class Path { Socket, Shm, User };
Path parse_path(const std::string& text);
const char* to_string(Path path);
WorkloadType parse_workload_type(const std::string& text);
const char* to_string(WorkloadType type);

struct Workload {
  WorkloadType type = WorkloadType::TcpTx;
  std::uint32_t message_size = 8000;
  std::uint32_t response_size = 64;  // rpc
  std::uint32_t connections = 1;     // rpc: pre-established connections served round robin
  std::uint16_t port = 5001;         // peer port (tx, rpc) or local listening port (rx)
  std::uint16_t backlog = 16;        // rx, sink, echo: connections the TOE queues for accept
  std::uint32_t workers = 0;         // sink, echo: server processes at most (0 = no limit)
  std::uint32_t peer_ip = 0;
  std::string peer;  // the host this workload talks to (links:), empty = the first host
  std::uint64_t total_bytes = 0;  // 0 = unlimited
  core::TimePs start_ps = 0;
  core::TimePs stop_ps = 0;       // 0 = never
  double cpu_chunk_cycles = 1e6;  // cpu: work between checks of the stop time
  std::uint64_t flows = 0;        // flows: flows in all (0 = until the run ends)
  std::uint32_t processes = 1;    // tcp_tx, rpc, flows, cpu: processes running it
  core::TimePs gap_ps = 0;        // flows: from a flow's close to the next connect()
  Path path = Path::Socket;
  bool zero_copy = false;  // large messages by page remapping / DMA from pinned user pages
  // rpc: processes with an index >= active connect and then wait for work that never comes
  // (idle co-located workers); 0 = all active.
  std::uint32_t active = 0;
  // rpc, path user: the processes are user-level threads of one process that switch
  // cooperatively (guest.costs.coop_switch) when a poll finds nothing, SocksDirect's co-located
  // workers; idle ones are parked and cost nothing.
  bool cooperative = false;
  // tcp_tx, tcp_rx, rpc, flows, connect: false for a workload meant to move nothing in the
  // measured window; otherwise such a window ends the run with a warning (app/runner.cpp).
  bool expect_progress = true;
  // rpc: mean of an exponentially distributed wait before each request (requests arrive as a
  // Poisson process while the server keeps up); 0 = back to back.
  core::TimePs think_ps = 0;
  std::uint64_t seed = 1;  // the scenario's seed and the VM's index (set by the builder)
};

// The threads of a cooperative process: one runs at a time, holding the token.
struct CoopGroup {
  cpu::Core::Context* ctx = nullptr;  // the one process they all run as
  bool held = false;
  std::deque<sc_core::sc_event*> waiting;  // threads ready to run, first come first served
  void acquire();
  void release();
};

// The scenario keys of a VM's workload ("vms[].workload.*"), bound to Workload's members; peer_ip
// and cpu_chunk_cycles are set by the builder. Fill one VM's with config::fill_item.
const std::vector<core::Param<Workload>>& workload_params();

// Application-level progress, read by the runner.
struct AppCounters {
  std::uint64_t tx_bytes = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t transactions = 0;
  std::uint64_t latency_sum_ps = 0;
  std::uint64_t first_byte_sum_ps = 0;  // flows: time to first byte, summed over completed flows
  // rpc: each request/response's latency; flows: each flow's time to completion; connect: each
  // connection's setup; tcp_tx: each message's send() to the SendDone completion that covers its
  // last byte (ps).
  core::LogHistogram latency;
  bool failed = false;
  std::string error;
};

class Application : public core::Module {
 public:
  SC_HAS_PROCESS(Application);
  // `index`: which of the workload's processes it is; `group`: the cooperative process it is a
  // thread of (null: a process of its own).
  Application(const sc_core::sc_module_name& name, const Workload& workload, SocketLayer& sockets,
              cpu::Core& core, int owner, const GuestCosts& costs, std::uint32_t index = 0,
              CoopGroup* group = nullptr);

  // workload.path shm: the region [addr, addr + bytes) of `view` (this VM's mapping of it); the
  // first VM of shared_memory[].vms writes the first half's ring and reads the second's.
  void use_shared_memory(GuestMemory& view, std::uint64_t addr, std::uint64_t bytes,
                         std::uint64_t slot, bool first);

  const AppCounters& counters() const { return counters_; }
  const Workload& workload() const { return workload_; }
  // sink, echo: the cores its per-connection server processes go to, round robin (a VM with
  // several vCPUs); empty = the application's own core.
  void set_worker_cores(std::vector<cpu::Core*> cores) { worker_cores_ = std::move(cores); }
  // tcp_tx: stamps each message at its send() on `clock` too (a simulated peer's receiver takes
  // them); tcp_rx: each message's last byte returned by recv() is taken from `clock` (the peer
  // stamped it). The platform owns the clock.
  void set_peer_clock(core::StreamClock* clock) { peer_clock_ = clock; }

 private:
  void run();
  void run_tx();
  void run_rx();
  void run_cpu();
  void run_rpc();
  void run_server(bool echo);
  void run_echo_round_robin(int listening);
  void run_iperf3();
  void run_flows();
  void run_shm();
  void run_connect();  // workload.path shm: rpc, tcp_tx, echo, sink over the shared rings
  int listen_on_port();  // a socket listening on workload.port, or -1 (the run failed)
  // A server's process that serves accepted connections one after another (a pre-forked worker):
  // as many exist as connections were ever open at once, so a server's footprint follows its
  // concurrency, not the number of connections it has served.
  struct Worker {
    cpu::Core::Context* ctx = nullptr;
    std::vector<std::uint8_t> buf;
    int sock = 0;  // the connection being served; 0 = idle
    bool echo = false;
    sc_core::sc_event work_ev;
  };
  void worker_loop(Worker& w);
  void serve(Worker& w);
  bool stopped() const;
  void fail(const std::string& why);

  void yield();  // cooperative: let a ready thread run, then wait for the token again

  Workload workload_;
  std::uint32_t index_ = 0;
  CoopGroup* group_ = nullptr;
  SocketLayer& sockets_;
  cpu::Core& core_;
  std::vector<cpu::Core*> worker_cores_;
  cpu::Core::Context& ctx_;
  GuestCosts costs_;
  AppCounters counters_;
  core::StreamClock* peer_clock_ = nullptr;  // set_peer_clock()
  std::mt19937_64 rng_;                      // rpc: think times (workload.think_time)
  // Message buffers live here, not on the thread's stack: a thread still blocked when the
  // simulation ends is never unwound.
  std::vector<std::uint8_t> buffer_;
  std::vector<std::uint8_t> reply_;
  std::deque<Worker> workers_;        // deque: the spawned processes keep references
  std::vector<Worker*> idle_;         // workers waiting for a connection
  sc_core::sc_event worker_idle_ev_;  // a worker became idle (workload.workers reached)
  core::Counter& server_processes_;
  std::unique_ptr<ShmRing> shm_tx_, shm_rx_;
  Iperf3Server iperf3_;
};

}  // namespace vtoe::guest
