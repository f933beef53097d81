#include "app/waveform.h"

#include <stdexcept>

namespace vtoe::app {

namespace {

std::string with_extension(const std::string& file) {
  const bool has = file.size() > 4 && file.compare(file.size() - 4, 4, ".vcd") == 0;
  return has ? file : file + ".vcd";
}

}  // namespace

WaveformProbe::WaveformProbe(const sc_core::sc_module_name& name, platform::Platform& p,
                             const std::string& file, core::TimePs period, VcdBounds bounds)
    : sc_core::sc_module(name), p_(p), period_(period), vcd_(with_extension(file), bounds) {
  auto line = [this](const sc_core::sc_signal_in_if<bool>& s, const std::string& var) {
    lines_.emplace_back(&s, vcd_.add(var, 1));
  };
  line(p.gic_irq(), "gic.irq");
  line(p.gic_virq(), "gic.virq");
  line(p.gic_maintenance(), "gic.maintenance");
  for (std::size_t k = 1; k < p.core_count(); ++k) {  // the other cores' CPU interfaces
    line(p.gic_irq(k), "gic.irq" + std::to_string(k));
    line(p.gic_virq(k), "gic.virq" + std::to_string(k));
    line(p.gic_maintenance(k), "gic.maintenance" + std::to_string(k));
  }
  for (std::size_t i = 0; i < p.spi_lines().size(); ++i)
    line(*p.spi_lines()[i], "gic.spi" + std::to_string(i));
  irq_vector_id_ = vcd_.add("toe.irq_vector", 32);
  ccb_id_ = vcd_.add("toe.ccb_entries", 32);
  for (int c = 0; c < p.toe().channel_count(); ++c)
    sendq_ids_.push_back(vcd_.add("toe.channel" + std::to_string(c) + ".sendq", 32));
  if (p.vtoe_manager())
    for (std::size_t s = 0; s < p.vm_count(); ++s)
      vsendq_ids_.push_back(vcd_.add("vtoe_manager." + p.vm_name(s) + ".vsendq", 32));
  link_tx_id_ = vcd_.add("link.tx_busy", 1);
  link_rx_id_ = vcd_.add("link.rx_busy", 1);
  vm_id_ = vcd_.add("scheduler.running_vm", 32);

  SC_METHOD(read_lines);
  for (const auto& l : lines_) sensitive << l.first->value_changed_event();
  SC_METHOD(sample);
}

void WaveformProbe::read_lines() {
  const core::TimePs t = core::now_ps();
  for (const auto& [signal, id] : lines_) vcd_.set(t, id, signal->read() ? 1 : 0);
}

void WaveformProbe::sample() {
  const core::TimePs t = core::now_ps();
  toe::Toe& toe = p_.toe();
  vcd_.set(t, irq_vector_id_, toe.irq_vector());
  vcd_.set(t, ccb_id_,
           static_cast<std::uint64_t>(toe.ccb().stats().accumulator("occupancy").current()));
  for (std::size_t c = 0; c < sendq_ids_.size(); ++c)
    vcd_.set(
        t, sendq_ids_[c],
        static_cast<std::uint64_t>(toe.channel(static_cast<int>(c)).sendq_occupancy().current()));
  if (hypervisor::VirtualToeManager* m = p_.vtoe_manager())
    for (std::size_t s = 0; s < vsendq_ids_.size(); ++s)
      vcd_.set(t, vsendq_ids_[static_cast<std::size_t>(m->channel(static_cast<int>(s)).vm())],
               static_cast<std::uint64_t>(m->vsendq_occupancy(static_cast<int>(s)).current()));
  // The TOE is end A of the simulated link (NetVP has no simulated link: the MAC's counters).
  const std::uint64_t tx = toe.mac().tx_frames(), rx = toe.mac().rx_frames();
  vcd_.set(t, link_tx_id_, tx != last_tx_frames_ ? 1 : 0);
  vcd_.set(t, link_rx_id_, rx != last_rx_frames_ ? 1 : 0);
  last_tx_frames_ = tx;
  last_rx_frames_ = rx;
  // Two's complement in 32 bits, as a signed value in a waveform viewer.
  vcd_.set(t, vm_id_, static_cast<std::uint32_t>(p_.core().running_vm()));
  next_trigger(core::ps(period_));
}

const VcdWriter& WaveformProbe::finish() {
  vcd_.close(core::now_ps());
  return vcd_;
}

}  // namespace vtoe::app
