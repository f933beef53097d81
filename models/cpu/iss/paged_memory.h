// Flat, sparse 32-bit guest address space for the ISS: 4 KiB pages allocated on demand.
//
// An access to an unmapped page throws GuestFault with the address (never a host crash). Pages
// that hold decoded instructions are marked; a write to such a page tells the listener, so the
// core drops its decoded instructions for that page (self-modifying code, loaders).
//
// On a bus (the TLM-2.0 face) the page table is a DMI cache: attach() lends it host memory a
// target granted (pages the memory does not own), detach() takes it back, and an access to a page
// without host memory goes to the MemoryBackend (b_transport) before it is a fault.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace vtoe::cpu::iss {

// A guest access to unmapped memory.
class GuestFault : public std::runtime_error {
 public:
  GuestFault(uint32_t addr, bool write, bool fetch);
  uint32_t addr;
  bool write;
  bool fetch;
};

// Accesses to pages without host memory: a bus. Returns false when nothing answers at `addr`.
class MemoryBackend {
 public:
  virtual ~MemoryBackend() = default;
  // [addr, addr + len) never crosses a page boundary.
  virtual bool read(uint32_t addr, void* dst, uint32_t len, bool fetch) = 0;
  virtual bool write(uint32_t addr, const void* src, uint32_t len) = 0;
};

class PagedMemory {
 public:
  static constexpr uint32_t kPageBits = 12;
  static constexpr uint32_t kPageSize = 1u << kPageBits;
  static constexpr uint32_t kPages = 1u << (32 - kPageBits);

  PagedMemory();
  ~PagedMemory();
  PagedMemory(const PagedMemory&) = delete;
  PagedMemory& operator=(const PagedMemory&) = delete;

  // Maps [addr, addr+len) rounded out to pages; pages already mapped keep their contents.
  void map(uint32_t addr, uint32_t len);
  // Unmaps the pages wholly inside [addr, addr+len).
  void unmap(uint32_t addr, uint32_t len);
  // Host memory behind addr (owned or attached).
  bool mapped(uint32_t addr) const { return pages_[addr >> kPageBits] != nullptr; }
  // True when every page of [addr, addr+len) is unmapped.
  bool free_range(uint32_t addr, uint32_t len) const;

  // Lends the pages wholly inside [addr, addr + len) host memory at `host` (the byte at addr, which
  // must be page-aligned); pages the memory owns are left alone. Returns how many were attached.
  uint32_t attach(uint32_t addr, uint64_t len, uint8_t* host);
  // Takes back the attached pages that overlap [addr, addr + len); their decoded code is dropped.
  void detach(uint32_t addr, uint64_t len);
  uint32_t attached_pages() const { return attached_count_; }
  void set_backend(MemoryBackend* b) { backend_ = b; }
  bool has_backend() const { return backend_ != nullptr; }

  uint8_t read8(uint32_t a) const { return load<uint8_t>(a); }
  uint16_t read16(uint32_t a) const { return load<uint16_t>(a); }
  uint32_t read32(uint32_t a) const { return load<uint32_t>(a); }
  uint64_t read64(uint32_t a) const { return load<uint64_t>(a); }
  void write8(uint32_t a, uint8_t v) { store(a, v); }
  void write16(uint32_t a, uint16_t v) { store(a, v); }
  void write32(uint32_t a, uint32_t v) { store(a, v); }
  void write64(uint32_t a, uint64_t v) { store(a, v); }
  // Instruction fetch: faults are reported as prefetch faults.
  uint16_t fetch16(uint32_t a) const;
  uint32_t fetch32(uint32_t a) const;
  void fetch(uint32_t addr, void* dst, uint32_t len) const;

  void read(uint32_t addr, void* dst, uint32_t len) const;
  void write(uint32_t addr, const void* src, uint32_t len);
  // Reads a NUL-terminated string of at most max bytes.
  std::string read_string(uint32_t addr, uint32_t max = 4096) const;

  // Code pages: a write to a marked page calls the listener with the page number, then unmarks it.
  void mark_code(uint32_t page) { code_[page] = 1; }
  // Unmarks without telling the listener (a peer core's write already dropped the code).
  void unmark_code(uint32_t page) { code_[page] = 0; }
  void set_code_write_listener(std::function<void(uint32_t page)> f) { on_code_write_ = f; }
  bool is_code(uint32_t page) const { return code_[page] != 0; }
  // Host memory of a page (null: none), for a core's software TLB. unmap() and detach() take
  // host memory away: the listener hears of it first, so that no cached pointer outlives it.
  uint8_t* host_page(uint32_t page) const { return pages_[page]; }
  void set_unmap_listener(std::function<void()> f) { on_unmap_ = std::move(f); }

 private:
  void copy_out(uint32_t addr, void* dst, uint32_t len, bool is_fetch) const;
  void code_written(uint32_t page);
  // The fast paths: host memory, within one page (and for stores, not code). Everything else
  // (page crossings, code pages, the bus, faults) goes through read() and write().
  template <typename T>
  T load(uint32_t a) const {
    T v;
    const uint8_t* p = pages_[a >> kPageBits];
    if (p && (a & (kPageSize - 1)) <= kPageSize - sizeof(T)) {
      std::memcpy(&v, p + (a & (kPageSize - 1)), sizeof(T));
    } else {
      read(a, &v, sizeof(T));
    }
    return v;
  }
  template <typename T>
  void store(uint32_t a, T v) {
    uint32_t page = a >> kPageBits;
    uint8_t* p = pages_[page];
    if (p && !code_[page] && (a & (kPageSize - 1)) <= kPageSize - sizeof(T)) {
      std::memcpy(p + (a & (kPageSize - 1)), &v, sizeof(T));
    } else {
      write(a, &v, sizeof(T));
    }
  }

  std::vector<uint8_t*> pages_;
  std::vector<uint8_t> code_;
  std::vector<uint8_t> attached_;  // 1: the page's host memory is lent (not ours to free)
  uint32_t attached_count_ = 0;
  MemoryBackend* backend_ = nullptr;
  std::function<void(uint32_t)> on_code_write_;
  std::function<void()> on_unmap_;
};

}  // namespace vtoe::cpu::iss
