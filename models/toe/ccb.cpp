#include "models/toe/ccb.h"

namespace vtoe::toe {

Ccb::Ccb(const sc_core::sc_module_name& name, std::uint32_t capacity,
         core::TimePs access_latency_ps)
    : core::Module(name),
      capacity_(capacity),
      access_latency_ps_(access_latency_ps),
      lookups_(stats_.counter("lookups", "CCB accesses")),
      full_(stats_.counter("table_full", "sockets refused because the CCB was full")),
      quota_full_(stats_.counter("quota_full",
                                 "sockets refused because their channel held its quota")),
      occupancy_(stats_.accumulator("occupancy", "entries in use, sampled at each create")) {}

CcbEntry* Ccb::create(int channel, std::uint16_t sock) {
  ++lookups_;
  if (entries_.size() >= capacity_) {
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
  occupancy_.sample(static_cast<double>(entries_.size()));
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
  entries_.erase(key(e.channel, e.sock));
}

}  // namespace vtoe::toe
