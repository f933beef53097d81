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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BootError(std::string(what) + " " + path + ": cannot open");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

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

  DeviceTreeConfig dc;
  dc.ram_size = ram_size;
  dc.virtualization = f.virtualization;
  dc.toe_channels = f.toe_channels;
  dc.bootargs = f.append;
  dc.initrd_start = b.initrd_start;
  dc.initrd_end = b.initrd_end;
  std::vector<std::uint8_t> dtb;
  try {
    dtb = f.dtb.empty() ? build_device_tree(dc) : update_chosen(read_file(f.dtb, "dtb"), dc, f.dtb);
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
  write(b.dtb_start, dtb.data(), dtb.size());
  if (b.linux_image) b.r2 = static_cast<std::uint32_t>(b.dtb_start);
  return b;
}

}  // namespace vtoe::platform::system
