// Connection control buffer: the TOE's table of sockets (paper Fig. 1). Each entry ties a host
// socket (channel, socket id) to a protocol connection and keeps what the TOE needs to move data
// for it: the host's kernel receive buffer and how much of it is written, notified and released.
// Capacity is the number of connection records; only `cache_entries` of them are on chip. The
// rest live in host memory (a region the platform reserves, `record_bytes` per record): an access
// to a record on chip costs `access_latency`; a miss fetches the record over the TOE's DMA path
// (a real memory transaction that contends with the other DMA masters) and writes the least
// recently used record back to make room. A new record is made on chip (only the write-back of
// the record it displaces is paid).
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <unordered_map>
#include <vector>

#include "models/core/module.h"
#include "models/toe/dma_initiator.h"
#include "models/core/sideband.h"
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

  std::uint32_t record = 0;  // the record's slot in the host-memory backing store

  std::uint32_t rx_free() const {
    return rx_size - static_cast<std::uint32_t>(rx_written - rx_released);
  }
};

struct CcbParams {
  std::uint32_t capacity = 256;       // connection records (sockets) the TOE can hold
  core::TimePs access_latency_ps = 10'000;
  std::uint32_t cache_entries = 256;  // records on chip; 0 = every record on chip
  std::uint32_t record_bytes = 128;   // one record in host memory
};

class Ccb : public core::Module {
 public:
  // Record fetches and write-backs; bound to the TOE's DMA hub. Unused while every record fits
  // on chip (a bench may leave it bound to nothing that answers).
  DmaInitiator dma;

  Ccb(const sc_core::sc_module_name& name, const CcbParams& params);

  std::uint32_t capacity() const { return params_.capacity; }
  std::size_t size() const { return entries_.size(); }
  core::TimePs access_latency_ps() const { return params_.access_latency_ps; }
  // Records on chip: all of them when cache_entries is 0 or not below the capacity.
  std::uint32_t cache_entries() const;
  // Where the records live in host memory, and the sideband their transactions carry.
  void set_backing(std::uint64_t base, const core::SidebandExtension& sideband) {
    backing_base_ = base;
    backing_sideband_ = sideband;
  }
  std::uint64_t backing_bytes() const {
    return static_cast<std::uint64_t>(params_.capacity) * params_.record_bytes;
  }
  // The time one access to `e`'s record takes: the on-chip latency on a hit; on a miss also the
  // fetch of the record from host memory and the write-back of the record it displaces.
  core::TimePs touch(const CcbEntry& e);

  // nullptr when the table is full, the channel holds its quota, or the socket already exists.
  CcbEntry* create(int channel, std::uint16_t sock);
  // At most `entries` of the table for `channel` (so that no VM can take every entry and deny
  // the others connections); a channel without a quota may use the whole table.
  void set_quota(int channel, std::uint32_t entries) { quota_[channel] = entries; }
  std::uint32_t used(int channel) const;
  CcbEntry* find(int channel, std::uint16_t sock);
  // The entry without counting an access (the model's own bookkeeping, not a CCB lookup).
  const CcbEntry* peek(int channel, std::uint16_t sock) const;
  CcbEntry* by_conn(tcpip::ConnId conn);
  void bind(CcbEntry& e, tcpip::ConnId conn);
  void remove(CcbEntry& e);

 private:
  static std::uint32_t key(int channel, std::uint16_t sock) {
    return (static_cast<std::uint32_t>(channel) << 16) | sock;
  }
  core::TimePs record_transfer(tlm::tlm_command cmd, std::uint32_t record);

  CcbParams params_;
  std::uint64_t backing_base_ = 0;
  core::SidebandExtension backing_sideband_;
  std::vector<std::uint32_t> free_records_;  // slots not in use, lowest last
  std::vector<bool> fresh_;  // created and never on chip yet: nothing in host memory to fetch
  std::list<std::uint32_t> lru_;             // records on chip, most recently used first
  std::unordered_map<std::uint32_t, std::list<std::uint32_t>::iterator> on_chip_;
  std::vector<std::uint8_t> record_buf_;
  std::unordered_map<std::uint32_t, std::unique_ptr<CcbEntry>> entries_;
  std::unordered_map<tcpip::ConnId, CcbEntry*> by_conn_;
  std::unordered_map<int, std::uint32_t> quota_, used_;
  core::Counter& lookups_;
  core::Counter& full_;
  core::Counter& quota_full_;
  core::Accumulator& occupancy_;
  core::Counter& hits_;
  core::Counter& misses_;
  core::Counter& writebacks_;
  core::Counter& record_faults_;
};

}  // namespace vtoe::toe
