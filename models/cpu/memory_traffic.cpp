#include "models/cpu/memory_traffic.h"

#include <algorithm>

namespace vtoe::cpu {

MemoryTraffic::MemoryTraffic(const sc_core::sc_module_name& name, tlm::tlm_initiator_socket<>& bus,
                             Core& core, std::uint32_t burst_bytes)
    : core::Module(name),
      bus_(bus),
      core_(core),
      burst_(std::max<std::uint32_t>(burst_bytes, 64)),
      scratch_(burst_),
      bytes_read_(stats_.counter("bytes_read", "bytes software read from DRAM (cache misses)")),
      bytes_written_(stats_.counter("bytes_written", "bytes software wrote back to DRAM")),
      transactions_(stats_.counter("transactions", "bursts booked on the memory system")),
      errors_(stats_.counter("errors", "bursts the memory system refused")),
      hypervisor_bytes_(
          stats_.counter("hypervisor_bytes",
                         "bytes of the above the hypervisor's copies moved (DE contexts and "
                         "completions)")),
      stall_ps_(stats_.counter("stall_ps", "core time stalled waiting for memory, ps")) {}

void MemoryTraffic::work(Core::Context& ctx, double cycles, CycleClass cls, bool write,
                         std::uint64_t pa, std::size_t bytes, bool stall, int charge_to) {
  const core::TimePs compute_ps = core_.cycles_ps(cycles);
  const std::size_t bursts = (bytes + burst_ - 1) / burst_;
  core::TimePs last_done = 0;  // after now
  for (std::size_t i = 0; i < bursts; ++i) {
    const std::size_t off = i * burst_;
    const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::size_t>(burst_, bytes - off));
    tlm::tlm_generic_payload gp;
    gp.set_address(pa + off);
    gp.set_data_ptr(scratch_.data());
    gp.set_data_length(n);
    gp.set_streaming_width(n);
    gp.set_byte_enable_ptr(nullptr);
    gp.set_dmi_allowed(false);
    if (write) {  // timing only: write back what is there
      gp.set_command(tlm::TLM_READ_COMMAND);
      bus_->transport_dbg(gp);
    }
    gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    const core::TimePs issue = compute_ps * i / bursts;
    sc_core::sc_time delay = core::ps(issue);
    bus_->b_transport(gp, delay);
    ++transactions_;
    if (!gp.is_response_ok()) ++errors_;
    (write ? bytes_written_ : bytes_read_) += n;
    if (cls == CycleClass::Hypervisor) hypervisor_bytes_ += n;
    last_done = std::max(last_done, core::to_ps(delay));
  }
  const core::TimePs start = core::now_ps();
  if (cycles > 0) core_.execute(ctx, cycles, cls, charge_to);
  if (!stall) return;
  const core::TimePs ran = core::now_ps() - start;
  if (last_done > ran) {
    const core::TimePs wait = last_done - ran;
    stall_ps_ += wait;
    core_.execute(ctx, static_cast<double>(wait) * core_.freq_hz() / 1e12, cls, charge_to);
  }
}

}  // namespace vtoe::cpu
