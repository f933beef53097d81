// `vtoe system run`: real ARM software (a bare-metal ELF or a Linux zImage) on the system
// platform (platform/system), its UART on standard output.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <systemc>

#include "app/cli.h"
#include "app/iss_hypervisor_stats.h"
#include "app/stop_on_signal.h"
#include "config/config.h"
#include "models/cpu/iss/arm_core.h"
#include "models/cpu/iss/gdb_server.h"
#include "platform/system/memory_map.h"
#include "platform/system/system_platform.h"

namespace vtoe::app {

namespace {

namespace iss = cpu::iss;
namespace sys = platform::system;

std::string where(iss::ArmCore& core) {
  char buf[96];
  std::string mode = iss::to_string(core.mode());
  for (char& ch : mode) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  std::snprintf(buf, sizeof buf, "at 0x%08x in %s mode (%s, cpsr 0x%08x)", core.pc(), mode.c_str(),
                core.thumb() ? "T32" : "A32", core.cpsr());
  std::string s = buf;
  if (core.mode() == iss::Mode::Abt || core.exceptions(iss::Exception::PrefetchAbort) ||
      core.exceptions(iss::Exception::DataAbort)) {
    // The fault registers of the last aborts: where a run that went astray last found nothing.
    char regs[96];
    std::snprintf(regs, sizeof regs, "; IFAR 0x%08x IFSR 0x%08x DFAR 0x%08x DFSR 0x%08x",
                  core.ifar(), core.ifsr(), core.dfar(), core.dfsr());
    s += regs;
  }
  return s;
}

// The last Undefined Instruction exception (ARM state), and whether it was a firmware call that
// is not PSCI's (the firmware answers only PSCI).
std::string firmware_hint(sys::SystemPlatform& p) {
  iss::ArmCore& core = p.cpu().core();
  if (core.exceptions(iss::Exception::Undefined) == 0) return "";
  const uint32_t lr = core.banked_reg(iss::Mode::Und, 14);
  const bool thumb = core.spsr(iss::Mode::Und) & (1u << 5);
  const uint64_t at = lr - (thumb ? 2u : 4u);
  if (thumb || at < sys::kRamBase || at + 4 > sys::kRamBase + p.ram().size()) return "";
  uint32_t insn = 0;
  std::memcpy(&insn, p.ram().host(at - sys::kRamBase, 4), 4);
  const char* what = (insn & 0x0ffffff0u) == 0x01600070u   ? "SMC"
                     : (insn & 0x0ff000f0u) == 0x01400070u ? "HVC"
                                                           : nullptr;
  char buf[256];
  if (!what) {
    std::snprintf(buf, sizeof buf,
                  "\n  the last Undefined Instruction exception was taken for 0x%08x at 0x%08llx",
                  insn, static_cast<unsigned long long>(at));
    return buf;
  }
  std::snprintf(buf, sizeof buf,
                "\n  the core took an Undefined Instruction exception for the %s at 0x%08llx: "
                "the platform's firmware answers PSCI function IDs only",
                what, static_cast<unsigned long long>(at));
  return buf;
}

// The console's last lines, for the message of a run that did not end by powering off (a
// kernel that panicked, a module that failed to load, a workload that never started).
class ConsoleTail {
 public:
  void put(char c) {
    if (c == '\n') {
      lines_.push_back(std::move(line_));
      line_.clear();
      if (lines_.size() > kLines) lines_.pop_front();
    } else if (c != '\r' && line_.size() < 512) {
      line_ += c;
    }
  }
  void print(std::ostream& err) const {
    if (lines_.empty() && line_.empty()) {
      err << "vtoe: system run: the console printed nothing\n";
      return;
    }
    err << "vtoe: system run: the console's last lines:\n";
    for (const std::string& l : lines_) err << "  | " << l << "\n";
    if (!line_.empty()) err << "  | " << line_ << "\n";
  }

 private:
  static constexpr std::size_t kLines = 12;
  std::deque<std::string> lines_;
  std::string line_;
};

}  // namespace

int run_system(const SystemOptions& opts, std::ostream& err) {
  sys::SystemConfig c;
  c.memory = opts.memory;
  c.virtualization = opts.virtualization;
  c.guests = opts.guests;
  c.guest_memory = opts.guest_memory;
  // The trap costs measured from Xen on the ISS, as platform.iss.hypervisor_costs' default.
  c.hypervisor_costs = hypervisor::xen_on_iss_costs(hypervisor::HypervisorCosts{});
  c.cpus = opts.smp;
  // The bound is the core's own (exact, exception entries included), not the platform's
  // per-quantum look.
  c.max_instructions = 0;
  std::unique_ptr<config::Config> scenario;  // the TOE's and its network's keys
  ConsoleTail tail;
  std::unique_ptr<sys::SystemPlatform> platform;
  std::unique_ptr<iss::GdbServer> gdb;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> trace(nullptr, &std::fclose);
  sys::BootInfo boot;
  try {
    scenario = std::make_unique<config::Config>(
        opts.scenario.empty() ? config::Config::defaults(opts.sets)
                              : config::Config::load(opts.scenario, opts.sets));
    c.scenario = scenario.get();
    platform = std::make_unique<sys::SystemPlatform>("system", c, [&tail](char ch) {
      tail.put(ch);
      std::fputc(ch, stdout);
      if (ch == '\n') std::fflush(stdout);
    });
    sys::BootFiles files;
    files.kernel = opts.kernel;
    files.initrd = opts.initrd;
    files.append = opts.append;
    files.dtb = opts.dtb;
    files.dtb_as_is = opts.dtb_as_is;
    for (const std::string& spec : opts.devices) {
      files.modules.push_back(sys::parse_guest_loader(spec));
    }
    if (opts.smp > 1 && !opts.trace.empty())
      throw std::invalid_argument("--trace follows one core: not with --smp " +
                                  std::to_string(opts.smp));
    boot = platform->boot(files);
    // With several cores the bound is each core's.
    for (int i = 0; i < platform->cpus(); ++i)
      platform->cpu(i).set_instruction_limit(opts.max_instructions);
    if (!opts.trace.empty()) {
      trace.reset(std::fopen(opts.trace.c_str(), "w"));
      if (!trace) throw std::runtime_error("cannot write " + opts.trace);
      std::FILE* f = trace.get();
      auto write = [f](const iss::IssCpu::TraceRecord& rec) {
        // QEMU's -d cpu layout, so that tests/system/lockstep.py reads both alike.
        for (int r = 0; r < 16; ++r) {
          std::fprintf(f, "R%02d=%08x%c", r, rec.r[r], r % 4 == 3 ? '\n' : ' ');
        }
        std::fprintf(f, "PSR=%08x\n", rec.cpsr);
      };
      if (opts.trace_at) {
        platform->cpu().set_instruction_observer_from(write, opts.trace_limit, *opts.trace_at);
      } else {
        platform->cpu().set_instruction_observer(write, opts.trace_limit);
      }
    }
    if (opts.gdb_port) {
      std::vector<iss::IssCpu*> cpus;  // one GDB thread per core
      for (int i = 0; i < platform->cpus(); ++i) cpus.push_back(&platform->cpu(i));
      gdb = std::make_unique<iss::GdbServer>(cpus, opts.gdb_port, err);
      for (int i = 0; i < platform->cpus(); ++i) platform->cpu(i).set_debugger(&gdb->debugger(i));
    }
  } catch (const std::exception& e) {
    err << "vtoe: system run: " << e.what() << "\n";
    return kExitFailure;
  }
  const auto t0 = std::chrono::steady_clock::now();
  {
    // In steps, so that SIGINT or SIGTERM ends the run between two of them with the core's state
    // intact (the kernel resumes exactly where it paused: the run does not depend on the steps).
    // Each step reaches at least the next event: a core asleep until a timer far ahead would
    // otherwise make steps that move nothing.
    const StopOnSignal stop_on_signal;
    const sc_core::sc_time step(1, sc_core::SC_MS);
    sc_core::sc_start(step, sc_core::SC_EXIT_ON_STARVATION);  // elaborates, then the first step
    while (StopOnSignal::signal_number() == 0 && sc_core::sc_get_status() != sc_core::SC_STOPPED &&
           sc_core::sc_pending_activity())
      sc_core::sc_start(std::max(step, sc_core::sc_time_to_pending_activity()),
                        sc_core::SC_EXIT_ON_STARVATION);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fflush(stdout);

  iss::ArmCore& core = platform->cpu().core();
  // Every core's (core 0's registers and details below).
  uint64_t n = 0;
  bool limit_reached = false;
  for (int i = 0; i < platform->cpus(); ++i) {
    n += platform->cpu(i).retired();
    limit_reached = limit_reached || platform->cpu(i).limit_reached();
  }
  const uint64_t entries = core.exception_entries();
  // What the last synchronous exception was, for a run that ends in or after a loop of them.
  const std::string last = core.last_exception();
  const std::string last_note = last.empty() ? "" : "\n  the last exception: " + last;
  int status = kExitFailure;
  std::string stop = sys::to_string(platform->stop_reason());
  const bool interrupted =
      StopOnSignal::signal_number() != 0 && platform->stop_reason() == sys::StopReason::Running;
  if (interrupted) {  // ended between two steps, the core's state intact
    err << "vtoe: system run: stopped by " << StopOnSignal::signal_name() << " " << where(core)
        << " after " << n << " instructions, " << sc_core::sc_time_stamp().to_seconds()
        << " s of simulated time" << (opts.stats.empty() ? "" : "; statistics in " + opts.stats)
        << "\n";
    status = StopOnSignal::exit_status();
    stop = "interrupted";
  } else if (limit_reached) {
    err << "vtoe: system run: stopped after " << n << " instructions and " << entries
        << " exception entries (--max-instructions " << opts.max_instructions << ") " << where(core)
        << last_note << firmware_hint(*platform) << "\n";
    status = kExitMaxInstructions;
    stop = "max-instructions";
  } else if (platform->cpu().exception_loop()) {
    err << "vtoe: system run: " << platform->cpu().fault() << ", " << where(core) << ", after " << n
        << " instructions" << firmware_hint(*platform) << "\n";
    status = kExitMaxInstructions;
    stop = "exception-loop";
  } else {
    switch (platform->stop_reason()) {
      case sys::StopReason::PowerOff:
        status = 0;
        break;
      case sys::StopReason::Reset:
        status = psci::kResetExitStatus;
        break;
      case sys::StopReason::MaxInstructions:
        err << "vtoe: system run: stopped after " << n << " instructions (--max-instructions "
            << opts.max_instructions << ") " << where(core) << firmware_hint(*platform) << "\n";
        status = kExitMaxInstructions;
        break;
      case sys::StopReason::Idle:
        err << "vtoe: system run: the core is asleep in WFI " << where(core)
            << " and nothing modelled can wake it (after " << n << " instructions)\n";
        status = kExitMaxInstructions;
        break;
      case sys::StopReason::BusErrorLoop: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "0x%08llx",
                      static_cast<unsigned long long>(platform->error_address()));
        err << "vtoe: system run: nothing is mapped at " << buf
            << " and the core keeps faulting there (a jump to unmapped memory, or vectors that "
               "are not mapped) "
            << where(core) << ", after " << n << " instructions\n";
        status = kExitFailure;
        break;
      }
      case sys::StopReason::Running:
      case sys::StopReason::CoreError:
        if (gdb && gdb->killed()) {
          err << "vtoe: system run: ended by GDB (kill) " << where(core) << "\n";
          status = kExitFailure;
          break;
        }
        if (auto* hyp = platform->hypervisor(); hyp && hyp->all_stopped()) {
          // Every guest stopped, some for a fault: which, and why.
          for (int vm = 0; vm < hyp->vm_count(); ++vm)
            err << "vtoe: system run: vm" << vm << " stopped: " << hyp->vm_stop_reason(vm) << "\n";
          status = kExitFailure;
          break;
        }
        err << "vtoe: system run: the core stopped " << where(core) << ": "
            << (platform->cpu().fault().empty() ? "(no reason given)" : platform->cpu().fault())
            << ", after " << n << " instructions" << firmware_hint(*platform) << "\n";
        status = kExitFailure;
        break;
    }
  }
  if (status != 0 && platform->stop_reason() != sys::StopReason::Reset) tail.print(err);
  // A trace that reached its bound says so (docs/outputs.md, "Bounds of every output").
  std::string trace_warning;
  if (const uint64_t full_at = platform->cpu().observer_full_at(); full_at != 0 && n > full_at) {
    trace_warning = opts.trace + " reached its bound of " + std::to_string(opts.trace_limit) +
                    " instructions (--trace-limit) at instruction " + std::to_string(full_at) +
                    ": the " + std::to_string(n - full_at) +
                    " instructions after that are not in it (raise --trace-limit, or start it "
                    "later with --trace-at)";
    err << "vtoe: system run: warning: " << trace_warning << "\n";
  }
  if (gdb) gdb->exited(status);
  if (!opts.stats.empty()) {
    nlohmann::ordered_json j;
    j["kernel"] = opts.kernel;
    j["stop"] = stop;
    j["exit_status"] = status;
    j["instructions"] = n;
    if (platform->cpus() > 1) {
      nlohmann::ordered_json per = nlohmann::ordered_json::array();
      for (int i = 0; i < platform->cpus(); ++i) per.push_back(platform->cpu(i).retired());
      j["cpus"] = platform->cpus();
      j["instructions_by_cpu"] = per;
    }
    j["exception_entries"] = entries;
    nlohmann::ordered_json by;
    for (int k = 0; k < iss::ArmCore::kClasses; ++k) {
      auto cls = static_cast<iss::InsnClass>(k);
      by[iss::to_string(cls)] = core.retired(cls);
    }
    j["by_class"] = by;
    nlohmann::ordered_json modes;
    for (iss::Mode m : {iss::Mode::Usr, iss::Mode::Fiq, iss::Mode::Irq, iss::Mode::Svc,
                        iss::Mode::Abt, iss::Mode::Hyp, iss::Mode::Und, iss::Mode::Sys}) {
      modes[iss::to_string(m)] = core.retired_in_mode(m);
    }
    j["by_mode"] = modes;
    nlohmann::ordered_json traps;  // exceptions taken to Hyp mode, by HSR exception class
    for (int ec = 0; ec < 64; ++ec) {
      if (const uint64_t k = core.hyp_entries(static_cast<uint8_t>(ec))) {
        char name[8];
        std::snprintf(name, sizeof name, "0x%02x", ec);
        traps[name] = k;
      }
    }
    j["hyp_traps_by_ec"] = traps;
    // What the hypervisor running here spent per entry to Hyp mode, by cause: the instructions
    // from the entry to the return out of Hyp mode, by class (cycles: at the run's CPI).
    nlohmann::ordered_json handling;
    for (int cause = 0; cause < iss::ArmCore::kHypCauses; ++cause) {
      const std::uint64_t spans = core.hyp_handled(cause);
      if (!spans) continue;
      char name[8];
      std::snprintf(name, sizeof name, "0x%02x", cause);
      nlohmann::ordered_json h;
      h["handled"] = spans;
      std::uint64_t insns = 0, cycles = 0;
      nlohmann::ordered_json classes;
      for (int k = 0; k < iss::ArmCore::kClasses; ++k) {
        const auto cls = static_cast<iss::InsnClass>(k);
        const std::uint64_t n = core.hyp_handling_retired(cause, cls);
        insns += n;
        cycles += n * platform->cpu().params().cpi[static_cast<std::size_t>(k)];
        if (n) classes[iss::to_string(cls)] = n;
      }
      h["instructions"] = insns;
      h["cycles"] = cycles;
      h["by_class"] = classes;
      handling[cause == iss::ArmCore::kHypCauseIrq   ? std::string("irq")
               : cause == iss::ArmCore::kHypCauseFiq ? std::string("fiq")
                                                     : std::string(name)] = h;
    }
    j["hyp_handling"] = handling;
    nlohmann::ordered_json ex;
    for (int k = 0; k < static_cast<int>(iss::Exception::Count); ++k) {
      auto e = static_cast<iss::Exception>(k);
      ex[iss::to_string(e)] = core.exceptions(e);
    }
    j["exceptions"] = ex;
    // The software TLB (misses are table walks) and the decoded-instruction cache.
    j["tlb_misses"] = core.tlb_misses();
    j["tlb_flushes"] = core.tlb_flushes();
    j["decoded"] = core.decoded();
    j["uart_chars"] = platform->uart().transmitted();
    if (toe::Toe* toe = platform->toe()) {  // the TOE in the platform-bus window, and its peer
      nlohmann::ordered_json t;
      t["tx_bytes"] = toe->tx_bytes();
      t["rx_bytes"] = toe->rx_bytes();
      t["register_accesses"] = toe->stats().counter("register_accesses").value();
      t["bad_register_accesses"] = toe->bad_accesses();
      t["link_frames"] = platform->link()->frames();
      t["peer_bytes_received"] = platform->peer()->bytes_received();
      t["peer_bytes_sent"] = platform->peer()->bytes_sent();
      t["peer_pattern_errors"] = platform->peer()->pattern_errors();
      j["toe"] = t;
    }
    j["psci_calls"] = platform->psci().calls();
    if (auto* hyp = platform->hypervisor())
      j["hypervisor"] = hypervisor_stats(*hyp, platform->cpu().model_cycles());
    j["warnings"] = trace_warning.empty() ? nlohmann::ordered_json::array()
                                          : nlohmann::ordered_json::array({trace_warning});
    j["simulated_seconds"] = sc_core::sc_time_stamp().to_seconds();
    j["wall_seconds"] = seconds;
    j["mips"] = seconds > 0 ? static_cast<double>(n) / seconds / 1e6 : 0.0;
    std::ofstream f(opts.stats);
    f << j.dump(2) << "\n";
    if (!f) err << "vtoe: system run: cannot write " << opts.stats << "\n";
  }
  return status;
}

}  // namespace vtoe::app
