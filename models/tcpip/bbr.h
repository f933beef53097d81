// BBR congestion control, version 1 (Cardwell et al., "BBR: Congestion-Based Congestion
// Control", ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control-00; Linux's tcp_bbr.c,
// the default of the Linux hosts vtoe's NetVP benchmark talks to). A model of the path from
// delivery-rate samples: the bottleneck bandwidth (windowed max over 10 round trips) and the
// round-trip propagation time (windowed min over 10 s). It paces at gain x bandwidth and caps
// the flight at gain x BDP, cycling the pacing gain to probe for more bandwidth (ProbeBw) and
// draining the queue once in 10 s to measure the RTT again (ProbeRtt). Random loss is not a
// congestion signal to it, unlike Reno and CUBIC.
// Not modelled from Linux's v1: long-term bandwidth sampling (policer detection) and the
// ACK-aggregation extra cwnd. ECN marks do not change the model (as v1).
#pragma once

#include <array>
#include <cstdint>

#include "models/tcpip/types.h"

namespace vtoe::tcpip {

// What one ACK delivered, measured over the flight of its most recently sent delivered
// segment (draft-cheng-iccrg-delivery-rate-estimation).
struct RateSample {
  std::uint64_t delivered = 0;  // bytes delivered over `interval`
  TimePs interval = 0;          // 0: no valid sample on this ACK
  std::uint64_t prior_delivered = 0;
  bool app_limited = false;  // the sender had nothing to send while the flight was measured
  TimePs rtt = kNever;       // RTT of a never-retransmitted segment the ACK delivered
  std::uint32_t newly_delivered = 0;  // bytes acknowledged or SACKed by this ACK
  std::uint32_t newly_lost = 0;       // bytes this ACK marked lost
};

class Bbr {
 public:
  enum class Mode { Startup, Drain, ProbeBw, ProbeRtt };
  // Loss state of the connection, as Linux's ca_state: open, fast recovery, after a timeout.
  enum class LossState { Open, Recovery, Loss };

  // `seed` picks the first ProbeBw phase (Linux picks at random; here deterministic).
  Bbr(std::uint32_t mss, std::uint32_t initial_cwnd, std::uint32_t seed);

  // The connection's first RTT measurement (the handshake's, if any) sets the initial pacing
  // rate: high gain x initial window / RTT (1 ms without one).
  void start(TimePs srtt, TimePs now);
  // Every ACK: the model from the sample, then cwnd and the pacing rate.
  void on_ack(const RateSample& rs, std::uint64_t delivered_total, std::uint32_t inflight,
              LossState state, TimePs now);
  // A retransmission timeout: remember cwnd (restored when the loss is repaired), then one
  // segment, as Linux's loss state.
  void on_timeout();

  std::uint32_t cwnd() const { return cwnd_; }
  // Bytes per second; 0 until start().
  double pacing_rate() const { return pacing_rate_; }
  // Bytes the sender may put on the wire back to back before it waits for the pacing rate:
  // about 1 ms at the current rate, 2 to 44 segments (Linux's TSO autosizing, 64 KiB).
  std::uint32_t send_quantum() const;

  Mode mode() const { return mode_; }
  double bottleneck_bw() const { return max_bw(); }  // bytes per second
  TimePs min_rtt() const { return min_rtt_; }
  double pacing_gain() const { return pacing_gain_; }
  bool full_bw_reached() const { return full_bw_reached_; }
  std::uint64_t rounds() const { return round_count_; }

 private:
  double max_bw() const;
  std::uint32_t bdp_bytes(double bw, double gain) const;
  std::uint32_t target_cwnd(double bw, double gain) const;
  void update_bw(const RateSample& rs, std::uint64_t delivered_total);
  void update_cycle_phase(const RateSample& rs, std::uint32_t inflight, TimePs now);
  void advance_cycle_phase(TimePs now);
  void check_full_bw_reached(const RateSample& rs);
  void check_drain(std::uint32_t inflight, TimePs now);
  void update_min_rtt(const RateSample& rs, std::uint64_t delivered_total, std::uint32_t inflight,
                      TimePs now);
  void enter_probe_bw(TimePs now);
  void set_pacing_rate(double bw, double gain);
  void set_cwnd(const RateSample& rs, std::uint32_t inflight, LossState state,
                std::uint64_t delivered_total);
  void save_cwnd();

  std::uint32_t mss_, initial_cwnd_, seed_;
  Mode mode_ = Mode::Startup;
  std::uint32_t cwnd_;
  double pacing_rate_ = 0, pacing_gain_, cwnd_gain_;
  // Bandwidth max filter over kBwRounds round trips: (round, bytes/s), best first.
  struct BwSample {
    std::uint64_t round = 0;
    double bw = 0;
  };
  std::array<BwSample, 3> bw_{};
  std::uint64_t round_count_ = 0, next_round_delivered_ = 0;
  bool round_start_ = false;
  TimePs min_rtt_ = kNever, min_rtt_stamp_ = 0;
  bool full_bw_reached_ = false;
  double full_bw_ = 0;
  int full_bw_count_ = 0;
  int cycle_idx_ = 0;
  TimePs cycle_stamp_ = 0;
  TimePs probe_rtt_done_ = 0;
  bool probe_rtt_round_done_ = false;
  std::uint32_t prior_cwnd_ = 0;
  bool packet_conservation_ = false;
  LossState prev_state_ = LossState::Open;
};

const char* to_string(Bbr::Mode m);

}  // namespace vtoe::tcpip
