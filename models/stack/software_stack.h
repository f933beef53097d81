// A software TCP/IP stack's work on the host's cores (issue 29 item 3): the guest kernel's stack
// on a plain NIC, a per-VM polling user-space stack (TAS inside each VM) or one shared polling
// fast path in the host (VirtTAS), with an optional virtual switch on a host core.
//
// The protocol logic stays the TOE's engine (the same tcpip::Stack, its device time set small by
// the scenario: a plain NIC's); this module sits between the TOE's MAC and the wire and holds
// every frame until a core has done its stack work: `tx_cycles`/`rx_cycles` per frame plus
// `cycles_per_byte`, on a lane (a context on a core). Under virtualization frames also pass a
// virtual switch lane (copy per byte, demultiplex per frame). A flow's frames keep one lane in
// both directions (a symmetric hash of the addresses and ports), so no reordering is added.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/cpu/core.h"
#include "models/net/frame.h"

namespace vtoe::stack {

struct SoftwareStackParams {
  double tx_cycles = 0;        // per frame sent
  double rx_cycles = 0;        // per frame received
  double cycles_per_byte = 0;  // per frame byte, either way (checksum, copies inside the stack)
  double vswitch_cycles = 0;   // per frame through the virtual switch (demultiplexing)
  double vswitch_cycles_per_byte = 0;  // per byte (the copy between NIC and VM buffers)
  std::uint32_t queue_frames = 1024;   // per lane: a full lane drops (as a full ring does)
};

class SoftwareStack : public core::Module {
 public:
  SC_HAS_PROCESS(SoftwareStack);
  SoftwareStack(const sc_core::sc_module_name& name, const SoftwareStackParams& params);

  // A lane: the work of the frames routed to it runs on `ctx` (of `core`) as `cls`, charged to
  // owner `charge_to` (-1: the context's VM). Returns its index. Call before simulation starts.
  int add_lane(cpu::Core& core, cpu::Core::Context& ctx, cpu::CycleClass cls, int charge_to);
  // VM `vm` (its MAC `mac`) has its stack on `lanes` (a flow takes one by its hash).
  void add_vm(const tcpip::MacAddr& mac, std::vector<int> lanes);
  // Every frame of a known VM also passes this lane (the virtual switch); -1 = none.
  void set_vswitch(int lane) { vswitch_ = lane; }

  // The MAC side and the wire side: bind the TOE's MAC to_wire to `from_mac`, `to_mac` to its
  // from_wire; the wire (a link end) to `from_wire` and `to_wire`.
  net::FrameExport from_mac;
  net::FramePort to_mac;
  net::FrameExport from_wire;
  net::FramePort to_wire;

  std::size_t lanes() const { return lanes_.size(); }
  // Core time its lanes spent (all lanes), and per lane's core.
  core::TimePs busy_ps() const { return busy_ps_; }

 private:
  struct Job {
    net::Frame frame;
    bool outbound = false;  // towards the wire
    int step = 0;           // index into route
    int route[2] = {-1, -1};
    double cycles[2] = {0, 0};
  };
  struct Lane {
    cpu::Core* core = nullptr;
    cpu::Core::Context* ctx = nullptr;
    cpu::CycleClass cls = cpu::CycleClass::GuestKernel;
    int charge = -1;
    std::deque<Job> queue;
    sc_core::sc_event ready;
    core::Counter* frames = nullptr;
  };
  class Side : public sc_core::sc_object, public net::FrameSink {
   public:
    Side(const char* name, SoftwareStack& s, bool outbound)
        : sc_core::sc_object(name), s_(s), outbound_(outbound) {}
    void receive_frame(net::Frame&& frame) override { s_.accept(std::move(frame), outbound_); }

   private:
    SoftwareStack& s_;
    bool outbound_;
  };

  void accept(net::Frame&& frame, bool outbound);
  void enqueue(Job&& job);
  void deliver(Job&& job);
  void lane_thread(int index);
  int vm_of(const net::Frame& frame, bool outbound) const;
  static std::uint32_t flow_hash(const net::Frame& frame);

  SoftwareStackParams params_;
  Side mac_side_, wire_side_;
  std::deque<Lane> lanes_;  // deque: stable addresses for the threads
  std::vector<tcpip::MacAddr> macs_;
  std::vector<std::vector<int>> vm_lanes_;
  int vswitch_ = -1;
  core::TimePs busy_ps_ = 0;
  core::Counter& frames_tx_;
  core::Counter& frames_rx_;
  core::Counter& passed_;
  core::Counter& drops_;
};

}  // namespace vtoe::stack
