// EthernetLink: a point-to-point full-duplex link. Each direction delivers frames to its receiver
// `delay_ps` after they enter (a sending MAC hands a frame over when its last bit leaves, so the
// receiver gets it when its last bit arrives), in order, or loses them with probability `loss`
// (independent per frame).
//
// Jitter (`jitter_ps` > 0): each frame's delay is `delay_ps` plus a uniform draw in
// [0, jitter_ps) from a stream of its own per direction (seeded as the loss model's, so turning
// jitter on leaves the losses as they were); a frame never overtakes the one before it in its
// direction (it arrives no earlier), so the link stays a FIFO. No draw is made when it is 0.
//
// Losses are deterministic: each direction draws from its own std::mt19937_64 seeded from
// (seed, link name, direction), with a uniform double made from the top 53 bits; the same seed and
// the same traffic give the same drops, whatever the other direction does. No draw is made when
// loss is 0.
//
// ECN: each direction counts the frames that enter it carrying CE in their IPv4 header
// (`ce_marks`: marked by the sending MAC at its queue threshold, or earlier on their path); the
// link itself marks nothing.
//
// Optional pcap tap: every frame that enters the link (both directions, including frames that the
// loss model drops afterwards — they were put on the wire) is recorded at the simulated time it
// entered, in nanoseconds; in a pcapng capture a dropped frame carries a comment saying so.
//
// Ports (all must be bound; an unbound one is an elaboration error):
//   a_in, b_in    sc_export<FrameSink>  frames sent by endpoint A (B) enter here
//   a_out, b_out  sc_port<FrameSink>    frames delivered to endpoint A (B): bind to its MAC
//
// Events: one SC_METHOD and one sc_event per direction; a constant delay keeps each direction a
// FIFO, so only the head frame is ever scheduled. Without a capture a link end takes frames
// ahead of time (FrameSink::receive_frame_ahead): the sending MAC hands a frame over when it
// queues it, with the time its last bit leaves, and the link counts it and draws its loss for
// that time; its delivery stays the only event of the frame's hop. A capture is written in time
// order as frames enter, so with one the MAC hands frames over as they leave.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/module.h"
#include "models/core/param.h"
#include "models/net/frame.h"
#include "models/net/pcap_writer.h"

namespace vtoe::net {

struct EthernetLinkParams {
  core::TimePs delay_ps = 1'000'000;  ///< propagation delay, ps (1 us)
  double loss = 0.0;                  ///< probability that a frame is lost, 0..1
  std::uint64_t seed = 1;             ///< seed of the loss model
  /// Frames in an end's transmit queue onto the link (its MAC's) at which ECT frames are
  /// marked CE (EthernetMac::ecn_mark_frames; the platform passes it to both MACs); 0 = never.
  std::uint32_t ecn_threshold = 0;
  core::TimePs jitter_ps = 0;  ///< extra delay per frame, uniform in [0, jitter), ps (0: none)
};

// The scenario keys that fill EthernetLinkParams (its seed is the scenario's).
const std::vector<core::Param<EthernetLinkParams>>& ethernet_link_params();

class EthernetLink : public core::Module {
 public:
  // Frames sent by endpoint A enter at a_in and come out at b_out, and vice versa.
  FrameExport a_in;
  FramePort a_out;
  FrameExport b_in;
  FramePort b_out;

  SC_HAS_PROCESS(EthernetLink);
  EthernetLink(const sc_core::sc_module_name& name, const EthernetLinkParams& params = {});
  ~EthernetLink() override;

  // Records every frame entering the link into a pcap file (throws if it cannot be opened).
  void enable_pcap(const std::string& path);

  const EthernetLinkParams& params() const { return params_; }

  // Totals over both directions: frames and bytes that entered the link, frames lost.
  std::uint64_t frames() const { return frames_.value(); }
  std::uint64_t bytes() const { return bytes_.value(); }
  std::uint64_t drops() const { return drops_.value(); }
  // Per direction.
  std::uint64_t frames_a_to_b() const { return a_to_b_.frames.value(); }
  std::uint64_t frames_b_to_a() const { return b_to_a_.frames.value(); }
  std::uint64_t drops_a_to_b() const { return a_to_b_.drops.value(); }
  std::uint64_t drops_b_to_a() const { return b_to_a_.drops.value(); }
  std::uint64_t ce_marks() const { return ce_marks_.value(); }
  // Direction `d` (0: a to b, 1: b to a): its counters, with the warm-up baseline (measured()).
  const core::Counter& frames_counter(int d) const { return dir(d).frames; }
  const core::Counter& bytes_counter(int d) const { return dir(d).bytes; }
  const core::Counter& drops_counter(int d) const { return dir(d).drops; }
  const core::Counter& ce_counter(int d) const { return dir(d).ce; }

  // Uniform double in [0, 1) from the top 53 bits of one draw.
  static double uniform01(std::mt19937_64& rng) {
    return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
  }

 private:
  struct Entry {
    core::TimePs due;
    Frame frame;
  };

  class Direction : public FrameSink {
   public:
    Direction(EthernetLink& link, const char* tag, FramePort& receiver);
    void receive_frame(Frame&& frame) override;
    bool takes_frames_ahead() const override { return !link_.pcap_; }
    void receive_frame_ahead(Frame&& frame, core::TimePs enters_ps) override;
    void deliver();

    FramePort& receiver;
    sc_core::sc_event event;
    core::Counter& frames;
    core::Counter& bytes;
    core::Counter& drops;
    core::Counter& ce;

   private:
    void enter(Frame&& frame, core::TimePs now, core::TimePs enters_ps);

    EthernetLink& link_;
    std::string lost_note_;  // the comment on a dropped frame in a pcapng capture
    std::mt19937_64 rng_;
    std::mt19937_64 jitter_rng_;
    core::TimePs last_due_ = 0;  // jitter: the latest delivery time given
    // Growable ring of frames in flight, in delivery order.
    std::vector<Entry> ring_;
    std::size_t head_ = 0;
    std::size_t count_ = 0;
  };

  const Direction& dir(int d) const { return d == 0 ? a_to_b_ : b_to_a_; }
  void deliver_a_to_b() { a_to_b_.deliver(); }
  void deliver_b_to_a() { b_to_a_.deliver(); }

  EthernetLinkParams params_;
  std::unique_ptr<PcapWriter> pcap_;
  core::Counter& frames_;
  core::Counter& bytes_;
  core::Counter& drops_;
  core::Counter& ce_marks_;
  Direction a_to_b_;
  Direction b_to_a_;
};

}  // namespace vtoe::net
