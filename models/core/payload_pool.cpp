#include "models/core/payload_pool.h"

namespace vtoe::core {

PayloadPool::~PayloadPool() = default;

tlm::tlm_generic_payload* PayloadPool::acquire() {
  tlm::tlm_generic_payload* t = nullptr;
  if (free_.empty()) {
    all_.push_back(std::make_unique<tlm::tlm_generic_payload>(this));
    t = all_.back().get();
  } else {
    t = free_.back();
    free_.pop_back();
  }
  t->set_command(tlm::TLM_IGNORE_COMMAND);
  t->set_address(0);
  t->set_data_ptr(nullptr);
  t->set_data_length(0);
  t->set_streaming_width(0);
  t->set_byte_enable_ptr(nullptr);
  t->set_byte_enable_length(0);
  t->set_dmi_allowed(false);
  t->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  t->set_gp_option(tlm::TLM_MIN_PAYLOAD);
  t->acquire();
  return t;
}

void PayloadPool::free(tlm::tlm_generic_payload* t) {
  t->reset();  // frees auto extensions
  free_.push_back(t);
}

}  // namespace vtoe::core
