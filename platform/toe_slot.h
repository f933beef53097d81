// What every platform builder shares about the TOE's slot and its network, read from a scenario:
// the TOE's parameters with the guests' addresses (VM 0's the primary, the others aliases), the
// addressing rules, the simulated peer's parameters and the peer application each workload needs.
// The TOE platform (platform.h) and the system platform (system/system_platform.h) both build
// their TOE and its peer from these, so one scenario configures either.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "guest/apps.h"
#include "models/net/peer_host.h"
#include "models/toe/toe.h"

namespace vtoe::platform {

using config::Config;

// 02:00:00:00:00:<last>, locally administered.
tcpip::MacAddr mac_of(std::uint8_t last);
tcpip::Ipv4 ip_of(const Config& cfg, const std::string& key);
// VM i's own address: vms.i.ip, or network.host_ip for VM 0 and host_ip + 9 + i for the others
// (10.0.0.1, then 10.0.0.11, 10.0.0.12, ...: clear of the peer's 10.0.0.2).
tcpip::Ipv4 vm_ip(const Config& cfg, std::size_t i);
// VM i's MAC: vms.i.mac, or 02:00:00:00:00:01 for VM 0 (the TOE's) and 02:00:00:00:10:i.
tcpip::MacAddr vm_mac(const Config& cfg, std::size_t i);
// The protocol settings the simulated peer shares with the TOE (the same engine at both ends).
tcpip::StackConfig peer_protocol(const tcpip::StackConfig& toe);
// The peer application a guest workload needs at the far end; false for none.
bool peer_app_for(const guest::Workload& w, tcpip::Ipv4 vm_address, net::PeerApp& app);
// toe.dispatcher.quantum for each of `vms` (16000 B past the list's end).
std::vector<std::uint32_t> quanta_for(const Config& cfg, const std::vector<int>& vms);

// The TOE's parameters for `vms` guests: the toe.* keys, platform.timing, the seed, the guests'
// addresses and MACs; ConfigError naming the key for settings that cannot work.
toe::ToeParams scenario_toe_params(const Config& cfg, std::size_t vms, toe::IrqMode irq_mode);

// A simulated host on the TOE's segment: the TOE's protocol settings and subnet, its own address.
net::PeerHostParams peer_host_params(const toe::ToeParams& toe, tcpip::Ipv4 ip, tcpip::MacAddr mac,
                                     std::uint64_t buffer, std::uint32_t isn_seed);

}  // namespace vtoe::platform
