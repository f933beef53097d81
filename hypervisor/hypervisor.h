// The hypervisor (paper §4.2, the CASL hypervisor on ARMv7 with virtualization extensions), as a
// model: guests run at PL1, the hypervisor at Hyp, and control comes back to it only through VM
// exits — a stage-2 data abort (a guest touched an emulated device page), a physical IRQ, a
// trapped WFI, an HVC, or the scheduler's timer. Each exit and each handler costs named cycles on
// the core (HypervisorCosts) and is counted per VM and cause.
//
// It owns: the per-VM stage-2 tables (IPA -> PA), the credit scheduler that picks which vCPU runs
// (with BOOST and Tickle), the virtual GIC management (list registers saved and restored on
// every VM switch, paper Fig. 8; virtual interrupt injection), and the vCPUs' views of their
// hardware (cpu::RegisterPort through stage 2, cpu::InterruptPort on the virtual CPU
// interface). Device emulation (the virtual TOE manager) plugs in as a trap handler and an
// interrupt handler.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "hypervisor/credit_scheduler.h"
#include "models/core/module.h"
#include "models/core/param.h"
#include "models/cpu/core.h"
#include "models/cpu/hardware_ports.h"
#include "models/cpu/native_ports.h"
#include "models/gic/gic.h"
#include "models/smmu/stage2_table.h"

namespace vtoe::hypervisor {

// Cycles on the 2 GHz core; docs/hypervisor.md explains each and how they were calibrated.
struct HypervisorCosts {
  double exit = 1000;          // take an exception to Hyp mode, save guest state, return (eret)
  double data_abort = 2500;    // decode a stage-2 data abort and emulate one register access
  double irq = 3300;           // physical IRQ: acknowledge at the GIC, find the source, end it
  double vgic_inject = 1500;   // put one virtual interrupt in a list register or saved state
  double vm_switch = 5000;     // switch vCPUs: registers, vGIC list registers, stage-2 base
  double wfi = 500;            // handle a trapped WFI
  double tick = 800;           // scheduler timer interrupt
  double hvc = 800;            // handle a hypercall
  double vtoe_context = 1500;  // DE: copy, check and translate one guest ring context
  double ecq_forward = 800;    // DE: move one completion into a VM's virtual ECQ
  double dispatch = 400;       // DE: the QoS dispatcher moves one context to the physical queue
  double bitvector = 300;      // DA: decode the interrupt bit vector
};

// Exits by cause. irq: physical interrupts; timer: the host's (scheduler's) timer; vtimer: a
// guest's periodic tick that found a vCPU running and was not delivered directly. ipi: those of
// irq that were inter-processor interrupts (another core's hypervisor kicking this vCPU).
struct ExitCounts {
  std::uint64_t data_abort = 0, irq = 0, wfi = 0, hvc = 0, timer = 0, vtimer = 0;
  std::uint64_t ipi = 0;
};

struct HypervisorParams {
  int vms = 1;
  HypervisorCosts costs;
  CreditParams scheduler;
  bool trap_wfi = true;
  core::TimePs halt_poll = 0;  // spin after a WFI exit before blocking the vCPU (0: block at once)
  bool tickless = false;       // no host tick while a vCPU runs alone on the core (nohz_full)
  bool direct_irq = false;     // device interrupts posted to the running vCPU (GICv4 vLPI)
  bool direct_timer = false;   // guest timer interrupts delivered to the running vCPU directly
  bool backend_thread = false;  // de: emulation in a back-end thread on platform.irq_core
  int toe_virq = 32 + 16;  // virtual interrupt ID guests see for their TOE (a virtual SPI)
};

// The scenario keys that fill HypervisorParams: the credit scheduler's switches and times, WFI
// trapping, and the cost table (the VM count and weights are the platform builder's).
const std::vector<core::Param<HypervisorParams>>& hypervisor_params();

class Hypervisor : public core::Module {
 public:
  using Ctx = cpu::Core::Context;
  // Emulated device pages: an access to an unmapped IPA in [ipa, ipa + size).
  using TrapHandler =
      std::function<void(int vm, Ctx& ctx, std::uint64_t offset, bool write, std::uint32_t& value)>;
  using IrqHandler = std::function<void(Ctx& ctx)>;

  // The GIC's physical IRQ output to each core (params.scheduler.pcpus of them, one for a
  // uniprocessor host): the hypervisor takes every physical interrupt, on the core the GIC
  // signals it to, acknowledging it at that core's CPU interface.
  sc_core::sc_vector<sc_core::sc_in<bool>> irq;

  SC_HAS_PROCESS(Hypervisor);
  Hypervisor(const sc_core::sc_module_name& name, const HypervisorParams& params, cpu::Core& core,
             gic::Gic& gic, cpu::BusRegisterPort& bus);

  // A further physical core of a multi-core host: its VM decisions are the credit scheduler's
  // pCPU `pcpu` (params.scheduler.pcpus; every vCPU pinned to one pCPU by
  // params.scheduler.affinity, a VM's vCPUs to different pCPUs; params.scheduler.domain gives
  // each vCPU's VM, VM-major). A core sees each VM whose vCPU it runs as that VM, takes the
  // physical interrupts the GIC signals on its `irq[pcpu]` (on a hypervisor context of its own),
  // and loads the VM it switches in into its own virtual interface (GICH/GICV of CPU `pcpu`).
  // Call before simulation starts.
  void add_core(cpu::Core& core, int pcpu);
  // The credit scheduler's view of VM `vm`, all its vCPUs together (one vCPU: that one's).
  CreditVmStats vm_sched_stats(int vm) const;
  double vm_credit(int vm) const;

  const HypervisorParams& params() const { return params_; }
  const HypervisorCosts& costs() const { return params_.costs; }
  cpu::Core& core() { return core_; }
  CreditScheduler& scheduler() { return *scheduler_; }
  // The core whose model runs VM `vm`'s contexts now (a migrating vCPU's last core).
  int host_of(int vm) const { return host_of_.at(static_cast<std::size_t>(vm)); }

  // Memory: each VM's stage-2 table (shared with the SystemMMU for its device streams).
  smmu::Stage2Table& stage2(int vm) { return *stage2_.at(static_cast<std::size_t>(vm)); }
  std::shared_ptr<const smmu::Stage2Table> stage2_ptr(int vm) const {
    return stage2_.at(static_cast<std::size_t>(vm));
  }

  // What each vCPU sees.
  cpu::RegisterPort& register_port(int vm) {
    return *reg_ports_.at(static_cast<std::size_t>(vm));
  }
  cpu::InterruptPort& interrupt_port(int vm) {
    return *irq_ports_.at(static_cast<std::size_t>(vm));
  }
  cpu::TimerPort& timer_port(int vm) { return *timer_ports_.at(static_cast<std::size_t>(vm)); }

  // Direct device interrupts: `check(running, id)` says whether every interrupt the device has
  // pending behind physical interrupt `id` belongs to the vCPU `running` (-1: none runs) and can
  // be posted to it. While the handler of a posted interrupt runs on `ctx` (the context a
  // handler is given), posted_delivery(ctx) is true: it charges no exit costs.
  void set_direct_irq_check(std::function<bool(int running, int id)> check) {
    direct_check_ = std::move(check);
  }
  bool posted_delivery(const Ctx& ctx) const;

  // Accesses by `vm` to unmapped IPAs in [ipa, ipa + size) are emulated by `handler`.
  void add_trap_handler(int vm, std::uint64_t ipa, std::uint64_t size, TrapHandler handler);
  // Physical interrupt `id` is served by `handler` on whichever core takes it. `owner`: the VM
  // it serves, charged for its handling when it finds its core idle (-1: VM 0, for an interrupt
  // shared by every VM).
  void set_irq_handler(int id, IrqHandler handler, int owner = -1);

  // Makes the TOE's virtual interrupt pending for `vm` (costs are charged by the caller). `from`:
  // the hypervisor context injecting; a vCPU in guest mode on another core sees the list register
  // only after an exit there, so that core is sent an IPI (kKickSgi) unless interrupts are posted.
  void inject(int vm, const Ctx* from = nullptr);
  static constexpr int kKickSgi = 1;
  // A guest IPI from VM `vm`'s context `from` to its vCPU on core `to`: the sender's write of the
  // SGI register traps (exit + data_abort cycles on `from`, stats.hypervisor.guest_sgis; a
  // system-register or MSR-write exit, not counted in vm_exits), and a target vCPU in guest mode
  // exits to take it (an IPI exit, kKickSgi), posted interrupts or not (HaaS's DTID keeps them).
  void guest_ipi(int vm, Ctx& from, const cpu::Core& to);
  // Counts guest IPIs from now on (a host with a VM of several vCPUs; others report none).
  void count_guest_ipis() {
    guest_sgis_ = &stats_.counter("guest_sgis", "guest IPIs sent (trapped SGI register writes)");
  }
  // The hypervisor's own register access to a device (costs charged to `charge_to`).
  void device_access(Ctx& ctx, bool write, std::uint64_t pa, std::uint32_t& value, int charge_to);
  // Spend hypervisor cycles on `ctx` on behalf of `vm`.
  void spend(Ctx& ctx, double cycles, int vm) {
    core_.execute(ctx, cycles, cpu::CycleClass::Hypervisor, vm);
  }

  const ExitCounts& exits(int vm) const { return exits_.at(static_cast<std::size_t>(vm)); }
  std::uint64_t bad_accesses() const { return bad_accesses_.value(); }

 private:
  class Stage2Port;
  class VirtualIrqPort;
  class GuestTimerPort;
  void deliver_timer(int vm);
  bool runs_alone(int vm) const;
  void kick(int vm, const Ctx& from);
  class PcpuScheduler;
  struct Trap {
    int vm;
    std::uint64_t ipa, size;
    TrapHandler handler;
  };
  void irq_thread();
  void irq_loop(int pcpu);  // the hypervisor's IRQ handling on core `pcpu`, for ever
  void guest_access(int vm, Ctx& ctx, bool write, std::uint64_t ipa, std::uint32_t& value);
  void vm_switched(int to, int pcpu);
  // Virtual interface state of `vm`: the list registers of the core it is loaded on while it
  // runs, its saved copy otherwise.
  bool virq_pending(int vm);
  int virtual_acknowledge(int vm);
  void virtual_eoi(int vm, int id);
  void place_virq(int vm);

  HypervisorParams params_;
  cpu::Core& core_;
  gic::Gic& gic_;
  cpu::BusRegisterPort& bus_;
  std::unique_ptr<CreditScheduler> scheduler_;
  std::vector<std::shared_ptr<smmu::Stage2Table>> stage2_;
  std::vector<std::unique_ptr<cpu::RegisterPort>> reg_ports_;
  std::vector<std::unique_ptr<cpu::InterruptPort>> irq_ports_;
  std::vector<std::unique_ptr<cpu::TimerPort>> timer_ports_;
  std::vector<Ctx*> timer_ctx_;  // per VM: the hypervisor's handling of its guest's timer
  std::function<bool(int, int)> direct_check_;
  std::vector<bool> posted_;  // per pCPU: its IRQ handler serves a posted interrupt
  std::vector<std::unique_ptr<cpu::VmScheduler>> pcpu_views_;  // per-pCPU faces (several cores)
  std::vector<cpu::Core*> cores_;  // per pCPU
  std::vector<int> host_of_;       // per VM (one vCPU each): the pCPU whose core runs its contexts
  bool migration_ = false;         // some vCPU is not pinned: the load balancing moves it
  cpu::VmHooks hooks_;                                         // what every core's VM switch costs
  std::vector<Trap> traps_;
  struct IrqServer {
    int id;
    IrqHandler handler;
    int owner;
  };
  std::vector<IrqServer> irq_handlers_;
  std::vector<gic::VgicState> saved_;  // per VM, while switched out
  std::vector<bool> overflow_;         // virq pending with no free list register
  std::vector<std::unique_ptr<sc_core::sc_event>> virq_ev_;
  std::vector<ExitCounts> exits_;
  std::vector<int> loaded_;     // per pCPU: the VM whose vGIC state its GICH holds, or -1
  std::vector<int> loaded_on_;  // per VM: the pCPU whose GICH holds its state, or -1
  Ctx& irq_ctx_;
  std::vector<Ctx*> irq_ctxs_;  // per pCPU: the hypervisor's IRQ handling there
  core::Counter& bad_accesses_;
  core::Counter& injections_;
  core::Counter& phys_irqs_;
  core::Counter* guest_sgis_ = nullptr;
};

}  // namespace vtoe::hypervisor
