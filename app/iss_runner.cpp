// `vtoe iss run`: one static ARM Linux program on the ISS in syscall-emulation mode.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "app/cli.h"
#include "models/cpu/iss/arm_core.h"
#include "models/cpu/iss/linux_process.h"

extern char** environ;

namespace vtoe::app {

namespace {

namespace iss = cpu::iss;

std::string registers(const iss::ArmCore& core) {
  std::string s;
  char buf[64];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(buf, sizeof buf, "%sr%d=%08x", i % 4 ? " " : "\n  ", i, core.reg(i));
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "\n  cpsr=%08x (%s)", core.cpsr(), core.thumb() ? "T32" : "A32");
  return s + buf;
}

// The register file as qemu-arm -d cpu,fpu prints it before each instruction
// (tests/iss/test_lockstep.py compares the two).
void trace_registers(std::FILE* f, const iss::ArmCore& core) {
  for (int i = 0; i < 16; ++i) {
    std::fprintf(f, "R%02d=%08x%c", i, core.reg(i), i % 4 == 3 ? '\n' : ' ');
  }
  std::fprintf(f, "PSR=%08x\n", core.cpsr());
  for (int i = 0; i < 16; ++i) {
    std::fprintf(f, "d%02d=%016llx\n", i, static_cast<unsigned long long>(core.dreg(i)));
  }
  std::fprintf(f, "FPSCR: %08x\n", core.fpscr());
}

// Bytes one trace_registers() record takes (16 core and 16 VFP registers): the unit of the
// projected trace size.
constexpr std::uint64_t kTraceRecordBytes = 4 * 52 + 13 + 16 * 21 + 16;
// Below this much free space the trace stops: a full disk hurts more than a short trace.
constexpr std::uint64_t kTraceReserveBytes = 256ull << 20;

std::uint64_t free_bytes(const std::string& file) {
  std::error_code ec;
  auto dir = std::filesystem::absolute(file, ec).parent_path();
  const auto s = std::filesystem::space(dir, ec);
  return ec ? UINT64_MAX : s.available;
}

// Steps the core to the end, writing the registers of instructions [from, from + limit) to `f`
// (limit 0: no limit); returns why the trace ended early, or "".
std::string run_traced(iss::ArmCore& core, std::FILE* f, const IssOptions& opts) {
  std::uint64_t n = 0;
  const std::uint64_t end = opts.trace_limit ? opts.trace_from + opts.trace_limit : UINT64_MAX;
  while (!core.halted() && n < opts.trace_from) {
    core.step();
    ++n;
  }
  for (; !core.halted() && n < end; ++n) {
    // Free space is looked at every 2^16 records (about 35 MB of trace), not every write.
    if ((n - opts.trace_from) % 65536 == 0 && free_bytes(opts.trace) < kTraceReserveBytes) {
      core.run();
      return "stopped after " + std::to_string(n - opts.trace_from) +
             " instructions: less than 256 MiB left on the trace's file system";
    }
    trace_registers(f, core);
    core.step();
  }
  if (core.halted()) return "";
  core.run();  // the rest untraced
  return "stopped after " + std::to_string(opts.trace_limit) +
         " instructions (--trace-limit; --trace-from skips the start)";
}

}  // namespace

int run_iss(const IssOptions& opts, std::ostream& err) {
  iss::PagedMemory mem;
  iss::ArmCore core(mem);
  iss::LinuxProcess proc(mem, core);
  std::vector<std::string> argv{opts.program};
  argv.insert(argv.end(), opts.args.begin(), opts.args.end());
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  try {
    proc.load(opts.program, argv, env);
  } catch (const iss::ElfError& e) {
    err << "vtoe: iss run: " << e.what() << "\n";
    return kExitFailure;
  }
  // Errors of the program end the run as the matching signal would end it on Linux.
  int status = 0;
  auto t0 = std::chrono::steady_clock::now();
  try {
    if (opts.trace.empty()) {
      core.run();
    } else {
      std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(opts.trace.c_str(), "w"),
                                                        &std::fclose);
      if (!f) {
        err << "vtoe: iss run: cannot write " << opts.trace << "\n";
        return kExitFailure;
      }
      // A trace takes about 570 bytes per instruction: say so before the disk fills.
      const std::uint64_t projected = opts.trace_limit * kTraceRecordBytes;
      if (opts.trace_limit == 0 || projected + kTraceReserveBytes > free_bytes(opts.trace))
        err << "vtoe: iss run: warning: the trace may take up to "
            << (opts.trace_limit ? std::to_string(projected >> 20) + " MiB"
                                 : "573 bytes per instruction")
            << " and " << opts.trace << "'s file system has " << (free_bytes(opts.trace) >> 20)
            << " MiB free; it stops with 256 MiB left\n";
      const std::string cut = run_traced(core, f.get(), opts);
      if (!cut.empty()) err << "vtoe: iss run: the trace " << cut << "\n";
    }
    status = proc.exit_status();
  } catch (const iss::UndefinedInstruction& e) {
    err << "vtoe: iss run: " << e.what() << registers(core) << "\n";
    status = 128 + SIGILL;
  } catch (const iss::GuestFault& e) {
    char where[48];
    std::snprintf(where, sizeof where, " (instruction at 0x%08x)", core.pc());
    err << "vtoe: iss run: segmentation fault: " << e.what() << where << registers(core) << "\n";
    status = 128 + SIGSEGV;
  } catch (const iss::AlignmentFault& e) {
    char where[48];
    std::snprintf(where, sizeof where, " (instruction at 0x%08x)", core.pc());
    err << "vtoe: iss run: bus error: " << e.what() << where << registers(core) << "\n";
    status = 128 + SIGBUS;
  } catch (const iss::UnknownSyscall& e) {
    err << "vtoe: iss run: " << e.what() << registers(core) << "\n";
    status = 128 + SIGSYS;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!opts.stats.empty()) {
    nlohmann::ordered_json j;
    j["program"] = opts.program;
    j["exit_status"] = status;
    j["instructions"] = core.retired();
    nlohmann::ordered_json by;
    for (int c = 0; c < iss::ArmCore::kClasses; ++c) {
      auto cls = static_cast<iss::InsnClass>(c);
      by[iss::to_string(cls)] = core.retired(cls);
    }
    j["by_class"] = by;
    j["decoded"] = core.decoded();
    j["wall_seconds"] = seconds;
    j["mips"] = seconds > 0 ? static_cast<double>(core.retired()) / seconds / 1e6 : 0.0;
    std::ofstream f(opts.stats);
    f << j.dump(2) << "\n";
    if (!f) err << "vtoe: iss run: cannot write " << opts.stats << "\n";
  }
  return status;
}

}  // namespace vtoe::app
