#include "models/cpu/native_ports.h"

namespace vtoe::cpu {

void BusRegisterPort::access(cpu::Core::Context& ctx, bool write, std::uint64_t addr,
                             std::uint32_t& value) {
  access_as(ctx, write, addr, value, cpu::CycleClass::GuestKernel, -1);
}

void BusRegisterPort::access_as(cpu::Core::Context& ctx, bool write, std::uint64_t addr,
                                std::uint32_t& value, cpu::CycleClass cls, int charge_to) {
  std::unique_ptr<tlm::tlm_generic_payload> held;
  if (free_payloads_.empty()) {
    held = std::make_unique<tlm::tlm_generic_payload>();
  } else {
    held = std::move(free_payloads_.back());
    free_payloads_.pop_back();
  }
  tlm::tlm_generic_payload& gp = *held;
  gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  gp.set_address(addr);
  gp.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
  gp.set_data_length(4);
  gp.set_streaming_width(4);
  gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  bus_->b_transport(gp, delay);
  if (!gp.is_response_ok()) ++errors_;
  gp.set_dmi_allowed(false);
  free_payloads_.push_back(std::move(held));
  // The access does not retire until the device has it: the core stalls for the bus latency.
  core_.execute(ctx,
                stall_cycles_ + static_cast<double>(core::to_ps(delay)) * core_.freq_hz() / 1e12,
                cls, charge_to);
}

}  // namespace vtoe::cpu
