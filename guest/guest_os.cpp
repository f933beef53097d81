#include "guest/guest_os.h"

namespace vtoe::guest {

const std::vector<core::Param<GuestParams>>& guest_params() {
  using core::ParamKind;
  using P = GuestParams;
  static const std::vector<core::Param<P>> params = {
      core::param<P>(ParamKind::Real, "guest.costs.syscall", "1000",
                     "CPU cycles to enter and leave the kernel for one socket call",
                     [](P& s) -> auto& { return s.costs.syscall; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.copy_fixed", "100",
                     "CPU cycles to set up one programmed-I/O copy",
                     [](P& s) -> auto& { return s.costs.copy_fixed; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.copy_per_byte", "2.75",
                     "CPU cycles per byte of programmed-I/O copy from user to kernel send buffer",
                     [](P& s) -> auto& { return s.costs.copy_per_byte; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.copy_per_byte_rx", "3.0",
                     "CPU cycles per byte of programmed-I/O copy from kernel receive buffer to user "
                     "(source freshly written by DMA: cache-cold)",
                     [](P& s) -> auto& { return s.costs.copy_per_byte_rx; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.post_context", "200",
                     "CPU cycles to build one ring context in guest memory",
                     [](P& s) -> auto& { return s.costs.post_context; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.doorbell", "150",
                     "CPU cycles stalled on one uncached TOE register access (plus the bus latency)",
                     [](P& s) -> auto& { return s.costs.doorbell; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.isr", "1000",
                     "CPU cycles of interrupt entry, exit and acknowledge",
                     [](P& s) -> auto& { return s.costs.isr; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.ecq_entry", "100",
                     "CPU cycles to read and retire one ECQ completion",
                     [](P& s) -> auto& { return s.costs.ecq_entry; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.kthread_event", "400",
                     "CPU cycles for the driver's kernel thread to deliver one completion",
                     [](P& s) -> auto& { return s.costs.kthread_event; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.wakeup", "500",
                     "CPU cycles to make a blocked process runnable",
                     [](P& s) -> auto& { return s.costs.wakeup; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.app_per_message", "300",
                     "CPU cycles of application work per message (guest user)",
                     [](P& s) -> auto& { return s.costs.app_per_message; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.context_switch", "1500",
                     "CPU cycles of a switch between two processes",
                     [](P& s) -> auto& { return s.costs.context_switch; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.poll", "100",
                     "CPU cycles of one turn of a polling loop (shared-memory rings, the "
                     "user-space TOE channel): a load of a cache line the other side owns",
                     [](P& s) -> auto& { return s.costs.poll; })
          .range("1", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.page_remap", "1000",
                     "Zero copy: CPU cycles to remap (shared memory) or pin (TOE DMA from user "
                     "pages) one 4 KiB page of a message of at least guest.costs.remap_threshold "
                     "bytes",
                     [](P& s) -> auto& { return s.costs.page_remap; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Real, "guest.costs.remap_threshold", "8192",
                     "Zero copy: messages of at least this many bytes move by page remapping or "
                     "pinning instead of a copy (SocksDirect: 8 KiB)",
                     [](P& s) -> auto& { return s.costs.remap_threshold; })
          .range("0", "1e12"),
      core::param<P>(ParamKind::Real, "guest.costs.coop_switch", "200",
                     "CPU cycles of a switch between two user-level threads of one process "
                     "(cooperative workers, vms[].workload.cooperative)",
                     [](P& s) -> auto& { return s.costs.coop_switch; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Frequency, "guest.tick", "0Hz",
                     "The guest kernel's periodic timer interrupt (HZ); 0Hz = none (tickless). "
                     "Virtualized, each tick is a virtual timer interrupt: an exit unless "
                     "hypervisor.direct_timer (docs/hypervisor.md)",
                     [](P& s) -> auto& { return s.tick.hz; })
          .range("0Hz", "100kHz"),
      core::param<P>(ParamKind::Time, "guest.tick_phase", "0s",
                     "When the guest's first tick falls (then every 1/guest.tick); 0s = at "
                     "1/guest.tick. Below one tick period",
                     [](P& s) -> auto& { return s.tick.phase; }),
      core::param<P>(ParamKind::Real, "guest.costs.tick", "2000",
                     "CPU cycles of the guest's tick handler (timekeeping, scheduler tick)",
                     [](P& s) -> auto& { return s.tick.handler_cycles; })
          .range("0", "1e9"),
      core::param<P>(ParamKind::Uint, "guest.ring_entries", "256",
                     "Entries of each of the driver's four rings",
                     [](P& s) -> auto& { return s.driver.ring_entries; })
          .range("2", "65536")
          .validate(
              [](const core::ParamValue& v) {
                const auto n = std::get<std::uint64_t>(v);
                if (n & (n - 1)) throw std::invalid_argument("expected a power of two");
              },
              "power of two"),
      core::param<P>(ParamKind::Bytes, "guest.socket.send_buffer", "64KiB",
                     "Kernel send buffer of each socket",
                     [](P& s) -> auto& { return s.sockets.send_buffer; })
          .range("4KiB", "64MiB"),
      core::param<P>(ParamKind::Bytes, "guest.socket.recv_buffer", "16KiB",
                     "Kernel receive buffer of each socket (the fixed-length buffer the TOE fills, "
                     "paper §2.2)",
                     [](P& s) -> auto& { return s.sockets.recv_buffer; })
          .range("4KiB", "64MiB"),
      core::param<P>(ParamKind::Bytes, "guest.socket.release_batch", "4KiB",
                     "Consumed receive-buffer bytes the socket layer hands back to the TOE in one "
                     "RecvQ context (all of it before a recv() sleeps)",
                     [](P& s) -> auto& { return s.sockets.release_batch; })
          .range("1B", "64MiB"),
  };
  return params;
}

GuestOs::GuestOs(const sc_core::sc_module_name& name, cpu::Core& core, GuestMemory& memory,
                 const GuestParams& params, cpu::RegisterPort& regs, cpu::InterruptPort& irq,
                 cpu::TimerPort* timer, const std::vector<cpu::Core*>& app_cores)
    : core::Module(name), memory_(memory) {
  if (params.tick.hz > 0)
    tick_ = std::make_unique<TimerTick>("tick", params.tick, core, params.owner, timer);
  driver_ = std::make_unique<ToeDriver>("driver", core, params.owner, memory_, params.costs,
                                        params.driver, regs, irq);
  sockets_ = std::make_unique<SocketLayer>("sockets", *driver_, core, memory_, params.costs,
                                           params.sockets);
  for (std::size_t i = 0; i < params.workloads.size(); ++i) {
    cpu::Core& on = i < app_cores.size() && app_cores[i] ? *app_cores[i] : core;
    const bool coop = params.workloads[i].cooperative && params.workloads.size() > 1;
    if (coop && !coop_) coop_ = std::make_unique<CoopGroup>();
    apps_.push_back(std::make_unique<Application>(
        ("app" + std::to_string(i)).c_str(), params.workloads[i], *sockets_, on, params.owner,
        params.costs, static_cast<std::uint32_t>(i), coop ? coop_.get() : nullptr));
  }
}

AppCounters GuestOs::counters() const {
  AppCounters sum;
  for (const auto& app : apps_) {
    const AppCounters& c = app->counters();
    sum.tx_bytes += c.tx_bytes;
    sum.rx_bytes += c.rx_bytes;
    sum.transactions += c.transactions;
    sum.latency_sum_ps += c.latency_sum_ps;
    sum.first_byte_sum_ps += c.first_byte_sum_ps;
    sum.latency.merge(c.latency);
    if (c.failed && !sum.failed) {
      sum.failed = true;
      sum.error = c.error;
    }
  }
  return sum;
}

}  // namespace vtoe::guest
