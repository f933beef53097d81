// Syscall-emulation mode: one static ARM Linux program on an ArmCore, with the Linux EABI system
// calls (SVC 0, number in r7) served by the host.
//
// load() maps the ELF, builds the initial stack as Linux does (argc, argv, envp, auxiliary vector
// with AT_PHDR, AT_ENTRY, AT_RANDOM, AT_HWCAP without NEON, AT_PLATFORM "v7l", ...) and sets the
// entry point, and maps the kernel user helpers at 0xffff0f60-0xffff0fff. File descriptors are
// the host's (as in qemu-arm's user mode). A system call this
// layer does not know stops the run with an UnknownSyscall error naming its number.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/cpu/iss/arm_core.h"
#include "models/cpu/iss/elf_loader.h"
#include "models/cpu/iss/paged_memory.h"

namespace vtoe::cpu::iss {

class UnknownSyscall : public std::runtime_error {
 public:
  UnknownSyscall(uint32_t number, uint32_t pc);
  uint32_t number;
};

class LinuxProcess : public SupervisorCall {
 public:
  // What the auxiliary vector announces: VFPv3-D16, integer divide, TLS register; no NEON.
  static constexpr uint32_t kHwcap = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 4) | (1u << 6) |
                                     (1u << 7) | (1u << 13) | (1u << 14) | (1u << 15) |
                                     (1u << 17) | (1u << 18);
  static constexpr uint32_t kStackTop = 0xbf000000u;
  static constexpr uint32_t kStackSize = 8u << 20;
  static constexpr uint32_t kMmapBase = 0x40000000u;

  LinuxProcess(PagedMemory& mem, ArmCore& core);
  ~LinuxProcess() override;

  // Loads the program (argv[0] is args[0]) and prepares the core to run it; throws ElfError.
  void load(const std::string& path, const std::vector<std::string>& args,
            const std::vector<std::string>& env);
  void svc(ArmCore& core, uint32_t imm) override;

  bool exited() const { return exited_; }
  int exit_status() const { return exit_status_; }
  const ElfImage& image() const { return image_; }

 private:
  int32_t syscall(uint32_t nr, const uint32_t* a);
  int32_t do_mmap(uint32_t addr, uint32_t len, uint32_t prot, uint32_t flags, int32_t fd,
                  uint64_t offset);
  int32_t do_brk(uint32_t addr);
  int32_t do_open(int32_t dirfd, uint32_t path, uint32_t flags, uint32_t mode);
  int32_t do_stat64(int rc, const void* host_stat, uint32_t out);
  int32_t do_rw(bool write, int32_t fd, uint32_t buf, uint32_t len);
  int32_t do_rwv(bool write, int32_t fd, uint32_t iov, uint32_t cnt);
  void exit(int status);
  void map_kuser_helpers();

  PagedMemory& mem_;
  ArmCore& core_;
  ElfImage image_;
  std::string exe_path_;
  uint32_t brk_start_ = 0, brk_ = 0;
  uint32_t mmap_next_ = kMmapBase;
  bool exited_ = false;
  int exit_status_ = 0;
};

}  // namespace vtoe::cpu::iss
