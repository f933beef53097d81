#include "models/tcpip/tcp_connection.h"

#include <algorithm>

namespace vtoe::tcpip {

using namespace tcp_flags;

namespace {
constexpr std::uint32_t kMaxCwnd = 1u << 30;
constexpr std::uint32_t kMinMss = 64;
}  // namespace

TcpConnection::TcpConnection(TcpHost& host, const StackConfig& cfg, StackStats& stats, ConnId id,
                             Ipv4 local_ip, std::uint16_t local_port, Ipv4 remote_ip,
                             std::uint16_t remote_port, std::uint32_t iss)
    : host_(host),
      cfg_(cfg),
      st_(stats),
      id_(id),
      lip_(local_ip),
      rip_(remote_ip),
      lport_(local_port),
      rport_(remote_port),
      iss_(iss),
      snd_una_(iss),
      snd_nxt_(iss),
      snd_max_(iss),
      snd_data_base_(iss + 1),
      sndbuf_(cfg.send_buffer),
      our_mss_(std::max<std::uint32_t>(cfg.mtu > 40 ? cfg.mtu - 40 : 0, kMinMss)),
      recover_(iss),
      rto_(cfg.rto_initial),
      rcvbuf_(cfg.recv_buffer) {}

// ------------------------------------------------------------------------------------ helpers

bool TcpConnection::synchronized() const {
  switch (state_) {
    case TcpState::SynReceived:
    case TcpState::Established:
    case TcpState::FinWait1:
    case TcpState::FinWait2:
    case TcpState::CloseWait:
    case TcpState::Closing:
    case TcpState::LastAck:
    case TcpState::TimeWait:
      return true;
    default:
      return false;
  }
}

bool TcpConnection::can_send_data_state() const {
  switch (state_) {
    case TcpState::Established:
    case TcpState::CloseWait:
    case TcpState::FinWait1:
    case TcpState::Closing:
    case TcpState::LastAck:
      return true;
    default:
      return false;
  }
}

std::uint32_t TcpConnection::rcv_free() const {
  return static_cast<std::uint32_t>(rcvbuf_.capacity() - rcvbuf_.size());
}

std::uint16_t TcpConnection::window_field(bool syn) {
  const std::uint32_t free_bytes = rcv_free();
  if (syn) {  // RFC 7323: the window in a SYN is never scaled
    const std::uint32_t w = std::min<std::uint32_t>(free_bytes, 65535);
    rcv_adv_ = rcv_nxt_ + w;
    return static_cast<std::uint16_t>(w);
  }
  if (seq_lt(rcv_adv_, rcv_nxt_)) rcv_adv_ = rcv_nxt_;
  // Receiver SWS avoidance (RFC 9293 §3.8.6.2.2): move the right edge only by a useful amount.
  const std::uint32_t edge = rcv_nxt_ + free_bytes;
  const std::uint32_t thresh =
      std::min<std::uint32_t>(static_cast<std::uint32_t>(rcvbuf_.capacity() / 2), our_mss_);
  if (seq_gt(edge, rcv_adv_) && edge - rcv_adv_ >= thresh) rcv_adv_ = edge;
  const std::uint8_t shift = wscale_ok_ ? rcv_wscale_ : 0;
  std::uint32_t w = (rcv_adv_ - rcv_nxt_) >> shift;
  if (w > 65535) {  // the 16-bit field is the limit: what the peer sees is what we advertised
    w = 65535;
    rcv_adv_ = rcv_nxt_ + (w << shift);
  }
  return static_cast<std::uint16_t>(w);
}

void TcpConnection::emit(std::uint32_t seq, std::uint8_t flags, std::size_t data_off,
                         std::size_t len) {
  TcpSegmentOut s;
  s.seq = seq;
  s.flags = flags;
  if (flags & kAck) {
    s.ack = rcv_nxt_;
    s.window = window_field((flags & kSyn) != 0);
    delack_deadline_ = kNever;
    unacked_bytes_ = 0;
  } else if (flags & kSyn) {
    s.window = window_field(true);
  }
  if (flags & kSyn) {
    s.syn_options = true;
    s.mss = static_cast<std::uint16_t>(std::min<std::uint32_t>(our_mss_, 65535));
    s.wscale_present = (flags & kAck) ? wscale_ok_ : true;
    s.wscale = std::min<std::uint8_t>(cfg_.window_scale, 14);
  }
  if (len) sndbuf_.spans(data_off, len, s.p1, s.n1, s.p2, s.n2);
  host_.tcp_output(*this, s);
}

void TcpConnection::send_syn(bool with_ack) { emit(iss_, with_ack ? (kSyn | kAck) : kSyn, 0, 0); }

void TcpConnection::reply_unacceptable(bool carries_data, TimePs now) {
  if (!carries_data && last_oow_reply_ != kNever && now - last_oow_reply_ < cfg_.invalid_ratelimit) {
    ++st_.oow_replies_limited;
    return;
  }
  last_oow_reply_ = now;
  send_ack_now();
}

void TcpConnection::send_ack_now() {
  // BSD practice: pure ACKs carry snd_max, which the peer has seen even after we rewound snd_nxt.
  emit(snd_max_, kAck, 0, 0);
}

void TcpConnection::send_rst(std::uint32_t seq, bool with_ack, std::uint32_t ack) {
  TcpSegmentOut s;
  s.seq = seq;
  s.ack = with_ack ? ack : 0;
  s.flags = with_ack ? (kRst | kAck) : kRst;
  host_.tcp_output(*this, s);
}

void TcpConnection::apply_syn_options(const TcpOptions& o) {
  peer_mss_ = o.has_mss ? o.mss : 536;
  snd_mss_ = std::max(std::min(peer_mss_, our_mss_), kMinMss);
  if (o.has_wscale) {
    wscale_ok_ = true;
    snd_wscale_ = std::min<std::uint8_t>(o.wscale, 14);
    rcv_wscale_ = std::min<std::uint8_t>(cfg_.window_scale, 14);
  } else {
    wscale_ok_ = false;
    snd_wscale_ = rcv_wscale_ = 0;
  }
  rcv_mss_ = std::min<std::uint32_t>(536, our_mss_);
}

void TcpConnection::init_cc() {
  // RFC 6928 IW; RFC 5681 §3.1: one segment if the SYN or SYN-ACK had to be retransmitted.
  const std::uint32_t segs = std::max<std::uint32_t>(cfg_.initial_window_segments, 1);
  cwnd_ = syn_retransmitted_ ? snd_mss_ : std::min(segs * snd_mss_, kMaxCwnd);
  ssthresh_ = 0x7fffffff;
  ca_acked_ = 0;
  dupacks_ = 0;
  in_recovery_ = false;
  recover_ = snd_una_ - 1;
}

void TcpConnection::rtt_sample(TimePs r) {
  // RFC 6298 §2 (alpha 1/8, beta 1/4, K 4).
  if (!have_rtt_) {
    srtt_ = r;
    rttvar_ = r / 2;
    have_rtt_ = true;
  } else {
    const TimePs diff = srtt_ > r ? srtt_ - r : r - srtt_;
    rttvar_ = (3 * rttvar_ + diff) / 4;
    srtt_ = (7 * srtt_ + r) / 8;
  }
  rto_ = std::clamp<TimePs>(srtt_ + 4 * rttvar_, cfg_.rto_min, cfg_.rto_max);
}

void TcpConnection::arm_rtx(TimePs now) {
  tmode_ = TimerMode::Rtx;
  rtx_deadline_ = now + rto_;
}

void TcpConnection::stop_rtx() {
  tmode_ = TimerMode::None;
  rtx_deadline_ = kNever;
}

void TcpConnection::arm_persist(TimePs now) {
  if (persist_backoff_ == 0) persist_backoff_ = std::max(rto_, cfg_.rto_min);
  tmode_ = TimerMode::Persist;
  rtx_deadline_ = now + persist_backoff_;
}

TimePs TcpConnection::next_deadline() const {
  return std::min({rtx_deadline_, delack_deadline_, tw_deadline_});
}

void TcpConnection::die(Event ev) {
  if (dead_) return;
  dead_ = true;
  state_ = TcpState::Closed;
  tmode_ = TimerMode::None;
  rtx_deadline_ = delack_deadline_ = tw_deadline_ = kNever;
  switch (ev) {
    case Event::Reset:
      ++st_.conns_reset;
      break;
    case Event::TimedOut:
      ++st_.conns_timed_out;
      break;
    case Event::Refused:
      ++st_.conns_refused;
      break;
    default:
      ++st_.conns_closed;
      break;
  }
  host_.tcp_notify(*this, ev, 0);
}

// ------------------------------------------------------------------------------------ opening

void TcpConnection::open_active(TimePs now) {
  state_ = TcpState::SynSent;
  ++st_.active_opens;
  send_syn(false);
  snd_nxt_ = snd_max_ = iss_ + 1;
  rtt_timing_ = true;
  rtt_seq_ = iss_;
  rtt_start_ = now;
  arm_rtx(now);
}

void TcpConnection::open_passive(ConnId listener, const TcpHeader& syn, const TcpOptions& opts,
                                 TimePs now) {
  listener_ = listener;
  state_ = TcpState::SynReceived;
  ++st_.passive_opens;
  irs_ = syn.seq;
  rcv_nxt_ = irs_ + 1;
  rcv_adv_ = rcv_nxt_;
  apply_syn_options(opts);
  snd_wnd_ = max_snd_wnd_ = syn.window;
  snd_wl1_ = syn.seq;
  snd_wl2_ = iss_;
  send_syn(true);
  snd_nxt_ = snd_max_ = iss_ + 1;
  rtt_timing_ = true;
  rtt_seq_ = iss_;
  rtt_start_ = now;
  arm_rtx(now);
}

void TcpConnection::establish(TimePs now, Event ev) {
  state_ = TcpState::Established;
  stop_rtx();
  rtx_count_ = 0;
  init_cc();
  ++st_.conns_established;
  host_.tcp_notify(*this, ev, 0);
  if (fin_queued_) state_ = TcpState::FinWait1;
  output(now);
}

void TcpConnection::handle_syn_sent(const TcpHeader& h, const TcpOptions& o, TimePs now) {
  const bool ackf = h.flags & kAck, rst = h.flags & kRst, syn = h.flags & kSyn;
  if (ackf && (seq_le(h.ack, iss_) || seq_gt(h.ack, snd_max_))) {
    ++st_.drop_out_of_window;
    if (!rst) send_rst(h.ack, false, 0);
    return;
  }
  if (rst) {
    if (ackf) {
      ++st_.rst_in;
      die(Event::Refused);
    } else {
      ++st_.drop_rst_out_of_window;
    }
    return;
  }
  if (!syn) {
    ++st_.drop_no_ack;
    return;
  }
  irs_ = h.seq;
  rcv_nxt_ = irs_ + 1;
  rcv_adv_ = rcv_nxt_;
  apply_syn_options(o);
  if (ackf) {
    snd_una_ = h.ack;
    snd_wnd_ = max_snd_wnd_ = h.window;  // unscaled in a SYN
    snd_wl1_ = h.seq;
    snd_wl2_ = h.ack;
    last_ack_rx_ = now;
    if (rtt_timing_) {
      rtt_sample(now - rtt_start_);
      rtt_timing_ = false;
    }
    state_ = TcpState::Established;
    send_ack_now();
    establish(now, Event::Connected);
  } else {
    // Simultaneous open (RFC 9293 §3.5).
    state_ = TcpState::SynReceived;
    snd_wnd_ = max_snd_wnd_ = h.window;
    snd_wl1_ = h.seq;
    snd_wl2_ = iss_;
    send_syn(true);
    arm_rtx(now);
  }
}

// ------------------------------------------------------------------------------------ input

void TcpConnection::on_segment(const TcpHeader& h, const TcpOptions& o, const std::uint8_t* payload,
                               std::size_t len, TimePs now) {
  if (dead_) return;
  if (state_ == TcpState::SynSent) {
    handle_syn_sent(h, o, now);
    return;
  }
  if (state_ == TcpState::Closed || state_ == TcpState::Listen) return;

  TcpHeader hh = h;
  bool syn = hh.flags & kSyn;
  const bool rst = hh.flags & kRst, fin = hh.flags & kFin, ackf = hh.flags & kAck;

  if (state_ == TcpState::SynReceived && syn && !rst && hh.seq == irs_) {
    if (!ackf) {  // the peer retransmitted its SYN: our SYN-ACK was lost
      ++st_.syn_retransmits;
      ++st_.retransmits;
      syn_retransmitted_ = true;
      rtt_timing_ = false;
      send_syn(true);
      return;
    }
    // Simultaneous open: the peer's SYN-ACK acknowledges our SYN; its SYN is a duplicate.
    hh.seq += 1;
    hh.flags = static_cast<std::uint8_t>(hh.flags & ~kSyn);
    syn = false;
  }

  if (state_ == TcpState::TimeWait) {
    if (rst) {
      if (hh.seq == rcv_nxt_) {
        ++st_.rst_in;
        die(Event::Closed);
      } else {
        ++st_.drop_rst_out_of_window;
      }
      return;
    }
    if (syn) ++st_.challenge_acks;
    if (syn || fin || len > 0) reply_unacceptable((len > 0 || fin) && !syn, now);
    if (fin) tw_deadline_ = now + cfg_.time_wait;  // retransmitted FIN: restart 2MSL
    return;
  }

  const std::uint32_t wnd = rcv_free();
  const std::uint32_t seq = hh.seq;
  auto in_window = [&](std::uint32_t s) { return s - rcv_nxt_ < wnd; };

  if (rst) {  // RFC 5961 §3.2
    if (seq == rcv_nxt_) {
      ++st_.rst_in;
      die(Event::Reset);
    } else if (in_window(seq)) {
      ++st_.challenge_acks;
      reply_unacceptable(false, now);
    } else {
      ++st_.drop_rst_out_of_window;
    }
    return;
  }

  // Acceptability test (RFC 9293 §3.10.7.4).
  const std::uint32_t seg_len = static_cast<std::uint32_t>(len) + (syn ? 1u : 0u) + (fin ? 1u : 0u);
  bool acceptable;
  if (seg_len == 0)
    acceptable = wnd == 0 ? seq == rcv_nxt_ : in_window(seq);
  else if (wnd == 0)
    acceptable = seq == rcv_nxt_;  // ACK processed; the data is trimmed off below
  else
    acceptable = in_window(seq) || in_window(seq + seg_len - 1);
  if (!acceptable) {
    const bool old = seq_le(seq + seg_len, rcv_nxt_) && seg_len > 0;
    if (old)
      ++st_.old_duplicates;
    else
      ++st_.drop_out_of_window;
    // An old duplicate still carries a valid cumulative ACK (e.g. from a peer that rewound
    // snd_nxt after a timeout): use it, as BSD does.
    if (ackf && !syn && seq_le(seq, rcv_nxt_) && state_ != TcpState::SynReceived) {
      TcpHeader ah = hh;
      process_ack(ah, len, now);
      if (dead_) return;
    }
    reply_unacceptable(seg_len > 0 && !syn, now);
    return;
  }

  if (syn) {  // RFC 5961 §4: a SYN in a synchronized state gets a challenge ACK
    ++st_.challenge_acks;
    reply_unacceptable(false, now);
    return;
  }
  if (!ackf) {
    ++st_.drop_no_ack;
    return;
  }

  if (state_ == TcpState::SynReceived) {
    if (seq_le(hh.ack, snd_una_) || seq_gt(hh.ack, snd_max_)) {
      ++st_.drop_ack_unsent;
      send_rst(hh.ack, false, 0);
      return;
    }
    snd_una_ = hh.ack;
    snd_wnd_ = static_cast<std::uint32_t>(hh.window) << (wscale_ok_ ? snd_wscale_ : 0);
    max_snd_wnd_ = std::max(max_snd_wnd_, snd_wnd_);
    snd_wl1_ = seq;
    snd_wl2_ = hh.ack;
    last_ack_rx_ = now;
    if (rtt_timing_) {
      rtt_sample(now - rtt_start_);
      rtt_timing_ = false;
    }
    establish(now, listener_ != 0 ? Event::Accepted : Event::Connected);
  } else {
    if (!process_ack(hh, len, now) || dead_) return;
  }

  if (len > 0 || fin) {
    switch (state_) {
      case TcpState::Established:
      case TcpState::FinWait1:
      case TcpState::FinWait2:
        process_data(hh, payload, len, now);
        break;
      default:
        break;  // the peer's FIN was already received: ignore further data
    }
  }
}

bool TcpConnection::process_ack(const TcpHeader& h, std::size_t plen, TimePs now) {
  const std::uint32_t ack = h.ack;
  const bool carries_data = plen > 0 && !(h.flags & kSyn);
  if (seq_gt(ack, snd_max_)) {
    ++st_.drop_ack_unsent;
    reply_unacceptable(carries_data, now);
    return false;
  }
  // RFC 5961 §5: ACKs older than the largest window we could have been offered are suspect.
  const std::uint32_t old_limit = std::max<std::uint32_t>(max_snd_wnd_, 65535);
  if (seq_lt(ack, snd_una_ - old_limit)) {
    ++st_.challenge_acks;
    reply_unacceptable(carries_data, now);
    return false;
  }
  last_ack_rx_ = now;
  probes_unanswered_ = 0;
  const std::uint32_t wnd = static_cast<std::uint32_t>(h.window) << (wscale_ok_ ? snd_wscale_ : 0);
  const bool is_new = seq_gt(ack, snd_una_);
  const bool dup = !is_new && ack == snd_una_ && plen == 0 && !(h.flags & (kSyn | kFin)) &&
                   wnd == snd_wnd_ && snd_max_ != snd_una_;
  bool window_changed = false;
  if (seq_ge(ack, snd_una_) &&
      (seq_lt(snd_wl1_, h.seq) || (snd_wl1_ == h.seq && seq_le(snd_wl2_, ack)))) {
    if (wnd != snd_wnd_) window_changed = true;
    snd_wnd_ = wnd;
    snd_wl1_ = h.seq;
    snd_wl2_ = ack;
    max_snd_wnd_ = std::max(max_snd_wnd_, wnd);
    if (wnd > 0) persist_backoff_ = 0;
  }
  if (is_new)
    new_ack(ack, now);
  else if (dup)
    on_dupack(now);

  if (fin_sent_ && snd_una_ == fin_seq_ + 1) {
    switch (state_) {
      case TcpState::FinWait1:
        state_ = TcpState::FinWait2;
        break;
      case TcpState::Closing:
        enter_time_wait(now);
        break;
      case TcpState::LastAck:
        die(Event::Closed);
        return false;
      default:
        break;
    }
  }
  if (is_new || window_changed) output(now);
  return true;
}

void TcpConnection::new_ack(std::uint32_t ack, TimePs now) {
  const std::uint32_t acked = ack - snd_una_;
  if (rtt_timing_ && seq_gt(ack, rtt_seq_)) {
    rtt_sample(now - rtt_start_);
    rtt_timing_ = false;
  }
  std::uint32_t data_acked = acked;
  if (fin_sent_ && seq_gt(ack, fin_seq_)) data_acked -= 1;
  data_acked = std::min<std::uint32_t>(data_acked, static_cast<std::uint32_t>(sndbuf_.size()));
  sndbuf_.consume(data_acked);
  snd_data_base_ += data_acked;
  snd_una_ = ack;
  if (seq_lt(snd_nxt_, ack)) snd_nxt_ = ack;
  bytes_acked_ += data_acked;
  rtx_count_ = 0;
  const std::uint32_t flight = snd_max_ - snd_una_;
  if (in_recovery_) {
    if (seq_ge(ack, recover_)) {  // full ACK (RFC 6582 §3.2 step 3)
      in_recovery_ = false;
      cwnd_ = std::min(ssthresh_, std::max(flight, snd_mss_) + snd_mss_);
      ca_acked_ = 0;
    } else {  // partial ACK: retransmit the next hole, deflate
      ++st_.partial_acks;
      retransmit_head(now);
      cwnd_ = cwnd_ > acked ? cwnd_ - acked : 0;
      if (acked >= snd_mss_) cwnd_ += snd_mss_;
      cwnd_ = std::max(cwnd_, snd_mss_);
    }
  } else if (cwnd_ < ssthresh_) {
    cwnd_ += std::min(acked, snd_mss_);  // slow start (RFC 5681 §3.1)
  } else {
    ca_acked_ += acked;  // congestion avoidance: one SMSS per cwnd of ACKed data
    if (ca_acked_ >= cwnd_) {
      ca_acked_ -= cwnd_;
      cwnd_ += snd_mss_;
    }
  }
  cwnd_ = std::min(cwnd_, kMaxCwnd);
  if (!in_recovery_ && seq_gt(snd_una_, recover_)) recover_ = snd_una_ - 1;  // no wrap issues
  dupacks_ = 0;
  if (snd_una_ == snd_max_)
    stop_rtx();
  else
    arm_rtx(now);
  if (data_acked) {
    host_.tcp_notify(*this, Event::SendAcked, data_acked);
    if (want_writable_ && sndbuf_.free() > 0 && !fin_queued_) {
      want_writable_ = false;
      host_.tcp_notify(*this, Event::Writable, sndbuf_.free());
    }
  }
}

void TcpConnection::on_dupack(TimePs now) {
  ++st_.dup_acks;
  ++dupacks_;
  if (in_recovery_) {
    cwnd_ = std::min(cwnd_ + snd_mss_, kMaxCwnd);  // inflate (RFC 6582 step 4)
    output(now);
    return;
  }
  if (dupacks_ == 3 && seq_gt(snd_una_, recover_)) {
    const std::uint32_t flight = snd_max_ - snd_una_;
    ssthresh_ = std::max(flight / 2, 2 * snd_mss_);
    recover_ = snd_max_;
    in_recovery_ = true;
    ++st_.fast_retransmits;
    rtt_timing_ = false;
    retransmit_head(now);
    cwnd_ = ssthresh_ + 3 * snd_mss_;
    output(now);
  }
}

bool TcpConnection::insert_ooo(std::uint32_t s, std::uint32_t e) {
  auto off = [this](std::uint32_t x) { return x - rcv_nxt_; };
  std::size_t i = 0;
  while (i < ooo_.size() && off(ooo_[i].second) < off(s)) ++i;
  std::size_t j = i;
  std::uint32_t ns = s, ne = e;
  while (j < ooo_.size() && off(ooo_[j].first) <= off(ne)) {
    if (off(ooo_[j].first) < off(ns)) ns = ooo_[j].first;
    if (off(ooo_[j].second) > off(ne)) ne = ooo_[j].second;
    ++j;
  }
  if (j == i && ooo_.size() >= cfg_.max_ooo_ranges) return false;
  ooo_.erase(ooo_.begin() + static_cast<std::ptrdiff_t>(i),
             ooo_.begin() + static_cast<std::ptrdiff_t>(j));
  ooo_.insert(ooo_.begin() + static_cast<std::ptrdiff_t>(i), {ns, ne});
  return true;
}

void TcpConnection::process_data(const TcpHeader& h, const std::uint8_t* p, std::size_t plen,
                                 TimePs now) {
  std::uint32_t seq = h.seq;
  bool fin = h.flags & kFin;
  std::uint32_t len = static_cast<std::uint32_t>(plen);
  const std::uint8_t* d = p;
  if (seq_lt(seq, rcv_nxt_)) {  // trim the already-received front
    const std::uint32_t skip = rcv_nxt_ - seq;
    if (skip >= len) {
      if (skip > len) fin = false;
      d += len;
      len = 0;
    } else {
      d += skip;
      len -= skip;
    }
    seq = rcv_nxt_;
  }
  const std::uint32_t space = rcv_free();
  const std::uint32_t off = seq - rcv_nxt_;
  bool trimmed = false;
  if (off > space || len > space - off) {  // trim what exceeds the receive buffer
    len = space > off ? space - off : 0;
    fin = false;
    trimmed = true;
    ++st_.drop_rcv_window;
  }
  if (len == 0 && !fin) {
    send_ack_now();
    return;
  }
  if (off == 0) {
    const bool had_ooo = !ooo_.empty();
    if (len) rcvbuf_.write_at(rcvbuf_.size(), d, len);
    std::uint32_t new_nxt = seq + len;
    while (!ooo_.empty() && seq_le(ooo_.front().first, new_nxt)) {
      if (seq_gt(ooo_.front().second, new_nxt)) new_nxt = ooo_.front().second;
      ooo_.erase(ooo_.begin());
    }
    const std::uint32_t adv = new_nxt - rcv_nxt_;
    if (adv) {
      rcvbuf_.commit(adv);
      rcv_nxt_ = new_nxt;
      bytes_received_ += adv;
      st_.tcp_bytes_in += adv;
      host_.tcp_notify(*this, Event::Readable, adv);
    }
    const bool fin_now =
        (fin && seq + len == rcv_nxt_) || (rcv_fin_pending_ && rcv_fin_seq_ == rcv_nxt_);
    if (fin_now) {
      process_fin(now);
      return;
    }
    if (had_ooo || trimmed) {  // gap filled (or data refused): ACK at once
      send_ack_now();
      return;
    }
    rcv_mss_ = std::min(std::max(rcv_mss_, len), our_mss_);
    unacked_bytes_ += len;
    if (unacked_bytes_ >= 2 * rcv_mss_)
      send_ack_now();
    else if (delack_deadline_ == kNever)
      delack_deadline_ = now + cfg_.delayed_ack;
  } else {
    ++st_.ooo_segments;
    if (len) {
      if (!insert_ooo(seq, seq + len)) {
        ++st_.drop_ooo_overflow;
        send_ack_now();
        return;
      }
      rcvbuf_.write_at(rcvbuf_.size() + off, d, len);
    }
    if (fin) {
      rcv_fin_pending_ = true;
      rcv_fin_seq_ = seq + len;
    }
    send_ack_now();  // duplicate ACK signals the hole
  }
}

void TcpConnection::process_fin(TimePs now) {
  rcv_nxt_ += 1;
  fin_received_ = true;
  rcv_fin_pending_ = false;
  ooo_.clear();
  host_.tcp_notify(*this, Event::PeerClosed, 0);
  switch (state_) {
    case TcpState::SynReceived:
    case TcpState::Established:
      state_ = TcpState::CloseWait;
      break;
    case TcpState::FinWait1:
      state_ = TcpState::Closing;  // our FIN is not acknowledged yet (else we'd be in FIN_WAIT_2)
      break;
    case TcpState::FinWait2:
      enter_time_wait(now);
      break;
    default:
      break;
  }
  send_ack_now();
}

void TcpConnection::enter_time_wait(TimePs now) {
  state_ = TcpState::TimeWait;
  stop_rtx();
  delack_deadline_ = kNever;
  tw_deadline_ = now + cfg_.time_wait;
  sndbuf_.release();
}

// ------------------------------------------------------------------------------------ output

void TcpConnection::transmit_range(std::uint32_t seq, std::uint32_t len, bool fin, TimePs now) {
  std::uint8_t flags = kAck;
  if (fin) flags |= kFin;
  if (len && seq + len == data_end()) flags |= kPsh;
  emit(seq, flags, seq - snd_data_base_, len);
  const std::uint32_t after = seq + len + (fin ? 1 : 0);
  if (seq_lt(seq, snd_max_)) {
    ++st_.retransmits;
    rtt_timing_ = false;  // Karn: no samples across retransmissions
  } else if (len > 0 && !rtt_timing_) {
    rtt_timing_ = true;
    rtt_seq_ = seq;
    rtt_start_ = now;
  }
  if (fin) {
    fin_sent_ = true;
    fin_seq_ = seq + len;
  }
  if (seq_gt(after, snd_max_)) snd_max_ = after;
  if (tmode_ != TimerMode::Rtx) arm_rtx(now);
}

std::uint32_t TcpConnection::retransmit_head(TimePs now) {
  const std::uint32_t end = data_end();
  const std::uint32_t len = seq_lt(snd_una_, end) ? std::min(end - snd_una_, snd_mss_) : 0;
  const bool fin = fin_sent_ && snd_una_ + len == fin_seq_;
  if (len == 0 && !fin) return snd_una_;
  transmit_range(snd_una_, len, fin, now);
  return snd_una_ + len + (fin ? 1 : 0);
}

void TcpConnection::set_cork(bool on, TimePs now) {
  if (cork_ == on) return;
  cork_ = on;
  if (!on) output(now);
}

void TcpConnection::output(TimePs now) {
  if (!can_send_data_state()) return;
  for (;;) {
    if (fin_sent_ && snd_nxt_ == fin_seq_ + 1) break;
    const std::uint32_t end = data_end();
    const std::uint32_t avail = seq_lt(snd_nxt_, end) ? end - snd_nxt_ : 0;
    const std::uint32_t flight = snd_nxt_ - snd_una_;
    const std::uint32_t wnd = std::min(snd_wnd_, cwnd_);
    const std::uint32_t usable = wnd > flight ? wnd - flight : 0;
    const std::uint32_t len = std::min({avail, usable, snd_mss_});
    const bool fin_now = fin_queued_ && len == avail;
    if (len == 0 && !fin_now) break;
    if (len > 0 && len < snd_mss_) {
      // Sender SWS avoidance and Nagle (RFC 9293 §3.8.6.2.1).
      const bool all = len == avail;
      const bool ok = (all && !cork_ && (!cfg_.nagle || flight == 0 || fin_now)) ||
                      (max_snd_wnd_ > 0 && len >= max_snd_wnd_ / 2);
      if (!ok) break;
    }
    transmit_range(snd_nxt_, len, fin_now, now);
    snd_nxt_ += len + (fin_now ? 1 : 0);
  }
  if (snd_max_ == snd_una_ && tmode_ != TimerMode::Persist && seq_lt(snd_nxt_, data_end()))
    arm_persist(now);  // data waits for the window and nothing in flight will bring an ACK
}

// ------------------------------------------------------------------------------------ timers

void TcpConnection::on_timer(TimePs now) {
  if (dead_) return;
  if (tw_deadline_ <= now) {
    tw_deadline_ = kNever;
    die(Event::Closed);
    return;
  }
  if (delack_deadline_ <= now) {
    delack_deadline_ = kNever;
    if (synchronized()) {
      ++st_.delayed_acks;
      send_ack_now();
    }
  }
  if (rtx_deadline_ <= now) {
    const TimerMode m = tmode_;
    stop_rtx();
    if (m == TimerMode::Persist)
      persist_fire(now);
    else if (m == TimerMode::Rtx)
      rto_fire(now);
  }
}

void TcpConnection::rto_fire(TimePs now) {
  if (state_ == TcpState::SynSent || state_ == TcpState::SynReceived) {
    if (++rtx_count_ > cfg_.max_syn_retransmissions) {
      die(Event::TimedOut);
      return;
    }
    ++st_.syn_retransmits;
    ++st_.retransmits;
    syn_retransmitted_ = true;
    rtt_timing_ = false;
    rto_ = std::min(rto_ * 2, cfg_.rto_max);
    send_syn(state_ == TcpState::SynReceived);
    arm_rtx(now);
    return;
  }
  if (snd_una_ == snd_max_) return;  // nothing outstanding
  // A peer that keeps answering with a zero window is alive: do not time it out (Linux does the
  // same); our retransmissions act as window probes.
  const bool zero_window_alive = snd_wnd_ == 0 && now - last_ack_rx_ < cfg_.rto_max;
  if (!zero_window_alive && ++rtx_count_ > cfg_.max_retransmissions) {
    send_rst(snd_max_, true, rcv_nxt_);
    die(Event::TimedOut);
    return;
  }
  ++st_.rto_timeouts;
  if (rtx_count_ <= 1) ssthresh_ = std::max((snd_max_ - snd_una_) / 2, 2 * snd_mss_);
  cwnd_ = snd_mss_;  // loss window (RFC 5681 §3.1)
  ca_acked_ = 0;
  in_recovery_ = false;
  dupacks_ = 0;
  recover_ = snd_max_;  // RFC 6582 §3.2 step 1 after a timeout
  rtt_timing_ = false;
  rto_ = std::min(rto_ * 2, cfg_.rto_max);  // RFC 6298 §5.5 backoff
  snd_nxt_ = snd_una_;                      // go back N
  snd_nxt_ = retransmit_head(now);          // the head goes out even into a zero window
  arm_rtx(now);
}

void TcpConnection::persist_fire(TimePs now) {
  const std::uint32_t end = data_end();
  const std::uint32_t avail = seq_lt(snd_nxt_, end) ? end - snd_nxt_ : 0;
  if (avail == 0 || !can_send_data_state()) return;
  const std::uint32_t flight = snd_nxt_ - snd_una_;
  const std::uint32_t usable = snd_wnd_ > flight ? snd_wnd_ - flight : 0;
  if (usable == 0) {
    if (++probes_unanswered_ > cfg_.max_retransmissions) {
      send_rst(snd_max_, true, rcv_nxt_);
      die(Event::TimedOut);
      return;
    }
    // Zero-window probe as Linux sends it: an old sequence number forces the peer to ACK
    // with its current window.
    ++st_.persist_probes;
    emit(snd_una_ - 1, kAck, 0, 0);
    persist_backoff_ = std::min(persist_backoff_ * 2, cfg_.rto_max);
    tmode_ = TimerMode::Persist;
    rtx_deadline_ = now + persist_backoff_;
    return;
  }
  // The window is open but too small for the SWS rules: the override timer sends what fits.
  const std::uint32_t len = std::min({avail, usable, snd_mss_});
  const bool fin = fin_queued_ && len == avail;
  transmit_range(snd_nxt_, len, fin, now);
  snd_nxt_ += len + (fin ? 1 : 0);
  output(now);
}

// ------------------------------------------------------------------------------------ user calls

std::size_t TcpConnection::send(const std::uint8_t* data, std::size_t len, TimePs now) {
  if (send_space() == 0 || data == nullptr) {
    if (len) want_writable_ = true;
    return 0;
  }
  const std::size_t n = sndbuf_.push(data, len);
  bytes_sent_ += n;
  if (n < len) want_writable_ = true;
  if (n) output(now);
  return n;
}

std::size_t TcpConnection::send_space() const {
  if (dead_ || fin_queued_) return 0;
  switch (state_) {
    case TcpState::SynSent:
    case TcpState::SynReceived:
    case TcpState::Established:
    case TcpState::CloseWait:
      return sndbuf_.free();
    default:
      return 0;
  }
}

std::size_t TcpConnection::recv(std::uint8_t* out, std::size_t max, TimePs now) {
  std::size_t n = 0;
  if (out == nullptr) {  // discard: the caller already has the bytes (peek)
    n = std::min(max, rcvbuf_.size());
    rcvbuf_.consume(n);
  } else {
    n = rcvbuf_.pop(out, max);
  }
  if (n) maybe_window_update(now);
  return n;
}

void TcpConnection::maybe_window_update(TimePs now) {
  (void)now;
  if (fin_received_) return;
  if (state_ != TcpState::Established && state_ != TcpState::FinWait1 &&
      state_ != TcpState::FinWait2)
    return;
  const std::uint32_t cur = seq_gt(rcv_adv_, rcv_nxt_) ? rcv_adv_ - rcv_nxt_ : 0;
  const std::uint32_t free_bytes = rcv_free();
  const std::uint32_t thresh =
      std::min<std::uint32_t>(static_cast<std::uint32_t>(rcvbuf_.capacity() / 2), our_mss_);
  // Announce only a substantial opening (the window at least doubled), like Linux.
  if (free_bytes >= cur + thresh && free_bytes >= 2 * cur) {
    ++st_.window_updates;
    send_ack_now();
  }
}

void TcpConnection::close(TimePs now) {
  if (dead_) return;
  switch (state_) {
    case TcpState::SynSent:
      if (sndbuf_.empty()) {
        die(Event::Closed);  // RFC 9293: nothing to deliver, delete the TCB
        break;
      }
      fin_queued_ = true;  // data queued: finish the handshake, deliver it, then FIN
      break;
    case TcpState::SynReceived:
      fin_queued_ = true;  // the FIN follows the handshake
      break;
    case TcpState::Established:
      fin_queued_ = true;
      state_ = TcpState::FinWait1;
      output(now);
      break;
    case TcpState::CloseWait:
      fin_queued_ = true;
      state_ = TcpState::LastAck;
      output(now);
      break;
    default:
      break;
  }
}

void TcpConnection::abort(TimePs now) {
  (void)now;
  if (dead_) return;
  // RFC 793 ABORT: a RST to a synchronized peer, except from TIME_WAIT (the peer has closed).
  if (synchronized() && state_ != TcpState::TimeWait) send_rst(snd_max_, true, rcv_nxt_);
  die(Event::Closed);
}

ConnectionInfo TcpConnection::info() const {
  ConnectionInfo i;
  i.valid = true;
  i.state = state_;
  i.local_ip = lip_;
  i.remote_ip = rip_;
  i.local_port = lport_;
  i.remote_port = rport_;
  i.listener = listener_;
  i.iss = iss_;
  i.irs = irs_;
  i.snd_una = snd_una_;
  i.snd_nxt = snd_nxt_;
  i.snd_max = snd_max_;
  i.snd_wnd = snd_wnd_;
  i.rcv_nxt = rcv_nxt_;
  i.rcv_wnd = seq_gt(rcv_adv_, rcv_nxt_) ? rcv_adv_ - rcv_nxt_ : 0;
  i.cwnd = cwnd_;
  i.ssthresh = ssthresh_;
  i.snd_mss = snd_mss_;
  i.peer_mss = peer_mss_;
  i.wscale_ok = wscale_ok_;
  i.snd_wscale = snd_wscale_;
  i.rcv_wscale = rcv_wscale_;
  i.srtt = srtt_;
  i.rttvar = rttvar_;
  i.rto = rto_;
  i.in_recovery = in_recovery_;
  i.dupacks = dupacks_;
  i.consecutive_retransmissions = rtx_count_;
  i.bytes_sent = bytes_sent_;
  i.bytes_acked = bytes_acked_;
  i.bytes_received = bytes_received_;
  i.send_queued = sndbuf_.size();
  i.readable = rcvbuf_.size();
  i.ooo_ranges = ooo_.size();
  return i;
}

}  // namespace vtoe::tcpip
