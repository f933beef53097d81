// The system platform (platform/system): the device tree (libfdt), the boot loader's placement
// as QEMU's boot.c, its errors, and runs of tiny zImage-shaped programs that end by WFI with
// nothing to wake the core, by --max-instructions, and by a jump to unmapped memory.
// tests/system compares real programs with QEMU; this bench needs no cross compiler.
#include <gtest/gtest.h>

extern "C" {
#include <libfdt.h>
#include <unistd.h>
}

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <systemc>
#include <vector>

#include "models/toe/descriptors.h"
#include "platform/system/boot_loader.h"
#include "platform/system/device_tree.h"
#include "platform/system/memory_map.h"
#include "platform/system/system_platform.h"
#include "tests/support/bench.h"

namespace sys = vtoe::platform::system;

namespace {

std::string prop_string(const std::vector<std::uint8_t>& dtb, const char* path, const char* name) {
  const int node = fdt_path_offset(dtb.data(), path);
  if (node < 0) return "<no node>";
  int len = 0;
  const void* p = fdt_getprop(dtb.data(), node, name, &len);
  return p ? std::string(static_cast<const char*>(p)) : "<no property>";
}

int reg_regions(const std::vector<std::uint8_t>& dtb, const char* path) {
  int len = 0;
  fdt_getprop(dtb.data(), fdt_path_offset(dtb.data(), path), "reg", &len);
  return len / 16;  // two address and two size cells
}

// ctest runs each test in a process of its own, in parallel: the file's name carries the test's
// name and the process id, or one test would boot the program another has just written.
std::string temp_file(const std::string& name, const std::vector<std::uint8_t>& bytes) {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + (t ? std::string(t->name()) + "-" : "") +
                           std::to_string(::getpid()) + "-" + name;
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return path;
}

// The error loading `f` into `ram` bytes of RAM gives ("no error" if none).
std::string load_error(const sys::BootFiles& f, std::uint64_t ram = 128u << 20) {
  try {
    sys::load_boot_files(f, sys::kRamBase, ram, [](std::uint64_t, const void*, std::size_t) {});
  } catch (const sys::BootError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

// A zImage-shaped image: a branch over the header, the magic at 0x24, code from 0x40.
std::vector<std::uint8_t> zimage(std::vector<std::uint32_t> code) {
  std::vector<std::uint32_t> words(16, 0);
  words[0] = 0xEA00000E;  // b 0x40
  words[9] = 0x016f2818;  // zImage magic at 0x24
  words.insert(words.end(), code.begin(), code.end());
  std::vector<std::uint8_t> b(words.size() * 4);
  std::memcpy(b.data(), words.data(), b.size());
  return b;
}

}  // namespace

TEST(SystemDeviceTree, DescribesThePlatformAsQemuVirtLaysItOut) {
  sys::DeviceTreeConfig c;
  c.ram_size = 256ull << 20;
  c.bootargs = "console=ttyAMA0";
  c.initrd_start = 0x44000000;
  c.initrd_end = 0x44100000;
  const auto dtb = sys::build_device_tree(c);
  sys::check_device_tree(dtb, "generated");
  EXPECT_EQ(prop_string(dtb, "/", "compatible"), "linux,dummy-virt");
  EXPECT_EQ(prop_string(dtb, "/pl011@9000000", "compatible"), "arm,pl011");
  EXPECT_EQ(prop_string(dtb, "/pl031@9010000", "compatible"), "arm,pl031");
  EXPECT_GE(fdt_path_offset(dtb.data(), "/pmu"), 0);  // empty, as QEMU's for an ARMv7 core
  EXPECT_EQ(prop_string(dtb, "/intc@8000000", "compatible"), "arm,cortex-a15-gic");
  EXPECT_EQ(prop_string(dtb, "/timer", "compatible"), "arm,armv7-timer");
  EXPECT_EQ(prop_string(dtb, "/psci", "method"), "hvc");
  EXPECT_EQ(prop_string(dtb, "/chosen", "bootargs"), "console=ttyAMA0");
  EXPECT_EQ(prop_string(dtb, "/chosen", "stdout-path"), "/pl011@9000000");
  EXPECT_EQ(reg_regions(dtb, "/intc@8000000"), 2);
  int len = 0;
  const void* mem =
      fdt_getprop(dtb.data(), fdt_path_offset(dtb.data(), "/memory@40000000"), "reg", &len);
  ASSERT_EQ(len, 16);
  EXPECT_EQ(fdt32_to_cpu(static_cast<const fdt32_t*>(mem)[3]), 256u << 20);
  const void* start =
      fdt_getprop(dtb.data(), fdt_path_offset(dtb.data(), "/chosen"), "linux,initrd-start", &len);
  ASSERT_EQ(len, 8);
  fdt64_t initrd_start;  // a property's value is only 4-byte aligned: copy it out
  std::memcpy(&initrd_start, start, sizeof initrd_start);
  EXPECT_EQ(fdt64_to_cpu(initrd_start), 0x44000000u);

  c.virtualization = true;  // GICH/GICV, maintenance interrupt, PSCI over SMC
  const auto hyp = sys::build_device_tree(c);
  EXPECT_EQ(reg_regions(hyp, "/intc@8000000"), 4);
  EXPECT_EQ(prop_string(hyp, "/psci", "method"), "smc");
}

TEST(SystemDeviceTree, ListsEveryCpuAndTheirPpisAsQemuDoes) {
  sys::DeviceTreeConfig c;
  c.ram_size = 128ull << 20;
  const auto one = sys::build_device_tree(c);
  EXPECT_EQ(prop_string(one, "/cpus/cpu@0", "compatible"), "arm,cortex-a15");
  EXPECT_EQ(prop_string(one, "/cpus/cpu@0", "enable-method"), "<no property>");
  EXPECT_LT(fdt_path_offset(one.data(), "/cpus/cpu@1"), 0);
  c.cpus = 4;
  const auto four = sys::build_device_tree(c);
  for (const char* cpu : {"/cpus/cpu@0", "/cpus/cpu@3"})
    EXPECT_EQ(prop_string(four, cpu, "enable-method"), "psci") << cpu;
  int len = 0;
  const void* reg =
      fdt_getprop(four.data(), fdt_path_offset(four.data(), "/cpus/cpu@3"), "reg", &len);
  ASSERT_EQ(len, 4);
  EXPECT_EQ(fdt32_to_cpu(*static_cast<const fdt32_t*>(reg)), 3u);  // MPIDR's affinity
  const void* irqs =
      fdt_getprop(four.data(), fdt_path_offset(four.data(), "/timer"), "interrupts", &len);
  ASSERT_EQ(len, 4 * 12);
  EXPECT_EQ(fdt32_to_cpu(static_cast<const fdt32_t*>(irqs)[2]), 0xF04u);  // CPUs 0-3, level
}

TEST(SystemDeviceTree, NamesTheToeWithItsWindowInterruptAndCoherentDma) {
  sys::DeviceTreeConfig c;
  c.ram_size = 128ull << 20;
  EXPECT_EQ(prop_string(sys::build_device_tree(c), "/toe@c000000", "compatible"), "<no node>");
  c.toe_channels = 8;
  const auto dtb = sys::build_device_tree(c);
  sys::check_device_tree(dtb, "generated");
  const int node = fdt_path_offset(dtb.data(), "/toe@c000000");
  ASSERT_GE(node, 0);
  EXPECT_EQ(prop_string(dtb, "/toe@c000000", "compatible"), "vtoe,toe");
  int len = 0;
  const auto* reg = static_cast<const fdt32_t*>(fdt_getprop(dtb.data(), node, "reg", &len));
  ASSERT_EQ(len, 16);
  EXPECT_EQ(fdt32_to_cpu(reg[1]), 0x0c000000u);
  EXPECT_EQ(fdt32_to_cpu(reg[3]), vtoe::toe::reg::kRegionSize);
  const auto* irq = static_cast<const fdt32_t*>(fdt_getprop(dtb.data(), node, "interrupts", &len));
  ASSERT_EQ(len, 12);
  EXPECT_EQ(fdt32_to_cpu(irq[0]), 0u);    // SPI
  EXPECT_EQ(fdt32_to_cpu(irq[1]), 112u);  // the platform bus's first
  EXPECT_EQ(fdt32_to_cpu(irq[2]), 4u);    // level, high
  EXPECT_NE(fdt_getprop(dtb.data(), node, "dma-coherent", &len), nullptr);
  const auto* channels =
      static_cast<const fdt32_t*>(fdt_getprop(dtb.data(), node, "vtoe,channels", &len));
  ASSERT_EQ(len, 4);
  EXPECT_EQ(fdt32_to_cpu(channels[0]), 8u);
}

TEST(SystemDeviceTree, ABlobThatDoesNotParseNamesTheFile) {
  std::vector<std::uint8_t> junk(256, 0x5a);
  try {
    sys::check_device_tree(junk, "x.dtb");
    FAIL() << "no error";
  } catch (const sys::DeviceTreeError& e) {
    EXPECT_NE(std::string(e.what()).find("x.dtb: not a valid device tree blob"), std::string::npos)
        << e.what();
  }
}

TEST(SystemBootLoader, PlacesAZImageInitrdAndDtbAsQemu) {
  std::vector<std::uint8_t> ram(128u << 20);
  sys::BootFiles f;
  f.kernel = temp_file("zimage.bin", zimage({0xEAFFFFFE}));
  f.initrd = temp_file("initrd.bin", std::vector<std::uint8_t>(5000, 7));
  f.append = "console=ttyAMA0";
  const sys::BootInfo b = sys::load_boot_files(
      f, sys::kRamBase, ram.size(), [&](std::uint64_t a, const void* d, std::size_t n) {
        std::memcpy(ram.data() + (a - sys::kRamBase), d, n);
      });
  EXPECT_TRUE(b.linux_image);
  EXPECT_EQ(b.entry, 0x40010000u);
  EXPECT_EQ(b.r0, 0u);
  EXPECT_EQ(b.r1, 0xffffffffu);
  EXPECT_EQ(b.initrd_start, 0x44000000u);  // RAM + min(RAM / 2, 128 MiB)
  EXPECT_EQ(b.dtb_start, 0x44002000u);     // after the initrd, 4 KiB aligned
  EXPECT_EQ(b.r2, b.dtb_start);
  EXPECT_EQ(ram[0x10024], 0x18);  // the magic where the kernel goes
  std::vector<std::uint8_t> dtb(ram.begin() + (b.dtb_start - sys::kRamBase),
                                ram.begin() + (b.dtb_start - sys::kRamBase) + b.dtb_size);
  sys::check_device_tree(dtb, "loaded");
  EXPECT_EQ(prop_string(dtb, "/chosen", "bootargs"), "console=ttyAMA0");
}

// --dtb-as-is: the file's bytes reach the kernel unchanged (no /chosen update, no room added),
// at the place QEMU gives a blob.
TEST(SystemBootLoader, GivesADtbAsItIsWhenAsked) {
  sys::DeviceTreeConfig c;
  c.ram_size = 128u << 20;
  c.bootargs = "from the file";
  const std::vector<std::uint8_t> blob = sys::build_device_tree(c);
  std::vector<std::uint8_t> ram(128u << 20);
  sys::BootFiles f;
  f.kernel = temp_file("zimage.bin", zimage({0xEAFFFFFE}));
  f.append = "from the command line";
  f.dtb = temp_file("as-is.dtb", blob);
  f.dtb_as_is = true;
  const sys::BootInfo b = sys::load_boot_files(
      f, sys::kRamBase, ram.size(), [&](std::uint64_t a, const void* d, std::size_t n) {
        std::memcpy(ram.data() + (a - sys::kRamBase), d, n);
      });
  ASSERT_EQ(b.dtb_size, blob.size());
  EXPECT_TRUE(std::equal(blob.begin(), blob.end(), ram.begin() + (b.dtb_start - sys::kRamBase)));
  f.dtb_as_is = false;  // the default: /chosen from the command line
  const sys::BootInfo u = sys::load_boot_files(
      f, sys::kRamBase, ram.size(), [&](std::uint64_t a, const void* d, std::size_t n) {
        std::memcpy(ram.data() + (a - sys::kRamBase), d, n);
      });
  std::vector<std::uint8_t> dtb(ram.begin() + (u.dtb_start - sys::kRamBase),
                                ram.begin() + (u.dtb_start - sys::kRamBase) + u.dtb_size);
  EXPECT_EQ(prop_string(dtb, "/chosen", "bootargs"), "from the command line");
}

// Neither an ELF nor a zImage: a raw image, loaded and entered as QEMU does (RAM + 0x10000,
// r1 = 0xffffffff, r2 = the DTB).
TEST(SystemBootLoader, LoadsARawImageAsQemuDoes) {
  std::vector<std::uint8_t> ram(128u << 20);
  sys::BootFiles f;
  f.kernel = temp_file("flat.bin", std::vector<std::uint8_t>{0xfe, 0xff, 0xff, 0xea});  // b .
  const sys::BootInfo b = sys::load_boot_files(
      f, sys::kRamBase, ram.size(), [&](std::uint64_t a, const void* src, std::size_t n) {
        std::memcpy(ram.data() + (a - sys::kRamBase), src, n);
      });
  EXPECT_TRUE(b.linux_image);
  EXPECT_EQ(b.entry, sys::kRamBase + 0x10000);
  EXPECT_EQ(b.r0, 0u);
  EXPECT_EQ(b.r1, 0xffffffffu);
  EXPECT_EQ(b.r2, b.dtb_start);
  EXPECT_EQ(ram[0x10000], 0xfe);
  EXPECT_EQ(ram[0x10003], 0xea);
}

TEST(SystemBootLoader, RefusesWhatIsNotAnArmImageOrDoesNotFit) {
  sys::BootFiles f;
  f.kernel = temp_file("empty.bin", std::vector<std::uint8_t>());
  EXPECT_NE(load_error(f, 128u << 20).find("empty.bin: empty file"), std::string::npos);
  f.kernel = temp_file("u.img", std::vector<std::uint8_t>{0x27, 0x05, 0x19, 0x56, 0, 0, 0, 0});
  EXPECT_NE(load_error(f, 128u << 20).find("u.img: a U-Boot uImage"), std::string::npos);
  f.kernel = temp_file("big.bin", zimage(std::vector<std::uint32_t>(40000, 0)));
  EXPECT_NE(load_error(f, 64u << 10).find("does not fit in RAM"), std::string::npos);
  f.kernel = temp_file("ok.bin", zimage({0xEAFFFFFE}));
  f.dtb = temp_file("bad.dtb", std::vector<std::uint8_t>(64, 1));
  EXPECT_NE(load_error(f, 128u << 20).find("bad.dtb"), std::string::npos);
  f.dtb = "/nonexistent/x.dtb";
  EXPECT_NE(load_error(f, 128u << 20).find("cannot open"), std::string::npos);
}

// QEMU's -device guest-loader: each file at its address and a /chosen/module@0xADDR node per
// file, as qemu-system-arm 7.2 writes them (checked with its dumpdtb): the last one first.
TEST(SystemBootLoader, LoadsGuestLoaderModulesWithTheirChosenNodes) {
  std::vector<std::uint8_t> ram(256u << 20);
  sys::BootFiles f;
  f.kernel = temp_file("xen.bin", zimage({0xEAFFFFFE}));
  f.append = "dom0_mem=64M";
  f.modules.push_back(
      sys::parse_guest_loader("guest-loader,addr=0x4a000000,kernel=" +
                              temp_file("dom0.bin", std::vector<std::uint8_t>(6000, 0x5a)) +
                              ",bootargs=console=hvc0 earlycon=pl011,,0x9000000"));
  f.modules.push_back(
      sys::parse_guest_loader("guest-loader,addr=0x4b000000,initrd=" +
                              temp_file("rd.bin", std::vector<std::uint8_t>(100, 0xa5))));
  const sys::BootInfo b = sys::load_boot_files(
      f, sys::kRamBase, ram.size(), [&](std::uint64_t a, const void* d, std::size_t n) {
        std::memcpy(ram.data() + (a - sys::kRamBase), d, n);
      });
  EXPECT_EQ(ram[0x0a000000], 0x5a);
  EXPECT_EQ(ram[0x0a000000 + 5999], 0x5a);
  EXPECT_EQ(ram[0x0b000000], 0xa5);
  std::vector<std::uint8_t> dtb(ram.begin() + (b.dtb_start - sys::kRamBase),
                                ram.begin() + (b.dtb_start - sys::kRamBase) + b.dtb_size);
  sys::check_device_tree(dtb, "loaded");
  EXPECT_EQ(prop_string(dtb, "/chosen", "bootargs"), "dom0_mem=64M");
  EXPECT_EQ(prop_string(dtb, "/chosen/module@0x4a000000", "bootargs"),
            "console=hvc0 earlycon=pl011,0x9000000");
  const int chosen = fdt_path_offset(dtb.data(), "/chosen");
  const int first = fdt_first_subnode(dtb.data(), chosen);
  EXPECT_STREQ(fdt_get_name(dtb.data(), first, nullptr), "module@0x4b000000");
  int len = 0;
  const char* compat = static_cast<const char*>(fdt_getprop(dtb.data(), first, "compatible", &len));
  ASSERT_NE(compat, nullptr);
  EXPECT_EQ(std::string(compat, static_cast<std::size_t>(len)),
            std::string("multiboot,module\0multiboot,ramdisk\0", 35));
  const auto* reg = static_cast<const fdt32_t*>(fdt_getprop(dtb.data(), first, "reg", &len));
  ASSERT_EQ(len, 16);
  EXPECT_EQ(fdt32_to_cpu(reg[1]), 0x4b000000u);
  EXPECT_EQ(fdt32_to_cpu(reg[3]), 100u);
  const int kernel = fdt_path_offset(dtb.data(), "/chosen/module@0x4a000000");
  compat = static_cast<const char*>(fdt_getprop(dtb.data(), kernel, "compatible", &len));
  EXPECT_EQ(std::string(compat, static_cast<std::size_t>(len)),
            std::string("multiboot,module\0multiboot,kernel\0", 34));
}

TEST(SystemBootLoader, GuestLoaderErrorsNameTheOptionAndTheFile) {
  auto parse = [](const std::string& spec) {
    try {
      sys::parse_guest_loader(spec);
    } catch (const sys::BootError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(parse("loader,addr=1"),
            "--device loader,addr=1: unknown device 'loader' (vtoe system run knows guest-loader)");
  EXPECT_NE(parse("guest-loader,kernel=k").find("no addr="), std::string::npos);
  EXPECT_NE(parse("guest-loader,addr=0x4g,kernel=k").find("addr '0x4g' is not a number"),
            std::string::npos);
  EXPECT_NE(parse("guest-loader,addr=1,kernel=k,initrd=i").find("either kernel=FILE or initrd"),
            std::string::npos);
  EXPECT_NE(parse("guest-loader,addr=1,file=k").find("unknown key 'file'"), std::string::npos);
  sys::BootFiles f;
  f.kernel = temp_file("ok.bin", zimage({0xEAFFFFFE}));
  f.modules.push_back(
      sys::parse_guest_loader("guest-loader,addr=0x44000000,kernel=/nonexistent/k"));
  EXPECT_EQ(load_error(f),
            "--device guest-loader kernel /nonexistent/k: cannot open: No such file or directory");
  f.modules[0] = sys::parse_guest_loader("guest-loader,addr=0x80000000,initrd=" + f.kernel);
  EXPECT_NE(load_error(f).find("--device guest-loader initrd " + f.kernel + ": [0x80000000"),
            std::string::npos);
  f.modules[0] = sys::parse_guest_loader("guest-loader,addr=0x40010000,initrd=" + f.kernel);
  EXPECT_NE(load_error(f).find("overlaps"), std::string::npos);
}

TEST(SystemBootLoader, NamesTheFileThatIsADirectoryOrCannotBeRead) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  sys::BootFiles f;
  f.kernel = dir;
  EXPECT_EQ(load_error(f), "kernel " + dir + ": is a directory");
  f.kernel = temp_file("ok.bin", zimage({0xEAFFFFFE}));
  f.initrd = dir;
  EXPECT_EQ(load_error(f), "initrd " + dir + ": is a directory");
  f.initrd = "";
  f.dtb = dir;
  EXPECT_EQ(load_error(f), "dtb " + dir + ": is a directory");
  f.dtb = "/nonexistent/x.dtb";
  EXPECT_EQ(load_error(f), "dtb /nonexistent/x.dtb: cannot open: No such file or directory");
}

namespace {

// Runs `code` (after the zImage header) on a platform; returns the UART's output.
std::string run(const std::vector<std::uint32_t>& code, sys::StopReason want,
                std::uint64_t max_instructions = 0) {
  sys::SystemConfig c;
  c.max_instructions = max_instructions;
  c.idle_limit = sc_core::sc_time(100, sc_core::SC_US);
  std::string out;
  sys::SystemPlatform p("system", c, [&](char ch) { out += ch; });
  sys::BootFiles f;
  f.kernel = temp_file("prog.bin", zimage(code));
  const sys::BootInfo b = p.boot(f);
  EXPECT_EQ(p.cpu().core().reg(2), b.dtb_start);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  EXPECT_EQ(p.stop_reason(), want) << sys::to_string(p.stop_reason());
  return out;
}

}  // namespace

TEST(SystemPlatform, UartOutputThenWfiWithNothingToWakeTheCoreEndsTheRun) {
  const std::string out = run({0xE3000000, 0xE3400900,   // movw/movt r0, #0x09000000
                               0xE3A0106F, 0xE5801000,   // mov r1, #'o'; str r1, [r0]
                               0xE3A0106B, 0xE5801000,   // mov r1, #'k'; str r1, [r0]
                               0xE320F003, 0xEAFFFFFE},  // wfi; b .
                              sys::StopReason::Idle);
  EXPECT_EQ(out, "ok");
}

TEST(SystemPlatform, MaxInstructionsEndsASpin) {
  run({0xEAFFFFFE}, sys::StopReason::MaxInstructions, 50000);
}

TEST(SystemPlatform, AJumpToUnmappedMemoryWithNoVectorsEndsWithTheAddress) {
  sys::SystemConfig c;
  std::string out;
  sys::SystemPlatform p("system", c, [&](char ch) { out += ch; });
  sys::BootFiles f;
  f.kernel = temp_file("jump.bin", zimage({0xE3000000, 0xE3400C00,  // r0 = 0x0c000000
                                           0xE12FFF10}));           // bx r0
  p.boot(f);
  sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
  // Today's ISS ends the run itself when the vector fetch fails (CoreError with the message);
  // a core that kept faulting there is stopped by the platform's BusErrorWatch instead.
  if (p.stop_reason() == sys::StopReason::BusErrorLoop) {
    EXPECT_EQ(p.error_address(), 0x0000000Cu) << "the prefetch-abort vector";
  } else {
    EXPECT_EQ(p.stop_reason(), sys::StopReason::CoreError) << sys::to_string(p.stop_reason());
    EXPECT_NE(p.cpu().fault().find("0x0000000c"), std::string::npos) << p.cpu().fault();
  }
  EXPECT_EQ(p.cpu().core().exceptions(vtoe::cpu::iss::Exception::PrefetchAbort), 1u);
}

TEST(SystemPlatform, AnAbortHandlerThatJumpsBackToUnmappedMemoryIsStopped) {
  // VBAR = a table of `bx r0` with r0 = 0x0c000000: prefetch abort, vector, abort again ...
  // instructions retire (the branches) but every bus access fails: the watch stops it.
  std::vector<std::uint32_t> code = {0xE3000000, 0xE3400C00,  // r0 = 0x0c000000
                                     0xE3001080, 0xE3441001,  // r1 = 0x40010080
                                     0xEE0C1F10,              // mcr p15, 0, r1, c12, c0, 0
                                     0xE12FFF10};             // bx r0
  code.resize((0x80 - 0x40) / 4, 0);
  code.insert(code.end(), 8, 0xE12FFF10);  // the vector table at 0x40010080
  run(code, sys::StopReason::BusErrorLoop, 10'000'000);
}

TEST(SystemPlatform, SeveralCoresEachWithItsMpidrTheSecondariesOff) {
  sys::SystemConfig c;
  c.cpus = 3;
  sys::SystemPlatform p("system", c, [](char) {});
  ASSERT_EQ(p.cpus(), 3);
  ASSERT_NE(p.cluster(), nullptr);
  EXPECT_EQ(p.gic().num_cpus(), 3);
  EXPECT_EQ(p.psci().cores(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(p.cpu(i).core().mpidr(), 0x80000000u | static_cast<std::uint32_t>(i));
    EXPECT_EQ(p.cpu(i).powered(), i == 0) << i;
    EXPECT_EQ(p.cpu(i).params().cpu_index, i);
  }
  EXPECT_EQ(&p.cpu(0), &p.cpu());
}

TEST(SystemPlatform, RefusesMoreThanEightCoresAndCachesWithSeveral) {
  sys::SystemConfig c;
  c.cpus = 9;
  EXPECT_THROW(sys::SystemPlatform("nine", c, [](char) {}), std::invalid_argument);
  c.cpus = 2;
  c.caches = true;
  EXPECT_THROW(sys::SystemPlatform("cached", c, [](char) {}), std::invalid_argument);
}

VTOE_TEST_MAIN
