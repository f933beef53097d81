// EthernetMac: a generic Ethernet MAC (used by the TOE and by the simulated peer host).
//
// Transmit: send() queues a frame (bounded queue, overflow counted as tx_drops). Frames are
// serialised one at a time at line rate; each occupies the wire for
//   wire_bytes = max(len, 60) + 4 (FCS) + 8 (preamble/SFD) + 12 (inter-frame gap)
// and is handed to `to_wire` (the link) at the end of that slot, i.e. the inter-frame gap is
// accounted before the hand-off; the next frame starts right after. Frames shorter than 60 bytes
// are timed as padded; their bytes are padded with zeros only if `pad_short_frames` is set.
// One SC_METHOD and one sc_event: one kernel event per frame. When the wire takes frames ahead
// of time (a link end without a capture, FrameSink::takes_frames_ahead) the MAC needs no event
// at all: it computes each frame's departure when the frame is queued, hands the frame to the
// link with that time, and counts it (tx_frames, tx_bytes) for that time. The queue's length at
// any instant follows from the departures, so drops and ECN marks are decided as before.
// send_at() queues a frame that becomes ready later (a pipeline in front of the MAC that knows
// when its frame comes out), again without an event of its own.
//
// ECN marking (RFC 3168 section 5, threshold marking as a switch port or DCTCP's K): with
// `ecn_mark_frames` > 0, an IPv4 frame whose ECN field is ECT(0) or ECT(1), queued while the
// queue already holds at least that many frames, leaves with CE and a corrected header
// checksum (ce_marks). Not-ECT frames are never marked; a full queue drops either kind.
//
// Receive: frames arriving at `from_wire` (from the link, when the last bit arrives): drops frames
// shorter than 14 bytes or longer than `max_frame` (rx_errors), then frames whose destination is
// neither this MAC nor broadcast (rx_filtered) unless promiscuous, and passes the rest to `upper`
// in zero time.
//
// Ports (all must be bound; an unbound one is an elaboration error):
//   to_wire    sc_port<FrameSink>    frames leaving (a link end, the NetVP port)
//   from_wire  sc_export<FrameSink>  frames arriving from the wire
//   upper      sc_port<FrameSink>    accepted frames, to the protocol engine
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/net/frame.h"

namespace vtoe::net {

using MacAddress = std::array<std::uint8_t, 6>;
inline constexpr MacAddress kBroadcastMac{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

struct EthernetMacParams {
  MacAddress address{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};  ///< locally administered
  double rate_bps = 10e9;                                  ///< line rate, bit/s
  std::size_t tx_queue_frames = 1024;  ///< tx queue capacity incl. the frame on the wire
  std::size_t max_frame = 1518;        ///< longest frame accepted, bytes without FCS (1500 MTU +
                                       ///< 14 header + 4 for an 802.1Q tag)
  bool promiscuous = false;            ///< accept frames for any destination
  bool accept_multicast = false;       ///< accept group addresses other than broadcast
  bool pad_short_frames = false;       ///< zero-pad frames below 60 bytes before they leave
  std::size_t ecn_mark_frames = 0;     ///< mark ECT frames CE at this queue depth (0 = never)
};

class EthernetMac : public core::Module, private FrameSink {
 public:
  static constexpr std::size_t kMinFrame = 60;  // without FCS
  static constexpr std::size_t kHeader = 14;
  static constexpr std::size_t kOverhead = 4 + 8 + 12;  // FCS + preamble/SFD + IFG

  FramePort to_wire;
  FrameExport from_wire;
  FramePort upper;

  SC_HAS_PROCESS(EthernetMac);
  EthernetMac(const sc_core::sc_module_name& name, const EthernetMacParams& params = {});

  // Queues a frame for transmission; false (and tx_drops+1, frame discarded) if the queue is full.
  bool send(Frame&& frame) { return send_at(std::move(frame), core::now_ps()); }
  // The same for a frame that reaches the MAC at `ready_ps` (>= now, non-decreasing from call
  // to call); a time in the future only when sends_ahead().
  bool send_at(Frame&& frame, core::TimePs ready_ps);
  // Whether frames go to the wire ahead of time (known from the start of the simulation).
  bool sends_ahead() const { return ahead_; }

  // Called (from the tx SC_METHOD) when, after a frame left, the queue holds fewer than
  // `threshold_frames` frames while it held at least that many before.
  void set_tx_ready_callback(std::function<void()> callback, std::size_t threshold_frames);

  std::size_t tx_queue_frames() const;
  // Bytes of frames queued and not yet handed to the wire (the one being serialised included).
  std::size_t tx_queue_bytes() const;
  bool tx_busy() const { return tx_queue_frames() > 0; }

  // Wire occupancy of one frame of `len` bytes (without FCS), in bytes and in ps at this rate.
  static std::size_t wire_bytes(std::size_t len) {
    return (len < kMinFrame ? kMinFrame : len) + kOverhead;
  }
  core::TimePs wire_time_ps(std::size_t len) const {
    // The last length's time kept: a division per frame otherwise, and most frames of a flow
    // have the length of the one before.
    if (len != last_wire_len_) {
      last_wire_len_ = len;
      last_wire_ps_ = core::transfer_time_ps(wire_bytes(len), params_.rate_bps);
    }
    return last_wire_ps_;
  }

  const EthernetMacParams& params() const { return params_; }
  const MacAddress& address() const { return params_.address; }

  std::uint64_t tx_frames() const { return tx_frames_.value(); }
  std::uint64_t tx_bytes() const { return tx_bytes_.value(); }
  std::uint64_t rx_frames() const { return rx_frames_.value(); }
  std::uint64_t rx_bytes() const { return rx_bytes_.value(); }
  std::uint64_t tx_drops() const { return tx_drops_.value(); }
  std::uint64_t rx_errors() const { return rx_errors_.value(); }
  std::uint64_t rx_filtered() const { return rx_filtered_.value(); }
  std::uint64_t ce_marks() const { return ce_marks_.value(); }

  // Sets CE in an ECT IPv4 frame and fixes the header checksum (RFC 1624); false, and the
  // frame unchanged, for anything else (not IPv4, Not-ECT, already CE).
  static bool mark_ce(Frame& frame);

 private:
  void start_of_simulation() override;
  void tx_done();                // SC_METHOD on tx_event_
  bool send_now(Frame&& frame);  // the frame leaves through tx_event_
  // Frames sent ahead of time: when each was ready and when its last bit leaves.
  struct Departure {
    core::TimePs ready;
    core::TimePs leaves;
    std::size_t bytes;
  };
  void retire() const;                               // forgets the departures that are past
  const Departure& departure(std::size_t i) const {  // the i-th oldest not yet retired
    return departures_[(dep_head_ + i) & (departures_.size() - 1)];
  }
  void push_departure(core::TimePs ready, core::TimePs leaves, std::size_t bytes);
  void grow_departures();
  void receive_frame(Frame&& frame) override;  // from_wire
  bool accepts(const Frame& frame) const;

  EthernetMacParams params_;
  mutable std::size_t last_wire_len_ = ~std::size_t{0};  // wire_time_ps()'s last length
  mutable core::TimePs last_wire_ps_ = 0;

  // Ring buffer of tx frames; the head is on the wire while count_ > 0.
  std::vector<Frame> ring_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::size_t queued_bytes_ = 0;
  sc_core::sc_event tx_event_;

  bool ahead_ = false;
  // Ring of departures in order (a power of two long); the past ones retire lazily.
  mutable std::vector<Departure> departures_;
  mutable std::size_t dep_head_ = 0;
  mutable std::size_t dep_count_ = 0;
  core::TimePs last_leaves_ = 0;

  std::function<void()> tx_ready_;
  std::size_t tx_ready_threshold_ = 0;

  core::Counter& tx_frames_;
  core::Counter& tx_bytes_;
  core::Counter& rx_frames_;
  core::Counter& rx_bytes_;
  core::Counter& tx_drops_;
  core::Counter& rx_errors_;
  core::Counter& rx_filtered_;
  core::Counter& ce_marks_;
};

}  // namespace vtoe::net
