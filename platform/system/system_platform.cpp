#include "platform/system/system_platform.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "config/params.h"
#include "guest/apps.h"
#include "platform/system/memory_map.h"
#include "platform/toe_slot.h"

namespace vtoe::platform::system {

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::Running:
      return "running";
    case StopReason::PowerOff:
      return "power-off";
    case StopReason::Reset:
      return "reset";
    case StopReason::MaxInstructions:
      return "max-instructions";
    case StopReason::Idle:
      return "idle";
    case StopReason::BusErrorLoop:
      return "bus-error-loop";
    case StopReason::CoreError:
      return "core-error";
  }
  return "?";
}

// PSCI behind the core's SMC (and HVC without Hyp mode), as QEMU's virt conduit.
class SystemPlatform::Firmware : public cpu::iss::FirmwareCall {
 public:
  explicit Firmware(SystemPlatform& p, int index = 0) : p_(p), index_(index) {}
  bool smc(cpu::iss::ArmCore& core) override { return call(core); }
  bool hvc(cpu::iss::ArmCore& core) override { return call(core); }

 private:
  bool call(cpu::iss::ArmCore& core) {
    // Every call through the conduit is PSCI's: a function PSCI does not know returns
    // NOT_SUPPORTED (-1) in r0, as QEMU 7.2 answers (never an Undefined Instruction).
    const std::uint32_t fn = core.reg(0);
    if (index_ == 0) p_.inputs_.record({kFirmwareCall, fn, core.reg(1), core.reg(2), core.reg(3)});
    if (!psci::Psci::is_psci(fn)) {
      core.set_reg(0, 0xffffffffu);
      return true;
    }
    const psci::Result r = p_.psci_.call(fn, core.reg(1), core.reg(2), core.reg(3), index_);
    core.set_reg(0, r.r0);
    if (r.action == psci::Action::PowerOff) p_.end(StopReason::PowerOff);
    if (r.action == psci::Action::Reset) p_.end(StopReason::Reset);
    if (r.action == psci::Action::CpuOn) p_.power_on(r.target, r.entry, r.context_id);
    if (r.action == psci::Action::CpuOff) p_.cpu(index_).power_off();
    return true;
  }
  SystemPlatform& p_;
  int index_;
};

namespace {

std::uint64_t checked_memory(std::uint64_t m) {
  if (m == 0) return kDefaultRamSize;
  if (m % 4096 != 0 || m > kMaxRamSize) {
    throw std::invalid_argument("--memory " + std::to_string(m) +
                                ": RAM must be a multiple of 4 KiB and at most 3 GiB (it starts "
                                "at 0x40000000 in a 32-bit address space)");
  }
  return m;
}

int checked_cpus(int n) {
  if (n < 1 || n > gic::kMaxRegisterCpus)
    throw std::invalid_argument("--smp " + std::to_string(n) +
                                ": the platform has 1 to 8 cores (GICv2's CPU interfaces)");
  return n;
}

cpu::iss::IssCpuParams cpu_params(const SystemConfig& c) {
  cpu::iss::IssCpuParams p;
  p.clock_period = c.clock_period;
  p.cpi = c.cpi;
  p.sync_on_bus_access = true;  // device registers see the time of the access
  p.caches = c.caches;
  p.icache = c.icache;
  p.dcache = c.dcache;
  return p;
}

}  // namespace

SystemConfig system_config(const config::Config& scenario) {
  SystemConfig c;
  c.memory = scenario.get_bytes("platform.guest_memory");
  const double hz = scenario.get_freq("platform.cpu_freq");
  c.clock_period = sc_core::sc_time(1e12 / hz, sc_core::SC_PS);
  for (int k = 0; k < cpu::iss::ArmCore::kClasses; ++k)
    c.cpi[static_cast<std::size_t>(k)] = static_cast<std::uint32_t>(
        scenario.get_uint(std::string("platform.iss.cpi.") +
                          cpu::iss::to_string(static_cast<cpu::iss::InsnClass>(k))));
  c.caches = scenario.get_string("platform.cpu_caches") == "on";
  const auto line = static_cast<std::uint32_t>(scenario.get_bytes("platform.iss.cache_line"));
  auto geometry = [&](const char* which) {
    const std::string size_key = std::string("platform.iss.") + which + "_size";
    const std::string ways_key = std::string("platform.iss.") + which + "_ways";
    cpu::iss::CacheGeometry g;
    g.size = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(scenario.get_bytes(size_key), std::uint64_t{1} << 31));
    g.ways = static_cast<std::uint32_t>(scenario.get_uint(ways_key));
    g.line = line;
    try {
      cpu::iss::check_geometry(g, which);
    } catch (const std::invalid_argument& e) {
      const bool line_ok = g.line >= 16 && g.line <= 2048 && !(g.line & (g.line - 1));
      const std::string key = !line_ok                  ? "platform.iss.cache_line"
                              : (g.ways & (g.ways - 1)) ? ways_key
                                                        : size_key;
      throw config::ConfigError(scenario.where(key), key, e.what());
    }
    return g;
  };
  if (c.caches) {
    c.icache = geometry("icache");
    c.dcache = geometry("dcache");
    config::fill(scenario, mem::dram_params(), c.dram);
  }
  // Under a hypervisor: each of the scenario's VMs a guest of guest_memory, the hypervisor
  // model's costs and scheduler from the scenario (architecture de is refused by the runner).
  const std::string arch = scenario.get_string("architecture");
  if (arch != "native") {
    c.guests = static_cast<int>(scenario.list_size("vms"));
    c.guest_memory = c.memory;
    c.virtualization = true;
    c.direct_access = arch == "da";
    hypervisor::HypervisorParams hp;
    config::fill(scenario, hypervisor::hypervisor_params(), hp);
    c.hypervisor_costs = scenario.get_string("platform.iss.hypervisor_costs") == "xen"
                             ? hypervisor::xen_on_iss_costs(hp.costs)
                             : hp.costs;
    c.scheduler = hp.scheduler;
  }
  c.toe = true;
  c.pcie = false;  // see SystemConfig::pcie
  c.scenario = &scenario;
  c.peer_waits_for_workload = true;
  return c;
}

namespace {

std::uint64_t ram_size(const SystemConfig& c) {
  if (c.guests <= 0) return checked_memory(c.memory);
  if (c.guest_memory % (2u << 20) || c.guest_memory == 0 || c.guest_memory > (1ull << 30))
    throw std::invalid_argument("guest memory " + std::to_string(c.guest_memory) +
                                ": each VM's RAM must be a multiple of 2 MiB, at most 1 GiB");
  const std::uint64_t total =
      kHypervisorMemory + c.guest_memory * static_cast<std::uint64_t>(c.guests);
  if (total > kMaxRamSize)
    throw std::invalid_argument(std::to_string(c.guests) + " guests of " +
                                std::to_string(c.guest_memory) +
                                " bytes do not fit in the 3 GiB of RAM a 32-bit platform has");
  return total;
}

}  // namespace

SystemPlatform::SystemPlatform(const sc_core::sc_module_name& name, const SystemConfig& c,
                               std::function<void(char)> console)
    : sc_core::sc_module(name),
      config_(c),
      bus_("bus", 0),
      ram_("ram", ram_size(c)),
      gic_("gic", kSpiCount, checked_cpus(c.cpus)),
      gic_regs_("gic_registers", gic_),
      uart_("uart", console),
      rtc_("rtc"),
      pcie_("pcie"),
      cpu_("cpu", cpu_params(c)),
      watch_("bus_error_watch", 64,
             [this](std::uint64_t addr) {
               if (stop_ == StopReason::Running) error_address_ = addr;
               end(StopReason::BusErrorLoop);
             }),
      inputs_("device_inputs", kRamBase, ram_size(c)),
      psci_(cpu::iss::Cp15::kMpidr, c.cpus),
      toe_irq_("toe_irq"),
      console_(std::move(console)) {
  if (c.cpus > 1 && c.caches)
    throw std::invalid_argument(
        "the level-1 caches (platform.cpu_caches) are modelled for one core only: not with "
        "--smp " +
        std::to_string(c.cpus));
  if (c.cpus > 1 && c.guests > 0)
    throw std::invalid_argument(
        "guests under the hypervisor model run on one core: not with --smp " +
        std::to_string(c.cpus));
  config_.memory = ram_.size();
  tlm::tlm_global_quantum::instance().set(c.quantum);
  bus_.map(kRamBase, ram_.size(), ram_.in, "ram");
  bus_.map(kGicDistributorBase, gic::kDistributorSize, gic_regs_.distributor, "gicd");
  bus_.map(kGicCpuInterfaceBase, gic::kCpuInterfaceSize, gic_regs_.cpu, "gicc");
  bus_.map(kGicHypInterfaceBase, gic::kHypInterfaceSize, gic_regs_.hyp, "gich");
  bus_.map(kGicVirtualCpuInterfaceBase, gic::kVirtualCpuInterfaceSize, gic_regs_.vcpu, "gicv");
  bus_.map(kUartBase, uart::kPl011Size, uart_.in, "uart");
  bus_.map(kRtcBase, rtc::kPl031Size, rtc_.in, "rtc");
  bus_.map(kPcieEcamBase, pci::kEcamSize, pcie_.ecam, "pcie_ecam");
  cpu_.socket.bind(inputs_.in);
  inputs_.out.bind(watch_.in);
  watch_.out.bind(bus_.in);
  if (c.caches) ram_.set_timing(c.dram);

  if (c.toe) {
    if (c.scenario) {
      build_toe(*c.scenario);
    } else {
      const config::Config defaults = config::Config::defaults();
      build_toe(defaults);
    }
  }
  for (int i = 0; i < kSpiCount; ++i) {
    auto& spi = gic_.spi[static_cast<std::size_t>(i)];
    if (i == kUartSpi)
      spi.bind(uart_irq_);
    else if (i == kRtcSpi)
      spi.bind(rtc_irq_);
    else if (i == kToeSpi && toe_)
      spi.bind(toe_irq_);
    else
      spi.bind(idle_line_);
  }
  uart_.irq.bind(uart_irq_);
  rtc_.irq.bind(rtc_irq_);
  gic_.irq[0].bind(irq_);
  gic_.virq[0].bind(virq_);  // the core's virtual IRQ input comes with Hyp mode (ISS side)
  gic_.maintenance[0].bind(maintenance_);
  cpu_.irq_in.bind(irq_);

  cpu::iss::ArmCore& core = cpu_.core();
  firmware_ = std::make_unique<Firmware>(*this);
  core.set_firmware(firmware_.get());
  // The generic timer is IssCpu's (its count: simulated time x 62.5 MHz); its outputs are PPIs.
  cpu_.set_timer_output_listener([this](cpu::iss::TimerKind k, bool level) {
    inputs_.record({kTimerLevel, static_cast<std::uint32_t>(k), level, 0, 0});
    timer_to_gic(k, level, 0);
  });
  core.set_pmu_listener([this](bool level) {
    inputs_.record({kPmuLevel, level, 0, 0, 0});
    gic_.set_ppi_level(kPmuPpi, level);
  });
  SC_METHOD(follow_virq);
  sensitive << virq_;
  dont_initialize();
  if (toe_) {
    SC_METHOD(count_toe_irq);
    sensitive << toe_irq_;
    dont_initialize();
  }
  if (c.guests > 0) build_hypervisor();
  SC_THREAD(monitor);
  for (int i = 1; i < c.cpus; ++i) add_secondary(i);
  if (c.cpus > 1) {
    std::vector<cpu::iss::ArmCore*> cores;
    for (int i = 0; i < c.cpus; ++i) cores.push_back(&cpu(i).core());
    cluster_ = std::make_unique<cpu::iss::Cluster>(cores);
  }
}

SystemPlatform::~SystemPlatform() = default;

void SystemPlatform::build_hypervisor() {
  if (!config_.virtualization)
    throw std::invalid_argument("guests need the Virtualization Extensions (virtualization on)");
  hypervisor::IssHypervisorParams p;
  p.layout.ram_ipa = kRamBase;
  p.layout.ram_size = config_.guest_memory;
  p.layout.gicd_ipa = kGicDistributorBase;
  p.layout.gicc_ipa = kGicCpuInterfaceBase;
  p.layout.gicv_pa = kGicVirtualCpuInterfaceBase;
  p.layout.uart_ipa = kUartBase;
  p.layout.uart_virq = gic::kFirstSpi + kUartSpi;
  // The VMs' RAM one after the other from the base of RAM, the hypervisor's after them.
  const std::uint64_t hyp_offset =
      config_.guest_memory * static_cast<std::uint64_t>(config_.guests);
  for (int i = 0; i < config_.guests; ++i)
    p.vm_ram_pa.push_back(kRamBase + config_.guest_memory * static_cast<std::uint64_t>(i));
  p.costs = config_.hypervisor_costs;
  p.scheduler = config_.scheduler;
  p.tables_pa = kRamBase + hyp_offset;
  p.tables = ram_.host(hyp_offset, kHypervisorMemory);
  p.tables_size = kHypervisorMemory;
  p.cntfrq = kTimerFrequencyHz;
  guest_line_start_.assign(static_cast<std::size_t>(config_.guests), true);
  hyp_ = std::make_unique<hypervisor::IssHypervisor>(
      "hypervisor", p, cpu_, gic_, [this](int vm, char ch) { guest_console(vm, ch); });
  if (config_.direct_access && toe_) build_direct_access();
}

namespace {

// The TOE's control page as a guest with direct access sees it (trapped): one channel, no
// interrupt vector of its own (the hypervisor decodes the physical one), writes ignored.
class GuestToeControl : public hypervisor::GuestDevice {
 public:
  std::uint32_t read(std::uint64_t offset, unsigned /*size*/) override {
    return offset == toe::reg::kChannelCount ? 1u : 0u;
  }
  void write(std::uint64_t, std::uint32_t, unsigned) override {}
};

}  // namespace

void SystemPlatform::build_direct_access() {
  if (config_.guests > toe_->channel_count())
    throw std::invalid_argument(
        std::to_string(config_.guests) + " guests with direct access need " +
        "as many TOE channels; the TOE has " + std::to_string(toe_->channel_count()));
  toe_control_ = std::make_unique<GuestToeControl>();
  for (int vm = 0; vm < config_.guests; ++vm) {
    // VM i's channel i at the guest's TOE address, its control page trapped.
    hyp_->map_device(vm, kToeBase,
                     kToeBase + toe::reg::kChannelStride * static_cast<std::uint64_t>(vm),
                     toe::reg::kChannelStride);
    hyp_->add_device(vm, kToeBase + toe::reg::kControlUnitBase, toe::reg::kChannelStride,
                     toe_control_.get());
    // Its DMA (stream = channel) through the VM's stage 2.
    auto table = std::make_shared<smmu::Stage2Table>("vm" + std::to_string(vm) + ".stage2");
    table->map(kRamBase, kRamBase + config_.guest_memory * static_cast<std::uint64_t>(vm),
               config_.guest_memory, smmu::Perm::rw());
    smmu_->set_context(static_cast<std::uint32_t>(vm), table, static_cast<std::uint16_t>(vm + 1));
    dma_stage2_.push_back(std::move(table));
  }
  // The physical interrupt: the bit vector says which channels completed; each owner gets its
  // virtual TOE interrupt (the guest's device tree gives it the same ID).
  const int id = gic::kFirstSpi + kToeSpi;
  hyp_->set_irq_handler(id, [this, id] {
    std::uint64_t bits = 0;
    toe_->read(toe_->in, toe::reg::kControlUnitBase + toe::reg::kIrqVector, bits);
    toe_->write(toe_->in, toe::reg::kControlUnitBase + toe::reg::kIrqVector, bits);
    hyp_->charge(config_.hypervisor_costs.bitvector);
    for (int vm = 0; vm < config_.guests; ++vm)
      if (bits >> vm & 1) hyp_->inject(vm, id);
  });
}

void SystemPlatform::guest_console(int vm, char c) {
  if (!console_) return;
  auto&& start = guest_line_start_[static_cast<std::size_t>(vm)];
  if (start && config_.guests > 1) {
    for (char p : "[vm" + std::to_string(vm) + "] ") console_(p);
  }
  console_(c);
  start = c == '\n';
}

void SystemPlatform::timer_to_gic(cpu::iss::TimerKind k, bool level, int cpu) {
  using cpu::iss::TimerKind;
  gic_.set_ppi_level(k == TimerKind::Physical  ? kPhysicalTimerPpi
                     : k == TimerKind::Virtual ? kVirtualTimerPpi
                                               : kHypTimerPpi,
                     level, cpu);
}

void SystemPlatform::add_secondary(int i) {
  const std::string n = std::to_string(i);
  Secondary s;
  cpu::iss::IssCpuParams p = cpu_params(config_);
  p.cpu_index = static_cast<std::uint16_t>(i);
  s.cpu = std::make_unique<cpu::iss::IssCpu>(("cpu" + n).c_str(), p);
  s.watch = std::make_unique<BusErrorWatch>(("bus_error_watch" + n).c_str(), 64,
                                            [this](std::uint64_t addr) {
                                              if (stop_ == StopReason::Running)
                                                error_address_ = addr;
                                              end(StopReason::BusErrorLoop);
                                            });
  s.cpu->socket.bind(s.watch->in);
  s.watch->out.bind(bus_.in);
  s.irq = std::make_unique<sc_core::sc_signal<bool>>(("irq" + n).c_str());
  s.virq = std::make_unique<sc_core::sc_signal<bool>>(("virq" + n).c_str());
  s.maintenance = std::make_unique<sc_core::sc_signal<bool>>(("maintenance" + n).c_str());
  const auto k = static_cast<std::size_t>(i);
  gic_.irq[k].bind(*s.irq);
  gic_.virq[k].bind(*s.virq);
  gic_.maintenance[k].bind(*s.maintenance);
  s.cpu->irq_in.bind(*s.irq);
  s.firmware = std::make_unique<Firmware>(*this, i);
  cpu::iss::IssCpu* cpu = s.cpu.get();
  cpu->core().set_firmware(s.firmware.get());
  cpu->core().set_mpidr(cpu::iss::Cp15::kMpidr | static_cast<std::uint32_t>(i));
  cpu->set_timer_output_listener(
      [this, i](cpu::iss::TimerKind t, bool level) { timer_to_gic(t, level, i); });
  sc_core::sc_spawn_options o;
  o.spawn_method();
  o.set_sensitivity(s.virq.get());
  o.dont_initialize();
  sc_core::sc_signal<bool>* virq = s.virq.get();
  sc_core::sc_spawn([cpu, virq] { cpu->set_virq(virq->read()); }, ("follow_virq" + n).c_str(), &o);
  cpu->start_off();  // until PSCI CPU_ON, as QEMU virt's secondaries
  secondaries_.push_back(std::move(s));
}

void SystemPlatform::power_on(int i, std::uint32_t entry, std::uint32_t context_id) {
  cpu::iss::ArmCore& core = cpu(i).core();
  core.reset_system(config_.virtualization);  // as the first core started: Hyp or SVC
  for (int r = 1; r < 15; ++r) core.set_reg(r, 0);
  core.set_reg(0, context_id);
  core.set_pc(entry);  // bit 0: Thumb
  cpu(i).power_on();
}

void SystemPlatform::refuse_with_cores(const char* what) const {
  if (config_.cpus > 1)
    throw SnapshotError(std::string(what) + " holds one core's state: not with --smp " +
                        std::to_string(config_.cpus));
}

void SystemPlatform::build_toe(const config::Config& scenario) {
  // The scenario's first guest is the one Linux runs: its address is the TOE's, its workload
  // says what the peer runs.
  const bool direct = config_.guests > 0 && config_.direct_access;
  toe::ToeParams tp =
      scenario_toe_params(scenario, 1, direct ? toe::IrqMode::BitVector : toe::IrqMode::Level);
  smmu::SmmuParams sp;
  config::fill(scenario, smmu::smmu_params(), sp);
  smmu_ = std::make_unique<smmu::Smmu>("smmu", sp);
  smmu_->set_bypass(!direct);  // native: the driver gives the TOE physical addresses
  toe_ = std::make_unique<toe::Toe>("toe", tp);
  if (toe_->ccb().cache_entries() < tp.ccb_capacity)
    throw config::ConfigError(scenario.where("toe.ccb.cache"), "toe.ccb.cache",
                              "the system platform keeps every connection record on chip: give "
                              "toe.ccb.cache at least toe.ccb.connections (or 0)");
  toe_->irq(toe_irq_);
  toe_->dma.bind(smmu_->upstream);
  if (config_.caches) {
    snoop_ = std::make_unique<DmaSnoop>("dma_snoop",
                                        [this](std::uint64_t addr, std::uint64_t len, bool write) {
                                          cpu_.snoop(addr, len, write);
                                        });
    smmu_->downstream.bind(snoop_->in);
    snoop_->out.bind(bus_.in);
  } else {
    smmu_->downstream.bind(bus_.in);
  }
  bus_.map(kToeBase, toe::reg::kRegionSize, toe_->in, "toe");

  net::EthernetLinkParams lp;
  config::fill(scenario, net::ethernet_link_params(), lp);
  lp.seed = scenario.get_uint("seed");
  link_ = std::make_unique<net::EthernetLink>("link0", lp);
  net::PeerHostParams pp = peer_host_params(
      tp, ip_of(scenario, "network.peer_ip"), mac_of(2), scenario.get_bytes("network.peer_buffer"),
      static_cast<std::uint32_t>(scenario.get_uint("seed")) + 7919);
  pp.ecn_mark_frames = lp.ecn_threshold;
  guest::Workload w;
  config::fill_item(scenario, guest::workload_params(), 0, w);
  net::PeerApp app;
  if (peer_app_for(w, tp.stack.ip, app)) {
    if (config_.peer_waits_for_workload) app.start_ps = UINT64_MAX;
    pp.apps.push_back(app);
  }
  peer_ = std::make_unique<net::PeerHost>("peer", pp);
  toe_->mac().to_wire.bind(link_->a_in);
  link_->a_out.bind(toe_->mac().from_wire);
  peer_->mac().to_wire.bind(link_->b_in);
  link_->b_out.bind(peer_->mac().from_wire);
}

void SystemPlatform::follow_virq() { cpu_.set_virq(virq_.read()); }

void SystemPlatform::count_toe_irq() {
  if (toe_irq_.read()) ++toe_interrupts_;
}

void SystemPlatform::end(StopReason r) {
  if (stop_ != StopReason::Running) return;
  stop_ = r;
  cpu_.halt();
  for (Secondary& s : secondaries_) s.cpu->halt();
}

bool SystemPlatform::quiescent(std::string* why_not) const {
  auto no = [why_not](const char* why) {
    if (why_not) *why_not = why;
    return false;
  };
  if (hyp_) return no("guests under the hypervisor model are not snapshotted yet");
  if (!cpu_.sleeping()) return no("the core is not asleep in WFI");
  if (sc_core::sc_pending_activity_at_current_time())
    return no("something is still due at this instant");
  if (smmu_ && smmu_->bytes_forwarded() != 0)
    return no("the TOE has used its DMA (a snapshot does not replay it)");
  if (stop_ != StopReason::Running) return no("the run has ended");
  return true;
}

Snapshot SystemPlatform::take_snapshot() {
  refuse_with_cores("a booted snapshot");
  inputs_.stop_recording();
  cpu_.settle();
  Snapshot s;
  s.time = sc_core::sc_time_stamp().value();
  s.resolution =
      static_cast<std::uint64_t>(sc_core::sc_get_time_resolution().to_seconds() * 1e15 + 0.5);
  s.cpu = cpu_.save();
  s.monitor_last = monitor_last_;
  s.monitor_asleep = monitor_asleep_.value();
  s.inputs = inputs_.inputs();
  s.input_bytes = inputs_.bytes();
  s.ram_size = ram_.size();
  const std::uint8_t* ram = ram_.host(0, ram_.size());
  static const std::uint8_t zero[kSnapshotPage] = {};
  for (std::uint64_t page = 0; page < ram_.size() / kSnapshotPage; ++page) {
    const std::uint8_t* p = ram + page * kSnapshotPage;
    if (std::memcmp(p, zero, kSnapshotPage) == 0) continue;
    s.ram_pages.push_back(static_cast<std::uint32_t>(page));
    s.ram_data.insert(s.ram_data.end(), p, p + kSnapshotPage);
  }
  return s;
}

void SystemPlatform::begin_restore(Snapshot& s) {
  refuse_with_cores("a booted snapshot");
  if (s.ram_size != ram_.size())
    throw SnapshotError("the snapshot has " + std::to_string(s.ram_size) +
                        " bytes of RAM, this platform " + std::to_string(ram_.size()));
  const auto resolution =
      static_cast<std::uint64_t>(sc_core::sc_get_time_resolution().to_seconds() * 1e15 + 0.5);
  if (s.resolution != resolution)
    throw SnapshotError("the snapshot counts time in units of " + std::to_string(s.resolution) +
                        " fs, this simulation in " + std::to_string(resolution));
  cpu_.hold();
  monitor_held_ = true;
  inputs_.replay(std::move(s.inputs), std::move(s.input_bytes),
                 [this](const DeviceInputLog::Input& in) { replay_event(in); });
}

void SystemPlatform::replay_event(const DeviceInputLog::Input& in) {
  switch (in.args[0]) {
    case kPmuLevel:
      gic_.set_ppi_level(kPmuPpi, in.args[1] != 0);
      break;
    case kTimerLevel: {
      const auto k = static_cast<cpu::iss::TimerKind>(in.args[1]);
      using cpu::iss::TimerKind;
      gic_.set_ppi_level(k == TimerKind::Physical  ? kPhysicalTimerPpi
                         : k == TimerKind::Virtual ? kVirtualTimerPpi
                                                   : kHypTimerPpi,
                         in.args[2] != 0);
      break;
    }
    case kFirmwareCall:
      // Only PSCI keeps state (its actions, power-off and reset, would have ended the run).
      if (psci::Psci::is_psci(in.args[1]))
        psci_.call(in.args[1], in.args[2], in.args[3], in.args[4]);
      break;
    default:
      break;
  }
}

void SystemPlatform::finish_restore(const Snapshot& s) {
  if (sc_core::sc_time_stamp().value() != s.time)
    throw SnapshotError("the restore reached " + sc_core::sc_time_stamp().to_string() +
                        ", not the snapshot's time");
  if (!inputs_.replayed())
    throw SnapshotError(
        "the replay of the core's inputs to the devices did not finish by the "
        "snapshot's time");
  if (!inputs_.divergence().empty())
    throw SnapshotError("the devices went another way than when the snapshot was taken: " +
                        inputs_.divergence());
  std::uint8_t* ram = ram_.host(0, ram_.size());
  std::memset(ram, 0, ram_.size());
  for (std::size_t i = 0; i < s.ram_pages.size(); ++i)
    std::memcpy(ram + std::uint64_t{s.ram_pages[i]} * kSnapshotPage,
                s.ram_data.data() + i * kSnapshotPage, kSnapshotPage);
  monitor_last_ = s.monitor_last;
  monitor_asleep_ = sc_core::sc_time::from_value(s.monitor_asleep);
  cpu_.restore(s.cpu, static_cast<std::uint32_t>(kRamBase));
  monitor_held_ = false;
  released_.notify(sc_core::SC_ZERO_TIME);
}

BootInfo SystemPlatform::boot(const BootFiles& files) {
  if (hyp_) {
    // Each guest's images in its own RAM, at the IPAs QEMU would use, with a device tree of
    // its own (no Virtualization Extensions: PSCI over HVC, no GICH/GICV; no TOE yet).
    std::vector<hypervisor::IssVmBoot> boots;
    BootInfo first;
    for (int i = 0; i < config_.guests; ++i) {
      BootFiles f = files;
      f.virtualization = false;
      f.toe_channels = config_.direct_access && toe_ ? 1 : 0;
      // The host's PL031 and PCIe host are not the guests' (their pages are in no VM's stage 2).
      f.rtc = false;
      f.pcie = false;
      const std::uint64_t pa = kRamBase + config_.guest_memory * static_cast<std::uint64_t>(i);
      const BootInfo b =
          load_boot_files(f, kRamBase, config_.guest_memory,
                          [this, pa](std::uint64_t addr, const void* data, std::size_t len) {
                            std::memcpy(ram_.host(addr - kRamBase + pa - kRamBase, len), data, len);
                          });
      boots.push_back({b.entry, b.r0, b.r1, b.r2});
      if (i == 0) first = b;
    }
    hyp_->start(boots);
    return first;
  }
  BootFiles f = files;
  f.virtualization = config_.virtualization;
  f.toe_channels = toe_ ? toe_->channel_count() : 0;
  f.cpus = config_.cpus;
  f.pcie = config_.pcie;
  const BootInfo b = load_boot_files(f, kRamBase, ram_.size(),
                                     [this](std::uint64_t addr, const void* data, std::size_t len) {
                                       std::memcpy(ram_.host(addr - kRamBase, len), data, len);
                                     });
  cpu::iss::ArmCore& core = cpu_.core();
  core.reset_system(config_.virtualization);  // Hyp or SVC, A I F masked, MMU off
  core.set_reg(0, b.r0);
  core.set_reg(1, b.r1);
  core.set_reg(2, b.r2);
  core.set_pc(b.entry);
  for (int i = 1; i < config_.cpus; ++i) cpu(i).core().reset_system(config_.virtualization);
  return b;
}

void SystemPlatform::monitor() {
  const sc_core::sc_time step = config_.quantum;
  bool woken = false;
  if (monitor_held_) {
    // Restored: on from the snapshot's time (off the grid: nothing is due at a snapshot's
    // point), its next check on the grid of steps from time 0 that the run that booted follows.
    sc_core::wait(released_);
    const std::uint64_t into = sc_core::sc_time_stamp().value() % step.value();
    if (into) {
      sc_core::wait(sc_core::sc_time::from_value(step.value() - into), cpu_.done_event());
      woken = true;
    }
  }
  sc_core::sc_time& asleep = monitor_asleep_;
  std::uint64_t& last = monitor_last_;
  for (;;) {
    if (!woken) sc_core::wait(step, cpu_.done_event());
    woken = false;
    if (hyp_ && hyp_->all_stopped() && stop_ == StopReason::Running) {
      bool faulted = false;
      for (int vm = 0; vm < hyp_->vm_count(); ++vm)
        faulted = faulted || hyp_->vm_stop_reason(vm) != "power-off";
      end(faulted ? StopReason::CoreError : StopReason::PowerOff);
    }
    bool done = cpu_.done();
    for (Secondary& s : secondaries_) done = done || s.cpu->done();
    if (done || stop_ != StopReason::Running) {
      if (stop_ == StopReason::Running) {
        stop_ = StopReason::CoreError;
        for (Secondary& s : secondaries_) s.cpu->halt();  // the others stop with it
        if (!secondaries_.empty()) cpu_.halt();
      }
      break;
    }
    std::uint64_t n = cpu_.retired();
    for (Secondary& s : secondaries_) n += s.cpu->retired();
    if (config_.max_instructions && n >= config_.max_instructions) {
      end(StopReason::MaxInstructions);
      break;
    }
    // Every core asleep (or off) with no instruction retired for idle_limit and no timer armed:
    // nothing modelled can wake them.
    bool hopeless = n == last && (!cpu_.powered() || (cpu_.core().waiting_for_interrupt() &&
                                                      !cpu_.core().next_timer_deadline()));
    for (Secondary& s : secondaries_)
      hopeless = hopeless && (!s.cpu->powered() || (s.cpu->core().waiting_for_interrupt() &&
                                                    !s.cpu->core().next_timer_deadline()));
    asleep = hopeless ? asleep + step : sc_core::SC_ZERO_TIME;
    last = n;
    if (asleep >= config_.idle_limit) {
      end(StopReason::Idle);
      break;
    }
  }
  // The TOE, the link and the peer have timers of their own that would keep sc_start going
  // after the power-off (60 s of TIME_WAIT after a close, for ever with a tcp_rx source): they
  // get up to `drain` to deliver what is in flight, then the run ends; with nothing pending it
  // ends at once. (sc_stop's own notice would land in the guest's console output.)
  const sc_core::sc_time until = sc_core::sc_time_stamp() + config_.drain;
  while (sc_core::sc_pending_activity() && sc_core::sc_time_stamp() < until)
    sc_core::wait(
        std::min(sc_core::sc_time_to_pending_activity(), until - sc_core::sc_time_stamp()));
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO,
                                          sc_core::SC_DO_NOTHING);
  sc_core::sc_stop();
}

}  // namespace vtoe::platform::system
