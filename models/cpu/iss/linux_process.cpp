#include "models/cpu/iss/linux_process.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <initializer_list>
#include <cstring>
#include <vector>

namespace vtoe::cpu::iss {

namespace {

constexpr uint32_t kPage = PagedMemory::kPageSize;
uint32_t page_up(uint32_t v) { return (v + kPage - 1) & ~(kPage - 1); }

// ARM EABI system-call numbers used here.
enum : uint32_t {
  kExit = 1, kRead = 3, kWrite = 4, kOpen = 5, kClose = 6, kUnlink = 10, kLseek = 19,
  kGetpid = 20, kAccess = 33, kKill = 37, kDup = 41, kBrk = 45, kIoctl = 54, kDup2 = 63,
  kGetppid = 64, kGetrusage = 77, kSysinfo = 116, kMremap = 163, kGetdents64 = 217, kGettimeofday = 78, kReadlink = 85, kMunmap = 91, kUname = 122,
  kMprotect = 125, kLlseek = 140, kReadv = 145, kWritev = 146, kSchedYield = 158,
  kNanosleep = 162, kRtSigreturn = 173, kRtSigaction = 174, kRtSigprocmask = 175,
  kGetcwd = 183, kSigaltstack = 186, kUgetrlimit = 191, kMmap2 = 192, kStat64 = 195,
  kLstat64 = 196, kFstat64 = 197, kGetuid32 = 199, kGetgid32 = 200, kGeteuid32 = 201,
  kGetegid32 = 202, kMadvise = 220, kFcntl64 = 221, kGettid = 224, kTkill = 238, kFutex = 240,
  kExitGroup = 248, kSetTidAddress = 256, kClockGettime = 263, kClockGetres = 264,
  kTgkill = 268, kOpenat = 322, kFstatat64 = 327, kUnlinkat = 328, kSetRobustList = 338,
  kDup3 = 358, kPrlimit64 = 369, kGetrandom = 384, kStatx = 397, kRseq = 398,
  kClockGettime64 = 403, kClockNanosleep64 = 407, kArmCacheflush = 0xf0002,
  kArmSetTls = 0xf0005, kArmGetTls = 0xf0006,
};

// Open flags whose values differ between ARM and x86.
constexpr uint32_t kArmODirectory = 040000, kArmONofollow = 0100000, kArmODirect = 0200000,
                   kArmOLargefile = 0400000;

std::string syscall_text(uint32_t nr, uint32_t pc) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "unknown system call %u (0x%x) at 0x%08x", nr, nr, pc);
  return buf;
}

int32_t err(int e) { return -e; }
int32_t ret(long r) { return r < 0 ? -errno : static_cast<int32_t>(r); }

}  // namespace

UnknownSyscall::UnknownSyscall(uint32_t nr, uint32_t pc)
    : std::runtime_error(syscall_text(nr, pc)), number(nr) {}

LinuxProcess::LinuxProcess(PagedMemory& mem, ArmCore& core) : mem_(mem), core_(core) {
  core_.set_svc_handler(this);
}

LinuxProcess::~LinuxProcess() { core_.set_svc_handler(nullptr); }

void LinuxProcess::load(const std::string& path, const std::vector<std::string>& args,
                        const std::vector<std::string>& env) {
  image_ = ElfLoader::load(path, mem_);
  char real[PATH_MAX];
  exe_path_ = realpath(path.c_str(), real) ? real : path;
  brk_start_ = brk_ = image_.brk;

  mem_.map(kStackTop - kStackSize, kStackSize);
  uint32_t sp = kStackTop;
  auto push_bytes = [&](const void* data, uint32_t len) {
    sp -= len;
    mem_.write(sp, data, len);
    return sp;
  };
  auto push_str = [&](const std::string& s) {
    return push_bytes(s.c_str(), static_cast<uint32_t>(s.size() + 1));
  };
  uint32_t execfn = push_str(path);
  std::vector<uint32_t> envp, argv;
  for (auto it = env.rbegin(); it != env.rend(); ++it) envp.insert(envp.begin(), push_str(*it));
  for (auto it = args.rbegin(); it != args.rend(); ++it) argv.insert(argv.begin(), push_str(*it));
  uint32_t platform = push_str("v7l");
  uint8_t random[16];
  if (getrandom(random, sizeof random, 0) != sizeof random) {
    std::memset(random, 0x5a, sizeof random);
  }
  uint32_t at_random = push_bytes(random, sizeof random);
  sp &= ~15u;

  std::vector<uint32_t> auxv = {
      3, image_.phdr, 4, image_.phent, 5, image_.phnum, 6, kPage, 7, 0, 8, 0,
      9, image_.entry, 11, static_cast<uint32_t>(getuid()), 12, static_cast<uint32_t>(geteuid()),
      13, static_cast<uint32_t>(getgid()), 14, static_cast<uint32_t>(getegid()),
      15, platform, 16, kHwcap, 17, 100, 23, 0, 25, at_random, 26, 0, 31, execfn, 0, 0};
  std::vector<uint32_t> words;
  words.push_back(static_cast<uint32_t>(argv.size()));
  words.insert(words.end(), argv.begin(), argv.end());
  words.push_back(0);
  words.insert(words.end(), envp.begin(), envp.end());
  words.push_back(0);
  words.insert(words.end(), auxv.begin(), auxv.end());
  sp -= static_cast<uint32_t>(words.size() * 4);
  sp &= ~15u;
  mem_.write(sp, words.data(), static_cast<uint32_t>(words.size() * 4));

  core_.set_reg(13, sp);
  core_.set_pc(image_.entry);
  map_kuser_helpers();
}

// The kernel-provided user helpers at the top of memory (Documentation/arm/kernel_user_helpers
// in Linux), which code built for ARMv5/v6 calls for atomics and TLS (libgcc's __sync_*):
// the same instruction sequences Linux uses on ARMv7, in A32.
void LinuxProcess::map_kuser_helpers() {
  constexpr uint32_t kBase = 0xffff0000u;
  mem_.map(kBase, kPage);
  auto put = [&](uint32_t off, std::initializer_list<uint32_t> code) {
    uint32_t a = kBase + off;
    for (uint32_t w : code) {
      mem_.write32(a, w);
      a += 4;
    }
  };
  // __kuser_cmpxchg64 (r0 = &old, r1 = &new, r2 = ptr; r0 = 0 and C set when swapped)
  put(0xf60, {0xe92d00f0, 0xe1c040d0, 0xe1c160d0, 0xe1b20f9f, 0xe0303004, 0x00313005,
              0x01a23f96, 0x03330001, 0x0afffff9, 0xe2730000, 0xe8bd00f0, 0xe12fff1e});
  put(0xfa0, {0xf57ff05b, 0xe12fff1e});  // __kuser_memory_barrier: dmb ish; bx lr
  // __kuser_cmpxchg (r0 = old, r1 = new, r2 = ptr)
  put(0xfc0, {0xe1923f9f, 0xe0533000, 0x01823f91, 0x03330001, 0x0afffffa, 0xe2730000,
              0xe12fff1e});
  put(0xfe0, {0xee1d0f70, 0xe12fff1e});  // __kuser_get_tls: mrc p15 TPIDRURO; bx lr
  put(0xffc, {5});                       // __kuser_helper_version: five helpers
}

void LinuxProcess::exit(int status) {
  exited_ = true;
  exit_status_ = status & 0xff;
  core_.halt();
}

void LinuxProcess::svc(ArmCore& core, uint32_t imm) {
  (void)imm;  // EABI: the number is in r7, the immediate is ignored
  uint32_t a[6];
  for (int i = 0; i < 6; ++i) a[i] = core.reg(i);
  int32_t r;
  try {
    r = syscall(core.reg(7), a);
  } catch (const GuestFault&) {
    r = -EFAULT;  // a bad pointer argument fails the call, as in Linux; the program goes on
  }
  if (!exited_) core.set_reg(0, static_cast<uint32_t>(r));
}

int32_t LinuxProcess::do_rw(bool write, int32_t fd, uint32_t buf, uint32_t len) {
  std::vector<uint8_t> tmp(len);
  if (write) {
    mem_.read(buf, tmp.data(), len);
    return ret(::write(fd, tmp.data(), len));
  }
  ssize_t n = ::read(fd, tmp.data(), len);
  if (n > 0) mem_.write(buf, tmp.data(), static_cast<uint32_t>(n));
  return ret(n);
}

int32_t LinuxProcess::do_rwv(bool write, int32_t fd, uint32_t iov, uint32_t cnt) {
  if (cnt > 1024) return err(EINVAL);
  int32_t total = 0;
  for (uint32_t i = 0; i < cnt; ++i) {
    uint32_t base = mem_.read32(iov + 8 * i), len = mem_.read32(iov + 8 * i + 4);
    if (len == 0) continue;
    int32_t n = do_rw(write, fd, base, len);
    if (n < 0) return total > 0 ? total : n;
    total += n;
    if (static_cast<uint32_t>(n) < len) break;
  }
  return total;
}

int32_t LinuxProcess::do_open(int32_t dirfd, uint32_t path, uint32_t flags, uint32_t mode) {
  std::string p = mem_.read_string(path);
  uint32_t f = flags & ~(kArmODirectory | kArmONofollow | kArmODirect | kArmOLargefile);
  if (flags & kArmODirectory) f |= O_DIRECTORY;
  if (flags & kArmONofollow) f |= O_NOFOLLOW;
  if (flags & kArmODirect) f |= O_DIRECT;
  return ret(::openat(dirfd, p.c_str(), static_cast<int>(f), mode));
}

// struct stat64 of the ARM EABI (104 bytes).
int32_t LinuxProcess::do_stat64(int rc, const void* host_stat, uint32_t out) {
  if (rc < 0) return -errno;
  const auto& st = *static_cast<const struct stat*>(host_stat);
  uint8_t b[104] = {};
  auto put32 = [&](int off, uint32_t v) { std::memcpy(b + off, &v, 4); };
  auto put64 = [&](int off, uint64_t v) { std::memcpy(b + off, &v, 8); };
  put64(0, st.st_dev);
  put32(12, static_cast<uint32_t>(st.st_ino));
  put32(16, st.st_mode);
  put32(20, static_cast<uint32_t>(st.st_nlink));
  put32(24, st.st_uid);
  put32(28, st.st_gid);
  put64(32, st.st_rdev);
  put64(48, static_cast<uint64_t>(st.st_size));
  put32(56, static_cast<uint32_t>(st.st_blksize));
  put64(64, static_cast<uint64_t>(st.st_blocks));
  put32(72, static_cast<uint32_t>(st.st_atim.tv_sec));
  put32(76, static_cast<uint32_t>(st.st_atim.tv_nsec));
  put32(80, static_cast<uint32_t>(st.st_mtim.tv_sec));
  put32(84, static_cast<uint32_t>(st.st_mtim.tv_nsec));
  put32(88, static_cast<uint32_t>(st.st_ctim.tv_sec));
  put32(92, static_cast<uint32_t>(st.st_ctim.tv_nsec));
  put64(96, st.st_ino);
  mem_.write(out, b, sizeof b);
  return 0;
}

int32_t LinuxProcess::do_brk(uint32_t addr) {
  if (addr < brk_start_) return static_cast<int32_t>(brk_);
  uint32_t old_end = page_up(brk_), new_end = page_up(addr);
  if (new_end > old_end) {
    if (!mem_.free_range(old_end, new_end - old_end)) return static_cast<int32_t>(brk_);
    mem_.map(old_end, new_end - old_end);
  } else if (new_end < old_end) {
    mem_.unmap(new_end, old_end - new_end);
  }
  brk_ = addr;
  return static_cast<int32_t>(brk_);
}

int32_t LinuxProcess::do_mmap(uint32_t addr, uint32_t len, uint32_t prot, uint32_t flags,
                              int32_t fd, uint64_t offset) {
  (void)prot;
  constexpr uint32_t kFixed = 0x10, kAnon = 0x20;
  if (len == 0) return err(EINVAL);
  uint32_t size = page_up(len);
  if (size == 0) return err(ENOMEM);
  uint32_t at;
  if (flags & kFixed) {
    if (addr & (kPage - 1)) return err(EINVAL);
    at = addr;
    mem_.unmap(at, size);
  } else {
    // First free range at or above the hint (or the mmap base), like a bottom-up allocator.
    uint32_t start = addr && !(addr & (kPage - 1)) ? addr : mmap_next_;
    at = 0;
    for (uint64_t s = start; s + size <= 0xbe000000ull; s += kPage) {
      if (mem_.free_range(static_cast<uint32_t>(s), size)) {
        at = static_cast<uint32_t>(s);
        break;
      }
    }
    if (at == 0) return err(ENOMEM);
    if (!addr) mmap_next_ = at + size;
  }
  mem_.map(at, size);
  if (!(flags & kAnon)) {
    std::vector<uint8_t> buf(size);
    ssize_t n = ::pread(fd, buf.data(), size, static_cast<off_t>(offset));
    if (n < 0) {
      int e = errno;
      mem_.unmap(at, size);
      return err(e);
    }
    mem_.write(at, buf.data(), static_cast<uint32_t>(n));
  }
  return static_cast<int32_t>(at);
}

int32_t LinuxProcess::syscall(uint32_t nr, const uint32_t* a) {
  auto s = [&](int i) { return static_cast<int32_t>(a[i]); };
  switch (nr) {
    case kExit:
    case kExitGroup:
      exit(s(0));
      return 0;
    case kRead: return do_rw(false, s(0), a[1], a[2]);
    case kWrite: return do_rw(true, s(0), a[1], a[2]);
    case kReadv: return do_rwv(false, s(0), a[1], a[2]);
    case kWritev: return do_rwv(true, s(0), a[1], a[2]);
    case kOpen: return do_open(AT_FDCWD, a[0], a[1], a[2]);
    case kOpenat: return do_open(s(0), a[1], a[2], a[3]);
    case kClose: return s(0) <= 2 ? 0 : ret(::close(s(0)));  // keep the simulator's own stdio
    case kUnlink: return ret(::unlink(mem_.read_string(a[0]).c_str()));
    case kUnlinkat: return ret(::unlinkat(s(0), mem_.read_string(a[1]).c_str(), s(2)));
    case kAccess: return ret(::access(mem_.read_string(a[0]).c_str(), s(1)));
    case kLseek: return ret(::lseek(s(0), s(1), s(2)));
    case kLlseek: {
      off_t off = static_cast<off_t>((uint64_t{a[1]} << 32) | a[2]);
      off_t r = ::lseek(s(0), off, s(4));
      if (r < 0) return -errno;
      mem_.write64(a[3], static_cast<uint64_t>(r));
      return 0;
    }
    case kDup: return ret(::dup(s(0)));
    case kDup2: return ret(::dup2(s(0), s(1)));
    case kDup3: return ret(::dup3(s(0), s(1), s(2) ? O_CLOEXEC : 0));
    case kFcntl64:
      switch (a[1]) {
        case F_DUPFD: case F_GETFD: case F_SETFD: case F_GETFL: case F_DUPFD_CLOEXEC:
          return ret(::fcntl(s(0), s(1), s(2)));
        default:
          return err(EINVAL);
      }
    case kIoctl: {
      constexpr uint32_t kTcgets = 0x5401, kTiocgwinsz = 0x5413;
      if (a[1] == kTcgets || a[1] == kTiocgwinsz) {
        uint8_t buf[64] = {};
        int r = ::ioctl(s(0), a[1], buf);
        if (r < 0) return -errno;
        mem_.write(a[2], buf, a[1] == kTcgets ? 36 : 8);
        return 0;
      }
      return err(ENOTTY);
    }
    case kBrk: return do_brk(a[0]);
    case kMmap2: return do_mmap(a[0], a[1], a[2], a[3], s(4), uint64_t{a[5]} * 4096);
    case kMunmap:
      if (a[0] & (kPage - 1)) return err(EINVAL);
      mem_.unmap(a[0], page_up(a[1]));
      return 0;
    case kMremap: {
      constexpr uint32_t kMayMove = 1;
      uint32_t old = a[0], old_size = page_up(a[1]), new_size = page_up(a[2]);
      if ((old & (kPage - 1)) || new_size == 0 || (a[3] & ~kMayMove)) return err(EINVAL);
      if (new_size <= old_size) {
        mem_.unmap(old + new_size, old_size - new_size);
        return static_cast<int32_t>(old);
      }
      if (mem_.free_range(old + old_size, new_size - old_size)) {  // grow in place
        mem_.map(old + old_size, new_size - old_size);
        return static_cast<int32_t>(old);
      }
      if (!(a[3] & kMayMove)) return err(ENOMEM);
      int32_t at = do_mmap(0, new_size, 3, 0x22, -1, 0);
      if (static_cast<uint32_t>(at) > 0xfffff000u) return at;
      std::vector<uint8_t> buf(old_size);
      mem_.read(old, buf.data(), old_size);
      mem_.write(static_cast<uint32_t>(at), buf.data(), old_size);
      mem_.unmap(old, old_size);
      return at;
    }
    case kGetdents64: {
      // struct linux_dirent64 has the same layout on every architecture.
      std::vector<uint8_t> buf(a[2] < (1u << 20) ? a[2] : (1u << 20));
      long n = ::syscall(SYS_getdents64, s(0), buf.data(), buf.size());
      if (n < 0) return -errno;
      mem_.write(a[1], buf.data(), static_cast<uint32_t>(n));
      return static_cast<int32_t>(n);
    }
    case kGetrusage: {
      struct rusage ru;
      if (::getrusage(s(0), &ru) < 0) return -errno;
      uint32_t w[18] = {static_cast<uint32_t>(ru.ru_utime.tv_sec),
                        static_cast<uint32_t>(ru.ru_utime.tv_usec),
                        static_cast<uint32_t>(ru.ru_stime.tv_sec),
                        static_cast<uint32_t>(ru.ru_stime.tv_usec),
                        static_cast<uint32_t>(ru.ru_maxrss)};
      mem_.write(a[1], w, sizeof w);
      return 0;
    }
    case kMprotect:
    case kMadvise:
      return 0;  // no page protection in the flat guest memory
    case kUname: {
      struct utsname u;
      ::uname(&u);
      uint8_t b[65 * 6] = {};
      auto put = [&](int i, const char* str) {
        std::memcpy(b + 65 * i, str, std::min<size_t>(std::strlen(str), 64));
      };
      put(0, "Linux");
      put(1, u.nodename);
      put(2, u.release);
      put(3, u.version);
      put(4, "armv7l");
      put(5, "(none)");
      mem_.write(a[0], b, sizeof b);
      return 0;
    }
    case kSysinfo: {
      // struct sysinfo with 32-bit longs; memory in units that fit 32 bits.
      struct sysinfo si;
      if (::sysinfo(&si) < 0) return -errno;
      uint32_t scale = 1;
      while ((si.totalram * si.mem_unit) / scale > 0xffffffffull) scale *= 2;
      auto mem = [&](unsigned long v) {
        return static_cast<uint32_t>(uint64_t{v} * si.mem_unit / scale);
      };
      uint32_t w[16] = {static_cast<uint32_t>(si.uptime), static_cast<uint32_t>(si.loads[0]),
                        static_cast<uint32_t>(si.loads[1]), static_cast<uint32_t>(si.loads[2]),
                        mem(si.totalram), mem(si.freeram), mem(si.sharedram), mem(si.bufferram),
                        mem(si.totalswap), mem(si.freeswap), si.procs, 0, 0, scale, 0, 0};
      mem_.write(a[0], w, sizeof w);
      return 0;
    }
    case kGetpid: return static_cast<int32_t>(::getpid());
    case kGettid: return static_cast<int32_t>(::getpid());
    case kGetppid: return static_cast<int32_t>(::getppid());
    case kGetuid32: return static_cast<int32_t>(::getuid());
    case kGetgid32: return static_cast<int32_t>(::getgid());
    case kGeteuid32: return static_cast<int32_t>(::geteuid());
    case kGetegid32: return static_cast<int32_t>(::getegid());
    case kSetTidAddress: return static_cast<int32_t>(::getpid());
    case kSetRobustList: case kRseq: return err(ENOSYS);  // as qemu-arm answers
    case kRtSigaction:
      if (a[2]) {
        uint8_t zero[20] = {};
        mem_.write(a[2], zero, sizeof zero);
      }
      return 0;
    case kRtSigprocmask:
      if (a[2]) mem_.write64(a[2], 0);
      return 0;
    case kSigaltstack:
    case kSchedYield:
    case kNanosleep:
    case kClockNanosleep64:
      return 0;
    case kKill: case kTkill: case kTgkill: {
      int sig = s(nr == kTgkill ? 2 : 1);
      if (sig == 0) return 0;
      // The program signals itself (abort, raise): no handlers run in the guest, so the default
      // action happens to the simulator, which then ends as the program would.
      std::fflush(nullptr);
      ::signal(sig, SIG_DFL);
      ::raise(sig);
      return 0;
    }
    case kFutex: {
      uint32_t op = a[1] & 0x7f;
      return op == 1 ? 0 : err(EAGAIN);  // FUTEX_WAKE: nobody waits (one thread)
    }
    case kUgetrlimit:
    case kPrlimit64: {
      bool prl = nr == kPrlimit64;
      uint32_t res = prl ? a[1] : a[0];
      uint32_t out = prl ? a[3] : a[1];
      if (prl && a[2]) return err(EPERM);
      struct rlimit rl;
      if (::getrlimit(static_cast<int>(res), &rl) < 0) return -errno;
      if (!out) return 0;
      if (prl) {
        mem_.write64(out, rl.rlim_cur == RLIM_INFINITY ? ~0ull : rl.rlim_cur);
        mem_.write64(out + 8, rl.rlim_max == RLIM_INFINITY ? ~0ull : rl.rlim_max);
      } else {
        auto clamp = [](rlim_t v) {
          return v > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(v);
        };
        mem_.write32(out, clamp(rl.rlim_cur));
        mem_.write32(out + 4, clamp(rl.rlim_max));
      }
      return 0;
    }
    case kReadlink: {
      std::string p = mem_.read_string(a[0]);
      std::string target;
      if (p == "/proc/self/exe") {
        target = exe_path_;
      } else {
        char buf[PATH_MAX];
        ssize_t n = ::readlink(p.c_str(), buf, sizeof buf);
        if (n < 0) return -errno;
        target.assign(buf, static_cast<size_t>(n));
      }
      uint32_t len = static_cast<uint32_t>(target.size());
      uint32_t n = len < a[2] ? len : a[2];
      mem_.write(a[1], target.data(), n);
      return static_cast<int32_t>(n);
    }
    case kGetcwd: {
      char buf[PATH_MAX];
      if (!::getcwd(buf, sizeof buf)) return -errno;
      uint32_t n = static_cast<uint32_t>(std::strlen(buf) + 1);
      if (n > a[1]) return err(ERANGE);
      mem_.write(a[0], buf, n);
      return static_cast<int32_t>(n);
    }
    case kStat64: case kLstat64: {
      struct stat st;
      std::string p = mem_.read_string(a[0]);
      int rc = nr == kStat64 ? ::stat(p.c_str(), &st) : ::lstat(p.c_str(), &st);
      return do_stat64(rc, &st, a[1]);
    }
    case kFstat64: {
      struct stat st;
      return do_stat64(::fstat(s(0), &st), &st, a[1]);
    }
    case kFstatat64: {
      struct stat st;
      std::string p = mem_.read_string(a[1]);
      return do_stat64(::fstatat(s(0), p.c_str(), &st, s(3)), &st, a[2]);
    }
    case kStatx: {
      // struct statx has the same layout on every architecture.
      uint8_t buf[256];
      std::string p = mem_.read_string(a[1]);
      long r = ::syscall(SYS_statx, s(0), p.c_str(), s(2), a[3], buf);
      if (r < 0) return -errno;
      mem_.write(a[4], buf, 256);
      return 0;
    }
    case kGettimeofday: {
      struct timeval tv;
      ::gettimeofday(&tv, nullptr);
      if (a[0]) {
        mem_.write32(a[0], static_cast<uint32_t>(tv.tv_sec));
        mem_.write32(a[0] + 4, static_cast<uint32_t>(tv.tv_usec));
      }
      return 0;
    }
    case kClockGettime:
    case kClockGettime64:
    case kClockGetres: {
      struct timespec ts;
      int r = nr == kClockGetres ? ::clock_getres(s(0), &ts) : ::clock_gettime(s(0), &ts);
      if (r < 0) return -errno;
      if (!a[1]) return 0;
      if (nr == kClockGettime64) {
        mem_.write64(a[1], static_cast<uint64_t>(ts.tv_sec));
        mem_.write64(a[1] + 8, static_cast<uint64_t>(ts.tv_nsec));
      } else {
        mem_.write32(a[1], static_cast<uint32_t>(ts.tv_sec));
        mem_.write32(a[1] + 4, static_cast<uint32_t>(ts.tv_nsec));
      }
      return 0;
    }
    case kGetrandom: {
      std::vector<uint8_t> buf(a[1]);
      ssize_t n = ::getrandom(buf.data(), a[1], a[2] & 3);
      if (n < 0) return -errno;
      mem_.write(a[0], buf.data(), static_cast<uint32_t>(n));
      return static_cast<int32_t>(n);
    }
    case kArmCacheflush: return 0;  // decoded code is dropped on writes already
    case kArmSetTls:
      core_.set_tls(a[0]);
      return 0;
    case kArmGetTls: return static_cast<int32_t>(core_.tls());
    default:
      throw UnknownSyscall(nr, core_.pc());
  }
}

}  // namespace vtoe::cpu::iss
