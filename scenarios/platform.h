// Builds the simulated platform a scenario describes and owns its modules: DRAM and interconnect,
// the core, the TOE, the guest OS(es), the link and the peer host. Addresses:
//   0x0000_0000  DRAM (platform.dram_size); guest i's RAM starts at 16 MiB + i * guest_memory
//   0x4000_0000  TOE register pages, 4 KiB per control channel
#pragma once

#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "guest/guest_memory.h"
#include "guest/guest_os.h"
#include "models/cpu/core.h"
#include "models/mem/dram.h"
#include "models/mem/interconnect.h"
#include "models/net/ethernet_link.h"
#include "models/net/peer_host.h"
#include "models/toe/toe.h"
#include "scenarios/config.h"

namespace vtoe::scenario {

constexpr std::uint64_t kToeRegBase = 0x4000'0000;
constexpr std::uint64_t kGuestRamBase = 16ull << 20;

class Platform {
 public:
  explicit Platform(const Config& cfg);
  ~Platform();

  void enable_pcap(const std::string& dir);
  void mark_baseline();

  const Config& config() const { return cfg_; }
  cpu::Core& core() { return *core_; }
  toe::Toe& toe() { return *toe_; }
  mem::Dram& dram() { return *dram_; }
  net::PeerHost& peer() { return *peer_; }
  net::EthernetLink& link() { return *link_; }
  std::size_t vm_count() const { return guests_.size(); }
  guest::GuestOs& guest(std::size_t i) { return *guests_.at(i); }
  const std::string& vm_name(std::size_t i) const { return vm_names_.at(i); }

 private:
  Config cfg_;
  std::unique_ptr<mem::Dram> dram_;
  std::unique_ptr<mem::Interconnect> bus_;
  std::unique_ptr<cpu::Core> core_;
  std::unique_ptr<toe::Toe> toe_;
  std::unique_ptr<sc_core::sc_signal<bool>> toe_irq_;
  std::vector<std::unique_ptr<guest::GuestMemory>> memories_;
  std::vector<std::unique_ptr<guest::GuestOs>> guests_;
  std::vector<std::string> vm_names_;
  std::unique_ptr<net::EthernetLink> link_;
  std::unique_ptr<net::PeerHost> peer_;
};

}  // namespace vtoe::scenario
