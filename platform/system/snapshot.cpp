#include "platform/system/snapshot.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <type_traits>

namespace vtoe::platform::system {

namespace {

constexpr char kMagic[8] = {'V', 'T', 'O', 'E', 'S', 'N', 'A', 'P'};
// Bumped whenever the layout below changes (the key's binary changes with it anyway).
constexpr std::uint32_t kFormat = 2;                   // 2: ArmState holds the PMU
constexpr std::uint64_t kEnd = 0x444e452d50414e53ull;  // "SNAP-END"

static_assert(std::is_trivially_copyable_v<cpu::iss::IssCpu::Saved>);
static_assert(std::is_trivially_copyable_v<DeviceInputLog::Input>);

class Writer {
 public:
  explicit Writer(std::ofstream& f) : f_(f) {}
  void raw(const void* p, std::size_t n) { f_.write(static_cast<const char*>(p), n); }
  template <typename T>
  void pod(const T& v) {
    raw(&v, sizeof v);
  }
  template <typename T>
  void vec(const std::vector<T>& v) {
    pod(static_cast<std::uint64_t>(v.size()));
    raw(v.data(), v.size() * sizeof(T));
  }
  void str(const std::string& s) {
    pod(static_cast<std::uint64_t>(s.size()));
    raw(s.data(), s.size());
  }

 private:
  std::ofstream& f_;
};

class Reader {
 public:
  Reader(std::ifstream& f, const std::string& path) : f_(f), path_(path) {}
  void raw(void* p, std::size_t n) {
    f_.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
    if (!f_) fail("it ends early (a truncated file)");
  }
  template <typename T>
  void pod(T& v) {
    raw(&v, sizeof v);
  }
  template <typename T>
  void vec(std::vector<T>& v, std::uint64_t max) {
    std::uint64_t n = 0;
    pod(n);
    if (n > max) fail("a section claims " + std::to_string(n) + " entries");
    v.resize(n);
    raw(v.data(), n * sizeof(T));
  }
  void str(std::string& s, std::uint64_t max) {
    std::uint64_t n = 0;
    pod(n);
    if (n > max) fail("its key claims " + std::to_string(n) + " bytes");
    s.resize(n);
    raw(s.data(), n);
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw SnapshotError("snapshot " + path_ + ": " + why);
  }

 private:
  std::ifstream& f_;
  const std::string& path_;
};

void read_header(Reader& r, std::string& key) {
  char magic[sizeof kMagic];
  r.raw(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof magic) != 0) r.fail("not a vtoe snapshot");
  std::uint32_t format = 0;
  r.pod(format);
  if (format != kFormat)
    r.fail("format " + std::to_string(format) + ", this vtoe reads " + std::to_string(kFormat));
  r.str(key, 1u << 24);
}

}  // namespace

void save_snapshot(const Snapshot& s, const std::string& path) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f)
      throw SnapshotError("snapshot " + path + ": cannot write " + tmp + ": " +
                          std::strerror(errno));
    Writer w(f);
    w.raw(kMagic, sizeof kMagic);
    w.pod(kFormat);
    w.str(s.key);
    w.pod(s.time);
    w.pod(s.resolution);
    w.pod(s.cpu);
    w.pod(s.monitor_last);
    w.pod(s.monitor_asleep);
    w.vec(s.inputs);
    w.vec(s.input_bytes);
    w.pod(s.ram_size);
    w.vec(s.ram_pages);
    w.vec(s.ram_data);
    w.pod(kEnd);
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      throw SnapshotError("snapshot " + path + ": writing " + tmp + " failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw SnapshotError("snapshot " + path + ": cannot rename " + tmp + " into place: " + why);
  }
}

Snapshot load_snapshot(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw SnapshotError("snapshot " + path + ": cannot open: " + std::strerror(errno));
  Reader r(f, path);
  Snapshot s;
  read_header(r, s.key);
  r.pod(s.time);
  r.pod(s.resolution);
  r.pod(s.cpu);
  r.pod(s.monitor_last);
  r.pod(s.monitor_asleep);
  r.vec(s.inputs, 1ull << 28);
  r.vec(s.input_bytes, 1ull << 32);
  r.pod(s.ram_size);
  r.vec(s.ram_pages, s.ram_size / kSnapshotPage);
  r.vec(s.ram_data, s.ram_size);
  std::uint64_t end = 0;
  r.pod(end);
  if (end != kEnd) r.fail("its end marker is missing (a damaged file)");
  if (s.ram_data.size() != s.ram_pages.size() * kSnapshotPage)
    r.fail("its RAM pages and their contents differ in size");
  for (std::size_t i = 0; i < s.ram_pages.size(); ++i)
    if (s.ram_pages[i] >= s.ram_size / kSnapshotPage || (i && s.ram_pages[i] <= s.ram_pages[i - 1]))
      r.fail("its RAM page list is not ascending inside the RAM");
  for (const DeviceInputLog::Input& in : s.inputs)
    if (in.kind != DeviceInputLog::Input::Event &&
        (in.data > s.input_bytes.size() || in.length > s.input_bytes.size() - in.data))
      r.fail("an input's data lies outside the file's");
  return s;
}

std::string snapshot_key(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  Reader r(f, path);
  std::string key;
  try {
    read_header(r, key);
  } catch (const SnapshotError&) {
    return "";
  }
  return key;
}

}  // namespace vtoe::platform::system
