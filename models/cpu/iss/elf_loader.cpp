#include "models/cpu/iss/elf_loader.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace vtoe::cpu::iss {

namespace {

constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPtDynamic = 2;
constexpr uint32_t kPtInterp = 3;
constexpr uint32_t kPtPhdr = 6;
constexpr uint16_t kEtExec = 2;
constexpr uint16_t kEtDyn = 3;
constexpr uint16_t kEmArm = 40;

uint16_t u16(const std::vector<uint8_t>& b, size_t off) {
  return static_cast<uint16_t>(b[off] | (b[off + 1] << 8));
}
uint32_t u32(const std::vector<uint8_t>& b, size_t off) {
  return static_cast<uint32_t>(b[off] | (b[off + 1] << 8) | (b[off + 2] << 16)) |
         (static_cast<uint32_t>(b[off + 3]) << 24);
}

}  // namespace

ElfImage ElfLoader::load(const std::string& path, PagedMemory& mem) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ElfError(path + ": cannot open");
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto fail = [&](const std::string& why) { throw ElfError(path + ": " + why); };
  if (b.size() < 4 || std::memcmp(b.data(), "\x7f" "ELF", 4) != 0) fail("not an ELF file");
  if (b.size() < 52) fail("truncated ELF header");
  if (b[4] != 1) fail("not a 32-bit ELF (ELFCLASS64?)");
  if (b[5] != 1) fail("not a little-endian ELF");
  uint16_t type = u16(b, 16);
  uint16_t machine = u16(b, 18);
  if (machine != kEmArm) fail("not an ARM ELF (e_machine " + std::to_string(machine) + ")");
  if (type != kEtExec && type != kEtDyn) {
    fail("not an executable (e_type " + std::to_string(type) + ")");
  }
  ElfImage img;
  img.entry = u32(b, 24);
  uint32_t phoff = u32(b, 28);
  img.phent = u16(b, 42);
  img.phnum = u16(b, 44);
  if (img.phent < 32) fail("bad program header size");
  if (uint64_t{phoff} + uint64_t{img.phent} * img.phnum > b.size()) {
    fail("truncated program headers");
  }
  for (uint32_t i = 0; i < img.phnum; ++i) {
    uint32_t t = u32(b, phoff + i * img.phent);
    if (t == kPtInterp || t == kPtDynamic) fail("dynamically linked (build with -static)");
  }
  if (type == kEtDyn) {
    fail("position-independent executable without loader support (use -static -no-pie)");
  }
  bool have_phdr = false;
  uint32_t low = 0xffffffff, high = 0;
  for (uint32_t i = 0; i < img.phnum; ++i) {
    size_t ph = phoff + size_t{i} * img.phent;
    uint32_t ptype = u32(b, ph);
    uint32_t off = u32(b, ph + 4), vaddr = u32(b, ph + 8), filesz = u32(b, ph + 16),
             memsz = u32(b, ph + 20);
    if (ptype == kPtPhdr) {
      img.phdr = vaddr;
      have_phdr = true;
    }
    if (ptype != kPtLoad || memsz == 0) continue;
    if (filesz > memsz) fail("segment " + std::to_string(i) + " has filesz > memsz");
    if (uint64_t{off} + filesz > b.size()) fail("truncated segment " + std::to_string(i));
    if (uint64_t{vaddr} + memsz > 0xffff0000ull) {
      fail("segment " + std::to_string(i) + " beyond 0xffff0000");
    }
    mem.map(vaddr, memsz);
    mem.write(vaddr, b.data() + off, filesz);
    if (!have_phdr && phoff >= off && phoff < uint64_t{off} + filesz) {
      img.phdr = vaddr + (phoff - off);
    }
    low = vaddr < low ? vaddr : low;
    high = vaddr + memsz > high ? vaddr + memsz : high;
  }
  if (high == 0) fail("no loadable segment");
  img.low = low;
  img.brk = (high + PagedMemory::kPageSize - 1) & ~(PagedMemory::kPageSize - 1);
  return img;
}

}  // namespace vtoe::cpu::iss
