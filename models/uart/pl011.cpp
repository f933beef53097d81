#include "models/uart/pl011.h"

#include <cstring>
#include <sstream>

namespace vtoe::uart {

namespace {

constexpr std::uint32_t kDr = 0x000, kRsr = 0x004, kFr = 0x018, kIlpr = 0x020, kIbrd = 0x024,
                        kFbrd = 0x028, kLcrH = 0x02C, kCr = 0x030, kIfls = 0x034, kImsc = 0x038,
                        kRis = 0x03C, kMis = 0x040, kIcr = 0x044, kDmacr = 0x048, kId = 0xFE0;
// PeriphID0-3 (part 0x011, designer ARM, revision 1) and PCellID0-3, one byte per word.
constexpr std::uint8_t kIds[8] = {0x11, 0x10, 0x14, 0x00, 0x0d, 0xf0, 0x05, 0xb1};
constexpr std::uint32_t kFrRxfe = 1u << 4, kFrTxff = 1u << 5, kFrRxff = 1u << 6, kFrTxfe = 1u << 7;
constexpr std::uint32_t kIntRx = 1u << 4, kIntTx = 1u << 5, kIntOverrun = 1u << 10;
constexpr std::uint32_t kLcrFen = 1u << 4;
constexpr std::uint32_t kIntMask = 0x7FF;

}  // namespace

Pl011::Pl011(const sc_core::sc_module_name& name, std::function<void(char)> output)
    : core::Module(name),
      in("in"),
      irq("irq"),
      output_(std::move(output)),
      chars_out_(stats_.counter("chars_out", "characters written to DR (sent)")),
      chars_in_(stats_.counter("chars_in", "characters received")),
      bad_accesses_(stats_.counter("bad_accesses", "accesses to no register (ignored)")) {
  in.register_b_transport(this, &Pl011::b_transport);
  SC_METHOD(drive_irq);
  sensitive << changed_;
}

unsigned Pl011::fifo_depth() const { return (lcr_h_ & kLcrFen) ? 16u : 1u; }

void Pl011::update() {
  const auto st = sc_core::sc_get_status();
  if (st == sc_core::SC_RUNNING || st == sc_core::SC_PAUSED) changed_.notify(sc_core::SC_ZERO_TIME);
}

void Pl011::drive_irq() { irq.write((ris_ & imsc_) != 0); }

void Pl011::receive(char c) {
  ++chars_in_;
  if (rx_.size() >= fifo_depth()) {
    ris_ |= kIntOverrun;
    rsr_ |= 1u << 3;  // overrun error
  } else {
    rx_.push_back(static_cast<std::uint8_t>(c));
    ris_ |= kIntRx;
  }
  update();
}

std::uint32_t Pl011::read(std::uint32_t offset) {
  switch (offset) {
    case kDr: {
      if (rx_.empty()) return 0;
      const std::uint32_t c = rx_.front();
      rx_.pop_front();
      if (rx_.empty()) ris_ &= ~kIntRx;
      update();
      return c;
    }
    case kRsr:
      return rsr_;
    case kFr: {
      std::uint32_t fr = kFrTxfe;
      if (rx_.empty()) fr |= kFrRxfe;
      if (rx_.size() >= fifo_depth()) fr |= kFrRxff;
      return fr & ~kFrTxff;
    }
    case kIlpr:
      return ilpr_;
    case kIbrd:
      return ibrd_;
    case kFbrd:
      return fbrd_;
    case kLcrH:
      return lcr_h_;
    case kCr:
      return cr_;
    case kIfls:
      return ifls_;
    case kImsc:
      return imsc_;
    case kRis:
      return ris_;
    case kMis:
      return ris_ & imsc_;
    case kDmacr:
      return dmacr_;
    default:
      break;
  }
  if (offset >= kId && offset < 0x1000 && (offset & 3) == 0) return kIds[(offset - kId) / 4];
  ++bad_accesses_;
  std::ostringstream s;
  s << "read of no register at offset 0x" << std::hex << offset << " (reads as zero)";
  log_.write(core::LogLevel::Warn, s.str());
  return 0;
}

void Pl011::write(std::uint32_t offset, std::uint32_t value) {
  switch (offset) {
    case kDr:
      ++chars_out_;
      ++tx_count_;
      if (output_) output_(static_cast<char>(value & 0xFF));
      ris_ |= kIntTx;
      update();
      return;
    case kRsr:  // ECR: any write clears the error bits
      rsr_ = 0;
      return;
    case kIlpr:
      ilpr_ = value & 0xFF;
      return;
    case kIbrd:
      ibrd_ = value & 0xFFFF;
      return;
    case kFbrd:
      fbrd_ = value & 0x3F;
      return;
    case kLcrH:
      lcr_h_ = value & 0xFF;
      while (rx_.size() > fifo_depth()) rx_.pop_back();
      return;
    case kCr:
      cr_ = value & 0xFF87;
      return;
    case kIfls:
      ifls_ = value & 0x3F;
      return;
    case kImsc:
      imsc_ = value & kIntMask;
      update();
      return;
    case kIcr:
      ris_ &= ~value;
      update();
      return;
    case kDmacr:
      dmacr_ = value & 7;
      return;
    default:
      break;
  }
  ++bad_accesses_;
  std::ostringstream s;
  s << "write to no register or a read-only one at offset 0x" << std::hex << offset << " (ignored)";
  log_.write(core::LogLevel::Warn, s.str());
}

void Pl011::b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& /*delay*/) {
  const auto offset = static_cast<std::uint32_t>(t.get_address());
  const unsigned len = t.get_data_length();
  t.set_response_status(tlm::TLM_OK_RESPONSE);
  if (t.get_byte_enable_ptr() || len == 0 || len > 4 || t.get_streaming_width() != len) {
    t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  // Byte and halfword accesses act on the register's low bits (Linux writes DR with writeb).
  const std::uint32_t reg = offset & ~3u;
  const unsigned shift = 8 * (offset & 3u);
  if (t.is_read()) {
    const std::uint32_t v = read(reg) >> shift;
    std::memcpy(t.get_data_ptr(), &v, len);
  } else {
    std::uint32_t v = 0;
    std::memcpy(&v, t.get_data_ptr(), len);
    write(reg, v << shift);
  }
}

}  // namespace vtoe::uart
