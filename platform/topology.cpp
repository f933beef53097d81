#include "platform/topology.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "models/net/pcap_writer.h"
#include "platform/platform.h"

namespace vtoe::platform {

using config::ConfigError;

namespace {

// Module names the platform already uses at the top level: a host, switch or link may not take
// one (SystemC names must be unique, and statistics groups are named after modules).
const std::set<std::string>& platform_module_names() {
  static const std::set<std::string> names = {Topology::kPlatform,
                                              "dram",
                                              "bus",
                                              "cpu0",
                                              "cpu0_bus",
                                              "cpu0_irq",
                                              "cpu0_memory",
                                              "gic",
                                              "smmu",
                                              "toe",
                                              "hypervisor",
                                              "vtoe_manager",
                                              "netvp",
                                              "pacer",
                                              "peer",
                                              "gic_irq",
                                              "gic_virq",
                                              "gic_maint",
                                              "spi0",
                                              "spi1",
                                              "spi2",
                                              "spi3"};
  return names;
}

std::string item(const char* list, std::size_t i, const char* key) {
  return std::string(list) + "." + std::to_string(i) + "." + key;
}

}  // namespace

// Owns a platform host's Platform; built inside this module's constructor, so every module of
// that platform is named under the host ("h2.toe.mac", "h2.vm0").
class Topology::PlatformHost : public sc_core::sc_module {
 public:
  PlatformHost(const sc_core::sc_module_name& name, const config::Config& cfg)
      : sc_core::sc_module(name), config(cfg), platform(std::make_unique<Platform>(config, true)) {}
  config::Config config;
  std::unique_ptr<Platform> platform;
};

Platform* Topology::platform_at(std::size_t i) {
  return hosts_.at(i).platform ? hosts_.at(i).platform->platform.get() : nullptr;
}

// Takes frames out of switch ports that no link is attached to.
class Topology::Unplugged : public net::FrameSink {
 public:
  void receive_frame(net::Frame&&) override {}
};

Topology::Topology(const config::Config& cfg, const PlatformEnd& platform) : cfg_(cfg) {
  if (cfg_.get_string("network.peer") == "netvp")
    throw ConfigError(cfg_.where("links"), "links",
                      "a topology needs network.peer: sim (NetVP bridges the TOE to one real "
                      "interface)");
  nodes_[kPlatform] = {Kind::Platform, 0};
  read_hosts(platform);
  read_switches(platform);
  read_links(platform);
}

Topology::~Topology() = default;

void Topology::read_hosts(const PlatformEnd& platform) {
  std::set<std::string> vm_names(platform.vm_names.begin(), platform.vm_names.end());
  const tcpip::Ipv4 mask =
      platform.prefix_len == 0 ? 0 : ~tcpip::Ipv4{0} << (32 - platform.prefix_len);
  const tcpip::Ipv4 subnet = platform.vm_ips.front() & mask;
  std::map<tcpip::Ipv4, std::string> ips;
  MacNames macs;
  for (std::size_t v = 0; v < platform.vm_ips.size(); ++v) {
    ips[platform.vm_ips[v]] = "VM " + platform.vm_names[v];
    macs[platform.vm_macs[v].b] = "VM " + platform.vm_names[v];
  }
  for (std::size_t i = 0; i < cfg_.list_size("hosts"); ++i) {
    Host h;
    const std::string name_key = item("hosts", i, "name");
    h.name = cfg_.get_string(name_key);
    if (platform_module_names().count(h.name) || vm_names.count(h.name))
      throw ConfigError(cfg_.where(name_key), name_key,
                        "'" + h.name + "' is already the name of " +
                            (vm_names.count(h.name) ? "a VM" : "a part of the platform"));
    if (!nodes_.emplace(h.name, std::make_pair(Kind::Host, i)).second)
      throw ConfigError(cfg_.where(name_key), name_key,
                        "'" + h.name + "' is already the name of another host");
    if (cfg_.get_string(item("hosts", i, "kind")) == "platform") {
      read_platform_host(i, h, ips, macs, mask, subnet);
      hosts_.push_back(std::move(h));
      continue;
    }
    const std::string ip_key = item("hosts", i, "ip");
    const std::string ip_text = cfg_.get_string(ip_key);
    h.ip = !ip_text.empty() ? tcpip::parse_ipv4(ip_text)
                            : tcpip::parse_ipv4(cfg_.get_string("network.peer_ip")) +
                                  static_cast<tcpip::Ipv4>(i == 0 ? 0 : 98 + i);
    if ((h.ip & mask) != subnet || (h.ip | mask) == ~tcpip::Ipv4{0} || (h.ip & ~mask) == 0)
      throw ConfigError(cfg_.where(ip_key), ip_key,
                        tcpip::ipv4_to_string(h.ip) + " is not a host address of the platform's /" +
                            std::to_string(platform.prefix_len) + " subnet (one segment)");
    if (const auto [it, fresh] = ips.emplace(h.ip, "host " + h.name); !fresh)
      throw ConfigError(cfg_.where(ip_key), ip_key,
                        tcpip::ipv4_to_string(h.ip) + " is already the address of " + it->second);
    const std::string mac_key = item("hosts", i, "mac");
    const std::string mac_text = cfg_.get_string(mac_key);
    if (mac_text.empty() || !tcpip::MacAddr::parse(mac_text, h.mac))
      h.mac.b = {0x02, 0x00, 0x00, 0x00, 0x20, static_cast<std::uint8_t>(i)};
    if (const auto [it, fresh] = macs.emplace(h.mac.b, "host " + h.name); !fresh)
      throw ConfigError(cfg_.where(mac_key), mac_key,
                        h.mac.to_string() + " is already the MAC address of " + it->second);
    h.buffer = cfg_.get_bytes(item("hosts", i, "buffer"));
    h.proxy_host = cfg_.get_string(item("hosts", i, "kind")) == "proxy";
    if (h.proxy_host) {  // port 1: its own address and MAC on the same segment
      const std::string ip2_key = item("hosts", i, "ip2");
      const std::string ip2_text = cfg_.get_string(ip2_key);
      h.ip2 = !ip2_text.empty() ? tcpip::parse_ipv4(ip2_text)
                                : tcpip::parse_ipv4(cfg_.get_string("network.peer_ip")) +
                                      static_cast<tcpip::Ipv4>(148 + i);
      if ((h.ip2 & mask) != subnet || (h.ip2 | mask) == ~tcpip::Ipv4{0} || (h.ip2 & ~mask) == 0)
        throw ConfigError(cfg_.where(ip2_key), ip2_key,
                          tcpip::ipv4_to_string(h.ip2) +
                              " is not a host address of the platform's /" +
                              std::to_string(platform.prefix_len) + " subnet (one segment)");
      if (const auto [it, fresh] = ips.emplace(h.ip2, "host " + h.name + " (port 1)"); !fresh)
        throw ConfigError(
            cfg_.where(ip2_key), ip2_key,
            tcpip::ipv4_to_string(h.ip2) + " is already the address of " + it->second);
      const std::string mac2_key = item("hosts", i, "mac2");
      const std::string mac2_text = cfg_.get_string(mac2_key);
      if (mac2_text.empty() || !tcpip::MacAddr::parse(mac2_text, h.mac2))
        h.mac2.b = {0x02, 0x00, 0x00, 0x00, 0x21, static_cast<std::uint8_t>(i)};
      if (const auto [it, fresh] = macs.emplace(h.mac2.b, "host " + h.name + " (port 1)"); !fresh)
        throw ConfigError(cfg_.where(mac2_key), mac2_key,
                          h.mac2.to_string() + " is already the MAC address of " + it->second);
    }
    hosts_.push_back(std::move(h));
  }
}

// hosts[].kind platform: the scenario hosts[].scenario names (relative to this scenario's
// folder) is built whole, its TOE on this topology's links; its VMs' addresses join the segment.
void Topology::read_platform_host(std::size_t i, Host& h, std::map<tcpip::Ipv4, std::string>& ips,
                                  MacNames& macs, tcpip::Ipv4 mask, tcpip::Ipv4 subnet) {
  const std::string key = item("hosts", i, "scenario");
  const std::string file = cfg_.get_string(key);
  if (file.empty())
    throw ConfigError(cfg_.where(key), key,
                      "a platform host needs its scenario file (its architecture, TOE and VMs)");
  std::filesystem::path path(file);
  if (path.is_relative() && !cfg_.source().empty() && cfg_.source().front() != '<')
    path = std::filesystem::path(cfg_.source()).parent_path() / path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))  // a device or a folder is no scenario
    throw ConfigError(cfg_.where(key), key, "no scenario file " + path.string());
  const config::Config host_cfg = config::Config::load(path.string());
  if (described(host_cfg) || host_cfg.list_size("hosts") || host_cfg.list_size("switches"))
    throw ConfigError(cfg_.where(key), key,
                      path.string() +
                          " has hosts, switches or links of its own; a platform host "
                          "is one platform (the topology is this scenario's)");
  if (host_cfg.get_string("network.peer") == "netvp")
    throw ConfigError(cfg_.where(key), key,
                      path.string() + " bridges to a real network (network.peer: netvp)");
  h.platform = std::make_unique<PlatformHost>(h.name.c_str(), host_cfg);
  Platform& p = *h.platform->platform;
  for (std::size_t v = 0; v < p.vm_count(); ++v) {
    const tcpip::Ipv4 ip = p.vm_address(v);
    const std::string who = "VM " + h.name + "/" + p.vm_name(v);
    if ((ip & mask) != subnet)
      throw ConfigError(cfg_.where(key), key,
                        who + "'s address " + tcpip::ipv4_to_string(ip) +
                            " is not on the platform's subnet (one segment): set its vms[].ip");
    if (const auto [it, fresh] = ips.emplace(ip, who); !fresh)
      throw ConfigError(cfg_.where(key), key,
                        who + "'s address " + tcpip::ipv4_to_string(ip) +
                            " is already the address of " + it->second + ": set its vms[].ip");
    if (const auto [it, fresh] = macs.emplace(p.vm_mac_address(v).b, who); !fresh)
      throw ConfigError(cfg_.where(key), key,
                        who + "'s MAC " + p.vm_mac_address(v).to_string() +
                            " is already the MAC of " + it->second + ": set its vms[].mac");
  }
  h.ip = p.vm_address(0);
  h.mac = p.vm_mac_address(0);
}

void Topology::read_switches(const PlatformEnd& platform) {
  std::set<std::string> vm_names(platform.vm_names.begin(), platform.vm_names.end());
  for (std::size_t i = 0; i < cfg_.list_size("switches"); ++i) {
    Switch s;
    const std::string name_key = item("switches", i, "name");
    s.name = cfg_.get_string(name_key);
    if (platform_module_names().count(s.name) || vm_names.count(s.name))
      throw ConfigError(cfg_.where(name_key), name_key,
                        "'" + s.name + "' is already the name of " +
                            (vm_names.count(s.name) ? "a VM" : "a part of the platform"));
    if (!nodes_.emplace(s.name, std::make_pair(Kind::Switch, i)).second)
      throw ConfigError(cfg_.where(name_key), name_key,
                        "'" + s.name + "' is already the name of a host or another switch");
    const std::size_t ports = cfg_.get_uint(item("switches", i, "ports"));
    s.params.ports.resize(ports);
    for (auto& p : s.params.ports) p.buffer_bytes = cfg_.get_bytes(item("switches", i, "buffer"));
    s.params.latency_ps = cfg_.get_time(item("switches", i, "latency"));
    s.params.forwarding = cfg_.get_string(item("switches", i, "forwarding")) == "given"
                              ? net::Forwarding::Given
                              : net::Forwarding::Learned;
    s.linked.assign(ports, false);
    switches_.push_back(std::move(s));
  }
  // Given entries name hosts and VMs, so they are read once every host is known.
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    const std::string key = item("switches", i, "table");
    std::stringstream entries(cfg_.get_string(key));
    std::string entry;
    while (std::getline(entries, entry, ',')) {
      entry.erase(0, entry.find_first_not_of(" \t"));
      entry.erase(entry.find_last_not_of(" \t") + 1);
      if (entry.empty()) continue;
      const auto eq = entry.rfind('=');
      const std::string name = entry.substr(0, eq);
      const std::string port = eq == std::string::npos ? "" : entry.substr(eq + 1);
      if (eq == std::string::npos || port.empty() || port.size() > 3 ||
          !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw ConfigError(cfg_.where(key), key,
                          "entry \"" + entry + "\": expected NAME=PORT (a host, a VM or a MAC)");
      const std::size_t p = std::stoul(port);
      if (p >= switches_[i].params.ports.size())
        throw ConfigError(cfg_.where(key), key,
                          "entry \"" + entry + "\": switch '" + switches_[i].name + "' has " +
                              std::to_string(switches_[i].params.ports.size()) + " ports (0.." +
                              std::to_string(switches_[i].params.ports.size() - 1) + ")");
      tcpip::MacAddr mac;
      const auto host = nodes_.find(name);
      const auto vm = std::find(platform.vm_names.begin(), platform.vm_names.end(), name);
      if (host != nodes_.end() && host->second.first == Kind::Host)
        mac = hosts_[host->second.second].mac;
      else if (vm != platform.vm_names.end())
        mac = platform.vm_macs[static_cast<std::size_t>(vm - platform.vm_names.begin())];
      else if (!tcpip::MacAddr::parse(name, mac))
        throw ConfigError(cfg_.where(key), key,
                          "entry \"" + entry + "\": '" + name + "' is no host, VM or MAC address");
      switches_[i].params.table[mac.b] = p;
    }
  }
}

Topology::End Topology::parse_end(const std::string& key) const {
  const std::string text = cfg_.get_string(key);
  if (text.empty())
    throw ConfigError(cfg_.where(key), key,
                      "a link needs both ends: platform, a host's name, or SWITCH:PORT");
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  const auto node = nodes_.find(name);
  if (node == nodes_.end()) {
    std::string known;
    for (const auto& [n, kind] : nodes_) known += (known.empty() ? "" : ", ") + n;
    throw ConfigError(cfg_.where(key), key,
                      "no host or switch is named '" + name + "' (known: " + known + ")");
  }
  End e{node->second.first, node->second.second, 0};
  if (colon != std::string::npos) {
    const std::string port = text.substr(colon + 1);
    if (port.empty() || port.size() > 3 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw ConfigError(cfg_.where(key), key, "'" + port + "' is not a port number");
    e.port = std::stoul(port);
  } else if (e.kind == Kind::Switch || (e.kind == Kind::Host && hosts_[e.index].proxy_host)) {
    throw ConfigError(cfg_.where(key), key,
                      "'" + name + "' is a " + (e.kind == Kind::Switch ? "switch" : "proxy") +
                          ": name its port, " + name + ":0 for example");
  }
  const std::size_t ports = e.kind == Kind::Switch ? switches_[e.index].params.ports.size()
                            : e.kind == Kind::Host && hosts_[e.index].proxy_host ? 2
                                                                                 : 1;
  if (e.port >= ports)
    throw ConfigError(cfg_.where(key), key,
                      "'" + name + "' has no port " + std::to_string(e.port) + " (ports 0.." +
                          std::to_string(ports - 1) + ")");
  return e;
}

std::size_t Topology::node_of(const End& e) const {
  switch (e.kind) {
    case Kind::Platform:
      return 0;
    case Kind::Host:
      return 1 + e.index;
    case Kind::Switch:
      break;
  }
  return 1 + hosts_.size() + e.index;
}

std::size_t Topology::find(std::size_t node) const {
  while (parent_[node] != node) node = parent_[node] = parent_[parent_[node]];
  return node;
}

void Topology::read_links(const PlatformEnd& platform) {
  parent_.resize(1 + hosts_.size() + switches_.size());
  for (std::size_t n = 0; n < parent_.size(); ++n) parent_[n] = n;
  std::set<std::string> names;
  std::map<std::pair<std::size_t, std::size_t>, std::string> used;  // (node, port) -> key
  std::vector<bool> host_linked(hosts_.size(), false);
  bool platform_linked = false;
  for (std::size_t i = 0; i < cfg_.list_size("links"); ++i) {
    Link l;
    const std::string name_key = item("links", i, "name");
    l.name = cfg_.get_string(name_key);
    if (platform_module_names().count(l.name) || nodes_.count(l.name) ||
        std::count(platform.vm_names.begin(), platform.vm_names.end(), l.name))
      throw ConfigError(cfg_.where(name_key), name_key,
                        "'" + l.name +
                            "' is already the name of a host, switch, VM or part of "
                            "the platform");
    if (!names.insert(l.name).second)
      throw ConfigError(cfg_.where(name_key), name_key,
                        "'" + l.name + "' is already the name of another link");
    const std::string a_key = item("links", i, "a");
    const std::string b_key = item("links", i, "b");
    l.a = parse_end(a_key);
    l.b = parse_end(b_key);
    l.a_text = cfg_.get_string(a_key);
    l.b_text = cfg_.get_string(b_key);
    for (const auto& [end, key] : {std::make_pair(l.a, a_key), std::make_pair(l.b, b_key)}) {
      const auto [it, fresh] = used.emplace(std::make_pair(node_of(end), end.port), key);
      if (!fresh)
        throw ConfigError(cfg_.where(key), key,
                          "'" + cfg_.get_string(key) + "' is already an end of " +
                              it->second.substr(0, it->second.rfind('.')) +
                              " (a port takes one link)");
    }
    // Switches here run no spanning tree: a second path between two nodes would circulate
    // flooded frames for ever, so the links must form a tree.
    const std::size_t ra = find(node_of(l.a)), rb = find(node_of(l.b));
    if (ra == rb)
      throw ConfigError(cfg_.where(b_key), item("links", i, "b"),
                        "'" + cfg_.get_string(a_key) + "' and '" + cfg_.get_string(b_key) +
                            "' are already connected: this link closes a loop (switches run no "
                            "spanning tree; the links must form a tree)");
    parent_[ra] = rb;
    const std::string rate_key = item("links", i, "rate");
    l.rate_bps = cfg_.get_bandwidth(rate_key);
    const bool at_platform = l.a.kind == Kind::Platform || l.b.kind == Kind::Platform;
    if (l.rate_bps == 0) l.rate_bps = platform.rate_bps;
    if (at_platform && l.rate_bps != platform.rate_bps)
      throw ConfigError(cfg_.where(rate_key), rate_key,
                        "the platform's TOE sends at toe.bandwidth (" +
                            cfg_.get_text("toe.bandwidth") +
                            "): a link at the platform runs at that rate (give 0 or change "
                            "toe.bandwidth)");
    l.params.delay_ps = cfg_.get_time(item("links", i, "delay"));
    l.params.jitter_ps = cfg_.get_time(item("links", i, "jitter"));
    const std::string loss_key = item("links", i, "loss");
    l.params.loss = cfg_.get_double(loss_key);
    if (l.params.loss >= 1.0)
      throw ConfigError(cfg_.where(loss_key), loss_key,
                        "a loss of 1 drops every frame, and the links form a tree: this link is "
                        "the only path between its two sides, so nothing could cross it (give "
                        "less than 1)");
    l.params.seed = cfg_.get_uint("seed");
    for (const End& e : {l.a, l.b}) {
      if (e.kind == Kind::Platform) platform_linked = true;
      if (e.kind == Kind::Host) {
        host_linked[e.index] = true;
        hosts_[e.index].rate_bps[e.port] = l.rate_bps;
      }
      if (e.kind == Kind::Switch) {
        switches_[e.index].linked[e.port] = true;
        switches_[e.index].params.ports[e.port].rate_bps = l.rate_bps;
      }
    }
    links_.push_back(std::move(l));
  }
  platform_linked_ = platform_linked;
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    if (!host_linked[h])
      throw ConfigError(cfg_.where(item("hosts", h, "name")), item("hosts", h, "name"),
                        "host '" + hosts_[h].name + "' is the end of no link");
    if (hosts_[h].proxy_host && (hosts_[h].rate_bps[0] == 0 || hosts_[h].rate_bps[1] == 0))
      throw ConfigError(cfg_.where(item("hosts", h, "name")), item("hosts", h, "name"),
                        "proxy '" + hosts_[h].name + "' needs a link on both ports (" +
                            hosts_[h].name + ":0 and " + hosts_[h].name + ":1)");
  }
  read_apps();
}

std::size_t Topology::host_named(const std::string& key, const std::string& name) const {
  const auto node = nodes_.find(name);
  if (node == nodes_.end() || node->second.first != Kind::Host) {
    std::string known;
    for (const Host& host : hosts_) known += (known.empty() ? "" : ", ") + host.name;
    throw ConfigError(cfg_.where(key), key,
                      "no host is named '" + name + "' (hosts: " + known + ")");
  }
  return node->second.second;
}

// hosts[].app and proxies' next hops: a flow client's chain of proxies must end at a flow server.
void Topology::read_apps() {
  for (std::size_t i = 0; i < hosts_.size(); ++i) {
    Host& h = hosts_[i];
    const std::string app = cfg_.get_string(item("hosts", i, "app"));
    const std::string peer_key = item("hosts", i, "peer");
    const std::string peer = cfg_.get_string(peer_key);
    const auto port = static_cast<std::uint16_t>(cfg_.get_uint(item("hosts", i, "port")));
    if (h.platform) {
      if (app != "none")
        throw ConfigError(cfg_.where(item("hosts", i, "app")), item("hosts", i, "app"),
                          "a platform host's applications are its VMs' workloads");
      continue;
    }
    if (h.proxy_host) {
      if (app != "none")
        throw ConfigError(cfg_.where(item("hosts", i, "app")), item("hosts", i, "app"),
                          "a proxy splices connections and runs no app of its own");
      if (peer.empty())
        throw ConfigError(cfg_.where(peer_key), peer_key,
                          "a proxy needs its next hop (a host name)");
      const std::size_t next = host_named(peer_key, peer);
      if (next == i)
        throw ConfigError(cfg_.where(peer_key), peer_key, "a proxy cannot forward to itself");
      h.proxy_params.listen_port = port;
      h.proxy_params.next_ip = hosts_[next].ip;
      h.proxy_params.next_port =
          static_cast<std::uint16_t>(cfg_.get_uint(item("hosts", next, "port")));
      h.proxy_params.early_syn = cfg_.get_bool(item("hosts", i, "esf"));
      continue;
    }
    if (app == "flow_server") {
      net::PeerApp a;
      a.type = net::PeerAppType::FlowServer;
      a.port = port;
      a.request_size = static_cast<std::uint32_t>(cfg_.get_bytes(item("hosts", i, "request")));
      a.response_size = static_cast<std::uint32_t>(cfg_.get_bytes(item("hosts", i, "response")));
      h.apps.push_back(a);
    } else if (app == "flow_client") {
      if (peer.empty())
        throw ConfigError(cfg_.where(peer_key), peer_key,
                          "a flow client needs the host it connects to");
      // Follow the proxies to the server: its response size is what the client waits for.
      std::size_t at = host_named(peer_key, peer);
      for (std::size_t hops = 0; hosts_[at].proxy_host; ++hops) {
        const std::string next_key = item("hosts", at, "peer");
        if (hops > hosts_.size())
          throw ConfigError(cfg_.where(next_key), next_key,
                            "the proxies' next hops form a loop and reach no server");
        at = host_named(next_key, cfg_.get_string(next_key));
      }
      if (cfg_.get_string(item("hosts", at, "app")) != "flow_server")
        throw ConfigError(cfg_.where(peer_key), peer_key,
                          "the flows end at host '" + hosts_[at].name +
                              "', which is no flow_server (hosts[].app)");
      const std::size_t first = host_named(peer_key, peer);
      if (find(1 + first) != find(1 + i))
        throw ConfigError(cfg_.where(peer_key), peer_key,
                          "host '" + peer + "' has no path to '" + h.name + "' over links");
      net::PeerApp a;
      a.type = net::PeerAppType::FlowClient;
      a.remote_ip = hosts_[first].ip;
      a.port = static_cast<std::uint16_t>(cfg_.get_uint(item("hosts", first, "port")));
      a.request_size = static_cast<std::uint32_t>(cfg_.get_bytes(item("hosts", i, "request")));
      a.response_size = static_cast<std::uint32_t>(cfg_.get_bytes(item("hosts", at, "response")));
      a.flows = cfg_.get_uint(item("hosts", i, "flows"));
      a.start_ps = cfg_.get_time(item("hosts", i, "start"));
      a.gap_ps = cfg_.get_time(item("hosts", i, "gap"));
      h.apps.push_back(a);
    }
  }
}

Topology::Peer Topology::peer_of(std::size_t vm, const std::string& peer) const {
  const std::string key = "vms." + std::to_string(vm) + ".workload.peer";
  if (hosts_.empty())
    throw ConfigError(cfg_.where(key), key,
                      "the workload talks to a peer host, and hosts: is empty");
  Peer result;
  const auto slash = peer.find('/');
  if (!peer.empty()) result.host = host_named(key, peer.substr(0, slash));
  const Host& h = hosts_[result.host];
  if (h.proxy_host)
    throw ConfigError(cfg_.where(key), key,
                      "host '" + h.name + "' is a proxy: name the host behind it");
  if (h.platform) {
    const Platform& p = *h.platform->platform;
    if (slash == std::string::npos)
      throw ConfigError(cfg_.where(key), key,
                        "host '" + h.name + "' is a platform: name its VM, " + h.name + "/" +
                            p.vm_name(0) + " for example");
    const std::string name = peer.substr(slash + 1);
    std::size_t v = 0;
    while (v < p.vm_count() && p.vm_name(v) != name) ++v;
    if (v == p.vm_count())
      throw ConfigError(cfg_.where(key), key,
                        "platform host '" + h.name + "' has no VM '" + name + "'");
    result.light = false;
    result.ip = p.vm_address(v);
  } else {
    if (slash != std::string::npos)
      throw ConfigError(cfg_.where(key), key,
                        "host '" + h.name + "' is a light host, without VMs: name it alone");
    result.ip = h.ip;
  }
  if (find(1 + result.host) != find(0))
    throw ConfigError(cfg_.where(key), key,
                      "host '" + h.name + "' has no path to the platform over links");
  return result;
}

void Topology::build(net::FramePort& platform_out, net::FrameExport& platform_in,
                     std::vector<net::PeerHostParams> host_params) {
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    Host& host = hosts_[h];
    net::PeerHostParams& hp = host_params.at(h);
    if (host.platform) continue;  // built with the topology's checks
    if (host.proxy_host) {
      net::ProxyHostParams pp = host.proxy_params;
      pp.up = hp.stack;
      pp.down = hp.stack;
      pp.down.ip = host.ip2;
      pp.down.mac = host.mac2;
      pp.down.aliases.clear();
      pp.up_rate_bps = host.rate_bps[0];
      pp.down_rate_bps = host.rate_bps[1];
      host.proxy = std::make_unique<net::ProxyHost>(host.name.c_str(), pp);
      continue;
    }
    hp.rate_bps = host.rate_bps[0];
    hp.apps.insert(hp.apps.end(), host.apps.begin(), host.apps.end());
    host.module = std::make_unique<net::PeerHost>(host.name.c_str(), hp);
  }
  for (Switch& s : switches_)
    s.module = std::make_unique<net::EthernetSwitch>(s.name.c_str(), s.params);
  unplugged_ = std::make_unique<Unplugged>();
  auto to_wire = [&](const End& e) -> net::FramePort& {
    switch (e.kind) {
      case Kind::Platform:
        return platform_out;
      case Kind::Host:
        if (hosts_[e.index].platform) return hosts_[e.index].platform->platform->wire_out();
        if (hosts_[e.index].proxy)
          return (e.port == 0 ? hosts_[e.index].proxy->up() : hosts_[e.index].proxy->down())
              .to_wire;
        return hosts_[e.index].module->mac().to_wire;
      case Kind::Switch:
        break;
    }
    return switches_[e.index].module->out[e.port];
  };
  auto from_wire = [&](const End& e) -> net::FrameExport& {
    switch (e.kind) {
      case Kind::Platform:
        return platform_in;
      case Kind::Host:
        if (hosts_[e.index].platform) return hosts_[e.index].platform->platform->wire_in();
        if (hosts_[e.index].proxy)
          return (e.port == 0 ? hosts_[e.index].proxy->up() : hosts_[e.index].proxy->down())
              .from_wire;
        return hosts_[e.index].module->mac().from_wire;
      case Kind::Switch:
        break;
    }
    return switches_[e.index].module->in[e.port];
  };
  for (Link& l : links_) {
    l.module = std::make_unique<net::EthernetLink>(l.name.c_str(), l.params);
    to_wire(l.a).bind(l.module->a_in);
    l.module->a_out.bind(from_wire(l.a));
    to_wire(l.b).bind(l.module->b_in);
    l.module->b_out.bind(from_wire(l.b));
  }
  for (Switch& s : switches_)
    for (std::size_t p = 0; p < s.linked.size(); ++p)
      if (!s.linked[p]) s.module->out[p].bind(*unplugged_);
  if (!platform_linked_) platform_out.bind(*unplugged_);  // a platform apart from the network
}

void Topology::enable_pcap(const std::string& dir, const std::vector<std::string>& only) {
  for (Link& l : links_)
    if (only.empty() || std::find(only.begin(), only.end(), l.name) != only.end())
      l.module->enable_pcap(dir + "/" + l.name + net::PcapWriter::extension());
}

std::string Topology::switch_port_link(std::size_t s, std::size_t port) const {
  for (const Link& l : links_)
    for (const End* e : {&l.a, &l.b})
      if (e->kind == Kind::Switch && e->index == s && e->port == port) return l.name;
  return "";
}

}  // namespace vtoe::platform
