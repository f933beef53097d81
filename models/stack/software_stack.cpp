#include "models/stack/software_stack.h"

#include <cstring>

namespace vtoe::stack {

SoftwareStack::SoftwareStack(const sc_core::sc_module_name& name, const SoftwareStackParams& params)
    : core::Module(name),
      from_mac("from_mac"),
      to_mac("to_mac"),
      from_wire("from_wire"),
      to_wire("to_wire"),
      params_(params),
      mac_side_("mac_side", *this, true),
      wire_side_("wire_side", *this, false),
      frames_tx_(stats_.counter("frames_tx", "frames sent through the stack's lanes")),
      frames_rx_(stats_.counter("frames_rx", "frames received through the stack's lanes")),
      passed_(stats_.counter("passed", "frames of no VM (broadcast, ARP to the host): no work")),
      drops_(stats_.counter("drops", "frames dropped at a full lane queue")) {
  from_mac.bind(mac_side_);
  from_wire.bind(wire_side_);
}

int SoftwareStack::add_lane(cpu::Core& core, cpu::Core::Context& ctx, cpu::CycleClass cls,
                            int charge_to) {
  const int index = static_cast<int>(lanes_.size());
  Lane& lane = lanes_.emplace_back();
  lane.core = &core;
  lane.ctx = &ctx;
  lane.cls = cls;
  lane.charge = charge_to;
  lane.frames = &stats_.counter(
      "lane" + std::to_string(index) + "_frames",
      "frames whose work ran on lane " + std::to_string(index) + " (" + ctx.name() + ")");
  sc_core::sc_spawn_options o;
  sc_core::sc_spawn([this, index] { lane_thread(index); }, ("lane" + std::to_string(index)).c_str(),
                    &o);
  return index;
}

void SoftwareStack::add_vm(const tcpip::MacAddr& mac, std::vector<int> lanes) {
  macs_.push_back(mac);
  vm_lanes_.push_back(std::move(lanes));
}

// The VM a frame belongs to: its source MAC on the way out, its destination on the way in.
int SoftwareStack::vm_of(const net::Frame& frame, bool outbound) const {
  if (frame.size() < 14) return -1;
  tcpip::MacAddr m;
  std::memcpy(m.b.data(), frame.data() + (outbound ? 6 : 0), 6);
  for (std::size_t i = 0; i < macs_.size(); ++i)
    if (macs_[i] == m) return static_cast<int>(i);
  return -1;
}

// Symmetric in the two ends (both directions of a flow hash alike): IPv4 addresses and, for TCP
// and UDP, ports. Other frames hash to 0.
std::uint32_t SoftwareStack::flow_hash(const net::Frame& frame) {
  const std::uint8_t* p = frame.data();
  if (frame.size() < 34 || p[12] != 0x08 || p[13] != 0x00) return 0;
  const std::uint8_t* ip = p + 14;
  const std::size_t ihl = static_cast<std::size_t>(ip[0] & 0x0f) * 4;
  auto word = [](const std::uint8_t* q) {
    return (std::uint32_t{q[0]} << 24) | (std::uint32_t{q[1]} << 16) | (std::uint32_t{q[2]} << 8) |
           q[3];
  };
  std::uint32_t h = word(ip + 12) ^ word(ip + 16);
  if ((ip[9] == 6 || ip[9] == 17) && frame.size() >= 14 + ihl + 4) {
    const std::uint8_t* l4 = ip + ihl;
    h ^= (std::uint32_t{l4[0]} << 8 | l4[1]) ^ (std::uint32_t{l4[2]} << 8 | l4[3]);
  }
  h ^= h >> 16;
  h *= 0x45d9f3bu;
  h ^= h >> 16;
  return h;
}

void SoftwareStack::accept(net::Frame&& frame, bool outbound) {
  Job job;
  const int vm = vm_of(frame, outbound);
  if (vm < 0) {
    ++passed_;
    job.frame = std::move(frame);
    job.outbound = outbound;
    deliver(std::move(job));
    return;
  }
  const std::vector<int>& lanes = vm_lanes_[static_cast<std::size_t>(vm)];
  const double bytes = static_cast<double>(frame.size());
  const double stack =
      (outbound ? params_.tx_cycles : params_.rx_cycles) + params_.cycles_per_byte * bytes;
  const double vswitch = params_.vswitch_cycles + params_.vswitch_cycles_per_byte * bytes;
  const int stack_lane =
      lanes.empty() ? -1 : lanes[flow_hash(frame) % static_cast<std::uint32_t>(lanes.size())];
  // Out: the stack, then the virtual switch; in: the reverse.
  int n = 0;
  auto add = [&](int lane, double cycles) {
    if (lane < 0) return;
    job.route[n] = lane;
    job.cycles[n] = cycles;
    ++n;
  };
  if (outbound) {
    add(stack_lane, stack);
    add(vswitch_, vswitch);
    ++frames_tx_;
  } else {
    add(vswitch_, vswitch);
    add(stack_lane, stack);
    ++frames_rx_;
  }
  job.frame = std::move(frame);
  job.outbound = outbound;
  if (n == 0) {
    deliver(std::move(job));
    return;
  }
  enqueue(std::move(job));
}

void SoftwareStack::enqueue(Job&& job) {
  Lane& lane = lanes_[static_cast<std::size_t>(job.route[job.step])];
  if (lane.queue.size() >= params_.queue_frames) {
    ++drops_;
    return;
  }
  lane.queue.push_back(std::move(job));
  if (lane.queue.size() == 1) lane.ready.notify(sc_core::SC_ZERO_TIME);
}

void SoftwareStack::deliver(Job&& job) {
  if (job.outbound)
    to_wire->receive_frame(std::move(job.frame));
  else
    to_mac->receive_frame(std::move(job.frame));
}

// One lane: frames one after another, each after its work on the lane's core.
void SoftwareStack::lane_thread(int index) {
  Lane& lane = lanes_[static_cast<std::size_t>(index)];
  for (;;) {
    while (lane.queue.empty()) sc_core::wait(lane.ready);
    Job& front = lane.queue.front();
    const double cycles = front.cycles[front.step];
    if (cycles > 0) {
      lane.core->execute(*lane.ctx, cycles, lane.cls, lane.charge);
      busy_ps_ += lane.core->cycles_ps(cycles);
    }
    Job job = std::move(lane.queue.front());
    lane.queue.pop_front();
    ++*lane.frames;
    ++job.step;
    if (job.step < 2 && job.route[job.step] >= 0)
      enqueue(std::move(job));
    else
      deliver(std::move(job));
  }
}

}  // namespace vtoe::stack
