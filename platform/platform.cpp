#include "platform/platform.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "config/params.h"
#include "models/net/pcap_writer.h"
#include "models/tcpip/stack.h"

namespace vtoe::platform {

Platform::Platform(const Config& cfg, bool network_outside)
    : cfg_(cfg), network_outside_(network_outside) {
  const std::string arch = cfg.get_string("architecture");
  arch_ = arch == "de"   ? Architecture::DeviceEmulation
          : arch == "da" ? Architecture::DirectAccess
                         : Architecture::Native;
  vms_ = cfg.list_size("vms");
  channels_ = static_cast<int>(cfg.get_uint("toe.channels"));
  // Which channel each VM's traffic goes through, and whether the VM reaches it directly.
  if (arch_ == Architecture::DirectAccess)
    assignment_ = hypervisor::assign_channels(vms_, channels_);
  else
    assignment_.assign(vms_, {0, arch_ == Architecture::Native});
  build_memory_and_bus();
  build_toe();
  if (arch_ != Architecture::Native) build_virtualization();
  if (Topology::described(cfg_)) {
    PlatformEnd end;
    for (std::size_t i = 0; i < vms_; ++i) {
      end.vm_names.push_back(cfg_.get_string("vms." + std::to_string(i) + ".name"));
      end.vm_ips.push_back(vm_ip(cfg_, i));
      end.vm_macs.push_back(vm_mac(cfg_, i));
    }
    end.prefix_len = toe_params_.stack.prefix_len;
    end.rate_bps = toe_params_.bandwidth_bps;
    topology_ = std::make_unique<Topology>(cfg_, end);
  }
  build_guests();
  build_shared_memory();
  build_software_stack();
  build_network();
  time_peer_streams();
  observe_rtt();
}

void Platform::time_peer_streams() {
  peer_clocks_.resize(vms_);
  if (network_outside_ || netvp_port_) return;
  for (std::size_t i = 0; i < vms_; ++i) {
    guest::Application& app = *guests_[i]->apps().front();
    const guest::Workload& w = app.workload();
    // One stream per VM: a peer tells its connections apart by the VM's address.
    if ((w.type != guest::WorkloadType::TcpTx && w.type != guest::WorkloadType::TcpRx) ||
        guests_[i]->apps().size() != 1 || w.path == guest::Path::Shm)
      continue;
    net::PeerHost* host = nullptr;
    if (topology_) {
      if (vm_peer_.at(i).light) host = topology_->light(vm_peer_.at(i).host);
    } else if (!vm_peer_is_vm_.at(i)) {
      host = peer_.get();
    }
    if (!host) continue;
    peer_clocks_[i] = std::make_unique<core::StreamClock>(w.message_size);
    app.set_peer_clock(peer_clocks_[i].get());
    host->time_stream(vm_address(i), peer_clocks_[i].get());
  }
}

void Platform::observe_rtt() {
  rtt_.assign(vms_, core::LogHistogram{});
  std::map<tcpip::Ipv4, std::size_t> vm_of;
  for (std::size_t i = 0; i < vms_; ++i) vm_of.emplace(vm_address(i), i);
  toe_->ppm().stack().set_rtt_observer([this, vm_of](tcpip::Ipv4 local, core::TimePs r) {
    if (const auto it = vm_of.find(local); it != vm_of.end()) rtt_[it->second].record(r);
  });
}

Platform::~Platform() = default;

void Platform::build_memory_and_bus() {
  mem::DramParams dp;
  config::fill(cfg_, mem::dram_params(), dp);
  const std::uint64_t guest_mem = cfg_.get_bytes("platform.guest_memory");
  if (kGuestRamBase + vms_ * guest_mem > dp.size) {
    // The advice names a value the next check accepts: DRAM ends below the TOE's registers.
    const std::uint64_t need = kGuestRamBase + vms_ * guest_mem;
    const std::string advice =
        need <= kToeRegBase
            ? "raise platform.dram_size to at least " +
                  std::to_string((need + (1 << 20) - 1) >> 20) +
                  "MiB or lower platform.guest_memory"
            : "DRAM ends at 1024MiB, below the TOE's registers: lower platform.guest_memory to "
              "at most " +
                  std::to_string(((kToeRegBase - kGuestRamBase) / vms_) >> 20) +
                  "MiB, or use fewer VMs";
    throw ConfigError(cfg_.where("platform.dram_size"), "platform.dram_size",
                      "DRAM of " + std::to_string(dp.size >> 20) + " MiB cannot hold " +
                          std::to_string(vms_) + " guests of " + std::to_string(guest_mem >> 20) +
                          " MiB above the first 16 MiB (" + advice + ")");
  }
  if (dp.size > kToeRegBase)
    throw ConfigError(cfg_.where("platform.dram_size"), "platform.dram_size",
                      "DRAM of " + std::to_string(dp.size >> 20) +
                          " MiB would reach the TOE's registers at 1 GiB (0x40000000); at most "
                          "1024MiB fits the address map");
  {
    // Each guest's kernel holds at least its driver's four rings and one socket's two buffers.
    const std::uint64_t rings = 4ull * cfg_.get_uint("guest.ring_entries") * toe::kDescBytes;
    const std::uint64_t socket =
        cfg_.get_bytes("guest.socket.send_buffer") + cfg_.get_bytes("guest.socket.recv_buffer");
    if (rings + socket > guest_mem)
      throw ConfigError(cfg_.where("guest.socket.send_buffer"), "guest.socket.send_buffer",
                        "one socket's send and receive buffers (" + std::to_string(socket >> 10) +
                            " KiB together) and the driver's rings do not fit a guest's " +
                            std::to_string(guest_mem >> 20) +
                            " MiB (lower guest.socket.* or raise platform.guest_memory)");
  }
  const bool at = cfg_.get_string("platform.timing") == "at";
  dp.at = at;
  mem::InterconnectParams ip;
  config::fill(cfg_, mem::interconnect_params(), ip);
  ip.at = at;
  dram_ = std::make_unique<mem::Dram>("dram", dp);
  bus_ = std::make_unique<mem::Interconnect>("bus", ip);
  bus_->map(0, dp.size, dram_->in, "dram");

  cpu::CoreParams cp;
  config::fill(cfg_, cpu::core_params(), cp);
  cp.timeslice_ps = cfg_.get_time("guest.context_switch_interval");
  cp.switch_cycles = cfg_.get_double("guest.costs.context_switch");
  core_ = std::make_unique<cpu::Core>("cpu0", cp, static_cast<int>(vms_));
  const std::uint64_t cores = cfg_.get_uint("platform.cores");
  for (std::uint64_t k = 1; k < cores; ++k)
    more_cores_.push_back(std::make_unique<cpu::Core>(("cpu" + std::to_string(k)).c_str(), cp,
                                                      static_cast<int>(vms_)));
  cpu_port_ = std::make_unique<cpu::BusPort>("cpu0_bus");
  cpu_port_->out.bind(bus_->in);
  bus_port_ = std::make_unique<cpu::BusRegisterPort>(cpu_port_->socket(), *core_,
                                                     cfg_.get_double("guest.costs.doorbell"));

  // platform.irq_steering: vm adds a line per TOE channel (after the four shared ones).
  steer_per_vm_ = cfg_.get_string("platform.irq_steering") == "vm";
  if (steer_per_vm_ && arch_ == Architecture::Native)
    throw ConfigError(cfg_.where("platform.irq_steering"), "platform.irq_steering",
                      "a native host's TOE interrupt serves one OS (its driver on "
                      "platform.irq_core); steering per VM needs architecture de or da");
  const int kSpis = kQueueSpi + (steer_per_vm_ ? channels_ : 0);
  gic_ = std::make_unique<gic::Gic>("gic", kSpis, static_cast<int>(cores));
  gic_irq_.init(cores);
  gic_virq_.init(cores);
  gic_maint_.init(cores);
  for (std::size_t k = 0; k < cores; ++k) {
    gic_->irq[k](gic_irq_[k]);
    gic_->virq[k](gic_virq_[k]);
    gic_->maintenance[k](gic_maint_[k]);
  }
  for (int i = 0; i < kSpis; ++i) {
    spi_lines_.push_back(std::make_unique<toe::Toe::IrqLine>(("spi" + std::to_string(i)).c_str()));
    gic_->spi[static_cast<std::size_t>(i)](*spi_lines_.back());
  }
  smmu::SmmuParams sp;
  config::fill(cfg_, smmu::smmu_params(), sp);
  smmu_ = std::make_unique<smmu::Smmu>("smmu", sp);
  smmu_->set_bypass(arch_ == Architecture::Native);  // native: device DMA uses physical addresses
  // Approximately timed: the stage-2 tables live in the hypervisor's RAM and walks read them.
  if (at) smmu_->set_walk_memory(kHypervisorRamBase, kGuestRamBase - kHypervisorRamBase);
}

void Platform::build_toe() {
  toe::ToeParams& tp = toe_params_;
  tp = scenario_toe_params(
      cfg_, vms_,
      arch_ == Architecture::DirectAccess ? toe::IrqMode::BitVector : toe::IrqMode::Level);
  toe_ = std::make_unique<toe::Toe>("toe", tp);
  const std::uint64_t records = toe_->ccb().backing_bytes();
  if (kCcbRecordBase + records > kHypervisorRamBase)
    throw ConfigError(cfg_.where("toe.ccb.connections"), "toe.ccb.connections",
                      std::to_string(tp.ccb_capacity) + " connection records of " +
                          std::to_string(tp.ccb_record) + " bytes need " +
                          std::to_string(records >> 10) + " KiB of host memory; at most " +
                          std::to_string((kHypervisorRamBase - kCcbRecordBase) >> 10) +
                          " KiB are reserved for them (lower toe.ccb.connections or "
                          "toe.ccb.record)");
  core::SidebandExtension records_sideband;
  records_sideband.stream_id = kCcbRecordStream;
  toe_->ccb().set_backing(kCcbRecordBase, records_sideband);
  if (arch_ != Architecture::Native) {  // the TOE's own stream: its record region, nothing else
    auto table = std::make_shared<smmu::Stage2Table>("ccb records");
    table->map(kCcbRecordBase, kCcbRecordBase, kHypervisorRamBase - kCcbRecordBase,
               smmu::Perm::rw());
    smmu_->set_context(kCcbRecordStream, table, core::SidebandExtension::kHost);
  }
  toe_->irq(*spi_lines_[kToeSpi]);
  if (steer_per_vm_)
    for (int c = 0; c < channels_; ++c)
      toe_->queue_irq[static_cast<std::size_t>(c)](
          *spi_lines_[static_cast<std::size_t>(kQueueSpi + c)]);
  toe_->dma.bind(smmu_->upstream);
  smmu_->downstream.bind(bus_->in);
  bus_->map(kToeRegBase, toe::reg::kRegionSize, toe_->in, "toe");
  if (arch_ == Architecture::Native) {
    // The driver's handler runs on platform.irq_core: the SPI goes to that core's interface.
    const std::size_t k = irq_core();
    gic_->set_targets(gic::kFirstSpi + kToeSpi, gic::CpuMask{1} << k);
    gic_->enable(gic::kFirstSpi + kToeSpi, true);
    native_irq_ = std::make_unique<cpu::GicInterruptPort>("cpu0_irq", *gic_, static_cast<int>(k));
    native_irq_->irq(gic_irq_[k]);
  }
}

// CCB entries one VM may hold: toe.ccb.quota, or an even share of the table.
std::uint32_t Platform::ccb_quota_per_vm() const {
  if (toe_params_.ccb_quota > 0) return toe_params_.ccb_quota;
  return std::max<std::uint32_t>(1, toe_params_.ccb_capacity / static_cast<std::uint32_t>(vms_));
}

// The timer and idling keys (docs/hypervisor.md, "Timer interrupts and idling") against each
// other and the architecture: each error names the file and the key.
void Platform::check_timer_keys(const hypervisor::HypervisorParams& hp) const {
  auto fail = [&](const std::string& key, const std::string& why) {
    throw ConfigError(cfg_.where(key), key, why);
  };
  if (hp.halt_poll > hp.scheduler.timeslice)
    fail("hypervisor.halt_poll",
         "a halt poll longer than the scheduler's slice (hypervisor.scheduler.timeslice) would "
         "hold the core past it");
  if (hp.scheduler.tick_phase >= hp.scheduler.tick)
    fail("hypervisor.scheduler.tick_phase", "must be below the tick (hypervisor.scheduler.tick)");
  if (hp.backend_thread && arch_ != Architecture::DeviceEmulation)
    fail("hypervisor.backend_thread",
         "a back-end thread serves the emulated device: it needs architecture de");
  if (hp.direct_irq && arch_ != Architecture::DirectAccess)
    fail("hypervisor.direct_irq",
         "direct device interrupts need architecture da: under de no device interrupt belongs "
         "to a VM (the hypervisor emulates the device)");
}

void Platform::build_virtualization() {
  hypervisor::HypervisorParams hp;
  hp.vms = static_cast<int>(vms_);
  config::fill(cfg_, hypervisor::hypervisor_params(), hp);
  for (std::size_t i = 0; i < vms_; ++i)
    hp.scheduler.weights.push_back(
        static_cast<unsigned>(cfg_.get_uint("vms." + std::to_string(i) + ".weight")));
  check_timer_keys(hp);
  if (core_count() > 1) {
    // Several cores: each vCPU is pinned to a core (vms[].pin), and each core schedules the
    // vCPUs pinned to it with the credit scheduler's pCPU queue.
    hp.scheduler.pcpus = static_cast<int>(core_count());
    for (std::size_t i = 0; i < vms_; ++i) {
      if (migrates(i)) {  // any core: the load balancing moves it
        hp.scheduler.domain.push_back(static_cast<int>(i));
        hp.scheduler.affinity.emplace_back();
        continue;
      }
      for (std::size_t k : pin_of(i)) {
        hp.scheduler.domain.push_back(static_cast<int>(i));
        hp.scheduler.affinity.push_back({static_cast<int>(k)});
      }
    }
  }
  hyp_ = std::make_unique<hypervisor::Hypervisor>("hypervisor", hp, *core_, *gic_, *bus_port_);
  for (std::size_t k = 1; k < core_count(); ++k) hyp_->add_core(core(k), static_cast<int>(k));
  for (std::size_t k = 0; k < core_count(); ++k) hyp_->irq[k](gic_irq_[k]);

  // Stage 2: each guest's RAM; under direct access, its TOE channel page if it has one of its own.
  const std::uint64_t guest_mem = cfg_.get_bytes("platform.guest_memory");
  for (std::size_t i = 0; i < vms_; ++i)
    hyp_->stage2(static_cast<int>(i))
        .map(kGuestIpaBase, kGuestRamBase + i * guest_mem, guest_mem, smmu::Perm::rw());
  if (arch_ == Architecture::DirectAccess) {
    hypervisor::DirectAccessParams dp;
    dp.assignment = assignment_;
    dp.channels = channels_;
    dp.toe_regs_pa = kToeRegBase;
    dp.guest_regs_ipa = kToeRegBase;
    for (std::size_t i = 0; i < vms_; ++i) dp.addresses.push_back(vm_ip(cfg_, i));
    direct_access_ = std::make_unique<hypervisor::DirectAccessManager>(dp, *hyp_);
    for (std::size_t i = 0; i < vms_; ++i)  // each VM's own channel holds at most its share
      if (assignment_[i].direct) toe_->ccb().set_quota(assignment_[i].channel, ccb_quota_per_vm());
    direct_access_->connect_channels(*smmu_, *toe_);
  }
  std::vector<int> emulated;
  for (std::size_t i = 0; i < vms_; ++i)
    if (!assignment_[i].direct) emulated.push_back(static_cast<int>(i));
  if (!emulated.empty()) {
    const int emulated_channel = assignment_[static_cast<std::size_t>(emulated.front())].channel;
    hypervisor::VirtualToeParams vp;
    vp.vms = emulated;
    vp.guest_regs_ipa = kToeRegBase;
    vp.channel = emulated_channel;
    vp.channel_regs_pa =
        kToeRegBase + static_cast<std::uint64_t>(emulated_channel) * toe::reg::kChannelStride;
    vp.ring_memory_pa = kHypervisorRamBase;
    vp.policy = toe_params_.dispatcher.policy;  // the same QoS as the TOE's own dispatcher
    vp.quanta = quanta_for(cfg_, emulated);
    vp.depth = toe_params_.dispatcher.tx_outstanding;
    vp.held_limit = toe_params_.completion_queue;
    vp.socket_quota = ccb_quota_per_vm();
    toe_->ccb().set_quota(emulated_channel,
                          static_cast<std::uint32_t>(vp.socket_quota * emulated.size()));
    for (int vm : emulated) vp.addresses.push_back(vm_ip(cfg_, static_cast<std::size_t>(vm)));
    vtoe_ = std::make_unique<hypervisor::VirtualToeManager>("vtoe_manager", vp, *hyp_, *dram_);
    if (hp.backend_thread)  // vhost's worker, where the TOE's interrupt is taken
      vtoe_->set_backend(core(irq_core()).add_hypervisor_context("vtoe_backend"));
    std::vector<hypervisor::MemoryRange> emulated_ram;
    for (int vm : emulated)
      emulated_ram.push_back(
          {kGuestRamBase + static_cast<std::uint64_t>(vm) * guest_mem, guest_mem});
    hypervisor::connect_emulated_channel(*smmu_, *toe_, emulated_channel,
                                         {kHypervisorRamBase, kGuestRamBase - kHypervisorRamBase},
                                         emulated_ram);
  }

  // The TOE's physical interrupt: the device-emulation manager's, or the bit vector's decode,
  // which hands the emulated channel's bit to that manager.
  hypervisor::VirtualToeManager* mgr = vtoe_.get();
  hypervisor::Hypervisor::IrqHandler serve_emulated;
  if (mgr) serve_emulated = [mgr](cpu::Core::Context& ctx) { mgr->handle_interrupt(ctx); };
  if (direct_access_ && steer_per_vm_) {
    // One interrupt per channel, each served on the core it is steered to (steer_toe_interrupts).
    direct_access_->set_emulated_channel_handler(serve_emulated);
    hypervisor::DirectAccessManager* da = direct_access_.get();
    for (int c = 0; c < channels_; ++c)
      hyp_->set_irq_handler(
          gic::kFirstSpi + kQueueSpi + c,
          [da, c](cpu::Core::Context& ctx) { da->handle_channel_interrupt(ctx, c); },
          da->vm_of_channel(c));
    toe::Toe* toe = toe_.get();
    hyp_->set_direct_irq_check([da, toe](int running, int id) {
      const int c = id - gic::kFirstSpi - kQueueSpi;
      return c >= 0 && da->owns_all(toe->irq_vector() & (1u << c), running);
    });
  } else if (direct_access_) {
    direct_access_->set_emulated_channel_handler(serve_emulated);
    hypervisor::DirectAccessManager* da = direct_access_.get();
    hyp_->set_irq_handler(gic::kFirstSpi + kToeSpi,
                          [da](cpu::Core::Context& ctx) { da->handle_interrupt(ctx); });
    toe::Toe* toe = toe_.get();
    hyp_->set_direct_irq_check(
        [da, toe](int running, int) { return da->owns_all(toe->irq_vector(), running); });
  } else if (steer_per_vm_) {
    // Device emulation: the emulated channel serves every VM; its own line replaces the shared.
    const int c = assignment_.front().channel;
    hyp_->set_irq_handler(gic::kFirstSpi + kQueueSpi + c, serve_emulated);
  } else {
    hyp_->set_irq_handler(gic::kFirstSpi + kToeSpi, serve_emulated);
  }
  steer_toe_interrupts();
}

// platform.irq_steering: core puts the TOE's one interrupt on platform.irq_core; vm gives each
// channel's interrupt the core of the VM that owns it (its vCPU 0's pin; a migrating vCPU's and
// the shared device-emulation channel's: platform.irq_core), as irqbalance or RSS place a
// per-queue vector on the core of the queue's consumer.
void Platform::steer_toe_interrupts() {
  const std::size_t home = irq_core();
  auto target = [&](int spi, std::size_t k) {
    gic_->set_targets(gic::kFirstSpi + spi, gic::CpuMask{1} << k);
  };
  target(kToeSpi, home);
  if (!steer_per_vm_) return;
  for (int c = 0; c < channels_; ++c) {
    std::size_t k = home;
    const int vm = direct_access_ ? direct_access_->vm_of_channel(c) : -1;
    if (vm >= 0 && !migrates(static_cast<std::size_t>(vm)))
      k = pin_of(static_cast<std::size_t>(vm)).front();
    target(kQueueSpi + c, k);
  }
}

// vms[].migrate: VM i's one vCPU is not pinned (several cores, de/da, every VM one vCPU).
bool Platform::migrates(std::size_t i) const {
  const std::string key = "vms." + std::to_string(i) + ".migrate";
  if (!cfg_.get_bool(key)) return false;
  if (arch_ == Architecture::Native)
    throw ConfigError(cfg_.where(key), key,
                      "a native host has no vCPUs to migrate (its processes are placed by "
                      "vms[].pin)");
  if (!cfg_.get_string("vms." + std::to_string(i) + ".pin").empty())
    throw ConfigError(cfg_.where(key), key, "a migrating vCPU is not pinned: drop vms[].pin");
  for (std::size_t v = 0; v < vms_; ++v)
    if (cfg_.get_uint("vms." + std::to_string(v) + ".vcpus") != 1)
      throw ConfigError(cfg_.where(key), key,
                        "vCPUs migrate on hosts whose VMs have one vCPU each (VM " +
                            std::to_string(v) + " has vms[].vcpus " +
                            std::to_string(cfg_.get_uint("vms." + std::to_string(v) + ".vcpus")) +
                            ")");
  return true;
}

// vms[].pin: the cores VM i's software runs on. Native: its processes, round robin (default all
// cores); virtualized: one core per vCPU, all different (default: the host's vCPUs in VM order
// on cores 0, 1, ... round robin).
std::vector<std::size_t> Platform::pin_of(std::size_t i) const {
  const std::string key = "vms." + std::to_string(i) + ".pin";
  const std::string vcpus_key = "vms." + std::to_string(i) + ".vcpus";
  const std::uint64_t vcpus = cfg_.get_uint(vcpus_key);
  if (arch_ == Architecture::Native && vcpus > 1)
    throw ConfigError(cfg_.where(vcpus_key), vcpus_key,
                      "a native host has no vCPUs: its OS runs on the cores themselves "
                      "(platform.cores, vms[].pin, vms[].workload.processes)");
  if (vcpus > core_count())
    throw ConfigError(cfg_.where(vcpus_key), vcpus_key,
                      std::to_string(vcpus) + " vCPUs pinned on a host of " +
                          std::to_string(core_count()) +
                          " cores: a VM's vCPUs run on different cores (raise platform.cores)");
  std::vector<std::size_t> pin;
  for (std::uint64_t k : config::parse_index_list(cfg_.get_string(key))) {
    if (k >= core_count())
      throw ConfigError(cfg_.where(key), key,
                        "core " + std::to_string(k) +
                            " does not exist (platform.cores: " + std::to_string(core_count()) +
                            ", cores 0.." + std::to_string(core_count() - 1) + ")");
    pin.push_back(static_cast<std::size_t>(k));
  }
  if (arch_ != Architecture::Native) {
    if (!pin.empty() && pin.size() != vcpus)
      throw ConfigError(cfg_.where(key), key,
                        std::to_string(pin.size()) + " cores pinned for a VM with " +
                            std::to_string(vcpus) + " vCPU(s): one core per vCPU (vms[].vcpus)");
    for (std::size_t a = 0; a < pin.size(); ++a)
      for (std::size_t b = a + 1; b < pin.size(); ++b)
        if (pin[a] == pin[b])
          throw ConfigError(cfg_.where(key), key,
                            "core " + std::to_string(pin[a]) +
                                " pinned twice: a VM's vCPUs run on different cores");
    if (pin.empty()) {
      std::size_t first = 0;  // the host's vCPUs before this VM's
      for (std::size_t v = 0; v < i; ++v)
        first += cfg_.get_uint("vms." + std::to_string(v) + ".vcpus");
      for (std::size_t j = 0; j < vcpus; ++j) pin.push_back((first + j) % core_count());
      // Round robin may wrap onto a core this VM already has (more vCPUs than cores is caught
      // above): shift it to the next free one.
      for (std::size_t j = 1; j < pin.size(); ++j)
        while (std::find(pin.begin(), pin.begin() + static_cast<std::ptrdiff_t>(j), pin[j]) !=
               pin.begin() + static_cast<std::ptrdiff_t>(j))
          pin[j] = (pin[j] + 1) % core_count();
    }
    return pin;
  }
  if (pin.empty())
    for (std::size_t k = 0; k < core_count(); ++k) pin.push_back(k);
  return pin;
}

void Platform::build_guests() {
  const std::size_t irq = irq_core();  // checked under every architecture
  const std::uint64_t guest_mem = cfg_.get_bytes("platform.guest_memory");
  if (const double hz = cfg_.get_freq("guest.tick");
      hz > 0 && static_cast<double>(cfg_.get_time("guest.tick_phase")) >= 1e12 / hz)
    throw ConfigError(cfg_.where("guest.tick_phase"), "guest.tick_phase",
                      "must be below one tick period (1/guest.tick)");
  std::set<std::pair<tcpip::Ipv4, std::uint16_t>> rx_ports;
  for (std::size_t i = 0; i < vms_; ++i) {
    const std::string p = "vms." + std::to_string(i) + ".";
    const std::uint64_t pa = kGuestRamBase + i * guest_mem;
    const std::uint64_t ipa = arch_ == Architecture::Native ? pa : kGuestIpaBase;
    // The guest's own accesses to its RAM: stage 2 maps it linearly.
    memories_.push_back(
        std::make_unique<guest::GuestMemory>(mem::DramWindow(*dram_, ipa, pa, guest_mem)));
    if (cfg_.get_bool("platform.cpu_memory_traffic")) {
      if (!cpu_traffic_)
        cpu_traffic_ =
            std::make_unique<cpu::MemoryTraffic>("cpu0_memory", cpu_port_->socket(), *core_);
      memories_.back()->set_traffic(cpu_traffic_.get());
    }
    if (vtoe_ && cpu_traffic_) vtoe_->set_traffic(cpu_traffic_.get());
    guest::GuestParams gp;
    gp.owner = static_cast<int>(i);
    config::fill(cfg_, guest::guest_params(), gp);
    gp.driver.regs_addr = kToeRegBase;  // where every guest finds its TOE channel
    gp.sockets.local_ip = vm_ip(cfg_, i);
    vm_addresses_.push_back(gp.sockets.local_ip);
    vm_macs_.push_back(vm_mac(cfg_, i));
    guest::Workload w;
    config::fill_item(cfg_, guest::workload_params(), i, w);
    w.peer_ip = ip_of(cfg_, "network.peer_ip");
    w.seed = (cfg_.get_uint("seed") << 16) ^ i;
    const bool talks = w.type == guest::WorkloadType::TcpTx ||
                       w.type == guest::WorkloadType::TcpRx || w.type == guest::WorkloadType::Rpc ||
                       w.type == guest::WorkloadType::Flows ||
                       w.type == guest::WorkloadType::Connect;
    // A peer that is another VM on this TOE: the connection stays inside it (toe.loopback).
    int peer_vm = -1;
    for (std::size_t j = 0; talks && !w.peer.empty() && j < vms_; ++j)
      if (cfg_.get_string("vms." + std::to_string(j) + ".name") == w.peer)
        peer_vm = static_cast<int>(j);
    vm_peer_is_vm_.push_back(peer_vm >= 0);
    if (peer_vm >= 0) {
      auto fail = [&](const std::string& why) {
        throw ConfigError(cfg_.where(p + "workload.peer"), p + "workload.peer",
                          "names VM '" + w.peer + "': " + why);
      };
      if (w.path != guest::Path::Shm && !cfg_.get_bool("toe.loopback"))
        fail(
            "a connection between two VMs on one TOE needs toe.loopback: true (or "
            "workload.path shm over a shared_memory[] region)");
      if (peer_vm == static_cast<int>(i)) fail("a VM cannot be its own peer");
      if (w.type == guest::WorkloadType::TcpRx)
        fail(
            "tcp_rx is served by the simulated peer; give the other VM a tcp_tx, rpc or flows "
            "workload that names this one, and this one a sink or echo");
      if (topology_) fail("VM peers are not supported with links: yet");
      w.peer_ip = vm_ip(cfg_, static_cast<std::size_t>(peer_vm));
    } else if (topology_) {
      const Topology::Peer peer = talks ? topology_->peer_of(i, w.peer) : Topology::Peer{};
      vm_peer_.push_back(peer);
      if (talks) w.peer_ip = peer.ip;
    } else if (network_outside_ && talks) {
      throw ConfigError(cfg_.where(p + "workload.type"), p + "workload.type",
                        std::string("a platform host's VMs serve others (sink, echo, iperf3) or "
                                    "compute (cpu); ") +
                            guest::to_string(w.type) +
                            " needs a peer, which only the main scenario's VMs can name yet");
    } else if (!w.peer.empty()) {
      throw ConfigError(cfg_.where(p + "workload.peer"), p + "workload.peer",
                        "names host '" + w.peer +
                            "', and the scenario has no links: (hosts "
                            "are reached over links)");
    }
    if (w.type == guest::WorkloadType::TcpRx && !rx_ports.insert({vm_ip(cfg_, i), w.port}).second)
      throw ConfigError(cfg_.source(), p + "workload.port",
                        "port " + std::to_string(w.port) +
                            " is already where another tcp_rx VM with the same address listens");
    if (w.type == guest::WorkloadType::Rpc && w.connections > ccb_quota_per_vm())
      throw ConfigError(cfg_.where(p + "workload.connections"), p + "workload.connections",
                        std::to_string(w.connections) + " connections, but the TOE holds " +
                            std::to_string(ccb_quota_per_vm()) +
                            " for this VM (raise toe.ccb.connections or set toe.ccb.quota)");
    check_path(i, w, peer_vm);
    gp.sockets.user_space = w.path == guest::Path::User;
    gp.driver.polled = w.path == guest::Path::User;
    gp.sockets.zero_copy = w.zero_copy;
    // Its processes, and the cores they run on (round robin over vms[].pin, default all cores).
    if (w.processes > 1 && w.type != guest::WorkloadType::TcpTx &&
        w.type != guest::WorkloadType::Rpc && w.type != guest::WorkloadType::Flows &&
        w.type != guest::WorkloadType::Connect && w.type != guest::WorkloadType::Cpu)
      throw ConfigError(cfg_.where(p + "workload.processes"), p + "workload.processes",
                        std::string("several processes run tcp_tx, rpc, flows or cpu; ") +
                            guest::to_string(w.type) +
                            " serves each connection with a process of its own "
                            "(workload.workers)");
    // The processes go round robin over the pinned cores (virtualized: over the VM's vCPUs, each
    // on its core); the kernel's handler and thread run on core 0 natively, on vCPU 0's core in
    // a VM.
    const bool moving = migrates(i);  // (natively an error)
    const std::vector<std::size_t> pin =
        moving
            ? std::vector<std::size_t>{static_cast<std::size_t>(hyp_->host_of(static_cast<int>(i)))}
            : pin_of(i);
    std::vector<cpu::Core*> app_cores;
    for (std::uint32_t n = 0; n < w.processes; ++n) {
      gp.workloads.push_back(w);
      app_cores.push_back(&core(pin[n % pin.size()]));
    }
    cpu::Core& os_core = arch_ == Architecture::Native ? core(irq) : core(pin.front());
    const std::string name = cfg_.get_string(p + "name");
    vm_names_.push_back(name);
    cpu::RegisterPort& regs = hyp_ ? hyp_->register_port(static_cast<int>(i))
                                   : static_cast<cpu::RegisterPort&>(*bus_port_);
    cpu::InterruptPort& irq = hyp_ ? hyp_->interrupt_port(static_cast<int>(i))
                                   : static_cast<cpu::InterruptPort&>(*native_irq_);
    cpu::TimerPort* timer = hyp_ ? &hyp_->timer_port(static_cast<int>(i)) : nullptr;
    guests_.push_back(std::make_unique<guest::GuestOs>(name.c_str(), os_core, *memories_.back(), gp,
                                                       regs, irq, timer, app_cores));
    // A VM of several vCPUs: its kernel wakes a process on another vCPU with an IPI.
    if (hyp_ && pin.size() > 1) {
      hyp_->count_guest_ipis();
      hypervisor::Hypervisor* hyp = hyp_.get();
      const int vm = static_cast<int>(i);
      guests_.back()->sockets().set_ipi(
          [hyp, vm](cpu::Core::Context& from, cpu::Core& to) { hyp->guest_ipi(vm, from, to); });
    }
    // A server VM with several vCPUs serves its connections on all of them, round robin.
    if (arch_ != Architecture::Native && !moving && pin.size() > 1 &&
        (w.type == guest::WorkloadType::Sink || w.type == guest::WorkloadType::Echo)) {
      std::vector<cpu::Core*> vcpu_cores;
      for (std::size_t k : pin) vcpu_cores.push_back(&core(k));
      guests_.back()->apps().front()->set_worker_cores(std::move(vcpu_cores));
    }
  }
}

// vms[].workload.path: what each path needs of the scenario.
void Platform::check_path(std::size_t i, const guest::Workload& w, int peer_vm) const {
  const std::string p = "vms." + std::to_string(i) + ".workload.";
  auto fail = [&](const std::string& key, const std::string& why) {
    throw ConfigError(cfg_.where(p + key), p + key, why);
  };
  if (w.path == guest::Path::User) {
    if (arch_ == Architecture::DeviceEmulation)
      fail("path",
           "a user-space TOE channel needs architecture da or native: under de the VM's "
           "channel is the hypervisor's emulation, which traps every access");
    if (!assignment_.at(i).direct)
      fail("path", "a user-space TOE channel needs a channel of the VM's own (toe.channels: " +
                       std::to_string(channels_) + " for " + std::to_string(vms_) + " VMs)");
  }
  using T = guest::WorkloadType;
  if (w.cooperative && (w.type != T::Rpc || w.path != guest::Path::User))
    fail("cooperative",
         "cooperative threads are rpc processes of path user (they hand the core "
         "on when a poll finds nothing)");
  if (w.cooperative && cfg_.get_uint("vms." + std::to_string(i) + ".vcpus") > 1)
    fail("cooperative", "cooperative threads share one core: give the VM one vCPU");
  if (w.path != guest::Path::Shm) return;
  if (w.type != T::Rpc && w.type != T::TcpTx && w.type != T::Echo && w.type != T::Sink)
    fail("path", std::string("path shm carries rpc, tcp_tx, echo and sink, not ") +
                     guest::to_string(w.type));
  if ((w.type == T::Rpc || w.type == T::TcpTx) && peer_vm < 0)
    fail("peer", "path shm: name the VM (vms[].name) at the other end of the shared memory");
  if (w.processes > 1)
    fail("processes", "path shm: one process per VM uses the region's ring pair");
}

// shared_memory[]: the monitor's regions. Each is placed in DRAM clear of every VM's RAM, the
// hypervisor's and the other regions, and mapped into both VMs' stage 2 (natively the two
// processes see it at its physical address); the VMs' shm workloads get their view of it.
void Platform::build_shared_memory() {
  const std::size_t regions = cfg_.list_size("shared_memory");
  const std::uint64_t guest_mem = cfg_.get_bytes("platform.guest_memory");
  const std::uint64_t dram = cfg_.get_bytes("platform.dram_size");
  const bool native = arch_ == Architecture::Native;
  struct Placed {
    std::uint64_t pa, ipa, size;
    std::size_t a, b;
  };
  std::vector<Placed> placed;
  std::uint64_t next_pa = kGuestRamBase + vms_ * guest_mem;
  std::uint64_t next_ipa = kGuestIpaBase + guest_mem;
  auto overlaps = [](std::uint64_t a, std::uint64_t an, std::uint64_t b, std::uint64_t bn) {
    return a < b + bn && b < a + an;
  };
  auto mib = [](std::uint64_t v) { return std::to_string(v >> 20) + "MiB"; };
  std::vector<int> region_of(vms_, -1);
  for (std::size_t r = 0; r < regions; ++r) {
    const std::string k = "shared_memory." + std::to_string(r) + ".";
    auto fail = [&](const std::string& key, const std::string& why) {
      throw ConfigError(cfg_.where(k + key), k + key, why);
    };
    // Its two VMs.
    std::vector<std::size_t> vms;
    const std::string list = cfg_.get_string(k + "vms");
    std::size_t from = 0;
    while (from <= list.size()) {
      std::size_t comma = list.find(',', from);
      if (comma == std::string::npos) comma = list.size();
      std::string name = list.substr(from, comma - from);
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(' ') + 1);
      if (!name.empty()) {
        const auto it = std::find(vm_names_.begin(), vm_names_.end(), name);
        if (it == vm_names_.end()) fail("vms", "no VM is named '" + name + "' (vms[].name)");
        vms.push_back(static_cast<std::size_t>(it - vm_names_.begin()));
      }
      from = comma + 1;
    }
    if (vms.size() != 2 || vms[0] == vms[1])
      fail("vms", "names two different VMs (vms[].name, comma separated), not '" + list + "'");
    const std::uint64_t size = cfg_.get_bytes(k + "size");
    const std::uint64_t slot = cfg_.get_bytes(k + "slot");
    if (size % 4096) fail("size", "a whole number of 4 KiB pages (the monitor maps pages)");
    if ((size / 2 - guest::ShmRing::kHeaderBytes) / slot < 2)
      fail("slot", "each half of the region (one ring) must hold two slots or more");
    // Where it lies in DRAM.
    std::uint64_t pa = cfg_.get_bytes(k + "pa");
    if (pa == 0) pa = next_pa;
    if (pa % 4096) fail("pa", "must be 4 KiB aligned (the monitor maps pages)");
    if (overlaps(pa, size, 0, kGuestRamBase))
      fail("pa", "[" + mib(pa) + ", +" + std::to_string(size) +
                     "B) overlaps the hypervisor's memory below " + mib(kGuestRamBase));
    for (std::size_t v = 0; v < vms_; ++v)
      if (overlaps(pa, size, kGuestRamBase + v * guest_mem, guest_mem))
        fail("pa", "overlaps VM '" + vm_names_[v] + "''s RAM [" +
                       mib(kGuestRamBase + v * guest_mem) + ", " +
                       mib(kGuestRamBase + (v + 1) * guest_mem) + ")");
    for (std::size_t o = 0; o < placed.size(); ++o)
      if (overlaps(pa, size, placed[o].pa, placed[o].size))
        fail("pa", "overlaps shared_memory[" + std::to_string(o) + "]");
    if (pa + size > dram || overlaps(pa, size, kToeRegBase, toe::reg::kRegionSize))
      fail("pa", "beyond DRAM (platform.dram_size " + mib(dram) + ")");
    // Where the VMs see it.
    std::uint64_t ipa = cfg_.get_bytes(k + "ipa");
    if (native) {
      if (ipa != 0 && ipa != pa)
        fail("ipa",
             "a native host's processes see the region at its physical address "
             "(shared_memory[].pa); drop ipa");
      ipa = pa;
    } else {
      if (ipa == 0) ipa = next_ipa;
      if (ipa % 4096) fail("ipa", "must be 4 KiB aligned (stage 2 maps pages)");
      if (overlaps(ipa, size, kGuestIpaBase, guest_mem))
        fail("ipa", "overlaps the VMs' own RAM, which they see at [" + mib(kGuestIpaBase) + ", " +
                        mib(kGuestIpaBase + guest_mem) + ")");
      if (overlaps(ipa, size, kToeRegBase, toe::reg::kRegionSize))
        fail("ipa", "overlaps the TOE's registers at " + mib(kToeRegBase));
      for (std::size_t o = 0; o < placed.size(); ++o) {
        const bool shares_a_vm = placed[o].a == vms[0] || placed[o].a == vms[1] ||
                                 placed[o].b == vms[0] || placed[o].b == vms[1];
        if (shares_a_vm && overlaps(ipa, size, placed[o].ipa, placed[o].size))
          fail("ipa", "overlaps shared_memory[" + std::to_string(o) + "] in a VM that has both");
      }
      for (std::size_t v : vms)
        hyp_->stage2(static_cast<int>(v)).map(ipa, pa, size, smmu::Perm::rw());
    }
    placed.push_back({pa, ipa, size, vms[0], vms[1]});
    next_pa = std::max(next_pa, (pa + size + 4095) / 4096 * 4096);
    next_ipa = std::max(next_ipa, (ipa + size + 4095) / 4096 * 4096);
    // Each VM's view, and its shm workload on it.
    for (std::size_t side = 0; side < 2; ++side) {
      const std::size_t v = vms[side];
      shared_views_.push_back(
          std::make_unique<guest::GuestMemory>(mem::DramWindow(*dram_, ipa, pa, size)));
      if (cpu_traffic_) shared_views_.back()->set_traffic(cpu_traffic_.get());
      for (const auto& app : guests_[v]->apps()) {
        const guest::Workload& w = app->workload();
        if (w.path != guest::Path::Shm) continue;
        const bool client =
            w.type == guest::WorkloadType::Rpc || w.type == guest::WorkloadType::TcpTx;
        if (client && w.peer != vm_names_[vms[1 - side]]) continue;  // another region's
        if (region_of[v] >= 0)
          throw ConfigError(cfg_.where(k + "vms"), k + "vms",
                            "VM '" + vm_names_[v] +
                                "' already serves its shm workload over "
                                "shared_memory[" +
                                std::to_string(region_of[v]) + "]");
        region_of[v] = static_cast<int>(r);
        app->use_shared_memory(*shared_views_.back(), ipa, size, slot, side == 0);
      }
    }
  }
  for (std::size_t v = 0; v < vms_; ++v) {
    const std::string p = "vms." + std::to_string(v) + ".workload.";
    const guest::Workload& w = guests_[v]->apps().front()->workload();
    if (w.path != guest::Path::Shm) continue;
    if (region_of[v] < 0)
      throw ConfigError(
          cfg_.where(p + "path"), p + "path",
          "path shm, but no shared_memory[] region names VM '" + vm_names_[v] + "' (and its peer)");
    const auto peer = std::find(vm_names_.begin(), vm_names_.end(), w.peer);
    if (peer == vm_names_.end()) continue;  // a server
    const guest::Workload& pw =
        guests_[static_cast<std::size_t>(peer - vm_names_.begin())]->apps().front()->workload();
    if (pw.path != guest::Path::Shm ||
        (pw.type != guest::WorkloadType::Echo && pw.type != guest::WorkloadType::Sink))
      throw ConfigError(
          cfg_.where(p + "peer"), p + "peer",
          "path shm: VM '" + w.peer + "' must serve it with an echo or sink workload of path shm");
  }
}

// platform.irq_core: the core that takes the TOE's interrupt (its SPI's GIC target). Natively
// the driver's handler and kernel thread run there (an IRQ affinity); under de/da the
// hypervisor's handler runs there (with platform.irq_steering: vm, for the channels no pinned VM
// owns).
std::size_t Platform::irq_core() const {
  const std::string key = "platform.irq_core";
  const std::uint64_t k = cfg_.get_uint(key);
  if (k >= core_count())
    throw ConfigError(cfg_.where(key), key,
                      "core " + std::to_string(k) +
                          " does not exist (platform.cores: " + std::to_string(core_count()) + ")");
  return static_cast<std::size_t>(k);
}

// software_stack.*: the stack's lanes (docs/software-stack.md). The TOE's engine keeps the
// protocol logic; the lanes hold each frame for its per-frame and per-byte work on a core.
void Platform::build_software_stack() {
  stack_mode_ = cfg_.get_string("software_stack.mode");
  if (stack_mode_ == "none") return;
  if (cfg_.get_string("network.peer") == "netvp")
    throw ConfigError(cfg_.where("software_stack.mode"), "software_stack.mode",
                      "a software stack is not modelled with network.peer: netvp");
  stack::SoftwareStackParams sp;
  sp.tx_cycles = cfg_.get_double("software_stack.tx_cycles");
  sp.rx_cycles = cfg_.get_double("software_stack.rx_cycles");
  sp.cycles_per_byte = cfg_.get_double("software_stack.cycles_per_byte");
  sp.vswitch_cycles = cfg_.get_double("software_stack.vswitch_cycles");
  sp.vswitch_cycles_per_byte = cfg_.get_double("software_stack.vswitch_cycles_per_byte");
  sp.queue_frames = static_cast<std::uint32_t>(cfg_.get_uint("software_stack.queue"));
  stack_ = std::make_unique<stack::SoftwareStack>("stack", sp);

  const std::string cores_key = "software_stack.cores";
  std::vector<std::size_t> own;  // the stack's dedicated cores
  for (std::uint64_t k : config::parse_index_list(cfg_.get_string(cores_key))) {
    if (k >= core_count())
      throw ConfigError(cfg_.where(cores_key), cores_key,
                        "core " + std::to_string(k) + " does not exist (platform.cores: " +
                            std::to_string(core_count()) + ")");
    own.push_back(static_cast<std::size_t>(k));
  }
  const std::string vswitch_key = "software_stack.vswitch_core";
  const std::int64_t vswitch = cfg_.get_int(vswitch_key);
  if (vswitch >= static_cast<std::int64_t>(core_count()))
    throw ConfigError(cfg_.where(vswitch_key), vswitch_key,
                      "core " + std::to_string(vswitch) +
                          " does not exist (platform.cores: " + std::to_string(core_count()) + ")");
  if (vswitch >= 0 && arch_ == Architecture::Native)
    throw ConfigError(cfg_.where(vswitch_key), vswitch_key,
                      "a native host has no virtual switch (de or da only)");
  std::vector<std::size_t> apart = own;  // cores that run nothing but the stack or the switch
  if (vswitch >= 0) apart.push_back(static_cast<std::size_t>(vswitch));
  for (std::size_t i = 0; i < vms_; ++i) {
    const std::string p = "vms." + std::to_string(i) + ".";
    if (migrates(i))
      throw ConfigError(cfg_.where(p + "migrate"), p + "migrate",
                        "a VM under a software stack (software_stack.mode) does not migrate");
    if (arch_ == Architecture::Native && cfg_.get_string(p + "pin").empty() && !apart.empty())
      throw ConfigError(cfg_.where(p + "pin"), p + "pin",
                        "set the cores of the VM's processes clear of the software stack's "
                        "(software_stack.cores)");
    for (std::size_t k : pin_of(i))
      if (std::find(apart.begin(), apart.end(), k) != apart.end())
        throw ConfigError(cfg_.where(p + "pin"), p + "pin",
                          "core " + std::to_string(k) + " is the software stack's or the " +
                              "virtual switch's (" + cores_key + ", " + vswitch_key +
                              "): it runs nothing else");
  }
  const bool virtualized = arch_ != Architecture::Native;
  // A lane on core k: a guest context of VM `vm` (the kernel's stack; natively every lane), or
  // on a virtualized host's own cores a hypervisor context (it runs whatever VM is scheduled).
  auto lane_on = [&](std::size_t k, const std::string& what, int vm, cpu::CycleClass cls,
                     int charge) {
    cpu::Core& c = core(k);
    const std::string name = "stack." + what + ".cpu" + std::to_string(k);
    cpu::Core::Context& ctx = virtualized && vm < 0
                                  ? c.add_hypervisor_context(name, 1)
                                  : c.add_context(name, 1, vm < 0 ? 0 : vm, /*io_wake=*/true);
    return stack_->add_lane(c, ctx, cls, charge);
  };
  std::vector<int> shared;
  if (stack_mode_ == "kernel") {
    if (!own.empty())
      throw ConfigError(cfg_.where(cores_key), cores_key,
                        "the kernel stack runs on each VM's own cores; dedicated cores are for "
                        "tas_vm and tas_shared");
  } else if (stack_mode_ == "tas_vm") {
    if (own.empty() || own.size() % vms_ != 0)
      throw ConfigError(cfg_.where(cores_key), cores_key,
                        std::to_string(own.size()) + " cores for " + std::to_string(vms_) +
                            " VMs: tas_vm gives each VM the same number of dedicated cores");
  } else if (own.empty()) {
    throw ConfigError(cfg_.where(cores_key), cores_key,
                      "tas_shared needs the shared fast path's cores");
  } else {
    for (std::size_t k : own)
      shared.push_back(
          lane_on(k, "shared", -1,
                  virtualized ? cpu::CycleClass::Hypervisor : cpu::CycleClass::GuestKernel, -1));
  }
  for (std::size_t i = 0; i < vms_; ++i) {
    std::vector<int> lanes;
    const int vm = static_cast<int>(i);
    const std::string tag = "vm" + std::to_string(i);
    if (stack_mode_ == "kernel") {  // on the VM's vCPUs (natively: its processes' cores)
      for (std::size_t k : pin_of(i))
        lanes.push_back(lane_on(k, tag, vm, cpu::CycleClass::GuestKernel, -1));
    } else if (stack_mode_ == "tas_vm") {  // user space: charged to the VM
      const std::size_t per = own.size() / vms_;
      for (std::size_t n = 0; n < per; ++n)
        lanes.push_back(
            lane_on(own[i * per + n], tag, virtualized ? -1 : vm, cpu::CycleClass::GuestUser, vm));
    } else {
      lanes = shared;
    }
    stack_->add_vm(vm_macs_.at(i), std::move(lanes));
  }
  if (vswitch >= 0)
    stack_->set_vswitch(
        lane_on(static_cast<std::size_t>(vswitch), "vswitch", -1, cpu::CycleClass::Hypervisor, -1));
  stack_cores_ = apart;
  stack_vswitch_ = vswitch >= 0;
  toe_->mac().to_wire.bind(stack_->from_mac);
  stack_->to_mac.bind(toe_->mac().from_wire);
}

void Platform::build_network() {
  if (network_outside_) return;  // the including scenario's topology links the TOE
  if (cfg_.get_string("network.peer") == "netvp") {
    // NetVP (paper §4.3): the TOE's MAC meets a real interface through a raw socket, and the
    // simulation is paced to wall-clock time.
    netvp::NetvpParams np;
    config::fill(cfg_, netvp::netvp_params(), np);
    raw_socket_ =
        std::make_unique<netvp::RawSocket>(np.interface, np.queue_frames, toe_params_.stack.mtu);
    netvp_port_ = std::make_unique<netvp::NetvpPort>("netvp", *raw_socket_);
    pacer_ = std::make_unique<netvp::Pacer>("pacer", np.pacer);
    netvp::NetvpPort* port = netvp_port_.get();
    pacer_->before_wait([port]() { port->flush(); });
    pacer_->on_tick([port]() { return port->poll(); });
    netvp::RawSocket* socket = raw_socket_.get();
    pacer_->wait_for_wire([socket](auto until) { socket->wait_readable(until); });
    toe_->mac().to_wire.bind(netvp_port_->in);
    // Frames from the wire reach the MAC no faster than its line rate (a tick's batch at once
    // would overflow the PPM's receive FIFO).
    netvp_wire_ = std::make_unique<netvp::IngressWire>(
        "netvp_wire", toe_->mac().params().rate_bps, np.wire_buffer_bytes,
        std::chrono::nanoseconds(np.wire_max_wait_ps / 1000));
    netvp_port_->out.bind(netvp_wire_->in);
    netvp_wire_->out.bind(toe_->mac().from_wire);
    return;
  }
  if (topology_) {
    build_topology();
    return;
  }
  net::EthernetLinkParams lp;
  config::fill(cfg_, net::ethernet_link_params(), lp);
  if (lp.loss >= 1.0)
    throw ConfigError(cfg_.where("network.loss"), "network.loss",
                      "a loss of 1 drops every frame on the only link between the TOE and the "
                      "peer: nothing could move (give less than 1)");
  lp.seed = cfg_.get_uint("seed");
  link_ = std::make_unique<net::EthernetLink>("link0", lp);

  net::PeerHostParams pp = peer_host_params(
      ip_of(cfg_, "network.peer_ip"), mac_of(2), cfg_.get_bytes("network.peer_buffer"),
      static_cast<std::uint32_t>(cfg_.get_uint("seed")) + 7919);
  pp.ecn_mark_frames = lp.ecn_threshold;
  std::set<std::uint16_t> listening;
  for (std::size_t i = 0; i < vms_; ++i) {
    net::PeerApp app;
    if (vm_peer_is_vm_.at(i)) continue;  // served by another VM, inside the TOE
    if (!peer_app_for(guests_[i]->apps().front()->workload(), vm_ip(cfg_, i), app)) continue;
    if (app.type != net::PeerAppType::Source && !listening.insert(app.port).second) continue;
    pp.apps.push_back(app);
  }
  add_client_load(pp);
  peer_ = std::make_unique<net::PeerHost>("peer", pp);

  wire_out().bind(link_->a_in);
  link_->a_out.bind(wire_in());
  peer_->mac().to_wire.bind(link_->b_in);
  link_->b_out.bind(peer_->mac().from_wire);
}

net::PeerHostParams Platform::peer_host_params(tcpip::Ipv4 ip, tcpip::MacAddr mac,
                                               std::uint64_t buffer, std::uint32_t isn_seed) const {
  return platform::peer_host_params(toe_params_, ip, mac, buffer, isn_seed);
}

// network.clients.*: a load of short client connections from this host to a VM's server.
void Platform::add_client_load(net::PeerHostParams& pp) const {
  net::PeerClients clients;
  config::fill(cfg_, net::peer_client_params(), clients);
  if (clients.connections == 0) return;
  if (clients.vm >= vms_)
    throw ConfigError(
        cfg_.where("network.clients.vm"), "network.clients.vm",
        "VM " + std::to_string(clients.vm) + " does not exist (" + std::to_string(vms_) + " VMs)");
  const auto& w = guests_[clients.vm]->apps().front()->workload();
  if (w.type != guest::WorkloadType::Sink && w.type != guest::WorkloadType::Echo)
    throw ConfigError(cfg_.where("network.clients.vm"), "network.clients.vm",
                      "the clients need a server: VM " + std::to_string(clients.vm) + " runs " +
                          guest::to_string(w.type) + ", not sink or echo");
  net::PeerApp app;
  app.type = net::PeerAppType::Clients;
  app.remote_ip = vm_ip(cfg_, clients.vm);
  app.port = w.port;
  app.start_ps = clients.start_ps;
  app.clients = clients;
  if (clients.addresses > 1) {
    // Aliases are the addresses after the peer's own that no VM uses, inside the subnet.
    std::set<tcpip::Ipv4> taken;
    for (std::size_t i = 0; i < vms_; ++i) taken.insert(vm_ip(cfg_, i));
    if (topology_)
      for (std::size_t h = 0; h < topology_->host_count(); ++h) taken.insert(topology_->host_ip(h));
    const int prefix = pp.stack.prefix_len;
    const tcpip::Ipv4 mask = prefix == 0 ? 0 : ~tcpip::Ipv4{0} << (32 - prefix);
    app.sources.push_back(pp.stack.ip);
    for (tcpip::Ipv4 ip = pp.stack.ip + 1; app.sources.size() < clients.addresses; ++ip) {
      if ((ip & mask) != (pp.stack.ip & mask) || (ip | mask) == ~tcpip::Ipv4{0})
        throw ConfigError(cfg_.where("network.clients.addresses"), "network.clients.addresses",
                          std::to_string(clients.addresses) +
                              " client addresses do not fit in the peer's /" +
                              std::to_string(prefix) + " subnet beside the VMs");
      if (taken.count(ip)) continue;
      app.sources.push_back(ip);
      pp.stack.aliases.emplace_back(ip, pp.stack.mac);
    }
  }
  pp.apps.push_back(app);
  // A client host reuses its ports at once (Linux's tcp_tw_reuse); with a 60 s TIME-WAIT the
  // 16k ephemeral ports would end a long sequential load. Its table holds every open client.
  pp.stack.time_wait = std::min<core::TimePs>(pp.stack.time_wait, 1'000'000'000);
  pp.stack.max_connections =
      std::max<std::uint32_t>(pp.stack.max_connections, 2 * clients.concurrency + 64);
  // The peer does not drop its own frames: its queue holds a few segments of every client.
  pp.tx_queue_frames = std::max<std::size_t>(pp.tx_queue_frames, 4ull * clients.concurrency);
}

// hosts:, switches:, links: each host gets the applications of the workloads naming it; the
// client load (network.clients.*) runs on hosts[0], the peer's place.
void Platform::build_topology() {
  std::vector<net::PeerHostParams> hosts;
  const auto seed = static_cast<std::uint32_t>(cfg_.get_uint("seed"));
  for (std::size_t h = 0; h < topology_->host_count(); ++h) {
    hosts.push_back(peer_host_params(topology_->host_ip(h), topology_->host_mac(h),
                                     topology_->host_buffer(h),
                                     seed + 7919 * static_cast<std::uint32_t>(h + 1)));
    // A topology's hosts start their flows as the TOE does: the same slow start.
    hosts.back().stack.hystart = toe_params_.stack.hystart;
    hosts.back().stack.linux_slow_start = toe_params_.stack.linux_slow_start;
  }
  std::vector<std::set<std::uint16_t>> listening(hosts.size());
  for (std::size_t i = 0; i < vms_; ++i) {
    net::PeerApp app;
    if (!vm_peer_.at(i).light) continue;  // a VM of a platform host serves itself
    if (!peer_app_for(guests_[i]->apps().front()->workload(), vm_ip(cfg_, i), app)) continue;
    const std::size_t h = vm_peer_.at(i).host;
    if (app.type != net::PeerAppType::Source && !listening[h].insert(app.port).second) continue;
    hosts[h].apps.push_back(app);
  }
  for (std::size_t h = 0; h < hosts.size(); ++h)
    if (topology_->is_light(h)) {  // the client load runs on the first light host
      add_client_load(hosts[h]);
      break;
    }
  topology_->build(wire_out(), wire_in(), std::move(hosts));
}

std::vector<std::string> Platform::link_names() {
  if (topology_) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < topology_->link_count(); ++i)
      names.push_back(topology_->link_name(i));
    return names;
  }
  return {netvp_port_ ? "netvp" : "link0"};
}

void Platform::enable_pcap(const std::string& dir, const std::vector<std::string>& only) {
  auto wanted = [&only](const std::string& name) {
    return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
  };
  const std::string ext = net::PcapWriter::extension();
  if (topology_)
    topology_->enable_pcap(dir, only);
  else if (netvp_port_ && wanted("netvp"))
    netvp_port_->enable_pcap(dir + "/netvp" + ext);
  else if (link_ && wanted("link0"))
    link_->enable_pcap(dir + "/link0" + ext);
}

void Platform::mark_baseline() {
  core::StatRegistry::instance().mark_baseline(core::now_ps());
  for (std::size_t k = 0; k < core_count(); ++k) core(k).mark_baseline();
  if (topology_)  // the platform hosts' cores too: results give their cores busy in the window
    for (std::size_t h = 0; h < topology_->host_count(); ++h)
      if (Platform* hp = topology_->platform_at(h))
        for (std::size_t k = 0; k < hp->core_count(); ++k) hp->core(k).mark_baseline();
}

}  // namespace vtoe::platform
