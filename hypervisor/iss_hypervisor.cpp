#include "hypervisor/iss_hypervisor.h"

#include <tlm_utils/simple_initiator_socket.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace vtoe::hypervisor {

namespace {

using cpu::iss::ArmCore;
using cpu::iss::GenericTimer;
using cpu::iss::TimerKind;

// Long-descriptor stage-2 entries (ARM ARM B3.6.1).
constexpr std::uint64_t kS2Block = 1, kS2Table = 3, kS2Page = 3;
constexpr std::uint64_t kS2Device = 1ull << 2;    // MemAttr 0b0001: Device
constexpr std::uint64_t kS2Normal = 0xfull << 2;  // MemAttr 0b1111: Normal write-back
constexpr std::uint64_t kS2ReadWrite = 3ull << 6;
constexpr std::uint64_t kS2InnerShareable = 3ull << 8;
constexpr std::uint64_t kS2AccessFlag = 1ull << 10;
constexpr std::uint64_t kTableBytes = 4096;
constexpr std::uint64_t kTablesPerVm = 16;  // level 1, level 2s, level 3s of device pages
constexpr std::uint64_t kBlock = 2ull << 20;

// HCR for a guest: stage 2, SWIO, FIQ/IRQ/abort routing, WFI and SMC trapped (as Xen sets it,
// less the cache and ID traps the model does not need).
constexpr std::uint32_t kGuestHcr =
    (1u << 0) | (1u << 1) | (1u << 3) | (1u << 4) | (1u << 5) | (1u << 13) | (1u << 19);
constexpr std::uint32_t kVtcr = (1u << 31) | (1u << 6);  // 32-bit IPA, start at level 1

// HSR fields.
constexpr std::uint32_t kHsrIl = 1u << 25;
constexpr std::uint32_t kIssIsv = 1u << 24;
constexpr std::uint32_t kIssSse = 1u << 21;
constexpr std::uint32_t kIssWnr = 1u << 6;

constexpr int kKickSgi = 0;
constexpr int kMaintenancePpi = gic::kMaintenanceId;
constexpr int kHypTimerPpi = 26;
constexpr int kVirtualTimerPpi = 27;
constexpr std::uint8_t kHypPriority = 0x80;

}  // namespace

HypervisorCosts xen_on_iss_costs(const HypervisorCosts& assumed) {
  HypervisorCosts c = assumed;
  // Whole traps: the model charges exit + the cause's cost (+ vgic_inject per injection), so
  // the measured totals go to the causes and the shares of exit and injection to zero.
  c.exit = 0;
  c.vgic_inject = 0;
  c.irq = 4782;
  c.tick = 0;  // the Hyp timer's interrupt is an IRQ like the others (Xen's are among the 645)
  c.data_abort = 1896;
  c.hvc = 3487;
  c.wfi = assumed.exit + assumed.wfi;  // not measured: the annotated model's trapped WFI
  return c;
}

// The VM's own distributor, as the guest's trapped accesses see it: a GICv2 distributor of its
// own (gic::Gic with its register face) whose configuration (enables, priorities) says where
// the model may place virtual interrupts.
class IssHypervisor::Distributor : public GuestDevice {
 public:
  Distributor(IssHypervisor& h, int vm, gic::GicRegisters& regs) : h_(h), vm_(vm), regs_(regs) {}
  std::uint32_t read(std::uint64_t offset, unsigned size) override {
    return regs_.read_distributor(static_cast<std::uint32_t>(offset), size);
  }
  void write(std::uint64_t offset, std::uint32_t value, unsigned size) override {
    regs_.write_distributor(static_cast<std::uint32_t>(offset), value, size);
    h_.place_pending(vm_);  // an interrupt the guest just enabled may be waiting
  }

 private:
  IssHypervisor& h_;
  int vm_;
  gic::GicRegisters& regs_;
};

// The VM's own PL011 (its console), reached through trapped accesses.
class IssHypervisor::UartDevice : public GuestDevice {
 public:
  explicit UartDevice(uart::Pl011& u) : u_(u) {}
  std::uint32_t read(std::uint64_t offset, unsigned size) override {
    const std::uint32_t v = u_.read(static_cast<std::uint32_t>(offset & ~3ull));
    const unsigned shift = static_cast<unsigned>(offset & 3) * 8;
    return size >= 4 ? v : (v >> shift) & ((1u << (size * 8)) - 1);
  }
  void write(std::uint64_t offset, std::uint32_t value, unsigned /*size*/) override {
    u_.write(static_cast<std::uint32_t>(offset & ~3ull), value);
  }

 private:
  uart::Pl011& u_;
};

struct IssHypervisor::Vm {
  int index = 0;
  std::uint64_t ram_pa = 0;
  IssVmBoot boot;
  std::uint64_t tables_pa = 0;
  std::uint64_t tables_used = 0;
  cpu::iss::ArmState state;  // while not loaded on the core
  gic::VgicState vgic;       // the same
  std::unique_ptr<gic::Gic> dist;
  std::unique_ptr<gic::GicRegisters> dist_regs;
  sc_core::sc_signal<bool> dist_irq, dist_virq, dist_maintenance;
  std::unique_ptr<uart::Pl011> uart;
  sc_core::sc_signal<bool> uart_irq;
  // The devices' target sockets, tied off: the model calls their registers directly.
  std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<IssHypervisor>>> ties;
  std::unique_ptr<Distributor> dist_device;
  std::unique_ptr<UartDevice> uart_device;
  std::vector<Window> windows;
  std::deque<Pending> pending;  // waiting for an enable or a free list register
  std::vector<Pending> levels;  // level interrupts placed: injected again after an EOI while high
  psci::Psci psci;
  ExitCounts exits;
  std::array<std::uint64_t, static_cast<int>(Cause::Count)> cycles{};
  // Instructions retired while loaded: the totals of the spans before, and the core's counts
  // when the current span began (user, all).
  std::uint64_t user_insns = 0, all_insns = 0, user_mark = 0, all_mark = 0;
  std::string stop;
  bool blocked = false;               // in WFI with nothing pending
  std::uint64_t vtimer_deadline = 0;  // physical count, while not loaded (0: none)
};

IssHypervisor::IssHypervisor(const sc_core::sc_module_name& name, const IssHypervisorParams& params,
                             cpu::iss::IssCpu& cpu, gic::Gic& gic, Console console)
    : core::Module(name),
      params_(params),
      cpu_(cpu),
      gic_(gic),
      console_(std::move(console)),
      scheduler_([&] {
        CreditParams p = params.scheduler;
        p.pcpus = 1;
        const std::size_t n = params.vm_ram_pa.size();
        if (p.weights.empty()) p.weights.assign(n, 256);
        if (p.weights.size() != n) throw std::invalid_argument("iss hypervisor: one weight per VM");
        return CreditScheduler(static_cast<int>(n), p);
      }()),
      exits_total_(stats_.counter("exits", "entries to Hyp mode handled by the model")),
      bad_accesses_(stats_.counter("bad_accesses", "guest accesses no device or RAM answers")) {
  const std::vector<std::uint64_t>& vms = params_.vm_ram_pa;
  if (vms.empty()) throw std::invalid_argument("iss hypervisor: no VM");
  const IssGuestLayout& l = params_.layout;
  if (l.ram_ipa != 0x4000'0000 || l.ram_size == 0 || l.ram_size > (1ull << 30) ||
      l.ram_size % kBlock != 0)
    throw std::invalid_argument(
        "iss hypervisor: guest RAM must start at 0x40000000 and be a multiple of 2 MiB, at most "
        "1 GiB");
  if (params_.tables_size < kTablesPerVm * kTableBytes * vms.size() || !params_.tables ||
      params_.tables_pa % kTableBytes)
    throw std::invalid_argument("iss hypervisor: no room for the stage-2 tables");
  for (std::size_t i = 0; i < vms.size(); ++i) {
    if (vms[i] % kBlock) throw std::invalid_argument("iss hypervisor: VM RAM not 2 MiB aligned");
    auto v = std::make_unique<Vm>();
    const std::string n = "vm" + std::to_string(i);
    v->index = static_cast<int>(i);
    v->ram_pa = vms[i];
    v->tables_pa = params_.tables_pa + i * kTablesPerVm * kTableBytes;
    v->dist = std::make_unique<gic::Gic>((n + "_distributor").c_str(), gic.num_spis(), 1);
    for (auto& spi : v->dist->spi) spi.bind(idle_);
    v->dist->irq[0].bind(v->dist_irq);
    v->dist->virq[0].bind(v->dist_virq);
    v->dist->maintenance[0].bind(v->dist_maintenance);
    v->dist_regs =
        std::make_unique<gic::GicRegisters>((n + "_distributor_registers").c_str(), *v->dist);
    const int vm = static_cast<int>(i);
    v->uart = std::make_unique<uart::Pl011>((n + "_uart").c_str(),
                                            [this, vm](char c) { console_(vm, c); });
    v->uart->irq.bind(v->uart_irq);
    for (auto* socket : {&v->uart->in, &v->dist_regs->distributor, &v->dist_regs->cpu,
                         &v->dist_regs->hyp, &v->dist_regs->vcpu}) {
      v->ties.push_back(std::make_unique<tlm_utils::simple_initiator_socket<IssHypervisor>>(
          (n + "_tie" + std::to_string(v->ties.size())).c_str()));
      v->ties.back()->bind(*socket);
    }
    v->dist_device = std::make_unique<Distributor>(*this, vm, *v->dist_regs);
    v->uart_device = std::make_unique<UartDevice>(*v->uart);
    v->windows.push_back({l.gicd_ipa, gic::kDistributorSize, v->dist_device.get()});
    v->windows.push_back({l.uart_ipa, uart::kPl011Size, v->uart_device.get()});
    vms_.push_back(std::move(v));
    build_stage2(vm);
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.dont_initialize();
    o.set_sensitivity(&vms_.back()->uart_irq.value_changed_event());
    sc_core::sc_spawn([this, vm] { uart_method(vm); }, (n + "_uart_irq").c_str(), &o);
  }
  SC_METHOD(vtimer_method);
  sensitive << vtimer_event_;
  dont_initialize();
  cpu_.set_hypervisor_model(this);
}

IssHypervisor::~IssHypervisor() = default;

std::uint64_t* IssHypervisor::table_at(std::uint64_t pa) {
  return reinterpret_cast<std::uint64_t*>(params_.tables + (pa - params_.tables_pa));
}

std::uint64_t IssHypervisor::new_table(int vm) {
  Vm& v = *vms_[static_cast<std::size_t>(vm)];
  if (v.tables_used == kTablesPerVm)
    throw std::invalid_argument("iss hypervisor: vm" + std::to_string(vm) +
                                "'s stage-2 tables are full");
  const std::uint64_t pa = v.tables_pa + v.tables_used++ * kTableBytes;
  std::memset(table_at(pa), 0, kTableBytes);
  return pa;
}

// The level-2 table for the GiB of `ipa`, made on first use.
std::uint64_t* IssHypervisor::level2(int vm, std::uint64_t ipa) {
  Vm& v = *vms_[static_cast<std::size_t>(vm)];
  std::uint64_t& l1 = table_at(v.tables_pa)[ipa >> 30];
  if (!(l1 & 1)) l1 = new_table(vm) | kS2Table;
  return table_at(l1 & 0xfffff000ull);
}

void IssHypervisor::map_device(int vm, std::uint64_t ipa, std::uint64_t pa, std::uint64_t size) {
  for (std::uint64_t off = 0; off < size; off += 4096) {
    std::uint64_t& l2 = level2(vm, ipa + off)[((ipa + off) >> 21) & 0x1ff];
    if (!(l2 & 1)) l2 = new_table(vm) | kS2Table;
    table_at(l2 & 0xfffff000ull)[((ipa + off) >> 12) & 0x1ff] =
        (pa + off) | kS2Page | kS2Device | kS2ReadWrite | kS2AccessFlag;
  }
}

void IssHypervisor::build_stage2(int vm) {
  Vm& v = *vms_[static_cast<std::size_t>(vm)];
  const IssGuestLayout& l = params_.layout;
  v.tables_used = 0;
  new_table(vm);  // level 1 (its first 32 bytes are the four entries of a 32-bit IPA space)
  // The RAM in 2 MiB blocks; of the devices only the GIC's virtual CPU interface (at the
  // guest's GICC): the distributor, the UART and the TOE's control page trap.
  std::uint64_t* ram = level2(vm, l.ram_ipa);
  for (std::uint64_t off = 0; off < l.ram_size; off += kBlock)
    ram[((l.ram_ipa + off) >> 21) & 0x1ff] =
        (v.ram_pa + off) | kS2Block | kS2Normal | kS2ReadWrite | kS2InnerShareable | kS2AccessFlag;
  map_device(vm, l.gicc_ipa, l.gicv_pa, l.gicc_size);
}

void IssHypervisor::add_device(int vm, std::uint64_t ipa, std::uint64_t size, GuestDevice* device) {
  vms_.at(static_cast<std::size_t>(vm))->windows.push_back({ipa, size, device});
}

void IssHypervisor::set_irq_handler(int id, std::function<void()> handler) {
  irq_handlers_.emplace_back(id, std::move(handler));
  gic_.set_priority(id, kHypPriority);
  gic_.enable(id, true);
}

uart::Pl011& IssHypervisor::uart(int vm) { return *vms_.at(static_cast<std::size_t>(vm))->uart; }

bool IssHypervisor::vm_stopped(int vm) const {
  return !vms_.at(static_cast<std::size_t>(vm))->stop.empty();
}

const std::string& IssHypervisor::vm_stop_reason(int vm) const {
  return vms_.at(static_cast<std::size_t>(vm))->stop;
}

const char* IssHypervisor::to_string(Cause c) {
  switch (c) {
    case Cause::DataAbort:
      return "data_abort";
    case Cause::Irq:
      return "irq";
    case Cause::Wfi:
      return "wfi";
    case Cause::Hvc:
      return "hvc";
    case Cause::Switch:
      return "vm_switch";
    case Cause::Count:
      break;
  }
  return "?";
}

std::uint64_t IssHypervisor::guest_instructions(int vm, bool user) const {
  const Vm& v = *vms_.at(static_cast<std::size_t>(vm));
  const cpu::iss::ArmCore& core = cpu_.core();
  std::uint64_t u = v.user_insns, a = v.all_insns;
  if (vm == current_) {
    u += core.retired_in_mode(cpu::iss::Mode::Usr) - v.user_mark;
    a += core.retired() - v.all_mark;
  }
  // (Every instruction the core retires is a guest's: the hypervisor is the model. An HVC,
  // which retires after its entry to Hyp mode, counts as its guest kernel's.)
  return user ? u : a - u;
}

std::uint64_t IssHypervisor::cycles(int vm, Cause c) const {
  return vms_.at(static_cast<std::size_t>(vm))->cycles[static_cast<std::size_t>(c)];
}

const ExitCounts& IssHypervisor::exits(int vm) const {
  return vms_.at(static_cast<std::size_t>(vm))->exits;
}

bool IssHypervisor::all_stopped() const {
  return std::all_of(vms_.begin(), vms_.end(), [](const auto& v) { return !v->stop.empty(); });
}

TimePs IssHypervisor::now_ps() const {
  return static_cast<TimePs>(sc_core::sc_time_stamp().to_seconds() * 1e12 + 0.5);
}

std::uint64_t IssHypervisor::count_now() const {
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(now_ps()) * params_.cntfrq /
                                    1'000'000'000'000ull);
}

void IssHypervisor::start(const std::vector<IssVmBoot>& boots) {
  if (boots.size() != vms_.size()) throw std::invalid_argument("iss hypervisor: one boot per VM");
  for (std::size_t i = 0; i < boots.size(); ++i) vms_[i]->boot = boots[i];
  // The physical GIC as the hypervisor sets it up: its own PPIs (the scheduler's Hyp timer,
  // the running guest's virtual timer, the maintenance interrupt) and the kick SGI.
  gic_.set_distributor_enabled(true);
  gic_.set_cpu_interface_enabled(true);
  gic_.set_priority_mask(0xff);
  for (int id : {kKickSgi, kMaintenancePpi, kHypTimerPpi, kVirtualTimerPpi}) {
    gic_.set_priority(id, kHypPriority);
    gic_.enable(id, true);
  }
  // Each vCPU's first state: the boot loader's entry in SVC with A, I and F masked, the MMU off,
  // stage 2 on with the VM's tables (VMID = VM + 1), CNTVOFF 0.
  ArmCore& core = cpu_.core();
  for (auto& vp : vms_) {
    Vm& v = *vp;
    core.reset_system(true);
    core.set_cp15(1, 4, 1, 0, kGuestHcr);
    core.set_cp15(2, 4, 1, 2, kVtcr);
    core.set_cp15_64(6, 2, v.tables_pa | (std::uint64_t(v.index + 1) << 48));
    core.timer().cntvoff = 0;
    core.set_cpsr(0x1d3);
    core.set_reg(0, v.boot.r0);
    core.set_reg(1, v.boot.r1);
    core.set_reg(2, v.boot.r2);
    core.set_pc(v.boot.entry);
    v.state = core.state();
    scheduler_.wake(v.index, false, 0);
  }
  current_ = -1;
  const int first = scheduler_.pick(-1, 0);
  load(first);
  in_guest_ = true;
}

void IssHypervisor::hyp_exit() {
  in_guest_ = false;
  in_exit_ = true;
  cpu_process_ = sc_core::sc_get_current_process_handle();
  ArmCore& core = cpu_.core();
  ++exits_total_;
  const std::uint32_t offset = core.pc() - core.hvbar();
  const std::uint32_t ret = core.elr_hyp();
  const std::uint32_t hsr = core.hsr();
  const std::uint32_t ec = hsr >> 26;
  const std::uint32_t mode = core.spsr(cpu::iss::Mode::Hyp) & 0x1f;
  Vm& v = *vms_[static_cast<std::size_t>(current_)];
  const bool synchronous = offset == 0x14;
  cause_ = !synchronous                              ? Cause::Irq
           : ec == cpu::iss::hsr_ec::kDataAbortLower ? Cause::DataAbort
           : ec == cpu::iss::hsr_ec::kWfiWfe         ? Cause::Wfi
                                                     : Cause::Hvc;
  charge(params_.costs.exit + static_cast<double>(owed_));
  owed_ = 0;
  // Back to the guest's mode first (ERET), so that the handler reads and writes the registers
  // the guest sees; a trapped instruction that completes (an emulated access, WFI, SMC) is
  // stepped over, HVC's return address is already the next one.
  const bool step =
      synchronous && (ec == cpu::iss::hsr_ec::kDataAbortLower || ec == cpu::iss::hsr_ec::kWfiWfe ||
                      ec == cpu::iss::hsr_ec::kSmc);
  core.return_from_hyp(step ? ret + ((hsr & kHsrIl) ? 4 : 2) : ret);
  if (offset == 0x18) {
    handle_irq();
  } else if (synchronous && ec == cpu::iss::hsr_ec::kDataAbortLower) {
    ++v.exits.data_abort;
    handle_data_abort(hsr, ret, mode);
  } else if (synchronous && ec == cpu::iss::hsr_ec::kWfiWfe) {
    ++v.exits.wfi;
    handle_wfi();
  } else if (synchronous && (ec == cpu::iss::hsr_ec::kHvc || ec == cpu::iss::hsr_ec::kSmc)) {
    ++v.exits.hvc;
    handle_call();
  } else {
    std::ostringstream m;
    m << "an exception to Hyp mode the hypervisor does not handle (vector offset 0x" << std::hex
      << offset << ", HSR 0x" << hsr << ") at pc 0x" << ret << " in mode 0x" << mode;
    stop_vm(current_, m.str());
  }
  resume_guest();
  in_exit_ = false;
}

void IssHypervisor::charge(double cycles) {
  if (cycles <= 0) return;
  // Only the core's own thread, in an exit, takes the time; a device's process (a method, or a
  // thread of its own running while the core waits) leaves it owed.
  if (in_exit_ && sc_core::sc_get_current_process_handle() == cpu_process_) {
    cpu_.spend(static_cast<std::uint64_t>(cycles));
    if (current_ >= 0)
      vms_[static_cast<std::size_t>(current_)]->cycles[static_cast<std::size_t>(cause_)] +=
          static_cast<std::uint64_t>(cycles);
  } else
    owed_ += static_cast<std::uint64_t>(cycles);  // paid at the next exit
}

void IssHypervisor::handle_irq() {
  Vm* v = current_ >= 0 ? vms_[static_cast<std::size_t>(current_)].get() : nullptr;
  for (;;) {
    const int iar = gic_.acknowledge(0);
    const int id = iar & 0x3ff;
    if (id == gic::kSpuriousId) break;
    charge(params_.costs.irq);
    if (id == kVirtualTimerPpi) {
      // The loaded vCPU's virtual timer: masked until the guest rearms it (Xen's vtimer), and
      // its virtual PPI made pending.
      if (v) {
        ++v->exits.vtimer;
        GenericTimer& t = cpu_.core().timer();
        t.set_ctl(TimerKind::Virtual, t.ctl(TimerKind::Virtual, 0) | GenericTimer::kImask);
        cpu_.timer_changed();
        gic_.end_of_interrupt(iar, 0);
        inject(current_, kVirtualTimerPpi);
        continue;
      }
    } else if (id == kHypTimerPpi) {
      if (v) ++v->exits.timer;
      charge(params_.costs.tick);
      GenericTimer& t = cpu_.core().timer();
      t.set_ctl(TimerKind::Hyp, 0);  // armed again after the decision
      cpu_.timer_changed();
    } else if (id == kKickSgi) {
      kick_sent_ = false;
    } else if (id == kMaintenancePpi) {
      gic_.clear_eoi_status(gic_.eisr(0), 0);
    } else {
      if (v) ++v->exits.irq;
      for (auto& [hid, handler] : irq_handlers_)
        if (hid == id) handler();
    }
    gic_.end_of_interrupt(iar, 0);
  }
}

void IssHypervisor::handle_data_abort(std::uint32_t hsr, std::uint32_t pc, std::uint32_t mode) {
  ArmCore& core = cpu_.core();
  Vm& v = *vms_[static_cast<std::size_t>(current_)];
  charge(params_.costs.data_abort);
  const std::uint64_t ipa =
      (static_cast<std::uint64_t>(core.hpfar() >> 4) << 12) | (core.hdfar() & 0xfff);
  const bool write = hsr & kIssWnr;
  auto fail = [&](const char* why) {
    ++bad_accesses_;
    std::ostringstream m;
    m << why << ": a " << (write ? "store to" : "load from") << " IPA 0x" << std::hex << ipa
      << " (VA 0x" << core.hdfar() << ") at pc 0x" << pc << " in mode 0x" << mode;
    stop_vm(current_, m.str());
  };
  for (const Window& w : v.windows) {
    if (ipa < w.ipa || ipa >= w.ipa + w.size) continue;
    if (!(hsr & kIssIsv)) return fail("a device access the syndrome does not describe");
    const unsigned size = 1u << ((hsr >> 22) & 3);
    const int srt = static_cast<int>((hsr >> 16) & 15);
    if (write) {
      std::uint32_t value = srt == 15 ? 0 : core.reg(srt);
      if (size < 4) value &= (1u << (size * 8)) - 1;
      w.device->write(ipa - w.ipa, value, size);
    } else {
      std::uint32_t value = w.device->read(ipa - w.ipa, size);
      if ((hsr & kIssSse) && size < 4) {
        const unsigned shift = 32 - size * 8;
        value = static_cast<std::uint32_t>(static_cast<std::int32_t>(value << shift) >>
                                           static_cast<int>(shift));
      }
      if (srt != 15) core.set_reg(srt, value);
    }
    return;
  }
  fail("outside the VM's RAM and devices");
}

void IssHypervisor::handle_wfi() {
  Vm& v = *vms_[static_cast<std::size_t>(current_)];
  charge(params_.costs.wfi);
  place_pending(current_);
  if (gic_.pending_lr_count(0) > 0 || !v.pending.empty()) return;  // it would wake at once
  v.blocked = true;
  scheduler_.block(current_, now_ps());
}

void IssHypervisor::handle_call() {
  ArmCore& core = cpu_.core();
  Vm& v = *vms_[static_cast<std::size_t>(current_)];
  charge(params_.costs.hvc);
  const std::uint32_t fn = core.reg(0);
  if (!psci::Psci::is_psci(fn)) {
    core.set_reg(0, 0xffffffffu);  // NOT_SUPPORTED, as PSCI answers an unknown function
    return;
  }
  const psci::Result r = v.psci.call(fn, core.reg(1), core.reg(2), core.reg(3));
  core.set_reg(0, r.r0);
  if (r.action == psci::Action::PowerOff) stop_vm(current_, "power-off");
  if (r.action == psci::Action::Reset) stop_vm(current_, "reset");
}

void IssHypervisor::stop_vm(int vm, const std::string& why) {
  Vm& v = *vms_.at(static_cast<std::size_t>(vm));
  if (!v.stop.empty()) return;
  v.stop = why;
  log_.write(core::LogLevel::Info, "vm" + std::to_string(vm) + " stopped: " + why);
  if (!v.blocked) scheduler_.block(vm, now_ps());
  v.blocked = true;
  v.pending.clear();
  v.levels.clear();
  v.vtimer_deadline = 0;
  if (all_stopped()) all_stopped_event_.notify(sc_core::SC_ZERO_TIME);
}

bool IssHypervisor::physical_irq_pending() const { return gic_.irq_asserted(0); }

void IssHypervisor::resume_guest() {
  for (;;) {
    schedule();
    if (current_ >= 0 && !vms_[static_cast<std::size_t>(current_)]->blocked) break;
    // Nobody can run: the core idles in the hypervisor until an interrupt or a virtual timer
    // wakes someone.
    if (all_stopped()) {
      cpu_.core().halt();
      return;
    }
    if (!physical_irq_pending()) {
      in_exit_ = false;
      const sc_core::sc_time since = now();
      sc_core::wait(cpu_.wake_event() | vtimer_event_ | model_event_);
      cpu_.add_idle(now() - since);
      in_exit_ = true;
    }
    if (physical_irq_pending()) {
      cause_ = Cause::Irq;
      handle_irq();
    }
  }
  for (auto& v : vms_)
    if (v->index != current_) place_pending(v->index);
  place_pending(current_);
  in_guest_ = true;
}

void IssHypervisor::schedule() {
  const TimePs t = now_ps();
  const int running =
      current_ >= 0 && !vms_[static_cast<std::size_t>(current_)]->blocked ? current_ : -1;
  const int next = scheduler_.pick(running, t);
  if (next >= 0 && next != current_) {
    const Cause was = cause_;
    cause_ = Cause::Switch;
    charge(params_.costs.vm_switch);
    cause_ = was;
    unload();
    load(next);
  }
  arm_scheduler_timer();
}

void IssHypervisor::load(int vm) {
  Vm& v = *vms_.at(static_cast<std::size_t>(vm));
  // The incoming vCPU's state with the hypervisor's own Hyp timer (the scheduler's) kept.
  const GenericTimer& live = cpu_.core().timer();
  cpu::iss::ArmState s = v.state;
  s.timer.set_ctl(TimerKind::Hyp, live.ctl(TimerKind::Hyp, 0));
  s.timer.set_cval(TimerKind::Hyp, live.cval(TimerKind::Hyp));
  cpu_.switch_state(s);
  gic_.restore(v.vgic, 0);
  v.user_mark = cpu_.core().retired_in_mode(cpu::iss::Mode::Usr);
  v.all_mark = cpu_.core().retired();
  v.vtimer_deadline = 0;  // the core's timer has it now
  current_ = vm;
  ++switches_;
}

void IssHypervisor::unload() {
  if (current_ < 0) return;
  Vm& v = *vms_[static_cast<std::size_t>(current_)];
  v.user_insns += cpu_.core().retired_in_mode(cpu::iss::Mode::Usr) - v.user_mark;
  v.all_insns += cpu_.core().retired() - v.all_mark;
  v.state = cpu_.core().state();
  v.vgic = gic_.save(0);
  // Its virtual timer goes on without the core: the model makes it pending at its deadline.
  const GenericTimer& t = v.state.timer;
  const std::uint32_t ctl = t.ctl(TimerKind::Virtual, 0);
  if (v.stop.empty() && (ctl & GenericTimer::kEnable) && !(ctl & GenericTimer::kImask)) {
    v.vtimer_deadline = std::max<std::uint64_t>(t.cval(TimerKind::Virtual) + t.cntvoff, 1);
    vtimer_event_.cancel();
    vtimer_event_.notify(sc_core::SC_ZERO_TIME);
  }
  current_ = -1;
}

void IssHypervisor::vtimer_method() {
  const std::uint64_t count = count_now();
  std::uint64_t next = 0;
  for (auto& vp : vms_) {
    Vm& v = *vp;
    if (!v.vtimer_deadline || v.index == current_) continue;
    if (v.vtimer_deadline <= count) {
      v.vtimer_deadline = 0;
      v.state.timer.set_ctl(TimerKind::Virtual,
                            v.state.timer.ctl(TimerKind::Virtual, 0) | GenericTimer::kImask);
      inject(v.index, kVirtualTimerPpi);
    } else if (!next || v.vtimer_deadline < next) {
      next = v.vtimer_deadline;
    }
  }
  if (next) {
    const double s = static_cast<double>(next - count) / static_cast<double>(params_.cntfrq);
    vtimer_event_.notify(sc_core::sc_time(s, sc_core::SC_SEC));
  }
}

void IssHypervisor::uart_method(int vm) {
  Vm& v = *vms_[static_cast<std::size_t>(vm)];
  if (!v.uart_irq.read() || !v.stop.empty()) return;
  inject(vm, params_.layout.uart_virq, [&v] { return v.uart_irq.read(); });
}

void IssHypervisor::arm_scheduler_timer() {
  GenericTimer& t = cpu_.core().timer();
  const TimePs next = scheduler_.next_event(now_ps());
  if (next == kNoEvent) {
    t.set_ctl(TimerKind::Hyp, 0);
  } else {
    const auto count = static_cast<std::uint64_t>(
        (static_cast<unsigned __int128>(next) * params_.cntfrq + 999'999'999'999ull) /
        1'000'000'000'000ull);
    t.set_cval(TimerKind::Hyp, count);
    t.set_ctl(TimerKind::Hyp, GenericTimer::kEnable);
  }
  cpu_.timer_changed();
}

void IssHypervisor::inject(int vm, int vid, std::function<bool()> level_source) {
  Vm& v = *vms_.at(static_cast<std::size_t>(vm));
  if (!v.stop.empty()) return;
  v.pending.push_back({vid, std::move(level_source)});
  place_pending(vm);
  wake(vm, vid != kVirtualTimerPpi);
}

void IssHypervisor::wake(int vm, bool io) {
  Vm& v = *vms_[static_cast<std::size_t>(vm)];
  if (!v.blocked || !v.stop.empty()) return;
  v.blocked = false;
  const bool now = scheduler_.wake(vm, io, now_ps());
  if (now || vm != current_ || !in_guest_) kick();  // (idle in the model: it looks again)
}

void IssHypervisor::kick() {
  if (!in_guest_) {
    model_event_.notify(sc_core::SC_ZERO_TIME);  // the model itself waits or decides next
    return;
  }
  if (kick_sent_) return;
  kick_sent_ = true;
  gic_.send_sgi(kKickSgi, 1, 0);
}

bool IssHypervisor::place(Vm& v, const Pending& p) {
  const bool loaded = v.index == current_;
  gic::Gic& d = *v.dist;
  if (!d.distributor_enabled() || !d.is_enabled(p.vid, 0)) return false;
  auto lr_at = [&](int i) {
    return loaded ? gic_.read_lr(i, 0) : v.vgic.lr[static_cast<std::size_t>(i)];
  };
  auto write = [&](int i, const gic::ListRegister& lr) {
    if (loaded)
      gic_.write_lr(i, lr, 0);
    else
      v.vgic.lr[static_cast<std::size_t>(i)] = lr;
  };
  int free = -1;
  for (int i = 0; i < gic::kListRegisters; ++i) {
    gic::ListRegister lr = lr_at(i);
    if (!lr.valid()) {
      if (free < 0) free = i;
      continue;
    }
    if (lr.virtual_id != p.vid) continue;
    if (lr.pending()) return true;  // already pending: one is enough
    if (!p.level) {                 // an edge while active: pending again behind it
      lr.state = gic::LrState::PendingActive;
      write(i, lr);
      return true;
    }
    return false;  // a level one active: looked at again after its EOI
  }
  if (free < 0) return false;
  gic::ListRegister lr = gic::ListRegister::make_pending(p.vid, d.priority(p.vid, 0));
  lr.group1 = false;
  lr.eoi_maintenance = static_cast<bool>(p.level);
  write(free, lr);
  if (p.level) v.levels.push_back(p);
  return true;
}

void IssHypervisor::place_pending(int vm) {
  Vm& v = *vms_.at(static_cast<std::size_t>(vm));
  const bool loaded = vm == current_;
  // Level interrupts whose LR the guest emptied: again while their line is high.
  for (auto it = v.levels.begin(); it != v.levels.end();) {
    bool held = false;
    for (int i = 0; i < gic::kListRegisters; ++i) {
      const gic::ListRegister lr =
          loaded ? gic_.read_lr(i, 0) : v.vgic.lr[static_cast<std::size_t>(i)];
      held = held || (lr.valid() && lr.virtual_id == it->vid);
    }
    if (held) {
      ++it;
      continue;
    }
    if (it->level()) v.pending.push_back(*it);
    it = v.levels.erase(it);
  }
  bool lr_short = false;  // an enabled interrupt waits for a list register
  for (auto it = v.pending.begin(); it != v.pending.end();) {
    if (place(v, *it)) {
      charge(params_.costs.vgic_inject);
      it = v.pending.erase(it);
    } else {
      lr_short = lr_short || (v.dist->distributor_enabled() && v.dist->is_enabled(it->vid, 0));
      ++it;
    }
  }
  if (loaded) {
    // Underflow maintenance while an enabled interrupt waits for a list register (one the
    // guest disabled waits for its enable, which traps).
    std::uint32_t h = gic_.hcr(0);
    h = lr_short ? (h | gic::hcr::kUie) : (h & ~gic::hcr::kUie);
    gic_.write_hcr(h, 0);
  }
}

}  // namespace vtoe::hypervisor
