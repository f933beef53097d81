#include "models/cpu/iss/paged_memory.h"

#include <cstdio>

namespace vtoe::cpu::iss {

namespace {
std::string fault_text(uint32_t addr, bool write, bool fetch) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s unmapped address 0x%08x",
                fetch   ? "instruction fetch from"
                : write ? "write to"
                        : "read from",
                addr);
  return buf;
}
}  // namespace

GuestFault::GuestFault(uint32_t a, bool w, bool f)
    : std::runtime_error(fault_text(a, w, f)), addr(a), write(w), fetch(f) {}

PagedMemory::PagedMemory() : pages_(kPages, nullptr), code_(kPages, 0), attached_(kPages, 0) {}

PagedMemory::~PagedMemory() {
  for (uint32_t p = 0; p < kPages; ++p) {
    if (pages_[p] && !attached_[p]) delete[] pages_[p];
  }
}

uint32_t PagedMemory::attach(uint32_t addr, uint64_t len, uint8_t* host) {
  if (addr & (kPageSize - 1)) throw std::invalid_argument("PagedMemory::attach: unaligned");
  uint64_t first = addr >> kPageBits, end = (uint64_t{addr} + len) >> kPageBits;
  uint32_t n = 0;
  for (uint64_t p = first; p < end && p < kPages; ++p) {
    uint8_t* h = host + (p - first) * kPageSize;
    if (pages_[p] && !attached_[p]) continue;  // our own page
    if (code_[p] && pages_[p] != h) code_written(static_cast<uint32_t>(p));
    if (!attached_[p]) ++attached_count_;
    pages_[p] = h;
    attached_[p] = 1;
    ++n;
  }
  return n;
}

void PagedMemory::detach(uint32_t addr, uint64_t len) {
  if (len == 0) return;
  if (on_unmap_) on_unmap_();
  uint64_t first = addr >> kPageBits, last = (uint64_t{addr} + len - 1) >> kPageBits;
  for (uint64_t p = first; p <= last && p < kPages; ++p) {
    if (!attached_[p]) continue;
    if (code_[p]) code_written(static_cast<uint32_t>(p));
    pages_[p] = nullptr;
    attached_[p] = 0;
    --attached_count_;
  }
}

void PagedMemory::map(uint32_t addr, uint32_t len) {
  if (len == 0) return;
  uint64_t first = addr >> kPageBits;
  uint64_t last = (uint64_t{addr} + len - 1) >> kPageBits;
  for (uint64_t p = first; p <= last && p < kPages; ++p) {
    if (!pages_[p]) pages_[p] = new uint8_t[kPageSize]();
  }
}

void PagedMemory::unmap(uint32_t addr, uint32_t len) {
  uint64_t first = (uint64_t{addr} + kPageSize - 1) >> kPageBits;
  uint64_t end = (uint64_t{addr} + len) >> kPageBits;
  if (first < end && on_unmap_) on_unmap_();
  for (uint64_t p = first; p < end && p < kPages; ++p) {
    if (code_[p]) code_written(static_cast<uint32_t>(p));
    if (attached_[p]) {
      attached_[p] = 0;
      --attached_count_;
    } else {
      delete[] pages_[p];
    }
    pages_[p] = nullptr;
  }
}

bool PagedMemory::free_range(uint32_t addr, uint32_t len) const {
  if (len == 0) return true;
  uint64_t first = addr >> kPageBits;
  uint64_t last = (uint64_t{addr} + len - 1) >> kPageBits;
  if (last >= kPages) return false;
  for (uint64_t p = first; p <= last; ++p) {
    if (pages_[p]) return false;
  }
  return true;
}

void PagedMemory::code_written(uint32_t page) {
  code_[page] = 0;
  if (on_code_write_) on_code_write_(page);
}

uint16_t PagedMemory::fetch16(uint32_t a) const {
  uint16_t v;
  fetch(a, &v, 2);
  return v;
}

uint32_t PagedMemory::fetch32(uint32_t a) const {
  uint32_t v;
  fetch(a, &v, 4);
  return v;
}

void PagedMemory::fetch(uint32_t addr, void* dst, uint32_t len) const {
  copy_out(addr, dst, len, true);
}

void PagedMemory::read(uint32_t addr, void* dst, uint32_t len) const {
  copy_out(addr, dst, len, false);
}

// Page by page: the core's own pages directly, the rest through the backend (a bus), else fault.
void PagedMemory::copy_out(uint32_t addr, void* dst, uint32_t len, bool is_fetch) const {
  auto* out = static_cast<uint8_t*>(dst);
  while (len > 0) {
    uint32_t off = addr & (kPageSize - 1), in_page = kPageSize - off;
    uint32_t n = len < in_page ? len : in_page;
    if (const uint8_t* p = pages_[addr >> kPageBits]) {
      std::memcpy(out, p + off, n);
    } else if (!backend_ || !backend_->read(addr, out, n, is_fetch)) {
      throw GuestFault(addr, false, is_fetch);
    }
    out += n;
    addr += n;
    len -= n;
  }
}

void PagedMemory::write(uint32_t addr, const void* src, uint32_t len) {
  auto* in = static_cast<const uint8_t*>(src);
  while (len > 0) {
    uint32_t page = addr >> kPageBits, off = addr & (kPageSize - 1), in_page = kPageSize - off;
    uint32_t n = len < in_page ? len : in_page;
    if (code_[page]) code_written(page);
    if (uint8_t* p = pages_[page]) {
      std::memcpy(p + off, in, n);
    } else if (!backend_ || !backend_->write(addr, in, n)) {
      throw GuestFault(addr, true, false);
    }
    in += n;
    addr += n;
    len -= n;
  }
}

std::string PagedMemory::read_string(uint32_t addr, uint32_t max) const {
  std::string s;
  for (uint32_t i = 0; i < max; ++i) {
    char c = static_cast<char>(read8(addr + i));
    if (c == 0) break;
    s.push_back(c);
  }
  return s;
}

}  // namespace vtoe::cpu::iss
