#include "models/net/ethernet_link.h"

#include <stdexcept>
#include <utility>

namespace vtoe::net {

const std::vector<core::Param<EthernetLinkParams>>& ethernet_link_params() {
  using core::ParamKind;
  using P = EthernetLinkParams;
  static const std::vector<core::Param<P>> params = {
      core::param<P>(
          ParamKind::Time, "network.link_delay", "1us", "One-way propagation delay of the link",
          [](P & s) -> auto& { return s.delay_ps; }),
      core::param<P>(
          ParamKind::Time, "network.jitter", "0s",
          "Extra one-way delay per frame, uniform in [0, jitter) from the seed (frames keep "
          "their order); 0 = none",
          [](P & s) -> auto& { return s.jitter_ps; }),
      core::param<P>(
          ParamKind::Ratio, "network.loss", "0", "Probability that the link drops a frame",
          [](P & s) -> auto& { return s.loss; })
          .range("0", "1"),
      core::param<P>(
          ParamKind::Uint, "network.ecn_threshold", "0",
          "Frames queued in a MAC's transmit queue onto the link (the TOE's and the "
          "peer's) at or above which an ECT frame is marked CE (RFC 3168 threshold "
          "marking, as a switch port); 0 = no marking",
          [](P & s) -> auto& { return s.ecn_threshold; })
          .range("0", "1000000"),
  };
  return params;
}

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

// An IPv4 frame (no VLAN tag) whose ECN field is CE.
bool carries_ce(const Frame& f) {
  return f.size() >= 14 + 20 && f[12] == 0x08 && f[13] == 0x00 && (f[15] & 0x03) == 0x03;
}

}  // namespace

EthernetLink::Direction::Direction(EthernetLink& link, const char* tag, FramePort& receiver)
    : receiver(receiver),
      event((std::string(tag) + "_event").c_str()),
      frames(link.stats_.counter(std::string(tag) + "_frames", "frames that entered the link")),
      bytes(link.stats_.counter(std::string(tag) + "_bytes", "bytes that entered the link")),
      drops(link.stats_.counter(std::string(tag) + "_drops", "frames lost")),
      ce(link.stats_.counter(std::string(tag) + "_ce_marks",
                             "frames that entered the link with CE in their IPv4 header")),
      link_(link),
      lost_note_("dropped by the loss model of link " + std::string(link.name()) + " (" + tag +
                 ", network.loss / links[].loss)"),
      rng_(splitmix64(link.params_.seed ^ splitmix64(fnv1a(std::string(link.name()) + "." + tag)))),
      jitter_rng_(splitmix64(link.params_.seed ^
                             splitmix64(fnv1a(std::string(link.name()) + "." + tag + ".jitter")))) {
  frames.count_of_timed(bytes);  // one add_at() to `bytes` per frame
  ring_.resize(16);
}

void EthernetLink::Direction::receive_frame(Frame&& frame) {
  const core::TimePs now = core::now_ps();
  enter(std::move(frame), now, now);
}

void EthernetLink::Direction::receive_frame_ahead(Frame&& frame, core::TimePs enters_ps) {
  enter(std::move(frame), core::now_ps(), enters_ps);
}

void EthernetLink::Direction::enter(Frame&& frame, core::TimePs now, core::TimePs enters_ps) {
  const bool lost = link_.params_.loss > 0 && uniform01(rng_) < link_.params_.loss;
  // A pcapng capture says which frames the loss model dropped (they were put on the wire).
  if (link_.pcap_)
    link_.pcap_->write(frame.data(), frame.size(), enters_ps, lost ? &lost_note_ : nullptr);
  bytes.add_at(enters_ps, frame.size());  // and `frames` with it
  if (carries_ce(frame)) ce.add_at(enters_ps);
  if (lost) {
    drops.add_at(enters_ps);
    return;
  }
  if (count_ == ring_.size()) {  // grow, keeping the order
    std::vector<Entry> bigger(ring_.size() * 2);
    for (std::size_t i = 0; i < count_; ++i) {
      bigger[i] = std::move(ring_[(head_ + i) % ring_.size()]);
    }
    ring_ = std::move(bigger);
    head_ = 0;
  }
  std::size_t tail = head_ + count_;
  if (tail >= ring_.size()) tail -= ring_.size();
  core::TimePs due = enters_ps + link_.params_.delay_ps;
  if (link_.params_.jitter_ps > 0) {
    due += static_cast<core::TimePs>(uniform01(jitter_rng_) *
                                     static_cast<double>(link_.params_.jitter_ps));
    if (due < last_due_) due = last_due_;  // no overtaking
    last_due_ = due;
  }
  ring_[tail].due = due;
  ring_[tail].frame = std::move(frame);
  if (++count_ == 1) event.notify(core::ps(due - now));
}

void EthernetLink::Direction::deliver() {
  const core::TimePs now = core::now_ps();
  while (count_ > 0 && ring_[head_].due <= now) {
    Frame frame = std::move(ring_[head_].frame);
    if (++head_ == ring_.size()) head_ = 0;
    --count_;
    receiver->receive_frame(std::move(frame));
  }
  if (count_ > 0) event.notify(core::ps(ring_[head_].due - now));
}

EthernetLink::EthernetLink(const sc_core::sc_module_name& name, const EthernetLinkParams& params)
    : core::Module(name),
      a_in("a_in"),
      a_out("a_out"),
      b_in("b_in"),
      b_out("b_out"),
      params_(params),
      frames_(stats_.counter("frames", "frames that entered the link, both directions")),
      bytes_(stats_.counter("bytes", "bytes that entered the link, both directions")),
      drops_(stats_.counter("drops", "frames lost, both directions")),
      ce_marks_(
          stats_.counter("ce_marks", "frames that entered the link with CE set, both directions")),
      a_to_b_(*this, "a_to_b", b_out),
      b_to_a_(*this, "b_to_a", a_out) {
  // The totals are the two directions' sums (each frame is counted once, in its direction).
  frames_.sum_of(a_to_b_.frames, b_to_a_.frames);
  bytes_.sum_of(a_to_b_.bytes, b_to_a_.bytes);
  drops_.sum_of(a_to_b_.drops, b_to_a_.drops);
  ce_marks_.sum_of(a_to_b_.ce, b_to_a_.ce);
  a_in.bind(a_to_b_);
  b_in.bind(b_to_a_);
  if (!(params_.loss >= 0.0 && params_.loss <= 1.0)) {
    throw std::invalid_argument(std::string(this->name()) + ": loss must be within 0..1");
  }
  SC_METHOD(deliver_a_to_b);
  sensitive << a_to_b_.event;
  dont_initialize();
  SC_METHOD(deliver_b_to_a);
  sensitive << b_to_a_.event;
  dont_initialize();
}

EthernetLink::~EthernetLink() = default;

void EthernetLink::enable_pcap(const std::string& path) {
  pcap_ = std::make_unique<PcapWriter>(path);
}

}  // namespace vtoe::net
