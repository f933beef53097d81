// The hypervisor model on the system platform (hypervisor/iss_hypervisor.h): two VMs run the
// same small A32 program under it; what each VM's trapped accesses, hypercalls and faults give.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <systemc>
#include <vector>

#include "platform/system/system_platform.h"
#include "tests/support/bench.h"

namespace sys = vtoe::platform::system;

namespace {

std::string temp_file(const std::vector<std::uint32_t>& code) {
  // A zImage-shaped image: a branch over the header, the magic at 0x24, code from 0x40.
  std::vector<std::uint32_t> words(16, 0);
  words[0] = 0xEA00000E;
  words[9] = 0x016f2818;
  words.insert(words.end(), code.begin(), code.end());
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path =
      ::testing::TempDir() + t->name() + "-" + std::to_string(::getpid()) + "-guest.bin";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(words.data()),
             static_cast<std::streamsize>(words.size() * 4));
  return path;
}

struct GuestRun {
  std::string console;
  sys::StopReason stop;
  std::vector<std::string> vm_stops;
  std::vector<vtoe::hypervisor::ExitCounts> exits;
  std::uint64_t hyp_mode_insns;
};

GuestRun run_guests(const std::vector<std::uint32_t>& code) {
  sys::SystemConfig c;
  c.virtualization = true;
  c.guests = 2;
  c.guest_memory = 8u << 20;
  c.toe = false;
  GuestRun r;
  sys::SystemPlatform p("system", c, [&](char ch) { r.console += ch; });
  sys::BootFiles f;
  f.kernel = temp_file(code);
  p.boot(f);
  sc_core::sc_start(sc_core::sc_time(100, sc_core::SC_MS));
  r.stop = p.stop_reason();
  for (int vm = 0; vm < 2; ++vm) {
    r.vm_stops.push_back(p.hypervisor()->vm_stop_reason(vm));
    r.exits.push_back(p.hypervisor()->exits(vm));
  }
  r.hyp_mode_insns = p.cpu().core().retired_in_mode(vtoe::cpu::iss::Mode::Hyp);
  return r;
}

}  // namespace

TEST(IssHypervisor, EmulatesEachVmsUartAndAnswersPsciOverHvc) {
  const GuestRun r = run_guests({
      0xE3000000, 0xE3400900,  // r0 = 0x09000000 (the guest's UART: trapped)
      0xE5901018,              // ldr r1, [r0, #0x18]   FR, emulated
      0xE3A02067, 0xE5802000,  // mov r2, #'g'; str r2, [r0]   DR
      0xE3000008, 0xE3480400,  // r0 = 0x84000008 (PSCI SYSTEM_OFF)
      0xE1400070,              // hvc #0
      0xEAFFFFFE,              // b .
  });
  EXPECT_EQ(r.stop, sys::StopReason::PowerOff) << sys::to_string(r.stop);
  EXPECT_EQ(r.console, "[vm0] g[vm1] g");  // a character from each VM's own UART
  for (int vm = 0; vm < 2; ++vm) {
    EXPECT_EQ(r.vm_stops[vm], "power-off");
    EXPECT_EQ(r.exits[vm].data_abort, 2u) << "FR's load and DR's store";
    EXPECT_EQ(r.exits[vm].hvc, 1u);
  }
  EXPECT_EQ(r.hyp_mode_insns, 2u) << "only the HVCs themselves, which retire after the entry";
}

TEST(IssHypervisor, AnAccessOutsideEveryDeviceAndTheRamStopsTheVmWithItsAddress) {
  const GuestRun r = run_guests({
      0xE3000000,
      0xE3400A00,  // r0 = 0x0a000000: no device, no RAM in the VM's stage 2
      0xE5801000,  // str r1, [r0]
      0xEAFFFFFE,
  });
  EXPECT_EQ(r.stop, sys::StopReason::CoreError) << sys::to_string(r.stop);
  for (int vm = 0; vm < 2; ++vm) {
    EXPECT_NE(r.vm_stops[vm].find("outside the VM's RAM and devices: a store to IPA 0xa000000"),
              std::string::npos)
        << r.vm_stops[vm];
    EXPECT_NE(r.vm_stops[vm].find("at pc 0x40010048 in mode 0x13"), std::string::npos)
        << r.vm_stops[vm];
  }
}

VTOE_TEST_MAIN
