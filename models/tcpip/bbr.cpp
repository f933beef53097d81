#include "models/tcpip/bbr.h"

#include <algorithm>
#include <cmath>

namespace vtoe::tcpip {

namespace {
constexpr TimePs kMsPs = 1'000'000'000ull;
constexpr TimePs kSecondPs = 1000 * kMsPs;
constexpr std::uint32_t kMaxCwnd = 1u << 30;
// Linux tcp_bbr.c (v1) constants.
constexpr double kHighGain = 2.885;       // 2/ln(2): doubles the sending rate each round
constexpr double kDrainGain = 1 / 2.885;  // drains the queue Startup built in one round
constexpr double kCwndGain = 2.0;         // ProbeBw: two BDPs in flight
constexpr std::array<double, 8> kPacingGains = {1.25, 0.75, 1, 1, 1, 1, 1, 1};
constexpr std::uint64_t kBwRounds = 10;  // bandwidth filter: 10 round trips
constexpr TimePs kMinRttWindow = 10 * kSecondPs;
constexpr TimePs kProbeRttTime = 200 * kMsPs;
constexpr double kFullBwThresh = 1.25;  // Startup ends after 3 rounds growing less
constexpr int kFullBwCount = 3;
constexpr std::uint32_t kMinCwndSegs = 4;
constexpr double kPacingMargin = 0.99;       // pace 1 % below the estimate (queue stays small)
constexpr std::uint32_t kInitCwndSegs = 10;  // Linux's TCP_INIT_CWND when no BDP is known
}  // namespace

const char* to_string(Bbr::Mode m) {
  switch (m) {
    case Bbr::Mode::Startup:
      return "startup";
    case Bbr::Mode::Drain:
      return "drain";
    case Bbr::Mode::ProbeBw:
      return "probe_bw";
    case Bbr::Mode::ProbeRtt:
      return "probe_rtt";
  }
  return "?";
}

Bbr::Bbr(std::uint32_t mss, std::uint32_t initial_cwnd, std::uint32_t seed)
    : mss_(std::max<std::uint32_t>(mss, 1)),
      initial_cwnd_(initial_cwnd),
      seed_(seed),
      cwnd_(initial_cwnd),
      pacing_gain_(kHighGain),
      cwnd_gain_(kHighGain) {}

void Bbr::start(TimePs srtt, TimePs now) {
  const double rtt_s = static_cast<double>(srtt > 0 && srtt != kNever ? srtt : kMsPs) * 1e-12;
  pacing_rate_ = kHighGain * initial_cwnd_ / rtt_s;
  min_rtt_stamp_ = now;
  cycle_stamp_ = now;
}

std::uint32_t Bbr::send_quantum() const {
  // Linux's tcp_tso_autosize: the bytes of about 1 ms (rate >> 10), at least 2 segments, at
  // most a 64 KiB TSO frame.
  const double bytes = pacing_rate_ / 1024;
  const double lo = 2.0 * mss_, hi = 65536.0;
  return static_cast<std::uint32_t>(std::clamp(bytes, lo, std::max(lo, hi)));
}

double Bbr::max_bw() const { return bw_[0].bw; }

std::uint32_t Bbr::bdp_bytes(double bw, double gain) const {
  if (min_rtt_ == kNever || bw <= 0) return kInitCwndSegs * mss_;
  const double bdp = bw * static_cast<double>(min_rtt_) * 1e-12;
  const double bytes = std::ceil(gain * bdp);
  return static_cast<std::uint32_t>(std::min(bytes, double(kMaxCwnd)));
}

std::uint32_t Bbr::target_cwnd(double bw, double gain) const {
  // The BDP target plus three send quanta: enough in flight to keep the bottleneck busy
  // while ACKs arrive in stretches (Linux: 3 * tso_segs_goal).
  const std::uint64_t t =
      static_cast<std::uint64_t>(bdp_bytes(bw, gain)) + 3ull * (send_quantum() / mss_) * mss_;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(t, kMaxCwnd));
}

void Bbr::update_bw(const RateSample& rs, std::uint64_t delivered_total) {
  round_start_ = false;
  if (rs.interval == 0) return;
  // A round trip ends when a segment sent after the previous round's end is delivered.
  if (rs.prior_delivered >= next_round_delivered_) {
    next_round_delivered_ = delivered_total;
    ++round_count_;
    round_start_ = true;
    packet_conservation_ = false;
  }
  const double bw = static_cast<double>(rs.delivered) / (static_cast<double>(rs.interval) * 1e-12);
  // An app-limited sample only says the path can do at least that much.
  if (rs.app_limited && bw < max_bw()) return;
  // Windowed max (Kathleen Nichols' algorithm, Linux lib/minmax.c): best, second and third
  // best of the window, each newer than the one before.
  const BwSample v{round_count_, bw};
  if (bw >= bw_[0].bw || v.round - bw_[2].round > kBwRounds) {
    bw_.fill(v);
    return;
  }
  if (bw >= bw_[1].bw)
    bw_[2] = bw_[1] = v;
  else if (bw >= bw_[2].bw)
    bw_[2] = v;
  const std::uint64_t dt = v.round - bw_[0].round;
  if (dt > kBwRounds) {
    bw_[0] = bw_[1];
    bw_[1] = bw_[2];
    bw_[2] = v;
    if (v.round - bw_[0].round > kBwRounds) {
      bw_[0] = bw_[1];
      bw_[1] = bw_[2];
    }
  } else if (bw_[1].round == bw_[0].round && dt > kBwRounds / 4) {
    bw_[2] = bw_[1] = v;
  } else if (bw_[2].round == bw_[1].round && dt > kBwRounds / 2) {
    bw_[2] = v;
  }
}

void Bbr::advance_cycle_phase(TimePs now) {
  cycle_idx_ = (cycle_idx_ + 1) % static_cast<int>(kPacingGains.size());
  cycle_stamp_ = now;
  pacing_gain_ = kPacingGains[static_cast<std::size_t>(cycle_idx_)];
}

void Bbr::update_cycle_phase(const RateSample& rs, std::uint32_t inflight, TimePs now) {
  if (mode_ != Mode::ProbeBw) return;
  const bool full_length = min_rtt_ != kNever && now - cycle_stamp_ > min_rtt_;
  const std::uint32_t prior_inflight = inflight + rs.newly_delivered;
  bool next;
  if (pacing_gain_ == 1.0)
    next = full_length;
  else if (pacing_gain_ > 1.0)  // probing: until the extra flight is out, or a loss says no
    next =
        full_length && (rs.newly_lost > 0 || prior_inflight >= bdp_bytes(max_bw(), pacing_gain_));
  else  // draining what the probe queued: until the flight is back to one BDP
    next = full_length || prior_inflight <= bdp_bytes(max_bw(), 1.0);
  if (next) advance_cycle_phase(now);
}

void Bbr::check_full_bw_reached(const RateSample& rs) {
  if (full_bw_reached_ || !round_start_ || rs.app_limited) return;
  if (max_bw() >= full_bw_ * kFullBwThresh) {
    full_bw_ = max_bw();
    full_bw_count_ = 0;
    return;
  }
  full_bw_reached_ = ++full_bw_count_ >= kFullBwCount;
}

void Bbr::enter_probe_bw(TimePs now) {
  mode_ = Mode::ProbeBw;
  cwnd_gain_ = kCwndGain;
  // Any phase but the 0.75 one to start with (Linux: at random).
  cycle_idx_ = static_cast<int>(kPacingGains.size()) - 1 -
               static_cast<int>(seed_ % (kPacingGains.size() - 1));
  advance_cycle_phase(now);
}

void Bbr::check_drain(std::uint32_t inflight, TimePs now) {
  if (mode_ == Mode::Startup && full_bw_reached_) {
    mode_ = Mode::Drain;
    pacing_gain_ = kDrainGain;
    cwnd_gain_ = kHighGain;
  }
  if (mode_ == Mode::Drain && inflight <= bdp_bytes(max_bw(), 1.0)) enter_probe_bw(now);
}

void Bbr::save_cwnd() {
  if (prev_state_ == LossState::Open && mode_ != Mode::ProbeRtt)
    prior_cwnd_ = cwnd_;
  else
    prior_cwnd_ = std::max(prior_cwnd_, cwnd_);
}

void Bbr::update_min_rtt(const RateSample& rs, std::uint64_t delivered_total,
                         std::uint32_t inflight, TimePs now) {
  const bool expired = now > min_rtt_stamp_ + kMinRttWindow;
  if (rs.rtt != kNever && (rs.rtt < min_rtt_ || expired)) {
    min_rtt_ = rs.rtt;
    min_rtt_stamp_ = now;
  }
  if (expired && mode_ != Mode::ProbeRtt && min_rtt_ != kNever) {
    // The estimate is 10 s old: drain the flight to a few segments for 200 ms and a round
    // trip, to see the path's RTT without our own queue in it.
    mode_ = Mode::ProbeRtt;
    pacing_gain_ = cwnd_gain_ = 1.0;
    save_cwnd();
    probe_rtt_done_ = 0;
  }
  if (mode_ != Mode::ProbeRtt) return;
  if (probe_rtt_done_ == 0 && inflight <= kMinCwndSegs * mss_) {
    probe_rtt_done_ = now + kProbeRttTime;
    probe_rtt_round_done_ = false;
    next_round_delivered_ = delivered_total;
  } else if (probe_rtt_done_ != 0) {
    if (round_start_) probe_rtt_round_done_ = true;
    if (probe_rtt_round_done_ && now > probe_rtt_done_) {
      min_rtt_stamp_ = now;
      cwnd_ = std::max(cwnd_, prior_cwnd_);
      if (full_bw_reached_) {
        enter_probe_bw(now);
      } else {
        mode_ = Mode::Startup;
        pacing_gain_ = cwnd_gain_ = kHighGain;
      }
    }
  }
}

void Bbr::set_pacing_rate(double bw, double gain) {
  const double rate = gain * bw * kPacingMargin;
  // In Startup the rate only grows: a low early sample must not slow the start.
  if (rate > 0 && (full_bw_reached_ || rate > pacing_rate_)) pacing_rate_ = rate;
}

void Bbr::set_cwnd(const RateSample& rs, std::uint32_t inflight, LossState state,
                   std::uint64_t delivered_total) {
  const std::uint32_t acked = rs.newly_delivered;
  std::uint32_t cwnd = cwnd_;
  if (acked > 0) {
    // Losses come off cwnd; the first round of a recovery sends one segment per segment
    // delivered (packet conservation); leaving recovery restores what cwnd was before it.
    if (rs.newly_lost > 0) cwnd = cwnd > rs.newly_lost ? cwnd - rs.newly_lost : mss_;
    if (state != LossState::Open && prev_state_ == LossState::Open) save_cwnd();
    bool conserve = false;
    if (state == LossState::Recovery && prev_state_ != LossState::Recovery) {
      packet_conservation_ = true;
      next_round_delivered_ = delivered_total;
      cwnd = inflight + acked;
    } else if (prev_state_ != LossState::Open && state == LossState::Open) {
      cwnd = std::max(cwnd, prior_cwnd_);
      packet_conservation_ = false;
    }
    prev_state_ = state;
    if (packet_conservation_) {
      cwnd = std::max(cwnd, inflight + acked);
      conserve = true;
    }
    if (!conserve) {
      const std::uint32_t target = target_cwnd(max_bw(), cwnd_gain_);
      if (full_bw_reached_)
        cwnd = std::min(cwnd + acked, target);
      else if (cwnd < target || delivered_total < std::uint64_t{kInitCwndSegs} * mss_)
        cwnd = cwnd + acked;
      cwnd = std::max(cwnd, kMinCwndSegs * mss_);
    }
  }
  if (mode_ == Mode::ProbeRtt) cwnd = std::min(cwnd, kMinCwndSegs * mss_);
  cwnd_ = std::min(std::max(cwnd, mss_), kMaxCwnd);
}

void Bbr::on_ack(const RateSample& rs, std::uint64_t delivered_total, std::uint32_t inflight,
                 LossState state, TimePs now) {
  update_bw(rs, delivered_total);
  update_cycle_phase(rs, inflight, now);
  check_full_bw_reached(rs);
  check_drain(inflight, now);
  update_min_rtt(rs, delivered_total, inflight, now);
  set_pacing_rate(max_bw(), pacing_gain_);
  set_cwnd(rs, inflight, state, delivered_total);
}

void Bbr::on_timeout() {
  save_cwnd();
  prev_state_ = LossState::Loss;
  full_bw_ = 0;
  round_start_ = true;
  cwnd_ = mss_;
}

}  // namespace vtoe::tcpip
