#include "scenarios/platform.h"

#include <set>
#include <stdexcept>

#include "models/toe/tcpip/stack.h"

namespace vtoe::scenario {

namespace {

tcpip::MacAddr mac_of(std::uint8_t last) {
  tcpip::MacAddr m;
  m.b = {0x02, 0x00, 0x00, 0x00, 0x00, last};  // locally administered
  return m;
}

tcpip::Ipv4 ip_of(const Config& cfg, const std::string& key) {
  return tcpip::parse_ipv4(cfg.get_string(key));
}

// Protocol settings shared by the TOE and the peer (same engine at both ends).
tcpip::StackConfig stack_config(const Config& cfg) {
  tcpip::StackConfig sc;
  sc.mtu = static_cast<std::uint32_t>(cfg.get_bytes("toe.mtu"));
  sc.isn_seed = static_cast<std::uint32_t>(cfg.get_uint("seed"));
  sc.rto_min = cfg.get_time("toe.tcp.rto_min");
  sc.delayed_ack = cfg.get_time("toe.tcp.delayed_ack");
  sc.initial_window_segments = static_cast<std::uint32_t>(cfg.get_uint("toe.tcp.initial_window"));
  return sc;
}

}  // namespace

Platform::Platform(const Config& cfg) : cfg_(cfg) {
  const double cpu_hz = cfg.get_freq("platform.cpu_freq");
  const double dev_hz = cfg.get_freq("platform.device_freq");

  mem::DramParams dp;
  dp.size = cfg.get_bytes("platform.dram_size");
  dp.bandwidth_bps = cfg.get_bandwidth("platform.dram_bandwidth");
  dp.latency_ps = cfg.get_time("platform.dram_latency");
  dram_ = std::make_unique<mem::Dram>("dram", dp);
  bus_ = std::make_unique<mem::Interconnect>("bus", cfg.get_time("platform.bus_latency"));
  bus_->map(0, dp.size, dram_->in, "dram");

  const std::size_t vms = cfg.list_size("vms");
  cpu::CoreParams cp;
  cp.freq_hz = cpu_hz;
  cp.timeslice_ps = cfg.get_time("guest.context_switch_interval");
  cp.switch_cycles = cfg.get_double("guest.costs.context_switch");
  core_ = std::make_unique<cpu::Core>("cpu0", cp, static_cast<int>(vms));

  // The TOE.
  toe::ToeParams tp;
  tp.channels = 1;
  tp.bandwidth_bps = cfg.get_bandwidth("toe.bandwidth");
  tp.device_freq_hz = dev_hz;
  tp.ccb_capacity = static_cast<std::uint32_t>(cfg.get_uint("toe.ccb.connections"));
  tp.ccb_access_ps = cfg.get_time("toe.ccb.access_latency");
  tp.dma_burst = static_cast<std::uint32_t>(cfg.get_bytes("toe.dma_burst"));
  tp.reg_access_cycles = cfg.get_double("toe.register_cycles");
  tp.ppm.tx_cycles_per_frame = cfg.get_double("toe.ppm.tx_cycles");
  tp.ppm.rx_cycles_per_frame = cfg.get_double("toe.ppm.rx_cycles");
  tp.ppm.cycles_per_command = cfg.get_double("toe.ppm.command_cycles");
  tp.dispatcher.cycles_per_context = cfg.get_double("toe.dispatcher.context_cycles");
  tp.stack = stack_config(cfg);
  tp.stack.mac = mac_of(1);
  tp.stack.ip = ip_of(cfg, "network.host_ip");
  tp.stack.send_buffer = static_cast<std::uint32_t>(cfg.get_bytes("toe.tx_buffer"));
  tp.stack.recv_buffer = static_cast<std::uint32_t>(cfg.get_bytes("toe.rx_buffer"));
  toe_ = std::make_unique<toe::Toe>("toe", tp);
  toe_irq_ = std::make_unique<sc_core::sc_signal<bool>>("toe_irq");
  toe_->irq(*toe_irq_);
  toe_->dma.bind(bus_->in);
  bus_->map(kToeRegBase, static_cast<std::uint64_t>(tp.channels) * toe::reg::kChannelStride,
            toe_->in, "toe");

  // The guest (native: the host OS) and its applications.
  const std::uint64_t guest_mem = cfg.get_bytes("platform.guest_memory");
  for (std::size_t i = 0; i < vms; ++i) {
    const std::string p = "vms." + std::to_string(i) + ".";
    const std::uint64_t base = kGuestRamBase + i * guest_mem;
    if (base + guest_mem > dp.size)
      throw ConfigError("", "platform.dram_size",
                        "DRAM too small for " + std::to_string(vms) + " guests of " +
                            std::to_string(guest_mem >> 20) + " MiB");
    mem::Dram* dram = dram_.get();
    memories_.push_back(std::make_unique<guest::GuestMemory>(
        base, guest_mem, [dram](std::uint64_t a, void* d, std::size_t n, bool write) {
          if (write)
            dram->write(a, d, n);
          else
            dram->read(a, d, n);
        }));
    guest::GuestParams gp;
    gp.owner = static_cast<int>(i);
    guest::GuestCosts& c = gp.costs;
    c.syscall = cfg.get_double("guest.costs.syscall");
    c.copy_fixed = cfg.get_double("guest.costs.copy_fixed");
    c.copy_per_byte = cfg.get_double("guest.costs.copy_per_byte");
    c.copy_per_byte_rx = cfg.get_double("guest.costs.copy_per_byte_rx");
    c.post_context = cfg.get_double("guest.costs.post_context");
    c.doorbell = cfg.get_double("guest.costs.doorbell");
    c.isr = cfg.get_double("guest.costs.isr");
    c.ecq_entry = cfg.get_double("guest.costs.ecq_entry");
    c.kthread_event = cfg.get_double("guest.costs.kthread_event");
    c.wakeup = cfg.get_double("guest.costs.wakeup");
    c.app_per_message = cfg.get_double("guest.costs.app_per_message");
    c.context_switch = cfg.get_double("guest.costs.context_switch");
    gp.driver.regs_addr = kToeRegBase;  // channel 0
    gp.driver.ring_entries = static_cast<std::uint32_t>(cfg.get_uint("guest.ring_entries"));
    gp.sockets.send_buffer = static_cast<std::uint32_t>(cfg.get_bytes("guest.socket.send_buffer"));
    gp.sockets.recv_buffer = static_cast<std::uint32_t>(cfg.get_bytes("guest.socket.recv_buffer"));
    guest::Workload w;
    w.type = guest::parse_workload_type(cfg.get_string(p + "workload.type"));
    w.message_size = static_cast<std::uint32_t>(cfg.get_bytes(p + "workload.message_size"));
    w.response_size = static_cast<std::uint32_t>(cfg.get_bytes(p + "workload.response_size"));
    w.port = static_cast<std::uint16_t>(cfg.get_uint(p + "workload.port"));
    w.peer_ip = ip_of(cfg, "network.peer_ip");
    w.total_bytes = cfg.get_bytes(p + "workload.total_bytes");
    w.start_ps = cfg.get_time(p + "workload.start");
    w.stop_ps = cfg.get_time(p + "workload.stop");
    gp.workloads.push_back(w);
    const std::string name = cfg.get_string(p + "name");
    vm_names_.push_back(name);
    guests_.push_back(
        std::make_unique<guest::GuestOs>(name.c_str(), *core_, *memories_.back(), gp));
    guests_.back()->bus.bind(bus_->in);
    guests_.back()->driver().irq(*toe_irq_);
  }

  // The wire and the peer at its far end.
  net::EthernetLinkParams lp;
  lp.delay_ps = cfg.get_time("network.link_delay");
  lp.loss = cfg.get_double("network.loss");
  lp.seed = cfg.get_uint("seed");
  link_ = std::make_unique<net::EthernetLink>("link0", lp);

  net::PeerHostParams pp;
  pp.stack = stack_config(cfg);
  pp.stack.mac = mac_of(2);
  pp.stack.ip = ip_of(cfg, "network.peer_ip");
  pp.stack.send_buffer = static_cast<std::uint32_t>(cfg.get_bytes("network.peer_buffer"));
  pp.stack.recv_buffer = pp.stack.send_buffer;
  pp.stack.isn_seed = tp.stack.isn_seed + 7919;
  pp.rate_bps = tp.bandwidth_bps;
  std::set<std::uint16_t> listening;
  for (std::size_t i = 0; i < vms; ++i) {
    const auto& w = guests_[i]->apps().front()->workload();
    net::PeerApp app;
    app.port = w.port;
    switch (w.type) {
      case guest::WorkloadType::TcpTx:
        app.type = net::PeerAppType::Sink;
        break;
      case guest::WorkloadType::Rpc:
        app.type = net::PeerAppType::RpcServer;
        app.request_size = w.message_size;
        app.response_size = w.response_size;
        break;
      case guest::WorkloadType::TcpRx:
        app.type = net::PeerAppType::Source;
        app.remote_ip = tp.stack.ip;
        app.start_ps = w.start_ps;
        break;
      case guest::WorkloadType::Cpu:
        continue;
    }
    if (app.type != net::PeerAppType::Source && !listening.insert(app.port).second) continue;
    pp.apps.push_back(app);
  }
  peer_ = std::make_unique<net::PeerHost>("peer", pp);

  toe_->mac().set_wire(&link_->end_a());
  link_->attach_a(&toe_->mac());
  peer_->mac().set_wire(&link_->end_b());
  link_->attach_b(&peer_->mac());
}

Platform::~Platform() = default;

void Platform::enable_pcap(const std::string& dir) { link_->enable_pcap(dir + "/link0.pcap"); }

void Platform::mark_baseline() {
  core::StatRegistry::instance().mark_baseline();
  core_->mark_baseline();
}

}  // namespace vtoe::scenario
