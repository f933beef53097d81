// The flattened device tree the system platform hands to its software: exactly the devices
// modelled, with QEMU virt's compatible strings, node names and layout (compared with QEMU's
// `-M virt,dumpdtb=` in docs/system.md). Written with libfdt.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace vtoe::platform::system {

class DeviceTreeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DeviceTreeConfig {
  std::uint64_t ram_size = 0;
  bool virtualization = false;  // GICH/GICV and the maintenance interrupt; PSCI over SMC
  int cpus = 1;                 // /cpus/cpu@N nodes (with enable-method psci beyond one)
  std::string bootargs;         // /chosen/bootargs (omitted when empty)
  std::uint64_t initrd_start = 0, initrd_end = 0;  // /chosen/linux,initrd-* (when end > start)
  // The TOE's node (compatible "vtoe,toe"; 0: none): its register window at kToeBase, SPI
  // kToeSpi, coherent DMA, and `vtoe,channels`.
  int toe_channels = 0;
  bool pcie = true;  // the PCIe host's node (/pcie@10000000)
  bool rtc = true;   // the PL031's node (/pl031@9010000)
  // /chosen/module@0xADDR nodes for a hypervisor's boot modules, as QEMU's guest-loader writes
  // them (reg = <addr size>, compatible "multiboot,module" and "multiboot,kernel"/"ramdisk").
  struct Module {
    std::uint64_t addr = 0, size = 0;
    bool kernel = true;
    std::string bootargs;
  };
  std::vector<Module> modules;
};

// A DTB (big-endian blob). Throws DeviceTreeError if libfdt fails.
std::vector<std::uint8_t> build_device_tree(const DeviceTreeConfig& c);

// Sets /chosen's bootargs and initrd properties in an existing blob (a --dtb file), growing it
// as needed; throws DeviceTreeError naming `what` (the file) if the blob does not parse.
std::vector<std::uint8_t> update_chosen(std::vector<std::uint8_t> blob, const DeviceTreeConfig& c,
                                        const std::string& what);

// Throws DeviceTreeError naming `what` unless `blob` is a valid DTB.
void check_device_tree(const std::vector<std::uint8_t>& blob, const std::string& what);

}  // namespace vtoe::platform::system
