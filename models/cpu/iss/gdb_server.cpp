#include "models/cpu/iss/gdb_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace vtoe::cpu::iss {

namespace {

constexpr int kCpsrRegnum = 25;  // the ARM numbering GDB and QEMU use for cpsr

const char kTargetXml[] =
    "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
    "<target><architecture>arm</architecture>\n"
    "<feature name=\"org.gnu.gdb.arm.core\">\n"
    "<reg name=\"r0\" bitsize=\"32\"/><reg name=\"r1\" bitsize=\"32\"/>"
    "<reg name=\"r2\" bitsize=\"32\"/><reg name=\"r3\" bitsize=\"32\"/>"
    "<reg name=\"r4\" bitsize=\"32\"/><reg name=\"r5\" bitsize=\"32\"/>"
    "<reg name=\"r6\" bitsize=\"32\"/><reg name=\"r7\" bitsize=\"32\"/>"
    "<reg name=\"r8\" bitsize=\"32\"/><reg name=\"r9\" bitsize=\"32\"/>"
    "<reg name=\"r10\" bitsize=\"32\"/><reg name=\"r11\" bitsize=\"32\"/>"
    "<reg name=\"r12\" bitsize=\"32\"/>"
    "<reg name=\"sp\" bitsize=\"32\" type=\"data_ptr\"/>"
    "<reg name=\"lr\" bitsize=\"32\"/>"
    "<reg name=\"pc\" bitsize=\"32\" type=\"code_ptr\"/>"
    "<reg name=\"cpsr\" bitsize=\"32\" regnum=\"25\"/>\n"
    "</feature></target>\n";

std::string hex32(uint32_t v) {  // little-endian byte order, as the g packet carries it
  char buf[9];
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x", v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff,
                v >> 24);
  return buf;
}

bool parse_hex(const std::string& s, uint32_t& v) {
  if (s.empty() || s.size() > 8) return false;
  v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return false;
    v = (v << 4) | static_cast<uint32_t>(d);
  }
  return true;
}

uint32_t le32(const std::string& hex, size_t at) {  // 8 hex digits, little-endian bytes
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) {
    uint32_t b = 0;
    parse_hex(hex.substr(at + 2 * i, 2), b);
    v = (v << 8) | b;
  }
  return v;
}

}  // namespace

class GdbServer::CoreHook : public IssCpu::Debugger {
 public:
  CoreHook(GdbServer& s, int core) : s_(s), core_(core) {}
  void stopped(bool at_start) override { s_.stopped_on(core_, at_start); }
  bool breakpoint_at(uint32_t pc) const override { return s_.breakpoint_at(pc); }
  bool interrupted() override { return s_.interrupted(); }

 private:
  GdbServer& s_;
  int core_;
};

GdbServer::GdbServer(IssCpu& cpu, unsigned port, std::ostream& log)
    : GdbServer(std::vector<IssCpu*>{&cpu}, port, log) {}

IssCpu::Debugger& GdbServer::debugger(int i) {
  if (i == 0) return *this;
  return *hooks_.at(static_cast<std::size_t>(i - 1));
}

GdbServer::GdbServer(const std::vector<IssCpu*>& cpus, unsigned port, std::ostream& log)
    : cpus_(cpus), log_(log), port_(port) {
  if (cpus_.empty()) throw std::invalid_argument("--gdb: no core to debug");
  for (std::size_t i = 1; i < cpus_.size(); ++i)
    hooks_.push_back(std::make_unique<CoreHook>(*this, static_cast<int>(i)));
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) throw std::runtime_error("--gdb: cannot create a socket");
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (port == 0 || port > 65535 ||
      ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listen_fd_, 1) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("--gdb " + std::to_string(port) + ": cannot listen on 127.0.0.1:" +
                             std::to_string(port) + " (" + std::strerror(errno) + ")");
  }
}

GdbServer::~GdbServer() {
  if (fd_ >= 0) ::close(fd_);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

bool GdbServer::read_packet(std::string& out) {
  char c;
  for (;;) {  // skip acks, Ctrl-C (the core is stopped anyway) and noise up to '$'
    if (::recv(fd_, &c, 1, 0) != 1) return false;
    if (c == '$') break;
  }
  out.clear();
  for (;;) {
    if (::recv(fd_, &c, 1, 0) != 1) return false;
    if (c == '#') break;
    out.push_back(c);
  }
  char sum[2];
  if (::recv(fd_, sum, 2, MSG_WAITALL) != 2) return false;
  uint8_t want = 0;
  for (char ch : out) want = static_cast<uint8_t>(want + static_cast<uint8_t>(ch));
  uint32_t got = 0;
  const bool ok = parse_hex(std::string(sum, 2), got) && got == want;
  ::send(fd_, ok ? "+" : "-", 1, MSG_NOSIGNAL);
  return ok ? true : read_packet(out);
}

void GdbServer::send_packet(const std::string& payload) {
  uint8_t sum = 0;
  for (char ch : payload) sum = static_cast<uint8_t>(sum + static_cast<uint8_t>(ch));
  char tail[4];
  std::snprintf(tail, sizeof tail, "#%02x", sum);
  const std::string p = "$" + payload + tail;
  ::send(fd_, p.data(), p.size(), MSG_NOSIGNAL);
  char ack;  // one '+' (a '-' would ask for it again: resend once)
  if (::recv(fd_, &ack, 1, 0) == 1 && ack == '-') ::send(fd_, p.data(), p.size(), MSG_NOSIGNAL);
}

std::string GdbServer::stop_reply(int signal) const {
  char reply[32];
  if (cpus_.size() > 1)
    std::snprintf(reply, sizeof reply, "T%02xthread:%02x;", signal, stopped_ + 1);
  else
    std::snprintf(reply, sizeof reply, "T%02x", signal);
  return reply;
}

void GdbServer::remove_breakpoints() {
  for (uint32_t a : breakpoints_)
    for (IssCpu* c : cpus_) c->core().remove_breakpoint(a);
  breakpoints_.clear();
}

std::string GdbServer::read_registers() {
  ArmCore& core = selected();
  std::string s;
  for (int i = 0; i < 16; ++i) s += hex32(core.reg(i));
  return s + hex32(core.cpsr());
}

std::string GdbServer::target_xml(const std::string& annex, const std::string& range) {
  if (annex != "target.xml") return "E00";
  const size_t comma = range.find(',');
  uint32_t off = 0, len = 0;
  if (comma == std::string::npos || !parse_hex(range.substr(0, comma), off) ||
      !parse_hex(range.substr(comma + 1), len)) {
    return "E01";
  }
  const std::string xml = kTargetXml;
  if (off >= xml.size()) return "l";
  const std::string part = xml.substr(off, len);
  return (off + part.size() >= xml.size() ? "l" : "m") + part;
}

std::string GdbServer::handle(const std::string& p) {
  ArmCore& core = selected();
  const bool smp = cpus_.size() > 1;
  // A thread ID of the packet (hex; 0 any, -1 all: the core that stopped) -> core index, or -1.
  const auto thread = [&](const std::string& id) {
    if (id == "-1" || id == "0") return stopped_;
    uint32_t t = 0;
    if (!parse_hex(id, t) || t < 1 || t > cpus_.size()) return -1;
    return static_cast<int>(t) - 1;
  };
  resume_ = Resume::None;
  if (p.empty()) return "";
  switch (p[0]) {
    case '?':
      return smp ? stop_reply(5) : "S05";
    case 'g':
      return read_registers();
    case 'G': {
      if (p.size() < 1 + 17 * 8) return "E01";
      for (int i = 0; i < 15; ++i) core.set_reg(i, le32(p, 1 + 8 * i));
      core.set_cpsr(le32(p, 1 + 16 * 8));
      core.set_pc(le32(p, 1 + 15 * 8) | (core.thumb() ? 1u : 0u));
      return "OK";
    }
    case 'p': {
      uint32_t n = 0;
      if (!parse_hex(p.substr(1), n)) return "E01";
      if (n < 16) return hex32(core.reg(static_cast<int>(n)));
      if (n == kCpsrRegnum) return hex32(core.cpsr());
      return "E01";
    }
    case 'P': {
      const size_t eq = p.find('=');
      uint32_t n = 0;
      if (eq == std::string::npos || !parse_hex(p.substr(1, eq - 1), n) || p.size() < eq + 9) {
        return "E01";
      }
      const uint32_t v = le32(p, eq + 1);
      if (n < 15)
        core.set_reg(static_cast<int>(n), v);
      else if (n == 15)
        core.set_pc(v | (core.thumb() ? 1u : 0u));
      else if (n == kCpsrRegnum)
        core.set_cpsr(v);
      else
        return "E01";
      return "OK";
    }
    case 'm':
    case 'M': {
      const size_t comma = p.find(','), colon = p.find(':');
      uint32_t addr = 0, len = 0;
      if (comma == std::string::npos || !parse_hex(p.substr(1, comma - 1), addr) ||
          !parse_hex(p.substr(comma + 1,
                              colon == std::string::npos ? std::string::npos : colon - comma - 1),
                     len) ||
          len > 0x10000) {
        return "E01";
      }
      std::vector<uint8_t> buf(len);
      if (p[0] == 'm') {
        if (!core.debug_read(addr, buf.data(), len)) return "E14";  // EFAULT
        std::string s;
        char h[3];
        for (uint8_t b : buf) {
          std::snprintf(h, sizeof h, "%02x", b);
          s += h;
        }
        return s;
      }
      if (colon == std::string::npos || p.size() < colon + 1 + 2 * size_t{len}) return "E01";
      for (uint32_t i = 0; i < len; ++i) {
        uint32_t b = 0;
        parse_hex(p.substr(colon + 1 + 2 * i, 2), b);
        buf[i] = static_cast<uint8_t>(b);
      }
      return core.debug_write(addr, buf.data(), len) ? "OK" : "E14";
    }
    case 'Z':
    case 'z': {
      if (p.size() < 4 || (p[1] != '0' && p[1] != '1') || p[2] != ',') return "";
      const size_t comma = p.find(',', 3);
      uint32_t addr = 0;
      if (!parse_hex(p.substr(3, comma == std::string::npos ? std::string::npos : comma - 3),
                     addr)) {
        return "E01";
      }
      if (p[0] == 'Z' && breakpoints_.insert(addr).second)
        for (IssCpu* c : cpus_) c->core().add_breakpoint(addr);
      if (p[0] == 'z' && breakpoints_.erase(addr))
        for (IssCpu* c : cpus_) c->core().remove_breakpoint(addr);
      return "OK";
    }
    case 'c':
      resume_ = Resume::Continue;
      return "";
    case 's':
      resume_ = Resume::Step;
      return "";
    case 'D':
      resume_ = Resume::Detach;
      return "OK";
    case 'k':
      resume_ = Resume::Kill;
      return "";
    case 'H':
      if (smp && p.size() > 2 && p[1] == 'g') {
        const int c = thread(p.substr(2));
        if (c < 0) return "E01";
        selected_ = c;
      }
      return "OK";
    case 'T':
      return !smp || thread(p.substr(1)) >= 0 ? "OK" : "E01";
    case 'q':
      if (smp && p == "qfThreadInfo") {
        std::string list = "m";
        for (std::size_t i = 0; i < cpus_.size(); ++i) {
          char id[24];
          std::snprintf(id, sizeof id, "%s%zx", i ? "," : "", i + 1);
          list += id;
        }
        return list;
      }
      if (smp && p == "qsThreadInfo") return "l";
      if (smp && p == "qC") {
        char id[16];
        std::snprintf(id, sizeof id, "QC%x", stopped_ + 1);
        return id;
      }
      if (p.rfind("qSupported", 0) == 0) return "PacketSize=4000;qXfer:features:read+";
      if (p == "qAttached") return "1";
      if (p.rfind("qXfer:features:read:", 0) == 0) {
        const std::string rest = p.substr(20);
        const size_t colon = rest.find(':');
        if (colon == std::string::npos) return "E01";
        return target_xml(rest.substr(0, colon), rest.substr(colon + 1));
      }
      return "";
    default:
      return "";
  }
}

void GdbServer::stopped(bool at_start) { stopped_on(0, at_start); }

void GdbServer::stopped_on(int core, bool at_start) {
  if (detached_) return;
  // GDB attaches when core 0 starts; the others start while it runs on.
  if (at_start && core != 0) return;
  stopped_ = selected_ = core;
  if (fd_ < 0) {
    log_ << "vtoe: system run: waiting for GDB on 127.0.0.1:" << port_ << std::endl;
    fd_ = ::accept(listen_fd_, nullptr, nullptr);
    if (fd_ < 0) {
      detached_ = true;
      return;
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  if (!at_start) {
    send_packet(stop_reply(stop_signal_));
    stop_signal_ = 5;
  }
  std::string packet;
  for (;;) {
    if (!read_packet(packet)) {  // GDB went away: run on without it
      detached_ = true;
      remove_breakpoints();
      return;
    }
    const std::string reply = handle(packet);
    switch (resume_) {
      case Resume::None:
        send_packet(reply);
        break;
      case Resume::Step:
        cpus_[static_cast<std::size_t>(stopped_)]->core().step();
        selected_ = stopped_;
        send_packet(stop_reply(5));
        break;
      case Resume::Continue:
        return;
      case Resume::Detach:
        send_packet(reply);
        remove_breakpoints();
        detached_ = true;
        return;
      case Resume::Kill:
        killed_ = true;
        detached_ = true;
        for (IssCpu* c : cpus_) c->halt();
        return;
    }
  }
}

bool GdbServer::interrupted() {
  if (fd_ < 0 || detached_) return false;
  char c;
  // GDB sends nothing else while the core runs (all-stop mode); anything else waits for the stop.
  if (::recv(fd_, &c, 1, MSG_DONTWAIT | MSG_PEEK) != 1 || c != 0x03) return false;
  ::recv(fd_, &c, 1, 0);
  stop_signal_ = 2;
  return true;
}

void GdbServer::exited(int status) {
  if (fd_ < 0 || detached_) return;
  char buf[8];
  std::snprintf(buf, sizeof buf, "W%02x", status & 0xff);
  send_packet(buf);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace vtoe::cpu::iss
