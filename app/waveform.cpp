#include "app/waveform.h"

#include <stdexcept>

namespace vtoe::app {

WaveformProbe::WaveformProbe(const sc_core::sc_module_name& name, platform::Platform& p,
                             const std::string& file, core::TimePs period)
    : sc_core::sc_module(name), p_(p), period_(period) {
  std::string base = file;
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".vcd") == 0)
    base.resize(base.size() - 4);  // SystemC adds the extension
  tf_ = sc_core::sc_create_vcd_trace_file(base.c_str());
  if (!tf_) throw std::runtime_error("--vcd " + file + ": cannot create the trace file");
  tf_->set_time_unit(1, sc_core::SC_NS);  // edges to the ns; also keeps SystemC's notice quiet
  sc_core::sc_trace(tf_, p.gic_irq(), "gic.irq");
  sc_core::sc_trace(tf_, p.gic_virq(), "gic.virq");
  sc_core::sc_trace(tf_, p.gic_maintenance(), "gic.maintenance");
  for (std::size_t k = 1; k < p.core_count(); ++k) {  // the other cores' CPU interfaces
    sc_core::sc_trace(tf_, p.gic_irq(k), "gic.irq" + std::to_string(k));
    sc_core::sc_trace(tf_, p.gic_virq(k), "gic.virq" + std::to_string(k));
    sc_core::sc_trace(tf_, p.gic_maintenance(k), "gic.maintenance" + std::to_string(k));
  }
  for (std::size_t i = 0; i < p.spi_lines().size(); ++i)
    sc_core::sc_trace(tf_, *p.spi_lines()[i], "gic.spi" + std::to_string(i));
  sc_core::sc_trace(tf_, irq_vector_, "toe.irq_vector", 32);
  sc_core::sc_trace(tf_, ccb_entries_, "toe.ccb_entries", 32);
  sendq_.assign(static_cast<std::size_t>(p.toe().channel_count()), 0);
  for (std::size_t c = 0; c < sendq_.size(); ++c)
    sc_core::sc_trace(tf_, sendq_[c], "toe.channel" + std::to_string(c) + ".sendq", 32);
  if (p.vtoe_manager()) {
    vsendq_.assign(p.vm_count(), 0);
    for (std::size_t s = 0; s < vsendq_.size(); ++s)
      sc_core::sc_trace(tf_, vsendq_[s], "vtoe_manager." + p.vm_name(s) + ".vsendq", 32);
  }
  sc_core::sc_trace(tf_, link_tx_busy_, "link.tx_busy");
  sc_core::sc_trace(tf_, link_rx_busy_, "link.rx_busy");
  sc_core::sc_trace(tf_, running_vm_, "scheduler.running_vm");
  SC_METHOD(sample);
}

WaveformProbe::~WaveformProbe() {
  if (tf_) sc_core::sc_close_vcd_trace_file(tf_);
}

void WaveformProbe::sample() {
  toe::Toe& toe = p_.toe();
  irq_vector_ = toe.irq_vector();
  ccb_entries_ = static_cast<std::uint32_t>(toe.ccb().stats().accumulator("occupancy").current());
  for (std::size_t c = 0; c < sendq_.size(); ++c)
    sendq_[c] =
        static_cast<std::uint32_t>(toe.channel(static_cast<int>(c)).sendq_occupancy().current());
  if (hypervisor::VirtualToeManager* m = p_.vtoe_manager())
    for (std::size_t s = 0; s < vsendq_.size(); ++s)
      vsendq_[static_cast<std::size_t>(m->channel(static_cast<int>(s)).vm())] =
          static_cast<std::uint32_t>(m->vsendq_occupancy(static_cast<int>(s)).current());
  // The TOE is end A of the simulated link (NetVP has no simulated link: the MAC's counters).
  const std::uint64_t tx = toe.mac().tx_frames(), rx = toe.mac().rx_frames();
  link_tx_busy_ = tx != last_tx_frames_;
  link_rx_busy_ = rx != last_rx_frames_;
  last_tx_frames_ = tx;
  last_rx_frames_ = rx;
  running_vm_ = p_.core().running_vm();
  next_trigger(core::ps(period_));
}

}  // namespace vtoe::app
