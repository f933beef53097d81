#include "hypervisor/hypervisor.h"

#include <algorithm>
#include <stdexcept>

#include "models/core/tracer.h"

namespace vtoe::hypervisor {

const std::vector<core::Param<HypervisorParams>>& hypervisor_params() {
  using core::ParamKind;
  using P = HypervisorParams;
  static const std::vector<core::Param<P>> params = {
      core::param<P>(ParamKind::Bool, "hypervisor.scheduler.boost", "true",
                     "Credit scheduler: a VM woken by an I/O event while idle enters BOOST",
                     [](P& s) -> auto& { return s.scheduler.boost; }),
      core::param<P>(ParamKind::Bool, "hypervisor.scheduler.tickle", "true",
                     "Credit scheduler: a waking VM of higher priority preempts the running one",
                     [](P& s) -> auto& { return s.scheduler.tickle; }),
      core::param<P>(ParamKind::Time, "hypervisor.scheduler.timeslice", "30ms",
                     "VM switch interval", [](P& s) -> auto& { return s.scheduler.timeslice; })
          .above("0s"),
      core::param<P>(ParamKind::Time, "hypervisor.scheduler.tick", "10ms",
                     "Credit accounting tick", [](P& s) -> auto& { return s.scheduler.tick; })
          .above("0s"),
      core::param<P>(ParamKind::Time, "hypervisor.scheduler.tick_phase", "0s",
                     "When the first credit tick falls (then every tick): the host tick's phase; "
                     "0s = at one tick. Below the tick",
                     [](P& s) -> auto& { return s.scheduler.tick_phase; }),
      core::param<P>(ParamKind::Time, "hypervisor.scheduler.ratelimit", "0s",
                     "Credit scheduler: least run time of a switched-in VM before a preemption "
                     "(Xen's sched_ratelimit_us; 0s = off); at most the timeslice",
                     [](P& s) -> auto& { return s.scheduler.ratelimit; }),
      core::param<P>(ParamKind::Bool, "hypervisor.trap_wfi", "true",
                     "An idle vCPU's WFI traps to the hypervisor, which runs another VM",
                     [](P& s) -> auto& { return s.trap_wfi; }),
      core::param<P>(ParamKind::Time, "hypervisor.halt_poll", "0s",
                     "Halt polling: after a WFI exit the hypervisor spins up to this long (host "
                     "time charged to the VM) before it blocks the vCPU; 0s = block at once. At "
                     "most hypervisor.scheduler.timeslice",
                     [](P& s) -> auto& { return s.halt_poll; }),
      core::param<P>(ParamKind::Bool, "hypervisor.tickless", "false",
                     "No host tick while a vCPU runs alone on the core (Linux nohz_full on a "
                     "dedicated core): the scheduler's timer costs no exit then",
                     [](P& s) -> auto& { return s.tickless; }),
      core::param<P>(ParamKind::Bool, "hypervisor.direct_irq", "false",
                     "da: the TOE's interrupts are posted to the running vCPU without an exit "
                     "(GICv4 direct vLPI injection); an interrupt for a vCPU not on the core "
                     "still exits",
                     [](P& s) -> auto& { return s.direct_irq; }),
      core::param<P>(ParamKind::Bool, "hypervisor.direct_timer", "false",
                     "A guest's timer interrupt (guest.tick) reaches its running vCPU without an "
                     "exit (GICv4.1 / direct timer delivery)",
                     [](P& s) -> auto& { return s.direct_timer; }),
      core::param<P>(ParamKind::Bool, "hypervisor.backend_thread", "false",
                     "de: the device emulation runs in a back-end thread on platform.irq_core "
                     "(vhost's worker; a core of its own when no vCPU is pinned there): a "
                     "doorbell's exit only queues the kick, and kicks that arrive while the back "
                     "end works are served by its pass without waking it (notification "
                     "coalescing). false = the emulation runs in the exit, on the vCPU's core",
                     [](P& s) -> auto& { return s.backend_thread; }),
      core::param<P>(ParamKind::Real, "hypervisor.costs.exit", "1000",
                     "CPU cycles to take an exception to Hyp mode, save guest state and return",
                     [](P& s) -> auto& { return s.costs.exit; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.data_abort", "2500",
                     "CPU cycles to decode a stage-2 data abort and emulate one register access",
                     [](P& s) -> auto& { return s.costs.data_abort; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.irq", "3300",
                     "CPU cycles to take a physical IRQ: acknowledge, find the source, end it",
                     [](P& s) -> auto& { return s.costs.irq; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.vgic_inject", "1500",
                     "CPU cycles to make one virtual interrupt pending in a list register",
                     [](P& s) -> auto& { return s.costs.vgic_inject; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.vm_switch", "5000",
                     "CPU cycles of a VM switch: vCPU registers, vGIC list registers, stage 2",
                     [](P& s) -> auto& { return s.costs.vm_switch; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.wfi", "500",
                     "CPU cycles to handle a trapped WFI",
                     [](P& s) -> auto& { return s.costs.wfi; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.tick", "800",
                     "CPU cycles of the scheduler's timer interrupt",
                     [](P& s) -> auto& { return s.costs.tick; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.hvc", "800",
                     "CPU cycles to handle a hypercall",
                     [](P& s) -> auto& { return s.costs.hvc; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.vtoe_context", "1500",
                     "DE: CPU cycles to copy, check and translate one guest ring context",
                     [](P& s) -> auto& { return s.costs.vtoe_context; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.ecq_forward", "800",
                     "DE: CPU cycles to move one completion into a VM's virtual ECQ",
                     [](P& s) -> auto& { return s.costs.ecq_forward; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.dispatch", "400",
                     "DE: CPU cycles for the QoS dispatcher to move one context to the TOE",
                     [](P& s) -> auto& { return s.costs.dispatch; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "hypervisor.costs.bitvector", "300",
                     "DA: CPU cycles to decode the multi-channel interrupt bit vector",
                     [](P& s) -> auto& { return s.costs.bitvector; })
          .range("0", "1e9"),
  };
  return params;
}

using cpu::CycleClass;

// An exit or interrupt event on the VM's lane of a timeline trace.
static void trace_event(const char* component, int vm, const char* what) {
  if (!core::Tracer::on()) return;
  auto& t = core::Tracer::instance();
  t.instant(t.lane(component, t.vm_label(vm, component) + " exits"), what, core::now_ps(),
            "exit");
}

// The vCPU's register accesses: stage 2 passes device pages through, traps the rest.
class Hypervisor::Stage2Port : public cpu::RegisterPort {
 public:
  Stage2Port(Hypervisor& hyp, int vm) : hyp_(hyp), vm_(vm) {}
  void access(Ctx& ctx, bool write, std::uint64_t addr, std::uint32_t& value) override {
    hyp_.guest_access(vm_, ctx, write, addr, value);
  }

 private:
  Hypervisor& hyp_;
  int vm_;
};

// The guest's GIC CPU interface: the virtual one, fed from the list registers.
class Hypervisor::VirtualIrqPort : public cpu::InterruptPort {
 public:
  VirtualIrqPort(Hypervisor& hyp, int vm) : hyp_(hyp), vm_(vm) {}
  bool pending() const override { return hyp_.virq_pending(vm_); }
  const sc_core::sc_event& pending_event() const override { return *hyp_.virq_ev_[vm_]; }
  int acknowledge() override { return hyp_.virtual_acknowledge(vm_); }
  void end_of_interrupt(int id) override { hyp_.virtual_eoi(vm_, id); }

 private:
  Hypervisor& hyp_;
  int vm_;
};

// The guest's timer: the hypervisor's hrtimer for it fires and the interrupt is delivered.
class Hypervisor::GuestTimerPort : public cpu::TimerPort {
 public:
  GuestTimerPort(Hypervisor& hyp, int vm) : hyp_(hyp), vm_(vm) {}
  void deliver() override { hyp_.deliver_timer(vm_); }

 private:
  Hypervisor& hyp_;
  int vm_;
};

// The credit scheduler as one pCPU's core sees it: VM `vm` there is the VM's vCPU on that pCPU
// (pinned there; or, with one vCPU per VM, vCPU `vm`, which may migrate). A migration hands the
// VM's contexts from the core that ran them to this one; a wake or a decision that makes another
// (idle) pCPU's decision due asks that core to decide.
class Hypervisor::PcpuScheduler : public cpu::VmScheduler {
 public:
  PcpuScheduler(Hypervisor& hyp, int pcpu, const CreditParams& p, int vms)
      : hyp_(hyp), s_(*hyp.scheduler_), pcpu_(pcpu), vcpu_of_(static_cast<std::size_t>(vms), -1) {
    identity_ = p.domain.size() == static_cast<std::size_t>(vms);
    for (std::size_t e = 0; e < p.domain.size(); ++e)
      if (identity_ || p.affinity.at(e).at(0) == pcpu)
        vcpu_of_.at(static_cast<std::size_t>(p.domain[e])) = static_cast<int>(e);
    vm_of_ = p.domain;
  }
  int vm_count() const override { return static_cast<int>(vcpu_of_.size()); }
  bool wake(int vm, bool io_event, TimePs now) override {
    const std::vector<int> poke = s_.wake_on(vcpu(vm), io_event, now);
    for (int k : poke)
      if (k != pcpu_) hyp_.cores_.at(static_cast<std::size_t>(k))->request_vm_decision();
    return std::find(poke.begin(), poke.end(), pcpu_) != poke.end();
  }
  void block(int vm, TimePs now) override {
    s_.block(vcpu(vm), now);
    poke_idle(now);
  }
  int pick(int running, TimePs now) override {
    const int e = s_.pick_on(pcpu_, running >= 0 ? vcpu_of_.at(static_cast<std::size_t>(running))
                                                 : -1,
                             now);
    const int vm = e < 0 ? -1 : vm_of_.at(static_cast<std::size_t>(e));
    if (vm >= 0 && identity_) {
      int& host = hyp_.host_of_.at(static_cast<std::size_t>(vm));
      if (host != pcpu_) {  // stolen from another pCPU's queue: its contexts come here
        hyp_.cores_.at(static_cast<std::size_t>(host))
            ->hand_over(vm, *hyp_.cores_.at(static_cast<std::size_t>(pcpu_)));
        host = pcpu_;
      }
    }
    poke_idle(now);
    return vm;
  }
  TimePs next_event(TimePs now) const override { return s_.next_event_on(pcpu_, now); }
  const char* state_name(int vm) const override { return s_.state_name(vcpu(vm)); }

 private:
  int vcpu(int vm) const {
    const int e = vcpu_of_.at(static_cast<std::size_t>(vm));
    if (e < 0)
      throw std::logic_error("pCPU " + std::to_string(pcpu_) + ": VM " + std::to_string(vm) +
                             " has no vCPU here");
    return e;
  }
  // An idle pCPU that may now steal a waiting vCPU (e.g. one this decision put back in a queue).
  void poke_idle(TimePs now) {
    if (!hyp_.migration_) return;
    for (int k = 0; k < s_.pcpu_count(); ++k)
      if (k != pcpu_ && s_.running_on(k) < 0 && s_.next_event_on(k, now) <= now &&
          static_cast<std::size_t>(k) < hyp_.cores_.size())
        hyp_.cores_[static_cast<std::size_t>(k)]->request_vm_decision();
  }
  Hypervisor& hyp_;
  CreditScheduler& s_;
  int pcpu_;
  bool identity_ = false;
  std::vector<int> vcpu_of_;  // per VM: its vCPU on this pCPU, -1 none
  std::vector<int> vm_of_;    // per vCPU: its VM
};

Hypervisor::Hypervisor(const sc_core::sc_module_name& name, const HypervisorParams& params,
                       cpu::Core& core, gic::Gic& gic, cpu::BusRegisterPort& bus)
    : core::Module(name),
      irq("irq", static_cast<std::size_t>(std::max(1, params.scheduler.pcpus))),
      params_(params),
      core_(core),
      gic_(gic),
      bus_(bus),
      irq_ctx_(core.add_hypervisor_context(std::string(this->name()) + ".irq")),
      bad_accesses_(stats_.counter("bad_accesses", "guest accesses to unmapped, unemulated IPAs")),
      injections_(stats_.counter("virq_injections", "virtual interrupts made pending")),
      phys_irqs_(stats_.counter("physical_irqs", "physical interrupts handled")) {
  const int n = params.vms;
  const int vcpus = params.scheduler.domain.empty()
                        ? n
                        : static_cast<int>(params.scheduler.domain.size());
  scheduler_ = std::make_unique<CreditScheduler>(vcpus, params.scheduler);
  for (int vm = 0; vm < n; ++vm) {
    stage2_.push_back(std::make_shared<smmu::Stage2Table>("vm" + std::to_string(vm) + " stage 2"));
    reg_ports_.push_back(std::make_unique<Stage2Port>(*this, vm));
    irq_ports_.push_back(std::make_unique<VirtualIrqPort>(*this, vm));
    timer_ports_.push_back(std::make_unique<GuestTimerPort>(*this, vm));
    timer_ctx_.push_back(&core.add_hypervisor_context(std::string(this->name()) + ".vtimer" +
                                                      std::to_string(vm)));
    virq_ev_.push_back(std::make_unique<sc_core::sc_event>());
  }
  saved_.resize(static_cast<std::size_t>(n));
  loaded_on_.assign(static_cast<std::size_t>(n), -1);
  loaded_.assign(irq.size(), -1);
  posted_.assign(irq.size(), false);
  irq_ctxs_.push_back(&irq_ctx_);
  overflow_.assign(static_cast<std::size_t>(n), false);
  exits_.resize(static_cast<std::size_t>(n));

  cpu::VmHooks hooks;
  hooks.switch_cycles = params.costs.vm_switch;
  hooks.trap_wfi = params.trap_wfi;
  hooks.wfi_cycles = params.costs.exit + params.costs.wfi;
  hooks.tick_cycles = params.costs.exit + params.costs.tick;
  hooks.halt_poll_ps = params.halt_poll;
  if (params.tickless) hooks.timer_interrupts = [this](int vm) { return !runs_alone(vm); };
  hooks.on_switch = [this](int, int to) { vm_switched(to, 0); };
  hooks.on_wfi = [this](int vm) {
    ++exits_[static_cast<std::size_t>(vm)].wfi;
    trace_event(this->name(), vm, "WFI");
  };
  hooks.on_timer = [this](int vm) {
    ++exits_[static_cast<std::size_t>(vm)].timer;
    trace_event(this->name(), vm, "timer");
  };
  hooks_ = hooks;
  cores_.push_back(&core_);
  for (int e = 0; e < vcpus && vcpus == n; ++e) host_of_.push_back(scheduler_->home(e));
  for (const auto& a : params.scheduler.affinity) migration_ = migration_ || a.empty();
  if (vcpus == n && !migration_) {
    core_.set_vm_scheduler(scheduler_.get(), hooks);  // one vCPU per VM: VM i is vCPU i
  } else {
    CreditParams p = params_.scheduler;
    if (p.domain.empty())
      for (int vm = 0; vm < n; ++vm) p.domain.push_back(vm);
    pcpu_views_.push_back(std::make_unique<PcpuScheduler>(*this, 0, p, n));
    core_.set_vm_scheduler(pcpu_views_.back().get(), hooks);
  }
  SC_THREAD(irq_thread);
}

void Hypervisor::add_core(cpu::Core& core, int pcpu) {
  if (pcpu < 1 || pcpu >= scheduler_->pcpu_count())
    throw std::invalid_argument(std::string(name()) + ": no pCPU " + std::to_string(pcpu) + " of " +
                                std::to_string(scheduler_->pcpu_count()));
  if (static_cast<std::size_t>(pcpu) != cores_.size())
    throw std::invalid_argument(std::string(name()) + ": add the cores in pCPU order");
  const auto& a = params_.scheduler.affinity;
  const bool one_each = scheduler_->vm_count() == params_.vms;
  for (std::size_t e = 0; e < static_cast<std::size_t>(scheduler_->vm_count()); ++e) {
    if (a.size() != static_cast<std::size_t>(scheduler_->vm_count()) ||
        (a[e].size() != 1 && !(one_each && a[e].empty())))
      throw std::invalid_argument(std::string(name()) + ": vCPU " + std::to_string(e) +
                                  " is neither pinned to one pCPU nor the one vCPU of its VM");
  }
  CreditParams p = params_.scheduler;
  if (p.domain.empty())
    for (int vm = 0; vm < params_.vms; ++vm) p.domain.push_back(vm);
  if (static_cast<std::size_t>(pcpu) >= irq.size())
    throw std::invalid_argument(std::string(name()) + ": pCPU " + std::to_string(pcpu) +
                                " has no irq port (params.scheduler.pcpus)");
  cores_.push_back(&core);
  pcpu_views_.push_back(std::make_unique<PcpuScheduler>(*this, pcpu, p, params_.vms));
  cpu::VmHooks hooks = hooks_;
  hooks.on_switch = [this, pcpu](int, int to) { vm_switched(to, pcpu); };
  core.set_vm_scheduler(pcpu_views_.back().get(), hooks);
  irq_ctxs_.push_back(
      &core.add_hypervisor_context(std::string(name()) + ".irq" + std::to_string(pcpu)));
  sc_core::sc_spawn_options opts;
  sc_core::sc_spawn([this, pcpu] { irq_loop(pcpu); },
                    (std::string(basename()) + "_irq" + std::to_string(pcpu)).c_str(), &opts);
}

bool Hypervisor::posted_delivery(const Ctx& ctx) const {
  for (std::size_t k = 0; k < irq_ctxs_.size(); ++k)
    if (irq_ctxs_[k] == &ctx) return posted_[k];
  return false;
}

CreditVmStats Hypervisor::vm_sched_stats(int vm) const {
  const auto& domain = params_.scheduler.domain;
  if (domain.empty()) return scheduler_->stats().vm.at(static_cast<std::size_t>(vm));
  CreditVmStats sum;
  bool first = true;
  for (std::size_t e = 0; e < domain.size(); ++e) {
    if (domain[e] != vm) continue;
    const CreditVmStats& s = scheduler_->stats().vm[e];
    if (first) {
      sum = s;
      first = false;
      continue;
    }
    sum.run_ps += s.run_ps;
    sum.picks += s.picks;
    sum.slices += s.slices;
    sum.wakes += s.wakes;
    sum.boosts += s.boosts;
    sum.tickles += s.tickles;
    sum.preempted += s.preempted;
    sum.ratelimited += s.ratelimited;
    sum.wake_to_run_count += s.wake_to_run_count;
    sum.wake_to_run_total_ps += s.wake_to_run_total_ps;
    sum.wake_to_run_max_ps = std::max(sum.wake_to_run_max_ps, s.wake_to_run_max_ps);
    sum.credit_min += s.credit_min;
    sum.credit_max += s.credit_max;
    sum.credit_dropped += s.credit_dropped;
    sum.migrations += s.migrations;
  }
  return sum;
}

double Hypervisor::vm_credit(int vm) const {
  const auto& domain = params_.scheduler.domain;
  if (domain.empty()) return scheduler_->credit(vm);
  double sum = 0;
  for (std::size_t e = 0; e < domain.size(); ++e)
    if (domain[e] == vm) sum += scheduler_->credit(static_cast<int>(e));
  return sum;
}

void Hypervisor::add_trap_handler(int vm, std::uint64_t ipa, std::uint64_t size,
                                  TrapHandler handler) {
  traps_.push_back({vm, ipa, size, std::move(handler)});
}

void Hypervisor::set_irq_handler(int id, IrqHandler handler, int owner) {
  irq_handlers_.push_back({id, std::move(handler), owner});
  gic_.enable(id, true);
}

void Hypervisor::device_access(Ctx& ctx, bool write, std::uint64_t pa, std::uint32_t& value,
                               int charge_to) {
  bus_.access_as(ctx, write, pa, value, CycleClass::Hypervisor, charge_to);
}

void Hypervisor::guest_access(int vm, Ctx& ctx, bool write, std::uint64_t ipa,
                              std::uint32_t& value) {
  const auto t = stage2(vm).translate(ipa, write);
  if (t && t->attr == smmu::MemAttr::Device) {
    // Direct access: the page is mapped to the device, no exit.
    bus_.access_as(ctx, write, t->pa, value, CycleClass::GuestKernel, vm);
    return;
  }
  // Stage-2 data abort: exit to Hyp mode and emulate.
  ++exits_[static_cast<std::size_t>(vm)].data_abort;
  trace_event(name(), vm, "data abort");
  spend(ctx, params_.costs.exit + params_.costs.data_abort, vm);
  for (Trap& trap : traps_) {
    if (trap.vm == vm && ipa >= trap.ipa && ipa - trap.ipa < trap.size) {
      trap.handler(vm, ctx, ipa - trap.ipa, write, value);
      return;
    }
  }
  // Nothing there: the write is dropped, a read returns 0 (a real hypervisor would inject an
  // abort into the guest; ours only counts it).
  ++bad_accesses_;
  VTOE_LOG(log_, Warn) << "vm" << vm << " accessed unmapped IPA 0x" << std::hex << ipa;
  if (!write) value = 0;
}

bool Hypervisor::runs_alone(int vm) const {
  for (int v = 0; v < params_.vms; ++v)
    if (v != vm && scheduler_->state(v) != CreditState::Blocked) return false;
  return true;
}

void Hypervisor::deliver_timer(int vm) {
  // A vCPU in guest mode on the core (not one the hypervisor halt-polls for).
  const int running = core_.halt_polling() ? -1 : core_.running_vm();
  // Direct delivery to the vCPU on the core: the hardware does it, no exit, no host work.
  if (params_.direct_timer && running == vm) return;
  Ctx& ctx = *timer_ctx_.at(static_cast<std::size_t>(vm));
  if (running >= 0) {
    // The timer interrupt takes the core from the running vCPU: an exit.
    ++exits_[static_cast<std::size_t>(running)].vtimer;
    trace_event(name(), running, "guest timer");
    spend(ctx, params_.costs.exit, vm);
  }
  // Otherwise the core was idle in the hypervisor (a blocked vCPU): no exit, as in HaaS's VFIO.
  spend(ctx, params_.costs.irq + params_.costs.vgic_inject, vm);
}

void Hypervisor::irq_thread() { irq_loop(0); }

void Hypervisor::irq_loop(int pcpu) {
  const auto k = static_cast<std::size_t>(pcpu);
  cpu::Core& core = *cores_.at(k);
  Ctx& ctx = *irq_ctxs_.at(k);
  gic_.enable(kKickSgi, true, pcpu);  // other cores' kicks (inject)
  for (;;) {
    while (!gic_.irq_asserted(pcpu)) sc_core::wait(irq[k].posedge_event());
    // The VM whose vCPU is loaded on this core, and whether it is in guest mode (not halt-polled
    // for).
    const int loaded = core.running_vm();
    const int running = core.halt_polling() ? -1 : loaded;
    const int next = gic_.highest_pending(pcpu) & 0x3FF;
    // Posted to the loaded vCPU (direct device interrupts): no exit, no host work. A vCPU the
    // hypervisor halt-polls for sees the posted interrupt in its poll and resumes.
    posted_[k] = params_.direct_irq && direct_check_ && direct_check_(loaded, next);
    if (!posted_[k]) {
      // The interrupt takes the core from whoever runs: an IRQ exit if that is a guest.
      if (running >= 0) {
        ++exits_[static_cast<std::size_t>(running)].irq;
        if (next < gic::kFirstPpi) ++exits_[static_cast<std::size_t>(running)].ipi;
        trace_event(name(), running, "IRQ");
      }
      // An idle core's handling is charged to the VM the interrupt serves (VM 0 for a shared one).
      int owner = 0;
      for (const IrqServer& s : irq_handlers_)
        if (s.id == next && s.owner >= 0) owner = s.owner;
      spend(ctx, params_.costs.exit + params_.costs.irq, loaded >= 0 ? loaded : owner);
    }
    const int iar = gic_.acknowledge(pcpu);
    if (iar == gic::kSpuriousId) continue;
    ++phys_irqs_;
    const int id = iar & 0x3FF;
    for (IrqServer& s : irq_handlers_)
      if (s.id == id) s.handler(ctx);
    gic_.end_of_interrupt(iar, pcpu);
    posted_[k] = false;
  }
}

// ---- Virtual interrupts ----

void Hypervisor::vm_switched(int to, int pcpu) {
  const auto k = static_cast<std::size_t>(pcpu);
  const int from = loaded_[k];
  if (from >= 0) {
    saved_[static_cast<std::size_t>(from)] = gic_.save(pcpu);
    loaded_on_[static_cast<std::size_t>(from)] = -1;
  }
  // A VM of several vCPUs keeps one vGIC state: it is loaded on the first core that switches
  // it in; its other cores take its virtual interrupts through that state.
  if (to >= 0 && loaded_on_[static_cast<std::size_t>(to)] >= 0) to = -1;
  gic_.restore(to >= 0 ? saved_[static_cast<std::size_t>(to)] : gic::VgicState{}, pcpu);
  loaded_[k] = to;
  if (to >= 0) loaded_on_[static_cast<std::size_t>(to)] = pcpu;
  if (to >= 0 && overflow_[static_cast<std::size_t>(to)]) place_virq(to);
}

// Puts the TOE's virtual interrupt into `vm`'s list registers (live or saved).
void Hypervisor::place_virq(int vm) {
  const int vid = params_.toe_virq;
  const int on = loaded_on_[static_cast<std::size_t>(vm)];
  const bool live = on >= 0;
  gic::VgicState& saved = saved_[static_cast<std::size_t>(vm)];
  auto read = [&](int i) {
    return live ? gic_.read_lr(i, on) : saved.lr[static_cast<std::size_t>(i)];
  };
  auto write = [&](int i, const gic::ListRegister& lr) {
    if (live)
      gic_.write_lr(i, lr, on);
    else
      saved.lr[static_cast<std::size_t>(i)] = lr;
  };
  overflow_[static_cast<std::size_t>(vm)] = false;
  int free = -1;
  for (int i = 0; i < gic::kListRegisters; ++i) {
    gic::ListRegister lr = read(i);
    if (lr.valid() && lr.virtual_id == vid) {
      if (lr.pending()) return;  // already pending: interrupts of one ID coalesce
      lr.state = gic::LrState::PendingActive;
      write(i, lr);
      return;
    }
    if (!lr.valid() && free < 0) free = i;
  }
  if (free < 0) {
    overflow_[static_cast<std::size_t>(vm)] = true;  // kept in software until an LR frees up
    return;
  }
  write(free, gic::ListRegister::make_pending(vid, gic::kDefaultPriority));
}

void Hypervisor::inject(int vm, const Ctx* from) {
  ++injections_;
  if (core::Tracer::on()) {
    auto& t = core::Tracer::instance();
    t.instant(t.lane(name(), t.vm_label(vm, name()) + " virtual IRQs"), "inject", core::now_ps(),
              "irq");
  }
  place_virq(vm);
  if (from) kick(vm, *from);
  virq_ev_[static_cast<std::size_t>(vm)]->notify(sc_core::SC_ZERO_TIME);
}

void Hypervisor::guest_ipi(int vm, Ctx& from, const cpu::Core& to) {
  if (guest_sgis_) ++*guest_sgis_;
  spend(from, params_.costs.exit + params_.costs.data_abort, vm);
  int source = -1, target = -1;
  for (std::size_t k = 0; k < cores_.size(); ++k) {
    if (cores_[k] == &from.core()) source = static_cast<int>(k);
    if (cores_[k] == &to) target = static_cast<int>(k);
  }
  if (source < 0 || target < 0 || source == target) return;
  // A vCPU blocked or halt-polled is woken by the process it gets: no exit to deliver.
  if (to.running_vm() != vm || to.halt_polling()) return;
  gic_.send_sgi(kKickSgi, gic::CpuMask{1} << target, source);
}

// GICv2 and v3 have no remote list-register writes: a vCPU in guest mode on another core takes
// the interrupt only once that core's hypervisor runs, so it is sent an SGI (an IPI exit there).
// A blocked or halt-polled vCPU needs none: its wake-up or poll sees the interrupt.
void Hypervisor::kick(int vm, const Ctx& from) {
  if (params_.direct_irq) return;  // posted: delivered to the running vCPU without an exit
  const int on = loaded_on_[static_cast<std::size_t>(vm)];
  if (on < 0) return;
  int source = -1;
  for (std::size_t k = 0; k < cores_.size(); ++k)
    if (cores_[k] == &from.core()) source = static_cast<int>(k);
  if (source < 0 || source == on) return;
  const cpu::Core& target = *cores_[static_cast<std::size_t>(on)];
  if (target.running_vm() != vm || target.halt_polling()) return;
  gic_.send_sgi(kKickSgi, gic::CpuMask{1} << on, source);
}

bool Hypervisor::virq_pending(int vm) {
  if (overflow_[static_cast<std::size_t>(vm)]) return true;
  const int on = loaded_on_[static_cast<std::size_t>(vm)];
  for (int i = 0; i < gic::kListRegisters; ++i) {
    const gic::ListRegister lr =
        on >= 0 ? gic_.read_lr(i, on)
                : saved_[static_cast<std::size_t>(vm)].lr[static_cast<std::size_t>(i)];
    if (lr.pending()) return true;
  }
  return false;
}

// The guest acknowledges at its virtual CPU interface. Normally its vCPU is on the core; if the
// core switched VMs in the same instant, the saved copy stands for the interface.
int Hypervisor::virtual_acknowledge(int vm) {
  const int on = loaded_on_[static_cast<std::size_t>(vm)];
  if (on >= 0) return gic_.virtual_acknowledge(on);
  // The same rules on the saved copy: the acknowledge raises the VM's running priority, which
  // its EOI must drop again, or the VM could never take another interrupt.
  gic::VgicState& s = saved_[static_cast<std::size_t>(vm)];
  const int i = gic::acknowledge_virtual(s);
  return i < 0 ? gic::kSpuriousId : s.lr[static_cast<std::size_t>(i)].virtual_id;
}

void Hypervisor::virtual_eoi(int vm, int id) {
  const int on = loaded_on_[static_cast<std::size_t>(vm)];
  if (on >= 0)
    gic_.virtual_end_of_interrupt(id, on);
  else if (id != gic::kSpuriousId)
    gic::end_virtual_interrupt(saved_[static_cast<std::size_t>(vm)], id);
  // A list register freed up: what waited in software goes in (the maintenance interrupt's job).
  if (overflow_[static_cast<std::size_t>(vm)]) place_virq(vm);
}

}  // namespace vtoe::hypervisor
