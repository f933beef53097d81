#include "models/uart/pl011.h"

#include <iterator>

#include "models/core/primecell.h"

namespace vtoe::uart {

namespace {

// PeriphID0-3 (part 0x011, designer ARM, revision 1) one byte per word (PCellID0-3:
// core::kPrimeCellId).
constexpr std::uint8_t kPeriphId[4] = {0x11, 0x10, 0x14, 0x00};
constexpr std::uint32_t kIntRx = reg::kImscRx, kIntTx = reg::kImscTx, kIntOverrun = reg::kImscOe;
constexpr std::uint32_t kRsrOverrun = 1u << 3;

}  // namespace

Pl011::Pl011(const sc_core::sc_module_name& name, std::function<void(char)> output)
    : core::Peripheral(name, core::PeripheralParams{}),
      in("in"),
      irq("irq"),
      output_(std::move(output)),
      regs_(std::string(this->name()) + ".registers"),
      dr_(regs_, reg_info::kDr),
      rsr_(regs_, reg_info::kRsrEcr),
      fr_(regs_, reg_info::kFr),
      ilpr_(regs_, reg_info::kIlpr),
      ibrd_(regs_, reg_info::kIbrd),
      fbrd_(regs_, reg_info::kFbrd),
      lcr_h_(regs_, reg_info::kLcrH),
      cr_(regs_, reg_info::kCr),
      ifls_(regs_, reg_info::kIfls),
      imsc_(regs_, reg_info::kImsc),
      ris_reg_(regs_, reg_info::kRis),
      mis_(regs_, reg_info::kMis),
      icr_(regs_, reg_info::kIcr),
      dmacr_(regs_, reg_info::kDmacr),
      periph_id_(regs_, reg_info::kPeriphId),
      pcell_id_(regs_, reg_info::kPcellId),
      chars_out_(stats_.counter("chars_out", "characters written to DR (sent)")),
      chars_in_(stats_.counter("chars_in", "characters received")) {
  serve(in);
  map(in, regs_, 0, reg::kUartSize);
  regs_.expect_all(reg_info::kUartBank, std::size(reg_info::kUartBank));
  dr_.on_read([this](unsigned) -> std::uint32_t {
    if (rx_.empty()) return 0;
    const std::uint32_t c = rx_.front();
    rx_.pop_front();
    if (rx_.empty()) ris_ &= ~kIntRx;
    update();
    return c;
  });
  dr_.on_peek([this](unsigned) -> std::uint32_t { return rx_.empty() ? 0 : rx_.front(); });
  dr_.on_write([this](unsigned, std::uint32_t value, std::uint32_t) {
    ++chars_out_;
    ++tx_count_;
    if (output_) output_(static_cast<char>(value & 0xFF));
    ris_ |= kIntTx;
    update();
  });
  rsr_.on_write([this](unsigned, std::uint32_t, std::uint32_t) { rsr_.set(0); });  // ECR
  fr_.on_read([this](unsigned) { return flags(); });
  lcr_h_.on_write([this](unsigned, std::uint32_t value, std::uint32_t mask) {
    lcr_h_.store(0, value, mask);
    while (rx_.size() > fifo_depth()) rx_.pop_back();
  });
  core::wire_primecell(imsc_, ris_reg_, mis_, icr_, periph_id_, pcell_id_, ris_, kPeriphId,
                       [this] { update(); });
  SC_METHOD(drive_irq);
  sensitive << changed_;
  SC_METHOD(type_next);
  sensitive << type_event_;
  dont_initialize();
}

void Pl011::type(const std::string& text, sc_core::sc_time char_time) {
  char_time_ = char_time;
  const bool idle = typed_.empty();
  typed_.insert(typed_.end(), text.begin(), text.end());
  if (idle && !typed_.empty()) type_event_.notify(char_time_);
}

void Pl011::type_next() {
  if (typed_.empty()) return;
  if (rx_.size() < fifo_depth()) {
    receive(typed_.front());
    typed_.pop_front();
  }
  if (!typed_.empty()) type_event_.notify(char_time_);
}

void Pl011::reset_state() {
  rx_.clear();
  ris_ = 0;
  update();
}

unsigned Pl011::fifo_depth() const { return (lcr_h_ & reg::kLcrHFen) ? 16u : 1u; }

std::uint32_t Pl011::flags() const {
  std::uint32_t fr = reg::kFrTxfe;
  if (rx_.empty()) fr |= reg::kFrRxfe;
  if (rx_.size() >= fifo_depth()) fr |= reg::kFrRxff;
  return fr;
}

void Pl011::update() {
  const auto st = sc_core::sc_get_status();
  if (st == sc_core::SC_RUNNING || st == sc_core::SC_PAUSED) changed_.notify(sc_core::SC_ZERO_TIME);
}

void Pl011::drive_irq() { irq.write((ris_ & imsc_) != 0); }

void Pl011::receive(char c) {
  ++chars_in_;
  if (rx_.size() >= fifo_depth()) {
    ris_ |= kIntOverrun;
    rsr_.set(rsr_ | kRsrOverrun);
  } else {
    rx_.push_back(static_cast<std::uint8_t>(c));
    ris_ |= kIntRx;
  }
  update();
}

std::uint32_t Pl011::read(std::uint32_t offset) {
  std::uint64_t v = 0;
  Peripheral::read(in, offset, v, 4);
  return static_cast<std::uint32_t>(v);
}

void Pl011::write(std::uint32_t offset, std::uint32_t value) {
  Peripheral::write(in, offset, value, 4);
}

}  // namespace vtoe::uart
