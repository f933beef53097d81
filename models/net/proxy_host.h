// ProxyHost: a split-TCP proxy as a light node (no CPU model, as PeerHost): two ports, each a MAC
// with its own protocol engine and address, and an application that splices every connection
// accepted on the upstream port to one it opens from the downstream port to a fixed next hop.
//
// Early SYN forwarding (ESF, Miniproxy section 3, after Ladiwala et al.): with `early_syn` the
// downstream connect() happens when the client's SYN arrives (the engine reports it through
// StackListener::syn_received; the SYN-ACK to the client leaves at once as always), so the two
// handshakes overlap; without it, when the upstream handshake completes (Accepted). Either way
// the client's data waits in the upstream connection's receive buffer until the downstream side
// is established, and is then moved as fast as both windows allow, in both directions. A FIN is
// passed on once everything before it has been moved; a reset or time-out aborts the other side.
//
// Ports: up() and down() are the two MACs; bind their to_wire/from_wire to link ends.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/net/ethernet_mac.h"
#include "models/net/frame.h"
#include "models/tcpip/stack.h"

namespace vtoe::net {

struct ProxyHostParams {
  tcpip::StackConfig up;    // the client side: address, MAC, protocol settings
  tcpip::StackConfig down;  // the server side
  double up_rate_bps = 10e9;
  double down_rate_bps = 10e9;
  std::size_t tx_queue_frames = 1 << 16;  // deep, as PeerHost's: a host pushes back, not drops
  std::uint16_t listen_port = 80;
  tcpip::Ipv4 next_ip = 0;  // the next hop: the server or the next proxy
  std::uint16_t next_port = 80;
  bool early_syn = true;
};

class ProxyHost : public core::Module {
 public:
  SC_HAS_PROCESS(ProxyHost);
  ProxyHost(const sc_core::sc_module_name& name, const ProxyHostParams& params);
  ~ProxyHost() override;

  EthernetMac& up() { return *up_.mac; }
  EthernetMac& down() { return *down_.mac; }
  tcpip::Stack& up_stack() { return *up_.stack; }
  tcpip::Stack& down_stack() { return *down_.stack; }

  std::uint64_t spliced() const { return spliced_.value(); }
  std::uint64_t bytes_up() const { return bytes_up_.value(); }
  std::uint64_t bytes_down() const { return bytes_down_.value(); }

 private:
  // One port: a MAC and its engine; frames and events of the engine come back here.
  struct Side : tcpip::StackListener, FrameSink {
    ProxyHost* host = nullptr;
    bool upstream = false;
    std::unique_ptr<EthernetMac> mac;
    std::unique_ptr<tcpip::Stack> stack;
    sc_core::sc_event timer;
    core::TimePs timer_at = UINT64_MAX;
    void receive_frame(Frame&& frame) override;
    void transmit(tcpip::Frame&& frame) override { mac->send(std::move(frame)); }
    void tcp_event(tcpip::Event ev, const tcpip::EventInfo& info) override {
      host->on_event(*this, ev, info);
    }
    void syn_received(const tcpip::EventInfo& info) override { host->on_syn(info); }
    void rearm();
  };
  // A spliced pair: the client's connection (upstream) and the proxy's own (downstream).
  struct Pair {
    tcpip::ConnId up = 0, down = 0;
    bool down_ready = false;                      // downstream established
    bool up_fin = false, down_fin = false;        // FIN received on that side
    bool up_closed = false, down_closed = false;  // FIN passed on to that side
  };

  void on_syn(const tcpip::EventInfo& info);
  void on_event(Side& side, tcpip::Event ev, const tcpip::EventInfo& info);
  void open_downstream(tcpip::ConnId up);
  void pump(Pair& p);  // moves what both windows allow, passes FINs on
  void drop(std::size_t pair, bool abort_up, bool abort_down);
  void timer_up();
  void timer_down();

  ProxyHostParams params_;
  Side up_, down_;
  tcpip::ConnId listener_ = 0;
  std::deque<Pair> pairs_;  // by index (a deque: references stay valid as pairs are added)
  std::map<tcpip::ConnId, std::size_t> by_up_, by_down_;
  std::vector<std::uint8_t> buf_;
  core::Counter& spliced_;
  core::Counter& bytes_up_;
  core::Counter& bytes_down_;
  core::Counter& failed_;
};

}  // namespace vtoe::net
