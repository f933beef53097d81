// libFuzzer harness: a hostile guest against the TOE under native, device emulation (de) and
// direct access (da). Three whole platforms (platform::Platform, each inside a wrapper module so
// that their names differ) are built once, at start-up: SystemC elaborates once per process.
// In each, VM 0 (the native OS) runs an RPC workload against the simulated peer and must keep
// making progress; the hostile party is VM 1 under de and da, and under native a second control
// channel the OS does not use. Each input picks a platform, then drives a sequence of guest
// operations as a continuation of the simulation so far: register writes and reads (trapped and
// emulated under de, straight to the VM's channel page under da), rings programmed with any
// base, size and index, contexts with any field (addresses outside the VM's memory among them)
// posted with doorbells, the ECQ drained or not, raw writes over the VM's own rings, time
// advances.
//
// What must hold: no crash, sanitizer report or hang (a continuation that does not end within
// kInputLimit of simulated time aborts); the well-behaved VM's driver keeps taking interrupts
// (none for kStarvation of simulated time aborts); under de and da, the DRAM just past the hostile
// VM's memory (the guard, reached by nothing else) stays zero. Bad guest input must become error
// completions and counters, never a write outside the VM.
//
// An input is bounded in simulated time, not only in operations: under de a single register write
// may legitimately take tens of milliseconds (a doorbell on a 65,536-entry ring is 65,535
// contexts translated inside the trap, charged to the VM), so operations stop after a budget and
// the hang limit allows the longest single one on top of it.
//
// Between inputs the hostile channel is disabled and its rings cleared; what the TOE learnt
// (connections, CCB entries, queued completions) persists, so an input's behaviour may depend on
// earlier ones (docs/fuzzing.md).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "config/config.h"
#include "models/core/logger.h"
#include "models/core/stats.h"
#include "models/toe/descriptors.h"
#include "platform/platform.h"

using namespace vtoe;
using toe::Ring;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGuard = 1 * kMiB;  // DRAM past the hostile VM's memory
// One input's continuation takes no new operation after kInputBudget of simulated time; the one
// in progress may still be long (Target::longest_operation_), and only past both is it a hang.
const sc_core::sc_time kInputBudget(50, sc_core::SC_MS);
// VM 0 may wait a whole scheduler time slice (30 ms) behind the hostile VM; several RPC round
// trips of 2 ms fit in this.
constexpr std::uint64_t kStarvationPs = 200'000'000'000ull;  // 200 ms without VM 0 interrupts
constexpr std::size_t kMaxOps = 256;

// VM 0: a ping-pong RPC with the simulated peer (progress = its driver's interrupts). VM 1: idle
// (its OS opens no socket, so its driver never touches the channel the fuzzer owns).
std::string scenario(const char* arch) {
  std::string s = std::string("seed: 5\nduration: 1000s\narchitecture: ") + arch +
                  "\nplatform: {guest_memory: 16MiB, dram_size: ";
  const bool native = std::string(arch) == "native";
  // native: OS memory 16..32 MiB, the hostile channel's region 32..48 MiB.
  // de, da: VM 0 16..32 MiB, VM 1 32..48 MiB, the guard 48..49 MiB.
  s += native ? "48MiB" : "49MiB";
  // A 1 ms link: VM 0's RPC completes a round trip every few simulated ms, enough to show progress
  // while costing little simulation per input (all three platforms advance together).
  s += "}\nnetwork: {link_delay: 1ms}\ntoe: {channels: 2}\nguest: {ring_entries: 64}\n";
  if (!native) s += "hypervisor: {scheduler: {tickle: false}}\n";
  s += "vms:\n  - {name: good, workload: {type: rpc, port: 6000, message_size: 100, "
       "response_size: 200}}\n";
  if (!native) s += "  - {name: hostile, workload: {type: cpu, stop: 1ms, port: 5002}}\n";
  return s;
}

struct Input {
  const std::uint8_t* p;
  std::size_t n, i = 0;
  bool more() const { return i < n; }
  std::uint8_t u8() { return i < n ? p[i++] : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(u8() | u8() << 8); }
  std::uint32_t u32() { return u16() | static_cast<std::uint32_t>(u16()) << 16; }
  std::uint64_t u64() { return u32() | static_cast<std::uint64_t>(u32()) << 32; }
};

// One platform and the hostile party's view of it.
class Target : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Target);
  Target(const sc_core::sc_module_name& name, const char* arch)
      : sc_core::sc_module(name),
        cfg_(config::Config::from_string(scenario(arch), std::string(arch) + ".yaml")),
        p_(cfg_),
        native_(p_.architecture() == platform::Architecture::Native) {
    if (native_) {
      mem_base_ = 32 * kMiB;  // physical: the hostile channel's region, DRAM the OS never uses
      mem_size_ = 16 * kMiB;
      // Natively the hostile party's register accesses reach the TOE directly: no operation
      // holds the harness for long (the TOE works on in the background).
      longest_operation_ = sc_core::sc_time(1, sc_core::SC_MS);
    } else {
      ctx_ = &p_.core().add_context(std::string(this->name()) + ".hostile", 1, 1);
      mem_base_ = p_.guest(1).memory().base();
      mem_size_ = p_.guest(1).memory().size();
      guard_pa_ = p_.guest(1).memory().physical(mem_base_ + mem_size_);
      // The longest single operation: a write of the ECQ head that lets the manager take the
      // contexts left behind on all three host->TOE rings, each of 65,536 entries, at
      // hypervisor.costs.vtoe_context each; doubled for what handling a context costs besides
      // (posting it to the physical channel, its completion).
      const double cycles = 2.0 * 3 * 65535 * p_.hypervisor()->costs().vtoe_context;
      longest_operation_ = sc_core::sc_time(cycles / p_.core().freq_hz(), sc_core::SC_SEC);
    }
    SC_THREAD(run);
  }

  // Runs one input as a continuation; aborts on a hang, a starved VM 0 or a write in the guard.
  void drive(Input in) {
    in_ = in;
    done_ = false;
    go_.notify(sc_core::SC_ZERO_TIME);
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    const sc_core::sc_time limit = start + kInputBudget + longest_operation_;
    while (!done_ && sc_core::sc_time_stamp() < limit)
      sc_core::sc_start(limit - sc_core::sc_time_stamp());
    if (!done_) {
      std::fprintf(stderr,
                   "fuzz_guest: %s: input still running after %s (its operations' budget %s, "
                   "the longest single operation %s)\n",
                   name(), (limit - start).to_string().c_str(), kInputBudget.to_string().c_str(),
                   longest_operation_.to_string().c_str());
      print_counters();
      std::abort();
    }
    const std::uint64_t irqs = p_.guest(0).driver().interrupts();
    const std::uint64_t now = sc_core::sc_time_stamp().value();
    if (irqs != vm0_irqs_) {
      vm0_irqs_ = irqs;
      vm0_progress_ps_ = now;
    } else if (now - vm0_progress_ps_ > kStarvationPs) {
      toe::ControlChannel& ch = p_.toe().channel(p_.channel_of(0));
      const auto& app = p_.guest(0).apps().front()->counters();
      std::fprintf(stderr,
                   "fuzz_guest: %s: VM 0 took no interrupt for %llu ps (its channel: %llu "
                   "contexts fetched, %llu completions written, %zu waiting, backlogged %d; its "
                   "workload: %llu transactions, error '%s'; the TOE's MAC dropped %llu "
                   "frames, its engine had %llu retransmission timeouts)\n",
                   name(), static_cast<unsigned long long>(now - vm0_progress_ps_),
                   static_cast<unsigned long long>(ch.contexts_fetched()),
                   static_cast<unsigned long long>(ch.completions()), ch.completions_waiting(),
                   ch.backlogged() ? 1 : 0, static_cast<unsigned long long>(app.transactions),
                   app.failed ? app.error.c_str() : "",
                   static_cast<unsigned long long>(p_.toe().mac().tx_drops()),
                   static_cast<unsigned long long>(p_.toe().ppm().stack().stats().rto_timeouts));
      print_counters();
      std::abort();
    }
    if (!native_) check_guard();
    if (std::getenv("FUZZ_GUEST_VERBOSE")) {
      const toe::ControlChannel& ch = p_.toe().channel(native_ ? 1 : p_.channel_of(1));
      std::fprintf(stderr,
                   "fuzz_guest: %s: input ran %s; hostile channel: %llu contexts fetched, %llu "
                   "completions written, %zu waiting, status 0x%x; VM 0: %llu interrupts\n",
                   name(), (sc_core::sc_time_stamp() - start).to_string().c_str(),
                   static_cast<unsigned long long>(ch.contexts_fetched()),
                   static_cast<unsigned long long>(ch.completions()), ch.completions_waiting(),
                   ch.status(), static_cast<unsigned long long>(p_.guest(0).driver().interrupts()));
    }
  }

 private:
  // The channel register page the hostile party programs: VM 1's IPA page (trapped under de,
  // mapped to its physical channel under da), or physical channel 1 under native.
  std::uint64_t page_base() const { return native_ ? toe::reg::kChannelStride : 0; }

  void reg_access(bool write, std::uint64_t offset, std::uint32_t& value) {
    static const bool verbose = std::getenv("FUZZ_GUEST_VERBOSE") != nullptr;
    if (verbose)
      std::fprintf(stderr, "fuzz_guest: %s %s %s 0x%llx 0x%x\n",
                   sc_core::sc_time_stamp().to_string().c_str(), name(), write ? "W" : "R",
                   static_cast<unsigned long long>(offset), value);
    if (native_) {
      // Natively the OS is the only software and owns the machine: the harness reaches the TOE's
      // register decoding directly (no core stall to model). The interrupt enable stays off:
      // a level interrupt of a channel the OS does not drain would only re-enter its ISR.
      if (write && (offset & (toe::reg::kChannelStride - 1)) == toe::reg::kCtrl)
        value &= ~toe::reg::kCtrlIrqEnable;
      tlm::tlm_generic_payload gp;
      gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
      gp.set_address(offset);
      gp.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
      gp.set_data_length(4);
      gp.set_streaming_width(4);
      gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      p_.toe().in.get_base_export()->b_transport(gp, delay);
      sc_core::wait(delay);
      return;
    }
    p_.hypervisor()->register_port(1).access(*ctx_, write, platform::kToeRegBase + offset, value);
  }
  void reg_write(std::uint64_t offset, std::uint32_t v) { reg_access(true, offset, v); }
  std::uint32_t reg_read(std::uint64_t offset) {
    std::uint32_t v = 0;
    reg_access(false, offset, v);
    return v;
  }
  static std::uint64_t ring_reg(int r, std::uint64_t sub) {
    return toe::reg::kRingBase + static_cast<std::uint64_t>(r) * toe::reg::kRingStride + sub;
  }

  // Memory the hostile party owns (its RAM as it addresses it: IPAs under de and da).
  bool mine(std::uint64_t a, std::uint64_t len) const {
    return a >= mem_base_ && len <= mem_size_ && a - mem_base_ <= mem_size_ - len;
  }
  void mem_write(std::uint64_t a, const void* d, std::size_t len) {
    if (!mine(a, len)) return;
    if (native_)
      p_.dram().write(a, d, len);
    else
      p_.guest(1).memory().write(a, d, len);
  }
  bool mem_read(std::uint64_t a, void* d, std::size_t len) {
    if (!mine(a, len)) return false;
    if (native_)
      p_.dram().read(a, d, len);
    else
      p_.guest(1).memory().read(a, d, len);
    return true;
  }

  // An address for a ring or a buffer: mostly inside the party's memory, otherwise next to its
  // end, anywhere, or (virtualized) VM 0's physical RAM and the TOE's registers as IPAs. Natively
  // an address outside the region is past the end of DRAM (the OS's own memory is not a target).
  std::uint64_t pick_addr(Input& in) {
    const std::uint8_t mode = in.u8();
    switch (mode % 6) {
      case 0:
      case 1:
        return mem_base_ + (in.u32() % mem_size_ & ~std::uint64_t{31});
      case 2:
        return mem_base_ + mem_size_ - (in.u16() & 0xfe0);
      case 3:
        return native_ ? p_.dram().size() + in.u32() : in.u64();
      case 4:
        return native_ ? mem_base_ + mem_size_ + in.u16()
                       : platform::kGuestRamBase + in.u32() % (16 * kMiB);
      default:
        return native_ ? p_.dram().size() - in.u8() : platform::kToeRegBase + in.u16();
    }
  }
  // Ring sizes: powers of two up to 4096 entries, or any 32-bit value (refused unless a power
  // of two in [2, 65536]). Larger valid rings are left out: under de, one doorbell on a full ring
  // of 65,536 entries is 65,535 contexts of 1,500 cycles each in a single trap, tens of simulated
  // milliseconds that the guest rightly pays for but that take seconds under ASan.
  static std::uint32_t pick_size(Input& in) {
    const std::uint8_t b = in.u8();
    if (b < 200) return 1u << (b % 13);
    const std::uint32_t v = in.u32();
    return v > 4096 && (v & (v - 1)) == 0 ? 4096 : v;
  }

  struct RingView {
    std::uint64_t addr = 0;
    std::uint32_t size = 0, head = 0, tail = 0;
  };

  void reset() {
    reg_write(page_base() + toe::reg::kCtrl, 0);
    for (int r = 0; r < toe::kRings; ++r) {
      rings_[r] = RingView{};
      for (std::uint64_t sub : {toe::reg::kRingAddrLo, toe::reg::kRingAddrHi, toe::reg::kRingSize})
        reg_write(page_base() + ring_reg(r, sub), 0);
    }
  }

  void post(Input& in) {
    const int r = in.u8() % 3;  // Cmd, Send, Recv
    RingView& v = rings_[r];
    std::uint8_t d[toe::kDescBytes];
    for (auto& b : d) b = in.u8();
    const std::uint16_t sock = in.u8() % 8;
    if (r == 0) {
      toe::CmdDesc c;
      std::memcpy(&c, d, sizeof c);
      c.opcode = static_cast<std::uint8_t>(1 + in.u8() % 6);  // 6: no such command
      c.sock = sock;
      c.arg = in.u8() % 8;
      if (in.u8() & 1) {  // the peer's RPC server, so that connections open
        c.ip = 0x0A000002;
        c.port = 6000;
      }
      c.rx_addr = pick_addr(in);
      c.rx_size = pick_size(in);
      c.local_ip = in.u8() & 1 ? 0 : c.local_ip;
      std::memcpy(d, &c, sizeof c);
    } else if (r == 1) {
      toe::SendDesc s;
      std::memcpy(&s, d, sizeof s);
      s.sock = sock;
      s.length = pick_size(in);
      s.addr = pick_addr(in);
      std::memcpy(d, &s, sizeof s);
    } else {
      toe::RecvDesc rd;
      std::memcpy(&rd, d, sizeof rd);
      rd.sock = sock;
      std::memcpy(d, &rd, sizeof rd);
    }
    if (v.size >= 2 && (v.size & (v.size - 1)) == 0) {
      mem_write(v.addr + static_cast<std::uint64_t>(v.tail % v.size) * toe::kDescBytes, d,
                sizeof d);
      v.tail = (v.tail + 1) % v.size;
    } else {
      v.tail = in.u32();
    }
    reg_write(page_base() + ring_reg(r, toe::reg::kRingTail), v.tail);
  }

  void drain_ecq() {
    RingView& v = rings_[static_cast<int>(Ring::Ecq)];
    if (v.size < 2 || (v.size & (v.size - 1)) != 0) return;
    for (std::uint32_t k = 0; k < v.size; ++k) {
      toe::EcqDesc e;
      const std::uint64_t a = v.addr + static_cast<std::uint64_t>(v.head) * toe::kDescBytes;
      if (!mem_read(a, &e, sizeof e) || !e.valid) break;
      e.valid = 0;
      mem_write(a, &e, sizeof e);
      v.head = (v.head + 1) % v.size;
    }
    reg_write(page_base() + ring_reg(static_cast<int>(Ring::Ecq), toe::reg::kRingHead), v.head);
  }

  void step(Input& in) {
    switch (in.u8() % 11) {
      case 0:
        reg_write(page_base() + (in.u16() & 0xffc), in.u32());
        break;
      case 1:
        (void)reg_read(page_base() + (in.u16() & 0xffc));
        break;
      case 2: {  // a ring programmed with any base and size, indices from 0
        const int r = in.u8() % toe::kRings;
        RingView& v = rings_[r];
        v.addr = pick_addr(in);
        v.size = pick_size(in);
        v.head = v.tail = 0;
        reg_write(page_base() + ring_reg(r, toe::reg::kRingAddrLo),
                  static_cast<std::uint32_t>(v.addr));
        reg_write(page_base() + ring_reg(r, toe::reg::kRingAddrHi),
                  static_cast<std::uint32_t>(v.addr >> 32));
        reg_write(page_base() + ring_reg(r, toe::reg::kRingSize), v.size);
        break;
      }
      case 3:
      case 4:
        post(in);
        break;
      case 5:
        reg_write(page_base() + toe::reg::kCtrl, in.u8() & 3);
        break;
      case 6:
        sc_core::wait(sc_core::sc_time(1 + in.u8() % 64, sc_core::SC_US));
        break;
      case 7:
        drain_ecq();
        break;
      case 8: {  // raw bytes over the party's own memory (its rings included)
        const RingView& v = rings_[in.u8() % toe::kRings];
        const std::uint64_t a = in.u8() < 128 ? v.addr + in.u8() * 4u : pick_addr(in);
        std::uint8_t b[16];
        for (auto& x : b) x = in.u8();
        mem_write(a, b, 1 + in.u8() % sizeof b);
        break;
      }
      case 9: {  // outside the channel's page: control unit, other channels, RAM as registers
        const std::uint32_t off = in.u32();
        std::uint64_t where =
            native_ ? (in.u8() & 1 ? toe::reg::kControlUnitBase + (off & 0xffc) : off & 0x1fffc)
                    : off;
        if (native_ && where < toe::reg::kChannelStride) where += toe::reg::kChannelStride;
        std::uint32_t value = in.u32();
        reg_access(in.u8() & 1, where, value);
        break;
      }
      default: {  // a doorbell or head with any index
        const int r = in.u8() % toe::kRings;
        reg_write(
            page_base() + ring_reg(r, in.u8() & 1 ? toe::reg::kRingTail : toe::reg::kRingHead),
            in.u32());
        break;
      }
    }
  }

  void run() {
    for (;;) {
      sc_core::wait(go_);
      reset();
      Input in = in_;
      const sc_core::sc_time budget_end = sc_core::sc_time_stamp() + kInputBudget;
      for (std::size_t ops = 0; in.more() && ops < kMaxOps && sc_core::sc_time_stamp() < budget_end;
           ++ops)
        step(in);
      sc_core::wait(sc_core::sc_time(20, sc_core::SC_US));  // let the last doorbells play out
      done_ = true;
      sc_core::sc_pause();
    }
  }

  // What a failure report needs to tell what the platform was doing.
  void print_counters() {
    std::fprintf(stderr, "fuzz_guest: %s: the Tx DMA holds %zu send contexts; non-zero counters:\n",
                 name(), p_.toe().tx_dma().queued());
    for (const core::StatGroup* g : core::StatRegistry::instance().groups())
      if (g->name().rfind(std::string(name()) + ".", 0) == 0)
        for (const auto& c : g->counters())
          if (c.counter->value())
            std::fprintf(stderr, "  %s.%s = %llu\n", g->name().c_str(), c.name.c_str(),
                         static_cast<unsigned long long>(c.counter->value()));
  }

  // memcmp, not a loop: the harness is instrumented, and a compare hook per byte of a MiB costs
  // more than the simulation.
  void check_guard() {
    static std::uint8_t chunk[64 * 1024];
    static const std::uint8_t zero[64 * 1024] = {};
    for (std::uint64_t off = 0; off < kGuard; off += sizeof chunk) {
      p_.dram().read(guard_pa_ + off, chunk, sizeof chunk);
      if (std::memcmp(chunk, zero, sizeof chunk) != 0) {
        std::fprintf(stderr,
                     "fuzz_guest: %s: a write landed in PA 0x%llx..+64KiB, past VM 1's memory\n",
                     name(), static_cast<unsigned long long>(guard_pa_ + off));
        std::abort();
      }
    }
  }

  config::Config cfg_;
  platform::Platform p_;
  bool native_;
  cpu::Core::Context* ctx_ = nullptr;
  std::uint64_t mem_base_ = 0, mem_size_ = 0, guard_pa_ = 0;
  sc_core::sc_time longest_operation_;
  RingView rings_[toe::kRings];
  sc_core::sc_event go_;
  Input in_{nullptr, 0};
  bool done_ = false;
  std::uint64_t vm0_irqs_ = 0, vm0_progress_ps_ = 0;
};

std::vector<std::unique_ptr<Target>>* targets = nullptr;
// FUZZ_GUEST_ARCH=native|de|da: this process builds only that platform and runs every input on
// it (the input's first byte is read and ignored, so corpora stay interchangeable). The three
// platforms of the default mode advance together, so each input pays for simulating all three;
// one process per architecture spends the CPU on the one the input drives (docs/fuzzing.md).
Target& target_for(std::uint8_t first) { return *(*targets)[first % targets->size()]; }
std::uint64_t inputs = 0;
std::FILE* trace = nullptr;  // FUZZ_GUEST_TRACE: every input, in the order run
// FUZZ_GUEST_STATS: every 100 inputs, the simulated time and the wall and CPU time they took.
auto block0 = std::chrono::steady_clock::now();
std::clock_t cpu0 = std::clock();
double slowest_ms = 0;

}  // namespace

// LeakSanitizer cannot scan the QuickThreads stacks SystemC runs its processes on
// (docs/fuzzing.md): at exit it reports what only a suspended process still holds. The platforms
// live for the whole process; per-input leak checks are off too (scripts/fuzz.sh: -detect_leaks=0).
extern "C" int __lsan_is_turned_off() { return 1; }

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  core::Logger::set_default_level(core::LogLevel::Off);  // bad accesses are counted, not printed
  targets = new std::vector<std::unique_ptr<Target>>;    // alive to the end of the process
  if (const char* arch = std::getenv("FUZZ_GUEST_ARCH")) {
    const std::string a = arch;
    if (a != "native" && a != "de" && a != "da") {
      std::fprintf(stderr, "fuzz_guest: FUZZ_GUEST_ARCH is '%s'; expected native, de or da\n",
                   arch);
      std::exit(2);
    }
    targets->push_back(std::make_unique<Target>(arch, arch));
  } else {
    for (const char* arch : {"native", "de", "da"})
      targets->push_back(std::make_unique<Target>(arch, arch));
  }
  sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_MS));  // boot: VM 0's RPC under way
  if (const char* path = std::getenv("FUZZ_GUEST_TRACE")) trace = std::fopen(path, "wb");
  // FUZZ_GUEST_REPLAY=FILE: first runs every input of a FUZZ_GUEST_TRACE record, in order, so
  // that the inputs given afterwards (e.g. a timeout's) run on the state a long run left.
  if (const char* path = std::getenv("FUZZ_GUEST_REPLAY")) {
    std::FILE* f = std::fopen(path, "rb");
    std::vector<std::uint8_t> buf;
    std::uint32_t n = 0;
    std::uint64_t k = 0;
    const auto t0 = std::chrono::steady_clock::now();
    while (f && std::fread(&n, sizeof n, 1, f) == 1) {
      buf.resize(n);
      if (std::fread(buf.data(), 1, n, f) != n) break;
      if (n >= 1) target_for(buf[0]).drive(Input{buf.data() + 1, n - 1});
      ++k;
    }
    if (f) std::fclose(f);
    std::fprintf(stderr, "fuzz_guest: replayed %llu inputs of %s in %.1f s, %s simulated\n",
                 static_cast<unsigned long long>(k), path,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                 sc_core::sc_time_stamp().to_string().c_str());
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  // A failure that needs the state earlier inputs left is replayed from this record of every
  // input the process ran (docs/fuzzing.md: 32-bit little-endian length, then the bytes).
  if (trace) {
    const std::uint32_t n = static_cast<std::uint32_t>(size);
    std::fwrite(&n, sizeof n, 1, trace);
    std::fwrite(data, 1, size, trace);
    std::fflush(trace);
  }
  const auto t0 = std::chrono::steady_clock::now();
  target_for(data[0]).drive(Input{data + 1, size - 1});
  const auto t1 = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  slowest_ms = std::max(slowest_ms, ms);
  if (std::getenv("FUZZ_GUEST_STATS") && ++inputs % 100 == 0) {
    const double cpu_ms = 1000.0 * static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
    std::fprintf(
        stderr,
        "fuzz_guest: %llu inputs, %s simulated; the last 100: %.0f ms wall, %.0f ms "
        "CPU, slowest %.0f ms\n",
        static_cast<unsigned long long>(inputs), sc_core::sc_time_stamp().to_string().c_str(),
        std::chrono::duration<double, std::milli>(t1 - block0).count(), cpu_ms, slowest_ms);
    block0 = t1;
    cpu0 = std::clock();
    slowest_ms = 0;
  }
  return 0;
}
