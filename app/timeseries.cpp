#include "app/timeseries.h"

#include <cstdio>
#include <stdexcept>

#include "models/core/tracer.h"
#include "platform/topology.h"

namespace vtoe::app {

using platform::Platform;

namespace {

// timer: the host's tick; vtimer: a guest tick that exited (docs/hypervisor.md).
constexpr const char* kExitCauses[] = {"data_abort", "irq", "wfi", "hvc", "timer", "vtimer"};
constexpr int kCauses = 6;
constexpr cpu::CycleClass kClasses[] = {cpu::CycleClass::GuestUser, cpu::CycleClass::GuestKernel,
                                        cpu::CycleClass::Hypervisor};
constexpr const char* kClassNames[] = {"guest_user", "guest_kernel", "hypervisor"};

std::uint64_t wire_bytes(std::uint64_t bytes, std::uint64_t frames) {
  return bytes + frames * net::EthernetMac::kOverhead;
}

}  // namespace

TimeSeries::TimeSeries(Platform& p, const std::string& path, std::uint64_t max_bytes)
    : p_(p), max_bytes_(max_bytes) {
  if (!path.empty()) {
    out_.open(path);
    if (!out_) throw std::runtime_error("cannot write " + path);
  }
  columns_ = {"time_s"};
  for (std::size_t i = 0; i < p.vm_count(); ++i) {
    const std::string v = "vm." + p.vm_name(i) + ".";
    for (const char* k : {"tx_mbps", "rx_mbps"}) columns_.push_back(v + k);
    for (const char* c : kClassNames) columns_.push_back(v + "cpu." + c + "_share");
    for (const char* e : kExitCauses) columns_.push_back(v + "vm_exits." + e + "_count");
    if (p.hypervisor()) columns_.push_back(v + "credit");
    if (p.vtoe_manager()) columns_.push_back(v + "vsendq_mean_contexts");
    columns_.push_back(v + "cwnd_bytes");
    columns_.push_back(v + "connections_count");
  }
  columns_.push_back("cpu.idle_share");
  for (int c = 0; c < p.toe().channel_count(); ++c)
    columns_.push_back("channel." + std::to_string(c) + ".sendq_mean_contexts");
  for (const char* k :
       {"toe.tx_mbps", "toe.rx_mbps", "toe.tx_utilization_share", "toe.rx_utilization_share",
        "toe.ppm_tx_utilization_share", "toe.ppm_rx_utilization_share", "toe.ccb_mean_entries",
        "toe.retransmits_count", "peer.retransmits_count", "toe.rx_fifo_drops_count",
        "toe.ooo_segments_count", "dram.utilization_share"})
    columns_.push_back(k);
  // A multi-core host: each core's busy share (the columns above are core 0's), last so that a
  // one-core run's columns stay as they were.
  if (p.core_count() > 1)
    for (std::size_t k = 0; k < p.core_count(); ++k)
      columns_.push_back("core." + std::to_string(k) + ".busy_share");
  add_network_probes();
  std::string header;
  for (std::size_t i = 0; i < columns_.size(); ++i) header += (i ? "," : "") + columns_[i];
  header += "\n";
  out_ << header;
  bytes_ = header.size();
  busy_carry_.assign(p.vm_count() * 3, 0);
  core_idle_carry_.assign(p.core_count() > 1 ? p.core_count() : 0, 0);
  sendq_carry_.assign(static_cast<std::size_t>(p.toe().channel_count()), 0);
  if (p.vtoe_manager()) vsendq_carry_.assign(p.vm_count(), 0);
  last_ = read();
}

TimeSeries::Totals TimeSeries::read() {
  Totals t;
  t.time_ps = core::now_ps();
  toe::Toe& toe = p_.toe();
  cpu::Core& core = p_.core();
  for (std::size_t i = 0; i < p_.vm_count(); ++i) {
    t.acked.push_back(toe.ppm().stack().bytes_acked_from(p_.vm_address(i)));
    t.rx.push_back(p_.guest(i).counters().rx_bytes);
    const hypervisor::ExitCounts e =
        p_.hypervisor() ? p_.hypervisor()->exits(static_cast<int>(i)) : hypervisor::ExitCounts{};
    for (std::uint64_t n : {e.data_abort, e.irq, e.wfi, e.hvc, e.timer, e.vtimer})
      t.exits.push_back(n);
    for (int c = 0; c < 3; ++c)
      t.busy.push_back(busy_carry_[i * 3 + c] + core.busy_ps(static_cast<int>(i), kClasses[c]));
  }
  t.idle = idle_carry_ + core.idle_ps();
  t.toe_tx = toe.tx_bytes();
  t.toe_rx = toe.rx_bytes();
  t.wire_tx = wire_bytes(toe.mac().tx_bytes(), toe.mac().tx_frames());
  t.wire_rx = wire_bytes(toe.mac().rx_bytes(), toe.mac().rx_frames());
  t.dram_busy = p_.dram().busy_ps_total();
  t.ppm_tx = toe.ppm().tx_busy_ps();
  t.ppm_rx = toe.ppm().rx_busy_ps();
  t.retransmits = toe.ppm().stack().stats().retransmits;
  if (!p_.netvp() && p_.has_peer()) t.peer_retransmits = p_.peer().stack().stats().retransmits;
  t.rx_fifo_drops = toe.ppm().stats().counter("rx_fifo_drops").value();
  t.ooo_segments = toe.ppm().stack().stats().ooo_segments;
  for (int c = 0; c < toe.channel_count(); ++c)
    t.sendq_area.push_back(sendq_carry_[static_cast<std::size_t>(c)] +
                           toe.channel(c).sendq_occupancy().area(t.time_ps));
  if (hypervisor::VirtualToeManager* m = p_.vtoe_manager()) {
    t.vsendq_area.assign(p_.vm_count(), 0);
    for (std::size_t s = 0; s < p_.vm_count(); ++s)
      t.vsendq_area[static_cast<std::size_t>(m->channel(static_cast<int>(s)).vm())] =
          vsendq_carry_[s] + m->vsendq_occupancy(static_cast<int>(s)).area(t.time_ps);
  }
  t.ccb_area = ccb_carry_ + toe.ccb().stats().accumulator("occupancy").area(t.time_ps);
  for (std::size_t k = 0; k < core_idle_carry_.size(); ++k)
    t.core_idle.push_back(core_idle_carry_[k] + p_.core(k).idle_ps());
  for (Probe& pr : probes_) t.probes.push_back(pr.carry + pr.raw());
  return t;
}

void TimeSeries::add_network_probes() {
  auto add = [&](const std::string& column, Kind kind, std::function<double()> raw,
                 bool resets = false) {
    columns_.push_back(column);
    probes_.push_back({kind, std::move(raw), resets, 0});
  };
  auto dbl = [](std::uint64_t v) { return static_cast<double>(v); };
  // A link: each direction's use of its line rate, as the time its frames (preamble, FCS and gap
  // included) kept the wire busy; frames, drops and CE marks of both directions.
  auto add_link = [&](const std::string& name, net::EthernetLink* l, double rate_bps) {
    const std::string c = "link." + name + ".";
    for (int d = 0; d < 2; ++d)
      add(c + (d == 0 ? "a_to_b" : "b_to_a") + "_utilization_share", Kind::Share,
          [l, d, rate_bps, dbl] {
            const double wire = dbl(l->bytes_counter(d).value()) +
                                dbl(l->frames_counter(d).value()) * net::EthernetMac::kOverhead;
            return wire * 8 / rate_bps * 1e12;
          });
    add(c + "frames_count", Kind::Count, [l, dbl] { return dbl(l->frames()); });
    add(c + "drops_count", Kind::Count, [l, dbl] { return dbl(l->drops()); });
    add(c + "ecn_marks_count", Kind::Count, [l, dbl] { return dbl(l->ce_marks()); });
  };
  platform::Topology* t = p_.topology();
  if (!t) {
    if (!p_.netvp()) add_link("link0", &p_.link(), p_.toe().mac().params().rate_bps);
    return;
  }
  for (std::size_t i = 0; i < t->link_count(); ++i)
    add_link(t->link_name(i), &t->link(i), t->link_rate_bps(i));
  // Switch ports that a link takes: the output buffer's occupancy (mean and highest, bytes; mean,
  // frames), frames sent and drops.
  for (std::size_t s = 0; s < t->switch_count(); ++s) {
    net::EthernetSwitch* sw = &t->switch_at(s);
    for (std::size_t port = 0; port < sw->port_count(); ++port) {
      if (t->switch_port_link(s, port).empty()) continue;
      const std::string c = "switch." + t->switch_name(s) + ".port" + std::to_string(port) + ".";
      add(
          c + "queue_mean_bytes", Kind::Mean,
          [sw, port] { return sw->port_queue_bytes_level(port).area(core::now_ps()); }, true);
      add(c + "queue_max_bytes", Kind::Peak,
          [sw, port] { return static_cast<double>(sw->take_port_queue_peak(port)); });
      add(
          c + "queue_mean_frames", Kind::Mean,
          [sw, port] { return sw->port_queue_frames_level(port).area(core::now_ps()); }, true);
      add(c + "tx_frames_count", Kind::Count,
          [sw, port, dbl] { return dbl(sw->port_tx_frames_counter(port).value()); });
      add(c + "drops_count", Kind::Count,
          [sw, port, dbl] { return dbl(sw->port_drops_counter(port).value()); });
    }
  }
  // Hosts: a light host's payload sent and received (and a flow client's flows completed), a
  // proxy's bytes each way, a platform host's VMs' goodput and its cores' busy shares.
  for (std::size_t h = 0; h < t->host_count(); ++h) {
    const std::string c = "host." + t->host_name(h) + ".";
    if (net::PeerHost* ph = t->light(h)) {
      add(c + "tx_mbps", Kind::Mbps, [ph, dbl] { return dbl(ph->bytes_sent()); });
      add(c + "rx_mbps", Kind::Mbps, [ph, dbl] { return dbl(ph->bytes_received()); });
      for (const net::PeerApp& app : t->host_apps(h))
        if (app.type == net::PeerAppType::FlowClient) {
          add(c + "flows_done_count", Kind::Count, [ph, dbl] { return dbl(ph->clients_done()); });
          break;
        }
    } else if (net::ProxyHost* px = t->proxy(h)) {
      add(c + "down_mbps", Kind::Mbps, [px, dbl] { return dbl(px->bytes_down()); });
      add(c + "up_mbps", Kind::Mbps, [px, dbl] { return dbl(px->bytes_up()); });
    } else if (Platform* hp = t->platform_at(h)) {
      for (std::size_t v = 0; v < hp->vm_count(); ++v) {
        const std::string vc = c + "vm." + hp->vm_name(v) + ".";
        const tcpip::Ipv4 ip = hp->vm_address(v);
        add(vc + "tx_mbps", Kind::Mbps,
            [hp, ip, dbl] { return dbl(hp->toe().ppm().stack().bytes_acked_from(ip)); });
        add(vc + "rx_mbps", Kind::Mbps,
            [hp, v, dbl] { return dbl(hp->guest(v).counters().rx_bytes); });
      }
      for (std::size_t k = 0; k < hp->core_count(); ++k)
        add(
            c + "core." + std::to_string(k) + ".busy_share", Kind::BusyFromIdle,
            [hp, k, dbl] { return dbl(hp->core(k).idle_ps()); }, true);
    }
  }
}

void TimeSeries::before_baseline() {
  cpu::Core& core = p_.core();
  for (std::size_t i = 0; i < p_.vm_count(); ++i)
    for (int c = 0; c < 3; ++c)
      busy_carry_[i * 3 + c] += core.busy_ps(static_cast<int>(i), kClasses[c]);
  idle_carry_ += core.idle_ps();
  const core::TimePs now = core::now_ps();
  for (int c = 0; c < p_.toe().channel_count(); ++c)
    sendq_carry_[static_cast<std::size_t>(c)] += p_.toe().channel(c).sendq_occupancy().area(now);
  if (hypervisor::VirtualToeManager* m = p_.vtoe_manager())
    for (std::size_t s = 0; s < vsendq_carry_.size(); ++s)
      vsendq_carry_[s] += m->vsendq_occupancy(static_cast<int>(s)).area(now);
  ccb_carry_ += p_.toe().ccb().stats().accumulator("occupancy").area(now);
  for (std::size_t k = 0; k < core_idle_carry_.size(); ++k)
    core_idle_carry_[k] += p_.core(k).idle_ps();
  for (Probe& pr : probes_)
    if (pr.resets_at_baseline) pr.carry += pr.raw();
}

void TimeSeries::sample() {
  const Totals now = read();
  if (now.time_ps <= last_.time_ps) return;
  const Totals& a = last_;
  const double span_ps = static_cast<double>(now.time_ps - a.time_ps);
  const double span_s = span_ps / 1e12;
  auto mbps = [&](std::uint64_t to, std::uint64_t from) {
    return static_cast<double>(to - from) * 8 / span_s / 1e6;
  };
  auto share = [&](std::uint64_t to, std::uint64_t from) {
    return static_cast<double>(to - from) / span_ps;
  };
  std::vector<double> row{static_cast<double>(now.time_ps) / 1e12};
  std::vector<double> cwnd(p_.vm_count(), 0), conns(p_.vm_count(), 0);
  p_.toe().ppm().stack().for_each_connection([&](const tcpip::ConnectionInfo& c) {
    for (std::size_t i = 0; i < p_.vm_count(); ++i)
      if (c.local_ip == p_.vm_address(i)) {
        cwnd[i] += c.cwnd;
        conns[i] += 1;
      }
  });
  for (std::size_t i = 0; i < p_.vm_count(); ++i) {
    row.push_back(mbps(now.acked[i], a.acked[i]));
    row.push_back(mbps(now.rx[i], a.rx[i]));
    for (int c = 0; c < 3; ++c) row.push_back(share(now.busy[i * 3 + c], a.busy[i * 3 + c]));
    for (int e = 0; e < kCauses; ++e)
      row.push_back(static_cast<double>(now.exits[i * kCauses + e] - a.exits[i * kCauses + e]));
    if (hypervisor::Hypervisor* h = p_.hypervisor())
      row.push_back(h->vm_credit(static_cast<int>(i)));
    if (p_.vtoe_manager()) row.push_back((now.vsendq_area[i] - a.vsendq_area[i]) / span_ps);
    row.push_back(cwnd[i]);
    row.push_back(conns[i]);
  }
  row.push_back(share(now.idle, a.idle));
  for (std::size_t c = 0; c < now.sendq_area.size(); ++c)
    row.push_back((now.sendq_area[c] - a.sendq_area[c]) / span_ps);
  const double line_bits = p_.toe().mac().params().rate_bps * span_s;
  const double engine_ps = span_ps * p_.toe().ppm().engines();
  row.push_back(mbps(now.toe_tx, a.toe_tx));
  row.push_back(mbps(now.toe_rx, a.toe_rx));
  row.push_back(static_cast<double>(now.wire_tx - a.wire_tx) * 8 / line_bits);
  row.push_back(static_cast<double>(now.wire_rx - a.wire_rx) * 8 / line_bits);
  row.push_back(static_cast<double>(now.ppm_tx - a.ppm_tx) / engine_ps);
  row.push_back(static_cast<double>(now.ppm_rx - a.ppm_rx) / engine_ps);
  row.push_back((now.ccb_area - a.ccb_area) / span_ps);
  row.push_back(static_cast<double>(now.retransmits - a.retransmits));
  row.push_back(static_cast<double>(now.peer_retransmits - a.peer_retransmits));
  row.push_back(static_cast<double>(now.rx_fifo_drops - a.rx_fifo_drops));
  row.push_back(static_cast<double>(now.ooo_segments - a.ooo_segments));
  row.push_back(share(now.dram_busy, a.dram_busy));
  for (std::size_t k = 0; k < now.core_idle.size(); ++k)
    row.push_back(1.0 - share(now.core_idle[k], a.core_idle[k]));
  for (std::size_t i = 0; i < probes_.size(); ++i) {
    const double d = now.probes[i] - a.probes[i];
    switch (probes_[i].kind) {
      case Kind::Mbps:
        row.push_back(d * 8 / span_s / 1e6);
        break;
      case Kind::Share:
      case Kind::Mean:
        row.push_back(d / span_ps);
        break;
      case Kind::Count:
        row.push_back(d);
        break;
      case Kind::Peak:
        row.push_back(now.probes[i]);
        break;
      case Kind::BusyFromIdle:
        row.push_back(1.0 - d / span_ps);
        break;
    }
  }
  if (out_.is_open()) {
    std::string line;
    char buf[32];
    for (std::size_t i = 0; i < row.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%.9g", row[i]);
      line += (i ? "," : "");
      line += buf;
    }
    line += "\n";
    // Past the bound no row is written, so that the file has no gap in time.
    if (rows_left_out_ == 0 && (max_bytes_ == 0 || bytes_ + line.size() <= max_bytes_)) {
      out_ << line;
      bytes_ += line.size();
    } else if (rows_left_out_++ == 0) {
      full_at_ps_ = now.time_ps;
    }
  }
  // The same quantities as counter tracks of the timeline trace, each from the interval's start.
  if (core::Tracer::on())
    for (std::size_t i = 1; i < row.size(); ++i)
      core::Tracer::instance().counter("time series", columns_[i], a.time_ps, row[i]);
  last_ = now;
}

}  // namespace vtoe::app
