#include "models/net/ethernet_mac.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace vtoe::net {

EthernetMac::EthernetMac(const sc_core::sc_module_name& name, const EthernetMacParams& params)
    : core::Module(name),
      to_wire("to_wire"),
      from_wire("from_wire"),
      upper("upper"),
      params_(params),
      tx_event_("tx_event"),
      tx_frames_(stats_.counter("tx_frames", "frames handed to the wire")),
      tx_bytes_(stats_.counter("tx_bytes", "bytes handed to the wire (no FCS/preamble/IFG)")),
      rx_frames_(stats_.counter("rx_frames", "frames accepted and passed up")),
      rx_bytes_(stats_.counter("rx_bytes", "bytes of accepted frames")),
      tx_drops_(stats_.counter("tx_drops", "frames dropped because the tx queue was full")),
      rx_errors_(stats_.counter("rx_errors", "frames too short or longer than max_frame")),
      rx_filtered_(stats_.counter("rx_filtered", "frames for another destination")),
      ce_marks_(stats_.counter("ce_marks", "ECT frames marked CE (queue at the ECN threshold)")) {
  if (!(params_.rate_bps > 0)) {
    throw std::invalid_argument(std::string(this->name()) + ": rate must be > 0");
  }
  if (params_.tx_queue_frames == 0) {
    throw std::invalid_argument(std::string(this->name()) + ": tx queue capacity is 0");
  }
  tx_frames_.count_of_timed(tx_bytes_);  // one add_at() to tx_bytes_ per frame
  ring_.resize(params_.tx_queue_frames);
  from_wire.bind(*this);
  SC_METHOD(tx_done);
  sensitive << tx_event_;
  dont_initialize();
}

void EthernetMac::set_tx_ready_callback(std::function<void()> callback,
                                        std::size_t threshold_frames) {
  tx_ready_ = std::move(callback);
  tx_ready_threshold_ = threshold_frames;
}

void EthernetMac::start_of_simulation() {
  // A ready callback needs the departures as events; a sink that is not a plain link end
  // (NetVP, a switch, a link with a capture) takes frames as they leave.
  ahead_ = !tx_ready_ && to_wire->takes_frames_ahead();
}

void EthernetMac::retire() const {
  const core::TimePs now = core::now_ps();
  while (dep_count_ > 0 && departure(0).leaves <= now) {
    dep_head_ = (dep_head_ + 1) & (departures_.size() - 1);
    --dep_count_;
  }
}

// The fields stored one by one into the ring: a pushed `{ready, leaves, bytes}` temporary was
// built on the stack and copied with a 16-byte load of two 8-byte stores, which the CPU cannot
// forward (a stall per frame).
void EthernetMac::push_departure(core::TimePs ready, core::TimePs leaves, std::size_t bytes) {
  if (dep_count_ == departures_.size()) grow_departures();
  Departure& d = departures_[(dep_head_ + dep_count_++) & (departures_.size() - 1)];
  d.ready = ready;
  d.leaves = leaves;
  d.bytes = bytes;
}

void EthernetMac::grow_departures() {
  std::vector<Departure> bigger(departures_.empty() ? 64 : 2 * departures_.size());
  for (std::size_t i = 0; i < dep_count_; ++i) bigger[i] = departure(i);
  departures_ = std::move(bigger);
  dep_head_ = 0;
}

std::size_t EthernetMac::tx_queue_frames() const {
  if (!ahead_) return count_;
  retire();
  const core::TimePs now = core::now_ps();
  std::size_t n = 0;
  for (std::size_t i = 0; i < dep_count_; ++i) n += departure(i).ready <= now;
  return n;
}

std::size_t EthernetMac::tx_queue_bytes() const {
  if (!ahead_) return queued_bytes_;
  retire();
  const core::TimePs now = core::now_ps();
  std::size_t n = 0;
  for (std::size_t i = 0; i < dep_count_; ++i) {
    const Departure& d = departure(i);
    n += d.ready <= now ? d.bytes : 0;
  }
  return n;
}

bool EthernetMac::send_at(Frame&& frame, core::TimePs ready_ps) {
  if (!ahead_) {
    if (ready_ps != core::now_ps())
      throw std::logic_error(std::string(name()) + ": send_at a later time needs sends_ahead()");
    return send_now(std::move(frame));
  }
  retire();
  // The frames still queued when this one is ready: those that have not left by then.
  std::size_t queued = dep_count_;
  for (std::size_t i = 0; i < dep_count_; ++i) {
    if (departure(i).leaves > ready_ps) break;
    --queued;
  }
  if (queued == params_.tx_queue_frames) {
    tx_drops_.add_at(ready_ps);
    VTOE_LOG(log_, Debug) << "tx queue full, dropped a frame of " << frame.size() << " bytes";
    return false;
  }
  if (params_.pad_short_frames && frame.size() < kMinFrame) frame.resize(kMinFrame, 0);
  if (params_.ecn_mark_frames != 0 && queued >= params_.ecn_mark_frames && mark_ce(frame))
    ce_marks_.add_at(ready_ps);
  const core::TimePs leaves = std::max(ready_ps, last_leaves_) + wire_time_ps(frame.size());
  last_leaves_ = leaves;
  push_departure(ready_ps, leaves, frame.size());
  tx_bytes_.add_at(leaves, frame.size());  // tx_frames_ counts these additions
  to_wire->receive_frame_ahead(std::move(frame), leaves);
  return true;
}

bool EthernetMac::send_now(Frame&& frame) {
  if (count_ == ring_.size()) {
    ++tx_drops_;
    VTOE_LOG(log_, Debug) << "tx queue full, dropped a frame of " << frame.size() << " bytes";
    return false;
  }
  if (params_.pad_short_frames && frame.size() < kMinFrame) frame.resize(kMinFrame, 0);
  if (params_.ecn_mark_frames != 0 && count_ >= params_.ecn_mark_frames && mark_ce(frame))
    ++ce_marks_;
  std::size_t tail = head_ + count_;
  if (tail >= ring_.size()) tail -= ring_.size();
  queued_bytes_ += frame.size();
  ring_[tail] = std::move(frame);
  if (++count_ == 1) tx_event_.notify(core::ps(wire_time_ps(ring_[head_].size())));
  return true;
}

void EthernetMac::tx_done() {
  Frame frame = std::move(ring_[head_]);
  if (++head_ == ring_.size()) head_ = 0;
  const std::size_t before = count_--;
  queued_bytes_ -= frame.size();
  if (count_ > 0) tx_event_.notify(core::ps(wire_time_ps(ring_[head_].size())));

  tx_bytes_.add_at(core::now_ps(), frame.size());  // and tx_frames_ with it
  to_wire->receive_frame(std::move(frame));

  if (tx_ready_ && before >= tx_ready_threshold_ && count_ < tx_ready_threshold_) tx_ready_();
}

bool EthernetMac::mark_ce(Frame& frame) {
  // Ethernet II + IPv4 (version 4, a whole header of IHL words); the ECN field is the low two
  // bits of byte 1 of the IP header, the checksum bytes 10-11.
  if (frame.size() < kHeader + 20 || frame[12] != 0x08 || frame[13] != 0x00) return false;
  std::uint8_t* ip = frame.data() + kHeader;
  const std::size_t ihl = static_cast<std::size_t>(ip[0] & 0x0f) * 4;
  if ((ip[0] >> 4) != 4 || ihl < 20 || frame.size() < kHeader + ihl) return false;
  const std::uint8_t ecn = ip[1] & 0x03;
  if (ecn == 0 || ecn == 0x03) return false;
  // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m the 16-bit word holding the ECN field.
  const std::uint32_t m = (static_cast<std::uint32_t>(ip[0]) << 8) | ip[1];
  ip[1] = static_cast<std::uint8_t>(ip[1] | 0x03);
  const std::uint32_t m2 = (static_cast<std::uint32_t>(ip[0]) << 8) | ip[1];
  const std::uint32_t hc = (static_cast<std::uint32_t>(ip[10]) << 8) | ip[11];
  std::uint32_t sum = (~hc & 0xffff) + (~m & 0xffff) + m2;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  const std::uint16_t out = static_cast<std::uint16_t>(~sum);
  ip[10] = static_cast<std::uint8_t>(out >> 8);
  ip[11] = static_cast<std::uint8_t>(out);
  return true;
}

bool EthernetMac::accepts(const Frame& frame) const {
  if (params_.promiscuous) return true;
  bool own = true;
  bool broadcast = true;
  for (std::size_t i = 0; i < 6; ++i) {
    own = own && frame[i] == params_.address[i];
    broadcast = broadcast && frame[i] == 0xff;
  }
  if (own || broadcast) return true;
  return params_.accept_multicast && (frame[0] & 0x01) != 0;
}

void EthernetMac::receive_frame(Frame&& frame) {
  if (frame.size() < kHeader || frame.size() > params_.max_frame) {
    ++rx_errors_;
    VTOE_LOG(log_, Debug) << "rx error: frame of " << frame.size() << " bytes";
    return;
  }
  if (!accepts(frame)) {
    ++rx_filtered_;
    return;
  }
  ++rx_frames_;
  rx_bytes_ += frame.size();
  upper->receive_frame(std::move(frame));
}

}  // namespace vtoe::net
