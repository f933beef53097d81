#include "app/guest_symbols.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace vtoe::app {

namespace {

template <typename T>
bool read_at(const std::vector<char>& f, std::size_t off, T& out) {
  if (off > f.size() || f.size() - off < sizeof(T)) return false;
  std::memcpy(&out, f.data() + off, sizeof(T));
  return true;
}

// ELF32 little-endian, as ARM's.
struct Elf32Header {
  unsigned char ident[16];
  std::uint16_t type, machine;
  std::uint32_t version, entry, phoff, shoff, flags;
  std::uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct Elf32Section {
  std::uint32_t name, type, flags, addr, offset, size, link, info, addralign, entsize;
};
struct Elf32Symbol {
  std::uint32_t name, value, size;
  unsigned char info, other;
  std::uint16_t shndx;
};
constexpr std::uint32_t kSymtab = 2;
constexpr unsigned kFunc = 2;
constexpr std::uint16_t kRelocatable = 1;

std::string c_string(const std::vector<char>& f, std::size_t off) {
  if (off >= f.size()) return "";
  const char* p = f.data() + off;
  return std::string(p, strnlen(p, f.size() - off));
}

}  // namespace

bool GuestSymbols::add_system_map(const std::string& path) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  std::size_t added = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string addr, type, name;
    if (!(ls >> addr >> type >> name) || type.size() != 1) continue;
    const char t = type[0];
    if (t != 't' && t != 'T' && t != 'W' && t != 'w') continue;
    // Linker marks and ARM mapping symbols ($a, $d) are not functions.
    if (name.empty() || name[0] == '$' || name.rfind("__crc_", 0) == 0) continue;
    symbols_.push_back(
        {static_cast<std::uint32_t>(std::stoul(addr, nullptr, 16)), 0, name, "kernel"});
    ++added;
  }
  sorted_ = false;
  return added > 0;
}

bool GuestSymbols::add_elf(const std::string& path, const std::string& image,
                           std::uint32_t text_base) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  const std::vector<char> f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Elf32Header h;
  if (!read_at(f, 0, h) ||
      std::memcmp(h.ident,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      h.ident[4] != 1)
    return false;
  std::vector<Elf32Section> sections(h.shnum);
  for (std::size_t i = 0; i < h.shnum; ++i)
    if (!read_at(f, h.shoff + i * sizeof(Elf32Section), sections[i])) return false;
  if (h.shstrndx >= sections.size()) return false;
  std::uint16_t text = 0;  // the .text section's index (a module's symbols are relative to it)
  for (std::size_t i = 0; i < sections.size(); ++i)
    if (c_string(f, sections[h.shstrndx].offset + sections[i].name) == ".text")
      text = static_cast<std::uint16_t>(i);
  const bool relocatable = h.type == kRelocatable;
  std::size_t added = 0;
  for (const Elf32Section& s : sections) {
    if (s.type != kSymtab || s.link >= sections.size()) continue;
    const Elf32Section& strtab = sections[s.link];
    for (std::uint32_t off = 0; off + sizeof(Elf32Symbol) <= s.size; off += sizeof(Elf32Symbol)) {
      Elf32Symbol sym;
      if (!read_at(f, s.offset + off, sym)) break;
      if ((sym.info & 0xf) != kFunc || sym.shndx == 0) continue;
      if (relocatable && sym.shndx != text) continue;  // only .text's place is known
      const std::uint32_t at = (relocatable ? text_base + sym.value : sym.value) & ~1u;  // Thumb
      symbols_.push_back(
          {at, sym.size ? at + sym.size : 0, c_string(f, strtab.offset + sym.name), image});
      ++added;
    }
  }
  sorted_ = false;
  return added > 0;
}

void GuestSymbols::sort() const {
  if (sorted_) return;
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  sorted_ = true;
}

GuestSymbols::Hit GuestSymbols::lookup(std::uint32_t address) const {
  sort();
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](std::uint32_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return {"?", ""};
  const Symbol& s = *std::prev(it);
  // A sized symbol ends where its size says; past it (and past the last one) nothing is known.
  const bool inside = s.end ? address < s.end : it != symbols_.end();
  if (!inside) return {s.image == "kernel" ? "?" : s.image, ""};
  return {s.image, s.name};
}

}  // namespace vtoe::app
