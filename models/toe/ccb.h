// Connection control buffer: the TOE's table of sockets (paper Fig. 1). Each entry ties a host
// socket (channel, socket id) to a protocol connection and keeps what the TOE needs to move data
// for it: the host's kernel receive buffer and how much of it is written, notified and released.
// Capacity is a hardware limit; each access costs `access_latency`.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_map>

#include "models/core/module.h"
#include "models/tcpip/stack.h"

namespace vtoe::toe {

struct CcbEntry {
  enum class Kind { Listener, Connection };
  enum class State { Idle, Connecting, AcceptWaiting, Established, Closing };
  Kind kind = Kind::Connection;
  State state = State::Idle;
  int channel = 0;
  std::uint16_t sock = 0;
  tcpip::ConnId conn = 0;  // protocol connection (or listener) id, 0 while unbound
  std::uint16_t listener_sock = 0;

  // Host kernel receive buffer (a byte ring) and the TOE's progress through it.
  std::uint64_t rx_addr = 0;
  std::uint32_t rx_size = 0;
  std::uint64_t rx_written = 0;   // bytes DMA'd into the buffer
  std::uint64_t rx_notified = 0;  // bytes reported to the host in RxData events
  std::uint64_t rx_released = 0;  // bytes the host handed back through RecvQ
  bool notify_now = false;        // the host waits: report the next data at once
  bool rx_queued = false;         // on the RxDMA work list
  bool peer_closed = false;       // FIN seen; report PeerClosed after the last data
  bool peer_closed_posted = false;
  core::TimePs unnotified_since = 0;  // when the oldest byte not yet reported was written
  bool rx_timer_armed = false;

  // Listener: sockets the host offered through Accept, and accepted connections waiting for one.
  std::deque<std::uint16_t> accept_socks;
  std::deque<tcpip::ConnId> backlog;

  std::uint32_t rx_free() const {
    return rx_size - static_cast<std::uint32_t>(rx_written - rx_released);
  }
};

class Ccb : public core::Module {
 public:
  Ccb(const sc_core::sc_module_name& name, std::uint32_t capacity, core::TimePs access_latency_ps);

  std::uint32_t capacity() const { return capacity_; }
  std::size_t size() const { return entries_.size(); }
  core::TimePs access_latency_ps() const { return access_latency_ps_; }

  // nullptr when the table is full, the channel holds its quota, or the socket already exists.
  CcbEntry* create(int channel, std::uint16_t sock);
  // At most `entries` of the table for `channel` (so that no VM can take every entry and deny
  // the others connections); a channel without a quota may use the whole table.
  void set_quota(int channel, std::uint32_t entries) { quota_[channel] = entries; }
  std::uint32_t used(int channel) const;
  CcbEntry* find(int channel, std::uint16_t sock);
  CcbEntry* by_conn(tcpip::ConnId conn);
  void bind(CcbEntry& e, tcpip::ConnId conn);
  void remove(CcbEntry& e);

 private:
  static std::uint32_t key(int channel, std::uint16_t sock) {
    return (static_cast<std::uint32_t>(channel) << 16) | sock;
  }
  std::uint32_t capacity_;
  core::TimePs access_latency_ps_;
  std::unordered_map<std::uint32_t, std::unique_ptr<CcbEntry>> entries_;
  std::unordered_map<tcpip::ConnId, CcbEntry*> by_conn_;
  std::unordered_map<int, std::uint32_t> quota_, used_;
  core::Counter& lookups_;
  core::Counter& full_;
  core::Counter& quota_full_;
  core::Accumulator& occupancy_;
};

}  // namespace vtoe::toe
