#include "models/toe/ccb.h"

#include <algorithm>

#include "models/core/sim_time.h"
#include "models/toe/dma_initiator.h"

namespace vtoe::toe {

Ccb::Ccb(const sc_core::sc_module_name& name, const CcbParams& params)
    : core::Module(name),
      dma("dma"),
      params_(params),
      fresh_(params.capacity, false),
      record_buf_(params.record_bytes),
      lookups_(stats_.counter("lookups", "CCB accesses")),
      full_(stats_.counter("table_full", "sockets refused because the CCB was full")),
      quota_full_(
          stats_.counter("quota_full", "sockets refused because their channel held its quota")),
      occupancy_(stats_.accumulator("occupancy", "entries in use, mean over time")),
      hits_(stats_.counter("record_hits", "record accesses served on chip")),
      misses_(stats_.counter("record_misses", "record accesses fetched from host memory")),
      writebacks_(stats_.counter("record_writebacks", "records written back to host memory")),
      record_faults_(stats_.counter("record_faults", "record transfers the memory refused")) {
  free_records_.reserve(params_.capacity);
  for (std::uint32_t r = params_.capacity; r > 0; --r) free_records_.push_back(r - 1);
}

std::uint32_t Ccb::cache_entries() const {
  return params_.cache_entries == 0 ? params_.capacity
                                    : std::min(params_.cache_entries, params_.capacity);
}

core::TimePs Ccb::record_transfer(tlm::tlm_command cmd, std::uint32_t record) {
  const DmaResult res =
      dma.book(cmd, backing_base_ + static_cast<std::uint64_t>(record) * params_.record_bytes,
               record_buf_.data(), params_.record_bytes, backing_sideband_);
  // A refused transfer still took its time; the record itself stays valid on chip (the model
  // keeps the state in the entry), so only the counter tells.
  if (!res.ok) ++record_faults_;
  return res.delay_ps;
}

core::TimePs Ccb::touch(const CcbEntry& e) {
  core::TimePs t = params_.access_latency_ps;
  if (cache_entries() >= params_.capacity) {
    ++hits_;
    return t;
  }
  auto it = on_chip_.find(e.record);
  if (it != on_chip_.end()) {
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second);
    return t;
  }
  const bool fresh = fresh_[e.record];
  fresh_[e.record] = false;
  if (fresh)
    ++hits_;
  else
    ++misses_;
  if (on_chip_.size() >= cache_entries()) {
    const std::uint32_t victim = lru_.back();
    lru_.pop_back();
    on_chip_.erase(victim);
    ++writebacks_;
    t += record_transfer(tlm::TLM_WRITE_COMMAND, victim);
  }
  if (!fresh) t += record_transfer(tlm::TLM_READ_COMMAND, e.record);
  lru_.push_front(e.record);
  on_chip_[e.record] = lru_.begin();
  return t;
}

CcbEntry* Ccb::create(int channel, std::uint16_t sock) {
  ++lookups_;
  if (entries_.size() >= params_.capacity || free_records_.empty()) {
    ++full_;
    return nullptr;
  }
  const auto q = quota_.find(channel);
  if (q != quota_.end() && used(channel) >= q->second) {
    ++quota_full_;
    return nullptr;
  }
  auto [it, inserted] = entries_.emplace(key(channel, sock), nullptr);
  if (!inserted) return nullptr;
  ++used_[channel];
  it->second = std::make_unique<CcbEntry>();
  it->second->channel = channel;
  it->second->sock = sock;
  it->second->record = free_records_.back();
  free_records_.pop_back();
  fresh_[it->second->record] = true;
  occupancy_.level(static_cast<double>(entries_.size()), core::now_ps());
  return it->second.get();
}

std::uint32_t Ccb::used(int channel) const {
  const auto it = used_.find(channel);
  return it == used_.end() ? 0 : it->second;
}

CcbEntry* Ccb::find(int channel, std::uint16_t sock) {
  ++lookups_;
  auto it = entries_.find(key(channel, sock));
  return it == entries_.end() ? nullptr : it->second.get();
}

const CcbEntry* Ccb::peek(int channel, std::uint16_t sock) const {
  auto it = entries_.find(key(channel, sock));
  return it == entries_.end() ? nullptr : it->second.get();
}

CcbEntry* Ccb::by_conn(tcpip::ConnId conn) {
  ++lookups_;
  auto it = by_conn_.find(conn);
  return it == by_conn_.end() ? nullptr : it->second;
}

void Ccb::bind(CcbEntry& e, tcpip::ConnId conn) {
  if (e.conn) by_conn_.erase(e.conn);
  e.conn = conn;
  if (conn) by_conn_[conn] = &e;
}

void Ccb::remove(CcbEntry& e) {
  if (e.conn) by_conn_.erase(e.conn);
  auto& used = used_[e.channel];
  if (used > 0) --used;
  // A record that goes is simply forgotten on chip: nothing to write back.
  if (auto it = on_chip_.find(e.record); it != on_chip_.end()) {
    lru_.erase(it->second);
    on_chip_.erase(it);
  }
  free_records_.push_back(e.record);
  entries_.erase(key(e.channel, e.sock));
  occupancy_.level(static_cast<double>(entries_.size()), core::now_ps());
}

}  // namespace vtoe::toe
