#include "models/mem/ram.h"

#include <sys/mman.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace vtoe::mem {

Ram::Ram(const sc_core::sc_module_name& name, std::uint64_t size, sc_core::sc_time latency)
    : core::Module(name), in("in"), size_(size), latency_(latency) {
  if (size == 0) throw std::invalid_argument(std::string(this->name()) + ": size must be > 0");
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::uint8_t*>(p);
  in.register_b_transport(this, &Ram::b_transport);
  in.register_get_direct_mem_ptr(this, &Ram::get_direct_mem_ptr);
  in.register_transport_dbg(this, &Ram::transport_dbg);
}

Ram::~Ram() { munmap(data_, size_); }

std::uint8_t* Ram::host(std::uint64_t offset, std::uint64_t len) {
  if (offset > size_ || len > size_ - offset) {
    throw std::out_of_range(std::string(name()) + ": [" + std::to_string(offset) + ", +" +
                            std::to_string(len) + ") outside the RAM's " + std::to_string(size_) +
                            " bytes");
  }
  return data_ + offset;
}

void Ram::set_timing(const DramParams& p) { timing_ = std::make_unique<DramTiming>(p); }

bool Ram::in_range(const tlm::tlm_generic_payload& t) const {
  const std::uint64_t a = t.get_address(), n = t.get_data_length();
  return a <= size_ && n <= size_ - a;
}

void Ram::b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
  if (!in_range(t)) {
    t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (t.get_byte_enable_ptr()) {
    t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  std::uint8_t* p = data_ + t.get_address();
  if (t.is_read())
    std::memcpy(t.get_data_ptr(), p, t.get_data_length());
  else if (t.is_write())
    std::memcpy(p, t.get_data_ptr(), t.get_data_length());
  delay += latency_;
  if (timing_) {
    const core::TimePs arrival = core::now_ps() + core::to_ps(delay);
    const std::uint64_t len = t.get_data_length();
    const DramTiming::Booking b = timing_->book(t.get_address(), len, len, arrival);
    delay += core::ps(b.done - arrival);
    ++transactions_;
    bytes_ += len;
    busy_ps_ += b.bus_ps;
  }
  t.set_dmi_allowed(true);
  t.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool Ram::get_direct_mem_ptr(tlm::tlm_generic_payload& /*t*/, tlm::tlm_dmi& dmi) {
  dmi.set_dmi_ptr(data_);
  dmi.set_start_address(0);
  dmi.set_end_address(size_ - 1);
  dmi.allow_read_write();
  dmi.set_read_latency(latency_);
  dmi.set_write_latency(latency_);
  return true;
}

unsigned int Ram::transport_dbg(tlm::tlm_generic_payload& t) {
  const std::uint64_t a = t.get_address();
  if (a >= size_) return 0;
  const std::uint64_t n = std::min<std::uint64_t>(t.get_data_length(), size_ - a);
  if (t.is_read())
    std::memcpy(t.get_data_ptr(), data_ + a, n);
  else if (t.is_write())
    std::memcpy(data_ + a, t.get_data_ptr(), n);
  return static_cast<unsigned int>(n);
}

}  // namespace vtoe::mem
