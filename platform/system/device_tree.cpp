#include "platform/system/device_tree.h"

extern "C" {
#include <libfdt.h>
}

#include <algorithm>
#include <cstdio>

#include "models/toe/descriptors.h"
#include "platform/system/memory_map.h"

namespace vtoe::platform::system {

namespace {

// GIC interrupt specifier (three cells): type (0 SPI, 1 PPI), number, flags.
constexpr std::uint32_t kSpi = 0, kPpi = 1;
constexpr std::uint32_t kLevelHigh = 4;
constexpr std::uint32_t kGicPhandle = 0x8001, kClockPhandle = 0x8000;

void check(int err, const char* what) {
  if (err < 0) {
    throw DeviceTreeError(std::string("device tree: ") + what + ": " + fdt_strerror(err));
  }
}

// Sequential-write helpers: the blob is built once, top-down.
class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& b) : b_(b) {}
  void begin(const char* name) { check(fdt_begin_node(b_.data(), name), name); }
  void end() { check(fdt_end_node(b_.data()), "end node"); }
  void str(const char* name, const std::string& v) {
    check(fdt_property_string(b_.data(), name, v.c_str()), name);
  }
  void strings(const char* name, std::initializer_list<const char*> v) {
    std::string all;
    for (const char* s : v) all.append(s).push_back('\0');
    check(fdt_property(b_.data(), name, all.data(), static_cast<int>(all.size())), name);
  }
  void u32(const char* name, std::uint32_t v) { check(fdt_property_u32(b_.data(), name, v), name); }
  void cells(const char* name, std::initializer_list<std::uint64_t> v) {
    cells(name, std::vector<std::uint64_t>(v));
  }
  void cells(const char* name, const std::vector<std::uint64_t>& v) {
    std::vector<fdt32_t> c;
    for (std::uint64_t x : v) c.push_back(cpu_to_fdt32(static_cast<std::uint32_t>(x)));
    check(fdt_property(b_.data(), name, c.data(), static_cast<int>(c.size() * 4)), name);
  }
  // reg with #address-cells = #size-cells = 2.
  void reg2(std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> regions) {
    std::vector<fdt32_t> c;
    for (auto [base, size] : regions) {
      c.push_back(cpu_to_fdt32(static_cast<std::uint32_t>(base >> 32)));
      c.push_back(cpu_to_fdt32(static_cast<std::uint32_t>(base)));
      c.push_back(cpu_to_fdt32(static_cast<std::uint32_t>(size >> 32)));
      c.push_back(cpu_to_fdt32(static_cast<std::uint32_t>(size)));
    }
    check(fdt_property(b_.data(), "reg", c.data(), static_cast<int>(c.size() * 4)), "reg");
  }
  void empty(const char* name) { check(fdt_property(b_.data(), name, nullptr, 0), name); }

 private:
  std::vector<std::uint8_t>& b_;
};

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

void set_chosen(std::vector<std::uint8_t>& b, const DeviceTreeConfig& c) {
  int chosen = fdt_path_offset(b.data(), "/chosen");
  if (chosen < 0) chosen = fdt_add_subnode(b.data(), 0, "chosen");
  check(chosen, "/chosen");
  if (!c.bootargs.empty()) {
    check(fdt_setprop_string(b.data(), chosen, "bootargs", c.bootargs.c_str()), "bootargs");
  }
  if (c.initrd_end > c.initrd_start) {
    check(fdt_setprop_u64(b.data(), chosen, "linux,initrd-start", c.initrd_start),
          "linux,initrd-start");
    check(fdt_setprop_u64(b.data(), chosen, "linux,initrd-end", c.initrd_end), "linux,initrd-end");
  }
  // As QEMU 7.2's guest-loader: the node's name keeps the "0x", each node is added as the first
  // subnode of /chosen (the last module comes first), and properties are set reg, compatible,
  // bootargs (libfdt puts each new one first).
  for (const DeviceTreeConfig::Module& m : c.modules) {
    const std::string name = "module@0x" + hex(m.addr);
    // A --dtb file that has the node already (QEMU's dumpdtb of the same command line) keeps it.
    int node = fdt_subnode_offset(b.data(), chosen, name.c_str());
    if (node < 0) node = fdt_add_subnode(b.data(), chosen, name.c_str());
    check(node, name.c_str());
    const fdt32_t reg[4] = {cpu_to_fdt32(static_cast<std::uint32_t>(m.addr >> 32)),
                            cpu_to_fdt32(static_cast<std::uint32_t>(m.addr)),
                            cpu_to_fdt32(static_cast<std::uint32_t>(m.size >> 32)),
                            cpu_to_fdt32(static_cast<std::uint32_t>(m.size))};
    check(fdt_setprop(b.data(), node, "reg", reg, sizeof reg), "module reg");
    std::string compatible("multiboot,module");
    compatible.push_back('\0');
    compatible.append(m.kernel ? "multiboot,kernel" : "multiboot,ramdisk").push_back('\0');
    check(fdt_setprop(b.data(), node, "compatible", compatible.data(),
                      static_cast<int>(compatible.size())),
          "module compatible");
    if (!m.bootargs.empty()) {
      check(fdt_setprop_string(b.data(), node, "bootargs", m.bootargs.c_str()), "module bootargs");
    }
  }
}

}  // namespace

std::vector<std::uint8_t> build_device_tree(const DeviceTreeConfig& c) {
  // A PPI's flags name the CPUs it goes to (bits [15:8], GICv2's binding), as QEMU writes them.
  const std::uint32_t ppi_cpus = ((1u << c.cpus) - 1) << 8;
  std::vector<std::uint8_t> b(64 * 1024);
  check(fdt_create(b.data(), static_cast<int>(b.size())), "create");
  check(fdt_finish_reservemap(b.data()), "reserve map");
  Writer w(b);
  w.begin("");
  w.u32("interrupt-parent", kGicPhandle);
  w.u32("#size-cells", 2);
  w.u32("#address-cells", 2);
  w.str("compatible", "linux,dummy-virt");
  w.str("model", "vtoe system platform (QEMU virt memory map)");

  w.begin("psci");
  w.u32("migrate", 0x84000005);
  w.u32("cpu_on", 0x84000003);
  w.u32("cpu_off", 0x84000002);
  w.u32("cpu_suspend", 0x84000001);
  w.str("method", c.virtualization ? "smc" : "hvc");
  w.strings("compatible", {"arm,psci-1.0", "arm,psci-0.2", "arm,psci"});
  w.end();

  w.begin(("memory@" + hex(kRamBase)).c_str());
  w.reg2({{kRamBase, c.ram_size}});
  w.str("device_type", "memory");
  w.end();

  w.begin("chosen");
  w.str("stdout-path", "/pl011@" + hex(kUartBase));
  w.end();

  w.begin("timer");
  w.empty("always-on");
  w.cells("interrupts",
          {kPpi, kSecureTimerPpi - 16, ppi_cpus | kLevelHigh,  //
           kPpi, kPhysicalTimerPpi - 16, ppi_cpus | kLevelHigh, kPpi, kVirtualTimerPpi - 16,
           ppi_cpus | kLevelHigh, kPpi, kHypTimerPpi - 16, ppi_cpus | kLevelHigh});
  w.strings("compatible", {"arm,armv7-timer"});
  w.end();

  w.begin("apb-pclk");
  w.u32("phandle", kClockPhandle);
  w.str("clock-output-names", "clk24mhz");
  w.u32("clock-frequency", kUartClockHz);
  w.u32("#clock-cells", 0);
  w.str("compatible", "fixed-clock");
  w.end();

  w.begin(("pl011@" + hex(kUartBase)).c_str());
  w.strings("clock-names", {"uartclk", "apb_pclk"});
  w.cells("clocks", {kClockPhandle, kClockPhandle});
  w.cells("interrupts", {kSpi, kUartSpi, kLevelHigh});
  w.reg2({{kUartBase, 0x1000}});
  w.strings("compatible", {"arm,pl011", "arm,primecell"});
  w.end();

  // QEMU virt's PCIe host (create_pcie), without its msi-map: vtoe has no GICv2m frame. INTx of
  // slot s, pin p (1-4) is SPI kPcieFirstSpi + (s + p - 1) % 4, the swizzle QEMU writes.
  if (c.pcie) {
    w.begin(("pcie@" + hex(kPcieMmioBase)).c_str());
    w.cells("interrupt-map-mask", {0x1800, 0, 0, 7});
    std::vector<std::uint64_t> map;
    for (std::uint32_t slot = 0; slot < 4; ++slot) {
      for (std::uint32_t pin = 1; pin <= 4; ++pin) {
        map.insert(map.end(), {slot << 11, 0, 0, pin, kGicPhandle, 0, 0, kSpi,
                               kPcieFirstSpi + (slot + pin - 1) % 4, kLevelHigh});
      }
    }
    w.cells("interrupt-map", map);
    w.u32("#interrupt-cells", 1);
    w.cells("ranges", {0x1000000, 0, 0, kPciePioBase >> 32, kPciePioBase, kPciePioSize >> 32,
                       kPciePioSize, 0x2000000, kPcieMmioBase >> 32, kPcieMmioBase,
                       kPcieMmioBase >> 32, kPcieMmioBase, kPcieMmioSize >> 32, kPcieMmioSize});
    w.reg2({{kPcieEcamBase, kPcieEcamSize}});
    w.empty("dma-coherent");
    w.cells("bus-range", {0, kPcieEcamSize / (1u << 20) - 1});
    w.u32("linux,pci-domain", 0);
    w.u32("#size-cells", 2);
    w.u32("#address-cells", 3);
    w.str("device_type", "pci");
    w.str("compatible", "pci-host-ecam-generic");
    w.end();
  }

  if (c.rtc) {
    w.begin(("pl031@" + hex(kRtcBase)).c_str());
    w.str("clock-names", "apb_pclk");
    w.u32("clocks", kClockPhandle);
    w.cells("interrupts", {kSpi, kRtcSpi, kLevelHigh});
    w.reg2({{kRtcBase, 0x1000}});
    w.strings("compatible", {"arm,pl031", "arm,primecell"});
    w.end();
  }

  // QEMU 7.2 writes an empty node for an ARMv7 core's PMU (a compatible only for ARMv8's), so
  // that Linux probes no PMU driver; kvm-unit-tests finds the PMU by ID_DFR0.
  w.begin("pmu");
  w.end();

  if (c.toe_channels > 0) {
    w.begin(("toe@" + hex(kToeBase)).c_str());
    w.strings("compatible", {"vtoe,toe"});
    w.reg2({{kToeBase, toe::reg::kRegionSize}});
    w.cells("interrupts", {kSpi, static_cast<std::uint32_t>(kToeSpi), kLevelHigh});
    w.u32("vtoe,channels", static_cast<std::uint32_t>(c.toe_channels));
    w.empty("dma-coherent");
    w.end();
  }

  w.begin(("intc@" + hex(kGicDistributorBase)).c_str());
  w.u32("phandle", kGicPhandle);
  if (c.virtualization) {
    w.cells("interrupts", {kPpi, kMaintenancePpi - 16, ppi_cpus | kLevelHigh});
    w.reg2({{kGicDistributorBase, 0x10000},
            {kGicCpuInterfaceBase, 0x10000},
            {kGicHypInterfaceBase, 0x10000},
            {kGicVirtualCpuInterfaceBase, 0x10000}});
  } else {
    w.reg2({{kGicDistributorBase, 0x10000}, {kGicCpuInterfaceBase, 0x10000}});
  }
  w.strings("compatible", {"arm,cortex-a15-gic"});
  w.empty("ranges");
  w.u32("#size-cells", 2);
  w.u32("#address-cells", 2);
  w.empty("interrupt-controller");
  w.u32("#interrupt-cells", 3);
  w.end();

  w.begin("cpus");
  w.u32("#size-cells", 0);
  w.u32("#address-cells", 1);
  for (int i = 0; i < c.cpus; ++i) {
    w.begin(("cpu@" + std::to_string(i)).c_str());
    w.u32("reg", static_cast<std::uint32_t>(i));     // MPIDR's affinity
    if (c.cpus > 1) w.str("enable-method", "psci");  // as QEMU: only with secondaries to start
    w.str("compatible", "arm,cortex-a15");
    w.str("device_type", "cpu");
    w.end();
  }
  w.end();

  w.end();  // root
  check(fdt_finish(b.data()), "finish");
  // Room for /chosen's properties, then packed.
  check(fdt_open_into(b.data(), b.data(), static_cast<int>(b.size())), "open");
  set_chosen(b, c);
  check(fdt_pack(b.data()), "pack");
  b.resize(fdt_totalsize(b.data()));
  return b;
}

void check_device_tree(const std::vector<std::uint8_t>& blob, const std::string& what) {
  if (blob.size() < sizeof(fdt_header)) {
    throw DeviceTreeError(what + ": not a device tree blob (" + std::to_string(blob.size()) +
                          " bytes)");
  }
  int err = fdt_check_header(blob.data());
  if (err == 0 && fdt_totalsize(blob.data()) > blob.size()) err = -FDT_ERR_TRUNCATED;
  if (err == 0) {
    // Walk every node: a damaged structure block shows up here.
    int depth = 0;
    for (int node = fdt_next_node(blob.data(), -1, &depth); node >= 0;
         node = fdt_next_node(blob.data(), node, &depth)) {
    }
    err = fdt_path_offset(blob.data(), "/");
    if (err > 0) err = 0;
  }
  if (err < 0) {
    throw DeviceTreeError(what + ": not a valid device tree blob: " + fdt_strerror(err));
  }
}

std::vector<std::uint8_t> update_chosen(std::vector<std::uint8_t> blob, const DeviceTreeConfig& c,
                                        const std::string& what) {
  check_device_tree(blob, what);
  // As QEMU 7.2 loads a -dtb file: opened into (file size + 10000) * 2 bytes, zeroed, and not
  // packed again, so that the kernel sees the same tree, header and size on both (the lockstep
  // from start_kernel compares it); room for bootargs beyond that when they are long.
  std::size_t modules = 0;
  for (const DeviceTreeConfig::Module& m : c.modules) modules += 128 + m.bootargs.size();
  const std::size_t room = std::max((blob.size() + 10000) * 2,
                                    fdt_totalsize(blob.data()) + c.bootargs.size() + 512 + modules);
  std::vector<std::uint8_t> out(room);
  const int err = fdt_open_into(blob.data(), out.data(), static_cast<int>(out.size()));
  if (err < 0) throw DeviceTreeError(what + ": " + fdt_strerror(err));
  set_chosen(out, c);
  return out;
}

}  // namespace vtoe::platform::system
