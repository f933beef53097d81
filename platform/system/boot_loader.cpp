#include "platform/system/boot_loader.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "models/cpu/iss/elf_loader.h"
#include "models/cpu/iss/paged_memory.h"
#include "platform/system/device_tree.h"
#include "platform/system/memory_map.h"

namespace vtoe::platform::system {

namespace {

constexpr std::uint8_t kUImageMagic[4] = {0x27, 0x05, 0x19, 0x56};  // big-endian, at 0
constexpr std::uint64_t kPage = 4096;

std::vector<std::uint8_t> read_file(const std::string& path, const char* what) {
  try {
    return cpu::iss::read_whole_file(path);
  } catch (const std::runtime_error& e) {
    throw BootError(std::string(what) + " " + e.what());  // "kernel PATH: is a directory"
  }
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// QEMU's option text: comma-separated key=value pairs, ",," for a comma inside a value.
std::vector<std::string> split_options(const std::string& spec) {
  std::vector<std::string> out(1);
  for (std::size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] != ',') {
      out.back().push_back(spec[i]);
    } else if (i + 1 < spec.size() && spec[i + 1] == ',') {
      out.back().push_back(',');
      ++i;
    } else {
      out.emplace_back();
    }
  }
  return out;
}

}  // namespace

BootModule parse_guest_loader(const std::string& spec) {
  auto fail = [&](const std::string& why) { throw BootError("--device " + spec + ": " + why); };
  const std::vector<std::string> parts = split_options(spec);
  if (parts[0] != "guest-loader") {
    fail("unknown device '" + parts[0] + "' (vtoe system run knows guest-loader)");
  }
  BootModule m;
  bool have_addr = false, have_kernel = false, have_initrd = false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::size_t eq = parts[i].find('=');
    if (eq == std::string::npos) fail("'" + parts[i] + "' is not KEY=VALUE");
    const std::string key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
    if (key == "addr") {
      std::size_t used = 0;
      try {
        m.addr = std::stoull(value, &used, 0);
      } catch (const std::exception&) {
        used = 0;
      }
      if (value.empty() || used != value.size()) fail("addr '" + value + "' is not a number");
      have_addr = true;
    } else if (key == "kernel" || key == "initrd") {
      if (value.empty()) fail(key + " names no file");
      m.path = value;
      m.kernel = key == "kernel";
      (m.kernel ? have_kernel : have_initrd) = true;
    } else if (key == "bootargs") {
      m.bootargs = value;
    } else {
      fail("unknown key '" + key + "' (guest-loader takes addr, kernel, initrd, bootargs)");
    }
  }
  if (!have_addr) fail("no addr= (where the module goes)");
  if (have_kernel == have_initrd) fail("give either kernel=FILE or initrd=FILE");
  if (have_initrd && !m.bootargs.empty()) fail("bootargs go with a kernel= module");
  return m;
}

BootInfo load_boot_files(const BootFiles& f, std::uint64_t ram_base, std::uint64_t ram_size,
                         const MemoryWriter& write) {
  const std::uint64_t ram_end = ram_base + ram_size;
  auto fits = [&](std::uint64_t start, std::uint64_t len, const std::string& what) {
    if (start < ram_base || start + len > ram_end) {
      throw BootError(what + ": [" + hex(start) + ", " + hex(start + len) +
                      ") does not fit in RAM [" + hex(ram_base) + ", " + hex(ram_end) +
                      ") (--memory)");
    }
  };
  BootInfo b;
  const std::vector<std::uint8_t> image = read_file(f.kernel, "kernel");
  if (image.size() >= 4 && std::memcmp(image.data(),
                                       "\x7f"
                                       "ELF",
                                       4) == 0) {
    cpu::iss::PagedMemory scratch;
    cpu::iss::ElfImage elf;
    try {
      elf = cpu::iss::ElfLoader::load(f.kernel, scratch);
    } catch (const cpu::iss::ElfError& e) {
      throw BootError(std::string("kernel ") + e.what());
    }
    fits(elf.low, elf.brk - elf.low, "kernel " + f.kernel + " (ELF segments)");
    std::vector<std::uint8_t> page(kPage);
    for (std::uint64_t a = elf.low & ~(kPage - 1); a < elf.brk; a += kPage) {
      if (!scratch.mapped(static_cast<std::uint32_t>(a))) continue;
      scratch.read(static_cast<std::uint32_t>(a), page.data(), kPage);
      const std::uint64_t from = std::max<std::uint64_t>(a, ram_base);
      write(from, page.data() + (from - a), kPage - (from - a));
    }
    b.entry = elf.entry;
    b.kernel_start = elf.low;
    b.kernel_end = elf.brk;
  } else {
    // Anything else is a Linux image, as QEMU loads it: a zImage (magic 0x016f2818 at 0x24) or a
    // raw image (kvm-unit-tests' flat binaries), at RAM + 0x10000 with r2 = the DTB.
    if (image.empty()) throw BootError("kernel " + f.kernel + ": empty file");
    if (image.size() >= 4 && std::memcmp(image.data(), kUImageMagic, 4) == 0) {
      throw BootError("kernel " + f.kernel + ": a U-Boot uImage, which is not supported");
    }
    b.linux_image = true;
    b.kernel_start = ram_base + kKernelOffset;
    b.kernel_end = b.kernel_start + image.size();
    fits(b.kernel_start, image.size(), "kernel " + f.kernel);
    write(b.kernel_start, image.data(), image.size());
    b.entry = static_cast<std::uint32_t>(b.kernel_start);
    b.r1 = 0xffffffff;
  }

  if (!f.initrd.empty()) {
    const std::vector<std::uint8_t> rd = read_file(f.initrd, "initrd");
    b.initrd_start = ram_base + std::min<std::uint64_t>(ram_size / 2, 128ull << 20);
    if (b.initrd_start < b.kernel_end) b.initrd_start = align_up(b.kernel_end, kPage);
    b.initrd_end = b.initrd_start + rd.size();
    fits(b.initrd_start, rd.size(), "initrd " + f.initrd);
    write(b.initrd_start, rd.data(), rd.size());
  }

  // Boot modules: each file at its address; it must fit in RAM and overlap neither the image,
  // the initrd nor another module.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> taken = {{b.kernel_start, b.kernel_end}};
  if (b.initrd_end > b.initrd_start) taken.emplace_back(b.initrd_start, b.initrd_end);
  std::vector<DeviceTreeConfig::Module> modules;
  for (const BootModule& m : f.modules) {
    const std::string what =
        "--device guest-loader " + std::string(m.kernel ? "kernel " : "initrd ") + m.path;
    const std::vector<std::uint8_t> data = read_file(
        m.path, m.kernel ? "--device guest-loader kernel" : "--device guest-loader initrd");
    fits(m.addr, data.size(), what);
    for (auto [start, end] : taken) {
      if (m.addr < end && start < m.addr + data.size()) {
        throw BootError(what + ": [" + hex(m.addr) + ", " + hex(m.addr + data.size()) +
                        ") overlaps [" + hex(start) + ", " + hex(end) + ")");
      }
    }
    taken.emplace_back(m.addr, m.addr + data.size());
    write(m.addr, data.data(), data.size());
    modules.push_back({m.addr, data.size(), m.kernel, m.bootargs});
  }

  DeviceTreeConfig dc;
  dc.modules = modules;
  dc.ram_size = ram_size;
  dc.virtualization = f.virtualization;
  dc.toe_channels = f.toe_channels;
  dc.cpus = f.cpus;
  dc.pcie = f.pcie;
  dc.rtc = f.rtc;
  dc.bootargs = f.append;
  dc.initrd_start = b.initrd_start;
  dc.initrd_end = b.initrd_end;
  std::vector<std::uint8_t> dtb;
  try {
    if (f.dtb.empty()) {
      dtb = build_device_tree(dc);
    } else if (f.dtb_as_is) {
      dtb = read_file(f.dtb, "dtb");
      check_device_tree(dtb, f.dtb);
    } else {
      dtb = update_chosen(read_file(f.dtb, "dtb"), dc, f.dtb);
    }
  } catch (const DeviceTreeError& e) {
    throw BootError(std::string("--dtb ") + e.what());
  }
  if (b.linux_image) {
    const std::uint64_t after =
        b.initrd_end ? b.initrd_end
                     : ram_base + std::min<std::uint64_t>(ram_size / 2, 128ull << 20);
    b.dtb_start = align_up(std::max(after, b.kernel_end), kPage);
  } else if (b.kernel_start >= ram_base + dtb.size()) {
    b.dtb_start = ram_base;  // below the program, as QEMU does for an ELF
  } else {
    b.dtb_start = align_up(std::max(b.kernel_end, b.initrd_end), kPage);
  }
  b.dtb_size = dtb.size();
  fits(b.dtb_start, dtb.size(), "device tree");
  for (const DeviceTreeConfig::Module& m : modules) {
    if (m.addr < b.dtb_start + b.dtb_size && b.dtb_start < m.addr + m.size) {
      throw BootError("--device guest-loader at " + hex(m.addr) +
                      ": overlaps the device tree at [" + hex(b.dtb_start) + ", " +
                      hex(b.dtb_start + b.dtb_size) + ")");
    }
  }
  write(b.dtb_start, dtb.data(), dtb.size());
  if (b.linux_image) b.r2 = static_cast<std::uint32_t>(b.dtb_start);
  return b;
}

}  // namespace vtoe::platform::system
