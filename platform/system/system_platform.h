// The system platform: real ARM software on the ISS at QEMU virt's memory map (memory_map.h).
//
//   IssCpu --socket--> Interconnect --+-- Ram            0x4000_0000 (DMI)
//     ^ irq_in                        +-- GicRegisters   GICD 0x0800_0000, GICC 0x0801_0000,
//     |                               |                  GICH 0x0803_0000, GICV 0x0804_0000
//     +------ Gic.irq <-- spi[1] <----+-- Pl011          0x0900_0000 (SPI 1 = ID 33)
//                   <-- spi[2] <----+-- Pl031          0x0901_0000 (SPI 2 = ID 34)
//                                   +-- PcieHost       0x3f00_0000 (ECAM: the host bridge only)
//                   <-- spi[112] <--+-- Toe            0x0c00_0000 (SPI 112 = ID 144)
//                                   |     dma -> Smmu (bypass) -> Interconnect -> Ram
//                                   |     mac <-> link0 <-> peer (a simulated host)
//
// Built from SystemConfig (`vtoe system run` options) and a scenario for the TOE and its network
// (the built-in one by default): the TOE's parameters, the guest's address and the peer
// application the scenario's workload needs come from the same code as the TOE platform's
// (platform/toe_slot.h). Beside the TOE platform (platform/platform.h), which models software as
// cost tables; this one runs it.
// The core starts as QEMU's -kernel starts it (ArmCore::reset_system: Hyp with virtualization,
// else SVC). With SystemConfig::cpus > 1 the cores are a cluster (cpu::iss::Cluster: one global
// exclusive monitor, TLB and code maintenance broadcast), each with its own GIC CPU interface,
// virtual interface and timer PPIs (the Gic's banked copies, chosen by the sideband's `cpu` of
// its accesses), MPIDR 0x80000000 | index; core 0 starts at the image, the others powered off
// until PSCI CPU_ON. They run in turn, a quantum each (SystemC's order: deterministic). Its
// firmware calls (SMC; HVC without Hyp) reach Psci; the generic timer's outputs (IssCpu schedules
// one wake-up at the next deadline, no polling) drive PPIs 26/27/30, the PMU's overflow interrupt
// PPI 23; the GIC's virtual CPU interface drives the core's virtual IRQ.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "config/config.h"
#include "hypervisor/iss_hypervisor.h"
#include "models/cpu/iss/cluster.h"
#include "models/cpu/iss/iss_cpu.h"
#include "models/gic/gic.h"
#include "models/gic/gic_registers.h"
#include "models/mem/dram.h"
#include "models/mem/interconnect.h"
#include "models/mem/ram.h"
#include "models/net/ethernet_link.h"
#include "models/net/peer_host.h"
#include "models/pci/pcie_host.h"
#include "models/psci/psci.h"
#include "models/rtc/pl031.h"
#include "models/smmu/smmu.h"
#include "models/toe/toe.h"
#include "models/uart/pl011.h"
#include "platform/system/boot_loader.h"
#include "platform/system/bus_error_watch.h"
#include "platform/system/device_input_log.h"
#include "platform/system/dma_snoop.h"
#include "platform/system/snapshot.h"

namespace vtoe::platform::system {

struct SystemConfig {
  std::uint64_t memory = 0;  // RAM bytes (0: QEMU's default, 128 MiB)
  int cpus = 1;              // cores, 1 to 8 (`--smp`)
  bool virtualization = false;
  std::uint64_t max_instructions = 0;  // 0: no limit
  sc_core::sc_time clock_period{1, sc_core::SC_NS};
  // Cycles per retired instruction by class (1 each: one instruction per clock, as QEMU counts).
  std::array<std::uint32_t, cpu::iss::ArmCore::kClasses> cpi = cpu::iss::IssCpuParams::filled(1);
  sc_core::sc_time quantum{10, sc_core::SC_US};
  // A core asleep in WFI this long with nothing that could wake it ends the run.
  sc_core::sc_time idle_limit{1, sc_core::SC_SEC};
  // After the core stops, the devices and the network get this much simulated time to deliver
  // what is in flight (the TOE's last segments to the peer); then the run ends, whatever timers
  // they still hold (a closed connection's TIME_WAIT, a tcp_rx source's retries).
  sc_core::sc_time drain{100, sc_core::SC_MS};
  // The TOE in the platform-bus window with a simulated peer, configured by `scenario` (null:
  // the built-in scenario); off: neither, and no device-tree node.
  bool toe = true;
  // The PCIe host's device-tree node (its ECAM is always mapped). Off for the platform a
  // scenario builds (system_config): with Linux's PCI host driver bound, an ISS-mode run
  // restored from its booted snapshot differs from the booted run in its cache statistics (to
  // be found), and the studies need the two equal.
  bool pcie = true;
  const config::Config* scenario = nullptr;
  // The peer's applications that open connections wait for PeerHost::start_apps_now() (the
  // runner calls it when the guest's workload starts) instead of starting at their time: the
  // network stays silent while Linux boots, so a booted snapshot does not depend on the workload.
  bool peer_waits_for_workload = false;
  // The core's level-1 caches (timing only, docs/caches.md). With them the RAM's b_transport is
  // timed by `dram` (the DRAM timing core: fills, write-backs and the TOE's DMA contend) and the
  // TOE's DMA is snooped (DmaSnoop) to keep them coherent; without, both stay as they were.
  bool caches = false;
  cpu::iss::CacheGeometry icache, dcache;
  mem::DramParams dram;
  // Guests under the hypervisor model (hypervisor/iss_hypervisor.h): 0 runs the kernel on the
  // core itself; N boots it N times, each in a VM of `guest_memory` bytes with its own device
  // tree, UART and distributor, the consoles' lines prefixed "[vmN] " (with more than one). RAM is
  // then kHypervisorMemory for the hypervisor plus the VMs' (`memory` is not used).
  int guests = 0;
  std::uint64_t guest_memory = 0x800'0000;  // Table 2: 128 MiB
  // With guests and the TOE: direct access (paper §3.2): VM i drives channel i through its
  // stage 2, its DMA translated by the SystemMMU with the VM's stage 2, the interrupt bit vector
  // decoded by the hypervisor; off: the guests have no TOE (device emulation is not modelled on
  // the ISS yet).
  bool direct_access = false;
  hypervisor::HypervisorCosts hypervisor_costs;
  hypervisor::CreditParams scheduler;
};

// The hypervisor model's own memory (its stage-2 tables), after the guests' RAM when it hosts
// guests.
constexpr std::uint64_t kHypervisorMemory = 0x100'0000;

// The platform a scenario with platform.cpu_model=iss runs on: the core at platform.cpu_freq with
// the platform.iss.cpi.* cycles per class, the caches of platform.cpu_caches and
// platform.iss.{i,d}cache_*, cache_line (their memory: platform.dram_*), RAM of
// platform.guest_memory, the TOE and its network from `scenario` (which must outlive the
// platform). Throws config::ConfigError on a cache geometry that does not fit.
SystemConfig system_config(const config::Config& scenario);

// How a run ended.
enum class StopReason { Running, PowerOff, Reset, MaxInstructions, Idle, BusErrorLoop, CoreError };
const char* to_string(StopReason r);

class SystemPlatform : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(SystemPlatform);
  // `console` receives the UART's output, character by character. Throws std::invalid_argument
  // on a bad configuration (memory size) and std::runtime_error for what the ISS cannot do yet.
  SystemPlatform(const sc_core::sc_module_name& name, const SystemConfig& c,
                 std::function<void(char)> console);
  ~SystemPlatform() override;

  // Loads the images and sets the core up to enter them (before sc_start). Throws BootError.
  BootInfo boot(const BootFiles& files);

  // Booted snapshots (snapshot.h). Before sc_start: log what the core does to the devices.
  void record_device_inputs() { inputs_.start_recording(); }
  // Whether the log since time 0 is complete (recording, not overflowed).
  bool device_inputs_logged() const { return inputs_.recording() && !inputs_.overflowed(); }
  // A quiescent point, where a snapshot may be taken: the core asleep in WFI, nothing else due
  // at this instant, the devices' DMA never used. False with what is missing in `why_not`.
  bool quiescent(std::string* why_not = nullptr) const;
  // At a quiescent point: settles the core (IssCpu::settle, as a restore does) and returns the
  // snapshot (its key left to the caller; of use when device_inputs_logged()). The log stops.
  Snapshot take_snapshot();
  // Instead of boot(), before sc_start: holds the core and the monitor, and replays the
  // snapshot's inputs (moved out of `s`) to the devices from time 0. Throws SnapshotError when
  // the snapshot does not fit this platform (its RAM size, the kernel's time resolution).
  void begin_restore(Snapshot& s);
  // Once the simulation has reached s.time: checks that the replay gave the recorded answers,
  // loads the RAM, restores the core and the monitor and lets them run. Throws SnapshotError.
  void finish_restore(const Snapshot& s);

  StopReason stop_reason() const { return stop_; }
  // BusErrorLoop: the address of the last of the bus errors in a row.
  std::uint64_t error_address() const { return error_address_; }
  cpu::iss::IssCpu& cpu() { return cpu_; }
  // Core `i` (0: cpu()).
  cpu::iss::IssCpu& cpu(int i) {
    return i == 0 ? cpu_ : *secondaries_[static_cast<std::size_t>(i - 1)].cpu;
  }
  int cpus() const { return config_.cpus; }
  // Null with one core.
  cpu::iss::Cluster* cluster() { return cluster_.get(); }
  gic::Gic& gic() { return gic_; }
  uart::Pl011& uart() { return uart_; }
  rtc::Pl031& rtc() { return rtc_; }
  mem::Ram& ram() { return ram_; }
  psci::Psci& psci() { return psci_; }
  // Null when SystemConfig::toe is off.
  toe::Toe* toe() { return toe_.get(); }
  net::PeerHost* peer() { return peer_.get(); }
  net::EthernetLink* link() { return link_.get(); }
  // Null without caches.
  DmaSnoop* dma_snoop() { return snoop_.get(); }
  // Null without guests (SystemConfig::guests).
  hypervisor::IssHypervisor* hypervisor() { return hyp_.get(); }
  // Rising edges of the TOE's interrupt line (SPI 112) so far.
  std::uint64_t toe_interrupts() const { return toe_interrupts_; }
  const SystemConfig& config() const { return config_; }

 private:
  class Firmware;
  // A core beyond the first, with what connects it.
  struct Secondary {
    std::unique_ptr<cpu::iss::IssCpu> cpu;
    std::unique_ptr<BusErrorWatch> watch;
    std::unique_ptr<sc_core::sc_signal<bool>> irq, virq, maintenance;
    std::unique_ptr<Firmware> firmware;
  };
  void add_secondary(int i);
  // PSCI CPU_ON's work: core `i` reset and started at `entry` with r0 = `context_id`.
  void power_on(int i, std::uint32_t entry, std::uint32_t context_id);
  void timer_to_gic(cpu::iss::TimerKind k, bool level, int cpu);
  void refuse_with_cores(const char* what) const;
  void monitor();        // ends the run at --max-instructions and after a hopeless WFI
  void follow_virq();    // SC_METHOD: Gic.virq -> the core
  void count_toe_irq();  // SC_METHOD: the TOE's line rising
  void end(StopReason r);
  void build_toe(const config::Config& scenario);
  void replay_event(const DeviceInputLog::Input& in);
  void build_hypervisor();
  void build_direct_access();
  void guest_console(int vm, char c);
  // DeviceInputLog events: what crossed from the core to the devices outside the bus.
  enum InputEvent : std::uint32_t { kTimerLevel, kFirmwareCall, kPmuLevel };

  SystemConfig config_;
  mem::Interconnect bus_;
  mem::Ram ram_;
  gic::Gic gic_;
  gic::GicRegisters gic_regs_;
  uart::Pl011 uart_;
  rtc::Pl031 rtc_;
  pci::PcieHost pcie_;
  cpu::iss::IssCpu cpu_;
  BusErrorWatch watch_;
  DeviceInputLog inputs_;
  psci::Psci psci_;
  sc_core::sc_signal<bool> irq_, virq_, maintenance_, uart_irq_, rtc_irq_, idle_line_;
  std::unique_ptr<Firmware> firmware_;
  std::vector<Secondary> secondaries_;
  std::unique_ptr<cpu::iss::Cluster> cluster_;
  toe::Toe::IrqLine toe_irq_;
  std::unique_ptr<smmu::Smmu> smmu_;
  std::unique_ptr<DmaSnoop> snoop_;  // with caches: between the SMMU and the interconnect
  std::unique_ptr<toe::Toe> toe_;
  std::unique_ptr<net::EthernetLink> link_;
  std::unique_ptr<net::PeerHost> peer_;
  std::function<void(char)> console_;
  std::unique_ptr<hypervisor::IssHypervisor> hyp_;
  std::vector<bool> guest_line_start_;  // per VM: its next character begins a line
  std::vector<std::shared_ptr<smmu::Stage2Table>> dma_stage2_;  // per VM (direct access)
  std::unique_ptr<hypervisor::GuestDevice> toe_control_;        // the control page each VM sees
  StopReason stop_ = StopReason::Running;
  std::uint64_t error_address_ = 0;
  std::uint64_t toe_interrupts_ = 0;
  // The monitor's state (a snapshot carries it), and its hold while a restore replays.
  std::uint64_t monitor_last_ = 0;
  sc_core::sc_time monitor_asleep_;
  bool monitor_held_ = false;
  sc_core::sc_event released_;
};

}  // namespace vtoe::platform::system
