// The virtual TOE manager of device emulation (paper §3.1, Figs. 2 and 3). Each VM it serves sees
// a TOE control channel at its usual guest-physical address; the page is not mapped in stage 2,
// so every register access traps here. The manager is the glue between the trap and the physical
// channel; the parts are classes of their own:
//  - VirtualChannel: each VM's emulated register file and rings (toe::RingEngine), its virtual
//    SendQ and virtual ECQ;
//  - SocketMap: guest socket ids <-> physical ones, physical send cookies <-> guest contexts;
//  - toe::QosQueue: the QoS dispatcher (FCFS, RR or DWRR with a quantum per VM, Fig. 4) between
//    the virtual SendQs, keeping at most `depth` send contexts in the TOE;
//  - toe::HostRingDriver: the physical channel, driven like a driver does, with rings in
//    hypervisor memory.
// On a doorbell the manager reads the new contexts from the guest's ring through the VM's stage 2
// (the I/O translation table), checks and translates them; on the physical interrupt it moves each
// completion to its VM's virtual ECQ and injects a virtual interrupt.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "hypervisor/hypervisor.h"
#include "hypervisor/socket_map.h"
#include "hypervisor/virtual_channel.h"
#include "models/core/module.h"
#include "models/cpu/memory_traffic.h"
#include "models/mem/dram.h"
#include "models/toe/descriptors.h"
#include "models/toe/dispatch_policy.h"
#include "models/toe/host_ring_driver.h"
#include "models/toe/qos_queue.h"

namespace vtoe::hypervisor {

struct VirtualToeParams {
  std::vector<int> vms;               // the VMs this manager serves
  std::uint64_t guest_regs_ipa = 0;   // where each guest expects its TOE channel
  std::uint64_t channel_regs_pa = 0;  // the physical channel's register page
  int channel = 0;                    // its index (interrupt bit vector)
  std::uint64_t ring_memory_pa = 0;   // hypervisor memory for the physical rings
  std::uint32_t ring_entries = 1024;
  toe::DispatchPolicyKind policy = toe::DispatchPolicyKind::RoundRobin;
  std::vector<std::uint32_t> quanta;  // per served VM (DWRR), empty = default each
  std::uint32_t default_quantum = 16000;
  std::uint32_t depth = 4;                      // send contexts in the physical channel at once
  std::vector<std::uint32_t> addresses;         // per served VM: the only local address it may use
  std::uint64_t ring_full_poll_ps = 1'000'000;  // re-read a full physical ring's head this often
  // Completions held for a VM whose virtual ECQ is full; at this many the manager takes no more
  // of that VM's contexts until it reads its ECQ (toe.completion_queue, as the real channel).
  std::size_t held_limit = 1024;
  // Physical sockets (CCB entries) one VM may hold (toe.ccb.quota); more are refused TableFull.
  std::size_t socket_quota = SIZE_MAX;
};

class VirtualToeManager : public core::Module {
 public:
  using Ctx = cpu::Core::Context;
  VirtualToeManager(const sc_core::sc_module_name& name, const VirtualToeParams& params,
                    Hypervisor& hyp, mem::Dram& dram);

  // The physical channel's interrupt (called from the hypervisor's interrupt handler).
  void handle_interrupt(Ctx& ctx);
  // hypervisor.backend_core: doorbells are served by a back end running on `ctx` (a hypervisor
  // context of its own core), not in the trapping vCPU's exit. Call before simulation starts.
  void set_backend(Ctx& ctx);
  // platform.cpu_memory_traffic: the hypervisor's copies of contexts and completions become
  // memory transactions (null: they cost only their cycles).
  void set_traffic(cpu::MemoryTraffic* traffic) { traffic_ = traffic; }
  static std::uint64_t ring_memory_bytes(std::uint32_t entries) {
    return static_cast<std::uint64_t>(entries) * toe::kDescBytes * toe::kRings;
  }

  // Statistics per served VM (index in params.vms order).
  std::uint64_t contexts(int slot) const;
  // Contexts waiting in the slot's virtual SendQ since the baseline, time-weighted.
  const core::Accumulator& vsendq_occupancy(int slot) const {
    return *vsendq_occupancy_.at(static_cast<std::size_t>(slot));
  }
  std::size_t queued_sends(int slot) const;
  const VirtualChannel& channel(int slot) const { return vchannels_.at(slot); }
  const SocketMap& sockets() const { return sockets_; }

 private:
  class PhysicalAccess;  // the ring driver's view of the physical channel

  void register_access(int vm, Ctx& ctx, std::uint64_t offset, bool write, std::uint32_t& value);
  void kick(VirtualChannel& v, toe::Ring ring);
  void backend_loop();
  void doorbell(VirtualChannel& v, Ctx& ctx, toe::Ring ring);
  void handle_command(VirtualChannel& v, Ctx& ctx, toe::CmdDesc cmd);
  void handle_recv(VirtualChannel& v, Ctx& ctx, toe::RecvDesc rd);
  void handle_send(VirtualChannel& v, toe::SendDesc sd);
  void dispatch(Ctx& ctx);
  void deliver(VirtualChannel& v, const toe::EcqDesc& ev, Ctx* ctx = nullptr);
  void fail_context(VirtualChannel& v, std::uint16_t vsock, std::uint32_t cookie, toe::Status st,
                    std::uint8_t op = 0);
  int slot_of(const VirtualChannel& v) const { return static_cast<int>(&v - vchannels_.data()); }
  VirtualChannel* find(int vm);

  // The physical channel, on behalf of a VM (whose account pays the accesses).
  void ensure_started(Ctx& ctx, int charge_vm);
  void post(Ctx& ctx, toe::Ring ring, const void* desc, int charge_vm);

  // Guest memory through the VM's stage 2 (the I/O translation table).
  bool guest_read(int vm, std::uint64_t ipa, void* dst, std::size_t len,
                  std::uint64_t* pa = nullptr);
  bool guest_write(int vm, std::uint64_t ipa, const void* src, std::size_t len);
  bool translate(int vm, std::uint64_t ipa, std::uint64_t len, bool write, std::uint64_t* pa);

  VirtualToeParams params_;
  Hypervisor& hyp_;
  mem::Dram& dram_;
  std::vector<VirtualChannel> vchannels_;
  SocketMap sockets_;
  toe::QosQueue qos_;
  toe::HostRingDriver phys_;
  bool phys_started_ = false;
  cpu::MemoryTraffic* traffic_ = nullptr;
  std::uint32_t in_flight_ = 0;  // send contexts in the physical channel
  core::Counter& traps_;
  core::Counter& contexts_;
  core::Counter& forwarded_;
  core::Counter& translation_faults_;
  core::Counter& bad_contexts_;
  core::Counter& ecq_overflows_;
  core::Counter& backlogged_;
  core::Counter& quota_refusals_;
  std::vector<core::Accumulator*> vsendq_occupancy_;  // per slot, time-weighted
  // The back end (hypervisor.backend_core): kicked rings in arrival order, each queued once.
  Ctx* backend_ = nullptr;
  std::deque<std::pair<int, toe::Ring>> kicked_;
  std::vector<std::array<bool, toe::kRings>> queued_;  // per slot and ring: in kicked_
  bool backend_busy_ = false;
  sc_core::sc_event backend_ev_;
  // Counted only with a back end (a run without one reports none of them).
  core::Counter* kicks_ = nullptr;
  core::Counter* coalesced_ = nullptr;
  core::Counter* backend_passes_ = nullptr;
};

}  // namespace vtoe::hypervisor
