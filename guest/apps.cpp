#include "guest/apps.h"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "models/core/stream_pattern.h"

namespace vtoe::guest {

using cpu::CycleClass;

WorkloadType parse_workload_type(const std::string& text) {
  if (text == "tcp_tx") return WorkloadType::TcpTx;
  if (text == "tcp_rx") return WorkloadType::TcpRx;
  if (text == "cpu") return WorkloadType::Cpu;
  if (text == "rpc") return WorkloadType::Rpc;
  if (text == "sink") return WorkloadType::Sink;
  if (text == "echo") return WorkloadType::Echo;
  if (text == "iperf3") return WorkloadType::Iperf3;
  if (text == "flows") return WorkloadType::Flows;
  if (text == "connect") return WorkloadType::Connect;
  throw std::invalid_argument("unknown workload type '" + text + "'");
}

Path parse_path(const std::string& text) {
  if (text == "socket") return Path::Socket;
  if (text == "shm") return Path::Shm;
  if (text == "user") return Path::User;
  throw std::invalid_argument("unknown path '" + text + "'");
}

const char* to_string(Path path) {
  switch (path) {
    case Path::Socket:
      return "socket";
    case Path::Shm:
      return "shm";
    case Path::User:
      return "user";
  }
  return "?";
}

const std::vector<core::Param<Workload>>& workload_params() {
  using core::ParamKind;
  using W = Workload;
  static const std::vector<core::Param<W>> params = {
      core::enum_param<W>(
          "vms[].workload.type",
          {"tcp_tx", "tcp_rx", "cpu", "rpc", "sink", "echo", "iperf3", "flows", "connect"},
          "tcp_tx",
          "Application: tcp_tx sends to the peer, tcp_rx receives from it, cpu only computes, rpc "
          "sends requests and waits for responses; sink and echo serve clients (e.g. real hosts "
          "through NetVP) on workload.port; iperf3 is an iperf3 server there (TCP tests, "
          "forward or reverse, parallel streams; transactions = tests completed); flows opens a "
          "connection per flow, sends message_size bytes, reads response_size bytes and closes "
          "(transactions = flows, mean latency = time to completion); connect opens a "
          "connection and closes it at once, one after another (transactions = connections "
          "set up, latency = connect() until established; a sink or the peer accepts them)",
          [](W& w) -> auto& { return w.type; }, parse_workload_type,
          [](WorkloadType t) { return to_string(t); }),
      core::param<W>(ParamKind::Bytes, "vms[].workload.message_size", "8000B",
                     "Bytes per send() call (a bare number is bytes)",
                     [](W& w) -> auto& { return w.message_size; })
          .range("1B", "1MiB"),
      core::param<W>(ParamKind::Uint, "vms[].workload.port", "5001",
                     "TCP port of the workload's connection",
                     [](W& w) -> auto& { return w.port; })
          .range("1", "65535"),
      core::param<W>(ParamKind::String, "vms[].workload.peer", "",
                     "tcp_tx, tcp_rx, rpc with links: the host (hosts[].name) at the other end "
                     "of the connection, on workload.port; empty = hosts[0]. tcp_tx, rpc, flows: "
                     "or another VM's name (vms[].name), whose sink or echo serves it inside "
                     "the TOE (toe.loopback)",
                     [](W& w) -> auto& { return w.peer; }),
      core::param<W>(ParamKind::Uint, "vms[].workload.backlog", "16",
                     "tcp_rx, sink, echo, iperf3: connections the TOE completes and queues for "
                     "accept() (listen backlog); SYNs beyond it are dropped and counted "
                     "(toe.ppm.tcpip drop_listen_overflow)",
                     [](W& w) -> auto& { return w.backlog; })
          .range("1", "65535"),
      core::param<W>(ParamKind::Uint, "vms[].workload.workers", "0",
                     "sink, echo: most server processes serving connections at once (a worker "
                     "pool, as a pre-forking server's limit); accept() waits while all are busy. "
                     "0 = one per open connection",
                     [](W& w) -> auto& { return w.workers; })
          .range("0", "1000000"),
      core::param<W>(ParamKind::Bytes, "vms[].workload.total_bytes", "0",
                     "Bytes to transfer, then stop; 0 = unlimited",
                     [](W& w) -> auto& { return w.total_bytes; }),
      core::param<W>(ParamKind::Bytes, "vms[].workload.response_size", "64B",
                     "rpc: bytes of each response", [](W& w) -> auto& { return w.response_size; })
          .range("1B", "1MiB"),
      core::param<W>(ParamKind::Uint, "vms[].workload.connections", "1",
                     "rpc: connections to the peer opened first and then served round robin, "
                     "one request outstanding at a time (SocksDirect's many-connection test); "
                     "echo: one process accepts this many and answers on each in turn, "
                     "message_size bytes at a time (1 = a process per connection)",
                     [](W& w) -> auto& { return w.connections; })
          .range("1", "65536"),
      core::param<W>(ParamKind::Uint, "vms[].workload.flows", "0",
                     "flows: flows in all, one after another; 0 = until the run ends",
                     [](W& w) -> auto& { return w.flows; }),
      core::param<W>(ParamKind::Uint, "vms[].workload.processes", "1",
                     "tcp_tx, rpc, flows, cpu: processes running the workload, each with a "
                     "connection of its own, placed on the cores round robin over vms[].pin "
                     "(servers start a process per connection instead: workload.workers)",
                     [](W& w) -> auto& { return w.processes; })
          .range("1", "1024"),
      core::param<W>(ParamKind::Time, "vms[].workload.gap", "0s",
                     "flows: from a flow's close to the next flow's connect()",
                     [](W& w) -> auto& { return w.gap_ps; }),
      core::enum_param<W>(
          "vms[].workload.path", {"socket", "shm", "user"}, "socket",
          "How messages travel: socket = kernel sockets over the TOE; shm = a polled ring "
          "pair in the shared_memory[] region that names this VM (rpc, tcp_tx to the VM "
          "workload.peer names, echo, sink serving it; no system call, interrupt or TOE); "
          "user = the VM's TOE channel mapped into the process and polled, no system call or "
          "interrupt (native and da only)",
          [](W& w) -> auto& { return w.path; }, parse_path,
          [](Path p) { return to_string(p); }),
      core::param<W>(ParamKind::Bool, "vms[].workload.zero_copy", "false",
                     "Messages of at least guest.costs.remap_threshold bytes move without a "
                     "copy: shm remaps their pages, socket and user let the TOE's DMA read and "
                     "write the pinned user pages (guest.costs.page_remap per 4 KiB page)",
                     [](W& w) -> auto& { return w.zero_copy; }),
      core::param<W>(ParamKind::Uint, "vms[].workload.active", "0",
                     "rpc: processes that send requests; the others (index >= active) connect "
                     "and wait for work that never comes, idle co-located workers. 0 = all",
                     [](W& w) -> auto& { return w.active; }),
      core::param<W>(ParamKind::Bool, "vms[].workload.cooperative", "false",
                     "rpc, path user, processes on one core: user-level threads of one process "
                     "that hand the core to each other when a poll finds nothing "
                     "(guest.costs.coop_switch), instead of kernel processes",
                     [](W& w) -> auto& { return w.cooperative; }),
      core::param<W>(ParamKind::Time, "vms[].workload.think_time", "0s",
                     "rpc: mean wait before each request, exponentially distributed from the "
                     "seed (requests arrive at random, a Poisson process while responses keep "
                     "up); latency is timed from the request's send(). 0 = back to back",
                     [](W& w) -> auto& { return w.think_ps; }),
      core::param<W>(ParamKind::Time, "vms[].workload.start", "0s", "When the workload starts",
                     [](W& w) -> auto& { return w.start_ps; }),
      core::param<W>(ParamKind::Time, "vms[].workload.stop", "0s",
                     "When the workload stops; 0 = never", [](W& w) -> auto& { return w.stop_ps; }),
      core::param<W>(ParamKind::Bool, "vms[].workload.expect_progress", "true",
                     "tcp_tx, tcp_rx, rpc, flows, connect: a workload running in the measured "
                     "window that delivers no byte and completes no transaction there ends the "
                     "run with a warning and exit status 5 (docs/outputs.md); false for one "
                     "meant to move nothing",
                     [](W& w) -> auto& { return w.expect_progress; }),
  };
  return params;
}

const char* to_string(WorkloadType type) {
  switch (type) {
    case WorkloadType::TcpTx:
      return "tcp_tx";
    case WorkloadType::TcpRx:
      return "tcp_rx";
    case WorkloadType::Cpu:
      return "cpu";
    case WorkloadType::Rpc:
      return "rpc";
    case WorkloadType::Sink:
      return "sink";
    case WorkloadType::Echo:
      return "echo";
    case WorkloadType::Iperf3:
      return "iperf3";
    case WorkloadType::Flows:
      return "flows";
    case WorkloadType::Connect:
      return "connect";
  }
  return "?";
}

void CoopGroup::acquire() {
  if (!held) {
    held = true;
    return;
  }
  sc_core::sc_event mine;
  waiting.push_back(&mine);
  sc_core::wait(mine);  // handed over by release(): held stays true
}

void CoopGroup::release() {
  if (waiting.empty()) {
    held = false;
    return;
  }
  sc_core::sc_event* next = waiting.front();
  waiting.pop_front();
  next->notify(sc_core::SC_ZERO_TIME);
}

Application::Application(const sc_core::sc_module_name& name, const Workload& workload,
                         SocketLayer& sockets, cpu::Core& core, int owner, const GuestCosts& costs,
                         std::uint32_t index, CoopGroup* group)
    : core::Module(name),
      workload_(workload),
      index_(index),
      group_(group),
      sockets_(sockets),
      core_(core),
      ctx_(group && group->ctx ? *group->ctx
                               : core.add_context(std::string(this->name()), 2, owner)),
      costs_(costs),
      server_processes_(stats_.counter("server_processes",
                                       "sink, echo: server processes started (workload.workers "
                                       "bounds them)")),
      iperf3_(this->name(), workload_, sockets_, core_, ctx_, owner, costs_, counters_) {
  if (group_ && !group_->ctx) group_->ctx = &ctx_;
  // Each process its own stream of think times: the scenario's seed, the VM, the process.
  rng_.seed(workload_.seed * 0x9e3779b97f4a7c15ull + index_ + 1);
  SC_THREAD(run);
}

void Application::yield() {
  if (!group_ || group_->waiting.empty()) return;
  group_->release();
  group_->acquire();
  core_.execute(ctx_, costs_.coop_switch, CycleClass::GuestUser);
}

bool Application::stopped() const {
  if (workload_.stop_ps && core::now_ps() >= workload_.stop_ps) return true;
  if (workload_.total_bytes && counters_.tx_bytes + counters_.rx_bytes >= workload_.total_bytes)
    return true;
  return false;
}

void Application::fail(const std::string& why) {
  counters_.failed = true;
  counters_.error = why;
  VTOE_LOG(log_, Warn) << why;
}

void Application::use_shared_memory(GuestMemory& view, std::uint64_t addr, std::uint64_t bytes,
                                    std::uint64_t slot, bool first) {
  const std::uint64_t half = bytes / 2;
  core::Counter& garbage = stats_.counter(
      "shm_garbage",
      "workload.path shm: ring indices and lengths the other side wrote that failed their "
      "checks (messages dropped)");
  auto ring = [&](std::uint64_t at) {
    return std::make_unique<ShmRing>(view, at, half, slot, core_, costs_, garbage);
  };
  shm_tx_ = ring(first ? addr : addr + half);
  shm_rx_ = ring(first ? addr + half : addr);
}

void Application::run() {
  if (workload_.start_ps) sc_core::wait(core::ps(workload_.start_ps));
  if (workload_.path == Path::Shm) return run_shm();
  switch (workload_.type) {
    case WorkloadType::TcpTx:
      run_tx();
      break;
    case WorkloadType::TcpRx:
      run_rx();
      break;
    case WorkloadType::Cpu:
      run_cpu();
      break;
    case WorkloadType::Rpc:
      run_rpc();
      break;
    case WorkloadType::Sink:
      run_server(false);
      break;
    case WorkloadType::Echo:
      run_server(true);
      break;
    case WorkloadType::Iperf3:
      run_iperf3();
      break;
    case WorkloadType::Flows:
      run_flows();
      break;
    case WorkloadType::Connect:
      run_connect();
      break;
  }
}

int Application::listen_on_port() {
  const int ls = sockets_.socket(ctx_);
  if (ls < 0) {
    fail("socket() failed");
    return -1;
  }
  if (SockError e = sockets_.listen(ctx_, ls, workload_.port, workload_.backlog);
      e != SockError::Ok) {
    fail("listen() failed with error " + std::to_string(static_cast<int>(e)));
    return -1;
  }
  return ls;
}

void Application::run_tx() {
  const int s = sockets_.socket(ctx_);
  if (s < 0) return fail("socket() failed");
  if (SockError e = sockets_.connect(ctx_, s, workload_.peer_ip, workload_.port);
      e != SockError::Ok)
    return fail("connect() failed with error " + std::to_string(static_cast<int>(e)));
  const std::size_t size = workload_.message_size;
  // The message is the stream's next bytes: sent from where the pattern is kept, or (a message
  // longer than its period) from a buffer filled with them.
  const bool in_place = core::StreamPattern::view(0, size) != nullptr;
  std::vector<std::uint8_t>& msg = buffer_;
  if (!in_place) msg.assign(size, 0);
  std::uint64_t offset = 0;
  // Each message's latency: from its send() to the completion that covers its last byte.
  core::StreamClock done(size, &counters_.latency);
  sockets_.time_send_done(s, &done);
  while (!stopped()) {
    const std::uint8_t* data = core::StreamPattern::view(offset, size);
    if (!in_place) {
      core::StreamPattern::fill(offset, msg.data(), size);
      data = msg.data();
    }
    const core::TimePs t0 = core::now_ps();
    const std::size_t n =
        sockets_.send(ctx_, s, data, size, {costs_.app_per_message, CycleClass::GuestUser});
    counters_.tx_bytes += n;
    offset += n;
    done.handed(offset, t0);
    if (peer_clock_) peer_clock_->handed(offset, t0);
    if (n < size) {
      sockets_.time_send_done(s, nullptr);
      return fail("send() stopped early: connection lost");
    }
  }
  sockets_.time_send_done(s, nullptr);
  sockets_.close(ctx_, s);
}

void Application::run_rx() {
  const int ls = listen_on_port();
  if (ls < 0) return;
  const int s = sockets_.accept(ctx_, ls);
  if (s < 0) return fail("accept() failed with error " + std::to_string(s));
  std::vector<std::uint8_t>& msg = buffer_;
  msg.assign(workload_.message_size, 0);
  std::uint64_t offset = 0;
  while (!stopped()) {
    // A bulk receiver lets the TOE fill the kernel buffer before it is told (paper §2.2).
    const std::size_t n = sockets_.recv(ctx_, s, msg.data(), msg.size(), /*immediate=*/false);
    if (n == 0) break;  // peer closed
    if (core::StreamPattern::mismatches(offset, msg.data(), n) != 0)
      return fail("received data corrupted in bytes " + std::to_string(offset) + ".." +
                  std::to_string(offset + n));
    offset += n;
    counters_.rx_bytes += n;
    if (peer_clock_) peer_clock_->taken(offset, core::now_ps());
    core_.execute(ctx_, costs_.app_per_message, CycleClass::GuestUser);
  }
  sockets_.close(ctx_, s);
}

void Application::run_cpu() {
  while (!workload_.stop_ps || core::now_ps() < workload_.stop_ps)
    core_.execute(ctx_, workload_.cpu_chunk_cycles, CycleClass::GuestUser);
}

// A server process accepts connections; each one is served by a process of its own (a context
// on the VM's core, like a forking server), so many clients are served at once.
void Application::run_server(bool echo) {
  const int ls = listen_on_port();
  if (ls < 0) return;
  if (echo && workload_.connections > 1) return run_echo_round_robin(ls);
  while (!stopped()) {
    // With a worker limit, the next connection waits in the accept queue until a worker is free.
    while (workload_.workers && idle_.empty() && workers_.size() >= workload_.workers)
      sc_core::wait(worker_idle_ev_);
    const int s = sockets_.accept(ctx_, ls);
    // A client that reset its connection before it was accepted (a connection-rate client's
    // abortive close) is no server failure.
    if (s == static_cast<int>(SockError::Reset)) continue;
    if (s < 0) return fail("accept() failed with error " + std::to_string(s));
    ++counters_.transactions;  // connections served
    if (!idle_.empty()) {
      Worker& w = *idle_.back();
      idle_.pop_back();
      w.sock = s;
      w.work_ev.notify(sc_core::SC_ZERO_TIME);
      continue;
    }
    Worker& w = workers_.emplace_back();
    const std::string name = "worker" + std::to_string(workers_.size());
    cpu::Core& on = worker_cores_.empty()
                        ? core_
                        : *worker_cores_[(workers_.size() - 1) % worker_cores_.size()];
    w.ctx = &on.add_context(std::string(this->name()) + "." + name, ctx_.priority(), ctx_.domain());
    w.buf.assign(std::max<std::uint32_t>(workload_.message_size, 1), 0);
    w.sock = s;
    w.echo = echo;
    ++server_processes_;
    sc_core::sc_spawn([this, &w] { worker_loop(w); }, name.c_str());
  }
}

// echo with workload.connections > 1: one process accepts that many connections, then answers
// a message on each in turn, the order in which the peer's rpc sends them (SocksDirect's test:
// two processes, many connections between them). A process per connection would measure the
// process switches instead.
void Application::run_echo_round_robin(int listening) {
  std::vector<int> conns;
  while (conns.size() < workload_.connections && !stopped()) {
    const int s = sockets_.accept(ctx_, listening);
    if (s == static_cast<int>(SockError::Reset)) continue;
    if (s < 0) return fail("accept() failed with error " + std::to_string(s));
    ++counters_.transactions;  // connections served
    conns.push_back(s);
  }
  std::vector<std::uint8_t>& buf = buffer_;
  buf.assign(std::max<std::uint32_t>(workload_.message_size, 1), 0);
  const cpu::Core::Work handling{costs_.app_per_message, CycleClass::GuestUser};
  for (std::size_t next = 0; !conns.empty() && !stopped(); next = (next + 1) % conns.size()) {
    const int s = conns[next];
    std::size_t got = 0;
    while (got < buf.size()) {
      const std::size_t n = sockets_.recv(ctx_, s, buf.data() + got, buf.size() - got);
      if (n == 0) return;  // the client closed
      got += n;
    }
    counters_.rx_bytes += got;
    if (sockets_.send(ctx_, s, buf.data(), got, handling) < got) return fail("send() failed");
    counters_.tx_bytes += got;
  }
}

void Application::run_iperf3() {
  const int ls = listen_on_port();
  if (ls < 0) return;
  iperf3_.run(ls);
}

void Application::worker_loop(Worker& w) {
  for (;;) {
    while (w.sock == 0) sc_core::wait(w.work_ev);
    serve(w);
    w.sock = 0;
    idle_.push_back(&w);
    worker_idle_ev_.notify(sc_core::SC_ZERO_TIME);
  }
}

void Application::serve(Worker& w) {
  for (;;) {
    // An echo server answers each piece at once; a sink lets the kernel buffer fill.
    const std::size_t n =
        sockets_.recv(*w.ctx, w.sock, w.buf.data(), w.buf.size(), /*immediate=*/w.echo);
    if (n == 0) break;  // the client closed
    counters_.rx_bytes += n;
    const cpu::Core::Work handling{costs_.app_per_message, CycleClass::GuestUser};
    if (!w.echo) core_.execute(*w.ctx, handling.cycles, handling.cls);
    if (w.echo) {
      if (sockets_.send(*w.ctx, w.sock, w.buf.data(), n, handling) < n) break;
      counters_.tx_bytes += n;
    }
  }
  sockets_.close(*w.ctx, w.sock);
}

void Application::run_rpc() {
  // A cooperative thread runs only while it holds its process's token; a poll that finds
  // nothing hands it on (SocketLayer's idle hook, set for this thread's waits).
  if (group_) {
    group_->acquire();
    sockets_.set_idle_hook([this] { yield(); });
  }
  // All connections first (pre-established), then requests on each in turn.
  std::vector<int> conns;
  for (std::uint32_t i = 0; i < workload_.connections; ++i) {
    const int s = sockets_.socket(ctx_);
    if (s < 0) return fail("socket() failed");
    if (SockError e = sockets_.connect(ctx_, s, workload_.peer_ip, workload_.port);
        e != SockError::Ok)
      return fail("connect() failed with error " + std::to_string(static_cast<int>(e)) +
                  " on connection " + std::to_string(i + 1));
    conns.push_back(s);
  }
  if (workload_.active && index_ >= workload_.active) {
    // An idle worker: connected, with nothing to do. A kernel process sleeps in recv(); a
    // cooperative thread is parked without the token. Neither costs the core anything.
    if (group_) {
      group_->release();
      sc_core::wait(worker_idle_ev_);  // never notified for an rpc process
    }
    std::uint8_t b = 0;
    sockets_.recv(ctx_, conns.front(), &b, 1);
    return;
  }
  std::vector<std::uint8_t>& req = buffer_;
  req.assign(workload_.message_size, 0x5a);
  std::vector<std::uint8_t>& resp = reply_;
  resp.assign(std::max<std::uint32_t>(workload_.response_size, 1), 0);
  for (std::size_t next = 0; !stopped(); next = (next + 1) % conns.size()) {
    const int s = conns[next];
    if (workload_.think_ps) {
      // -ln(1 - u) * mean, u uniform in [0, 1) from the top 53 bits of one draw.
      const double u = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);
      const double wait = -std::log1p(-u) * static_cast<double>(workload_.think_ps);
      if (group_) group_->release();
      sc_core::wait(core::ps(static_cast<core::TimePs>(wait)));
      if (group_) group_->acquire();
      if (stopped()) break;
    }
    const core::TimePs t0 = core::now_ps();
    if (sockets_.send(ctx_, s, req.data(), req.size(),
                      {costs_.app_per_message, CycleClass::GuestUser}) < req.size())
      return fail("send() failed");
    counters_.tx_bytes += req.size();
    std::size_t got = 0;
    while (got < workload_.response_size) {
      const std::size_t n = sockets_.recv(ctx_, s, resp.data(), workload_.response_size - got);
      if (n == 0) return fail("connection closed during a response");
      got += n;
    }
    counters_.rx_bytes += got;
    ++counters_.transactions;
    counters_.latency_sum_ps += core::now_ps() - t0;
    counters_.latency.record(core::now_ps() - t0);
  }
  for (int s : conns) sockets_.close(ctx_, s);
}

void Application::run_flows() {
  std::vector<std::uint8_t>& req = buffer_;
  req.assign(workload_.message_size, 0x5a);
  std::vector<std::uint8_t>& resp = reply_;
  resp.assign(std::max<std::uint32_t>(workload_.response_size, 1), 0);
  for (std::uint64_t done = 0; !stopped() && (workload_.flows == 0 || done < workload_.flows);
       ++done) {
    const core::TimePs t0 = core::now_ps();
    const int s = sockets_.socket(ctx_);
    if (s < 0) return fail("socket() failed");
    if (SockError e = sockets_.connect(ctx_, s, workload_.peer_ip, workload_.port);
        e != SockError::Ok)
      return fail("connect() failed with error " + std::to_string(static_cast<int>(e)));
    if (sockets_.send(ctx_, s, req.data(), req.size(),
                      {costs_.app_per_message, CycleClass::GuestUser}) < req.size())
      return fail("send() failed");
    counters_.tx_bytes += req.size();
    std::size_t got = 0;
    core::TimePs first = 0;
    while (got < workload_.response_size) {
      const std::size_t n = sockets_.recv(ctx_, s, resp.data(), workload_.response_size - got);
      if (n == 0) return fail("connection closed during a response");
      if (got == 0) first = core::now_ps();
      got += n;
    }
    counters_.rx_bytes += got;
    ++counters_.transactions;
    counters_.latency_sum_ps += core::now_ps() - t0;
    counters_.latency.record(core::now_ps() - t0);
    counters_.first_byte_sum_ps += first - t0;
    sockets_.close(ctx_, s);
    if (workload_.gap_ps) sc_core::wait(core::ps(workload_.gap_ps));
  }
}

// Connection setup as fast as one process can: socket, connect, close, again (SocksDirect's
// connection-creation test). A process per core (workload.processes) measures the rate per core.
void Application::run_connect() {
  for (std::uint64_t done = 0; !stopped() && (workload_.flows == 0 || done < workload_.flows);
       ++done) {
    const core::TimePs t0 = core::now_ps();
    const int s = sockets_.socket(ctx_);
    if (s < 0) return fail("socket() failed");
    if (SockError e = sockets_.connect(ctx_, s, workload_.peer_ip, workload_.port);
        e != SockError::Ok) {
      sockets_.close(ctx_, s);
      return fail("connect() failed with error " + std::to_string(static_cast<int>(e)));
    }
    ++counters_.transactions;
    counters_.latency_sum_ps += core::now_ps() - t0;
    counters_.latency.record(core::now_ps() - t0);
    core_.execute(ctx_, costs_.app_per_message, CycleClass::GuestUser);
    sockets_.close(ctx_, s, /*abortive=*/true);  // no TIME_WAIT: the TOE's contexts stay free
    if (workload_.gap_ps) sc_core::wait(core::ps(workload_.gap_ps));
  }
}

// Shared memory: the application polls its ring for what it waits for; nothing crosses the kernel
// or the TOE. rpc times each request/response as over sockets.
void Application::run_shm() {
  if (!shm_tx_ || !shm_rx_) return fail("workload.path shm without a shared_memory region");
  const ShmRing::Stop stop = [this] { return stopped(); };
  const bool zc = workload_.zero_copy;
  std::vector<std::uint8_t>& msg = buffer_;
  msg.assign(std::max<std::uint32_t>(workload_.message_size, 1), 0x5a);
  std::vector<std::uint8_t>& resp = reply_;
  resp.assign(std::max<std::uint32_t>(workload_.response_size, 1), 0);
  switch (workload_.type) {
    case WorkloadType::Rpc:
      while (!stopped()) {
        const core::TimePs t0 = core::now_ps();
        core_.execute(ctx_, costs_.app_per_message, CycleClass::GuestUser);
        if (!shm_tx_->send(ctx_, msg.data(), workload_.message_size, zc, stop)) return;
        counters_.tx_bytes += workload_.message_size;
        const long long n = shm_rx_->recv(ctx_, resp.data(), resp.size(), zc, stop);
        if (n < 0) return;
        counters_.rx_bytes += static_cast<std::uint64_t>(n);
        ++counters_.transactions;
        counters_.latency_sum_ps += core::now_ps() - t0;
        counters_.latency.record(core::now_ps() - t0);
      }
      return;
    case WorkloadType::TcpTx:
      while (!stopped()) {
        core_.execute(ctx_, costs_.app_per_message, CycleClass::GuestUser);
        if (!shm_tx_->send(ctx_, msg.data(), workload_.message_size, zc, stop)) return;
        counters_.tx_bytes += workload_.message_size;
      }
      return;
    case WorkloadType::Echo:
    case WorkloadType::Sink:
      while (!stopped()) {
        const long long n = shm_rx_->recv(ctx_, msg.data(), msg.size(), zc, stop);
        if (n < 0) return;
        counters_.rx_bytes += static_cast<std::uint64_t>(n);
        ++counters_.transactions;
        core_.execute(ctx_, costs_.app_per_message, CycleClass::GuestUser);
        if (workload_.type == WorkloadType::Echo) {
          const std::size_t back = std::min<std::size_t>(static_cast<std::size_t>(n), msg.size());
          if (!shm_tx_->send(ctx_, msg.data(), back, zc, stop)) return;
          counters_.tx_bytes += back;
        }
      }
      return;
    default:
      return fail(std::string("workload.path shm carries rpc, tcp_tx, echo and sink, not ") +
                  to_string(workload_.type));
  }
}

}  // namespace vtoe::guest
