#include "models/core/peripheral.h"

#include <cstring>
#include <sstream>
#include <stdexcept>

#include "models/core/sideband.h"

namespace vtoe::core {

Peripheral::Peripheral(const sc_core::sc_module_name& name, const PeripheralParams& params)
    : Module(name),
      params_(params),
      latency_(ps(params.access_latency_ps)),
      accesses_(params.access_stat.empty()
                    ? nullptr
                    : &stats_.counter(params.access_stat, "bus reads and writes of the registers")),
      bad_(stats_.counter(params.bad_access_stat,
                          "bus accesses to no register, of a size, alignment or direction the "
                          "register does not take")) {}

void Peripheral::serve(Socket& socket) {
  const int id = static_cast<int>(sockets_.size());
  sockets_.push_back(&socket);
  socket.register_b_transport(this, &Peripheral::b_transport, id);
  socket.register_transport_dbg(this, &Peripheral::transport_dbg, id);
}

int Peripheral::socket_id(const Socket& socket) const {
  for (std::size_t i = 0; i < sockets_.size(); ++i)
    if (sockets_[i] == &socket) return static_cast<int>(i);
  throw std::logic_error(std::string(name()) + ": socket " + socket.basename() + " is not served");
}

void Peripheral::map(Socket& socket, RegisterBank& bank, std::uint64_t base, std::uint64_t size) {
  const int id = socket_id(socket);
  for (const Window& w : windows_)
    if (w.id == id && base < w.base + w.size && w.base < base + size)
      throw std::logic_error(std::string(name()) + ": bank " + bank.name() + " overlaps " +
                             w.bank->name());
  windows_.push_back({&socket, id, &bank, base, size});
}

void Peripheral::reset() {
  for (const Window& w : windows_) w.bank->reset();
  reset_state();
}

const Peripheral::Window* Peripheral::window(int id, std::uint64_t addr) const {
  if (last_window_ < windows_.size()) {
    const Window& w = windows_[last_window_];
    if (w.id == id && addr >= w.base && addr - w.base < w.size) return &w;
  }
  for (std::size_t i = 0; i < windows_.size(); ++i) {
    const Window& w = windows_[i];
    if (w.id == id && addr >= w.base && addr - w.base < w.size) {
      last_window_ = i;
      return &w;
    }
  }
  return nullptr;
}

bool Peripheral::access(int id, bool write, std::uint64_t addr, std::uint8_t* data,
                        unsigned bytes) {
  const Window* w = window(id, addr);
  if (!w) {
    bad_access(id, write, addr, bytes, nullptr, "outside every register bank");
    return false;
  }
  const RegisterHit hit = w->bank->find(addr - w->base, bytes, write);
  if (!hit.reg) {
    bad_access(id, write, addr, bytes, nullptr, hit.error);
    return false;
  }
  const std::uint64_t lane = bytes >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * bytes)) - 1;
  if (write) {
    std::uint64_t v = 0;
    std::memcpy(&v, data, bytes);  // little-endian host and bus
    hit.reg->bus_write(hit.index, v << hit.shift, lane << hit.shift);
  } else {
    const std::uint64_t v = (hit.reg->bus_read(hit.index) >> hit.shift) & lane;
    std::memcpy(data, &v, bytes);
  }
  return true;
}

void Peripheral::bad_access(int id, bool write, std::uint64_t addr, unsigned bytes, const char* reg,
                            const char* why) {
  ++bad_;
  const std::uint64_t n = bad_.value();
  if (n > params_.warn_limit) return;
  std::ostringstream s;
  s << (write ? "write" : "read") << " of " << bytes << " byte(s) at " << sockets_[id]->basename()
    << "+0x" << std::hex << addr << std::dec;
  if (reg) s << " (" << reg << ")";
  s << ": " << why << " ("
    << (params_.bad_response == BadAccessResponse::ReadAsZero   ? "read as zero / ignored"
        : params_.bad_response == BadAccessResponse::ReadAsOnes ? "read as ones / ignored"
                                                                : "bus error")
    << ")";
  if (n == params_.warn_limit) s << "; further bad accesses are counted, not logged";
  log_.write(LogLevel::Warn, s.str());
}

void Peripheral::b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  if (accesses_) ++*accesses_;
  delay += latency_;
  const unsigned bytes = gp.get_data_length();
  const bool write = gp.is_write();
  const std::uint64_t addr = gp.get_address();
  if (bank_by_cpu_) {
    const auto* sb = gp.get_extension<SidebandExtension>();
    accessor_ = sb ? sb->cpu : 0;
  }
  bool ok = false;
  if (gp.get_byte_enable_ptr() || gp.get_streaming_width() != bytes ||
      !(bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8)) {
    bad_access(id, write, addr, bytes, nullptr, "byte enables, streaming or an odd size");
  } else if (gp.is_read() || write) {
    ok = access(id, write, addr, gp.get_data_ptr(), bytes);
  } else {
    ok = true;  // TLM_IGNORE_COMMAND
  }
  if (ok) {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  switch (params_.bad_response) {
    case BadAccessResponse::ReadAsZero:
      if (gp.is_read()) std::memset(gp.get_data_ptr(), 0, bytes);
      gp.set_response_status(tlm::TLM_OK_RESPONSE);
      break;
    case BadAccessResponse::ReadAsOnes:
      if (gp.is_read()) std::memset(gp.get_data_ptr(), 0xff, bytes);
      gp.set_response_status(tlm::TLM_OK_RESPONSE);
      break;
    case BadAccessResponse::AddressError:
      gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      break;
    case BadAccessResponse::GenericError:
      gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      break;
  }
}

unsigned Peripheral::transport_dbg(int id, tlm::tlm_generic_payload& gp) {
  if (bank_by_cpu_) {
    const auto* sb = gp.get_extension<SidebandExtension>();
    accessor_ = sb ? sb->cpu : 0;
  }
  const std::uint64_t addr = gp.get_address();
  const unsigned n = gp.get_data_length();
  std::uint8_t* data = gp.get_data_ptr();
  unsigned done = 0;
  for (unsigned i = 0; i < n;) {
    const Window* w = window(id, addr + i);
    if (!w) {  // no bank: reads as zero, one byte at a time until the next bank
      if (gp.is_read()) data[i] = 0;
      ++i;
      continue;
    }
    const unsigned span =
        static_cast<unsigned>(std::min<std::uint64_t>(n - i, w->base + w->size - (addr + i)));
    if (gp.is_read())
      w->bank->debug_read(addr + i - w->base, data + i, span);
    else if (gp.is_write())
      w->bank->debug_write(addr + i - w->base, data + i, span);
    i += span;
    done = i;
  }
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  return gp.is_read() ? n : done;
}

bool Peripheral::read(const Socket& socket, std::uint64_t offset, std::uint64_t& value,
                      unsigned bytes, int cpu) {
  accessor_ = cpu;
  value = 0;
  return access(socket_id(socket), false, offset, reinterpret_cast<std::uint8_t*>(&value), bytes);
}

bool Peripheral::write(const Socket& socket, std::uint64_t offset, std::uint64_t value,
                       unsigned bytes, int cpu) {
  accessor_ = cpu;
  return access(socket_id(socket), true, offset, reinterpret_cast<std::uint8_t*>(&value), bytes);
}

}  // namespace vtoe::core
