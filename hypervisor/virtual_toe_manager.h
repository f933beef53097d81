// The virtual TOE manager of device emulation (paper §3.1, Figs. 2 and 3). Each VM it serves sees
// a TOE control channel at its usual guest-physical address; the page is not mapped in stage 2,
// so every register access traps here and is emulated:
//  - ring programming is kept in a per-VM virtual register file;
//  - a tail write (doorbell) makes the manager read the new contexts from the guest's ring,
//    check them, translate their IPAs to PAs (the I/O translation table: the VM's stage 2) and
//    map the VM's socket to a physical one (the connection manager). Commands and receive
//    contexts go straight to the physical channel; send contexts wait in the VM's virtual
//    SendQ, decoupled from the VMM scheduler;
//  - the QoS dispatcher (FCFS, RR or DWRR with a quantum per VM, Fig. 4) moves send contexts
//    from the virtual SendQs to the physical one, keeping at most `depth` in the TOE, whether
//    or not their VM is running;
//  - the physical interrupt handler moves each completion from the physical ECQ to its VM's
//    virtual ECQ (the guest's own ring), translating socket ids back, and injects a virtual
//    interrupt.
// The manager drives the physical channel itself, with rings in hypervisor memory.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "hypervisor/hypervisor.h"
#include "models/core/module.h"
#include "models/mem/dram.h"
#include "models/toe/descriptors.h"
#include "models/toe/dispatch_policy.h"

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
  std::uint32_t depth = 4;               // send contexts in the physical channel at once
  std::vector<std::uint32_t> addresses;  // per served VM: the only local address it may use
};

class VirtualToeManager : public core::Module {
 public:
  using Ctx = cpu::Core::Context;
  VirtualToeManager(const sc_core::sc_module_name& name, const VirtualToeParams& params,
                    Hypervisor& hyp, mem::Dram& dram);

  // The physical channel's interrupt (called from the hypervisor's interrupt handler).
  void handle_interrupt(Ctx& ctx);
  static std::uint64_t ring_memory_bytes(std::uint32_t entries) {
    return static_cast<std::uint64_t>(entries) * toe::kDescBytes * toe::kRings;
  }

  // Statistics per served VM (index in params.vms order).
  std::uint64_t contexts(int vm) const;
  std::size_t queued_sends(int vm) const;

 private:
  struct VRing {
    std::uint64_t ipa = 0;
    std::uint32_t size = 0, head = 0, tail = 0;
  };
  struct PendingSend {
    toe::SendDesc desc;  // physical: sock and address translated
    std::uint64_t arrival = 0;
  };
  struct Vtoe {
    int vm = 0;
    std::uint32_t ctrl = 0, status = 0;
    VRing ring[toe::kRings];
    std::deque<PendingSend> sendq;          // the VM's virtual SendQ
    std::deque<toe::EcqDesc> ecq_overflow;  // completions its ECQ had no room for
    std::uint64_t contexts = 0;
  };
  struct Psock {
    int slot = 0;  // index into vtoes_
    std::uint16_t vsock = 0;
    bool established = false;
  };
  struct SendRef {
    int slot;
    std::uint16_t vsock;
    std::uint32_t vcookie;
  };

  void register_access(int vm, Ctx& ctx, std::uint64_t offset, bool write, std::uint32_t& value);
  void doorbell(Vtoe& v, Ctx& ctx, toe::Ring ring, std::uint32_t new_tail);
  void handle_command(Vtoe& v, Ctx& ctx, toe::CmdDesc cmd);
  void handle_recv(Vtoe& v, Ctx& ctx, toe::RecvDesc rd);
  void handle_send(Vtoe& v, Ctx& ctx, toe::SendDesc sd);
  void dispatch(Ctx& ctx);
  void deliver(Vtoe& v, const toe::EcqDesc& ev);
  bool flush_overflow(Vtoe& v);
  void fail_context(Vtoe& v, std::uint16_t vsock, std::uint32_t cookie, toe::Status st,
                    std::uint8_t op = 0);

  // Physical channel (driven like a driver does, from hypervisor contexts).
  void ensure_started(Ctx& ctx, int charge_vm);
  void post(Ctx& ctx, toe::Ring ring, const void* desc, int charge_vm);
  void phys_write(Ctx& ctx, std::uint64_t offset, std::uint32_t value, int charge_vm);

  // Guest memory through the VM's stage 2 (the I/O translation table).
  bool guest_read(int vm, std::uint64_t ipa, void* dst, std::size_t len);
  bool guest_write(int vm, std::uint64_t ipa, const void* src, std::size_t len);
  bool translate(int vm, std::uint64_t ipa, std::uint64_t len, bool write, std::uint64_t* pa);

  Vtoe* find_vtoe(int vm);
  int allocate_psock(int slot, std::uint16_t vsock);
  int lookup_psock(int slot, std::uint16_t vsock) const;

  VirtualToeParams params_;
  Hypervisor& hyp_;
  mem::Dram& dram_;
  std::vector<Vtoe> vtoes_;
  std::unique_ptr<toe::DispatchPolicy> policy_;
  std::vector<toe::QueueHead> heads_;
  std::uint64_t arrivals_ = 0;
  std::map<std::uint16_t, Psock> psocks_;
  std::map<std::pair<int, std::uint16_t>, std::uint16_t> psock_of_;
  std::uint16_t next_psock_ = 1;
  std::map<std::uint32_t, SendRef> sends_;  // physical cookie -> guest context
  std::uint32_t next_cookie_ = 1;
  std::uint32_t in_flight_ = 0;
  bool started_ = false;
  std::uint64_t ring_pa_[toe::kRings] = {};
  std::uint32_t tail_[toe::kRings] = {};
  std::uint32_t phys_head_[toe::kRings] = {};  // last head read from the TOE
  std::uint32_t ecq_head_ = 0;
  core::Counter& traps_;
  core::Counter& contexts_;
  core::Counter& forwarded_;
  core::Counter& translation_faults_;
  core::Counter& bad_contexts_;
  core::Counter& ecq_overflows_;
};

}  // namespace vtoe::hypervisor
