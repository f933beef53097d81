// The simulated peer host at the far end of the link: a MAC and the same protocol engine as the
// TOE (tcpip::Stack), with server and client applications driven by protocol events. It has no
// CPU model: it answers as fast as the protocol allows, so the platform under test is the limit.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/core/param.h"
#include "models/core/stream_clock.h"
#include "models/net/ethernet_mac.h"
#include "models/net/frame.h"
#include "models/tcpip/stack.h"

namespace vtoe::net {

// FlowClient: flows one after another, each a connection that sends a request, reads a response
// and closes (FlowServer answers each request with response_size bytes, then closes).
enum class PeerAppType { Sink, Source, Echo, RpcServer, Clients, FlowClient, FlowServer };

// One flow of a FlowClient, times in ps from its connect() (0: did not happen).
struct FlowRecord {
  core::TimePs start_ps = 0;       // connect(): the SYN leaves
  core::TimePs first_byte_ps = 0;  // time to first byte: the first response byte arrived
  core::TimePs last_byte_ps = 0;   // time to completion: the last response byte arrived
  bool ok = false;                 // the whole response arrived
};

// A load of many short client connections against a guest server (sink or echo): each client
// connects, sends `bytes` of the pattern stream, closes and is replaced by the next, `concurrency`
// at a time, `connections` in all.
struct PeerClients {
  std::uint64_t connections = 0;  // 0 = no client load
  std::uint32_t concurrency = 1;
  std::uint64_t bytes = 4096;
  std::uint32_t vm = 0;                   // the VM whose server the clients connect to
  core::TimePs start_ps = 1'000'000'000;  // 1 ms: the server has listened by then
  // Source addresses the clients connect from (the peer's own and aliases): each has its own
  // ephemeral port range towards the server, so more than one lets more clients be open at once.
  std::uint32_t addresses = 1;
};

// The scenario keys "network.clients.*", bound to PeerClients.
const std::vector<core::Param<PeerClients>>& peer_client_params();

struct PeerApp {
  PeerAppType type = PeerAppType::Sink;
  std::uint16_t port = 5001;        // listening port (sink, echo, rpc) or remote port (source)
  std::uint32_t remote_ip = 0;      // source: whom to connect to
  std::uint32_t request_size = 0;   // rpc: bytes per request
  std::uint32_t response_size = 0;  // rpc: bytes per response
  core::TimePs start_ps = 0;        // source, clients: first connection attempt
  bool verify_pattern = true;       // sink: check the guest's byte pattern
  bool reads = true;        // sink: false = an application that never reads (its window closes)
  PeerClients clients;      // clients: the load
  std::uint64_t flows = 0;  // flow client: flows in all, one after another
  core::TimePs gap_ps = 0;  // flow client: from a flow's last byte to the next connect
  std::vector<std::uint32_t> sources;  // clients: local addresses used in turn (empty: primary)
};

struct PeerHostParams {
  tcpip::StackConfig stack;
  double rate_bps = 10e9;
  // The peer stands for hosts that do not drop their own frames (Linux's qdisc pushes back on
  // the socket instead), so its MAC queue is deep.
  std::size_t tx_queue_frames = 1 << 16;
  std::size_t ecn_mark_frames = 0;  // CE-mark ECT frames at this MAC queue depth (0 = never)
  std::vector<PeerApp> apps;
};

class PeerHost : public core::Module, public tcpip::StackListener, public FrameSink {
 public:
  SC_HAS_PROCESS(PeerHost);
  PeerHost(const sc_core::sc_module_name& name, const PeerHostParams& params);

  EthernetMac& mac() { return *mac_; }
  tcpip::Stack& stack() { return *stack_; }
  std::uint64_t bytes_received() const { return rx_bytes_.value(); }
  std::uint64_t bytes_sent() const { return tx_bytes_.value(); }
  // The same counters, with the warm-up baseline (measured()).
  const core::Counter& rx_bytes_counter() const { return rx_bytes_; }
  const core::Counter& tx_bytes_counter() const { return tx_bytes_; }
  std::uint64_t pattern_errors() const { return pattern_errors_.value(); }
  std::uint64_t clients_done() const { return clients_done_.value(); }
  std::uint64_t clients_failed() const { return clients_failed_.value(); }
  // Every flow of the host's flow client, in order.
  const std::vector<FlowRecord>& flows() const { return flows_; }
  // Times the stream of the connection with `remote` (one a guest opens to a sink here, or a
  // source here opens to it): a sink takes its bytes from `clock` as it reads them, a source
  // stamps them on it as its stack takes them. Set before the connection exists; one per address.
  void time_stream(tcpip::Ipv4 remote, core::StreamClock* clock) { clocks_[remote] = clock; }
  // The applications that open connections (sources, clients, flow clients) start now, whatever
  // start time they were given (a platform whose guest boots first starts them when its
  // workload starts: give them a start time of UINT64_MAX, never, until then).
  void start_apps_now();

  // FrameSink (from the MAC) and StackListener (from the stack).
  void receive_frame(Frame&& frame) override;
  void transmit(tcpip::Frame&& frame) override;
  void tcp_event(tcpip::Event ev, const tcpip::EventInfo& info) override;
  void tcp_payload(tcpip::ConnId conn, tcpip::ConnId listener, std::size_t offset,
                   const std::uint8_t* data, std::size_t len) override;

 private:
  struct Conn {
    const PeerApp* app = nullptr;
    std::uint64_t rx_offset = 0;  // stream offset for pattern checks
    std::uint64_t tx_offset = 0;
    std::uint64_t owed = 0;              // echo/rpc: bytes to send back
    std::uint64_t request_bytes = 0;     // rpc: bytes of the current request
    bool closing = false;                // clients: everything sent, close() called
    std::size_t source = 0;              // clients: index of the source address
    std::size_t flow = 0;                // flow client: index in flows_
    core::StreamClock* clock = nullptr;  // time_stream(): a sink's or a source's stream
  };
  core::StreamClock* clock_for(tcpip::ConnId c) const;
  void start_sources();
  void start_clients(const PeerApp& app, core::TimePs now);
  void start_flow(const PeerApp& app, core::TimePs now);
  void flow_ended(Conn& conn);
  void client_ended(const PeerApp& app, bool ok);
  void timer_expired();
  void rearm();
  void drain(tcpip::ConnId c, Conn& conn);
  void fill(tcpip::ConnId c, Conn& conn);

  PeerHostParams params_;
  std::unique_ptr<EthernetMac> mac_;
  std::unique_ptr<tcpip::Stack> stack_;
  std::map<tcpip::ConnId, const PeerApp*> listeners_;
  std::map<tcpip::ConnId, Conn> conns_;
  std::map<tcpip::Ipv4, core::StreamClock*> clocks_;  // time_stream()
  std::vector<std::uint8_t> buf_;
  sc_core::sc_event timer_ev_;
  sc_core::sc_event retry_ev_;
  core::TimePs timer_at_ = UINT64_MAX;        // the stack's next deadline
  core::TimePs timer_armed_at_ = UINT64_MAX;  // when timer_ev_ fires (UINT64_MAX: not pending)
  static constexpr core::TimePs kTimerHorizonPs = 1'000'000'000;  // 1 ms: see stack_touched()
  core::Counter& rx_bytes_;
  core::Counter& tx_bytes_;
  core::Counter& pattern_errors_;
  core::Counter& connect_retries_;
  core::Counter& clients_done_;
  core::Counter& clients_failed_;
  std::uint64_t clients_started_ = 0;
  std::uint32_t clients_active_ = 0;
  std::vector<bool> source_ready_;    // clients: a client from this source has connected
  std::vector<bool> source_probing_;  // clients: its first client is on its way
  std::size_t next_source_ = 0;       // clients: the source address the next connection tries first
  std::vector<FlowRecord> flows_;     // flow client
  bool flow_active_ = false;          // flow client: a flow is under way
  core::TimePs next_flow_ps_ = 0;     // flow client: when the next flow may start
};

}  // namespace vtoe::net
