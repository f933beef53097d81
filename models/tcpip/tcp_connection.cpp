#include "models/tcpip/tcp_connection.h"

#include <algorithm>
#include <cmath>

namespace vtoe::tcpip {

using namespace tcp_flags;

namespace {
constexpr std::uint32_t kMaxCwnd = 1u << 30;
constexpr std::uint32_t kMinMss = 64;
constexpr TimePs kMsPs = 1'000'000'000ull;  // one timestamp clock tick (RFC 7323: 1 ms)
constexpr std::uint32_t kDupThresh = 3;     // RFC 6675
constexpr std::size_t kTsOptLen = 12;       // NOP NOP + timestamps option
constexpr TimePs kWcDelAck = 200 * kMsPs;   // RFC 8985 WCDelAckT
constexpr std::uint32_t kMaxReoWndMult = 16;
constexpr double kCubicC = 0.4;                                          // RFC 9438 section 5
constexpr double kCubicBeta = 0.7;                                       // multiplicative decrease
constexpr double kCubicAlpha = 3 * (1 - kCubicBeta) / (1 + kCubicBeta);  // Reno-friendly
constexpr std::uint32_t kInfSsthresh = 0x7fffffff;  // no loss yet: the initial slow start
// RFC 9406 section 4.3 (the RFC's constants; L is not needed: slow start adds at most 1 SMSS
// per ACK here, RFC 5681's appropriate byte counting with L = 1).
constexpr TimePs kHsMinRttThresh = 4 * kMsPs;
constexpr TimePs kHsMaxRttThresh = 16 * kMsPs;
constexpr TimePs kHsMinRttDivisor = 8;
constexpr std::uint32_t kHsNRttSample = 8;
constexpr std::uint32_t kHsCssGrowthDivisor = 4;
constexpr std::uint32_t kHsCssRounds = 5;
// Retransmitted ranges an undo episode tracks for D-SACKs; beyond, only Eifel can undo it.
constexpr std::size_t kUndoMaxRanges = 64;
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
      // A per-connection offset hides the clock (RFC 7323 section 7.1); deterministic from the ISS.
      ts_offset_(iss * 2654435761u),
      rcvbuf_(cfg.recv_buffer) {
  ecn_high_ = iss;  // the first ECE is answered
  if (!cfg.keep_rx_payload) rcvbuf_.set_counting_only();
}

TcpConnection::~TcpConnection() {
  if (!pool_) return;
  pool_->adjust(pool_held_, 0);
  pool_->adjust_promise(pool_promised_, 0);
}

std::size_t TcpConnection::pool_usage() const {
  return sndbuf_.size() + rcvbuf_.size() + promised_window();
}

std::uint32_t TcpConnection::rcv_space() const {
  const std::uint32_t room = rcv_free();
  if (!pool_) return room;
  // What was promised is reserved; beyond it only what the shared pool still holds.
  return static_cast<std::uint32_t>(std::min<std::size_t>(room, promised_window() + pool_->free()));
}

std::size_t TcpConnection::promised_window() const {
  return seq_gt(rcv_adv_, rcv_nxt_) ? rcv_adv_ - rcv_nxt_ : 0;
}

void TcpConnection::sync_pool() {
  if (!pool_) return;
  pool_->adjust_both(pool_held_, sndbuf_.size() + rcvbuf_.size(), pool_promised_,
                     promised_window());
}

void TcpConnection::pool_space_freed(TimePs now) {
  if (dead_) return;
  if (pool_starved_rx_) {
    pool_starved_rx_ = false;
    maybe_window_update(now);
  }
  if (pool_starved_tx_ && pool_ && pool_->free() > 0 && send_space() > 0) {
    pool_starved_tx_ = false;
    if (want_writable_) {
      want_writable_ = false;
      host_.tcp_notify(*this, Event::Writable, send_space());
    }
  }
}

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
  std::uint32_t free_bytes = rcv_free();
  if (pool_) {
    // The window may grow only into pool space (what it already promised stays reserved);
    // data taken since the last sync is counted first.
    sync_pool();
    const std::size_t room = promised_window() + pool_->promise_room();
    if (room < free_bytes) {
      free_bytes = static_cast<std::uint32_t>(room);
      pool_starved_rx_ = true;
    }
  }
  struct SyncOnReturn {
    TcpConnection& c;
    ~SyncOnReturn() { c.sync_pool(); }
  } sync{*this};
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
  // ECN (RFC 3168 section 6.1): an ECN-setup SYN carries ECE and CWR (not when retransmitted:
  // Linux falls back, a middlebox may drop such SYNs), the SYN-ACK that agrees ECE alone. Then
  // ECE on every ACK while echoing a CE, ECT(0) only on new data (never on SYNs, pure ACKs,
  // window probes or retransmissions, 6.1.1, 6.1.4-6.1.6), CWR on the first new data after a
  // window reduction.
  if (flags & kSyn) {
    if (!(flags & kAck) && ecn_asked_ && !syn_retransmitted_)
      flags |= kEce | kCwr;
    else if ((flags & kAck) && ecn_ok_)
      flags |= kEce;
  } else if (ecn_ok_ && (flags & kAck)) {
    if (ecn_echo_) flags |= kEce;
    if (len > 0 && seq_ge(seq, snd_max_)) {
      s.ecn = ecn::kEct0;
      if (ecn_cwr_pending_) {
        flags |= kCwr;
        ecn_cwr_pending_ = false;
        ++st_.cwr_sent;
      }
    }
  }
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
  TcpOptions& o = s.opts;
  if (flags & kSyn) {  // a SYN offers what is configured; a SYN-ACK only what the peer offered
    const bool synack = (flags & kAck) != 0;
    o.has_mss = true;
    o.mss = static_cast<std::uint16_t>(std::min<std::uint32_t>(our_mss_, 65535));
    o.has_wscale = synack ? wscale_ok_ : true;
    o.wscale = std::min<std::uint8_t>(cfg_.window_scale, 14);
    o.sack_permitted = synack ? sack_ok_ : cfg_.sack;
    o.has_timestamps = synack ? ts_ok_ : cfg_.timestamps;
  } else {
    o.has_timestamps = ts_ok_;
  }
  if (o.has_timestamps) {
    o.ts_val = ts_now(now_);
    o.ts_ecr = (flags & kAck) ? ts_recent_ : 0;
  }
  if ((flags & kAck) && !(flags & kSyn) && sack_ok_ &&
      (dsack_pending_ || !ooo_.empty() || rcv_fin_pending_)) {
    // RFC 2018: up to 4 blocks, 3 beside timestamps; fewer if a full segment leaves no room
    // in the MTU (the frame must not grow beyond it).
    const std::size_t ts_len = o.has_timestamps ? kTsOptLen : 0;
    const std::size_t hdrs = 40 + ts_len + len;
    const std::size_t room = cfg_.mtu > hdrs ? cfg_.mtu - hdrs : 0;
    std::size_t max_blocks = std::min<std::size_t>((40 - ts_len - 4) / 8, 4);
    max_blocks = std::min(max_blocks, room >= 4 ? (room - 4) / 8 : 0);
    fill_sack_blocks(o, max_blocks);
  }
  if (flags & kAck) {
    last_ack_sent_ = rcv_nxt_;
    ecn_ack_now_ = false;
  }
  if (len) sndbuf_.spans(data_off, len, s.p1, s.n1, s.p2, s.n2);
  host_.tcp_output(*this, s);
}

void TcpConnection::send_syn(bool with_ack) { emit(iss_, with_ack ? (kSyn | kAck) : kSyn, 0, 0); }

void TcpConnection::reply_unacceptable(bool carries_data, TimePs now) {
  if (!carries_data && last_oow_reply_ != kNever &&
      now - last_oow_reply_ < cfg_.invalid_ratelimit) {
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
  // Called with the peer's SYN (passive) or SYN-ACK (active, which only echoes what our SYN
  // offered): an option is on when both ends want it.
  sack_ok_ = cfg_.sack && o.sack_permitted;
  ts_ok_ = cfg_.timestamps && o.has_timestamps;
  if (ts_ok_) {
    ts_recent_ = o.ts_val;
    // Every segment carries 12 option bytes: the payload shrinks so that frames keep the MTU.
    snd_mss_ = std::max<std::uint32_t>(snd_mss_ - static_cast<std::uint32_t>(kTsOptLen), kMinMss);
  }
  rcv_mss_ = std::min<std::uint32_t>(536, our_mss_);
}

void TcpConnection::init_cc() {
  // RFC 6928 IW; RFC 5681 §3.1: one segment if the SYN or SYN-ACK had to be retransmitted.
  const std::uint32_t segs = std::max<std::uint32_t>(cfg_.initial_window_segments, 1);
  cwnd_ = syn_retransmitted_ ? snd_mss_ : std::min(segs * snd_mss_, kMaxCwnd);
  ssthresh_ = kInfSsthresh;
  ca_acked_ = 0;
  dupacks_ = 0;
  in_recovery_ = false;
  recover_ = snd_una_ - 1;
  undo_active_ = false;
  hs_css_ = false;
  hs_window_end_ = snd_max_;  // the first round ends with the first ACK of data
  hs_samples_ = hs_css_rounds_ = hs_css_acc_ = 0;
  hs_cur_min_ = hs_last_min_ = hs_css_baseline_ = kNever;
  if (cfg_.congestion == CongestionControl::Bbr) {
    bbr_ = std::make_unique<Bbr>(snd_mss_, cwnd_, iss_);
    bbr_->start(have_rtt_ ? srtt_ : kNever, now_);
    delivered_time_ = first_tx_time_ = now_;
  }
}

void TcpConnection::rtt_sample(TimePs r) {
  host_.tcp_rtt_sample(*this, r);
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
  rtx_deadline_ = rto_expiry_ = now + rto_;
}

void TcpConnection::stop_rtx() {
  tmode_ = TimerMode::None;
  rtx_deadline_ = rto_expiry_ = kNever;
}

void TcpConnection::arm_persist(TimePs now) {
  if (persist_backoff_ == 0) persist_backoff_ = std::max(rto_, cfg_.rto_min);
  tmode_ = TimerMode::Persist;
  rtx_deadline_ = now + persist_backoff_;
}

void TcpConnection::die(Event ev) {
  if (dead_) return;
  dead_ = true;
  state_ = TcpState::Closed;
  tmode_ = TimerMode::None;
  rtx_deadline_ = delack_deadline_ = tw_deadline_ = rack_deadline_ = kNever;
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
  now_ = std::max(now_, now);
  state_ = TcpState::SynSent;
  ++st_.active_opens;
  ecn_asked_ = cfg_.ecn == EcnMode::On;
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
  now_ = std::max(now_, now);
  state_ = TcpState::SynReceived;
  ++st_.passive_opens;
  irs_ = syn.seq;
  rcv_nxt_ = irs_ + 1;
  rcv_adv_ = rcv_nxt_;
  apply_syn_options(opts);
  // RFC 3168 section 6.1.1: an ECN-setup SYN has both ECE and CWR.
  ecn_ok_ = cfg_.ecn != EcnMode::Off && (syn.flags & (kEce | kCwr)) == (kEce | kCwr);
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
  if (ecn_ok_) ++st_.ecn_negotiated;
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
    // An ECN-setup SYN-ACK has ECE without CWR (both set is a reflecting middlebox).
    ecn_ok_ = ecn_asked_ && (h.flags & kEce) && !(h.flags & kCwr);
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
    // Simultaneous open (RFC 9293 §3.5): ECN when both SYNs asked.
    ecn_ok_ = ecn_asked_ && (h.flags & (kEce | kCwr)) == (kEce | kCwr);
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
                               std::size_t len, TimePs now, std::uint8_t ip_ecn) {
  if (dead_) return;
  now_ = std::max(now_, now);
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

  const std::uint32_t wnd = rcv_space();
  const std::uint32_t seq = hh.seq;
  auto in_window = [&](std::uint32_t s) { return s - rcv_nxt_ < wnd; };

  // PAWS (RFC 7323 section 5.3 R1): a timestamp older than TS.Recent marks an old duplicate
  // from an earlier wrap of the sequence space. RSTs are exempt (as in Linux), and so are pure
  // ACKs: an ACK overtaken by a newer one carries no data to protect (Linux exempts such
  // disordered ACKs too). Segments without timestamps are accepted (as Linux; the RFC allows
  // dropping them).
  if (ts_ok_ && !rst && o.has_timestamps && seq_lt(o.ts_val, ts_recent_) &&
      (len > 0 || syn || fin)) {
    ++st_.drop_paws;
    const std::uint32_t end = seq + static_cast<std::uint32_t>(len);
    if (len > 0 && seq_le(end, rcv_nxt_)) set_dsack(seq, end);  // a duplicate: report it
    reply_unacceptable(len > 0 && !syn, now);
    return;
  }

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
    if (old) {
      ++st_.old_duplicates;
      // RFC 2883; the FIN included (Linux: end_seq)
      if (len > 0 || fin) set_dsack(seq, seq + static_cast<std::uint32_t>(len) + (fin ? 1u : 0u));
    } else {
      ++st_.drop_out_of_window;
    }
    // An old duplicate still carries a valid cumulative ACK (e.g. from a peer that rewound
    // snd_nxt after a timeout): use it, as BSD does.
    if (ackf && !syn && seq_le(seq, rcv_nxt_) && state_ != TcpState::SynReceived) {
      TcpHeader ah = hh;
      process_ack(ah, o, len, now);
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
  // TS.Recent (RFC 7323 section 4.3): the newest timestamp of a segment that covers the
  // last ACK we sent.
  if (ts_ok_ && o.has_timestamps && seq_ge(o.ts_val, ts_recent_) && seq_le(seq, last_ack_sent_))
    ts_recent_ = o.ts_val;
  ecn_input(hh, ip_ecn, len);

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
    if (!process_ack(hh, o, len, now) || dead_) return;
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

bool TcpConnection::process_ack(const TcpHeader& h, const TcpOptions& o, std::size_t plen,
                                TimePs now) {
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
  if (bbr_) {
    rs_ = RateSample{};
    rs_have_ = false;
    newly_lost_ = 0;
  }
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
  bool dsack = false;
  const std::uint32_t una0 = snd_una_, sacked0 = sacked_bytes_;
  const bool ece = ecn_ok_ && (h.flags & kEce) && !(h.flags & kSyn);
  if (ece) ++st_.ece_received;
  ack_ece_ = ece;
  if (is_new)
    new_ack(ack, o, now);
  else if (dup)
    on_dupack(now);
  ack_ece_ = false;
  if (sack_ok_ && seq_ge(ack, snd_una_)) {
    if (o.sack_blocks) dsack = sack_process(h, o, now);
    // The scoreboard decides: RACK or DupThresh marks losses, the first mark starts recovery.
    // Nothing can be lost while nothing is SACKed outside recovery: the cumulative ACK then
    // covers everything sent before the newest delivered segment (spares a scan per ACK).
    if (segs_.empty()) {
      rack_deadline_ = kNever;
    } else if ((sacked_bytes_ > 0 || in_recovery_ || dupacks_ >= kDupThresh) &&
               detect_losses(now) && !in_recovery_) {
      enter_sack_recovery(now);
    }
    // RFC 6937: DeliveredData = delta snd.una + delta SACKed
    if (in_recovery_ && !rto_recovery_ && !bbr_) {
      const std::int64_t d = static_cast<std::int64_t>(snd_una_ - una0) +
                             static_cast<std::int64_t>(sacked_bytes_) -
                             static_cast<std::int64_t>(sacked0);
      prr_update(static_cast<std::uint32_t>(std::max<std::int64_t>(d, 0)));
    }
    // RFC 8985 section 7.4, decided as Linux does: once the ACK covers the probe, a D-SACK or
    // a pure duplicate ACK says the original arrived too (no loss); an ACK beyond the probe
    // without either says the probe repaired a loss: reduce as after a fast recovery.
    if (tlp_out_ && seq_ge(ack, tlp_end_seq_)) {
      const bool pure_dup = dup && o.sack_blocks == 0;
      if (!tlp_is_retrans_ || tlp_dsack_ || dsack || pure_dup) {
        tlp_out_ = false;
      } else if (seq_gt(ack, tlp_end_seq_)) {
        tlp_out_ = false;
        ++st_.tlp_recoveries;
        undo_active_ = false;  // a real loss: nothing before it may be restored
        on_congestion_event();
        cwnd_ = std::min(cwnd_, ssthresh_);
      }
    }
  }
  // Data this ACK delivered (RFC 6937 DeliveredData): it paces the ECE reduction's PRR.
  const std::int64_t delivered = static_cast<std::int64_t>(snd_una_ - una0) +
                                 static_cast<std::int64_t>(sacked_bytes_) -
                                 static_cast<std::int64_t>(sacked0);
  if (bbr_) bbr_ack(static_cast<std::uint32_t>(std::max<std::int64_t>(delivered, 0)), now);
  if (cwr_ && !in_recovery_) {
    prr_update(static_cast<std::uint32_t>(std::max<std::int64_t>(delivered, 0)));
    cwnd_ = std::max(cwnd_, snd_mss_);
  }
  if (ece) ecn_response(static_cast<std::uint32_t>(std::max<std::int64_t>(delivered, 0)));

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
  if (is_new || window_changed || (sack_ok_ && in_recovery_)) output(now);
  if (is_new) schedule_tlp(now);
  return true;
}

void TcpConnection::new_ack(std::uint32_t ack, const TcpOptions& o, TimePs now) {
  const std::uint32_t acked = ack - snd_una_;
  undo_check_eifel(ack, o);  // before the ACK's RTT sample and window growth
  const bool adapt_rto = undo_adapt_rto_;
  undo_adapt_rto_ = false;
  if (rtt_timing_ && seq_gt(ack, rtt_seq_)) {
    rtt_sample(now - rtt_start_);
    rtt_timing_ = false;
  }
  // Leave the scoreboard: the oldest never-retransmitted segment gives an RTT sample with
  // timestamps on (RFC 7323 section 4: every ACK that advances), else its TSecr does.
  TimePs first_xmit = kNever;
  while (!segs_.empty() && seq_le(segs_.front().end, ack)) {
    TxSeg& g = segs_.front();
    if (!g.sacked) {
      rack_update(g, now);
      rate_delivered(g, now);
    }
    if (!g.retrans) first_xmit = std::min(first_xmit, g.xmit);
    if (g.sacked) sacked_bytes_ -= g.end - g.seq;
    if (g.lost) lost_bytes_ -= g.end - g.seq;
    segs_.pop_front();
  }
  if (!segs_.empty() && seq_lt(segs_.front().seq, ack)) {  // partly acknowledged
    TxSeg& g = segs_.front();
    const std::uint32_t part = ack - g.seq;
    if (!g.sacked) rate_delivered(g, now);
    if (g.sacked) sacked_bytes_ -= part;
    if (g.lost) lost_bytes_ -= part;
    g.seq = ack;
  }
  TimePs sample = first_xmit != kNever ? now - first_xmit : kNever;
  if (sample == kNever && ts_ok_ && o.has_timestamps && o.ts_ecr != 0) {
    const std::uint32_t ticks = ts_now(now) - o.ts_ecr;
    if (ticks < 0x80000000u) sample = std::max<TimePs>(ticks * kMsPs, 1'000'000);
  }
  if (ts_ok_ && sample != kNever) rtt_sample(sample);
  if (adapt_rto && sample != kNever) {
    // RFC 4015 section 4 step (9): the late ACK's RTT, no lower than what was known before.
    srtt_ = std::max(undo_srtt_, sample);
    rttvar_ = std::max(undo_rttvar_, sample / 2);
    have_rtt_ = true;
    rto_ = std::clamp<TimePs>(srtt_ + 4 * rttvar_, cfg_.rto_min, cfg_.rto_max);
  }
  // HyStart++ takes every sample, also without timestamps (never-retransmitted segments).
  if (sample != kNever) hystart_sample(sample);
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
  if (bbr_loss_ && seq_ge(ack, recover_)) bbr_loss_ = false;
  if (in_recovery_ && sack_ok_) {
    // After a timeout the repair runs in slow start; a fast recovery holds cwnd at ssthresh.
    // (BBR sets cwnd from its model once the ACK is processed.)
    if (!bbr_ && rto_recovery_ && cwnd_ < ssthresh_) cwnd_ += std::min(acked, snd_mss_);
    if (seq_ge(ack, recover_)) {  // RFC 6675: recovery ends at the recovery point
      in_recovery_ = false;
      if (!rto_recovery_ && !bbr_) cwnd_ = std::max(ssthresh_, snd_mss_);  // RFC 6937
      rto_recovery_ = false;
      ca_acked_ = 0;
    }
  } else if (in_recovery_) {
    if (seq_ge(ack, recover_)) {  // full ACK (RFC 6582 §3.2 step 3)
      in_recovery_ = false;
      if (!bbr_) cwnd_ = std::min(ssthresh_, std::max(flight, snd_mss_) + snd_mss_);
      ca_acked_ = 0;
    } else {  // partial ACK: retransmit the next hole, deflate
      ++st_.partial_acks;
      retransmit_head(now);
      if (!bbr_) {
        cwnd_ = cwnd_ > acked ? cwnd_ - acked : 0;
        if (acked >= snd_mss_) cwnd_ += snd_mss_;
        cwnd_ = std::max(cwnd_, snd_mss_);
      }
    }
  } else if (bbr_) {
    // BBR: cwnd comes from the model once the whole ACK is processed (bbr_ack).
  } else if (cwr_) {
    // The ECE reduction ends when everything sent before it is acknowledged: cwnd = ssthresh
    // (RFC 6937), and no growth on this ACK (nor on any during the reduction).
    if (seq_ge(ack, ecn_high_)) {
      cwr_ = false;
      cwnd_ = std::max(ssthresh_, snd_mss_);
      ca_acked_ = 0;
    }
  } else if (ack_ece_) {
    // RFC 3168 section 6.1.2: no window growth on an ACK that echoes congestion.
  } else if (cwnd_ < ssthresh_) {
    slow_start(acked, ack);
  } else {
    congestion_avoidance(acked, now);
  }
  cwnd_ = std::min(cwnd_, kMaxCwnd);
  if (!in_recovery_ && seq_gt(snd_una_, recover_)) recover_ = snd_una_ - 1;  // no wrap issues
  dupacks_ = 0;
  if (snd_una_ == snd_max_) {
    stop_rtx();
    rack_deadline_ = kNever;
  } else {
    arm_rtx(now);
  }
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
  if (sack_ok_) return;  // the scoreboard (process_ack) decides
  if (in_recovery_) {
    if (!bbr_) cwnd_ = std::min(cwnd_ + snd_mss_, kMaxCwnd);  // inflate (RFC 6582 step 4)
    output(now);
    return;
  }
  if (dupacks_ == 3 && seq_gt(snd_una_, recover_)) {
    undo_begin(false);
    on_congestion_event();
    cwr_ = false;  // NewReno's recovery takes the reduction over
    recover_ = snd_max_;
    in_recovery_ = true;
    ++st_.fast_retransmits;
    rtt_timing_ = false;
    retransmit_head(now);
    if (!bbr_) cwnd_ = ssthresh_ + 3 * snd_mss_;
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
    if (len > 0) set_dsack(seq, skip < len ? rcv_nxt_ : seq + len);  // report the duplicate
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
  const std::uint32_t space = rcv_space();
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
    if (len) {
      if (rcvbuf_.counting_only()) host_.tcp_payload(*this, rcvbuf_.size(), d, len);
      rcvbuf_.write_at(rcvbuf_.size(), d, len);
    }
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
    // Gap filled, data refused, or the first CE mark (the sender may be at a small window,
    // as Linux reasons): ACK at once.
    if (had_ooo || trimmed || ecn_ack_now_) {
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
      for (const auto& r : ooo_) {  // all of it held already: a duplicate (RFC 2883)
        if (seq_le(r.first, seq) && seq_le(seq + len, r.second)) set_dsack(seq, seq + len);
      }
      sack_mru_.insert(sack_mru_.begin(), seq);  // the newest block goes first (RFC 2018)
      if (sack_mru_.size() > 8) sack_mru_.pop_back();
      if (!insert_ooo(seq, seq + len)) {
        ++st_.drop_ooo_overflow;
        send_ack_now();
        return;
      }
      if (rcvbuf_.counting_only()) host_.tcp_payload(*this, rcvbuf_.size() + off, d, len);
      rcvbuf_.write_at(rcvbuf_.size() + off, d, len);
    }
    if (fin) {
      rcv_fin_pending_ = true;
      rcv_fin_seq_ = seq + len;
      if (len == 0) {  // a FIN alone is a block of its own (fill_sack_blocks)
        sack_mru_.insert(sack_mru_.begin(), rcv_fin_seq_);
        if (sack_mru_.size() > 8) sack_mru_.pop_back();
      }
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
  rack_deadline_ = kNever;
  sndbuf_.release();
}

// ------------------------------------------------------------------------------------ output

void TcpConnection::transmit_range(std::uint32_t seq, std::uint32_t len, bool fin, TimePs now) {
  std::uint8_t flags = kAck;
  if (fin) flags |= kFin;
  if (len && seq + len == data_end()) flags |= kPsh;
  emit(seq, flags, seq - snd_data_base_, len);
  const std::uint32_t after = seq + len + (fin ? 1 : 0);
  if (bbr_ && len > 0 && bbr_->pacing_rate() > 0) {
    // At most a second per segment: a rate estimate from a starved or hostile path can be
    // arbitrarily small, and the delay must stay a time.
    const double ps = std::min(static_cast<double>(len) * 1e12 / bbr_->pacing_rate(), 1e12);
    pace_next_ = std::max(pace_next_, now) + static_cast<TimePs>(ps);
  }
  record_transmit(seq, after, now);
  if ((sack_ok_ && in_recovery_ && !rto_recovery_) || cwr_) prr_out_ += after - seq;
  if (seq_lt(seq, snd_max_)) {
    ++st_.retransmits;
    rtt_timing_ = false;  // Karn: no samples across retransmissions
    undo_note_retransmit(seq, after, now);
  } else if (len > 0 && !rtt_timing_ && !ts_ok_) {  // with timestamps every ACK gives a sample
    rtt_timing_ = true;
    rtt_seq_ = seq;
    rtt_start_ = now;
  }
  if (fin) {
    fin_sent_ = true;
    fin_seq_ = seq + len;
  }
  const bool new_data = seq_gt(after, snd_max_);
  if (new_data) snd_max_ = after;
  if (tmode_ != TimerMode::Rtx && tmode_ != TimerMode::Tlp) arm_rtx(now);
  if (new_data) schedule_tlp(now);
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
  now_ = std::max(now_, now);
  if (cork_ == on) return;
  cork_ = on;
  if (!on) output(now);
}

void TcpConnection::output(TimePs now) {
  if (!can_send_data_state()) return;
  const bool sack_recovery = sack_ok_ && in_recovery_;
  if (sack_recovery) sack_output(now);  // repairs first (RFC 6675 NextSeg rule 1)
  for (;;) {
    if (fin_sent_ && snd_nxt_ == fin_seq_ + 1) break;
    const std::uint32_t end = data_end();
    const std::uint32_t avail = seq_lt(snd_nxt_, end) ? end - snd_nxt_ : 0;
    const std::uint32_t flight = snd_nxt_ - snd_una_;
    // In SACK recovery the congestion window limits pipe, not the whole flight.
    const std::uint32_t cc_flight = sack_recovery ? pipe() : flight;
    const std::uint32_t usable = std::min(snd_wnd_ > flight ? snd_wnd_ - flight : 0,
                                          cwnd_ > cc_flight ? cwnd_ - cc_flight : 0);
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
    if (pacing_blocked(now)) break;
    transmit_range(snd_nxt_, len, fin_now, now);
    snd_nxt_ += len + (fin_now ? 1 : 0);
  }
  if (bbr_ && !seq_lt(snd_nxt_, data_end()) && lost_bytes_ == 0 &&
      (sack_recovery ? pipe() : snd_nxt_ - snd_una_) < cwnd_) {
    // Nothing left to send and room in cwnd: what is delivered from here until this flight is
    // acknowledged measures the application, not the path.
    app_limited_until_ = std::max<std::uint64_t>(delivered_ + (snd_max_ - snd_una_), 1);
  }
  if (snd_max_ == snd_una_ && tmode_ != TimerMode::Persist && seq_lt(snd_nxt_, data_end()))
    arm_persist(now);  // data waits for the window and nothing in flight will bring an ACK
}

// ------------------------------------------------------------------------------------ SACK

std::uint32_t TcpConnection::ts_now(TimePs now) const {
  return static_cast<std::uint32_t>(now / kMsPs) + ts_offset_;
}

void TcpConnection::set_dsack(std::uint32_t s, std::uint32_t e) {
  if (!sack_ok_ || !seq_lt(s, e)) return;
  dsack_pending_ = true;
  dsack_s_ = s;
  dsack_e_ = e;
}

std::uint8_t TcpConnection::fill_sack_blocks(TcpOptions& o, std::size_t max_blocks) {
  std::size_t n = 0;
  if (dsack_pending_ && max_blocks > 0) {  // RFC 2883: the duplicate first, reported once
    o.sack[n++] = {dsack_s_, dsack_e_};
    dsack_pending_ = false;
    ++st_.dsacks_sent;
  }
  // RFC 2018 section 4: the block holding the most recent segment first, then the blocks
  // reported most recently. sack_mru_ remembers one sequence number per range. A FIN received
  // out of order occupies a sequence number too, and the block that ends at it covers it (as
  // Linux's end_seq does): a sender marks a segment SACKed only when a block covers all of it,
  // FIN included, so a block short of the FIN would leave the tail unSACKed and the loss
  // before it to the retransmission timer.
  const bool fin_alone = rcv_fin_pending_ && (ooo_.empty() || ooo_.back().second != rcv_fin_seq_);
  const std::size_t count = ooo_.size() + (fin_alone ? 1 : 0);
  auto range = [&](std::size_t i) -> std::pair<std::uint32_t, std::uint32_t> {
    if (i == ooo_.size()) return {rcv_fin_seq_, rcv_fin_seq_ + 1};  // a FIN without data
    const auto& r = ooo_[i];
    return {r.first, r.second + (rcv_fin_pending_ && r.second == rcv_fin_seq_ ? 1 : 0)};
  };
  std::vector<std::uint32_t> keep;
  for (std::uint32_t x : sack_mru_) {
    for (std::size_t i = 0; i < count; ++i) {
      const auto r = range(i);
      if (!(seq_le(r.first, x) && seq_lt(x, r.second))) continue;
      bool dup = false;
      for (std::uint32_t k : keep) dup = dup || (seq_le(r.first, k) && seq_lt(k, r.second));
      if (!dup) {
        keep.push_back(x);
        if (n < max_blocks) o.sack[n++] = r;
      }
      break;
    }
  }
  sack_mru_ = std::move(keep);
  o.sack_blocks = static_cast<std::uint8_t>(n);
  return o.sack_blocks;
}

std::size_t TcpConnection::split_at(std::uint32_t seq) {
  // Segments are sorted and contiguous from snd_una: search by offset.
  const std::uint32_t off = seq - snd_una_;
  auto it =
      std::upper_bound(segs_.begin(), segs_.end(), off,
                       [this](std::uint32_t v, const TxSeg& g) { return v < g.seq - snd_una_; });
  if (it == segs_.begin()) return 0;
  auto prev = std::prev(it);
  if (prev->seq == seq) return static_cast<std::size_t>(prev - segs_.begin());
  if (!seq_lt(seq, prev->end)) return static_cast<std::size_t>(it - segs_.begin());
  TxSeg tail = *prev;  // split [seq0, end) into [seq0, seq) and [seq, end)
  tail.seq = seq;
  prev->end = seq;
  const auto pos = static_cast<std::size_t>(it - segs_.begin());
  segs_.insert(it, tail);
  return pos;
}

void TcpConnection::set_sacked(TxSeg& g) {
  if (g.sacked) return;
  if (g.lost) set_lost(g, false);
  g.sacked = true;
  sacked_bytes_ += g.end - g.seq;
}

void TcpConnection::set_lost(TxSeg& g, bool lost) {
  if (g.lost == lost) return;
  g.lost = lost;
  if (lost) {
    lost_bytes_ += g.end - g.seq;
    newly_lost_ += g.end - g.seq;
    ++st_.sack_lost_marks;
  } else {
    lost_bytes_ -= g.end - g.seq;
  }
}

std::uint32_t TcpConnection::pipe() const {
  // RFC 6675 SetPipe: outstanding bytes neither SACKed nor presumed lost (a retransmission
  // clears the lost mark and so counts again).
  const std::uint32_t out = snd_max_ - snd_una_;
  const std::uint32_t gone = sacked_bytes_ + lost_bytes_;
  return out > gone ? out - gone : 0;
}

// Stored field by field into the new slot: a pushed temporary is built with narrow stores and
// copied with wide loads, which stalls store-to-load forwarding on every segment.
TcpConnection::TxSeg& TcpConnection::push_seg(std::uint32_t seq, std::uint32_t end, TimePs now) {
  TxSeg& g = segs_.emplace_back();
  g.seq = seq;
  g.end = end;
  g.xmit = now;
  g.order = ++tx_order_;
  return g;
}

void TcpConnection::record_transmit(std::uint32_t seq, std::uint32_t end, TimePs now) {
  if (seq_ge(seq, snd_max_)) {
    if (!segs_.empty() && segs_.back().end != seq) return;  // never: output is contiguous
    rate_on_send(push_seg(seq, end, now), now);
    return;
  }
  const std::uint32_t mid = seq_lt(end, snd_max_) ? end : snd_max_;
  std::size_t i = split_at(seq);
  if (mid != snd_max_) split_at(mid);
  for (; i < segs_.size() && seq_lt(segs_[i].seq, mid); ++i) {
    TxSeg& g = segs_[i];
    set_lost(g, false);
    g.retrans = true;
    g.xmit = now;
    g.order = ++tx_order_;
    rate_on_send(g, now);
  }
  if (seq_gt(end, snd_max_)) {
    rate_on_send(push_seg(snd_max_, end, now), now);
  }
}

void TcpConnection::rack_update(const TxSeg& g, TimePs now) {
  // RFC 8985 section 6.2 step 2: the most recently sent segment known delivered.
  const TimePs rtt = now - g.xmit;
  if (g.retrans && min_rtt_ != kNever && rtt < min_rtt_) return;  // ACK of the original
  if (!g.retrans) min_rtt_ = std::min(min_rtt_, rtt);
  // The transmission counter stands for RFC 8985's (time, end_seq) order: segments sent in
  // the same instant of simulated time stay ordered.
  if (!rack_valid_ || g.order > rack_order_) {
    rack_valid_ = true;
    rack_order_ = g.order;
    rack_xmit_ = g.xmit;
    rack_end_ = g.end;
    rack_rtt_ = rtt;
  }
  // Step 3: a never-retransmitted segment delivered below the highest one delivered was
  // reordered, not lost.
  if (!g.retrans && seq_lt(g.end, rack_fack_)) reordering_seen_ = true;
  if (seq_gt(g.end, rack_fack_)) rack_fack_ = g.end;
}

bool TcpConnection::sack_process(const TcpHeader& h, const TcpOptions& o, TimePs now) {
  bool dsack = false;
  for (std::size_t b = 0; b < o.sack_blocks; ++b) {
    const std::uint32_t s = o.sack[b].first, e = o.sack[b].second;
    if (!seq_lt(s, e)) continue;
    // RFC 2883: a first block below the cumulative ACK, or inside the second, is a D-SACK.
    if (b == 0 && (seq_le(e, h.ack) || (o.sack_blocks > 1 && seq_le(o.sack[1].first, s) &&
                                        seq_le(e, o.sack[1].second)))) {
      dsack = true;
      undo_dsack(s, e);
      continue;
    }
    if (seq_le(e, snd_una_) || seq_gt(e, snd_max_)) continue;  // old or bogus
    // Segments wholly inside the block (no split: a hostile peer cannot grow the list).
    const std::uint32_t off = (seq_lt(s, snd_una_) ? snd_una_ : s) - snd_una_;
    auto it =
        std::lower_bound(segs_.begin(), segs_.end(), off,
                         [this](const TxSeg& g, std::uint32_t v) { return g.seq - snd_una_ < v; });
    for (; it != segs_.end() && seq_le(it->end, e); ++it) {
      if (it->sacked) continue;
      set_sacked(*it);
      rack_update(*it, now);
      rate_delivered(*it, now);
    }
  }
  if (dsack) {
    ++st_.dsacks_in;
    // RFC 8985 section 6.2 step 4: a D-SACK means the reordering window was too small.
    reordering_seen_ = true;
    reo_wnd_mult_ = std::min(reo_wnd_mult_ + 1, kMaxReoWndMult);
    if (tlp_out_ && tlp_is_retrans_) tlp_dsack_ = true;
  }
  return dsack;
}

bool TcpConnection::detect_losses(TimePs now) {
  bool marked = false;
  if (cfg_.rack) {
    // RFC 8985 section 6.2 steps 4-5.
    if (!rack_valid_) return false;
    std::uint32_t sacked_segs = 0;
    for (const TxSeg& g : segs_) sacked_segs += g.sacked ? 1 : 0;
    TimePs reo_wnd = 0;
    if (reordering_seen_ || (!in_recovery_ && sacked_segs < kDupThresh)) {
      const TimePs base = min_rtt_ == kNever ? 0 : min_rtt_ / 4 * reo_wnd_mult_;
      reo_wnd = have_rtt_ ? std::min(base, srtt_) : base;
    }
    TimePs wait = 0;
    for (TxSeg& g : segs_) {
      if (g.sacked || g.lost) continue;
      if (g.order >= rack_order_) continue;  // not sent before the newest delivered segment
      const TimePs deadline = g.xmit + rack_rtt_ + reo_wnd;
      if (deadline <= now) {
        set_lost(g, true);
        marked = true;
      } else {
        wait = std::max(wait, deadline - now);
      }
    }
    rack_deadline_ = wait ? now + wait : kNever;
  } else {
    // RFC 6675 IsLost: DupThresh segments, or more than (DupThresh - 1) * SMSS bytes, SACKed
    // above. A retransmission is not marked again (only the RTO repairs a lost one).
    std::uint32_t segs_above = 0, bytes_above = 0;
    for (auto it = segs_.rbegin(); it != segs_.rend(); ++it) {
      if (it->sacked) {
        ++segs_above;
        bytes_above += it->end - it->seq;
        continue;
      }
      if (it->lost || it->retrans) continue;
      if (segs_above >= kDupThresh || bytes_above > (kDupThresh - 1) * snd_mss_) {
        set_lost(*it, true);
        marked = true;
      }
    }
    if (dupacks_ >= kDupThresh && !segs_.empty() && !segs_.front().sacked &&
        !segs_.front().retrans && !segs_.front().lost) {
      set_lost(segs_.front(), true);  // RFC 6675 section 5 (a): DupThresh duplicate ACKs
      marked = true;
    }
  }
  return marked;
}

void TcpConnection::enter_sack_recovery(TimePs now) {
  // RFC 6675 section 5 steps 4.1-4.3, with PRR (RFC 6937) setting cwnd from here on.
  undo_begin(false);
  on_congestion_event();
  if (cwr_) {
    // Entered from an ECE reduction (Linux: recovery from CWR): the same reduction goes on,
    // with its ssthresh and its PRR counts.
    cwr_ = false;
  } else if (!bbr_) {  // BBR: cwnd from its model on the next ACK (packet conservation)
    prr_delivered_ = prr_out_ = 0;
    recover_fs_ = std::max<std::uint32_t>(snd_max_ - snd_una_, 1);
    cwnd_ = std::max(pipe(), snd_mss_);  // prr_update sets it from the data ACKs deliver
  }
  ca_acked_ = 0;
  recover_ = snd_max_;
  in_recovery_ = true;
  rto_recovery_ = false;
  tlp_out_ = false;  // the reduction happens here, not again at the end of the probe episode
  ++st_.fast_retransmits;
  rtt_timing_ = false;
  if (tmode_ == TimerMode::Tlp) arm_rtx(now);
  for (std::size_t i = 0; i < segs_.size(); ++i) {
    if (segs_[i].lost) {  // the first loss goes out whatever pipe says
      retransmit_seg(i, now);
      break;
    }
  }
}

void TcpConnection::retransmit_seg(std::size_t i, TimePs now) {
  const TxSeg g = segs_[i];
  const bool fin = fin_sent_ && g.end == fin_seq_ + 1;
  transmit_range(g.seq, g.end - g.seq - (fin ? 1 : 0), fin, now);
}

bool TcpConnection::sack_output(TimePs now) {
  // RFC 6675 section 5 step (C): while cwnd - pipe >= 1 SMSS, send NextSeg: the first lost
  // segment, else new data.
  bool sent = false;
  for (;;) {
    const std::uint32_t p = pipe();
    if (cwnd_ <= p || cwnd_ - p < snd_mss_) break;
    std::size_t i = 0;
    while (i < segs_.size() && !segs_[i].lost) ++i;
    if (i < segs_.size()) {
      if (pacing_blocked(now)) break;
      retransmit_seg(i, now);
      sent = true;
      continue;
    }
    break;  // no loss to repair: new data as usual (output's loop, limited by pipe)
  }
  return sent;
}

void TcpConnection::schedule_tlp(TimePs now) {
  // RFC 8985 section 7.2: after new data or an ACK that advances, outside recovery, with no
  // probe outstanding.
  if (!sack_ok_ || !cfg_.rack || in_recovery_ || tlp_out_ || !have_rtt_) return;
  if (tmode_ != TimerMode::Rtx && tmode_ != TimerMode::Tlp) return;
  if (snd_una_ == snd_max_ || !can_send_data_state()) return;
  if (tmode_ == TimerMode::Rtx) rto_expiry_ = rtx_deadline_;
  TimePs pto = 2 * srtt_;
  // RFC 8985 adds the worst-case delayed ACK when one segment is in flight. A receiver that
  // ACKs every second full-sized segment (RFC 5681, this engine) may also hold the ACK for
  // anything less than two: the same allowance then, or every short reply would be probed.
  if (snd_max_ - snd_una_ < 2 * snd_mss_) pto += kWcDelAck;
  // Not later than the RTO would fire: then the probe goes out at that time instead.
  tmode_ = TimerMode::Tlp;
  rtx_deadline_ = std::min(now + pto, rto_expiry_);
}

void TcpConnection::tlp_fire(TimePs now) {
  // RFC 8985 section 7.3: one new segment if the window allows, else the last one again.
  arm_rtx(now);
  if (!can_send_data_state() || snd_una_ == snd_max_) return;
  const std::uint32_t end = data_end();
  const std::uint32_t avail = seq_lt(snd_nxt_, end) ? end - snd_nxt_ : 0;
  const std::uint32_t flight = snd_nxt_ - snd_una_;
  const std::uint32_t usable = snd_wnd_ > flight ? snd_wnd_ - flight : 0;
  ++st_.tlp_probes;
  tlp_out_ = true;  // before sending: the probe itself must not schedule another probe
  tlp_dsack_ = false;
  const std::uint32_t len = std::min({avail, usable, snd_mss_});
  if (len > 0) {
    const bool fin = fin_queued_ && len == avail;
    transmit_range(snd_nxt_, len, fin, now);
    snd_nxt_ += len + (fin ? 1 : 0);
    tlp_is_retrans_ = false;
  } else if (!segs_.empty()) {
    retransmit_seg(segs_.size() - 1, now);
    tlp_is_retrans_ = true;
  }
  tlp_end_seq_ = snd_max_;
}

// ------------------------------------------------------------------------------------ congestion

void TcpConnection::on_congestion_event() {
  const std::uint32_t flight = snd_max_ - snd_una_;
  // A loss in the window an ECE reduction covers is the same congestion (as Linux, whose
  // recovery or loss state entered from CWR keeps ssthresh): no second reduction.
  if (ecn_reduced_ && seq_lt(snd_una_, ecn_high_)) return;
  ecn_reduced_ = false;
  // RFC 3168 section 6.1.2: any reduction (loss, timeout, ECE) is announced with CWR, and
  // covers the ECEs for the data sent before it.
  ecn_high_ = snd_max_;
  if (ecn_ok_) ecn_cwr_pending_ = true;
  cubic_epoch_ = kNever;
  hs_css_ = false;   // a loss ends slow start (HyStart++ included)
  if (bbr_) return;  // BBR has no ssthresh: its model sets cwnd (Linux: bbr_ssthresh)
  if (cfg_.congestion != CongestionControl::Cubic) {
    ssthresh_ = std::max(flight / 2, 2 * snd_mss_);  // RFC 5681 (3.1) / RFC 6675
    return;
  }
  // RFC 9438 sections 4.6-4.7: remember where the loss happened (less after a loss below the
  // previous one: fast convergence), back off to beta.
  const double cw = static_cast<double>(cwnd_) / snd_mss_;
  cubic_wmax_ = cw < cubic_wlast_max_ ? cw * (1 + kCubicBeta) / 2 : cw;
  cubic_wlast_max_ = cw;
  ssthresh_ = std::max(static_cast<std::uint32_t>(cwnd_ * kCubicBeta), 2 * snd_mss_);
}

void TcpConnection::ecn_input(const TcpHeader& h, std::uint8_t ip_ecn, std::size_t len) {
  if (!ecn_ok_) return;
  // RFC 3168 section 6.1.3: CWR ends the echo; a CE (also on the CWR segment) starts it.
  if (h.flags & kCwr) {
    ++st_.cwr_received;
    ecn_echo_ = false;
  }
  if ((ip_ecn & ecn::kMask) == ecn::kCe) {
    ++st_.ce_received;
    if (!ecn_echo_ && len > 0) ecn_ack_now_ = true;
    ecn_echo_ = true;
  }
}

void TcpConnection::ecn_response(std::uint32_t delivered) {
  // Once per window (RFC 3168 section 6.1.2): not for data sent before the last reduction,
  // not in a loss recovery (which has reduced already). The same ssthresh as for a loss,
  // through the congestion control; nothing is retransmitted. cwnd comes down to it by
  // Proportional Rate Reduction (RFC 6937), as Linux's CWR state does: from this ACK on, new
  // data goes out at ssthresh / RecoverFS of the data delivered, so the reduction spreads over
  // the round trip instead of stopping the sender for half of it.
  if (in_recovery_ || !seq_gt(snd_una_, ecn_high_)) return;
  if (bbr_) {  // BBR v1 does not answer ECN: CWR is still owed to end the peer's echo
    on_congestion_event();
    return;
  }
  ++st_.ecn_reductions;
  undo_active_ = false;  // a mark is congestion that happened: nothing to undo over it
  on_congestion_event();
  ecn_reduced_ = true;
  cwr_ = true;
  prr_delivered_ = prr_out_ = 0;
  recover_fs_ = std::max<std::uint32_t>(snd_max_ - snd_una_, 1);
  ca_acked_ = 0;
  prr_update(delivered);
  cwnd_ = std::max(cwnd_, snd_mss_);
}

void TcpConnection::congestion_avoidance(std::uint32_t acked, TimePs now) {
  if (cfg_.congestion != CongestionControl::Cubic) {
    ca_acked_ += acked;  // Reno: one SMSS per cwnd of ACKed data
    if (ca_acked_ >= cwnd_) {
      ca_acked_ -= cwnd_;
      cwnd_ += snd_mss_;
    }
    return;
  }
  // RFC 9438 section 4: W_cubic(t) = C (t - K)^3 + W_max, segments and seconds.
  const double mss = snd_mss_;
  if (std::fabs(cubic_cwnd_ - cwnd_) >= 1) cubic_cwnd_ = cwnd_;  // cwnd was set elsewhere
  const double cw = cubic_cwnd_ / mss;
  if (cubic_epoch_ == kNever) {  // a new congestion-avoidance epoch
    cubic_epoch_ = now;
    if (cw < cubic_wmax_) {
      cubic_k_ = std::cbrt((cubic_wmax_ - cw) / kCubicC);
    } else {
      cubic_k_ = 0;
      cubic_wmax_ = cw;
    }
    cubic_west_ = cw;
  }
  const double t = static_cast<double>(now - cubic_epoch_) * 1e-12;
  const double rtt = (have_rtt_ ? static_cast<double>(srtt_) : 1e11) * 1e-12;
  auto w_cubic = [&](double x) {
    return kCubicC * (x - cubic_k_) * (x - cubic_k_) * (x - cubic_k_) + cubic_wmax_;
  };
  const double segs = acked / mss;
  cubic_west_ += kCubicAlpha * segs / cw;  // section 4.3: Reno-friendly estimate
  double next;
  if (w_cubic(t) < cubic_west_) {
    next = cubic_west_;
  } else {  // section 4.4: towards W_cubic one RTT ahead, at most 1.5 cwnd
    const double target = std::clamp(w_cubic(t + rtt), cw, 1.5 * cw);
    next = cw + (target - cw) * segs / cw;
  }
  cubic_cwnd_ = std::max(next * mss, cubic_cwnd_);
  cwnd_ = std::min(static_cast<std::uint32_t>(std::min(cubic_cwnd_, double(kMaxCwnd))), kMaxCwnd);
}

void TcpConnection::prr_update(std::uint32_t delivered) {
  // RFC 6937 section 3 with slow-start reduction bound (PRR-SSRB).
  prr_delivered_ += delivered;
  const std::uint32_t p = pipe();
  std::int64_t sndcnt;
  if (p > ssthresh_) {  // proportional: sending follows delivery at ssthresh / RecoverFS
    const std::uint64_t num = static_cast<std::uint64_t>(prr_delivered_) * ssthresh_;
    sndcnt = static_cast<std::int64_t>((num + recover_fs_ - 1) / recover_fs_) - prr_out_;
  } else {  // catch up to ssthresh, no faster than slow start
    const std::int64_t limit =
        std::max<std::int64_t>(static_cast<std::int64_t>(prr_delivered_) - prr_out_, delivered) +
        snd_mss_;
    sndcnt = std::min<std::int64_t>(static_cast<std::int64_t>(ssthresh_) - p, limit);
  }
  cwnd_ = p + static_cast<std::uint32_t>(std::max<std::int64_t>(sndcnt, 0));
}

// ------------------------------------------------------------------------------------ BBR

void TcpConnection::rate_on_send(TxSeg& g, TimePs now) {
  if (!bbr_) return;
  // draft-cheng-iccrg-delivery-rate-estimation, OnPacketSent: a flight starting from nothing
  // outstanding starts its send and delivery clocks now.
  if (snd_una_ == snd_max_) first_tx_time_ = delivered_time_ = now;
  g.first_tx = first_tx_time_;
  g.delivered_time = delivered_time_;
  g.delivered = delivered_;
  g.app_limited = app_limited_until_ != 0;
}

void TcpConnection::rate_delivered(const TxSeg& g, TimePs now) {
  if (!bbr_) return;
  // UpdateRateSample: the sample is measured from the most recently sent segment delivered.
  if (!rs_have_ || g.delivered > rs_.prior_delivered ||
      (g.delivered == rs_.prior_delivered && g.xmit > first_tx_time_)) {
    rs_.prior_delivered = g.delivered;
    rs_prior_time_ = g.delivered_time;
    rs_send_elapsed_ = g.xmit - g.first_tx;
    rs_.app_limited = g.app_limited;
    first_tx_time_ = g.xmit;
    rs_have_ = true;
  }
  if (!g.retrans) rs_.rtt = std::min(rs_.rtt, now - g.xmit);  // Karn: no ambiguous samples
}

void TcpConnection::bbr_ack(std::uint32_t delivered, TimePs now) {
  if (delivered > 0) {
    delivered_ += delivered;
    delivered_time_ = now;
  }
  if (app_limited_until_ != 0 && delivered_ > app_limited_until_) app_limited_until_ = 0;
  rs_.newly_delivered = delivered;
  rs_.newly_lost = newly_lost_;
  if (rs_have_) {
    // GenerateRateSample: over the longer of the send and the ACK intervals (ACK compression
    // must not inflate it); shorter than the path's minimum RTT is not a measurement.
    rs_.delivered = delivered_ - rs_.prior_delivered;
    rs_.interval = std::max(rs_send_elapsed_, delivered_time_ - rs_prior_time_);
    if (min_rtt_ != kNever && rs_.interval < min_rtt_) rs_.interval = 0;
  }
  const Bbr::LossState state = bbr_loss_      ? Bbr::LossState::Loss
                               : in_recovery_ ? Bbr::LossState::Recovery
                                              : Bbr::LossState::Open;
  const std::uint32_t inflight = sack_ok_ ? pipe() : snd_max_ - snd_una_;
  bbr_->on_ack(rs_, delivered_, inflight, state, now);
  cwnd_ = bbr_->cwnd();
}

bool TcpConnection::pacing_blocked(TimePs now) {
  if (!bbr_ || bbr_->pacing_rate() <= 0) return false;
  // A quantum (about 1 ms of sending, Linux's TSO autosizing) may leave back to back; beyond
  // it the next segment waits for the pacing rate.
  const TimePs burst = static_cast<TimePs>(
      std::min(static_cast<double>(bbr_->send_quantum()) * 1e12 / bbr_->pacing_rate(), 1e12));
  if (pace_next_ <= now + burst) return false;
  if (pace_deadline_ == kNever) ++st_.pacing_waits;
  pace_deadline_ = pace_next_ - burst;
  return true;
}

// ------------------------------------------------------------------------------------ undo

void TcpConnection::undo_begin(bool rto) {
  if (!cfg_.undo) {
    undo_active_ = false;
    return;
  }
  // A timeout during a fast recovery continues its episode: the state before the recovery is
  // what an undo restores (as Linux keeps its undo marker).
  if (undo_active_ && in_recovery_ && !rto_recovery_) {
    undo_rto_ = undo_rto_ || rto;
    return;
  }
  undo_active_ = true;
  undo_rto_ = rto;
  undo_dsack_ok_ = sack_ok_;
  undo_eifel_ = ts_ok_;
  undo_ts_set_ = false;
  undo_cwnd_ = cwnd_;
  undo_ssthresh_ = ssthresh_;
  undo_wmax_ = cubic_wmax_;
  undo_wlast_max_ = cubic_wlast_max_;
  undo_srtt_ = srtt_;
  undo_rttvar_ = rttvar_;
  undo_rtx_.clear();
}

void TcpConnection::undo_note_retransmit(std::uint32_t seq, std::uint32_t end, TimePs now) {
  if (!undo_active_) return;
  if (seq_gt(end, snd_max_)) end = snd_max_;
  if (!undo_ts_set_) {  // Eifel compares with the episode's first retransmission
    undo_ts_set_ = true;
    undo_ts_ = ts_now(now);
    undo_ts_end_ = end;
  }
  if (!undo_dsack_ok_) return;
  // RFC 3708 wants every retransmission D-SACKed; a range sent twice would need two D-SACKs
  // for one duplicate each: such an episode is left to Eifel.
  for (const auto& r : undo_rtx_) {
    if (seq_lt(seq, r.second) && seq_lt(r.first, end)) {
      undo_dsack_ok_ = false;
      undo_rtx_.clear();
      return;
    }
  }
  if (!undo_rtx_.empty() && undo_rtx_.back().second == seq) {
    undo_rtx_.back().second = end;
  } else if (undo_rtx_.size() < kUndoMaxRanges) {
    undo_rtx_.emplace_back(seq, end);
  } else {
    undo_dsack_ok_ = false;
    undo_rtx_.clear();
  }
}

void TcpConnection::undo_dsack(std::uint32_t s, std::uint32_t e) {
  // RFC 3708: a D-SACK reports a duplicate, here of a retransmission whose original had
  // arrived. The episode was spurious once every retransmitted range has been reported.
  if (!undo_active_ || !undo_dsack_ok_ || undo_rtx_.empty()) return;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> left;
  for (const auto& r : undo_rtx_) {
    if (!(seq_lt(s, r.second) && seq_lt(r.first, e))) {
      left.push_back(r);
      continue;
    }
    if (seq_lt(r.first, s)) left.emplace_back(r.first, s);
    if (seq_gt(r.second, e)) left.emplace_back(e, r.second);
  }
  undo_rtx_ = std::move(left);
  if (undo_rtx_.empty()) undo_apply(false);
}

void TcpConnection::undo_check_eifel(std::uint32_t ack, const TcpOptions& o) {
  // RFC 3522: the first ACK for the first retransmission decides. If it echoes a timestamp
  // older than that retransmission, it was sent for the original: the retransmission was
  // spurious. (Timestamps tick in milliseconds: a retransmission within the original's
  // millisecond cannot be told apart and is not undone.)
  if (!undo_active_ || !undo_eifel_ || !undo_ts_set_ || seq_lt(ack, undo_ts_end_)) return;
  undo_eifel_ = false;
  if (o.has_timestamps && o.ts_ecr != 0 && seq_lt(o.ts_ecr, undo_ts_)) undo_apply(true);
}

void TcpConnection::undo_apply(bool eifel) {
  undo_active_ = false;
  // Linux's response (tcp_undo_cwnd_reduction): back to the window and threshold of before,
  // never below what they have become since.
  cwnd_ = std::min(std::max(cwnd_, undo_cwnd_), kMaxCwnd);
  ssthresh_ = std::max(ssthresh_, undo_ssthresh_);
  cubic_wmax_ = undo_wmax_;
  cubic_wlast_max_ = undo_wlast_max_;
  cubic_epoch_ = kNever;
  ca_acked_ = 0;
  if (in_recovery_) {  // nothing is lost: stop repairing
    in_recovery_ = false;
    for (TxSeg& g : segs_) set_lost(g, false);
  }
  rack_deadline_ = kNever;
  if (undo_rto_) {
    // RFC 4015: resume with new data where the timeout interrupted, without the backoff.
    ++st_.spurious_rto_undone;
    rto_recovery_ = false;
    if (seq_lt(snd_nxt_, snd_max_)) snd_nxt_ = snd_max_;
    rtx_count_ = 0;
    if (have_rtt_) rto_ = std::clamp<TimePs>(srtt_ + 4 * rttvar_, cfg_.rto_min, cfg_.rto_max);
    undo_adapt_rto_ = eifel;  // the late ACK's RTT sample raises SRTT / RTTVAR (step 9)
  } else {
    // A fast retransmit was caused by reordering: RACK widens its window (a D-SACK has done
    // so already in sack_process).
    ++st_.fast_recoveries_undone;
    reordering_seen_ = true;
    if (eifel) reo_wnd_mult_ = std::min(reo_wnd_mult_ + 1, kMaxReoWndMult);
  }
  rto_recovery_ = false;
}

// ------------------------------------------------------------------------------------ HyStart++

void TcpConnection::hystart_sample(TimePs rtt) {
  if (!cfg_.hystart || ssthresh_ != kInfSsthresh || cwnd_ >= ssthresh_) return;
  hs_cur_min_ = std::min(hs_cur_min_, rtt);
  ++hs_samples_;
}

void TcpConnection::slow_start(std::uint32_t acked, std::uint32_t ack) {
  // RFC 5681 section 3.1, or Linux's growth by everything acknowledged.
  const std::uint32_t inc = cfg_.linux_slow_start ? acked : std::min(acked, snd_mss_);
  // HyStart++ (RFC 9406) runs in the initial slow start only (section 4.3: after a timeout
  // ssthresh bounds slow start).
  if (!cfg_.hystart || ssthresh_ != kInfSsthresh) {
    cwnd_ += inc;
    return;
  }
  if (hs_css_) {  // Conservative Slow Start: a quarter of the growth
    hs_css_acc_ += inc;
    cwnd_ += hs_css_acc_ / kHsCssGrowthDivisor;
    hs_css_acc_ %= kHsCssGrowthDivisor;
  } else {
    cwnd_ += inc;
  }
  if (hs_samples_ >= kHsNRttSample && hs_cur_min_ != kNever) {
    if (!hs_css_ && hs_last_min_ != kNever) {
      const TimePs thresh =
          std::clamp(hs_last_min_ / kHsMinRttDivisor, kHsMinRttThresh, kHsMaxRttThresh);
      if (hs_cur_min_ >= hs_last_min_ + thresh) {  // the RTT grew: a queue builds up
        hs_css_ = true;
        hs_css_baseline_ = hs_cur_min_;
        hs_css_rounds_ = 0;
        hs_css_acc_ = 0;
        ++st_.hystart_css_entries;
      }
    } else if (hs_css_ && hs_cur_min_ < hs_css_baseline_) {  // the exit was spurious
      hs_css_ = false;
      hs_css_baseline_ = kNever;
    }
  }
  if (seq_ge(ack, hs_window_end_)) {  // a round ends: the next one ends with what is sent now
    hs_last_min_ = hs_cur_min_;
    hs_cur_min_ = kNever;
    hs_samples_ = 0;
    hs_window_end_ = snd_max_;
    if (hs_css_ && ++hs_css_rounds_ >= kHsCssRounds) {  // on to congestion avoidance
      hs_css_ = false;
      ssthresh_ = std::max(cwnd_, 2 * snd_mss_);
      ++st_.hystart_exits;
    }
  }
}

// ------------------------------------------------------------------------------------ timers

void TcpConnection::on_timer(TimePs now) {
  if (dead_) return;
  now_ = std::max(now_, now);
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
  if (rack_deadline_ <= now) {  // RACK reordering window over: mark what it covers lost
    rack_deadline_ = kNever;
    if (sack_ok_ && synchronized() && detect_losses(now)) {
      if (!in_recovery_) enter_sack_recovery(now);
      output(now);
    }
    if (dead_) return;
  }
  if (pace_deadline_ <= now) {
    pace_deadline_ = kNever;
    output(now);
    if (dead_) return;
  }
  if (rtx_deadline_ <= now) {
    const TimerMode m = tmode_;
    stop_rtx();
    if (m == TimerMode::Persist)
      persist_fire(now);
    else if (m == TimerMode::Rtx)
      rto_fire(now);
    else if (m == TimerMode::Tlp)
      tlp_fire(now);
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
  if (rtx_count_ <= 1) {
    undo_begin(true);
    on_congestion_event();
  }
  if (bbr_) {
    bbr_->on_timeout();
    bbr_loss_ = true;
  }
  cwnd_ = snd_mss_;  // loss window (RFC 5681 §3.1)
  ca_acked_ = 0;
  in_recovery_ = false;
  cwr_ = false;
  dupacks_ = 0;
  recover_ = snd_max_;  // RFC 6582 §3.2 step 1 after a timeout
  rtt_timing_ = false;
  rto_ = std::min(rto_ * 2, cfg_.rto_max);  // RFC 6298 §5.5 backoff
  tlp_out_ = false;
  if (sack_ok_ && !segs_.empty()) {
    // Everything not SACKed is presumed lost and repaired in slow start (NextSeg), SACKed
    // data is not sent again. A second timeout in a row forgets the SACKs (the receiver may
    // have reneged, RFC 2018 section 8).
    in_recovery_ = rto_recovery_ = true;
    for (TxSeg& g : segs_) {
      if (g.sacked && rtx_count_ >= 2) {
        g.sacked = false;
        sacked_bytes_ -= g.end - g.seq;
      }
      if (!g.sacked) set_lost(g, true);
    }
    retransmit_seg(0, now);  // the head goes out even into a zero window
    arm_rtx(now);
    return;
  }
  snd_nxt_ = snd_una_;              // go back N
  snd_nxt_ = retransmit_head(now);  // the head goes out even into a zero window
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
  now_ = std::max(now_, now);
  if (send_space() == 0 || data == nullptr) {
    if (len) want_writable_ = true;
    // Held back by the shared pool, not by this connection's own buffer: wait for the pool.
    if (len && pool_ && sndbuf_.free() > 0 && pool_->free() == 0) pool_starved_tx_ = true;
    return 0;
  }
  return append(data, len, now);
}

std::uint8_t* TcpConnection::send_place(std::size_t skip, std::size_t n, SendMark& mark) {
  mark.buffer = sndbuf_.id();
  mark.pos = sndbuf_.position() + sndbuf_.size() + skip;
  return sndbuf_.tail_space(skip, n);
}

std::size_t TcpConnection::send_written(const SendMark& mark, std::size_t len, TimePs now) {
  now_ = std::max(now_, now);
  const std::uint64_t end = sndbuf_.position() + sndbuf_.size();
  if (mark.buffer != sndbuf_.id() || mark.pos < end) return 0;
  if (mark.pos > end) {
    // Bytes placed before them were never queued (their read was dropped): these move to the
    // end, as a copy of them from elsewhere would.
    std::vector<std::uint8_t> bytes(len);
    bytes.resize(sndbuf_.peek_written(static_cast<std::size_t>(mark.pos - sndbuf_.position()),
                                      bytes.data(), len));
    return bytes.size() < len ? 0 : send(bytes.data(), len, now);
  }
  if (send_space() == 0) {
    if (len) want_writable_ = true;
    if (len && pool_ && sndbuf_.free() > 0 && pool_->free() == 0) pool_starved_tx_ = true;
    return 0;
  }
  return append(nullptr, len, now);
}

std::size_t TcpConnection::append(const std::uint8_t* data, std::size_t len, TimePs now) {
  std::size_t take = len;
  if (pool_ && pool_->free() < take) {
    take = pool_->free();
    pool_starved_tx_ = true;
  }
  const std::size_t n = data ? sndbuf_.push(data, take) : sndbuf_.commit_written(take);
  sync_pool();
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
      return pool_ ? std::min(sndbuf_.free(), pool_->free()) : sndbuf_.free();
    default:
      return 0;
  }
}

std::size_t TcpConnection::recv(std::uint8_t* out, std::size_t max, TimePs now) {
  now_ = std::max(now_, now);
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
  std::uint32_t free_bytes = rcv_free();
  if (pool_)
    free_bytes =
        static_cast<std::uint32_t>(std::min<std::size_t>(free_bytes, cur + pool_->promise_room()));
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
  now_ = std::max(now_, now);
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
  if (dead_) return;
  now_ = std::max(now_, now);
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
  i.in_cwr = cwr_;
  i.dupacks = dupacks_;
  i.consecutive_retransmissions = rtx_count_;
  i.bytes_sent = bytes_sent_;
  i.bytes_acked = bytes_acked_;
  i.bytes_received = bytes_received_;
  i.send_queued = sndbuf_.size();
  i.readable = rcvbuf_.size();
  i.ooo_ranges = ooo_.size();
  i.sack_ok = sack_ok_;
  i.ts_ok = ts_ok_;
  i.sacked_bytes = sacked_bytes_;
  i.lost_bytes = lost_bytes_;
  i.ts_recent = ts_recent_;
  i.min_rtt = min_rtt_ == kNever ? 0 : min_rtt_;
  i.reordering_seen = reordering_seen_;
  i.ecn_ok = ecn_ok_;
  i.ecn_echo = ecn_echo_;
  if (bbr_) {
    i.pacing_rate = bbr_->pacing_rate();
    i.bottleneck_bw = bbr_->bottleneck_bw();
    i.bbr_mode = to_string(bbr_->mode());
  }
  return i;
}

}  // namespace vtoe::tcpip
