// ISS loader and syscall emulation without a cross compiler: a minimal ELF written by the test,
// the initial stack and auxiliary vector, brk/mmap/uname/set_tls, unknown system calls, and the
// loader's errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "models/cpu/iss/arm_core.h"
#include "models/cpu/iss/elf_loader.h"
#include "models/cpu/iss/linux_process.h"

using namespace vtoe::cpu::iss;

namespace {

constexpr uint32_t kBase = 0x10000;
constexpr uint32_t kEntry = kBase + 52 + 32;

void put16(std::vector<uint8_t>& b, size_t off, uint16_t v) { std::memcpy(&b[off], &v, 2); }
void put32(std::vector<uint8_t>& b, size_t off, uint32_t v) { std::memcpy(&b[off], &v, 4); }

// A static ARM executable: ELF header, one PT_LOAD (plus `extra` program headers), then `code`.
std::vector<uint8_t> make_elf(const std::vector<uint32_t>& code, uint32_t extra_type = 0) {
  uint16_t phnum = extra_type ? 2 : 1;
  size_t code_off = 52 + 32 * phnum;
  std::vector<uint8_t> b(code_off + code.size() * 4, 0);
  const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 1, 1, 1, 0};
  std::memcpy(b.data(), ident, sizeof ident);
  put16(b, 16, 2);    // ET_EXEC
  put16(b, 18, 40);   // EM_ARM
  put32(b, 20, 1);
  put32(b, 24, kBase + static_cast<uint32_t>(code_off));
  put32(b, 28, 52);   // e_phoff
  put32(b, 36, 0x05000400);
  put16(b, 40, 52);
  put16(b, 42, 32);
  put16(b, 44, phnum);
  put32(b, 52, 1);    // PT_LOAD
  put32(b, 56, 0);
  put32(b, 60, kBase);
  put32(b, 64, kBase);
  put32(b, 68, static_cast<uint32_t>(b.size()));
  put32(b, 72, static_cast<uint32_t>(b.size()) + 0x2000);  // and some bss
  put32(b, 76, 5);
  put32(b, 80, 0x1000);
  if (extra_type) put32(b, 84, extra_type);
  for (size_t i = 0; i < code.size(); ++i) put32(b, code_off + 4 * i, code[i]);
  return b;
}

std::string write_file(const std::string& name, const std::vector<uint8_t>& bytes) {
  // ctest runs the tests of this file as parallel processes: one file each.
  const std::string path = ::testing::TempDir() + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::string load_error(const std::vector<uint8_t>& bytes) {
  PagedMemory mem;
  try {
    ElfLoader::load(write_file("bad.elf", bytes), mem);
  } catch (const ElfError& e) {
    return e.what();
  }
  return "<loaded>";
}

class IssLinux : public ::testing::Test {
 protected:
  // exit_group(argc + 40)
  const std::vector<uint32_t> exit_code = {0xe59d0000, 0xe2800028, 0xe3a070f8, 0xef000000};
  PagedMemory mem;
  ArmCore core{mem};
  LinuxProcess proc{mem, core};

  void load(const std::vector<std::string>& args, const std::vector<std::string>& env = {"A=1"}) {
    proc.load(write_file("prog.elf", make_elf(exit_code)), args, env);
  }
  int32_t call(uint32_t nr, std::vector<uint32_t> args) {
    args.resize(6, 0);
    for (int i = 0; i < 6; ++i) core.set_reg(i, args[i]);
    core.set_reg(7, nr);
    proc.svc(core, 0);
    return static_cast<int32_t>(core.reg(0));
  }
};

TEST_F(IssLinux, RunsToExitWithItsStatus) {
  load({"prog", "a", "b"});
  EXPECT_EQ(core.pc(), kEntry);
  EXPECT_FALSE(core.thumb());
  core.run();
  EXPECT_TRUE(proc.exited());
  EXPECT_EQ(proc.exit_status(), 43);
  EXPECT_EQ(core.retired(), 4u);
}

TEST_F(IssLinux, InitialStackIsLinuxs) {
  load({"prog", "arg one"}, {"HOME=/x", "LC_ALL=C"});
  uint32_t sp = core.reg(13);
  EXPECT_EQ(sp % 8, 0u);
  EXPECT_EQ(mem.read32(sp), 2u);  // argc
  EXPECT_EQ(mem.read_string(mem.read32(sp + 4)), "prog");
  EXPECT_EQ(mem.read_string(mem.read32(sp + 8)), "arg one");
  EXPECT_EQ(mem.read32(sp + 12), 0u);
  EXPECT_EQ(mem.read_string(mem.read32(sp + 16)), "HOME=/x");
  EXPECT_EQ(mem.read_string(mem.read32(sp + 20)), "LC_ALL=C");
  EXPECT_EQ(mem.read32(sp + 24), 0u);
  std::map<uint32_t, uint32_t> aux;
  for (uint32_t a = sp + 28;; a += 8) {
    uint32_t type = mem.read32(a);
    if (type == 0) break;
    aux[type] = mem.read32(a + 4);
  }
  EXPECT_EQ(aux.at(6), 4096u);          // AT_PAGESZ
  EXPECT_EQ(aux.at(9), kEntry);         // AT_ENTRY
  EXPECT_EQ(aux.at(3), kBase + 52);     // AT_PHDR
  EXPECT_EQ(aux.at(4), 32u);            // AT_PHENT
  EXPECT_EQ(aux.at(5), 1u);             // AT_PHNUM
  EXPECT_TRUE(aux.at(16) & (1u << 6));  // AT_HWCAP: VFP
  EXPECT_TRUE(aux.at(16) & (1u << 13));  // VFPv3
  EXPECT_FALSE(aux.at(16) & (1u << 12));  // no NEON
  EXPECT_EQ(aux.at(26), 0u);            // AT_HWCAP2
  EXPECT_EQ(mem.read_string(aux.at(15)), "v7l");  // AT_PLATFORM
  EXPECT_TRUE(mem.mapped(aux.at(25)) && mem.mapped(aux.at(25) + 15));  // AT_RANDOM
  EXPECT_EQ(mem.read_string(aux.at(31)).substr(0, 1), "/");  // AT_EXECFN
  EXPECT_EQ(mem.read32(0xffff0ffc), 5u);  // kernel user helpers: version
  EXPECT_EQ(mem.read32(0xffff0fe0), 0xee1d0f70u);  // __kuser_get_tls: mrc p15 TPIDRURO
}

TEST_F(IssLinux, BrkAndMmap) {
  load({"prog"});
  int32_t brk0 = call(45, {0});
  EXPECT_EQ(brk0 % 4096, 0);
  EXPECT_GT(static_cast<uint32_t>(brk0), kBase);
  EXPECT_EQ(call(45, {static_cast<uint32_t>(brk0) + 10000}), brk0 + 10000);
  mem.write32(static_cast<uint32_t>(brk0) + 9996, 7);  // mapped now
  EXPECT_EQ(call(45, {static_cast<uint32_t>(brk0)}), brk0);
  EXPECT_FALSE(mem.mapped(static_cast<uint32_t>(brk0) + 4096));
  int32_t m = call(192, {0, 100000, 3, 0x22, 0xffffffff, 0});  // mmap2 anonymous private
  EXPECT_GE(static_cast<uint32_t>(m), LinuxProcess::kMmapBase);
  EXPECT_EQ(mem.read32(static_cast<uint32_t>(m) + 99996), 0u);
  int32_t m2 = call(192, {0, 4096, 3, 0x22, 0xffffffff, 0});
  EXPECT_GE(m2, m + 100000);
  EXPECT_EQ(call(91, {static_cast<uint32_t>(m), 100000}), 0);  // munmap
  EXPECT_FALSE(mem.mapped(static_cast<uint32_t>(m)));
  EXPECT_EQ(call(192, {0, 0, 3, 0x22, 0xffffffff, 0}), -22);  // EINVAL
}

TEST_F(IssLinux, UnameTlsAndUnknownCalls) {
  load({"prog"});
  uint32_t buf = LinuxProcess::kStackTop - 0x100000;
  EXPECT_EQ(call(122, {buf}), 0);
  EXPECT_EQ(mem.read_string(buf), "Linux");
  EXPECT_EQ(mem.read_string(buf + 65 * 4), "armv7l");
  EXPECT_EQ(call(0xf0005, {0x12340000}), 0);  // set_tls
  EXPECT_EQ(core.tls(), 0x12340000u);
  EXPECT_EQ(call(338, {0, 0}), -38);  // set_robust_list: ENOSYS, as qemu-arm
  EXPECT_EQ(call(122, {0x100}), -14);  // uname into unmapped memory: EFAULT
  EXPECT_EQ(call(4, {1, 0x100, 10}), -14);  // write from unmapped memory
  try {
    call(9999, {});
    FAIL() << "no error";
  } catch (const UnknownSyscall& e) {
    EXPECT_EQ(e.number, 9999u);
    EXPECT_NE(std::string(e.what()).find("unknown system call 9999"), std::string::npos);
  }
}

TEST(IssElf, BadFilesAreRejectedWithAReason) {
  std::vector<uint32_t> code = {0xef000000};
  EXPECT_EQ(load_error(make_elf(code)), "<loaded>");
  std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o'};
  EXPECT_NE(load_error(text).find("not an ELF file"), std::string::npos);
  auto elf = make_elf(code);
  EXPECT_NE(load_error({elf.begin(), elf.begin() + 40}).find("truncated ELF header"),
            std::string::npos);
  EXPECT_NE(load_error({elf.begin(), elf.begin() + 60}).find("truncated program headers"),
            std::string::npos);
  auto x86 = elf;
  put16(x86, 18, 3);
  EXPECT_NE(load_error(x86).find("not an ARM ELF (e_machine 3)"), std::string::npos);
  auto elf64 = elf;
  elf64[4] = 2;
  EXPECT_NE(load_error(elf64).find("not a 32-bit ELF"), std::string::npos);
  auto big = elf;
  big[5] = 2;
  EXPECT_NE(load_error(big).find("little-endian"), std::string::npos);
  EXPECT_NE(load_error(make_elf(code, 3)).find("dynamically linked"), std::string::npos);
  auto pie = elf;
  put16(pie, 16, 3);
  EXPECT_NE(load_error(pie).find("position-independent"), std::string::npos);
  auto cut = elf;
  put32(cut, 68, 4096);  // filesz beyond the file
  put32(cut, 72, 8192);
  EXPECT_NE(load_error(cut).find("truncated segment 0"), std::string::npos);
  PagedMemory mem;
  EXPECT_THROW(ElfLoader::load("/nonexistent/prog", mem), ElfError);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
