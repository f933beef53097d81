#include "netvp/netvp_port.h"

#include <ctime>

namespace vtoe::netvp {

const std::vector<core::Param<NetvpParams>>& netvp_params() {
  using core::ParamKind;
  using P = NetvpParams;
  static const std::vector<core::Param<P>> params = {
      core::param<P>(
          ParamKind::String, "network.netvp.interface", "vtoe0",
          "NetVP: the real interface the TOE's MAC is bridged to (see scripts/netvp-lab.sh)",
          [](P & s) -> auto& { return s.interface; }),
      core::enum_param<P>(
          "network.netvp.pacing", {"best_effort", "strict"}, "best_effort",
          "NetVP: simulated time never runs ahead of wall time; when it falls behind, best_effort "
          "reports the lag, strict stops once it exceeds max_lag",
          [](P & s) -> auto& { return s.pacer.pacing; },
          [](const std::string& t) { return t == "strict" ? Pacing::Strict : Pacing::BestEffort; },
          [](Pacing p) { return p == Pacing::Strict ? "strict" : "best_effort"; }),
      core::param<P>(
          ParamKind::Time, "network.netvp.max_lag", "100ms",
          "NetVP: largest lag strict pacing accepts",
          [](P & s) -> auto& { return s.pacer.max_lag_ps; })
          .above("0s"),
      core::param<P>(
          ParamKind::Time, "network.netvp.tick", "50us",
          "NetVP: how often the simulation meets wall time and polls the interface",
          [](P & s) -> auto& { return s.pacer.tick_ps; })
          .above("0s"),
      core::param<P>(
          ParamKind::Uint, "network.netvp.queue", "4096",
          "NetVP: frames from the wire held for the simulation (a receive ring of "
          "2 KiB slots, allocated at the start), and frames for the wire held for the "
          "kernel; more are dropped and counted",
          [](P & s) -> auto& { return s.queue_frames; })
          .range("16", "65536"),
      core::param<P>(
          ParamKind::Bytes, "network.netvp.wire_buffer", "256MiB",
          "NetVP: frames from the wire waiting to reach the TOE's MAC at its line rate "
          "(the sending hosts' queues: a veth has no rate, so a burst arrives at "
          "once); more are dropped and counted (stats netvp_wire.drops)",
          [](P & s) -> auto& { return s.wire_buffer_bytes; })
          .range("64KiB", "4GiB"),
      core::param<P>(
          ParamKind::Time, "network.netvp.wire_max_wait", "0s",
          "NetVP: a frame from the wire that has waited longer than this (wall-clock "
          "time) when its turn on the inbound wire comes is dropped and counted (stats "
          "netvp_wire.stale_drops): the real host has retransmitted it by then; 0s: "
          "no limit",
          [](P & s) -> auto& { return s.wire_max_wait_ps; }),
  };
  return params;
}

NetvpPort::NetvpPort(const sc_core::sc_module_name& name, RawSocket& socket)
    : core::Module(name),
      in("in"),
      out("out"),
      socket_(socket),
      to_wire_(stats_.counter("frames_to_wire", "frames sent on the real interface")),
      from_wire_(stats_.counter("frames_from_wire", "frames taken from the real interface")),
      send_queue_drops_(stats_.counter(
          "send_queue_drops", "frames for the wire dropped because the send queue was full")) {
  in.bind(*this);
}

namespace {
// Wall-clock time for NetVP's capture: the simulation is paced to it, and a capture on the real
// hosts uses it, so mergecap can interleave the two.
std::uint64_t wall_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}
}  // namespace

void NetvpPort::receive_frame(net::Frame&& frame) {
  if (pcap_) pcap_->write_at_ns(frame.data(), frame.size(), wall_ns());
  if (socket_.send(std::move(frame)))
    ++to_wire_;
  else
    ++send_queue_drops_;
}

void NetvpPort::flush() { socket_.flush(); }

std::size_t NetvpPort::poll() {
  batch_.clear();
  socket_.drain(batch_);
  for (auto& f : batch_) {
    ++from_wire_;
    if (pcap_) pcap_->write_at_ns(f.data(), f.size(), wall_ns());
    out->receive_frame(std::move(f));
  }
  return batch_.size();
}

}  // namespace vtoe::netvp
