#include "models/cpu/iss/guest_memory.h"

#include <cstdio>

namespace vtoe::cpu::iss {

namespace {
std::string fault_text(uint32_t addr, bool write, bool fetch) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s unmapped address 0x%08x",
                fetch ? "instruction fetch from" : write ? "write to" : "read from", addr);
  return buf;
}
}  // namespace

GuestFault::GuestFault(uint32_t a, bool w, bool f)
    : std::runtime_error(fault_text(a, w, f)), addr(a), write(w), fetch(f) {}

GuestMemory::GuestMemory() : pages_(kPages, nullptr), code_(kPages, 0) {}

GuestMemory::~GuestMemory() {
  for (uint8_t* p : pages_) delete[] p;
}

void GuestMemory::map(uint32_t addr, uint32_t len) {
  if (len == 0) return;
  uint64_t first = addr >> kPageBits;
  uint64_t last = (uint64_t{addr} + len - 1) >> kPageBits;
  for (uint64_t p = first; p <= last && p < kPages; ++p) {
    if (!pages_[p]) pages_[p] = new uint8_t[kPageSize]();
  }
}

void GuestMemory::unmap(uint32_t addr, uint32_t len) {
  uint64_t first = (uint64_t{addr} + kPageSize - 1) >> kPageBits;
  uint64_t end = (uint64_t{addr} + len) >> kPageBits;
  for (uint64_t p = first; p < end && p < kPages; ++p) {
    if (code_[p]) code_written(static_cast<uint32_t>(p));
    delete[] pages_[p];
    pages_[p] = nullptr;
  }
}

bool GuestMemory::free_range(uint32_t addr, uint32_t len) const {
  if (len == 0) return true;
  uint64_t first = addr >> kPageBits;
  uint64_t last = (uint64_t{addr} + len - 1) >> kPageBits;
  if (last >= kPages) return false;
  for (uint64_t p = first; p <= last; ++p) {
    if (pages_[p]) return false;
  }
  return true;
}

void GuestMemory::code_written(uint32_t page) {
  code_[page] = 0;
  if (on_code_write_) on_code_write_(page);
}

uint16_t GuestMemory::fetch16(uint32_t a) const {
  if (!pages_[a >> kPageBits]) throw GuestFault(a, false, true);
  return load<uint16_t>(a);
}

uint32_t GuestMemory::fetch32(uint32_t a) const {
  if (!pages_[a >> kPageBits] || !pages_[(a + 3) >> kPageBits]) throw GuestFault(a, false, true);
  return load<uint32_t>(a);
}

void GuestMemory::read(uint32_t addr, void* dst, uint32_t len) const {
  auto* out = static_cast<uint8_t*>(dst);
  while (len > 0) {
    uint32_t in_page = kPageSize - (addr & (kPageSize - 1));
    uint32_t n = len < in_page ? len : in_page;
    std::memcpy(out, host(addr, false), n);
    out += n;
    addr += n;
    len -= n;
  }
}

void GuestMemory::write(uint32_t addr, const void* src, uint32_t len) {
  auto* in = static_cast<const uint8_t*>(src);
  while (len > 0) {
    uint32_t in_page = kPageSize - (addr & (kPageSize - 1));
    uint32_t n = len < in_page ? len : in_page;
    std::memcpy(host_w(addr), in, n);
    in += n;
    addr += n;
    len -= n;
  }
}

std::string GuestMemory::read_string(uint32_t addr, uint32_t max) const {
  std::string s;
  for (uint32_t i = 0; i < max; ++i) {
    char c = static_cast<char>(read8(addr + i));
    if (c == 0) break;
    s.push_back(c);
  }
  return s;
}

}  // namespace vtoe::cpu::iss
