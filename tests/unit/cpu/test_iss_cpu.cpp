// The ISS's TLM-2.0 face (IssCpu): a bare system-mode program computes a checksum over memory
// behind a TLM target, through b_transport and through DMI; the quantum keeper's time; an IRQ
// taken mid-run and returned from; a masked IRQ; DMI invalidation; the interrupt port; a fault in
// syscall emulation; the caches' line fills as b_transport with their delay. The last two tests
// print the speed through the socket (not timed checks).
#include <gtest/gtest.h>
#include <tlm_utils/simple_target_socket.h>

#include <cfenv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/cpu/iss/iss_cpu.h"
#include "tests/support/sc_proc.h"
#include "tests/support/sc_test_main.h"

using vtoe::cpu::iss::Exception;
using vtoe::cpu::iss::InsnClass;
using vtoe::cpu::iss::IssCpu;
using vtoe::cpu::iss::IssCpuParams;
using vtoe::cpu::iss::TimerKind;
using vtoe::cpu::iss::ArmCore;

VTOE_TEST_MAIN

namespace {

constexpr uint32_t kData = 0x4000;     // the words summed
constexpr uint32_t kResults = 0x8000;  // what the program writes (offsets below)
constexpr uint32_t kSum = 0x00, kFinalCpsr = 0x04, kLrIrq = 0x08, kSpsrIrq = 0x0c,
                   kCpsrInIrq = 0x10, kIrqCount = 0x14, kIrqEnable = 0x20, kWords = 0x24;
constexpr uint32_t kDevice = 0x10000000;  // +0: exit (halts the core), +4: IRQ acknowledge
constexpr uint32_t kLoop = 0x50, kLoopEnd = 0x60;

// arm-linux-gnueabihf-as of the program; the comments are its source.
constexpr uint32_t kProgram[] = {
    0xea000006,  // 00: b reset
    0xeafffffe,  // 04: b .            (undefined)
    0xeafffffe,  // 08: b .            (svc)
    0xeafffffe,  // 0c: b .            (prefetch abort)
    0xeafffffe,  // 10: b .            (data abort)
    0xe1a00000,  // 14: nop
    0xea000016,  // 18: b irq
    0xeafffffe,  // 1c: b .            (fiq)
    0xf1020012,  // 20: reset: cps #0x12
    0xe3a0da0e,  // 24: mov sp, #0xe000         IRQ stack
    0xf1020013,  // 28: cps #0x13
    0xe3a0da0f,  // 2c: mov sp, #0xf000         SVC stack
    0xe3a08902,  // 30: mov r8, #0x8000         results
    0xe5980020,  // 34: ldr r0, [r8, #0x20]     IRQ enable flag
    0xe3500000,  // 38: cmp r0, #0
    0x0a000000,  // 3c: beq 44
    0xf1080080,  // 40: cpsie i
    0xe3a00000,  // 44: mov r0, #0              sum
    0xe3a01901,  // 48: mov r1, #0x4000
    0xe5982024,  // 4c: ldr r2, [r8, #0x24]     word count
    0xe4913004,  // 50: loop: ldr r3, [r1], #4
    0xe0830fe0,  // 54: add r0, r3, r0, ror #31
    0xe2522001,  // 58: subs r2, r2, #1
    0x1afffffb,  // 5c: bne loop
    0xe5880000,  // 60: str r0, [r8]
    0xe10f1000,  // 64: mrs r1, cpsr
    0xe5881004,  // 68: str r1, [r8, #4]
    0xe3a07201,  // 6c: mov r7, #0x10000000
    0xe5870000,  // 70: str r0, [r7]            exit
    0xeafffffe,  // 74: b .
    0xe92d0007,  // 78: irq: push {r0-r2}
    0xe3a00902,  // 7c: mov r0, #0x8000
    0xe580e008,  // 80: str lr, [r0, #8]
    0xe14f1000,  // 84: mrs r1, spsr
    0xe580100c,  // 88: str r1, [r0, #0xc]
    0xe10f1000,  // 8c: mrs r1, cpsr
    0xe5801010,  // 90: str r1, [r0, #0x10]
    0xe5901014,  // 94: ldr r1, [r0, #0x14]
    0xe2811001,  // 98: add r1, r1, #1
    0xe5801014,  // 9c: str r1, [r0, #0x14]
    0xe3a01201,  // a0: mov r1, #0x10000000
    0xe5811004,  // a4: str r1, [r1, #4]        acknowledge: the device lowers the line
    0xe8bd0007,  // a8: pop {r0-r2}
    0xe25ef004,  // ac: subs pc, lr, #4
};

uint32_t word_at(uint32_t i) { return i * 0x9E3779B9u ^ (i >> 3); }

uint32_t reference_sum(uint32_t words) {
  uint32_t s = 0;
  for (uint32_t i = 0; i < words; ++i) s = word_at(i) + ((s << 1) | (s >> 31));
  return s;
}

// RAM at [0, size) that offers DMI (until refuse_dmi()), and the two device registers.
class TestBus : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<TestBus> in;
  std::vector<uint8_t> ram;
  bool dmi = true;
  uint64_t ram_reads = 0, ram_writes = 0;
  sc_core::sc_time latency = sc_core::SC_ZERO_TIME;  // added to every b_transport
  std::vector<uint64_t> line_reads;                  // addresses of 64-byte reads
  std::function<void()> on_exit, on_ack;

  TestBus(const sc_core::sc_module_name& name, size_t size)
      : sc_core::sc_module(name), in("in"), ram(size, 0) {
    in.register_b_transport(this, &TestBus::b_transport);
    in.register_get_direct_mem_ptr(this, &TestBus::get_direct_mem_ptr);
  }
  uint32_t word(uint32_t addr) const {
    uint32_t v;
    std::memcpy(&v, &ram[addr], 4);
    return v;
  }
  void set_word(uint32_t addr, uint32_t v) { std::memcpy(&ram[addr], &v, 4); }
  void refuse_dmi() {
    dmi = false;
    in->invalidate_direct_mem_ptr(0, ram.size() - 1);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    const uint64_t a = t.get_address();
    const uint32_t n = t.get_data_length();
    delay += latency;
    if (t.is_read() && n == 64) line_reads.push_back(a);
    if (a + n <= ram.size()) {
      if (t.is_write()) {
        std::memcpy(&ram[a], t.get_data_ptr(), n);
        ++ram_writes;
      } else {
        std::memcpy(t.get_data_ptr(), &ram[a], n);
        ++ram_reads;
      }
      t.set_dmi_allowed(dmi);
      t.set_response_status(tlm::TLM_OK_RESPONSE);
      return;
    }
    if (t.is_write() && n == 4 && (a == kDevice || a == kDevice + 4)) {
      if (a == kDevice && on_exit) on_exit();
      if (a == kDevice + 4 && on_ack) on_ack();
      t.set_response_status(tlm::TLM_OK_RESPONSE);
      return;
    }
    t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& t, tlm::tlm_dmi& d) {
    if (!dmi || t.get_address() >= ram.size()) return false;
    d.set_dmi_ptr(ram.data());
    d.set_start_address(0);
    d.set_end_address(ram.size() - 1);
    d.allow_read_write();
    return true;
  }
};

// The program, its data and an IssCpu in system mode at the reset vector.
struct Platform {
  TestBus bus;
  IssCpu cpu;
  uint32_t words;
  uint32_t expected = 0;  // the checksum of what the RAM holds at the start

  Platform(const IssCpuParams& p, uint32_t n_words, bool irq_enable, size_t ram = 0x10000)
      : bus("bus", ram), cpu("cpu", p), words(n_words) {
    cpu.socket.bind(bus.in);
    std::memcpy(bus.ram.data(), kProgram, sizeof kProgram);
    for (uint32_t i = 0; i < words && kData + 4 * i + 4 <= ram; ++i) {
      bus.set_word(kData + 4 * i, word_at(i));
    }
    bus.set_word(kResults + kIrqEnable, irq_enable);
    bus.set_word(kResults + kWords, words);
    for (uint32_t i = 0; i < words; ++i) {  // (a long run also sums the flags above)
      expected = bus.word(kData + 4 * i) + ((expected << 1) | (expected >> 31));
    }
    bus.on_exit = [this] { cpu.halt(); };
    bus.on_ack = [this] { cpu.set_irq(false); };
    cpu.core().set_system_mode(true);
    cpu.core().set_pc(0);
    tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
  }
  uint32_t result(uint32_t off) const { return bus.word(kResults + off); }
};

IssCpuParams params(bool dmi) {
  IssCpuParams p;
  p.dmi = dmi;
  return p;
}

constexpr uint32_t kWordsDefault = 4096;  // about 16 k instructions, 16 us at 1 ns

TEST(IssCpu, ChecksumThroughBTransport) {
  Platform pf(params(false), kWordsDefault, false);
  sc_core::sc_start();
  ASSERT_TRUE(pf.cpu.done());
  EXPECT_EQ(pf.cpu.fault(), "");
  EXPECT_EQ(pf.result(kSum), reference_sum(kWordsDefault));
  EXPECT_EQ(pf.cpu.dmi_grants(), 0u);
  // Every load of the loop is a bus read (the decoded code is fetched once).
  EXPECT_GE(pf.bus.ram_reads, uint64_t{kWordsDefault});
  EXPECT_EQ(pf.cpu.retired(InsnClass::Load), kWordsDefault + 2u);
}

TEST(IssCpu, ChecksumThroughDmi) {
  Platform pf(params(true), kWordsDefault, false);
  sc_core::sc_start();
  ASSERT_TRUE(pf.cpu.done());
  EXPECT_EQ(pf.cpu.fault(), "");
  EXPECT_EQ(pf.result(kSum), reference_sum(kWordsDefault));
  EXPECT_EQ(pf.cpu.dmi_grants(), 1u);
  // The first fetch goes over the bus and brings the DMI grant; then only the exit register.
  EXPECT_EQ(pf.bus.ram_reads, 1u);
  EXPECT_EQ(pf.cpu.bus_accesses(), 2u);
  EXPECT_EQ(pf.cpu.retired(InsnClass::Load), kWordsDefault + 2u);
}

TEST(IssCpu, QuantumKeeperAdvancesTimeByInstructionsTimesCpi) {
  IssCpuParams p = params(true);
  p.clock_period = sc_core::sc_time(2, sc_core::SC_NS);
  p.cpi[static_cast<int>(InsnClass::Load)] = 3;
  p.cpi[static_cast<int>(InsnClass::Branch)] = 2;
  Platform pf(p, kWordsDefault, false);
  sc_core::sc_start();
  ASSERT_TRUE(pf.cpu.done());
  EXPECT_EQ(pf.result(kSum), reference_sum(kWordsDefault));
  uint64_t cycles = 0;
  for (int c = 0; c < ArmCore::kClasses; ++c) {
    cycles += pf.cpu.retired(static_cast<InsnClass>(c)) * p.cpi[c];
  }
  EXPECT_GT(cycles, 4u * kWordsDefault);
  EXPECT_EQ(pf.cpu.cycles(), cycles);
  EXPECT_EQ(sc_core::sc_time_stamp(), cycles * p.clock_period);
  // The statistics group carries the same counts.
  EXPECT_EQ(pf.cpu.stats().counter("retired.load").value(), pf.cpu.retired(InsnClass::Load));
  EXPECT_EQ(pf.cpu.stats().counter("cycles").value(), cycles);
}

TEST(IssCpu, QuantumKeeperWithUnitCpiCountsInstructions) {
  Platform pf(params(false), kWordsDefault, false);  // b_transport: syncs on every access too
  sc_core::sc_start();
  ASSERT_TRUE(pf.cpu.done());
  EXPECT_EQ(sc_core::sc_time_stamp(),
            static_cast<double>(pf.cpu.retired()) * sc_core::sc_time(1, sc_core::SC_NS));
}

TEST(IssCpu, IrqTakenMidRunAtTheVectorAndReturnedFrom) {
  Platform pf(params(true), kWordsDefault, true);
  sc_core::sc_time raised_at(3, sc_core::SC_US);
  uint64_t retired_when_raised = 0;
  vtoe::test::Proc irq("irq", [&] {
    sc_core::wait(raised_at);
    retired_when_raised = pf.cpu.retired();
    pf.cpu.set_irq(true);
  });
  sc_core::sc_start();
  ASSERT_TRUE(pf.cpu.done());
  EXPECT_EQ(pf.cpu.fault(), "");
  EXPECT_EQ(pf.result(kSum), reference_sum(kWordsDefault));  // the handler preserved the loop
  EXPECT_EQ(pf.result(kIrqCount), 1u);
  EXPECT_EQ(pf.cpu.core().exceptions(Exception::Irq), 1u);
  // Raised at a quantum boundary (1000 instructions of 1 ns each) mid-loop: the core sees it
  // when it next runs, 3 or 4 us depending on which process the kernel resumes first.
  EXPECT_TRUE(retired_when_raised == 3000u || retired_when_raised == 4000u) << retired_when_raised;
  EXPECT_EQ(pf.cpu.core().exceptions(Exception::Irq), 1u);
  const uint32_t lr = pf.result(kLrIrq);
  EXPECT_GE(lr - 4, kLoop);
  EXPECT_LT(lr - 4, kLoopEnd);
  // SPSR_irq: the interrupted SVC mode, ARM state, A and F still masked, I clear.
  EXPECT_EQ(pf.result(kSpsrIrq) & 0x1ff, 0x153u);
  // In the handler: IRQ mode, A and I set on entry, F unchanged.
  EXPECT_EQ(pf.result(kCpsrInIrq) & 0x1ff, 0x1d2u);
  // After SUBS PC, LR, #4: back in SVC mode with the interrupted state.
  EXPECT_EQ(pf.result(kFinalCpsr) & 0x1ff, 0x153u);
  EXPECT_FALSE(pf.cpu.core().irq());  // the handler's acknowledge lowered it
}

TEST(IssCpu, MaskedIrqIsNotTaken) {
  Platform pf(params(true), kWordsDefault, false);  // CPSR.I stays set from reset
  vtoe::test::Proc irq("irq", [&] {
    sc_core::wait(3, sc_core::SC_US);
    pf.cpu.set_irq(true);
  });
  sc_core::sc_start();
  ASSERT_TRUE(pf.cpu.done());
  EXPECT_EQ(pf.result(kSum), reference_sum(kWordsDefault));
  EXPECT_EQ(pf.result(kIrqCount), 0u);
  EXPECT_EQ(pf.cpu.core().exceptions(Exception::Irq), 0u);
  EXPECT_TRUE(pf.cpu.core().irq());
  EXPECT_EQ(pf.result(kFinalCpsr) & 0x1ff, 0x1d3u);  // SVC, A I F masked
}

TEST(IssCpu, CacheMissesAreLineFillsWhoseDelayTheCoreWaitsFor) {
  IssCpuParams p = params(true);
  p.caches = true;
  Platform pf(p, 64, false);
  pf.bus.latency = sc_core::sc_time(100, sc_core::SC_NS);
  ArmCore& core = pf.cpu.core();
  core.set_cp15(1, 0, 0, 0, core.sctlr() | (1u << 12));  // SCTLR.I (the MMU stays off)
  sc_core::sc_start();
  ASSERT_TRUE(pf.cpu.done());
  EXPECT_EQ(pf.result(kSum), reference_sum(64));
  // The code the run executes (0x00-0x77) spans two lines: one fill of 64 bytes each.
  const std::vector<uint64_t> fills = {0x00, 0x40};
  EXPECT_EQ(pf.bus.line_reads, fills);
  ASSERT_NE(pf.cpu.caches(), nullptr);
  EXPECT_EQ(pf.cpu.caches()->icache().misses(), 2u);
  EXPECT_GT(pf.cpu.caches()->icache().accesses(), 64u);
  // With the MMU off, data accesses are not cached.
  EXPECT_EQ(pf.cpu.caches()->dcache().accesses(), 0u);
  // The core waited for each fill's delay.
  EXPECT_EQ(pf.cpu.miss_stall(), sc_core::sc_time(200, sc_core::SC_NS));
}

TEST(IssCpu, DmiInvalidationFallsBackToBTransport) {
  Platform pf(params(true), kWordsDefault, false);
  uint64_t reads_before = 0;
  uint32_t attached_before = 0;
  vtoe::test::Proc inval("inval", [&] {
    sc_core::wait(3, sc_core::SC_US);
    reads_before = pf.bus.ram_reads;
    attached_before = pf.cpu.memory().attached_pages();
    pf.bus.refuse_dmi();
  });
  sc_core::sc_start();
  ASSERT_TRUE(pf.cpu.done());
  EXPECT_EQ(pf.result(kSum), reference_sum(kWordsDefault));
  EXPECT_EQ(pf.cpu.dmi_invalidations(), 1u);
  EXPECT_EQ(attached_before, 16u);  // 64 KiB of RAM
  EXPECT_EQ(pf.cpu.memory().attached_pages(), 0u);
  EXPECT_EQ(reads_before, 1u);
  // After 3 us about a quarter of the loop is done: the rest of its loads (and the code, decoded
  // again since the pages went away) come over the bus.
  EXPECT_GT(pf.bus.ram_reads - reads_before, uint64_t{kWordsDefault} / 2);
  EXPECT_GT(pf.bus.ram_writes, 0u);
}

TEST(IssCpu, IrqPortFollowsTheSignal) {
  Platform pf(params(true), kWordsDefault, true);
  sc_core::sc_signal<bool, sc_core::SC_MANY_WRITERS> line("line");  // the test and the device
  pf.cpu.irq_in.bind(line);
  pf.bus.on_ack = [&] { line.write(false); };
  vtoe::test::Proc irq("irq", [&] {
    sc_core::wait(3, sc_core::SC_US);
    line.write(true);
  });
  sc_core::sc_start();
  ASSERT_TRUE(pf.cpu.done());
  EXPECT_EQ(pf.result(kSum), reference_sum(kWordsDefault));
  EXPECT_EQ(pf.result(kIrqCount), 1u);
  EXPECT_FALSE(line.read());
}

TEST(IssCpu, SyscallEmulationFaultEndsTheRun) {
  TestBus bus("bus", 0x1000);
  IssCpu cpu("cpu");
  cpu.socket.bind(bus.in);
  bus.set_word(0, 0xe5910000);  // ldr r0, [r1]
  cpu.core().set_reg(1, 0x20000000);
  cpu.core().set_pc(0);
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
  sc_core::sc_start();
  ASSERT_TRUE(cpu.done());
  EXPECT_EQ(cpu.fault(), "read from unmapped address 0x20000000");
  EXPECT_EQ(cpu.core().pc(), 0u);
}

TEST(IssCpu, WfiSleepsUntilTheIrqLineRises) {
  TestBus bus("bus", 0x1000);
  IssCpu cpu("cpu");
  cpu.socket.bind(bus.in);
  const uint32_t code[] = {0xe320f003,   // wfi
                           0xe3a07201,   // mov r7, #0x10000000
                           0xe5870000};  // str r0, [r7]         (exit)
  std::memcpy(bus.ram.data(), code, sizeof code);
  bus.on_exit = [&] { cpu.halt(); };
  cpu.core().set_system_mode(true);  // IRQ masked: the line wakes the core, nothing is taken
  cpu.core().set_pc(0);
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
  bool asleep_at_4us = false;
  vtoe::test::Proc irq("irq", [&] {
    sc_core::wait(4, sc_core::SC_US);
    asleep_at_4us = cpu.core().waiting_for_interrupt();
    sc_core::wait(1, sc_core::SC_US);
    cpu.set_irq(true);
  });
  sc_core::sc_start();
  ASSERT_TRUE(cpu.done());
  EXPECT_TRUE(asleep_at_4us);
  EXPECT_EQ(cpu.retired(), 3u);
  EXPECT_EQ(cpu.core().exceptions(Exception::Irq), 0u);
  // Asleep from 1 ns (after the WFI) to 5 us; then the two instructions after it.
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(5002, sc_core::SC_NS));
}

TEST(IssCpu, GenericTimerWakesWfiAtItsDeadline) {
  TestBus bus("bus", 0x1000);
  IssCpu cpu("cpu");
  cpu.socket.bind(bus.in);
  const uint32_t code[] = {0xe3000271,   // movw r0, #625 (10 us at 62.5 MHz)
                           0xee0e0f13,   // mcr p15, 0, r0, c14, c3, 0 (CNTV_TVAL)
                           0xe3a00001,   // mov r0, #1
                           0xee0e0f33,   // mcr p15, 0, r0, c14, c3, 1 (CNTV_CTL: enable)
                           0xe320f003,   // wfi
                           0xe3a07201,   // mov r7, #0x10000000
                           0xe5870000};  // str r0, [r7]         (exit)
  std::memcpy(bus.ram.data(), code, sizeof code);
  bus.on_exit = [&] { cpu.halt(); };
  cpu.core().reset_system(false);  // SVC, IRQ masked: the line wakes the core, is not taken
  cpu.core().set_pc(0);
  int rises = 0;
  // What the GIC does with PPI 27: the virtual timer's level becomes the IRQ line.
  cpu.set_timer_output_listener([&](TimerKind k, bool level) {
    if (k != TimerKind::Virtual) return;
    rises += level;
    cpu.set_irq(level);
  });
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
  sc_core::sc_start();
  ASSERT_TRUE(cpu.done());
  EXPECT_EQ(rises, 1);
  EXPECT_TRUE(cpu.timer_level(TimerKind::Virtual));
  EXPECT_EQ(cpu.count_at(sc_core::sc_time(10, sc_core::SC_US)), 625u);
  // The timer fired at exactly 10 us (count 625); then the two instructions after the WFI.
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(10002, sc_core::SC_NS));
}

TEST(IssCpu, BusAccessesRunInTheHostFloatingPointEnvironment) {
  TestBus bus("bus", 0x1000);
  bus.dmi = false;
  IssCpu cpu("cpu");
  cpu.socket.bind(bus.in);
  const uint32_t code[] = {0xe3a00503,   // mov r0, #0xc00000    (FPSCR.RMode = round to zero)
                           0xeee10a10,   // vmsr fpscr, r0
                           0xe3a07201,   // mov r7, #0x10000000
                           0xe5870000};  // str r0, [r7]         (exit)
  std::memcpy(bus.ram.data(), code, sizeof code);
  int rounding_seen = -1;
  bus.on_exit = [&] {
    rounding_seen = std::fegetround();
    cpu.halt();
  };
  cpu.core().set_pc(0);
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
  sc_core::sc_start();
  ASSERT_TRUE(cpu.done());
  EXPECT_EQ(cpu.core().fpscr() & 0x00c00000u, 0x00c00000u);
  EXPECT_EQ(rounding_seen, FE_TONEAREST);
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

// Speed through the socket: guest MIPS per second of wall-clock and of process CPU time
// (steadier on a shared machine), printed, not checked.
struct Stopwatch {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  std::clock_t cpu = std::clock();
  void print(const char* what, uint64_t instructions) const {
    const double w =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    const double c = static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC;
    std::printf("%s: %llu instructions, %.3f s wall (%.1f MIPS), %.3f s CPU (%.1f MIPS)\n", what,
                static_cast<unsigned long long>(instructions), w, instructions / w / 1e6, c,
                instructions / c / 1e6);
  }
};

void speed(bool dmi, bool sync_on_bus, uint32_t words, sc_core::sc_time quantum) {
  IssCpuParams p = params(dmi);
  p.sync_on_bus_access = sync_on_bus;
  Platform pf(p, words, false, 0x4000 + 4 * size_t{words} + 0x10000);
  tlm::tlm_global_quantum::instance().set(quantum);
  Stopwatch sw;
  sc_core::sc_start();
  char what[128];
  std::snprintf(what, sizeof what, "IssCpu %s%s, quantum %s, %llu b_transport calls",
                dmi ? "DMI" : "b_transport", sync_on_bus ? "" : " (no sync per access)",
                quantum.to_string().c_str(),
                static_cast<unsigned long long>(pf.cpu.bus_accesses()));
  sw.print(what, pf.cpu.retired());
  ASSERT_TRUE(pf.cpu.done());
  EXPECT_EQ(pf.result(kSum), pf.expected);
}

const sc_core::sc_time kUs(1, sc_core::SC_US);
TEST(IssCpuSpeed, Dmi) { speed(true, true, 1u << 24, kUs); }
TEST(IssCpuSpeed, DmiQuantum100us) { speed(true, true, 1u << 24, 100 * kUs); }
TEST(IssCpuSpeed, BTransport) { speed(false, true, 1u << 20, kUs); }
TEST(IssCpuSpeed, BTransportNoSync) { speed(false, false, 1u << 20, kUs); }

// The same program on the bare core (no SystemC, memory of its own), for scale.
TEST(IssCpuSpeed, BareCore) {
  constexpr uint32_t words = 1u << 24;
  vtoe::cpu::iss::PagedMemory mem;
  mem.map(0, 0x4000 + 4 * words + 0x10000);
  mem.map(kDevice, 0x1000);
  mem.write(0, kProgram, sizeof kProgram);
  for (uint32_t i = 0; i < words; ++i) mem.write32(kData + 4 * i, word_at(i));
  mem.write32(kResults + kIrqEnable, 0);
  mem.write32(kResults + kWords, words);
  ArmCore core(mem);
  core.set_system_mode(true);
  core.set_pc(0);
  Stopwatch sw;
  while (core.pc() != 0x74) core.run(4096);  // 0x74: b . after the exit store
  sw.print("bare ArmCore", core.retired());
  EXPECT_EQ(mem.read32(kDevice), core.reg(0));
}

}  // namespace
