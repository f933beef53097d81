#include "models/tcpip/types.h"

#include <cstdio>

namespace vtoe::tcpip {

bool MacAddr::is_broadcast() const {
  for (auto x : b)
    if (x != 0xff) return false;
  return true;
}

bool MacAddr::is_zero() const {
  for (auto x : b)
    if (x != 0) return false;
  return true;
}

std::string MacAddr::to_string() const {
  char s[18];
  std::snprintf(s, sizeof s, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
  return s;
}

MacAddr MacAddr::broadcast() {
  MacAddr m;
  m.b.fill(0xff);
  return m;
}

namespace {
int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool MacAddr::parse(const std::string& s, MacAddr& out) {
  if (s.size() != 17) return false;
  MacAddr m;
  for (int i = 0; i < 6; ++i) {
    int hi = hexval(s[i * 3]), lo = hexval(s[i * 3 + 1]);
    if (hi < 0 || lo < 0) return false;
    if (i < 5 && s[i * 3 + 2] != ':') return false;
    m.b[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  out = m;
  return true;
}

MacAddr MacAddr::local(std::uint32_t n) {
  MacAddr m;
  m.b = {0x02,
         0x00,
         static_cast<std::uint8_t>(n >> 24),
         static_cast<std::uint8_t>(n >> 16),
         static_cast<std::uint8_t>(n >> 8),
         static_cast<std::uint8_t>(n)};
  return m;
}

bool parse_ipv4(const std::string& s, Ipv4& out) {
  std::uint32_t a = 0;
  int parts = 0;
  std::size_t i = 0;
  while (parts < 4) {
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
    std::uint32_t v = 0;
    int digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      v = v * 10 + static_cast<std::uint32_t>(s[i] - '0');
      if (++digits > 3 || v > 255) return false;
      ++i;
    }
    a = (a << 8) | v;
    ++parts;
    if (parts < 4) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
  }
  if (i != s.size()) return false;
  out = a;
  return true;
}

Ipv4 parse_ipv4(const std::string& s) {
  Ipv4 a = 0;
  return parse_ipv4(s, a) ? a : 0;
}

std::string ipv4_to_string(Ipv4 a) {
  char s[16];
  std::snprintf(s, sizeof s, "%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
  return s;
}

const char* to_string(TcpState s) {
  switch (s) {
    case TcpState::Closed:
      return "CLOSED";
    case TcpState::Listen:
      return "LISTEN";
    case TcpState::SynSent:
      return "SYN_SENT";
    case TcpState::SynReceived:
      return "SYN_RECEIVED";
    case TcpState::Established:
      return "ESTABLISHED";
    case TcpState::FinWait1:
      return "FIN_WAIT_1";
    case TcpState::FinWait2:
      return "FIN_WAIT_2";
    case TcpState::CloseWait:
      return "CLOSE_WAIT";
    case TcpState::Closing:
      return "CLOSING";
    case TcpState::LastAck:
      return "LAST_ACK";
    case TcpState::TimeWait:
      return "TIME_WAIT";
  }
  return "?";
}

const char* to_string(CongestionControl c) {
  switch (c) {
    case CongestionControl::Cubic:
      return "cubic";
    case CongestionControl::Bbr:
      return "bbr";
    case CongestionControl::NewReno:
      break;
  }
  return "newreno";
}

bool parse_congestion(const std::string& s, CongestionControl& out) {
  if (s == "newreno") {
    out = CongestionControl::NewReno;
    return true;
  }
  if (s == "cubic") {
    out = CongestionControl::Cubic;
    return true;
  }
  if (s == "bbr") {
    out = CongestionControl::Bbr;
    return true;
  }
  return false;
}

const char* to_string(EcnMode m) {
  switch (m) {
    case EcnMode::Off:
      return "off";
    case EcnMode::On:
      return "on";
    default:
      return "passive";
  }
}

bool parse_ecn(const std::string& s, EcnMode& out) {
  if (s == "off") {
    out = EcnMode::Off;
  } else if (s == "passive") {
    out = EcnMode::Passive;
  } else if (s == "on") {
    out = EcnMode::On;
  } else {
    return false;
  }
  return true;
}

const char* to_string(Event e) {
  switch (e) {
    case Event::Connected:
      return "Connected";
    case Event::Accepted:
      return "Accepted";
    case Event::Readable:
      return "Readable";
    case Event::Writable:
      return "Writable";
    case Event::SendAcked:
      return "SendAcked";
    case Event::PeerClosed:
      return "PeerClosed";
    case Event::Closed:
      return "Closed";
    case Event::Reset:
      return "Reset";
    case Event::TimedOut:
      return "TimedOut";
    case Event::Refused:
      return "Refused";
  }
  return "?";
}

}  // namespace vtoe::tcpip
