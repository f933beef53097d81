#include "models/rtc/pl031.h"

#include <iterator>

#include "models/core/primecell.h"

namespace vtoe::rtc {

namespace {

// PeriphID0-3 (part 0x031, designer ARM, revision 1) one byte per word (PCellID0-3:
// core::kPrimeCellId).
constexpr std::uint8_t kPeriphId[4] = {0x31, 0x10, 0x14, 0x00};
constexpr std::uint32_t kIntMatch = reg::kImscMatch;

bool running() {
  const auto st = sc_core::sc_get_status();
  return st == sc_core::SC_RUNNING || st == sc_core::SC_PAUSED;
}

}  // namespace

Pl031::Pl031(const sc_core::sc_module_name& name, std::uint32_t start)
    : core::Peripheral(name, core::PeripheralParams{}),
      in("in"),
      irq("irq"),
      start_(start),
      offset_(start),
      regs_(std::string(this->name()) + ".registers"),
      dr_(regs_, reg_info::kDr),
      mr_(regs_, reg_info::kMr),
      lr_(regs_, reg_info::kLr),
      cr_(regs_, reg_info::kCr),
      imsc_(regs_, reg_info::kImsc),
      ris_reg_(regs_, reg_info::kRis),
      mis_(regs_, reg_info::kMis),
      icr_(regs_, reg_info::kIcr),
      periph_id_(regs_, reg_info::kPeriphId),
      pcell_id_(regs_, reg_info::kPcellId),
      matches_(stats_.counter("matches", "match interrupts raised (count reached MR)")) {
  serve(in);
  map(in, regs_, 0, reg::kRtcSize);
  regs_.expect_all(reg_info::kRtcBank, std::size(reg_info::kRtcBank));
  dr_.on_read([this](unsigned) { return count(); });
  mr_.on_write([this](unsigned, std::uint32_t value, std::uint32_t mask) {
    mr_.store(0, value, mask);
    set_alarm();
  });
  lr_.on_write([this](unsigned, std::uint32_t value, std::uint32_t mask) {
    lr_.store(0, value, mask);
    offset_ += lr_ - count();  // DR reads LR from now on
    set_alarm();
  });
  core::wire_primecell(imsc_, ris_reg_, mis_, icr_, periph_id_, pcell_id_, ris_, kPeriphId,
                       [this] { update(); });
  SC_METHOD(drive_irq);
  sensitive << changed_;
  SC_METHOD(match);
  sensitive << match_event_;
  dont_initialize();
}

std::uint32_t Pl031::count() const {
  return offset_ + static_cast<std::uint32_t>(sc_core::sc_time_stamp().to_seconds());
}

void Pl031::reset_state() {
  offset_ = start_;
  ris_ = 0;
  match_event_.cancel();
  update();
}

void Pl031::set_alarm() {
  match_event_.cancel();
  const std::uint32_t ticks = mr_ - count();  // wraps as the count does
  if (ticks == 0) {
    match();
    return;
  }
  if (!running()) return;
  // The start of the second at which the count becomes MR.
  const double now = sc_core::sc_time_stamp().to_seconds();
  const double at = static_cast<double>(static_cast<std::uint64_t>(now) + ticks);
  match_event_.notify(sc_core::sc_time(at - now, sc_core::SC_SEC));
}

void Pl031::match() {
  if (count() != mr_) {  // not there yet (rounding): look again
    set_alarm();
    return;
  }
  ++matches_;
  ris_ |= kIntMatch;
  update();
}

void Pl031::update() {
  if (running()) changed_.notify(sc_core::SC_ZERO_TIME);
}

void Pl031::drive_irq() { irq.write((ris_ & imsc_) != 0); }

std::uint32_t Pl031::read(std::uint32_t offset) {
  std::uint64_t v = 0;
  Peripheral::read(in, offset, v, 4);
  return static_cast<std::uint32_t>(v);
}

void Pl031::write(std::uint32_t offset, std::uint32_t value) {
  Peripheral::write(in, offset, value, 4);
}

}  // namespace vtoe::rtc
