#include "platform/toe_slot.h"

#include <string>

#include "config/params.h"

namespace vtoe::platform {

using config::ConfigError;
using config::parse_byte_list;

tcpip::MacAddr mac_of(std::uint8_t last) {
  tcpip::MacAddr m;
  m.b = {0x02, 0x00, 0x00, 0x00, 0x00, last};  // locally administered
  return m;
}

tcpip::Ipv4 ip_of(const Config& cfg, const std::string& key) {
  return tcpip::parse_ipv4(cfg.get_string(key));
}

// VM i's own address: vms.i.ip, or network.host_ip for VM 0 and host_ip + 9 + i for the others
// (10.0.0.1, then 10.0.0.11, 10.0.0.12, ...: clear of the peer's 10.0.0.2).
tcpip::Ipv4 vm_ip(const Config& cfg, std::size_t i) {
  const std::string ip = cfg.get_string("vms." + std::to_string(i) + ".ip");
  if (!ip.empty()) return tcpip::parse_ipv4(ip.substr(0, ip.find('/')));
  return ip_of(cfg, "network.host_ip") + static_cast<tcpip::Ipv4>(i == 0 ? 0 : 9 + i);
}

// VM i's MAC: vms.i.mac, or 02:00:00:00:00:01 for VM 0 (the TOE's) and 02:00:00:00:10:i.
tcpip::MacAddr vm_mac(const Config& cfg, std::size_t i) {
  const std::string text = cfg.get_string("vms." + std::to_string(i) + ".mac");
  tcpip::MacAddr m;
  if (!text.empty() && tcpip::MacAddr::parse(text, m)) return m;
  if (i == 0) return mac_of(1);
  m.b = {0x02, 0x00, 0x00, 0x00, 0x10, static_cast<std::uint8_t>(i)};
  return m;
}

// The protocol settings the simulated peer shares with the TOE (the same engine at both ends).
tcpip::StackConfig peer_protocol(const tcpip::StackConfig& toe) {
  tcpip::StackConfig sc;
  sc.mtu = toe.mtu;
  sc.rto_min = toe.rto_min;
  sc.delayed_ack = toe.delayed_ack;
  sc.initial_window_segments = toe.initial_window_segments;
  sc.ecn = toe.ecn;  // both ends in the same ECN mode: the default (passive) asks nowhere
  return sc;
}

// The peer application a guest workload needs at the far end; false for none.
bool peer_app_for(const guest::Workload& w, tcpip::Ipv4 vm_address, net::PeerApp& app) {
  app.port = w.port;
  switch (w.type) {
    case guest::WorkloadType::TcpTx:
      app.type = net::PeerAppType::Sink;
      return true;
    case guest::WorkloadType::Rpc:
      app.type = net::PeerAppType::RpcServer;
      app.request_size = w.message_size;
      app.response_size = w.response_size;
      return true;
    case guest::WorkloadType::TcpRx:
      app.type = net::PeerAppType::Source;
      app.remote_ip = vm_address;  // the peer streams to that guest's own address
      app.start_ps = w.start_ps;
      return true;
    case guest::WorkloadType::Flows:  // a server that answers each flow's request, then closes
      app.type = net::PeerAppType::FlowServer;
      app.request_size = w.message_size;
      app.response_size = w.response_size;
      return true;
    case guest::WorkloadType::Connect:  // connections accepted, nothing sent
      app.type = net::PeerAppType::Sink;
      return true;
    case guest::WorkloadType::Cpu:
    case guest::WorkloadType::Sink:  // servers for outside clients: nothing on the peer
    case guest::WorkloadType::Echo:
    case guest::WorkloadType::Iperf3:
      break;
  }
  return false;
}

std::vector<std::uint32_t> quanta_for(const Config& cfg, const std::vector<int>& vms) {
  const auto all = parse_byte_list(cfg.get_string("toe.dispatcher.quantum"));
  std::vector<std::uint32_t> q;
  for (int vm : vms)
    q.push_back(static_cast<std::size_t>(vm) < all.size() ? static_cast<std::uint32_t>(all[vm])
                                                          : 16000u);
  return q;
}

toe::ToeParams scenario_toe_params(const Config& cfg, std::size_t vms, toe::IrqMode irq_mode) {
  const bool at = cfg.get_string("platform.timing") == "at";
  toe::ToeParams tp;
  config::fill(cfg, toe::toe_params(), tp);
  tp.approximately_timed = at;
  tp.irq_mode = irq_mode;
  // Inside the TOE the policy arbitrates between channels; channel c belongs to VM c (da).
  std::vector<int> channel_vms;
  for (int c = 0; c < tp.channels; ++c) channel_vms.push_back(c);
  tp.dispatcher.quanta = quanta_for(cfg, channel_vms);
  tp.stack.isn_seed = static_cast<std::uint32_t>(cfg.get_uint("seed"));
  // The TOE answers for every guest: VM 0's address is its primary, the others are aliases,
  // each with its own MAC (paper §4.3: every guest its own address on the segment).
  tp.stack.mac = vm_mac(cfg, 0);
  tp.stack.ip = vm_ip(cfg, 0);
  for (std::size_t i = 0; i < vms; ++i) {  // an explicit /prefix sets the segment's subnet
    const std::string ip = cfg.get_string("vms." + std::to_string(i) + ".ip");
    if (ip.find('/') != std::string::npos)
      tp.stack.prefix_len = std::stoi(ip.substr(ip.find('/') + 1));
  }
  for (std::size_t i = 1; i < vms; ++i)
    tp.stack.aliases.emplace_back(vm_ip(cfg, i), vm_mac(cfg, i));
  tp.mac_promiscuous = vms > 1;  // frames for the aliases' MACs reach the engine
  // The TOE's MAC queue is one of the link's two egress queues: it marks CE as the peer's does.
  tp.mac_ecn_frames = cfg.get_uint("network.ecn_threshold");
  if (tp.stack.shared_buffer != 0 && tp.stack.shared_buffer < 2ull * tp.stack.mtu)
    throw ConfigError(cfg.where("toe.sram"), "toe.sram",
                      std::to_string(tp.stack.shared_buffer) +
                          " bytes cannot hold a connection's segment in each direction; give 0B "
                          "(no shared limit) or at least twice toe.mtu (" +
                          std::to_string(2ull * tp.stack.mtu) + " bytes)");
  // The engine sends whole segments from the send buffer: below one, a partial segment leaves only
  // when the retransmission timer fires (0.03 Mbit/s at 1 KiB), which no scenario means.
  const std::uint64_t segment =
      tp.stack.mtu - 40 - (tp.stack.timestamps ? 12 : 0);  // IPv4, TCP and timestamp option
  if (tp.stack.send_buffer < segment)
    throw ConfigError(cfg.where("toe.tx_buffer"), "toe.tx_buffer",
                      std::to_string(tp.stack.send_buffer) +
                          " bytes cannot hold one segment of toe.mtu (" + std::to_string(segment) +
                          " bytes of payload): the engine would send only when its retransmission "
                          "timer fires; give at least " +
                          std::to_string(segment) + "B (two segments or more for a steady flow)");
  if (tp.ppm.rx_fifo_bytes < tp.stack.mtu + 18ull)
    throw ConfigError(cfg.where("toe.ppm.rx_fifo"), "toe.ppm.rx_fifo",
                      std::to_string(tp.ppm.rx_fifo_bytes) +
                          " bytes cannot hold one frame of toe.mtu (" +
                          std::to_string(tp.stack.mtu + 18ull) +
                          " bytes with the Ethernet header); every such frame would be dropped");
  return tp;
}

net::PeerHostParams peer_host_params(const toe::ToeParams& toe, tcpip::Ipv4 ip, tcpip::MacAddr mac,
                                     std::uint64_t buffer, std::uint32_t isn_seed) {
  net::PeerHostParams pp;
  pp.stack = peer_protocol(toe.stack);
  pp.stack.mac = mac;
  pp.stack.ip = ip;
  pp.stack.prefix_len = toe.stack.prefix_len;  // one segment, one subnet
  pp.stack.send_buffer = static_cast<std::uint32_t>(buffer);
  pp.stack.recv_buffer = pp.stack.send_buffer;
  pp.stack.isn_seed = isn_seed;
  pp.rate_bps = toe.bandwidth_bps;  // the peer's NIC runs at the TOE's line rate
  return pp;
}

}  // namespace vtoe::platform
