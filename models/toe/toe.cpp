#include "models/toe/toe.h"

#include <cstring>
#include <stdexcept>

namespace vtoe::toe {

const std::vector<core::Param<ToeParams>>& toe_params() {
  using core::ParamKind;
  using P = ToeParams;
  static const std::vector<core::Param<P>> params = {
      core::param<P>(
          ParamKind::Frequency, "platform.device_freq", "400MHz",
          "Clock of the TOE and other devices", [](P & s) -> auto& { return s.device_freq_hz; })
          .above("0Hz"),
      core::param<P>(
          ParamKind::Bandwidth, "toe.bandwidth", "10Gbps", "Line rate of the TOE's Ethernet MAC",
          [](P & s) -> auto& { return s.bandwidth_bps; })
          .above("0bps"),
      core::param<P>(
          ParamKind::Bytes, "toe.tx_buffer", "256KiB",
          "TOE Tx local buffer per connection (TCP send buffer)",
          [](P & s) -> auto& { return s.stack.send_buffer; })
          .above("0B"),
      core::param<P>(
          ParamKind::Bytes, "toe.rx_buffer", "256KiB",
          "TOE Rx local buffer per connection (TCP receive window)",
          [](P & s) -> auto& { return s.stack.recv_buffer; })
          .above("0B"),
      core::param<P>(
          ParamKind::Bytes, "toe.sram", "0B",
          "Local buffer SRAM shared by all connections: their Tx data, unread Rx data "
          "and promised receive windows; when it is full, receive windows close (zero "
          "window, nothing is lost) and the Tx DMA waits; 0B = no shared limit (only "
          "toe.tx_buffer and toe.rx_buffer per connection)",
          [](P & s) -> auto& { return s.stack.shared_buffer; }),
      core::param<P>(
          ParamKind::Uint, "toe.ccb.connections", "256", "Connection contexts the CCB holds",
          [](P & s) -> auto& { return s.ccb_capacity; })
          .at_least("1"),
      core::param<P>(
          ParamKind::Uint, "toe.ccb.quota", "0",
          "CCB entries one VM may hold (its channel under da; the device-emulation "
          "manager counts each VM's under de), so that no VM can take every entry and "
          "deny the others connections; 0 = toe.ccb.connections shared evenly among "
          "the VMs",
          [](P & s) -> auto& { return s.ccb_quota; }),
      core::param<P>(
          ParamKind::Time, "toe.ccb.access_latency", "10ns", "Latency of one CCB lookup or update",
          [](P & s) -> auto& { return s.ccb_access_ps; }),
      core::param<P>(
          ParamKind::Uint, "toe.ccb.cache", "256",
          "Connection records held on chip; the others live in host memory and a "
          "miss fetches the record over the DMA path (and writes the least recently "
          "used one back); 0 = every record on chip",
          [](P & s) -> auto& { return s.ccb_cache; }),
      core::param<P>(
          ParamKind::Bytes, "toe.ccb.record", "128B",
          "Size of one connection record in host memory (one fetch or write-back)",
          [](P & s) -> auto& { return s.ccb_record; })
          .range("32B", "1KiB"),
      core::param<P>(
          ParamKind::Bytes, "toe.mtu", "1500B", "MTU of the TOE's link (largest IP packet)",
          [](P & s) -> auto& { return s.stack.mtu; })
          .range("576B", "9000B"),
      core::param<P>(
          ParamKind::Time, "toe.rx_notify_timeout", "1ms",
          "Longest received data waits in a kernel buffer unreported when the host did "
          "not ask to be told at once (interrupt moderation); 0 = only when the buffer "
          "is full",
          [](P & s) -> auto& { return s.rx_notify_timeout_ps; }),
      core::param<P>(
          ParamKind::Uint, "toe.channels", "8",
          "Physical control channels of the multi-channel TOE (da: one per VM; VMs "
          "beyond the last channel share it through device emulation). At most 32: the "
          "control unit's interrupt vector has a bit per channel",
          [](P & s) -> auto& { return s.channels; })
          .range("1", "32"),
      core::enum_param<P>(
          "toe.dispatcher.policy", {"fcfs", "rr", "dwrr"}, "rr",
          "QoS dispatcher between VMs' send contexts: first come first served, round robin, or "
          "deficit weighted round robin (paper Fig. 4)",
          [](P & s) -> auto& { return s.dispatcher.policy; }, parse_dispatch_policy,
          [](DispatchPolicyKind k) { return to_string(k); }),
      core::param<P>(
          ParamKind::Uint, "toe.dispatcher.depth", "4",
          "Send contexts the dispatcher keeps in the TOE at once (the rest wait in the "
          "VMs' queues, where the policy orders them)",
          [](P & s) -> auto& { return s.dispatcher.tx_outstanding; })
          .range("1", "256"),
      core::param<P>(
          ParamKind::Bytes, "toe.dma_burst", "4KiB",
          "Largest payload one Tx/Rx DMA transaction moves",
          [](P & s) -> auto& { return s.dma_burst; })
          .range("64B", "1MiB"),
      core::param<P>(
          ParamKind::Uint, "toe.dma_outstanding", "1",
          "Bursts each DMA engine keeps in flight at once (Tx reads, Rx writes; each "
          "issued without waiting for the previous one to complete)",
          [](P & s) -> auto& { return s.dma_outstanding; })
          .range("1", "64"),
      core::param<P>(
          ParamKind::Real, "toe.register_cycles", "4",
          "Device cycles for one host access to a TOE register",
          [](P & s) -> auto& { return s.reg_access_cycles; })
          .range("0", "10000"),
      core::param<P>(
          ParamKind::Real, "toe.ppm.tx_cycles", "64",
          "PPM device cycles to build and queue one outgoing frame",
          [](P & s) -> auto& { return s.ppm.tx_cycles_per_frame; })
          .range("0", "100000"),
      core::param<P>(
          ParamKind::Real, "toe.ppm.rx_cycles", "64",
          "PPM device cycles to parse and process one incoming frame",
          [](P & s) -> auto& { return s.ppm.rx_cycles_per_frame; })
          .range("0", "100000"),
      core::param<P>(
          ParamKind::Bytes, "toe.ppm.datapath", "8B",
          "Width of the PPM's datapath: checksumming and moving a frame of N bytes "
          "costs ceil(N / width) device cycles on top of toe.ppm.tx_cycles/rx_cycles",
          [](P & s) -> auto& { return s.ppm.datapath_bytes; })
          .range("1B", "256B"),
      core::param<P>(
          ParamKind::Uint, "toe.ppm.engines", "1",
          "Protocol engines in each direction; frames are processed in parallel and "
          "leave in arrival order",
          [](P & s) -> auto& { return s.ppm.engines; })
          .range("1", "64"),
      core::param<P>(
          ParamKind::Bytes, "toe.ppm.rx_fifo", "256KiB",
          "Receive FIFO between the MAC and the PPM's engines: frames that arrive while "
          "it holds this many bytes waiting to be processed are dropped and counted "
          "(toe.ppm.rx_fifo_drops), as a hardware FIFO drops them",
          [](P & s) -> auto& { return s.ppm.rx_fifo_bytes; })
          .range("1KiB", "1GiB"),
      core::param<P>(
          ParamKind::Real, "toe.ppm.command_cycles", "32",
          "PPM device cycles to execute one CmdQ context",
          [](P & s) -> auto& { return s.ppm.cycles_per_command; })
          .range("0", "100000"),
      core::param<P>(
          ParamKind::Real, "toe.dispatcher.context_cycles", "16",
          "Dispatcher device cycles to decode and route one fetched context",
          [](P & s) -> auto& { return s.dispatcher.cycles_per_context; })
          .range("0", "100000"),
      core::param<P>(
          ParamKind::Uint, "toe.dispatcher.fetch_batch", "8",
          "CmdQ/RecvQ contexts the dispatcher reads from a ring in one DMA burst",
          [](P & s) -> auto& { return s.dispatcher.fetch_batch; })
          .range("1", "256"),
      core::param<P>(
          ParamKind::Uint, "toe.mac_queue", "1024",
          "Frames the TOE's MAC transmit queue holds; more are dropped and counted",
          [](P & s) -> auto& { return s.mac_queue_frames; })
          .range("1", "1000000"),
      core::param<P>(
          ParamKind::Uint, "toe.completion_queue", "1024",
          "Completions a channel holds while its ECQ ring is full; at this many the "
          "dispatcher fetches none of the channel's contexts until the host reads its "
          "ECQ (back-pressure: a host that stops reading cannot grow the TOE's memory)",
          [](P & s) -> auto& { return s.completion_queue; })
          .range("16", "1000000"),
      core::param<P>(
          ParamKind::Time, "toe.tcp.rto_min", "200ms",
          "Lower bound of the TCP retransmission timeout",
          [](P & s) -> auto& { return s.stack.rto_min; })
          .above("0s"),
      core::param<P>(
          ParamKind::Time, "toe.tcp.rto_initial", "1s",
          "TCP retransmission timeout before the first RTT sample (RFC 6298: 1 s)",
          [](P & s) -> auto& { return s.stack.rto_initial; })
          .above("0s"),
      core::param<P>(
          ParamKind::Uint, "toe.tcp.window_scale", "7",
          "TCP window scale shift offered in SYNs (RFC 7323, 0..14); the receive "
          "window can reach 65535 << shift",
          [](P & s) -> auto& { return s.stack.window_scale; })
          .range("0", "14"),
      core::param<P>(
          ParamKind::Time, "toe.tcp.delayed_ack", "40ms", "Longest a TCP ACK is delayed",
          [](P & s) -> auto& { return s.stack.delayed_ack; })
          .above("0s"),
      core::param<P>(
          ParamKind::Time, "toe.tcp.invalid_ratelimit", "500ms",
          "Least time between two ACKs a connection sends in reply to unacceptable "
          "segments without data (RFC 5961 section 7; stops ACK loops)",
          [](P & s) -> auto& { return s.stack.invalid_ratelimit; })
          .at_least("0s"),
      core::param<P>(
          ParamKind::Bool, "toe.tcp.sack", "true",
          "TCP SACK offered in SYNs (RFC 2018, D-SACK RFC 2883); when both ends "
          "agree, loss recovery uses the SACK scoreboard (RFC 6675), else NewReno",
          [](P & s) -> auto& { return s.stack.sack; }),
      core::param<P>(
          ParamKind::Bool, "toe.tcp.timestamps", "true",
          "TCP timestamps offered in SYNs (RFC 7323): PAWS and an RTT sample from "
          "every ACK; they take 12 bytes of every segment (MSS 1448 at MTU 1500)",
          [](P & s) -> auto& { return s.stack.timestamps; }),
      core::param<P>(
          ParamKind::Bool, "toe.tcp.rack", "true",
          "RACK-TLP on SACK connections (RFC 8985): time-based loss detection and "
          "tail loss probes; off: RFC 6675's DupThresh rule and no probes",
          [](P & s) -> auto& { return s.stack.rack; }),
      core::param<P>(
          ParamKind::Bool, "toe.tcp.undo", "true",
          "Undo of spurious TCP retransmissions: a fast recovery or timeout whose "
          "retransmissions were all D-SACKed (RFC 3708) or whose first ACK echoes an older "
          "timestamp (Eifel, RFC 3522) gets its cwnd and ssthresh back (RFC 4015)",
          [](P & s) -> auto& { return s.stack.undo; }),
      core::param<P>(
          ParamKind::Bool, "toe.tcp.hystart", "true",
          "HyStart++ (RFC 9406) in TCP's initial slow start: a growing RTT leaves slow "
          "start for Conservative Slow Start, then congestion avoidance, before any loss",
          [](P & s) -> auto& { return s.stack.hystart; }),
      core::param<P>(
          ParamKind::Bool, "toe.loopback", "false",
          "Connections between two of the TOE's own addresses (two VMs, or a VM "
          "and itself) are carried inside the TOE: frames go from the transmit "
          "engines to the receive path, never to the MAC. Off: such a connect() "
          "fails (the engine drops frames from its own addresses)",
          [](P & s) -> auto& { return s.stack.loopback; }),
      core::param<P>(
          ParamKind::Bool, "toe.tcp.linux_slow_start", "false",
          "Slow start grows cwnd by all the bytes each ACK acknowledges, as Linux does (cwnd "
          "doubles per RTT despite delayed ACKs); false = RFC 5681, at most one SMSS per ACK",
          [](P & s) -> auto& { return s.stack.linux_slow_start; }),
      core::enum_param<P>(
          "toe.tcp.congestion", {"newreno", "cubic", "bbr"}, "newreno",
          "TCP congestion control: Reno AIMD (RFC 5681) or CUBIC (RFC 9438) after slow start, "
          "with PRR (RFC 6937) in SACK recovery; or BBR v1 (bandwidth and RTT model, paced "
          "sending; Linux's tcp_bbr.c), which random loss does not slow down",
          [](P & s) -> auto& { return s.stack.congestion; },
          [](const std::string& v) {
            tcpip::CongestionControl c = tcpip::CongestionControl::NewReno;
            tcpip::parse_congestion(v, c);
            return c;
          },
          [](tcpip::CongestionControl c) { return tcpip::to_string(c); }),
      core::enum_param<P>(
          "toe.tcp.ecn", {"off", "passive", "on"}, "passive",
          "TCP ECN (RFC 3168), as Linux's tcp_ecn: off; passive = agree when the peer's SYN "
          "asks (Linux's default); on = also ask. The simulated peer takes the same mode",
          [](P & s) -> auto& { return s.stack.ecn; },
          [](const std::string& v) {
            tcpip::EcnMode m = tcpip::EcnMode::Passive;
            tcpip::parse_ecn(v, m);
            return m;
          },
          [](tcpip::EcnMode m) { return tcpip::to_string(m); }),
      core::param<P>(
          ParamKind::Uint, "toe.tcp.initial_window", "10",
          "TCP initial congestion window in segments",
          [](P & s) -> auto& { return s.stack.initial_window_segments; })
          .range("1", "100"),
  };
  return params;
}

namespace {
core::PeripheralParams register_policy(const ToeParams& params) {
  core::PeripheralParams p;
  p.bad_response = core::BadAccessResponse::AddressError;
  p.access_latency_ps = core::cycles_to_ps(params.reg_access_cycles, params.device_freq_hz);
  p.access_stat = "register_accesses";
  p.bad_access_stat = "bad_register_accesses";
  return p;
}
}  // namespace

Toe::Toe(const sc_core::sc_module_name& name, const ToeParams& params)
    : core::Peripheral(name, register_policy(params)),
      in("in"),
      dma("dma"),
      irq("irq"),
      queue_irq("queue_irq",
                static_cast<std::size_t>(params.channels < 1 || params.channels > reg::kMaxChannels
                                             ? 0
                                             : params.channels)),
      params_(params),
      dma_hub_("dma_hub"),
      control_unit_(std::string(this->name()) + ".control_unit"),
      irq_vector_reg_(control_unit_, reg_info::kIrqVector),
      channel_count_reg_(control_unit_, reg_info::kChannelCount) {
  serve(in);
  control_unit_.expect_all(reg_info::kControlUnitBank, std::size(reg_info::kControlUnitBank));
  // The vector is the model's irq_vector_ (set by completions, cleared by 1s the host writes).
  irq_vector_reg_.on_read([this](unsigned) { return irq_vector_; });
  irq_vector_reg_.on_write([this](unsigned, std::uint32_t value, std::uint32_t mask) {
    irq_vector_ &= ~(value & mask);
    update_irq();
  });
  channel_count_reg_.on_read(
      [this](unsigned) { return static_cast<std::uint32_t>(channels_.size()); });
  dma_hub_.out.bind(dma);  // hierarchical: the hub's transactions leave through `dma`
  std::vector<ControlChannel*> chans;
  if (params.channels < 1 || params.channels > reg::kMaxChannels)
    throw std::invalid_argument(std::string(this->name()) + ": channels must be 1.." +
                                std::to_string(reg::kMaxChannels));
  for (int i = 0; i < params.channels; ++i) {
    channels_.push_back(std::make_unique<ControlChannel>(("channel" + std::to_string(i)).c_str(), i,
                                                         params.completion_queue));
    channels_.back()->dma.bind(dma_hub_.in);
    chans.push_back(channels_.back().get());
    map(in, channels_.back()->registers(),
        reg::kChannelBase + static_cast<std::uint64_t>(i) * reg::kChannelStride, reg::kChannelSize);
  }
  map(in, control_unit_, reg::kControlUnitBase, reg::kControlUnitSize);
  CcbParams cp;
  cp.capacity = params.ccb_capacity;
  cp.access_latency_ps = params.ccb_access_ps;
  cp.cache_entries = params.ccb_cache;
  cp.record_bytes = params.ccb_record;
  ccb_ = std::make_unique<Ccb>("ccb", cp);
  ccb_->dma.bind(dma_hub_.in);
  net::EthernetMacParams mp;
  mp.rate_bps = params.bandwidth_bps;
  mp.address = params.stack.mac.b;
  mp.tx_queue_frames = params.mac_queue_frames;
  mp.ecn_mark_frames = params.mac_ecn_frames;
  mp.promiscuous = params.mac_promiscuous;
  mp.max_frame = params.stack.mtu + 18;
  mac_ = std::make_unique<net::EthernetMac>("mac", mp);
  PpmParams pp = params.ppm;
  pp.device_freq_hz = params.device_freq_hz;
  tcpip::StackConfig sc = params.stack;
  sc.max_connections = params.ccb_capacity;
  ppm_ = std::make_unique<Ppm>("ppm", pp, sc, *ccb_, *mac_, chans);
  mac_->upper.bind(*ppm_);
  tx_dma_ = std::make_unique<TxDma>("tx_dma", *ppm_, *ccb_, chans, params.dma_burst,
                                    params.dma_outstanding);
  rx_dma_ = std::make_unique<RxDma>("rx_dma", *ppm_, *ccb_, chans, params.dma_burst,
                                    params.rx_notify_timeout_ps, params.dma_outstanding);
  tx_dma_->dma.bind(dma_hub_.in);
  rx_dma_->dma.bind(dma_hub_.in);
  for (auto& ch : channels_) ch->dma.set_approximately_timed(params.approximately_timed);
  tx_dma_->dma.set_approximately_timed(params.approximately_timed);
  rx_dma_->dma.set_approximately_timed(params.approximately_timed);
  // The CCB's record transfers stay b_transport: a miss on the receive path cannot wait.
  DispatcherParams dp = params.dispatcher;
  dp.device_freq_hz = params.device_freq_hz;
  dispatcher_ = std::make_unique<Dispatcher>("dispatcher", dp, chans, *ppm_, *tx_dma_, *rx_dma_);
  ppm_->on_readable([this](tcpip::ConnId c) { rx_dma_->kick(c); });
  ppm_->on_writable([this]() { tx_dma_->space_freed(); });
  ppm_->on_send_ended([this](int ch, std::uint16_t sock) { tx_dma_->send_ended(ch, sock); });
  for (auto& ch : channels_) {
    ch->on_doorbell([this]() { dispatcher_->doorbell(); });
    ControlChannel* channel = ch.get();
    ch->on_irq_change([this, channel]() {
      irq_pending_channels_ += channel->irq_pending() ? 1 : -1;  // called on each change only
      update_irq();
    });
    const int index = ch->index();
    ch->on_completion_written([this, index]() {
      irq_vector_ |= 1u << index;
      update_irq();
    });
  }
  SC_METHOD(drive_irq);
  sensitive << irq_ev_;
}

Toe::~Toe() = default;

std::uint64_t Toe::tx_bytes() const {
  std::uint64_t sum = 0;
  for (int i = 0; i < channel_count(); ++i) sum += tx_dma_->bytes(i);
  return sum;
}

std::uint64_t Toe::rx_bytes() const {
  std::uint64_t sum = 0;
  for (int i = 0; i < channel_count(); ++i) sum += rx_dma_->bytes(i);
  return sum;
}

void Toe::update_irq() {
  bool level = false;
  if (params_.irq_mode == IrqMode::BitVector) {
    level = irq_vector_ != 0;
  } else {
    level = irq_pending_channels_ != 0;
  }
  if (queue_irqs_bound_) update_queue_irqs();
  if (level != irq_level_) {
    irq_level_ = level;
    // Written at once: the signal's update at the end of this delta is what a driver process
    // would have written one delta later.
    if (irq_direct_ && sc_core::sc_is_running())
      irq.write(irq_level_);
    else
      irq_ev_.notify(sc_core::SC_ZERO_TIME);
  }
}

void Toe::update_queue_irqs() {
  for (std::size_t c = 0; c < channels_.size(); ++c) {
    const bool level = params_.irq_mode == IrqMode::BitVector ? (irq_vector_ >> c) & 1u
                                                              : channels_[c]->irq_pending();
    if (level != queue_level_[c]) {
      queue_level_[c] = level;
      queue_irq[c]->write(level);
    }
  }
}

void Toe::drive_irq() { irq.write(irq_level_); }

void Toe::end_of_elaboration() {
  core::Module::end_of_elaboration();
  irq_direct_ = dynamic_cast<IrqLine*>(irq.get_interface()) != nullptr;
  std::size_t bound = 0;
  for (auto& q : queue_irq) bound += q.size() > 0 ? 1 : 0;
  if (bound != 0 && bound != queue_irq.size())
    throw std::logic_error(std::string(name()) + ": bind every queue_irq line or none (" +
                           std::to_string(bound) + " of " + std::to_string(queue_irq.size()) +
                           " bound)");
  queue_irqs_bound_ = bound != 0;
  queue_level_.assign(channels_.size(), false);
}

}  // namespace vtoe::toe
