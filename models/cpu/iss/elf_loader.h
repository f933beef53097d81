// Loader for static ARM Linux ELF32 executables into PagedMemory.
//
// Rejects, with a message naming the file and the reason, anything that is not a little-endian
// ELF32 ARM executable without an interpreter (non-ELF, non-ARM, dynamically linked, truncated).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/cpu/iss/paged_memory.h"

namespace vtoe::cpu::iss {

class ElfError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ElfImage {
  uint32_t entry = 0;     // entry point; bit 0 set means Thumb
  uint32_t phdr = 0;      // guest address of the program headers (AT_PHDR)
  uint32_t phent = 0;     // size of one program header
  uint32_t phnum = 0;     // number of program headers
  uint32_t brk = 0;       // end of the highest loaded segment, page aligned (initial brk)
  uint32_t low = 0;       // lowest loaded address
};

class ElfLoader {
 public:
  // Loads `path` into `mem`; throws ElfError.
  static ElfImage load(const std::string& path, PagedMemory& mem);
};

}  // namespace vtoe::cpu::iss
