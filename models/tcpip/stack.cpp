#include "models/tcpip/stack.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "models/tcpip/checksum.h"
#include "models/tcpip/frame_pool.h"

namespace vtoe::tcpip {

using namespace tcp_flags;

namespace {
constexpr ConnId kListenerBit = 0x80000000u;
constexpr std::uint32_t kSlotBits = 20;
constexpr std::uint32_t kSlotMask = (1u << kSlotBits) - 1;
constexpr std::size_t kIpOff = kEthHeaderLen;
constexpr std::size_t kL4Off = kEthHeaderLen + kIpv4MinHeaderLen;

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

StackConfig sanitize(StackConfig c) {
  c.prefix_len = std::clamp(c.prefix_len, 0, 32);
  c.mtu = std::clamp<std::uint32_t>(c.mtu, 68, 65535);
  c.window_scale = std::min<std::uint8_t>(c.window_scale, 14);
  c.max_connections = std::min<std::uint32_t>(c.max_connections, kSlotMask - 1);
  c.rto_min = std::max<TimePs>(c.rto_min, 1000);
  c.rto_max = std::max(c.rto_max, c.rto_min);
  c.rto_initial = std::clamp(c.rto_initial, c.rto_min, c.rto_max);
  c.arp_timeout = std::max<TimePs>(c.arp_timeout, 1000);
  c.arp_retries = std::max(c.arp_retries, 1);
  c.time_wait = std::max<TimePs>(c.time_wait, 1);
  c.delayed_ack = std::max<TimePs>(c.delayed_ack, 1);
  c.max_ooo_ranges = std::max<std::uint32_t>(c.max_ooo_ranges, 1);
  if (c.ephemeral_port_base == 0) c.ephemeral_port_base = 49152;
  return c;
}
}  // namespace

Stack::Stack(const StackConfig& cfg, StackListener& listener)
    : cfg_(sanitize(cfg)), listener_(listener), udp_bound_(65536, false) {
  netmask_ = cfg_.prefix_len == 0 ? 0 : ~0u << (32 - cfg_.prefix_len);
  local_mac_set_.insert(mac_key(cfg_.mac));
  if (cfg_.ip != 0) local_mac_[cfg_.ip] = cfg_.mac;
  const std::vector<std::pair<Ipv4, MacAddr>> wanted = std::move(cfg_.aliases);
  cfg_.aliases.clear();
  for (const auto& a : wanted) add_address(a.first, a.second);
  if (cfg_.shared_buffer > 0) pool_ = std::make_unique<BufferPool>(cfg_.shared_buffer);
}

Stack::~Stack() = default;

std::size_t Stack::TupleHash::operator()(const TupleKey& k) const {
  const std::uint64_t x = (static_cast<std::uint64_t>(k.rip) << 32) |
                          (static_cast<std::uint64_t>(k.rport) << 16) | k.lport;
  return static_cast<std::size_t>(splitmix64(x ^ (static_cast<std::uint64_t>(k.lip) << 17)));
}

// ------------------------------------------------------------------------------------ addresses

bool Stack::add_address(Ipv4 ip, const MacAddr& mac) {
  if (ip == 0 || is_martian(ip) || mac.is_zero() || mac.is_multicast()) return false;
  cfg_.aliases.emplace_back(ip, mac);
  local_mac_[ip] = mac;
  local_mac_set_.insert(mac_key(mac));
  return true;
}

bool Stack::is_local(Ipv4 ip) const {
  if (ip == 0) return false;
  if (ip == cfg_.ip) return true;
  return !cfg_.aliases.empty() && local_mac_.count(ip) != 0;
}

MacAddr Stack::mac_of(Ipv4 local) const {
  if (local == cfg_.ip || cfg_.aliases.empty()) return cfg_.mac;
  auto it = local_mac_.find(local);
  return it != local_mac_.end() ? it->second : cfg_.mac;
}

bool Stack::pick_source(Ipv4 local, Ipv4& out) const {
  if (local == 0) {
    out = cfg_.ip;
    return true;
  }
  if (!is_local(local)) return false;
  out = local;
  return true;
}

// ------------------------------------------------------------------------------------ plumbing

Frame Stack::new_frame(std::size_t len) const {
  return FramePool::take(cfg_.pad_short_frames ? std::max(len, kMinFrameLen) : len);
}

Frame Stack::new_frame_for_overwrite(std::size_t len) const {
  if (!cfg_.pad_short_frames || len >= kMinFrameLen) return FramePool::take_for_overwrite(len);
  Frame f = FramePool::take_for_overwrite(kMinFrameLen);
  std::memset(f.data() + len, 0, kMinFrameLen - len);
  return f;
}

void Stack::emit_frame(Frame&& f) {
  f.checksums_valid = true;  // every frame built here had its checksums computed over its bytes
  ++stats_.frames_out;
  stats_.bytes_out += f.size();
  listener_.transmit(std::move(f));
}

void Stack::send_ipv4(Frame&& f, Ipv4 src, Ipv4 dst, std::uint8_t proto, bool df,
                      std::size_t l4_len, std::uint8_t tos) {
  std::uint8_t* e = f.data();
  std::memset(e, 0, 6);  // the destination: route_and_send
  std::memcpy(e + 6, mac_of(src).b.data(), 6);
  store_be16(e + 12, kEtherTypeIpv4);
  // The 20-byte header written field by field, its checksum summed from the fields.
  std::uint8_t* p = e + kIpOff;
  const std::uint16_t ver_tos = static_cast<std::uint16_t>(0x4500 | tos);
  const auto total = static_cast<std::uint16_t>(kIpv4MinHeaderLen + l4_len);
  const std::uint16_t id = ip_id_++;
  const std::uint16_t frag = df ? 0x4000 : 0;
  const auto ttl_proto = static_cast<std::uint16_t>((cfg_.ttl << 8) | proto);
  store_be16(p, ver_tos);
  store_be16(p + 2, total);
  store_be16(p + 4, id);
  store_be16(p + 6, frag);
  store_be16(p + 8, ttl_proto);
  store_be32(p + 12, src);
  store_be32(p + 16, dst);
  std::uint64_t sum = static_cast<std::uint64_t>(ver_tos) + total + id + frag + ttl_proto +
                      (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  store_be16(p + 10, static_cast<std::uint16_t>(~sum & 0xffff));
  ++stats_.ip_out;
  route_and_send(std::move(f), src, dst);
}

void Stack::route_and_send(Frame&& f, Ipv4 src, Ipv4 dst) {
  const Ipv4 subnet_bcast = cfg_.ip | ~netmask_;
  if (dst == 0xffffffffu || (netmask_ != 0xffffffffu && dst == subnet_bcast)) {
    std::memcpy(f.data(), MacAddr::broadcast().b.data(), 6);
    emit_frame(std::move(f));
    return;
  }
  if (cfg_.loopback && is_local(dst)) {
    // Another local address: back in without the wire, to that address's MAC.
    std::memcpy(f.data(), mac_of(dst).b.data(), 6);
    ++stats_.frames_out;
    stats_.bytes_out += f.size();
    listener_.loop_back(std::move(f));
    return;
  }
  Ipv4 hop;
  if ((dst & netmask_) == (cfg_.ip & netmask_)) {
    hop = dst;
  } else if (cfg_.gateway != 0) {
    hop = cfg_.gateway;
  } else {
    ++stats_.drop_no_route;
    return;
  }
  if (last_arp_ == nullptr || last_arp_->first != hop) {
    const auto it = arp_cache_.find(hop);
    last_arp_ = it == arp_cache_.end() ? nullptr : &*it;
  }
  if (last_arp_ != nullptr && last_arp_->first == hop) {
    std::memcpy(f.data(), last_arp_->second.b.data(), 6);
    emit_frame(std::move(f));
    return;
  }
  for (auto& p : arp_pending_) {
    if (p.ip == hop) {
      if (p.queue.size() >= cfg_.arp_queue_limit)
        ++stats_.drop_arp_queue_overflow;
      else
        p.queue.push_back(std::move(f));
      return;
    }
  }
  ArpPending p;
  p.ip = hop;
  p.src = src;
  p.queue.push_back(std::move(f));
  p.tries = 1;
  p.deadline = now_ + cfg_.arp_timeout;
  arp_pending_.push_back(std::move(p));
  send_arp_request(src, hop);
}

void Stack::send_arp_request(Ipv4 src, Ipv4 ip) {
  const MacAddr mac = mac_of(src);
  ArpPacket a;
  a.op = ArpPacket::kRequest;
  a.sha = mac;
  a.spa = src;
  a.tpa = ip;
  ++stats_.arp_requests_sent;
  emit_frame(build_arp_frame(mac, MacAddr::broadcast(), a));
}

void Stack::learn(Ipv4 ip, const MacAddr& mac) {
  auto it = arp_cache_.find(ip);
  if (it == arp_cache_.end() || it->second != mac) {
    arp_cache_[ip] = mac;
    ++stats_.arp_cache_updates;
  }
  for (std::size_t i = 0; i < arp_pending_.size(); ++i) {
    if (arp_pending_[i].ip != ip) continue;
    std::vector<Frame> q = std::move(arp_pending_[i].queue);
    arp_pending_.erase(arp_pending_.begin() + static_cast<std::ptrdiff_t>(i));
    for (auto& f : q) {
      std::memcpy(f.data(), mac.b.data(), 6);
      emit_frame(std::move(f));
    }
    break;
  }
}

bool Stack::arp_lookup(Ipv4 ip, MacAddr& mac) const {
  auto it = arp_cache_.find(ip);
  if (it == arp_cache_.end()) return false;
  mac = it->second;
  return true;
}

bool Stack::is_martian(Ipv4 src) const {
  const Ipv4 top = src >> 24;
  return src == 0 || is_local(src) || top == 127 || top >= 224 ||
         (netmask_ != 0xffffffffu && src == (cfg_.ip | ~netmask_));
}

// ------------------------------------------------------------------------------------ connections

TcpConnection* Stack::find(ConnId id) const {
  if (id == 0 || (id & kListenerBit)) return nullptr;
  const std::uint32_t slot = (id & kSlotMask) - 1;
  if (slot >= slots_.size() || !slots_[slot] || slots_[slot]->id() != id) return nullptr;
  return slots_[slot].get();
}

std::uint32_t Stack::next_isn(const TupleKey& k) {
  std::uint64_t t = (static_cast<std::uint64_t>(k.rip) << 32) |
                    (static_cast<std::uint64_t>(k.rport) << 16) | k.lport;
  if (k.lip != cfg_.ip) t ^= splitmix64(k.lip);  // primary: same ISNs as before aliases existed
  const std::uint64_t x = splitmix64((static_cast<std::uint64_t>(cfg_.isn_seed) << 32) ^
                                     splitmix64(isn_counter_++) ^ t);
  return static_cast<std::uint32_t>(x ^ (x >> 32));
}

ConnId Stack::find_listener(Ipv4 ip, std::uint16_t port) const {
  if (listener_by_key_.empty()) return 0;
  auto it = listener_by_key_.find(listen_key(ip, port));
  if (it == listener_by_key_.end()) it = listener_by_key_.find(listen_key(0, port));
  return it == listener_by_key_.end() ? 0 : it->second;
}

TcpConnection* Stack::create_conn(const TupleKey& k) {
  if (conn_count_ >= cfg_.max_connections) return nullptr;
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
    slot_gen_.push_back(0);
  }
  std::uint16_t gen = static_cast<std::uint16_t>((slot_gen_[slot] + 1) & 0x7ff);
  if (gen == 0) gen = 1;
  slot_gen_[slot] = gen;
  const ConnId id = (static_cast<ConnId>(gen) << kSlotBits) | (slot + 1);
  TcpHost& host = *this;
  slots_[slot] = std::make_unique<TcpConnection>(host, cfg_, stats_, id, k.lip, k.lport, k.rip,
                                                 k.rport, next_isn(k));
  slots_[slot]->set_pool(pool_.get());
  tuple_insert(k, id);
  ++conn_count_;
  return slots_[slot].get();
}

ConnId Stack::lookup_tuple(const TupleKey& k) const {
  if (last_id_ != 0 && last_key_ == k) return last_id_;
  const auto it = by_tuple_.find(k);
  if (it == by_tuple_.end()) return 0;
  last_key_ = k;
  last_id_ = it->second;
  return last_id_;
}

void Stack::tuple_insert(const TupleKey& k, ConnId id) {
  last_id_ = 0;
  const auto [it, fresh] = by_tuple_.insert_or_assign(k, id);
  (void)it;
  if (fresh && k.lport >= cfg_.ephemeral_port_base)
    ++ephemeral_used_[ephemeral_key(k.lip, k.rip, k.rport)];
}

void Stack::tuple_erase(std::unordered_map<TupleKey, ConnId, TupleHash>::iterator it) {
  const TupleKey k = it->first;
  last_id_ = 0;
  by_tuple_.erase(it);
  if (k.lport < cfg_.ephemeral_port_base) return;
  auto used = ephemeral_used_.find(ephemeral_key(k.lip, k.rip, k.rport));
  if (used != ephemeral_used_.end() && --used->second == 0) ephemeral_used_.erase(used);
}

void Stack::free_slot(ConnId id) {
  TcpConnection* c = find(id);
  if (!c) return;
  auto it = by_tuple_.find(key_of(*c));
  if (it != by_tuple_.end() && it->second == id) tuple_erase(it);
  const std::uint32_t slot = (id & kSlotMask) - 1;
  slots_[slot].reset();  // gives its share of the buffer pool back
  free_slots_.push_back(slot);
  --conn_count_;
  pool_waiters_.erase(id);
  wake_pool_waiters();
}

void Stack::after_op(TcpConnection& c) {
  if (c.dead()) return;  // freed once its terminal event is dispatched
  schedule(c);
  if (!pool_) return;
  c.sync_pool();
  if (c.pool_starved()) pool_waiters_.insert(c.id());
  wake_pool_waiters();
}

void Stack::wake_pool_waiters() {
  // At least a segment's worth, so that a reopened window is worth announcing.
  if (!pool_ || pool_waiters_.empty() || pool_->free() < cfg_.mtu) return;
  std::vector<ConnId> waiting(pool_waiters_.begin(), pool_waiters_.end());
  std::sort(waiting.begin(), waiting.end());  // deterministic order
  pool_waiters_.clear();
  for (ConnId id : waiting) {
    TcpConnection* c = find(id);
    if (!c || c->dead()) continue;
    c->pool_space_freed(now_);
    schedule(*c);
    if (c->pool_starved()) pool_waiters_.insert(id);
    if (pool_->free() < cfg_.mtu) {  // the rest wait for the next release
      for (ConnId rest : waiting)
        if (rest > id) pool_waiters_.insert(rest);
      break;
    }
  }
}

void Stack::schedule(TcpConnection& c) {
  const TimePs d = c.next_deadline();
  if (d < c.scheduled_at) {
    c.scheduled_at = d;
    TimerEntry& e = heap_.emplace_back();  // field by field: see tcp_notify
    e.t = d;
    e.id = c.id();
    std::push_heap(heap_.begin(), heap_.end(), std::greater<TimerEntry>());
  }
}

void Stack::tcp_output(TcpConnection& c, const TcpSegmentOut& seg) {
  const std::size_t optlen = tcp_options_len(seg.opts);
  const std::size_t payload = seg.n1 + seg.n2;
  const std::size_t tcp_len = kTcpMinHeaderLen + optlen + payload;
  // Every byte is written below: Ethernet (the destination by route_and_send), IPv4, TCP header,
  // options, payload.
  Frame f = new_frame_for_overwrite(kL4Off + tcp_len);
  std::uint8_t* t = f.data() + kL4Off;
  const std::size_t header_len = kTcpMinHeaderLen + optlen;
  const std::uint16_t sport = c.local_port(), dport = c.remote_port();
  const std::uint16_t offset_flags =
      static_cast<std::uint16_t>(((header_len / 4) << 12) | seg.flags);
  store_be16(t, sport);
  store_be16(t + 2, dport);
  store_be32(t + 4, seg.seq);
  store_be32(t + 8, seg.ack);
  store_be16(t + 12, offset_flags);
  store_be16(t + 14, seg.window);
  store_be32(t + 16, 0);  // the checksum (below) and the urgent pointer
  // The header's sum from its fields rather than its bytes (the same 16-bit words), with the
  // pseudo-header's; the options' (timestamps, on nearly every segment) likewise.
  std::uint64_t hs = pseudo_header_sum(c.local_ip(), c.remote_ip(), kIpProtoTcp,
                                       static_cast<std::uint16_t>(tcp_len));
  hs += static_cast<std::uint64_t>(sport) + dport + (seg.seq >> 16) + (seg.seq & 0xffff) +
        (seg.ack >> 16) + (seg.ack & 0xffff) + offset_flags + seg.window;
  if (optlen) {
    const TcpOptions& o = seg.opts;
    write_tcp_options(t + kTcpMinHeaderLen, o);
    if (optlen == 12 && o.has_timestamps)  // timestamps alone: NOP NOP 8 10 val ecr
      hs += 0x0101u + 0x080au + (o.ts_val >> 16) + (o.ts_val & 0xffff) + (o.ts_ecr >> 16) +
            (o.ts_ecr & 0xffff);
    else
      hs += ones_sum(t + kTcpMinHeaderLen, optlen);
  }
  while (hs >> 16) hs = (hs & 0xffff) + (hs >> 16);
  // The payload is summed while it is copied in (the header's length is a multiple of 4, so the
  // payload starts on an even offset).
  std::uint8_t* d = t + header_len;
  const std::uint32_t head = static_cast<std::uint32_t>(hs);
  std::uint32_t sum = head;
  if (seg.n1 % 2 == 0) {
    if (seg.n1) sum = ones_sum_copy(d, seg.p1, seg.n1, sum);
    if (seg.n2) sum = ones_sum_copy(d + seg.n1, seg.p2, seg.n2, sum);
  } else {  // an odd first part: the second starts mid-word, so sum the payload once it is whole
    std::memcpy(d, seg.p1, seg.n1);
    if (seg.n2) std::memcpy(d + seg.n1, seg.p2, seg.n2);
    sum = ones_sum(d, payload, head);
  }
  store_be16(t + 16, static_cast<std::uint16_t>(~sum & 0xffff));
  ++stats_.tcp_segs_out;
  if (payload) {
    ++stats_.tcp_data_segs_out;
    stats_.tcp_bytes_out += payload;
  }
  if (seg.flags & kRst) ++stats_.rst_sent;
  send_ipv4(std::move(f), c.local_ip(), c.remote_ip(), kIpProtoTcp, true, tcp_len, seg.ecn);
}

void Stack::tcp_notify(TcpConnection& c, Event ev, std::uint64_t bytes) {
  if (ev == Event::SendAcked) acked_by_local_[c.local_ip()] += bytes;
  if (ev == Event::Accepted || ev == Event::Connected) c.user_visible = true;
  if (is_terminal(ev)) {
    auto it = by_tuple_.find(key_of(c));
    if (it != by_tuple_.end() && it->second == c.id()) tuple_erase(it);
  }
  if ((ev == Event::Accepted || is_terminal(ev)) && c.half_open) {  // leaves the backlog
    c.half_open = false;
    auto lit = listeners_.find(c.listener());
    if (lit != listeners_.end() && lit->second.half_open > 0) --lit->second.half_open;
  }
  // Stored field by field into the new slot: a pushed temporary is built with narrow stores and
  // copied with wide loads, which stalls store-to-load forwarding on every segment.
  PendingEvent& e = events_.emplace_back();
  e.ev = ev;
  e.info.conn = c.id();
  e.info.listener = c.listener();
  e.info.bytes = bytes;
  e.deliver = c.user_visible;
  e.syn = false;
}

void Stack::flush_events() {
  if (dispatching_) return;
  dispatching_ = true;
  for (std::size_t i = 0; i < events_.size(); ++i) {
    const PendingEvent e = events_[i];  // copy: callbacks may append
    if (e.syn)
      listener_.syn_received(e.info);
    else if (e.deliver)
      listener_.tcp_event(e.ev, e.info);
    if (is_terminal(e.ev) && !(e.info.conn & kListenerBit)) free_slot(e.info.conn);
  }
  events_.clear();
  dispatching_ = false;
}

// ------------------------------------------------------------------------------------ timers

TimePs Stack::next_deadline() const {
  TimePs t = heap_.empty() ? kNever : heap_.front().t;
  for (const auto& p : arp_pending_) t = std::min(t, p.deadline);
  return t;
}

void Stack::poll(TimePs now) {
  now_ = std::max(now_, now);
  for (std::size_t i = 0; i < arp_pending_.size();) {
    ArpPending& p = arp_pending_[i];
    if (p.deadline <= now) {
      if (p.tries >= cfg_.arp_retries) {
        stats_.drop_arp_unresolved += p.queue.size();
        arp_pending_.erase(arp_pending_.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      ++p.tries;
      p.deadline = now + cfg_.arp_timeout;
      send_arp_request(p.src, p.ip);
    }
    ++i;
  }
  while (!heap_.empty() && heap_.front().t <= now) {
    const TimerEntry e = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<TimerEntry>());
    heap_.pop_back();
    TcpConnection* c = find(e.id);
    if (!c || c->dead() || c->scheduled_at != e.t) continue;  // stale entry
    c->scheduled_at = kNever;
    c->on_timer(now);
    after_op(*c);
  }
  flush_events();
}

// ------------------------------------------------------------------------------------ input

ConnId Stack::connection_of_frame(const std::uint8_t* data, std::size_t len,
                                  bool checksums_valid) const {
  EthHeader eth;
  if (data == nullptr || !parse_eth(data, len, eth) || eth.ethertype != kEtherTypeIpv4) return 0;
  Ipv4Header ip;
  const std::uint8_t* p = data + kEthHeaderLen;
  const std::size_t n = len - kEthHeaderLen;
  if (parse_ipv4_header(p, n, ip, verify_ip_checksum(checksums_valid)) != IpParse::Ok ||
      ip.proto != kIpProtoTcp || ip.total_len < ip.header_len + kTcpMinHeaderLen)
    return 0;
  const std::uint8_t* tcp = p + ip.header_len;  // ports: the first four bytes
  const std::uint16_t src_port = static_cast<std::uint16_t>((tcp[0] << 8) | tcp[1]);
  const std::uint16_t dst_port = static_cast<std::uint16_t>((tcp[2] << 8) | tcp[3]);
  return lookup_tuple(TupleKey{ip.dst, ip.src, dst_port, src_port});
}

void Stack::receive_frame(const std::uint8_t* data, std::size_t len, TimePs now,
                          bool checksums_valid) {
  now_ = std::max(now_, now);
  rx_checksums_valid_ = checksums_valid;
  ++stats_.frames_in;
  stats_.bytes_in += len;
  EthHeader eth;
  if (data == nullptr || !parse_eth(data, len, eth)) {
    ++stats_.drop_truncated;
  } else if (len > (cfg_.max_rx_frame ? cfg_.max_rx_frame : kEthHeaderLen + cfg_.mtu)) {
    ++stats_.drop_oversized;
  } else if (eth.dst != cfg_.mac && !eth.dst.is_broadcast() &&
             (cfg_.aliases.empty() || !local_mac_set_.count(mac_key(eth.dst)))) {
    ++stats_.drop_not_for_us;
  } else if (eth.ethertype == kEtherTypeIpv4) {
    handle_ipv4(data + kEthHeaderLen, len - kEthHeaderLen, now);
  } else if (eth.ethertype == kEtherTypeArp) {
    handle_arp(eth, data + kEthHeaderLen, len - kEthHeaderLen, now);
  } else {
    ++stats_.drop_unknown_ethertype;
  }
  flush_events();
}

void Stack::handle_arp(const EthHeader& eth, const std::uint8_t* p, std::size_t n, TimePs now) {
  (void)now;
  ArpPacket a;
  if (!parse_arp(p, n, a) || (a.op != ArpPacket::kRequest && a.op != ArpPacket::kReply) ||
      a.sha.is_multicast() || a.sha.is_zero() || eth.src.is_multicast()) {
    ++stats_.drop_bad_arp;
    return;
  }
  ++stats_.arp_in;
  const bool for_us = is_local(a.tpa);
  // RFC 826 merge: update a known sender; learn it when the packet is addressed to us.
  if (a.spa != 0 && !is_martian(a.spa) && (for_us || arp_cache_.count(a.spa))) learn(a.spa, a.sha);
  if (for_us && a.op == ArpPacket::kRequest) {
    const MacAddr mac = mac_of(a.tpa);  // each local address answers with its own MAC
    ArpPacket r;
    r.op = ArpPacket::kReply;
    r.sha = mac;
    r.spa = a.tpa;
    r.tha = a.sha;
    r.tpa = a.spa;
    ++stats_.arp_replies_sent;
    emit_frame(build_arp_frame(mac, a.sha, r));
  }
}

void Stack::handle_ipv4(const std::uint8_t* p, std::size_t n, TimePs now) {
  Ipv4Header ip;
  switch (parse_ipv4_header(p, n, ip, verify_ip_checksum(rx_checksums_valid_))) {
    case IpParse::Ok:
      break;
    case IpParse::Truncated:
      ++stats_.drop_truncated;
      return;
    case IpParse::BadHeader:
      ++stats_.drop_bad_ip_header;
      return;
    case IpParse::BadChecksum:
      assert(!rx_checksums_valid_);  // a vouched-for frame is never bad
      ++stats_.drop_bad_ip_checksum;
      return;
  }
  if (ip.mf || ip.frag_offset != 0) {
    ++stats_.drop_fragments;
    return;
  }
  const bool bcast =
      ip.dst == 0xffffffffu || (netmask_ != 0xffffffffu && ip.dst == (cfg_.ip | ~netmask_));
  if (!bcast && !is_local(ip.dst)) {
    ++stats_.drop_not_for_us;
    return;
  }
  if (is_martian(ip.src) && !(cfg_.loopback && is_local(ip.src))) {
    ++stats_.drop_martian;
    return;
  }
  ++stats_.ip_in;
  const std::uint8_t* l4 = p + ip.header_len;
  const std::size_t l4n = ip.total_len - ip.header_len;
  switch (ip.proto) {
    case kIpProtoTcp:
      if (bcast) {
        ++stats_.drop_not_for_us;
        return;
      }
      handle_tcp(ip, l4, l4n, now);
      break;
    case kIpProtoUdp:
      handle_udp(ip, l4, l4n, now);
      break;
    case kIpProtoIcmp:
      if (bcast) {
        ++stats_.drop_not_for_us;  // no answers to broadcast pings
        return;
      }
      handle_icmp(ip, l4, l4n, now);
      break;
    default:
      ++stats_.drop_unknown_protocol;
      break;
  }
}

void Stack::send_icmp(Ipv4 src, Ipv4 dst, const IcmpHeader& h, const std::uint8_t* data,
                      std::size_t len) {
  if (kIcmpHeaderLen + len + kIpv4MinHeaderLen > cfg_.mtu) {
    ++stats_.drop_oversized;
    return;
  }
  Frame f = new_frame(kL4Off + kIcmpHeaderLen + len);
  std::uint8_t* m = f.data() + kL4Off;
  IcmpHeader x = h;
  x.checksum = 0;
  write_icmp(m, x);
  if (len) std::memcpy(m + kIcmpHeaderLen, data, len);
  store_be16(m + 2, internet_checksum(m, kIcmpHeaderLen + len));
  ++stats_.icmp_out;
  send_ipv4(std::move(f), src, dst, kIpProtoIcmp, false, kIcmpHeaderLen + len);
}

void Stack::handle_icmp(const Ipv4Header& ip, const std::uint8_t* p, std::size_t n, TimePs now) {
  (void)now;
  IcmpHeader h;
  if (!parse_icmp(p, n, h)) {
    ++stats_.drop_bad_icmp;
    return;
  }
  if (!transport_checksum_ok([&] { return internet_checksum(p, n) == 0; })) {
    ++stats_.drop_bad_icmp_checksum;
    return;
  }
  ++stats_.icmp_in;
  if (h.type == IcmpHeader::kEchoRequest && h.code == 0) {
    ++stats_.echo_requests_in;
    IcmpHeader r;
    r.type = IcmpHeader::kEchoReply;
    r.id = h.id;
    r.seq = h.seq;
    send_icmp(ip.dst, ip.src, r, p + kIcmpHeaderLen, n - kIcmpHeaderLen);  // from the pinged one
  } else if (h.type == IcmpHeader::kEchoReply && h.code == 0) {
    ++stats_.echo_replies_in;
    listener_.icmp_echo_reply(ip.src, h.id, h.seq, p + kIcmpHeaderLen, n - kIcmpHeaderLen);
  }
}

void Stack::handle_udp(const Ipv4Header& ip, const std::uint8_t* p, std::size_t n, TimePs now) {
  (void)now;
  UdpHeader u;
  if (!parse_udp(p, n, u)) {
    ++stats_.drop_bad_udp_header;
    return;
  }
  if (u.checksum != 0 && !transport_checksum_ok([&] {
        return verify_transport_checksum(ip.src, ip.dst, kIpProtoUdp, p, u.length);
      })) {
    ++stats_.drop_bad_udp_checksum;
    return;
  }
  if (!udp_bound_[u.dst_port]) {
    ++stats_.udp_no_port;
    if (is_local(ip.dst)) {  // ICMP port unreachable: IP header + 8 bytes of the datagram
      std::uint8_t quote[kIpv4MinHeaderLen + 8];
      Ipv4Header q = ip;
      write_ipv4_header(quote, q);
      std::memcpy(quote + kIpv4MinHeaderLen, p, 8);
      IcmpHeader h;
      h.type = IcmpHeader::kDestUnreachable;
      h.code = 3;
      send_icmp(ip.dst, ip.src, h, quote, sizeof quote);
    }
    return;
  }
  ++stats_.udp_in;
  listener_.udp_received_at(ip.dst, u.dst_port, ip.src, u.src_port, p + kUdpHeaderLen,
                            u.length - kUdpHeaderLen);
}

void Stack::send_rst_for(const Ipv4Header& ip, const TcpHeader& h, std::size_t plen) {
  if (h.flags & kRst) return;
  TcpHeader r;
  r.src_port = h.dst_port;
  r.dst_port = h.src_port;
  if (h.flags & kAck) {
    r.seq = h.ack;
    r.flags = kRst;
  } else {
    r.seq = 0;
    r.ack = h.seq + static_cast<std::uint32_t>(plen) + ((h.flags & kSyn) ? 1 : 0) +
            ((h.flags & kFin) ? 1 : 0);
    r.flags = kRst | kAck;
  }
  Frame f = new_frame(kL4Off + kTcpMinHeaderLen);
  std::uint8_t* t = f.data() + kL4Off;
  write_tcp_header(t, r);
  // From the address the segment was sent to (a local address: handle_tcp drops broadcasts).
  store_be16(t + 16, transport_checksum(ip.dst, ip.src, kIpProtoTcp, t, kTcpMinHeaderLen));
  ++stats_.tcp_segs_out;
  ++stats_.rst_sent;
  send_ipv4(std::move(f), ip.dst, ip.src, kIpProtoTcp, true, kTcpMinHeaderLen);
}

void Stack::handle_tcp(const Ipv4Header& ip, const std::uint8_t* p, std::size_t n, TimePs now) {
  if (n < kTcpMinHeaderLen) {
    ++stats_.drop_truncated;
    return;
  }
  if (!transport_checksum_ok(
          [&] { return verify_transport_checksum(ip.src, ip.dst, kIpProtoTcp, p, n); })) {
    ++stats_.drop_bad_tcp_checksum;
    return;
  }
  TcpHeader h;
  TcpOptions o;
  switch (parse_tcp(p, n, h, o)) {
    case TcpParse::Ok:
      break;
    case TcpParse::Truncated:
    case TcpParse::BadHeader:
      ++stats_.drop_bad_tcp_header;
      return;
    case TcpParse::BadOptions:
      ++stats_.drop_bad_tcp_options;
      return;
  }
  if (h.src_port == 0 || h.dst_port == 0) {
    ++stats_.drop_bad_tcp_header;
    return;
  }
  if ((h.flags & kSyn) && (h.flags & (kRst | kFin))) {
    ++stats_.drop_bad_tcp_flags;
    return;
  }
  ++stats_.tcp_segs_in;
  const std::uint8_t* payload = p + h.header_len;
  const std::size_t plen = n - h.header_len;

  const TupleKey key{ip.dst, ip.src, h.dst_port, h.src_port};
  if (const ConnId id = lookup_tuple(key)) {
    if (TcpConnection* c = find(id)) {
      c->on_segment(h, o, payload, plen, now, ip.tos & ecn::kMask);
      after_op(*c);
      return;
    }
  }
  if (h.flags & kRst) {
    ++stats_.drop_no_connection;
    return;
  }
  const ConnId lid = find_listener(ip.dst, h.dst_port);
  const bool syn_only = (h.flags & kSyn) && !(h.flags & kAck);
  if (lid == 0 || !syn_only) {
    ++stats_.drop_no_connection;
    // LISTEN drops segments without ACK; everything else gets an RST (RFC 9293 §3.10.7.1-2).
    if (lid == 0 || (h.flags & kAck)) send_rst_for(ip, h, plen);
    return;
  }
  Listener& L = listeners_.find(lid)->second;
  if (L.half_open >= L.backlog) {
    ++stats_.drop_listen_overflow;
    return;
  }
  if (conn_count_ >= cfg_.max_connections) {
    ++stats_.drop_table_full;
    send_rst_for(ip, h, plen);
    return;
  }
  TcpConnection* c = create_conn(key);  // local address: the SYN's destination
  ++L.half_open;
  c->half_open = true;
  c->open_passive(lid, h, o, now);
  if (L.report_syns && !c->dead()) {
    c->user_visible = true;  // its end is reported, whether or not it is accepted
    events_.push_back(PendingEvent{Event::Accepted, EventInfo{c->id(), lid, 0}, true, true});
  }
  after_op(*c);
}

// ------------------------------------------------------------------------------------ user API

ConnId Stack::listen(std::uint16_t port, int backlog, TimePs now, Ipv4 local) {
  now_ = std::max(now_, now);
  if (port == 0 || (local != 0 && !is_local(local))) return 0;
  const std::uint64_t lk = listen_key(local, port);
  if (listener_by_key_.count(lk)) return 0;
  const ConnId id = kListenerBit | (next_listener_++ & ~kListenerBit);
  if (next_listener_ >= kListenerBit) next_listener_ = 1;
  Listener l;
  l.ip = local;
  l.port = port;
  l.backlog = std::max(backlog, 1);
  listeners_[id] = l;
  listener_by_key_[lk] = id;
  return id;
}

void Stack::report_syns(ConnId listener, bool on) {
  auto it = listeners_.find(listener);
  if (it != listeners_.end()) it->second.report_syns = on;
}

ConnId Stack::connect(Ipv4 dst, std::uint16_t dst_port, std::uint16_t src_port, TimePs now,
                      Ipv4 local) {
  now_ = std::max(now_, now);
  Ipv4 src = 0;
  if (!pick_source(local, src)) return 0;
  if (conn_count_ >= cfg_.max_connections) {
    ++stats_.drop_table_full;
    return 0;
  }
  if (dst_port == 0 || (is_martian(dst) && !(cfg_.loopback && is_local(dst)))) return 0;
  if (src_port == 0) {
    const std::uint32_t base = cfg_.ephemeral_port_base;
    const std::uint32_t range = 65536 - base;
    // Every local port of the range already pairs with this destination: fail at once instead of
    // scanning them all (a client pool larger than the range retries on every client's end).
    const auto used = ephemeral_used_.find(ephemeral_key(src, dst, dst_port));
    if (used != ephemeral_used_.end() && used->second >= range) {
      ++stats_.drop_no_ephemeral_port;
      return 0;
    }
    for (std::uint32_t i = 0; i < range; ++i) {
      const std::uint32_t cand = base + (ephemeral_next_ + i) % range;
      const auto port = static_cast<std::uint16_t>(cand);
      // Not a port someone listens on at this address, nor a 4-tuple in use.
      if (listener_by_key_.count(listen_key(src, port)) ||
          listener_by_key_.count(listen_key(0, port)) ||
          by_tuple_.count(TupleKey{src, dst, port, dst_port}))
        continue;
      src_port = port;
      ephemeral_next_ = (ephemeral_next_ + i + 1) % range;
      break;
    }
    if (src_port == 0) return 0;
  } else if (by_tuple_.count(TupleKey{src, dst, src_port, dst_port})) {
    return 0;
  }
  TcpConnection* c = create_conn(TupleKey{src, dst, src_port, dst_port});
  c->user_visible = true;
  const ConnId id = c->id();
  c->open_active(now);
  after_op(*c);
  flush_events();
  return id;
}

std::size_t Stack::send(ConnId id, const std::uint8_t* data, std::size_t len, TimePs now) {
  now_ = std::max(now_, now);
  TcpConnection* c = find(id);
  if (!c) return 0;
  const std::size_t n = c->send(data, len, now);
  after_op(*c);
  flush_events();
  return n;
}

std::uint8_t* Stack::send_place(ConnId id, std::size_t skip, std::size_t n, SendMark& mark) {
  TcpConnection* c = find(id);
  return c ? c->send_place(skip, n, mark) : nullptr;
}

std::size_t Stack::send_written(ConnId id, const SendMark& mark, std::size_t len, TimePs now) {
  now_ = std::max(now_, now);
  TcpConnection* c = find(id);
  if (!c) return 0;
  const std::size_t n = c->send_written(mark, len, now);
  after_op(*c);
  flush_events();
  return n;
}

bool Stack::peer_window_closed(ConnId id) const {
  const TcpConnection* c = find(id);
  return c && c->peer_window_closed();
}

std::size_t Stack::send_space(ConnId id) const {
  const TcpConnection* c = find(id);
  return c ? c->send_space() : 0;
}

std::size_t Stack::recv(ConnId id, std::uint8_t* out, std::size_t max, TimePs now) {
  now_ = std::max(now_, now);
  TcpConnection* c = find(id);
  if (!c) return 0;
  const std::size_t n = c->recv(out, max, now);
  after_op(*c);
  flush_events();
  return n;
}

std::size_t Stack::readable(ConnId id) const {
  const TcpConnection* c = find(id);
  return c ? c->readable() : 0;
}

std::size_t Stack::peek(ConnId id, std::size_t offset, std::uint8_t* out, std::size_t max) const {
  const TcpConnection* c = find(id);
  return c && out ? c->peek(offset, out, max) : 0;
}

std::size_t Stack::view(ConnId id, std::size_t max, const std::uint8_t*& p1, std::size_t& n1,
                        const std::uint8_t*& p2, std::size_t& n2) const {
  p1 = p2 = nullptr;
  n1 = n2 = 0;
  const TcpConnection* c = find(id);
  return c ? c->view(max, p1, n1, p2, n2) : 0;
}

void Stack::close(ConnId id, TimePs now) {
  now_ = std::max(now_, now);
  if (id & kListenerBit) {
    auto it = listeners_.find(id);
    if (it == listeners_.end()) return;
    listener_by_key_.erase(listen_key(it->second.ip, it->second.port));
    for (auto& s : slots_) {  // drop its half-open connections (never reported to the user)
      if (s && !s->dead() && s->listener() == id && !s->user_visible) s->abort(now);
    }
    listeners_.erase(it);
    events_.push_back(PendingEvent{Event::Closed, EventInfo{id, id, 0}, true});
    flush_events();
    return;
  }
  TcpConnection* c = find(id);
  if (!c) return;
  c->close(now);
  after_op(*c);
  flush_events();
}

void Stack::set_cork(ConnId id, bool on, TimePs now) {
  now_ = std::max(now_, now);
  if (id & kListenerBit) return;
  TcpConnection* c = find(id);
  if (!c) return;
  c->set_cork(on, now);
  after_op(*c);
  flush_events();
}

void Stack::abort(ConnId id, TimePs now) {
  now_ = std::max(now_, now);
  if (id & kListenerBit) {
    close(id, now);
    return;
  }
  TcpConnection* c = find(id);
  if (!c) return;
  c->abort(now);
  after_op(*c);
  flush_events();
}

TcpState Stack::state(ConnId id) const {
  if (id & kListenerBit) return listeners_.count(id) ? TcpState::Listen : TcpState::Closed;
  const TcpConnection* c = find(id);
  return c ? c->state() : TcpState::Closed;
}

void Stack::for_each_connection(const std::function<void(const ConnectionInfo&)>& fn) const {
  for (const auto& c : slots_)
    if (c) fn(c->info());
}

ConnectionInfo Stack::info(ConnId id) const {
  const TcpConnection* c = find(id);
  if (c) return c->info();
  ConnectionInfo i;
  if ((id & kListenerBit) && listeners_.count(id)) {
    i.valid = true;
    i.state = TcpState::Listen;
    i.local_ip = listeners_.at(id).ip;  // 0: wildcard (every local address)
    i.local_port = listeners_.at(id).port;
  }
  return i;
}

bool Stack::udp_bind(std::uint16_t port) {
  if (port == 0 || udp_bound_[port]) return false;
  udp_bound_[port] = true;
  return true;
}

void Stack::udp_unbind(std::uint16_t port) { udp_bound_[port] = false; }

bool Stack::udp_send(std::uint16_t src_port, Ipv4 dst, std::uint16_t dst_port,
                     const std::uint8_t* data, std::size_t len, TimePs now, Ipv4 local) {
  now_ = std::max(now_, now);
  Ipv4 src = 0;
  if (!pick_source(local, src)) return false;
  if (kIpv4MinHeaderLen + kUdpHeaderLen + len > cfg_.mtu) {
    ++stats_.drop_oversized;
    return false;
  }
  if (dst_port == 0 || (len && data == nullptr)) return false;
  const std::size_t l4 = kUdpHeaderLen + len;
  Frame f = new_frame(kL4Off + l4);
  std::uint8_t* u = f.data() + kL4Off;
  write_udp(u, UdpHeader{src_port, dst_port, static_cast<std::uint16_t>(l4), 0});
  if (len) std::memcpy(u + kUdpHeaderLen, data, len);
  std::uint16_t c = transport_checksum(src, dst, kIpProtoUdp, u, l4);
  store_be16(u + 6, c == 0 ? 0xffff : c);
  ++stats_.udp_out;
  send_ipv4(std::move(f), src, dst, kIpProtoUdp, false, l4);
  flush_events();
  return true;
}

void Stack::ping(Ipv4 dst, std::uint16_t id, std::uint16_t seq, TimePs now,
                 const std::uint8_t* data, std::size_t len, Ipv4 local) {
  now_ = std::max(now_, now);
  Ipv4 src = 0;
  if (!pick_source(local, src)) return;
  IcmpHeader h;
  h.type = IcmpHeader::kEchoRequest;
  h.id = id;
  h.seq = seq;
  send_icmp(src, dst, h, data, data ? len : 0);
  flush_events();
}

// ------------------------------------------------------------------------------------ stats

std::vector<std::pair<std::string_view, std::uint64_t>> StackStats::counters() const {
  std::vector<std::pair<std::string_view, std::uint64_t>> v;
  for_each([&](std::string_view n, std::uint64_t x) { v.emplace_back(n, x); });
  return v;
}

std::uint64_t StackStats::total_drops() const {
  std::uint64_t s = 0;
  for_each([&](std::string_view n, std::uint64_t x) {
    if (n.substr(0, 5) == "drop_") s += x;
  });
  return s;
}

}  // namespace vtoe::tcpip
