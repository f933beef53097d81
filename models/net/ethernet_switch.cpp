#include "models/net/ethernet_switch.h"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <utility>

namespace vtoe::net {

// One port: its ingress (a FrameSink the port's `in` export binds to) and its output buffer.
class EthernetSwitch::Port : public FrameSink {
  EthernetSwitch& sw_;
  std::size_t index_;
  EthernetSwitchPortParams params_;

 public:
  Port(EthernetSwitch& sw, std::size_t index, const EthernetSwitchPortParams& p)
      : sw_(sw),
        index_(index),
        params_(p),
        tx_frames(sw.stats_.counter("port" + std::to_string(index) + "_tx_frames",
                                    "frames sent out of port " + std::to_string(index))),
        drops(sw.stats_.counter(
            "port" + std::to_string(index) + "_drops",
            "frames dropped: port " + std::to_string(index) + "'s output buffer was full")),
        queue_bytes_level(sw.stats_.accumulator(
            "port" + std::to_string(index) + "_queue_bytes",
            "bytes in port " + std::to_string(index) + "'s output buffer (time-weighted)")),
        queue_frames_level(sw.stats_.accumulator(
            "port" + std::to_string(index) + "_queue_frames",
            "frames in port " + std::to_string(index) + "'s output buffer (time-weighted)")) {
    queue_bytes_level.level(0, core::now_ps());
    queue_frames_level.level(0, core::now_ps());
  }

  void receive_frame(Frame&& frame) override { sw_.ingress(index_, std::move(frame)); }

  // Queues a copy; false if it does not fit the buffer.
  bool push(Frame&& frame, core::TimePs ready) {
    if (queued_bytes + frame.size() > params_.buffer_bytes) return false;
    queued_bytes += frame.size();
    if (queued_bytes > peak_bytes) peak_bytes = queued_bytes;
    queue_.push_back({ready, std::move(frame)});
    record_levels();
    if (queue_.size() == 1) start_next();
    return true;
  }

  // SC_METHOD: the head frame's last bit has left.
  void tx_done() {
    Entry e = std::move(queue_.front());
    queue_.pop_front();
    queued_bytes -= e.frame.size();
    record_levels();
    ++tx_frames;
    if (!queue_.empty()) start_next();
    sw_.out[index_]->receive_frame(std::move(e.frame));
  }

  std::size_t queued_frames() const { return queue_.size(); }

  sc_core::sc_event event;
  std::size_t queued_bytes = 0;
  std::size_t peak_bytes = 0;  // since the last take_port_queue_peak()
  core::Counter& tx_frames;
  core::Counter& drops;
  core::Accumulator& queue_bytes_level;
  core::Accumulator& queue_frames_level;

 private:
  struct Entry {
    core::TimePs ready;
    Frame frame;
  };
  void record_levels() {
    const core::TimePs now = core::now_ps();
    queue_bytes_level.level(static_cast<double>(queued_bytes), now);
    queue_frames_level.level(static_cast<double>(queue_.size()), now);
  }
  void start_next() {
    const Entry& e = queue_.front();
    const core::TimePs now = core::now_ps();
    const core::TimePs start = std::max(now, e.ready);
    const core::TimePs wire =
        core::transfer_time_ps(EthernetMac::wire_bytes(e.frame.size()), params_.rate_bps);
    event.notify(core::ps(start - now + wire));
  }

  std::deque<Entry> queue_;
};

EthernetSwitch::EthernetSwitch(const sc_core::sc_module_name& name,
                               const EthernetSwitchParams& params)
    : core::Module(name),
      in("in", params.ports.size()),
      out("out", params.ports.size()),
      params_(params),
      fdb_(params.table),
      frames_(stats_.counter("frames", "frames taken in on any port")),
      forwarded_(stats_.counter("forwarded", "frames sent out of any port (a flood counts each)")),
      drops_(stats_.counter("drops", "frames dropped because an output buffer was full")),
      no_route_(stats_.counter("no_route",
                               "given forwarding: unicast frames to an unknown "
                               "address, dropped")) {
  if (params_.ports.size() < 2)
    throw std::invalid_argument(std::string(this->name()) + ": a switch needs at least 2 ports");
  for (std::size_t i = 0; i < params_.ports.size(); ++i) {
    if (!(params_.ports[i].rate_bps > 0))
      throw std::invalid_argument(std::string(this->name()) + ": port " + std::to_string(i) +
                                  " rate must be > 0");
    ports_.push_back(std::make_unique<Port>(*this, i, params_.ports[i]));
    in[i].bind(*ports_.back());
  }
  for (const auto& [mac, port] : params_.table)
    if (port >= ports_.size())
      throw std::invalid_argument(std::string(this->name()) + ": forwarding entry to port " +
                                  std::to_string(port) + " of " + std::to_string(ports_.size()));
}

EthernetSwitch::~EthernetSwitch() = default;

void EthernetSwitch::end_of_elaboration() {
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.dont_initialize();
    o.set_sensitivity(&ports_[i]->event);
    Port* port = ports_[i].get();
    sc_core::sc_spawn([port] { port->tx_done(); }, ("port" + std::to_string(i)).c_str(), &o);
  }
}

int EthernetSwitch::lookup(const MacAddress& mac) const {
  const auto it = fdb_.find(mac);
  return it == fdb_.end() ? -1 : static_cast<int>(it->second);
}

std::uint64_t EthernetSwitch::port_drops(std::size_t port) const {
  return ports_.at(port)->drops.value();
}
std::uint64_t EthernetSwitch::port_tx_frames(std::size_t port) const {
  return ports_.at(port)->tx_frames.value();
}
std::size_t EthernetSwitch::port_queue_bytes(std::size_t port) const {
  return ports_.at(port)->queued_bytes;
}
std::size_t EthernetSwitch::port_queue_frames(std::size_t port) const {
  return ports_.at(port)->queued_frames();
}
const core::Counter& EthernetSwitch::port_drops_counter(std::size_t port) const {
  return ports_.at(port)->drops;
}
const core::Counter& EthernetSwitch::port_tx_frames_counter(std::size_t port) const {
  return ports_.at(port)->tx_frames;
}
const core::Accumulator& EthernetSwitch::port_queue_bytes_level(std::size_t port) const {
  return ports_.at(port)->queue_bytes_level;
}
const core::Accumulator& EthernetSwitch::port_queue_frames_level(std::size_t port) const {
  return ports_.at(port)->queue_frames_level;
}
std::size_t EthernetSwitch::take_port_queue_peak(std::size_t port) {
  Port& p = *ports_.at(port);
  const std::size_t peak = p.peak_bytes;
  p.peak_bytes = p.queued_bytes;
  return peak;
}

void EthernetSwitch::ingress(std::size_t port, Frame&& frame) {
  if (frame.size() < EthernetMac::kHeader) return;  // a runt: nothing to forward it by
  ++frames_;
  MacAddress dst, src;
  std::copy_n(frame.begin(), 6, dst.begin());
  std::copy_n(frame.begin() + 6, 6, src.begin());
  const bool group = (src[0] & 1) != 0;
  // A given entry is never overwritten by what the switch sees.
  if (params_.forwarding == Forwarding::Learned && !group && !params_.table.count(src))
    fdb_[src] = port;
  const core::TimePs ready = core::now_ps() + params_.latency_ps;
  const int to = (dst[0] & 1) ? -1 : lookup(dst);
  if (to == static_cast<int>(port)) return;  // the destination is behind the port it came from
  if (to >= 0) {
    enqueue(static_cast<std::size_t>(to), std::move(frame), ready);
    return;
  }
  if (!(dst[0] & 1) && params_.forwarding == Forwarding::Given) {
    ++no_route_;
    return;
  }
  for (std::size_t p = 0; p < ports_.size(); ++p)
    if (p != port) enqueue(p, Frame(frame), ready);
}

void EthernetSwitch::enqueue(std::size_t port, Frame&& frame, core::TimePs ready) {
  const std::size_t len = frame.size();
  if (ports_[port]->push(std::move(frame), ready)) {
    ++forwarded_;
    return;
  }
  ++ports_[port]->drops;
  ++drops_;
  VTOE_LOG(log_, Debug) << "port " << port << " buffer full, dropped a frame of " << len
                        << " bytes";
}

}  // namespace vtoe::net
