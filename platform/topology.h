// Builds the network a scenario's `hosts:`, `switches:` and `links:` describe around the
// platform's TOE (docs/topology.md): light hosts (net::PeerHost), split-TCP proxies
// (net::ProxyHost), whole platforms of other scenarios, store-and-forward switches
// (net::EthernetSwitch) and the links between them (net::EthernetLink), each link with its own
// statistics and pcap file.
//
// Two steps, because the guests need their peers' addresses before the network exists:
// the constructor reads and checks the scenario (names, addresses, endpoints, loops, apps) and
// throws config::ConfigError naming the file and key, building platform hosts on the way (their
// VMs' addresses are checked against the segment's); build() makes the light hosts, proxies,
// switches and links and binds them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "models/net/ethernet_link.h"
#include "models/net/ethernet_mac.h"
#include "models/net/ethernet_switch.h"
#include "models/net/peer_host.h"
#include "models/net/proxy_host.h"
#include "models/tcpip/types.h"

namespace vtoe::platform {

class Platform;

// What the topology needs to know of the platform it surrounds.
struct PlatformEnd {
  std::vector<std::string> vm_names;
  std::vector<tcpip::Ipv4> vm_ips;
  std::vector<tcpip::MacAddr> vm_macs;
  int prefix_len = 24;     // the segment's subnet (the TOE's)
  double rate_bps = 10e9;  // the TOE's line rate
};

class Topology {
 public:
  static constexpr const char* kPlatform = "platform";  // the TOE's end of a link

  // True if the scenario describes a topology (links: is not empty).
  static bool described(const config::Config& cfg) { return cfg.list_size("links") > 0; }

  Topology(const config::Config& cfg, const PlatformEnd& platform);
  ~Topology();

  // Whom a VM's workload talks to: a light host (its applications serve the VM), or a VM of a
  // platform host (its own workload serves).
  struct Peer {
    std::size_t host = 0;
    bool light = true;
    tcpip::Ipv4 ip = 0;
  };
  // vms.i.workload.peer: HOST (a light host), HOST/VM (a VM of a platform host), empty = hosts[0];
  // throws ConfigError if it names neither or one the platform cannot reach.
  Peer peer_of(std::size_t vm, const std::string& peer) const;

  std::size_t host_count() const { return hosts_.size(); }
  const std::string& host_name(std::size_t i) const { return hosts_.at(i).name; }
  tcpip::Ipv4 host_ip(std::size_t i) const { return hosts_.at(i).ip; }
  tcpip::MacAddr host_mac(std::size_t i) const { return hosts_.at(i).mac; }
  std::uint64_t host_buffer(std::size_t i) const { return hosts_.at(i).buffer; }
  bool is_proxy(std::size_t i) const { return hosts_.at(i).proxy_host; }
  bool is_light(std::size_t i) const { return !hosts_.at(i).proxy_host && !hosts_.at(i).platform; }
  // A platform host's platform (hosts[].kind: platform), else nullptr.
  Platform* platform_at(std::size_t i);
  // The applications a host runs of its own (hosts[].app), with their peers resolved.
  const std::vector<net::PeerApp>& host_apps(std::size_t i) const { return hosts_.at(i).apps; }

  // Makes the modules and binds them to each other and to the TOE's MAC (left unplugged if no
  // link names the platform). `host_params[i]` is host i's configuration (address, stack,
  // applications); its rate is set here. A proxy takes its stacks' settings from it.
  void build(net::FramePort& platform_out, net::FrameExport& platform_in,
             std::vector<net::PeerHostParams> host_params);

  // A light host's model (nullptr for a proxy), a proxy's model (nullptr for a light host).
  net::PeerHost* light(std::size_t i) { return hosts_.at(i).module.get(); }
  net::ProxyHost* proxy(std::size_t i) { return hosts_.at(i).proxy.get(); }
  // The first light host (the peer of results.json), or nullptr.
  net::PeerHost* first_light() {
    for (Host& h : hosts_)
      if (h.module) return h.module.get();
    return nullptr;
  }
  std::size_t link_count() const { return links_.size(); }
  const std::string& link_name(std::size_t i) const { return links_.at(i).name; }
  net::EthernetLink& link(std::size_t i) { return *links_.at(i).module; }
  // A link's ends as the scenario names them (`platform`, a host, `SWITCH:PORT`) and its rate.
  const std::string& link_a(std::size_t i) const { return links_.at(i).a_text; }
  const std::string& link_b(std::size_t i) const { return links_.at(i).b_text; }
  double link_rate_bps(std::size_t i) const { return links_.at(i).rate_bps; }
  // The link on switch s's port, or "" for an unplugged port.
  std::string switch_port_link(std::size_t s, std::size_t port) const;
  std::size_t switch_count() const { return switches_.size(); }
  const std::string& switch_name(std::size_t i) const { return switches_.at(i).name; }
  net::EthernetSwitch& switch_at(std::size_t i) { return *switches_.at(i).module; }

  // Every link (or those `only` names) records into DIR/<link name>.pcap (.pcapng: as
  // net::PcapWriter::extension()).
  void enable_pcap(const std::string& dir, const std::vector<std::string>& only = {});

 private:
  enum class Kind { Platform, Host, Switch };
  class PlatformHost;  // an sc_module that owns a host's Platform: its modules are named under it
  struct End {
    Kind kind = Kind::Platform;
    std::size_t index = 0;  // host or switch
    std::size_t port = 0;   // switch port
  };
  struct Host {
    std::string name;
    bool proxy_host = false;
    tcpip::Ipv4 ip = 0, ip2 = 0;  // ip2, mac2: a proxy's port 1
    tcpip::MacAddr mac, mac2;
    std::uint64_t buffer = 0;
    double rate_bps[2] = {0, 0};  // per port
    std::vector<net::PeerApp> apps;
    net::ProxyHostParams proxy_params;  // a proxy's next hop and mode
    std::unique_ptr<net::PeerHost> module;
    std::unique_ptr<net::ProxyHost> proxy;
    std::unique_ptr<PlatformHost> platform;  // kind: platform
  };
  struct Switch {
    std::string name;
    net::EthernetSwitchParams params;
    std::vector<bool> linked;  // per port
    std::unique_ptr<net::EthernetSwitch> module;
  };
  struct Link {
    std::string name;
    End a, b;
    std::string a_text, b_text;  // as the scenario names them
    net::EthernetLinkParams params;
    double rate_bps = 0;
    std::unique_ptr<net::EthernetLink> module;
  };

  void read_hosts(const PlatformEnd& platform);
  void read_switches(const PlatformEnd& platform);
  void read_links(const PlatformEnd& platform);
  void read_apps();
  using MacNames = std::map<std::array<std::uint8_t, 6>, std::string>;
  void read_platform_host(std::size_t i, Host& h, std::map<tcpip::Ipv4, std::string>& ips,
                          MacNames& macs, tcpip::Ipv4 mask, tcpip::Ipv4 subnet);
  std::size_t host_named(const std::string& key, const std::string& name) const;
  End parse_end(const std::string& key) const;
  std::size_t node_of(const End& e) const;  // union-find node: 0 platform, hosts, switches
  std::size_t find(std::size_t node) const;

  const config::Config& cfg_;
  std::vector<Host> hosts_;
  std::vector<Switch> switches_;
  std::vector<Link> links_;
  std::map<std::string, std::pair<Kind, std::size_t>> nodes_;  // by name
  mutable std::vector<std::size_t> parent_;                    // union-find of connected nodes
  bool platform_linked_ = false;
  // Frames leaving a switch port that no link takes (ports are numbered, not all are used).
  class Unplugged;
  std::unique_ptr<Unplugged> unplugged_;
};

}  // namespace vtoe::platform
