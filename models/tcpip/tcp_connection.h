// One TCP connection (RFC 9293): the control block and its state machine, congestion control
// (RFC 5681, NewReno RFC 6582, CUBIC RFC 9438, PRR RFC 6937, IW per RFC 6928), RTO (RFC 6298),
// window scaling, timestamps and PAWS (RFC 7323), SACK and D-SACK (RFC 2018, 2883) with
// SACK-based loss recovery (RFC 6675), RACK-TLP (RFC 8985), RST/SYN hardening (RFC 5961),
// undo of spurious retransmissions (D-SACK RFC 3708, Eifel RFC 3522, RFC 4015) and
// HyStart++ (RFC 9406), ECN (RFC 3168) and, as an alternative congestion control, BBR v1 with
// delivery-rate estimation and pacing (bbr.h).
// Framing and demultiplexing live in Stack.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "models/tcpip/bbr.h"
#include "models/tcpip/buffer_pool.h"
#include "models/tcpip/byte_ring.h"
#include "models/tcpip/headers.h"
#include "models/tcpip/stats.h"
#include "models/tcpip/types.h"

namespace vtoe::tcpip {

inline bool seq_lt(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(a - b) < 0;
}
inline bool seq_le(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(a - b) <= 0;
}
inline bool seq_gt(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(a - b) > 0;
}
inline bool seq_ge(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(a - b) >= 0;
}

/// A segment a connection wants on the wire; the host adds TCP/IP/Ethernet framing.
struct TcpSegmentOut {
  std::uint32_t seq = 0, ack = 0;
  std::uint8_t flags = 0;
  std::uint16_t window = 0;  ///< already scaled
  std::uint8_t ecn = 0;      ///< IPv4 ECN field (ecn::kEct0 on new data of ECN connections)
  TcpOptions opts;           ///< options to write (MSS, WS, SACK-permitted, TS, SACK blocks)
  const std::uint8_t* p1 = nullptr;  ///< payload, first piece
  std::size_t n1 = 0;
  const std::uint8_t* p2 = nullptr;  ///< payload, second piece (ring wrap)
  std::size_t n2 = 0;
};

class TcpConnection;

/// What a connection needs from its stack.
class TcpHost {
 public:
  virtual void tcp_output(TcpConnection& c, const TcpSegmentOut& seg) = 0;
  /// Terminal events mark the connection dead (dead() is true before the call).
  virtual void tcp_notify(TcpConnection& c, Event ev, std::uint64_t bytes) = 0;
  /// StackConfig::keep_rx_payload off: `len` bytes of payload enter the receive buffer `offset`
  /// bytes after its head (the next byte recv() gives), where they are counted, not kept.
  virtual void tcp_payload(TcpConnection& c, std::size_t offset, const std::uint8_t* data,
                           std::size_t len) = 0;
  /// Each round-trip time sample the connection's estimator takes (RFC 6298).
  virtual void tcp_rtt_sample(TcpConnection& /*c*/, TimePs /*rtt*/) {}

 protected:
  ~TcpHost() = default;
};

class TcpConnection {
 public:
  TcpConnection(TcpHost& host, const StackConfig& cfg, StackStats& stats, ConnId id, Ipv4 local_ip,
                std::uint16_t local_port, Ipv4 remote_ip, std::uint16_t remote_port,
                std::uint32_t iss);
  ~TcpConnection();
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  // --- shared local buffer memory (a TOE's SRAM); none = only the per-connection limits
  void set_pool(BufferPool* pool) { pool_ = pool; }
  // What this connection holds in the pool: queued to send, received unread, window promised.
  std::size_t pool_usage() const;
  std::size_t promised_window() const;
  // Bytes beyond rcv_nxt that may be stored now: the receive buffer's room, and with a shared
  // pool no more than the promised window plus the pool's free space.
  std::uint32_t rcv_space() const;
  void sync_pool();
  // The pool has room again: reopen a window it closed, or tell a writer it stopped.
  void pool_space_freed(TimePs now);
  bool pool_starved() const { return pool_starved_rx_ || pool_starved_tx_; }

  // --- opening
  void open_active(TimePs now);
  void open_passive(ConnId listener, const TcpHeader& syn, const TcpOptions& opts, TimePs now);

  // --- input
  /// `ip_ecn`: the ECN field of the IPv4 header that carried the segment (ecn::kCe = marked).
  void on_segment(const TcpHeader& h, const TcpOptions& o, const std::uint8_t* payload,
                  std::size_t len, TimePs now, std::uint8_t ip_ecn = 0);
  /// Fires every timer whose deadline is <= now.
  void on_timer(TimePs now);
  /// Earliest pending timer deadline, kNever if none.
  TimePs next_deadline() const {  // inline: the stack asks after every operation
    return std::min(
        {rtx_deadline_, delack_deadline_, tw_deadline_, rack_deadline_, pace_deadline_});
  }

  // --- user calls
  std::size_t send(const std::uint8_t* data, std::size_t len, TimePs now);
  std::size_t send_space() const;
  // In-place sending (Stack::send_place / send_written): the storage for `n` bytes `skip` bytes
  // after the send buffer's contents (null if not in one piece), and where they are in the
  // stream; then those bytes queued as send() queues a copy (0 if they are not the next ones).
  std::uint8_t* send_place(std::size_t skip, std::size_t n, SendMark& mark);
  std::size_t send_written(const SendMark& mark, std::size_t len, TimePs now);
  // Data waits to be sent, everything sent is acknowledged and the peer's window leaves less
  // than a segment: only the peer's application reading can let it go on (a zero window, or
  // the small one receiver-side silly-window avoidance leaves).
  bool peer_window_closed() const {
    return state_ == TcpState::Established && snd_una_ == snd_max_ && snd_wnd_ < snd_mss_ &&
           data_end() != snd_max_;
  }
  std::size_t recv(std::uint8_t* out, std::size_t max, TimePs now);
  std::size_t readable() const { return rcvbuf_.size(); }
  std::size_t peek(std::size_t offset, std::uint8_t* out, std::size_t max) const {
    return rcvbuf_.peek(offset, out, max);
  }
  std::size_t view(std::size_t max, const std::uint8_t*& p1, std::size_t& n1,
                   const std::uint8_t*& p2, std::size_t& n2) const {
    const std::size_t n = rcvbuf_.counting_only() ? 0 : max < rcvbuf_.size() ? max : rcvbuf_.size();
    rcvbuf_.spans(0, n, p1, n1, p2, n2);
    return n;
  }
  void close(TimePs now);
  void abort(TimePs now);
  // Cork (Linux TCP_CORK): while on, a segment shorter than the MSS is held back because the
  // writer has said more data follows; turning it off sends what is held.
  void set_cork(bool on, TimePs now);
  bool corked() const { return cork_; }

  // --- identity / state
  ConnId id() const { return id_; }
  ConnId listener() const { return listener_; }
  TcpState state() const { return state_; }
  bool dead() const { return dead_; }
  Ipv4 local_ip() const { return lip_; }
  Ipv4 remote_ip() const { return rip_; }
  std::uint16_t local_port() const { return lport_; }
  std::uint16_t remote_port() const { return rport_; }
  ConnectionInfo info() const;

  /// Stack bookkeeping: the deadline the stack's timer heap holds for this connection.
  TimePs scheduled_at = kNever;
  /// Stack bookkeeping: the connection has been reported to the user (Connected/Accepted).
  bool user_visible = false;
  bool half_open = false;  // counted in its listener's backlog (until Accepted or its end)

 private:
  enum class TimerMode { None, Rtx, Persist, Tlp };

  // One transmitted segment on the send scoreboard: [seq, end) in sequence space (a FIN counts).
  struct TxSeg {
    std::uint32_t seq, end;
    TimePs xmit;          // time of the latest (re)transmission
    std::uint64_t order;  // transmission counter: orders sends within one instant (RACK)
    bool sacked = false, lost = false, retrans = false;
    // Delivery-rate estimation (BBR only): the connection's delivered count and its time, and
    // the send time of the flight's first segment, when this one was sent.
    bool app_limited = false;
    std::uint64_t delivered = 0;
    TimePs delivered_time = 0, first_tx = 0;
  };
  TxSeg& push_seg(std::uint32_t seq, std::uint32_t end, TimePs now);

  bool synchronized() const;
  bool can_send_data_state() const;
  std::uint32_t rcv_free() const;
  std::uint16_t window_field(bool syn);
  void emit(std::uint32_t seq, std::uint8_t flags, std::size_t data_off, std::size_t len);
  void send_syn(bool with_ack);
  // send() and send_written() once there is room: queues up to `len` bytes (copied from `data`,
  // or already written at the buffer's end when it is null) and sends what may go.
  std::size_t append(const std::uint8_t* data, std::size_t len, TimePs now);
  void send_ack_now();
  // An ACK in reply to an unacceptable segment, unless one went out less than
  // cfg_.invalid_ratelimit ago and the segment carries no data (data without SYN is not part
  // of an ACK loop, and its sender needs the ACK to recover).
  void reply_unacceptable(bool carries_data, TimePs now);
  void send_rst(std::uint32_t seq, bool with_ack, std::uint32_t ack);
  void output(TimePs now);
  void transmit_range(std::uint32_t seq, std::uint32_t len, bool fin, TimePs now);
  std::uint32_t retransmit_head(TimePs now);
  void rto_fire(TimePs now);
  void persist_fire(TimePs now);
  void arm_rtx(TimePs now);
  void stop_rtx();
  void arm_persist(TimePs now);
  void rtt_sample(TimePs r);
  void apply_syn_options(const TcpOptions& o);
  void init_cc();
  void establish(TimePs now, Event ev);
  void handle_syn_sent(const TcpHeader& h, const TcpOptions& o, TimePs now);
  bool process_ack(const TcpHeader& h, const TcpOptions& o, std::size_t plen, TimePs now);
  void new_ack(std::uint32_t ack, const TcpOptions& o, TimePs now);
  void on_dupack(TimePs now);
  void process_data(const TcpHeader& h, const std::uint8_t* p, std::size_t plen, TimePs now);
  void process_fin(TimePs now);
  bool insert_ooo(std::uint32_t s, std::uint32_t e);
  // --- SACK receiver side: blocks for the next ACK (D-SACK first, then most recent first).
  std::uint8_t fill_sack_blocks(TcpOptions& o, std::size_t max_blocks);
  void set_dsack(std::uint32_t s, std::uint32_t e);
  // --- timestamps (RFC 7323)
  std::uint32_t ts_now(TimePs now) const;
  // --- send scoreboard (SACK, RFC 6675; RACK-TLP, RFC 8985)
  void record_transmit(std::uint32_t seq, std::uint32_t end, TimePs now);
  std::size_t split_at(std::uint32_t seq);  // index of the segment starting at seq (or size())
  void set_sacked(TxSeg& g);
  void set_lost(TxSeg& g, bool lost);
  std::uint32_t pipe() const;
  void rack_update(const TxSeg& g, TimePs now);
  bool sack_process(const TcpHeader& h, const TcpOptions& o, TimePs now);
  bool detect_losses(TimePs now);
  void enter_sack_recovery(TimePs now);
  void retransmit_seg(std::size_t i, TimePs now);
  bool sack_output(TimePs now);
  void schedule_tlp(TimePs now);
  void tlp_fire(TimePs now);
  // --- congestion control: the response to a loss (ssthresh), growth after slow start
  void on_congestion_event();
  void congestion_avoidance(std::uint32_t acked, TimePs now);
  // PRR (RFC 6937): cwnd during a SACK recovery from the data the ACK delivered.
  void prr_update(std::uint32_t delivered);
  // --- undo of spurious retransmissions (RFC 3708 D-SACK, RFC 3522 Eifel, RFC 4015 response)
  void undo_begin(bool rto);
  void undo_note_retransmit(std::uint32_t seq, std::uint32_t end, TimePs now);
  void undo_dsack(std::uint32_t s, std::uint32_t e);
  void undo_check_eifel(std::uint32_t ack, const TcpOptions& o);
  void undo_apply(bool eifel);
  // --- HyStart++ (RFC 9406): slow-start growth and its RTT-based exit
  void slow_start(std::uint32_t acked, std::uint32_t ack);
  void hystart_sample(TimePs rtt);
  // --- ECN (RFC 3168): CE/CWR on input, the response to ECE
  void ecn_input(const TcpHeader& h, std::uint8_t ip_ecn, std::size_t len);
  void ecn_response(std::uint32_t delivered);
  // --- BBR: delivery-rate samples, the model's cwnd after each ACK, pacing
  void rate_on_send(TxSeg& g, TimePs now);
  void rate_delivered(const TxSeg& g, TimePs now);
  void bbr_ack(std::uint32_t delivered, TimePs now);
  // Pacing holds the next segment back: arms the pacing timer and says so.
  bool pacing_blocked(TimePs now);
  void enter_time_wait(TimePs now);
  void die(Event ev);
  void maybe_window_update(TimePs now);
  std::uint32_t data_end() const {
    return snd_data_base_ + static_cast<std::uint32_t>(sndbuf_.size());
  }

  TcpHost& host_;
  const StackConfig& cfg_;
  StackStats& st_;
  ConnId id_;
  ConnId listener_ = 0;
  Ipv4 lip_, rip_;
  std::uint16_t lport_, rport_;
  TcpState state_ = TcpState::Closed;
  bool dead_ = false;

  // send side
  std::uint32_t iss_;
  std::uint32_t snd_una_, snd_nxt_, snd_max_;
  std::uint32_t snd_wl1_ = 0, snd_wl2_ = 0;
  std::uint32_t snd_wnd_ = 0, max_snd_wnd_ = 0;
  std::uint32_t snd_data_base_;  // sequence number of sndbuf_[0]
  ByteRing sndbuf_;
  bool fin_queued_ = false;  // close() called: FIN after the queued data
  bool fin_sent_ = false;
  std::uint32_t fin_seq_ = 0;
  bool want_writable_ = false;
  std::uint32_t our_mss_, peer_mss_ = 536, snd_mss_ = 536;
  bool wscale_ok_ = false;
  std::uint8_t snd_wscale_ = 0, rcv_wscale_ = 0;

  // congestion control
  std::uint32_t cwnd_ = 0, ssthresh_ = 0x7fffffff;
  std::uint32_t ca_acked_ = 0;
  std::uint32_t dupacks_ = 0;
  bool in_recovery_ = false;
  std::uint32_t recover_;

  // RTT / timers
  bool rtt_timing_ = false;
  std::uint32_t rtt_seq_ = 0;
  TimePs rtt_start_ = 0;
  bool have_rtt_ = false;
  TimePs srtt_ = 0, rttvar_ = 0, rto_;
  std::uint32_t rtx_count_ = 0;  // consecutive retransmissions of the head
  std::uint32_t probes_unanswered_ = 0;
  bool syn_retransmitted_ = false;
  TimerMode tmode_ = TimerMode::None;
  TimePs rtx_deadline_ = kNever;
  TimePs persist_backoff_ = 0;
  TimePs delack_deadline_ = kNever;
  TimePs tw_deadline_ = kNever;
  TimePs last_oow_reply_ = kNever;  // last reply to an unacceptable segment
  TimePs last_ack_rx_ = 0;

  // SACK / timestamps / RACK-TLP (negotiated in the handshake)
  bool sack_ok_ = false, ts_ok_ = false;
  std::deque<TxSeg> segs_;  // [snd_una, snd_max) by sequence number
  std::uint32_t sacked_bytes_ = 0, lost_bytes_ = 0;
  bool rto_recovery_ = false;  // recovery after a timeout (slow start), not a fast recovery
  std::uint32_t ts_offset_ = 0, ts_recent_ = 0, last_ack_sent_ = 0;
  bool rack_valid_ = false, reordering_seen_ = false;
  TimePs rack_xmit_ = 0, rack_rtt_ = 0, min_rtt_ = kNever;
  std::uint64_t rack_order_ = 0, tx_order_ = 0;
  std::uint32_t rack_end_ = 0, rack_fack_ = 0;
  std::uint32_t reo_wnd_mult_ = 1;
  TimePs rack_deadline_ = kNever;  // RACK reordering timer
  TimePs rto_expiry_ = kNever;     // when the RTO would fire while the PTO is pending
  bool tlp_out_ = false, tlp_is_retrans_ = false, tlp_dsack_ = false;
  std::uint32_t tlp_end_seq_ = 0;
  // PRR (RFC 6937) and CUBIC (RFC 9438; windows in segments, as the RFC writes them)
  std::uint32_t prr_delivered_ = 0, prr_out_ = 0, recover_fs_ = 0;
  double cubic_wmax_ = 0, cubic_wlast_max_ = 0, cubic_k_ = 0, cubic_west_ = 0;
  double cubic_cwnd_ = 0;  // cwnd in bytes with the fraction CUBIC's small steps need
  TimePs cubic_epoch_ = kNever;
  // Undo (one loss episode: a fast recovery or a timeout): the state before it, the ranges it
  // retransmitted that no D-SACK has reported yet, the first retransmission's TSval (Eifel).
  bool undo_active_ = false, undo_rto_ = false, undo_dsack_ok_ = false, undo_eifel_ = false;
  bool undo_ts_set_ = false, undo_adapt_rto_ = false;
  std::uint32_t undo_cwnd_ = 0, undo_ssthresh_ = 0, undo_ts_ = 0, undo_ts_end_ = 0;
  double undo_wmax_ = 0, undo_wlast_max_ = 0;
  TimePs undo_srtt_ = 0, undo_rttvar_ = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> undo_rtx_;
  // HyStart++ (RFC 9406): rounds end when snd_una passes hs_window_end_
  bool hs_css_ = false;
  std::uint32_t hs_window_end_ = 0, hs_samples_ = 0, hs_css_rounds_ = 0, hs_css_acc_ = 0;
  TimePs hs_cur_min_ = kNever, hs_last_min_ = kNever, hs_css_baseline_ = kNever;
  // ECN (RFC 3168): asked in our SYN, agreed; receiver echoing CE (ECE until CWR); sender
  // owes a CWR, and reacts to ECE again only once snd_una passes ecn_high_ (once per window).
  bool ecn_asked_ = false, ecn_ok_ = false, ecn_echo_ = false, ecn_cwr_pending_ = false;
  bool ecn_ack_now_ = false;  // the first CE of an echo is ACKed at once (as Linux)
  bool ack_ece_ = false;      // the ACK being processed carries ECE: no window growth
  bool ecn_reduced_ = false;  // the last reduction answered ECE (a loss before ecn_high_: none)
  std::uint32_t ecn_high_ = 0;
  // The ECE reduction in progress (Linux's CWR state): cwnd follows PRR (RFC 6937) down to
  // ssthresh, without growth, until snd_una passes ecn_high_.
  bool cwr_ = false;
  // BBR (cfg_.congestion == Bbr, created when the connection is established) and its inputs:
  // delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation: bytes delivered,
  // when, the send time of the newest delivered segment, the app-limited mark), the sample the
  // ACK being processed builds, the loss state after a timeout, and pacing.
  std::unique_ptr<Bbr> bbr_;
  std::uint64_t delivered_ = 0, app_limited_until_ = 0;
  TimePs delivered_time_ = 0, first_tx_time_ = 0;
  RateSample rs_;
  bool rs_have_ = false;
  TimePs rs_prior_time_ = 0, rs_send_elapsed_ = 0;
  std::uint32_t newly_lost_ = 0;
  bool bbr_loss_ = false;          // after a timeout, until snd_una passes recover_
  TimePs pace_next_ = 0;           // when the next byte is due at the pacing rate
  TimePs pace_deadline_ = kNever;  // pacing timer: a held-back segment may go
  // receive side: SACK blocks and D-SACK
  std::vector<std::uint32_t> sack_mru_;  // a sequence number in each range, most recent first
  bool dsack_pending_ = false;
  std::uint32_t dsack_s_ = 0, dsack_e_ = 0;

  // receive side
  std::uint32_t irs_ = 0, rcv_nxt_ = 0, rcv_adv_ = 0;
  ByteRing rcvbuf_;
  BufferPool* pool_ = nullptr;
  std::size_t pool_held_ = 0;      // data: queued to send, received unread
  std::size_t pool_promised_ = 0;  // receive window promised and not yet filled
  bool pool_starved_rx_ = false;   // a window was held back for want of pool space
  bool pool_starved_tx_ = false;   // a send was cut short for want of pool space
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ooo_;  // [start, end) seq, sorted
  bool rcv_fin_pending_ = false;
  std::uint32_t rcv_fin_seq_ = 0;
  bool fin_received_ = false;
  std::uint32_t unacked_bytes_ = 0;
  std::uint32_t rcv_mss_ = 536;

  // counters
  std::uint64_t bytes_sent_ = 0, bytes_acked_ = 0, bytes_received_ = 0;
  bool cork_ = false;
  TimePs now_ = 0;  // time of the call being processed (timestamps in emit)
};

}  // namespace vtoe::tcpip
