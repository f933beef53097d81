// The hypervisor model hosting guests that run on the ISS (paper §4.2: the CASL hypervisor hosts
// unmodified ARM Linux): the hypervisor is a model, not code. Each VM is one vCPU running at PL1
// and PL0 of the IssCpu with stage 2 on (HCR.VM), its IRQs and FIQs routed to Hyp mode
// (HCR.IMO/FMO), WFI and SMC trapped (HCR.TWI/TSC). Every entry to Hyp mode stops the core
// (IssCpu::HypervisorModel) and lands in hyp_exit(), which does the handler's work in C++, takes
// the cycles HypervisorCosts gives it, and returns to a guest as ERET does:
//  - a stage-2 data abort (HSR EC 0x24) on an emulated device page: the access the HSR's
//    syndrome describes (ISV, SAS, SSE, SRT, WnR) is done on the VM's own device (GuestDevice:
//    its distributor, its UART, ...) and the guest goes on after the instruction; an abort
//    outside every device and outside the VM's RAM stops that VM (counted, reported with the
//    VM, the address and the guest's PC) and the others run on;
//  - a physical IRQ (vector 0x18), acknowledged at the GIC's CPU interface: the virtual timer's
//    PPI becomes the running VM's virtual PPI 27 (its CNTV_CTL masked until the guest rearms
//    it, as Xen's vtimer does), the Hyp timer's PPI is the scheduler's tick, SGI 0 a kick
//    (work queued for the hypervisor while a guest ran), the maintenance PPI a look at the
//    list registers; device interrupts go to the handler registered for them;
//  - a trapped WFI (EC 0x01): the vCPU blocks unless a virtual interrupt waits for it;
//  - HVC and SMC (EC 0x12, 0x13): the VM's PSCI (SYSTEM_OFF and SYSTEM_RESET stop the VM).
// A vCPU is its whole ArmState (core, banked and CP15 registers, VTTBR, virtual timer, CNTVOFF)
// and its saved list registers (gic::VgicState); the credit scheduler (credit_scheduler.h, with
// BOOST and Tickle) decides which one the core runs, at its ticks (the Hyp timer), at blocks
// and at wakes. A switched-out vCPU's virtual timer is kept by the model and made pending at its
// deadline. Virtual interrupts wait in a per-VM queue when the VM's distributor has them
// disabled or no list register is free; the model places them at every exit.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "hypervisor/credit_scheduler.h"
#include "hypervisor/hypervisor.h"
#include "models/core/module.h"
#include "models/cpu/iss/iss_cpu.h"
#include "models/gic/gic.h"
#include "models/gic/gic_registers.h"
#include "models/psci/psci.h"
#include "models/uart/pl011.h"

namespace vtoe::hypervisor {

// A device page a VM reaches through trapped accesses (emulated by the model).
class GuestDevice {
 public:
  virtual ~GuestDevice() = default;
  // An access of `size` bytes (1, 2 or 4) at `offset` in the device's window.
  virtual std::uint32_t read(std::uint64_t offset, unsigned size) = 0;
  virtual void write(std::uint64_t offset, std::uint32_t value, unsigned size) = 0;
};

// Where each VM's hardware is, in its IPA space and in the host's physical one.
struct IssGuestLayout {
  std::uint64_t ram_ipa = 0x4000'0000;
  std::uint64_t ram_size = 0x800'0000;   // platform.guest_memory (Table 2: 128 MiB)
  std::uint64_t gicd_ipa = 0x0800'0000;  // trapped: the VM's own distributor
  std::uint64_t gicc_ipa = 0x0801'0000;  // mapped to the GIC's virtual CPU interface
  std::uint64_t gicv_pa = 0x0804'0000;
  std::uint64_t gicc_size = 0x2000;
  std::uint64_t uart_ipa = 0x0900'0000;  // trapped: the VM's own PL011
  int uart_virq = 33;
};

// How a VM's vCPU enters its kernel (as the boot loader says; IPAs).
struct IssVmBoot {
  std::uint32_t entry = 0, r0 = 0, r1 = 0, r2 = 0;
};

// What Debian's Xen 4.17 retires per trap on the ISS at the ISS mode's CPI (docs/calibration.md,
// "The hypervisor's trap costs, measured from Xen on the ISS"; scripts/xen_trap_costs.py):
// a physical IRQ acknowledged and injected as virtual 4782 cycles, a stage-2 data abort with
// MMIO emulation 1896, an HVC 3487, each a whole trap (entry to return). The causes Xen's boot
// does not measure keep `assumed`'s: WFI, the scheduler's VM switch, the bit vector's decode.
HypervisorCosts xen_on_iss_costs(const HypervisorCosts& assumed);

struct IssHypervisorParams {
  IssGuestLayout layout;
  // Per VM (their count is the VMs'): where its RAM is in the host's memory (2 MiB aligned).
  std::vector<std::uint64_t> vm_ram_pa;
  HypervisorCosts costs;
  CreditParams scheduler;
  // Host memory for the stage-2 tables: 64 KiB per VM at `tables_pa` (its host view: `tables`).
  std::uint64_t tables_pa = 0;
  std::uint8_t* tables = nullptr;
  std::uint64_t tables_size = 0;
  std::uint64_t cntfrq = 62'500'000;  // the generic timer's count per simulated second
};

class IssHypervisor : public core::Module, public cpu::iss::IssCpu::HypervisorModel {
 public:
  // What the hypervisor's cycles went to, per VM: the exits by cause (an IRQ exit's handling,
  // the scheduler's tick and the virtual timer's included) and the VM switches.
  enum class Cause { DataAbort, Irq, Wfi, Hvc, Switch, Count };
  static const char* to_string(Cause c);
  using Console = std::function<void(int vm, char c)>;

  SC_HAS_PROCESS(IssHypervisor);
  // `gic` is the platform's (its CPU interface 0 is the core's). Throws std::invalid_argument
  // when the VMs' RAM or the tables do not fit.
  IssHypervisor(const sc_core::sc_module_name& name, const IssHypervisorParams& params,
                cpu::iss::IssCpu& cpu, gic::Gic& gic, Console console);
  ~IssHypervisor() override;

  // Before the simulation starts, with each VM's entry (its images are in its RAM): sets the
  // physical GIC up and puts the first vCPU the scheduler picks on the core.
  void start(const std::vector<IssVmBoot>& boots);

  void hyp_exit() override;

  // Device emulation: accesses by `vm` to [ipa, ipa + size) (not mapped in its stage 2) go to
  // `device`.
  void add_device(int vm, std::uint64_t ipa, std::uint64_t size, GuestDevice* device);
  // Direct access: `vm` reaches [pa, pa + size) at [ipa, ipa + size) through its stage 2
  // (device memory, 4 KiB pages).
  void map_device(int vm, std::uint64_t ipa, std::uint64_t pa, std::uint64_t size);
  // Hypervisor cycles for work a handler does (inside an exit: spent at once; else owed until
  // the next exit, since a device's process cannot take the core's time).
  void charge(double cycles);
  // Physical interrupt `id` (an SPI) is served by `handler`, at the cost of HypervisorCosts::irq.
  void set_irq_handler(int id, std::function<void()> handler);
  // Makes virtual interrupt `vid` pending for `vm` (level: held while `level_source` says the
  // line is high, re-injected after each EOI; null: edge). Wakes the VM (an I/O event).
  void inject(int vm, int vid, std::function<bool()> level_source = nullptr);

  int vm_count() const { return static_cast<int>(vms_.size()); }
  int running() const { return current_; }
  // The VM's UART (its console; the platform types into it).
  uart::Pl011& uart(int vm);
  // Stopped VMs (power-off, reset, a fault) and why ("" while it runs).
  bool vm_stopped(int vm) const;
  const std::string& vm_stop_reason(int vm) const;
  bool all_stopped() const;
  const ExitCounts& exits(int vm) const;
  std::uint64_t cycles(int vm, Cause c) const;
  // Instructions the VM's vCPU retired in user mode and in its kernel's modes (PL1) so far.
  std::uint64_t guest_instructions(int vm, bool user) const;
  std::uint64_t vm_switches() const { return switches_; }
  CreditScheduler& scheduler() { return scheduler_; }
  // Notified when the last VM stops.
  const sc_core::sc_event& all_stopped_event() const { return all_stopped_event_; }

 private:
  struct Vm;
  class Distributor;
  class UartDevice;
  struct Window {
    std::uint64_t ipa, size;
    GuestDevice* device;
  };
  struct Pending {
    int vid;
    std::function<bool()> level;
  };

  void build_stage2(int vm);
  void handle_irq();
  void handle_data_abort(std::uint32_t hsr, std::uint32_t pc, std::uint32_t mode);
  void handle_wfi();
  void handle_call();
  void stop_vm(int vm, const std::string& why);
  // Physical interrupts are taken here while the core is in the model (its line is sampled).
  bool physical_irq_pending() const;
  // Leaves the model: places waiting virtual interrupts, decides who runs, waits while nobody
  // can, and returns to that vCPU.
  void resume_guest();
  std::uint64_t* table_at(std::uint64_t pa);
  std::uint64_t new_table(int vm);
  std::uint64_t* level2(int vm, std::uint64_t ipa);
  void schedule();
  void load(int vm);
  void unload();
  void place_pending(int vm);
  bool place(Vm& v, const Pending& p);
  void arm_scheduler_timer();
  void vtimer_method();
  void uart_method(int vm);
  void kick();
  void wake(int vm, bool io);
  sc_core::sc_time now() const { return sc_core::sc_time_stamp(); }
  TimePs now_ps() const;
  std::uint64_t count_now() const;

  IssHypervisorParams params_;
  cpu::iss::IssCpu& cpu_;
  gic::Gic& gic_;
  Console console_;
  CreditScheduler scheduler_;
  std::vector<std::unique_ptr<Vm>> vms_;
  std::vector<std::pair<int, std::function<void()>>> irq_handlers_;
  int current_ = -1;  // the VM loaded on the core
  bool in_guest_ = false;
  std::uint64_t switches_ = 0;
  sc_core::sc_event vtimer_event_, all_stopped_event_, model_event_;
  bool kick_sent_ = false;
  Cause cause_ = Cause::Irq;                // what the cycles charged now are for
  bool in_exit_ = false;                    // hyp_exit() runs (not waiting): cycles may be spent
  sc_core::sc_process_handle cpu_process_;  // the core's thread (hyp_exit's caller)
  std::uint64_t owed_ = 0;                  // cycles charged outside an exit
  sc_core::sc_signal<bool> idle_;           // the VMs' distributors' SPI inputs (unused)
  core::Counter& exits_total_;
  core::Counter& bad_accesses_;
};

}  // namespace vtoe::hypervisor
