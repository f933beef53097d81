// Builds the simulated platform a scenario describes and owns its modules.
//
// Physical address map (all architectures):
//   0x0000_0000  DRAM (platform.dram_size). 8 MiB..16 MiB: hypervisor memory (the virtual TOE
//                manager's physical rings); guest i's RAM: 16 MiB + i * platform.guest_memory
//   0x4000_0000  TOE: one 4 KiB register page per control channel, then the multi-channel
//                control unit's page (interrupt bit vector)
// Native: the OS sees physical addresses (its RAM at 16 MiB, the TOE's channel 0 at 0x4000_0000).
// Virtualized (de, da): every guest sees its RAM at IPA 0x8000_0000 and its TOE channel at IPA
// 0x4000_0000; stage 2 maps the RAM, and maps the channel page to a physical channel (da) or
// leaves it unmapped so that accesses trap (de).
#pragma once

#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "config/config.h"
#include "guest/guest_memory.h"
#include "guest/guest_os.h"
#include "hypervisor/direct_access_manager.h"
#include "hypervisor/emulated_channel_dma.h"
#include "hypervisor/hypervisor.h"
#include "hypervisor/virtual_toe_manager.h"
#include "models/core/histogram.h"
#include "models/core/stream_clock.h"
#include "models/cpu/bus_port.h"
#include "models/cpu/core.h"
#include "models/cpu/memory_traffic.h"
#include "models/cpu/native_ports.h"
#include "models/gic/gic.h"
#include "models/mem/dram.h"
#include "models/mem/dram_window.h"
#include "models/mem/interconnect.h"
#include "models/net/ethernet_link.h"
#include "models/net/peer_host.h"
#include "models/smmu/smmu.h"
#include "models/stack/software_stack.h"
#include "models/toe/toe.h"
#include "netvp/ingress_wire.h"
#include "netvp/netvp_port.h"
#include "netvp/pacer.h"
#include "netvp/raw_socket.h"
#include "platform/toe_slot.h"
#include "platform/topology.h"

namespace vtoe::platform {

using config::Config;
using config::ConfigError;
using config::parse_byte_list;

constexpr std::uint64_t kToeRegBase = 0x4000'0000;
// The CCB's connection records beyond its on-chip cache (toe.ccb.cache) live below the
// hypervisor's RAM, reached by the TOE on its own SystemMMU stream.
constexpr std::uint64_t kCcbRecordBase = 0;
constexpr std::uint32_t kCcbRecordStream = 0x100;
constexpr std::uint64_t kHypervisorRamBase = 8ull << 20;
constexpr std::uint64_t kGuestRamBase = 16ull << 20;
constexpr std::uint64_t kGuestIpaBase = 0x8000'0000;
constexpr int kToeSpi = 0;  // the TOE's interrupt: SPI 0 = GIC ID 32
// platform.irq_steering: vm gives each TOE channel c a line of its own, SPI kQueueSpi + c.
constexpr int kQueueSpi = 4;

enum class Architecture { Native, DeviceEmulation, DirectAccess };

class Platform {
 public:
  // `network_outside`: a host of another scenario's topology (hosts[].kind: platform), whose
  // TOE's MAC that topology links; no network of its own is built.
  explicit Platform(const Config& cfg, bool network_outside = false);
  ~Platform();

  // Records DIR/<link><ext> for every link (link0, a topology's links, or the NetVP bridge's
  // netvp), or for those `only` names; ext as net::PcapWriter::extension().
  void enable_pcap(const std::string& dir, const std::vector<std::string>& only = {});
  // The names enable_pcap() takes.
  std::vector<std::string> link_names();
  void mark_baseline();
  // The interrupt lines, for waveforms: the GIC's outputs to core `k` (irq, virq, maintenance)
  // and its shared peripheral inputs (the TOE's irq is one of them).
  const sc_core::sc_signal<bool>& gic_irq(std::size_t k = 0) const { return gic_irq_.at(k); }
  const sc_core::sc_signal<bool>& gic_virq(std::size_t k = 0) const { return gic_virq_.at(k); }
  const sc_core::sc_signal<bool>& gic_maintenance(std::size_t k = 0) const {
    return gic_maint_.at(k);
  }
  const std::vector<std::unique_ptr<toe::Toe::IrqLine>>& spi_lines() const { return spi_lines_; }

  const Config& config() const { return cfg_; }
  Architecture architecture() const { return arch_; }
  cpu::Core& core() { return *core_; }  // core 0: the TOE's interrupt, drivers, hypervisor
  // platform.cores: the host's cores (native: further cores run workload processes, vms[].pin).
  std::size_t core_count() const { return 1 + more_cores_.size(); }
  cpu::Core& core(std::size_t k) { return k == 0 ? *core_ : *more_cores_.at(k - 1); }
  toe::Toe& toe() { return *toe_; }
  // Where the platform meets the wire: its TOE's MAC, or the software stack in front of it.
  net::FramePort& wire_out() { return stack_ ? stack_->to_wire : toe_->mac().to_wire; }
  net::FrameExport& wire_in() { return stack_ ? stack_->from_wire : toe_->mac().from_wire; }
  // software_stack.mode other than none: the stack's lanes on the cores (nullptr: the TOE).
  stack::SoftwareStack* software_stack() { return stack_.get(); }
  const std::string& software_stack_mode() const { return stack_mode_; }
  // The cores the software stack and virtual switch use on their own (tas_vm, tas_shared,
  // vswitch), for results.
  const std::vector<std::size_t>& stack_cores() const { return stack_cores_; }
  bool stack_has_vswitch() const { return stack_vswitch_; }
  mem::Dram& dram() { return *dram_; }
  smmu::Smmu& smmu() { return *smmu_; }
  // The simulated far end (network.peer = sim), or the bridge to a real interface (netvp).
  // With a topology (links:), the peer is the first light host and the link is links[0].
  bool netvp() const { return netvp_port_ != nullptr; }
  net::PeerHost& peer() { return topology_ ? *topology_->first_light() : *peer_; }
  net::EthernetLink& link() { return topology_ ? topology_->link(0) : *link_; }
  bool has_peer() { return topology_ ? topology_->first_light() != nullptr : peer_ != nullptr; }
  // The network the scenario's hosts:, switches: and links: describe; nullptr without links.
  Topology* topology() { return topology_.get(); }
  netvp::NetvpPort& netvp_port() { return *netvp_port_; }
  netvp::RawSocket& raw_socket() { return *raw_socket_; }
  netvp::Pacer& pacer() { return *pacer_; }
  hypervisor::Hypervisor* hypervisor() { return hyp_.get(); }
  // Device emulation's virtual TOE manager (nullptr under the other architectures).
  hypervisor::VirtualToeManager* vtoe_manager() { return vtoe_.get(); }
  std::size_t vm_count() const { return guests_.size(); }
  guest::GuestOs& guest(std::size_t i) { return *guests_.at(i); }
  const std::string& vm_name(std::size_t i) const { return vm_names_.at(i); }
  // VM i's own IPv4 address on the TOE's segment (host byte order).
  std::uint32_t vm_address(std::size_t i) const { return vm_addresses_.at(i); }
  // tcp_tx and tcp_rx with one process and a simulated peer: each message's latency between
  // the guest's send() and the peer's receipt, or the peer's send and the guest's recv()
  // (docs/outputs.md, "Latency"); nullptr for any other VM.
  const core::StreamClock* peer_clock(std::size_t vm) const { return peer_clocks_.at(vm).get(); }
  // The round-trip time samples the TOE's TCP engine took on VM `vm`'s connections (ps).
  const core::LogHistogram& rtt(std::size_t vm) const { return rtt_.at(vm); }
  tcpip::MacAddr vm_mac_address(std::size_t i) const { return vm_macs_.at(i); }
  // The physical channel VM i's traffic uses, and whether it reaches it directly.
  int channel_of(std::size_t vm) const { return assignment_.at(vm).channel; }
  bool direct(std::size_t vm) const { return assignment_.at(vm).direct; }

 private:
  void build_memory_and_bus();
  void build_toe();
  void build_virtualization();
  void check_timer_keys(const hypervisor::HypervisorParams& hp) const;
  std::uint32_t ccb_quota_per_vm() const;
  std::vector<std::size_t> pin_of(std::size_t vm) const;
  bool migrates(std::size_t vm) const;
  void build_guests();
  void build_shared_memory();
  void check_path(std::size_t vm, const guest::Workload& w, int peer_vm) const;
  void build_software_stack();
  std::size_t irq_core() const;
  // The core SPI `spi` of the TOE goes to, by platform.irq_steering (docs/cpu.md).
  void steer_toe_interrupts();
  void build_network();
  void build_topology();
  net::PeerHostParams peer_host_params(tcpip::Ipv4 ip, tcpip::MacAddr mac, std::uint64_t buffer,
                                       std::uint32_t isn_seed) const;
  void add_client_load(net::PeerHostParams& pp) const;

  Config cfg_;
  Architecture arch_ = Architecture::Native;
  std::size_t vms_ = 1;
  int channels_ = 1;
  std::unique_ptr<mem::Dram> dram_;
  std::unique_ptr<mem::Interconnect> bus_;
  std::unique_ptr<cpu::Core> core_;
  std::vector<std::unique_ptr<cpu::Core>> more_cores_;  // cpu1, cpu2, ...
  std::unique_ptr<gic::Gic> gic_;
  // Per core: the GIC's outputs to it.
  sc_core::sc_vector<sc_core::sc_signal<bool>> gic_irq_{"gic_irq"}, gic_virq_{"gic_virq"},
      gic_maint_{"gic_maint"};
  bool steer_per_vm_ = false;                                  // platform.irq_steering: vm
  std::vector<std::unique_ptr<toe::Toe::IrqLine>> spi_lines_;  // devices write them directly
  std::unique_ptr<smmu::Smmu> smmu_;
  toe::ToeParams toe_params_;        // as built; the simulated peer shares its protocol settings
  std::vector<bool> vm_peer_is_vm_;  // per VM: its workload talks to another VM (loopback)
  std::unique_ptr<toe::Toe> toe_;
  std::unique_ptr<cpu::BusPort> cpu_port_;
  std::unique_ptr<cpu::MemoryTraffic> cpu_traffic_;  // platform.cpu_memory_traffic: on
  std::unique_ptr<cpu::BusRegisterPort> bus_port_;
  std::unique_ptr<cpu::GicInterruptPort> native_irq_;
  std::unique_ptr<hypervisor::Hypervisor> hyp_;
  std::unique_ptr<hypervisor::VirtualToeManager> vtoe_;
  std::unique_ptr<hypervisor::DirectAccessManager> direct_access_;
  std::vector<std::unique_ptr<guest::GuestMemory>> memories_;
  std::vector<std::unique_ptr<guest::GuestMemory>> shared_views_;  // per region and VM
  std::vector<std::unique_ptr<guest::GuestOs>> guests_;
  std::vector<std::string> vm_names_;
  std::vector<std::uint32_t> vm_addresses_;
  std::vector<tcpip::MacAddr> vm_macs_;
  bool network_outside_ = false;
  std::vector<hypervisor::ChannelAssignment> assignment_;  // per VM
  std::unique_ptr<net::EthernetLink> link_;
  std::unique_ptr<net::PeerHost> peer_;
  std::vector<std::unique_ptr<core::StreamClock>> peer_clocks_;  // per VM; peer_clock()
  std::vector<core::LogHistogram> rtt_;                          // per VM; rtt()
  void time_peer_streams();
  void observe_rtt();
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<stack::SoftwareStack> stack_;
  std::string stack_mode_ = "none";
  std::vector<std::size_t> stack_cores_;  // dedicated stack cores, then the vswitch's
  bool stack_vswitch_ = false;
  std::vector<Topology::Peer> vm_peer_;  // with a topology: whom each VM's workload talks to
  std::unique_ptr<netvp::RawSocket> raw_socket_;
  std::unique_ptr<netvp::NetvpPort> netvp_port_;
  std::unique_ptr<netvp::IngressWire> netvp_wire_;  // port -> MAC at the line rate
  std::unique_ptr<netvp::Pacer> pacer_;
};

}  // namespace vtoe::platform
