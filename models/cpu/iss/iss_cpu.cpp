#include "models/cpu/iss/iss_cpu.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "models/core/sideband.h"

namespace vtoe::cpu::iss {

// The core's accesses to pages without host memory, as b_transport calls.
class IssCpu::Bus : public MemoryBackend {
 public:
  explicit Bus(IssCpu& cpu) : cpu_(cpu) {}
  bool read(uint32_t addr, void* dst, uint32_t len, bool /*fetch*/) override {
    return cpu_.transport(tlm::TLM_READ_COMMAND, addr, dst, len);
  }
  bool write(uint32_t addr, const void* src, uint32_t len) override {
    return cpu_.transport(tlm::TLM_WRITE_COMMAND, addr, const_cast<void*>(src), len);
  }

 private:
  IssCpu& cpu_;
};

// Line fills and write-backs of the caches, as b_transport calls.
class IssCpu::LineTransfer : public LineBus {
 public:
  explicit LineTransfer(IssCpu& cpu) : cpu_(cpu) {}
  void fill(uint32_t pa, uint32_t len, bool /*fetch*/) override {
    cpu_.line_transfer(tlm::TLM_READ_COMMAND, pa, len);
  }
  void write_back(uint32_t pa, uint32_t len) override {
    cpu_.line_transfer(tlm::TLM_WRITE_COMMAND, pa, len);
  }

 private:
  IssCpu& cpu_;
};

IssCpu::IssCpu(const sc_core::sc_module_name& name, const IssCpuParams& p)
    : core::Module(name),
      socket("socket"),
      irq_in("irq_in"),
      fiq_in("fiq_in"),
      p_(p),
      core_(mem_),
      bus_(std::make_unique<Bus>(*this)),
      dmi_refused_(PagedMemory::kPages, false) {
  mem_.set_backend(bus_.get());
  if (p_.caches) {
    check_geometry(p_.icache, std::string(this->name()) + ": instruction cache");
    check_geometry(p_.dcache, std::string(this->name()) + ": data cache");
    line_bus_ = std::make_unique<LineTransfer>(*this);
    l1_ = std::make_unique<L1Caches>(p_.icache, p_.dcache, *line_bus_);
    line_buf_.resize(std::max(p_.icache.line, p_.dcache.line));
    core_.set_caches(l1_.get());
  }
  socket.register_invalidate_direct_mem_ptr(this, &IssCpu::invalidate_direct_mem_ptr);
  if (p_.cpu_index != 0) {  // the payloads own their extensions
    for (tlm::tlm_generic_payload* t : {&trans_, &line_trans_}) {
      auto* ext = new core::SidebandExtension;
      ext->cpu = p_.cpu_index;
      t->set_extension(ext);
    }
  }
  min_cpi_ = 0;
  for (uint32_t c : p_.cpi) {
    if (c && (!min_cpi_ || c < min_cpi_)) min_cpi_ = c;
  }
  for (int c = 0; c < ArmCore::kClasses; ++c) {
    std::string cls = to_string(static_cast<InsnClass>(c));
    retired_stats_[c] = &stats_.counter("retired." + cls, "instructions retired: " + cls);
  }
  cycles_stat_ = &stats_.counter("cycles", "core cycles (retired instructions x CPI)");
  // The core reads the count at its own local time (ahead of the kernel's by the quantum used).
  core_.set_counter_source([this] {
    account();
    return count_at(sc_core::sc_time_stamp() + qk_.get_local_time());
  });
  // The PMU's cycle counter counts the core's cycles (retired instructions x CPI).
  core_.set_cycle_source([this] {
    account();
    return cycles_;
  });
  core_.set_timer_listener([this] {
    if (sc_core::sc_is_running()) timer_event_.notify(sc_core::SC_ZERO_TIME);
  });
  SC_THREAD(thread);
  SC_METHOD(timer_method);
  sensitive << timer_event_;
  dont_initialize();
}

uint64_t IssCpu::count_at(const sc_core::sc_time& t) const {
  // t in the kernel's resolution units; count = t x f / units per second, exact (128-bit).
  const double res = sc_core::sc_get_time_resolution().to_seconds();
  const auto units_per_s = static_cast<unsigned __int128>(1.0 / res + 0.5);
  return static_cast<uint64_t>(static_cast<unsigned __int128>(t.value()) * p_.timer_frequency_hz /
                               units_per_s);
}

void IssCpu::timer_method() {
  const uint64_t now = count_at(sc_core::sc_time_stamp());
  const GenericTimer& t = core_.timer();
  for (TimerKind k : {TimerKind::Physical, TimerKind::Virtual, TimerKind::Hyp}) {
    const bool level = t.output(k, now);
    bool& old = timer_levels_[static_cast<int>(k)];
    if (level == old) continue;
    old = level;
    if (timer_output_) timer_output_(k, level);
  }
  if (auto next = t.next_deadline(now)) {
    // The first kernel time whose count reaches the deadline.
    const double res = sc_core::sc_get_time_resolution().to_seconds();
    const auto units_per_s = static_cast<unsigned __int128>(1.0 / res + 0.5);
    const unsigned __int128 units =
        (static_cast<unsigned __int128>(*next) * units_per_s + p_.timer_frequency_hz - 1) /
        p_.timer_frequency_hz;
    const uint64_t at = static_cast<uint64_t>(std::min<unsigned __int128>(units, ~uint64_t{0}));
    const uint64_t now_units = sc_core::sc_time_stamp().value();
    if (at > now_units) timer_event_.notify(sc_core::sc_time::from_value(at - now_units));
  }
}

IssCpu::~IssCpu() { mem_.set_backend(nullptr); }

void IssCpu::end_of_elaboration() {
  // The optional interrupt ports: a method per bound port follows the line.
  if (irq_in.size() > 0) {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(&irq_in->value_changed_event());
    sc_core::sc_spawn([this] { set_irq(irq_in->read()); }, "irq_in_method", &o);
  }
  if (fiq_in.size() > 0) {
    sc_core::sc_spawn_options o;
    o.spawn_method();
    o.set_sensitivity(&fiq_in->value_changed_event());
    sc_core::sc_spawn([this] { set_fiq(fiq_in->read()); }, "fiq_in_method", &o);
  }
}

void IssCpu::set_irq(bool level) {
  core_.set_irq(level);
  if (level && sc_core::sc_is_running()) wake_.notify(sc_core::SC_ZERO_TIME);
}

void IssCpu::set_fiq(bool level) {
  core_.set_fiq(level);
  if (level && sc_core::sc_is_running()) wake_.notify(sc_core::SC_ZERO_TIME);
}

void IssCpu::set_virq(bool level) {
  core_.set_virq(level);
  if (level && sc_core::sc_is_running()) wake_.notify(sc_core::SC_ZERO_TIME);
}

void IssCpu::set_vfiq(bool level) {
  core_.set_vfiq(level);
  if (level && sc_core::sc_is_running()) wake_.notify(sc_core::SC_ZERO_TIME);
}

void IssCpu::halt() {
  core_.halt();
  if (sc_core::sc_is_running()) wake_.notify(sc_core::SC_ZERO_TIME);
}

void IssCpu::power_off() {
  off_ = true;
  core_.request_yield();
}

void IssCpu::power_on() {
  off_ = false;
  if (sc_core::sc_is_running()) wake_.notify(sc_core::SC_ZERO_TIME);
}

uint64_t IssCpu::batch() const {
  if (min_cpi_ == 0) return 1u << 16;  // instructions cost no time: any batch fits
  const sc_core::sc_time quantum = tlm::tlm_global_quantum::instance().compute_local_quantum();
  const sc_core::sc_time local = qk_.get_local_time();
  if (quantum <= local) return 1;
  const uint64_t per = p_.clock_period.value() * min_cpi_;
  const uint64_t n = per ? (quantum - local).value() / per : 1u << 16;
  return std::clamp<uint64_t>(n, 1, 1u << 24);
}

void IssCpu::account() {
  uint64_t cycles = 0;
  for (int c = 0; c < ArmCore::kClasses; ++c) {
    const uint64_t now = core_.retired(static_cast<InsnClass>(c));
    const uint64_t d = now - accounted_[c];
    if (d == 0) continue;
    accounted_[c] = now;
    cycles += d * p_.cpi[c];
    retired_stats_[c]->add(d);
  }
  if (cycles == 0) return;
  cycles_ += cycles;
  cycles_stat_->add(cycles);
  qk_.inc(sc_core::sc_time::from_value(p_.clock_period.value() * cycles));
}

uint64_t IssCpu::cycles_in_mode(Mode m) const {
  uint64_t n = 0;
  for (int c = 0; c < ArmCore::kClasses; ++c)
    n += core_.retired_in_mode(m, static_cast<InsnClass>(c)) * p_.cpi[c];
  return n;
}

sc_core::sc_time IssCpu::idle_time() const {
  return asleep_ ? idle_ + (sc_core::sc_time_stamp() - asleep_since_) : idle_;
}

IssCpu::Saved IssCpu::save() const {
  Saved s{};
  s.state = core_.state();
  s.statistics = core_.statistics();
  s.accounted = accounted_;
  s.cycles = cycles_;
  s.bus_accesses = bus_accesses_;
  s.dmi_grants = dmi_grants_;
  s.dmi_invalidations = dmi_invalidations_;
  s.idle = idle_time().value();
  s.stall[0] = stall_[0];
  s.stall[1] = stall_[1];
  s.timer_levels = timer_levels_;
  return s;
}

void IssCpu::spend(uint64_t cycles) {
  if (!cycles) return;
  model_cycles_ += cycles;
  sc_core::wait(p_.clock_period * static_cast<double>(cycles));
}

void IssCpu::switch_state(const ArmState& s) {
  ArmState next = s;
  const ArmState& now = core_.state();
  next.irq = now.irq;
  next.fiq = now.fiq;
  next.virq = now.virq;
  next.vfiq = now.vfiq;
  core_.restore_state(next);
  timer_event_.notify(sc_core::SC_ZERO_TIME);
}

void IssCpu::settle() {
  core_.restore_state(core_.state());  // the TLB flushed, a new code generation
  if (l1_) l1_->invalidate_all();
}

void IssCpu::restore(const Saved& s, uint32_t dmi_address) {
  request_dmi(dmi_address);
  core_.restore_state(s.state);
  core_.restore_statistics(s.statistics);
  accounted_ = s.accounted;
  cycles_ = s.cycles;
  bus_accesses_ = s.bus_accesses;
  dmi_grants_ = s.dmi_grants;
  dmi_invalidations_ = s.dmi_invalidations;
  // The sleep in progress counts from now: idle_time() goes on from the snapshot's.
  idle_ = sc_core::sc_time::from_value(s.idle);
  stall_[0] = s.stall[0];
  stall_[1] = s.stall[1];
  timer_levels_ = s.timer_levels;
  // The statistics group goes on from the snapshot's totals too (it counts from zero here).
  for (int c = 0; c < ArmCore::kClasses; ++c) {
    core::Counter* k = retired_stats_[static_cast<std::size_t>(c)];
    if (k) k->add(core_.retired(static_cast<InsnClass>(c)) - k->value());
  }
  if (cycles_stat_) cycles_stat_->add(cycles_ - cycles_stat_->value());
  settle();
  timer_event_.notify(sc_core::SC_ZERO_TIME);
  held_ = false;
  released_.notify(sc_core::SC_ZERO_TIME);
}

void IssCpu::thread() {
  if (held_) sc_core::wait(released_);
  qk_.reset();
  try {
    bool resumed = true;  // at the start or after a stop: the current PC runs
    if (debugger_) debugger_->stopped(true);
    for (;;) {
      if (debugger_ && !resumed && debugger_->breakpoint_at(core_.pc())) {
        debugger_->stopped(false);
        account();  // the debugger may have stepped
        if (core_.halted()) break;
      }
      resumed = true;
      if (off_) {  // powered off: time passes, nothing runs, until power_on()
        qk_.sync();
        asleep_ = true;
        asleep_since_ = sc_core::sc_time_stamp();
        while (off_ && !core_.halted()) sc_core::wait(wake_);
        idle_ += sc_core::sc_time_stamp() - asleep_since_;
        asleep_ = false;
        qk_.reset();
        if (core_.halted()) break;
        continue;
      }
      uint64_t n = batch();
      if (limit_) {
        const uint64_t used = core_.retired() + core_.exception_entries();
        if (used >= limit_) {
          limit_reached_ = true;
          break;
        }
        n = std::min(n, limit_ - used);
      }
      if (sample_interval_) n = std::min(n, sample_left_);
      const uint64_t before = sample_interval_ ? core_.retired() : 0;
      if (observe_left_) {
        // One at a time, the observer before each instruction (exception entries are steps of
        // their own, not instructions).
        for (uint64_t i = 0;
             i < n && observe_left_ && !core_.halted() && !core_.waiting_for_interrupt(); ++i) {
          if (!core_.instruction_next()) {
            core_.step();
            continue;
          }
          TraceRecord rec;
          for (int r = 0; r < 16; ++r) rec.r[r] = core_.reg(r);
          rec.cpsr = core_.cpsr();
          const uint64_t fetch_faults = core_.fetch_faults();
          core_.step();
          if (core_.fetch_faults() == fetch_faults) {
            observer_(rec);
            if (--observe_left_ == 0) observe_full_at_ = core_.retired();
          }
        }
      } else {
        core_.run(n);
      }
      if (sample_interval_) {
        const uint64_t ran = core_.retired() - before;
        if (ran >= sample_left_) {
          ++pc_samples_[core_.pc()];
          sample_left_ = sample_interval_;
        } else {
          sample_left_ -= ran;
        }
      }
      account();
      core_.pmu_poll();  // a counter's overflow interrupt, within the quantum
      if (core_.halted()) break;
      if (hyp_model_ && core_.hyp_exit_pending()) {
        qk_.sync();
        hyp_model_->hyp_exit();
        qk_.reset();
        if (core_.halted()) break;
        continue;
      }
      // WFE or CPU_OFF of a core of several: the rest of the quantum goes to the others.
      if (core_.take_yield()) {
        qk_.sync();
        continue;
      }
      if (observe_pending_ && core_.at_breakpoint() && core_.reg(15) == observe_at_) {
        core_.remove_breakpoint(observe_at_);  // a debugger's own breakpoint there is its to set
        observe_left_ = observe_pending_;
        observe_pending_ = 0;
        continue;
      }
      if (debugger_ && (core_.at_breakpoint() || (++debug_polls_ % kInterruptPollBatches == 0 &&
                                                  debugger_->interrupted()))) {
        debugger_->stopped(false);
        account();
        if (core_.halted()) break;
        continue;
      }
      resumed = false;
      if (core_.waiting_for_interrupt()) {  // WFI: time passes without instructions
        qk_.sync();
        asleep_ = true;
        asleep_since_ = sc_core::sc_time_stamp();
        while (core_.waiting_for_interrupt() && !core_.halted()) sc_core::wait(wake_);
        idle_ += sc_core::sc_time_stamp() - asleep_since_;
        asleep_ = false;
        qk_.reset();
        continue;
      }
      if (qk_.need_sync()) qk_.sync();
    }
  } catch (const sc_core::sc_unwind_exception&) {
    throw;  // the kernel is killing or resetting this thread
  } catch (const sc_core::sc_report&) {
    throw;  // a SystemC error or warning, not the guest's
  } catch (const ExceptionLoop& e) {
    exception_loop_ = true;
    fault_ = e.what();
    log_.write(core::LogLevel::Info, std::string("core stopped: ") + e.what());
  } catch (const std::exception& e) {
    // Syscall emulation: an undefined instruction or a fault ends the run (in system mode the
    // core takes them to the vectors instead).
    fault_ = e.what();
    log_.write(core::LogLevel::Info, std::string("core stopped: ") + e.what());
  }
  account();
  qk_.sync();
  done_ = true;
  done_event_.notify();
}

namespace {

// A plain read or write of `len` bytes at `addr`, ready for b_transport.
void prepare(tlm::tlm_generic_payload& t, tlm::tlm_command cmd, uint64_t addr, unsigned char* data,
             uint32_t len) {
  t.set_command(cmd);
  t.set_address(addr);
  t.set_data_ptr(data);
  t.set_data_length(len);
  t.set_streaming_width(len);
  t.set_byte_enable_ptr(nullptr);
  t.set_byte_enable_length(0);
  t.set_dmi_allowed(false);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

}  // namespace

bool IssCpu::transport(tlm::tlm_command cmd, uint32_t addr, void* data, uint32_t len) {
  account();  // the access happens after every instruction retired so far
  // The target, and every process that runs while this one waits, see the host's rounding mode
  // and exception flags, not the guest's.
  ArmCore::HostFpScope host_fp(core_);
  tlm::tlm_generic_payload& t = trans_;
  prepare(t, cmd, addr, static_cast<unsigned char*>(data), len);
  sc_core::sc_time delay = qk_.get_local_time();
  socket->b_transport(t, delay);
  qk_.set(delay);
  ++bus_accesses_;
  if (t.is_response_error()) return false;
  const bool dmi = p_.dmi && t.is_dmi_allowed() && !dmi_refused_[addr >> PagedMemory::kPageBits];
  if (p_.sync_on_bus_access || qk_.need_sync()) qk_.sync();
  if (dmi) request_dmi(addr);
  return true;
}

void IssCpu::line_transfer(tlm::tlm_command cmd, uint32_t pa, uint32_t len) {
  account();  // the miss happens after every instruction retired so far
  ArmCore::HostFpScope host_fp(core_);
  // Timing only: a fill's data is not used (the core reads the memory through DMI); a
  // write-back carries the memory's own current bytes, so that it changes nothing.
  if (cmd == tlm::TLM_WRITE_COMMAND) {
    const uint8_t* host = mem_.host_page(pa >> PagedMemory::kPageBits);
    if (!host) return;  // the memory went away (DMI taken back): nothing to write back
    std::memcpy(line_buf_.data(), host + (pa & (PagedMemory::kPageSize - 1)), len);
  }
  tlm::tlm_generic_payload& t = line_trans_;
  prepare(t, cmd, pa, line_buf_.data(), len);
  const sc_core::sc_time before = qk_.get_local_time();
  sc_core::sc_time delay = before;
  socket->b_transport(t, delay);
  qk_.set(delay);
  stall_[core_.mode() == Mode::Usr ? 1 : 0] += (delay - before).value();
  if (qk_.need_sync()) qk_.sync();
}

void IssCpu::request_dmi(uint32_t addr) {
  tlm::tlm_generic_payload t;
  t.set_command(tlm::TLM_READ_COMMAND);
  t.set_address(addr);
  tlm::tlm_dmi dmi;
  const uint32_t page = addr >> PagedMemory::kPageBits;
  // Read-only regions stay on b_transport: the page table has one pointer for both directions.
  if (!socket->get_direct_mem_ptr(t, dmi) || !dmi.is_read_write_allowed()) {
    dmi_refused_[page] = true;
    return;
  }
  const uint64_t start = dmi.get_start_address();
  const uint64_t end = std::min<uint64_t>(dmi.get_end_address(), 0xffffffffu);
  const uint64_t mask = PagedMemory::kPageSize - 1;
  const uint64_t first = (start + mask) & ~mask, stop = (end + 1) & ~mask;
  // Pages wholly inside the region only; the page asked for may be left out (partly inside).
  const uint64_t page_start = uint64_t{page} << PagedMemory::kPageBits;
  if (end < start || first >= stop || page_start < first || page_start >= stop) {
    dmi_refused_[page] = true;
  }
  if (end < start || first >= stop) return;
  uint8_t* host = dmi.get_dmi_ptr() + (first - start);
  if (mem_.attach(static_cast<uint32_t>(first), stop - first, host)) ++dmi_grants_;
  if (l1_) l1_->map_host(host, stop - first, static_cast<uint32_t>(first));
}

void IssCpu::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  ++dmi_invalidations_;
  if (start > 0xffffffffu || end < start) return;
  const uint64_t last = std::min<uint64_t>(end, 0xffffffffu);
  mem_.detach(static_cast<uint32_t>(start), last - start + 1);
  for (uint64_t p = start >> PagedMemory::kPageBits; p <= (last >> PagedMemory::kPageBits); ++p) {
    dmi_refused_[p] = false;
  }
}

}  // namespace vtoe::cpu::iss
