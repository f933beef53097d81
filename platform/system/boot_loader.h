// Puts a kernel, an initrd and a device tree into the system platform's RAM as QEMU's
// hw/arm/boot.c does for a 32-bit core, and says how to enter it.
//
//  - ELF (ARM, static): loaded at its addresses (for bare-metal programs, physical ones) and
//    entered at e_entry with r0-r2 = 0; the DTB goes to the base of RAM if it fits below the
//    image, else after it.
//  - zImage (magic 0x016f2818 at offset 0x24): at RAM + 0x10000, entered there with r0 = 0,
//    r1 = 0xffffffff (no machine number: DT boot) and r2 = the DTB's address; the initrd at
//    RAM + min(RAM / 2, 128 MiB); the DTB after the initrd on the next 4 KiB boundary.
// Anything else, an image that does not fit in RAM, or a DTB that does not parse is a BootError
// naming the file.
//
// Boot modules for a hypervisor, as QEMU's `-device guest-loader` loads them (Xen's dom0 kernel
// and initrd): each file at its address, and a /chosen/module@0xADDR node per file with
// compatible "multiboot,module" + "multiboot,kernel" (with its bootargs) or "multiboot,ramdisk",
// and reg = <address size>.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace vtoe::platform::system {

class BootError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One `--device guest-loader,addr=A,kernel=FILE[,bootargs=S]` or `...,initrd=FILE`.
struct BootModule {
  std::uint64_t addr = 0;
  std::string path;
  bool kernel = true;    // "multiboot,kernel" (else "multiboot,ramdisk")
  std::string bootargs;  // the module node's bootargs (kernels only)
};

// Parses QEMU's option text `guest-loader,addr=...,kernel=...|initrd=...[,bootargs=...]` (a
// comma inside a value is written ",,", as QEMU's option syntax has it); throws BootError naming
// the option and what is wrong.
BootModule parse_guest_loader(const std::string& spec);

struct BootFiles {
  std::string kernel;  // ELF or zImage (required)
  std::string initrd;  // optional
  std::string append;  // kernel command line -> /chosen/bootargs
  std::string dtb;     // optional: this blob instead of the generated one (/chosen updated)
  // The blob as it is (no /chosen, no room added): the bytes another simulator's kernel saw.
  bool dtb_as_is = false;
  bool virtualization = false;
  int toe_channels = 0;             // the TOE's node in the device tree (0: no TOE)
  int cpus = 1;                     // the device tree's cpu nodes
  bool pcie = true;                 // the PCIe host's node in the device tree
  bool rtc = true;                  // the PL031's node in the device tree
  std::vector<BootModule> modules;  // --device guest-loader, in command-line order
};

struct BootInfo {
  bool linux_image = false;  // zImage (else ELF)
  std::uint32_t entry = 0;   // bit 0: Thumb
  std::uint32_t r0 = 0, r1 = 0, r2 = 0;
  std::uint64_t kernel_start = 0, kernel_end = 0;
  std::uint64_t initrd_start = 0, initrd_end = 0;
  std::uint64_t dtb_start = 0, dtb_size = 0;
};

// `write(addr, data, len)` stores into the platform's memory (the RAM's host view); `ram_base`
// and `ram_size` say where RAM is.
using MemoryWriter = std::function<void(std::uint64_t addr, const void* data, std::size_t len)>;
BootInfo load_boot_files(const BootFiles& f, std::uint64_t ram_base, std::uint64_t ram_size,
                         const MemoryWriter& write);

}  // namespace vtoe::platform::system
