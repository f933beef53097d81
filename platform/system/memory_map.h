// The system platform's memory map and interrupt numbers: QEMU's `virt` machine (hw/arm/virt.c,
// highmem=off), so that one image and one device tree run on both. The platform-bus window
// (0x0c00_0000, SPIs from 112) is left free for the TOE.
#pragma once

#include <cstdint>

namespace vtoe::platform::system {

constexpr std::uint64_t kGicDistributorBase = 0x08000000;
constexpr std::uint64_t kGicCpuInterfaceBase = 0x08010000;
constexpr std::uint64_t kGicHypInterfaceBase = 0x08030000;
constexpr std::uint64_t kGicVirtualCpuInterfaceBase = 0x08040000;
constexpr std::uint64_t kUartBase = 0x09000000;
constexpr std::uint64_t kPlatformBusBase = 0x0c000000;  // reserved for the TOE (not mapped)
constexpr std::uint64_t kPlatformBusSize = 0x02000000;
constexpr std::uint64_t kRamBase = 0x40000000;
constexpr std::uint64_t kDefaultRamSize = 128ull << 20;  // QEMU's default -m
constexpr std::uint64_t kMaxRamSize = 3ull << 30;        // 32-bit addresses, highmem=off

constexpr int kSpiCount = 256;  // QEMU virt's NUM_IRQS: GICD_TYPER.ITLinesNumber = 8
constexpr int kUartSpi = 1;     // ID 33
constexpr int kPlatformBusFirstSpi = 112;
// PPIs (IDs): GIC maintenance 25; generic timer: Hyp 26, virtual 27, secure physical 29,
// non-secure physical 30.
constexpr int kMaintenancePpi = 25;
constexpr int kHypTimerPpi = 26, kVirtualTimerPpi = 27, kSecureTimerPpi = 29,
              kPhysicalTimerPpi = 30;
constexpr std::uint32_t kTimerFrequencyHz = 62'500'000;  // QEMU's CNTFRQ (16 ns ticks)
constexpr std::uint32_t kUartClockHz = 24'000'000;       // QEMU virt's apb-pclk

// QEMU's hw/arm/boot.c placement of a Linux image (32-bit): the kernel at RAM + 0x10000, the
// initrd at RAM + min(RAM / 2, 128 MiB), the DTB after the initrd on the next 4 KiB boundary.
// A bare-metal ELF gets its DTB at the base of RAM when it fits below the ELF.
constexpr std::uint64_t kKernelOffset = 0x00010000;

}  // namespace vtoe::platform::system
