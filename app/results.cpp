#include "app/results.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "app/build_info.h"
#include "app/cli.h"

namespace vtoe::app {

using nlohmann::ordered_json;
using platform::Platform;

namespace {

// Results carry a fixed number of decimals so that files diff cleanly.
double rounded(double v, int decimals = 4) {
  const double f = std::pow(10.0, decimals);
  return std::round(v * f) / f;
}

double mbps(std::uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) * 8.0 / seconds / 1e6 : 0.0;
}

// Shares of the host's core time (all its cores together; one core: that core's time).
ordered_json cpu_shares(Platform& p, int owner) {
  double total = 0, idle_ps = 0;
  double busy[cpu::kCycleClasses] = {0, 0, 0};
  for (std::size_t k = 0; k < p.core_count(); ++k) {
    cpu::Core& core = p.core(k);
    total += static_cast<double>(core.accounted_ps());
    idle_ps += static_cast<double>(core.idle_ps());
    for (int c = 0; c < cpu::kCycleClasses; ++c)
      busy[c] += static_cast<double>(core.busy_ps(owner, static_cast<cpu::CycleClass>(c)));
  }
  const double idle = total > 0 ? idle_ps / total : 0;
  auto frac = [&](cpu::CycleClass cls) {
    return total > 0 ? rounded(busy[static_cast<int>(cls)] / total, 6) : 0.0;
  };
  ordered_json c;
  c["guest_user"] = frac(cpu::CycleClass::GuestUser);
  c["guest_kernel"] = frac(cpu::CycleClass::GuestKernel);
  c["hypervisor"] = frac(cpu::CycleClass::Hypervisor);
  c["idle"] = rounded(idle, 6);
  return c;
}

// A multi-core host: cores allocated, and how many of them were busy on average (and each).
ordered_json cores_section(Platform& p) {
  ordered_json per = ordered_json::array();
  double busy = 0;
  for (std::size_t k = 0; k < p.core_count(); ++k) {
    cpu::Core& core = p.core(k);
    const double total = static_cast<double>(core.accounted_ps());
    const double b = total > 0 ? 1.0 - static_cast<double>(core.idle_ps()) / total : 0.0;
    busy += b;
    per.push_back(rounded(b, 6));
  }
  ordered_json c = {
      {"allocated", p.core_count()}, {"busy", rounded(busy, 4)}, {"busy_per_core", per}};
  if (p.software_stack()) {
    // A polling stack's cores spin when they have no frame: busy whole, as the host sees them.
    double polled = busy;
    const bool polls =
        p.software_stack_mode() == "tas_vm" || p.software_stack_mode() == "tas_shared";
    const std::size_t dedicated = p.stack_cores().size() - (p.stack_has_vswitch() ? 1 : 0);
    for (std::size_t n = 0; polls && n < dedicated; ++n)
      polled += 1.0 - per[p.stack_cores()[n]].get<double>();
    c["software_stack"] = {{"mode", p.software_stack_mode()},
                           {"dedicated_cores", p.stack_cores()},
                           {"busy_polling", rounded(polled, 4)}};
  }
  return c;
}

ordered_json vm_exits(Platform& p, std::size_t i, const Window& w) {
  ordered_json exits;
  if (hypervisor::Hypervisor* hyp = p.hypervisor()) {
    const hypervisor::ExitCounts& e = hyp->exits(static_cast<int>(i));
    const hypervisor::ExitCounts& b = w.base.exits[i];
    exits["data_abort"] = e.data_abort - b.data_abort;
    exits["irq"] = e.irq - b.irq;
    exits["wfi"] = e.wfi - b.wfi;
    exits["hvc"] = e.hvc - b.hvc;
    exits["timer"] = e.timer - b.timer;
    exits["vtimer"] = e.vtimer - b.vtimer;
  } else {
    for (const char* k : {"data_abort", "irq", "wfi", "hvc", "timer", "vtimer"}) exits[k] = 0;
  }
  return exits;
}

// The same per second of the measured window, with interrupts split by source as the HaaS
// paper's Table 2 counts them: device, timer (host tick + guest tick), inter-processor (`ipi` of
// the `irq` exits: kicks from another core's hypervisor).
ordered_json exits_per_second(const ordered_json& exits, std::uint64_t ipi, double seconds) {
  auto rate = [&](std::uint64_t n) {
    return rounded(seconds > 0 ? static_cast<double>(n) / seconds : 0, 2);
  };
  const std::uint64_t timer =
      exits["timer"].get<std::uint64_t>() + exits["vtimer"].get<std::uint64_t>();
  std::uint64_t total = 0;
  for (const auto& [k, v] : exits.items()) total += v.get<std::uint64_t>();
  return {{"wfi", rate(exits["wfi"].get<std::uint64_t>())},
          {"data_abort", rate(exits["data_abort"].get<std::uint64_t>())},
          {"irq_device", rate(exits["irq"].get<std::uint64_t>() - ipi)},
          {"irq_timer", rate(timer)},
          {"irq_ipi", rate(ipi)},
          {"hvc", rate(exits["hvc"].get<std::uint64_t>())},
          {"total", rate(total)}};
}

// The measured window's latency distribution (percentiles in us, and the CDF as
// [bucket upper edge in us, samples up to it] steps for plots: python/vtoe/latency.py).
ordered_json latency_distribution(const char* kind, const core::LogHistogram& h) {
  auto us = [](std::uint64_t ps) { return rounded(static_cast<double>(ps) / 1e6, 6); };
  ordered_json cdf = ordered_json::array();
  for (const auto& [edge, seen] : h.cumulative()) cdf.push_back({us(edge), seen});
  return {{"kind", kind},
          {"count", h.count()},
          {"min_us", us(h.min())},
          {"p1_us", us(h.quantile(0.01))},
          {"p50_us", us(h.quantile(0.5))},
          {"p90_us", us(h.quantile(0.9))},
          {"p99_us", us(h.quantile(0.99))},
          {"p999_us", us(h.quantile(0.999))},
          {"max_us", us(h.max())},
          {"cdf", cdf}};
}

// The credit scheduler's view of VM i over the measured window.
ordered_json vm_scheduler(std::size_t i, const Window& w) {
  const hypervisor::CreditVmStats& a = w.base.sched[i];
  const hypervisor::CreditVmStats& b = w.now.sched[i];
  const std::uint64_t waits = b.wake_to_run_count - a.wake_to_run_count;
  return {{"run_ms", rounded(static_cast<double>(b.run_ps - a.run_ps) / 1e9)},
          {"picks", b.picks - a.picks},
          {"boosts", b.boosts - a.boosts},
          {"tickles", b.tickles - a.tickles},
          {"preempted", b.preempted - a.preempted},
          {"wake_to_run_mean_us",
           waits ? rounded(static_cast<double>(b.wake_to_run_total_ps - a.wake_to_run_total_ps) /
                           static_cast<double>(waits) / 1e6)
                 : 0.0}};
}

// The protocol engine's own counters (whole run: they have no warm-up baseline).
ordered_json tcp_stats(const tcpip::Stack& stack) {
  ordered_json j;
  stack.stats().for_each([&](std::string_view name, std::uint64_t v) { j[std::string(name)] = v; });
  return j;
}

}  // namespace

Snapshot take_snapshot(Platform& p) {
  Snapshot s;
  for (std::size_t i = 0; i < p.vm_count(); ++i) {
    const guest::AppCounters c = p.guest(i).counters();  // all its processes
    s.app_tx.push_back(c.tx_bytes);
    // Over shared memory nothing reaches the TOE: what the application wrote into its ring.
    const bool shm = p.guest(i).apps().front()->workload().path == guest::Path::Shm;
    s.acked.push_back(shm ? c.tx_bytes : p.toe().ppm().stack().bytes_acked_from(p.vm_address(i)));
    s.app_rx.push_back(c.rx_bytes);
    s.app_trans.push_back(c.transactions);
    s.app_lat.push_back(c.latency_sum_ps);
    s.app_latency.push_back(c.latency);
    const core::StreamClock* clock = p.peer_clock(i);
    s.peer_latency.push_back(clock ? clock->latency() : core::LogHistogram{});
    s.rtt.push_back(p.rtt(i));
    s.interrupts.push_back(p.guest(i).driver().interrupts());
    s.exits.push_back(p.hypervisor() ? p.hypervisor()->exits(static_cast<int>(i))
                                     : hypervisor::ExitCounts{});
    if (hypervisor::Hypervisor* hyp = p.hypervisor()) {
      hyp->scheduler().advance(core::now_ps());
      s.sched.push_back(hyp->vm_sched_stats(static_cast<int>(i)));
    }
  }
  toe::Toe& toe = p.toe();
  s.toe_tx = toe.tx_bytes();
  s.toe_rx = toe.rx_bytes();
  s.mac_tx_frames = toe.mac().tx_frames();
  s.mac_tx_bytes = toe.mac().tx_bytes();
  s.mac_rx_frames = toe.mac().rx_frames();
  s.mac_rx_bytes = toe.mac().rx_bytes();
  s.ppm_tx_busy = toe.ppm().tx_busy_ps();
  s.ppm_rx_busy = toe.ppm().rx_busy_ps();
  for (int c = 0; c < toe.channel_count(); ++c) {
    s.channel_tx.push_back(toe.tx_dma().bytes(c));
    s.channel_rx.push_back(toe.rx_dma().bytes(c));
    s.channel_contexts.push_back(toe.channel(c).contexts_fetched());
    s.channel_completions.push_back(toe.channel(c).completions());
  }
  return s;
}

ordered_json run_section(Platform& p, double measured_s) {
  const config::Config& cfg = p.config();
  ordered_json r;
  r["schema_version"] = kResultsSchemaVersion;
  r["vtoe_version"] = version_string();
  r["architecture"] = cfg.get_string("architecture");
  r["seed"] = cfg.get_uint("seed");
  r["sim_time_s"] = rounded(static_cast<double>(core::now_ps()) / 1e12, 9);
  r["measured_s"] = rounded(measured_s, 9);
  return r;
}

struct AppCountersView {
  std::uint64_t done, first, last;
};

ordered_json vms_section(Platform& p, const Window& w) {
  ordered_json vms = ordered_json::array();
  for (std::size_t i = 0; i < p.vm_count(); ++i) {
    const auto& app = *p.guest(i).apps().front();
    ordered_json v;
    v["name"] = p.vm_name(i);
    v["workload"] = guest::to_string(app.workload().type);
    v["message_size"] = app.workload().message_size;
    // Goodput: transmit counts what the peer acknowledged, receive what reached the application.
    v["tx_mbps"] = rounded(mbps(w.now.acked[i] - w.base.acked[i], w.measured_s));
    v["rx_mbps"] = rounded(mbps(w.now.app_rx[i] - w.base.app_rx[i], w.measured_s));
    // What the application's send() calls handed to the kernel (buffered data included).
    v["tx_sent_mbps"] = rounded(mbps(w.now.app_tx[i] - w.base.app_tx[i], w.measured_s));
    const std::uint64_t trans = w.now.app_trans[i] - w.base.app_trans[i];
    v["transactions"] = trans;
    v["mean_latency_us"] =
        trans ? rounded(static_cast<double>(w.now.app_lat[i] - w.base.app_lat[i]) / trans / 1e6)
              : 0.0;
    // Each workload's latency (docs/outputs.md, "Latency"): a request/response (rpc), a flow's
    // completion (flows), a connection's setup (connect), a message's send() to its completion
    // (tcp_tx; with a simulated peer, also to the peer's receipt: peer_latency), a message's
    // send by the simulated peer to its recv() in the guest (tcp_rx).
    const guest::WorkloadType t = app.workload().type;
    const core::LogHistogram peer = w.now.peer_latency[i].since(w.base.peer_latency[i]);
    if (t == guest::WorkloadType::Rpc || t == guest::WorkloadType::Flows ||
        t == guest::WorkloadType::Connect || t == guest::WorkloadType::TcpTx)
      v["latency"] = latency_distribution(t == guest::WorkloadType::Rpc     ? "request_response"
                                          : t == guest::WorkloadType::Flows ? "flow_completion"
                                          : t == guest::WorkloadType::TcpTx ? "send_to_completion"
                                                                            : "connection_setup",
                                          w.now.app_latency[i].since(w.base.app_latency[i]));
    if (t == guest::WorkloadType::TcpRx && p.peer_clock(i))
      v["latency"] = latency_distribution("peer_send_to_recv", peer);
    if (t == guest::WorkloadType::TcpTx && p.peer_clock(i))
      v["peer_latency"] = latency_distribution("send_to_peer_receipt", peer);
    // The TOE's TCP engine: every round-trip time sample it took on the VM's connections.
    v["rtt"] = latency_distribution("rtt", w.now.rtt[i].since(w.base.rtt[i]));
    v["cpu"] = cpu_shares(p, static_cast<int>(i));
    v["interrupts"] = w.now.interrupts[i] - w.base.interrupts[i];
    v["vm_exits"] = vm_exits(p, i, w);
    if (p.hypervisor()) {
      const std::uint64_t ipi =
          p.hypervisor()->exits(static_cast<int>(i)).ipi - w.base.exits[i].ipi;
      v["exits_per_s"] = exits_per_second(v["vm_exits"], ipi, w.measured_s);
      // The host's view: the share of the core this VM's vCPU held (its guest work, its idle
      // without a WFI exit, hypervisor work while loaded, halt polling) beside the guest's view
      // in cpu.guest_user + cpu.guest_kernel.
      const double total = static_cast<double>(p.core().accounted_ps());
      v["cpu"]["vcpu_occupancy"] = rounded(
          total > 0 ? static_cast<double>(p.core().vcpu_ps(static_cast<int>(i))) / total : 0, 6);
    }
    if (p.hypervisor()) v["scheduler"] = vm_scheduler(i, w);
    v["channel"] = p.channel_of(i);
    v["direct_access"] = p.direct(i);
    if (app.workload().type == guest::WorkloadType::Flows) {  // whole run: completed flows
      const guest::AppCounters all = p.guest(i).counters();
      const AppCountersView c{all.transactions, all.first_byte_sum_ps, all.latency_sum_ps};
      v["flows"] = {
          {"done", c.done},
          {"mean_ttfb_ms", c.done ? rounded(static_cast<double>(c.first) / c.done / 1e9, 6) : 0.0},
          {"mean_ttc_ms", c.done ? rounded(static_cast<double>(c.last) / c.done / 1e9, 6) : 0.0}};
    }
    const guest::AppCounters all = p.guest(i).counters();
    v["error"] = all.failed ? all.error : "";
    vms.push_back(v);
  }
  return vms;
}

ordered_json toe_section(Platform& p, const Window& w) {
  ordered_json t;
  t["tx_mbps"] = rounded(mbps(w.now.toe_tx - w.base.toe_tx, w.measured_s));
  t["rx_mbps"] = rounded(mbps(w.now.toe_rx - w.base.toe_rx, w.measured_s));
  // Share of the line rate the TOE's MAC kept busy sending (frames with preamble, FCS, gap).
  const net::EthernetMac& mac = p.toe().mac();
  const double wire_bytes =
      static_cast<double>(w.now.mac_tx_bytes - w.base.mac_tx_bytes) +
      static_cast<double>(w.now.mac_tx_frames - w.base.mac_tx_frames) * net::EthernetMac::kOverhead;
  // Frames are counted whole when they end, so a window can see a little over 100%: clamp.
  const double line_bits = mac.params().rate_bps * w.measured_s;
  t["utilization"] = rounded(w.measured_s > 0 ? std::min(1.0, wire_bytes * 8 / line_bits) : 0, 6);
  const double rx_wire_bytes =
      static_cast<double>(w.now.mac_rx_bytes - w.base.mac_rx_bytes) +
      static_cast<double>(w.now.mac_rx_frames - w.base.mac_rx_frames) * net::EthernetMac::kOverhead;
  // The same for the receive direction (frames the MAC took from the wire).
  t["rx_utilization"] =
      rounded(w.measured_s > 0 ? std::min(1.0, rx_wire_bytes * 8 / line_bits) : 0, 6);
  t["dram_utilization"] =
      rounded(p.dram().utilisation(static_cast<core::TimePs>(w.measured_s * 1e12)), 6);
  // Share of the PPM's engines (all of one direction's) kept busy.
  const double engine_ps = w.measured_s * 1e12 * p.toe().ppm().engines();
  auto busy = [&](core::TimePs b, core::TimePs a) {
    return rounded(engine_ps > 0 ? std::min(1.0, static_cast<double>(b - a) / engine_ps) : 0, 6);
  };
  t["ppm_tx_utilization"] = busy(w.now.ppm_tx_busy, w.base.ppm_tx_busy);
  t["ppm_rx_utilization"] = busy(w.now.ppm_rx_busy, w.base.ppm_rx_busy);
  // The shared local buffer SRAM (toe.sram): its highest fill over the run, 0 without one.
  const tcpip::BufferPool* sram = p.toe().ppm().stack().buffer_pool();
  t["sram_peak_utilization"] = rounded(
      sram && sram->capacity() ? static_cast<double>(sram->peak()) / sram->capacity() : 0, 6);
  return t;
}

ordered_json channels_section(Platform& p, const Window& w) {
  ordered_json channels = ordered_json::array();
  for (int c = 0; c < p.toe().channel_count(); ++c) {
    const toe::ControlChannel& ch = p.toe().channel(c);
    ordered_json j;
    j["index"] = c;
    // Who drives the channel: one VM directly, the hypervisor (device emulation), or nobody.
    std::string owner = "unused";
    for (std::size_t i = 0; i < p.vm_count(); ++i)
      if (p.channel_of(i) == c) owner = p.direct(i) ? p.vm_name(i) : std::string("hypervisor");
    j["owner"] = owner;
    j["contexts"] = w.now.channel_contexts[c] - w.base.channel_contexts[c];
    j["completions"] = w.now.channel_completions[c] - w.base.channel_completions[c];
    j["tx_mbps"] = rounded(mbps(w.now.channel_tx[c] - w.base.channel_tx[c], w.measured_s));
    j["rx_mbps"] = rounded(mbps(w.now.channel_rx[c] - w.base.channel_rx[c], w.measured_s));
    const core::Accumulator& occ = ch.sendq_occupancy();  // reset at the baseline
    j["sendq_occupancy"] = {{"mean", rounded(occ.mean(core::now_ps()))},
                            {"max", rounded(occ.max())}};
    channels.push_back(j);
  }
  return channels;
}

namespace {

// One link's figures: whole run (as before: frames, bytes, drops, and per direction), and the
// measured window's (`window`): each direction's use of the line rate (frames with preamble,
// FCS and gap, as a MAC sends them), frames, drops and CE marks.
ordered_json link_entry(const std::string& name, const std::string& a, const std::string& b,
                        net::EthernetLink& l, double rate_bps, double measured_s) {
  ordered_json window;
  const char* dirs[] = {"a_to_b", "b_to_a"};
  const double line_bits = rate_bps * measured_s;
  for (int d = 0; d < 2; ++d) {
    const double wire =
        static_cast<double>(l.bytes_counter(d).measured()) +
        static_cast<double>(l.frames_counter(d).measured()) * net::EthernetMac::kOverhead;
    // Frames are counted whole as they enter, so a window can see a little over 100 %: clamp.
    window[std::string(dirs[d]) + "_utilization"] =
        rounded(line_bits > 0 ? std::min(1.0, wire * 8 / line_bits) : 0, 6);
  }
  for (int d = 0; d < 2; ++d) {
    const std::string k(dirs[d]);
    window[k + "_frames"] = l.frames_counter(d).measured();
    window[k + "_drops"] = l.drops_counter(d).measured();
    window[k + "_ecn_marks"] = l.ce_counter(d).measured();
  }
  return {{"name", name},
          {"frames", l.frames()},
          {"bytes", l.bytes()},
          {"drops", l.drops()},
          {"a_to_b_frames", l.frames_a_to_b()},
          {"b_to_a_frames", l.frames_b_to_a()},
          {"a", a},
          {"b", b},
          {"rate_gbps", rounded(rate_bps / 1e9, 6)},
          {"ecn_marks", l.ce_marks()},
          {"window", window}};
}

}  // namespace

ordered_json links_section(Platform& p, double measured_s) {
  ordered_json links = ordered_json::array();
  if (p.netvp()) {
    // The bridge to the real interface stands where the simulated link would.
    links.push_back({{"name", "netvp"},
                     {"frames", p.netvp_port().to_wire() + p.netvp_port().from_wire()},
                     {"to_wire", p.netvp_port().to_wire()},
                     {"from_wire", p.netvp_port().from_wire()},
                     {"drops", p.raw_socket().queue_drops()}});
  } else if (platform::Topology* t = p.topology()) {
    for (std::size_t i = 0; i < t->link_count(); ++i)
      links.push_back(link_entry(t->link_name(i), t->link_a(i), t->link_b(i), t->link(i),
                                 t->link_rate_bps(i), measured_s));
  } else {
    links.push_back(link_entry("link0", "platform", "peer", p.link(),
                               p.toe().mac().params().rate_bps, measured_s));
  }
  return links;
}

// A flow client's flows: means in ms, and each flow's [start, time to first byte, time to
// completion] in ms (0 where the flow did not get that far).
ordered_json flows_of(const std::vector<net::FlowRecord>& flows) {
  ordered_json list = ordered_json::array();
  double ttfb = 0, ttc = 0;
  std::uint64_t ok = 0;
  auto ms = [](core::TimePs t) { return rounded(static_cast<double>(t) / 1e9, 6); };
  for (const net::FlowRecord& f : flows) {
    const core::TimePs first = f.first_byte_ps ? f.first_byte_ps - f.start_ps : 0;
    const core::TimePs last = f.ok ? f.last_byte_ps - f.start_ps : 0;
    list.push_back({ms(f.start_ps), ms(first), ms(last)});
    if (!f.ok) continue;
    ++ok;
    ttfb += static_cast<double>(first) / 1e9;
    ttc += static_cast<double>(last) / 1e9;
  }
  return {{"count", flows.size()},
          {"done", ok},
          {"ttfb_ms", rounded(ok ? ttfb / ok : 0, 6)},
          {"ttc_ms", rounded(ok ? ttc / ok : 0, 6)},
          {"each", list}};
}

// With a topology: every host's traffic, whole run.
ordered_json hosts_section(platform::Topology& t, double measured_s) {
  ordered_json hosts = ordered_json::array();
  for (std::size_t i = 0; i < t.host_count(); ++i) {
    if (net::ProxyHost* px = t.proxy(i)) {
      hosts.push_back({{"name", t.host_name(i)},
                       {"ip", tcpip::ipv4_to_string(t.host_ip(i))},
                       {"kind", "proxy"},
                       {"spliced", px->spliced()},
                       {"bytes_down", px->bytes_down()},
                       {"bytes_up", px->bytes_up()}});
      continue;
    }
    if (Platform* hp = t.platform_at(i)) {
      // A platform host: what its VMs' applications moved, whole run.
      ordered_json vms = ordered_json::array();
      for (std::size_t v = 0; v < hp->vm_count(); ++v) {
        const auto& app = *hp->guest(v).apps().front();
        const guest::AppCounters all = hp->guest(v).counters();
        vms.push_back({{"name", hp->vm_name(v)},
                       {"ip", tcpip::ipv4_to_string(hp->vm_address(v))},
                       {"workload", guest::to_string(app.workload().type)},
                       {"tx_bytes", all.tx_bytes},
                       {"rx_bytes", all.rx_bytes},
                       {"transactions", all.transactions},
                       {"error", all.failed ? all.error : ""}});
      }
      hosts.push_back({{"name", t.host_name(i)},
                       {"ip", tcpip::ipv4_to_string(t.host_ip(i))},
                       {"kind", "platform"},
                       {"architecture", hp->config().get_string("architecture")},
                       {"cores", cores_section(*hp)},  // the measured window
                       {"vms", vms}});
      continue;
    }
    net::PeerHost& h = *t.light(i);
    ordered_json j = {{"name", t.host_name(i)},
                      {"ip", tcpip::ipv4_to_string(t.host_ip(i))},
                      {"kind", "light"},
                      {"rx_bytes", h.bytes_received()},
                      {"tx_bytes", h.bytes_sent()},
                      {"pattern_errors", h.pattern_errors()},
                      {"clients_done", h.clients_done()},
                      {"clients_failed", h.clients_failed()},
                      {"rx_mbps", rounded(mbps(h.rx_bytes_counter().measured(), measured_s))},
                      {"tx_mbps", rounded(mbps(h.tx_bytes_counter().measured(), measured_s))}};
    if (!h.flows().empty()) j["flows"] = flows_of(h.flows());
    hosts.push_back(j);
  }
  return hosts;
}

// With a topology: every switch's forwarding and its output buffers' drops, whole run; and each
// port's output buffer in the measured window (`ports`).
ordered_json switches_section(platform::Topology& t) {
  ordered_json switches = ordered_json::array();
  const core::TimePs now = core::now_ps();
  for (std::size_t i = 0; i < t.switch_count(); ++i) {
    net::EthernetSwitch& s = t.switch_at(i);
    ordered_json port_drops = ordered_json::array();
    ordered_json ports = ordered_json::array();
    for (std::size_t port = 0; port < s.port_count(); ++port) {
      port_drops.push_back(s.port_drops(port));
      const std::string link = t.switch_port_link(i, port);
      const core::Accumulator& qb = s.port_queue_bytes_level(port);
      const core::Accumulator& qf = s.port_queue_frames_level(port);
      ports.push_back({{"port", port},
                       {"link", link.empty() ? ordered_json() : ordered_json(link)},
                       {"tx_frames", s.port_tx_frames_counter(port).measured()},
                       {"drops", s.port_drops_counter(port).measured()},
                       {"queue_bytes", {{"mean", rounded(qb.mean(now))}, {"max", qb.max()}}},
                       {"queue_frames", {{"mean", rounded(qf.mean(now))}, {"max", qf.max()}}}});
    }
    switches.push_back({{"name", t.switch_name(i)},
                        {"frames", s.frames()},
                        {"forwarded", s.forwarded()},
                        {"drops", s.drops()},
                        {"no_route", s.no_route()},
                        {"port_drops", port_drops},
                        {"ports", ports}});
  }
  return switches;
}

ordered_json peer_section(Platform& p) {
  if (p.netvp() || !p.has_peer()) return nullptr;
  ordered_json peer;
  peer["rx_bytes"] = p.peer().bytes_received();
  peer["tx_bytes"] = p.peer().bytes_sent();
  peer["pattern_errors"] = p.peer().pattern_errors();
  return peer;
}

ordered_json stats_section(Platform& p) {
  // Every module's statistics over the measured window, for whoever wants to dig.
  ordered_json stats;
  for (const core::StatGroup* g : core::StatRegistry::instance().groups()) {
    ordered_json gs;
    for (const auto& e : g->counters()) gs[e.name] = e.counter->measured();
    for (const auto& e : g->accumulators()) {
      // A time-weighted level (a queue's occupancy) is averaged over time up to now.
      gs[e.name] = {{"mean", rounded(e.acc->mean(core::now_ps()))},
                    {"max", rounded(e.acc->max())},
                    {"samples", e.acc->count()}};
    }
    if (!gs.empty()) stats[g->name()] = gs;
  }
  stats["toe.ppm.tcpip"] = tcp_stats(p.toe().ppm().stack());
  if (!p.netvp() && p.has_peer()) stats["peer.tcpip"] = tcp_stats(p.peer().stack());
  if (platform::Topology* t = p.topology())
    for (std::size_t i = 0; i < t->host_count(); ++i) {
      if (net::PeerHost* h = t->light(i)) stats[t->host_name(i) + ".tcpip"] = tcp_stats(h->stack());
      if (net::ProxyHost* px = t->proxy(i)) {
        stats[t->host_name(i) + ".up.tcpip"] = tcp_stats(px->up_stack());
        stats[t->host_name(i) + ".down.tcpip"] = tcp_stats(px->down_stack());
      }
    }
  return stats;
}

ordered_json collect(Platform& p, const Snapshot& base, double measured_s) {
  const Snapshot now = take_snapshot(p);
  const Window w{base, now, measured_s};
  ordered_json r = run_section(p, measured_s);
  r["vms"] = vms_section(p, w);
  if (p.core_count() > 1 || p.software_stack())
    r["cores"] = cores_section(p);  // one core without a software stack: as before
  r["toe"] = toe_section(p, w);
  r["channels"] = channels_section(p, w);
  r["links"] = links_section(p, measured_s);
  if (ordered_json peer = peer_section(p); !peer.is_null()) r["peer"] = peer;
  if (platform::Topology* t = p.topology()) {
    r["hosts"] = hosts_section(*t, measured_s);
    r["switches"] = switches_section(*t);
  }
  r["stats"] = stats_section(p);
  return r;
}

}  // namespace vtoe::app
