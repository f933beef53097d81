// `vtoe run --vcd FILE`: a waveform for GTKWave. The interrupt lines are traced as they switch
// (they are signals); the rest is read from the models' accessors every `period` by a probe that
// only reads (results are the same with and without it): the TOE's interrupt bit vector, each
// SendQ's and each VM's virtual SendQ's occupancy, the CCB's entries, whether each direction of
// the link carried a frame in the last period, and the VM the scheduler runs.
#pragma once

#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "platform/platform.h"

namespace vtoe::app {

class WaveformProbe : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(WaveformProbe);
  // Opens FILE (".vcd" is added when missing) and traces; throws std::runtime_error.
  WaveformProbe(const sc_core::sc_module_name& name, platform::Platform& p, const std::string& file,
                core::TimePs period);
  ~WaveformProbe() override;

 private:
  void sample();

  platform::Platform& p_;
  core::TimePs period_;
  sc_core::sc_trace_file* tf_ = nullptr;
  // What the probe reads, as it was at the last sample.
  std::uint32_t irq_vector_ = 0;
  int running_vm_ = 0;
  std::vector<std::uint32_t> sendq_, vsendq_;
  std::uint32_t ccb_entries_ = 0;
  bool link_tx_busy_ = false, link_rx_busy_ = false;
  std::uint64_t last_tx_frames_ = 0, last_rx_frames_ = 0;
};

}  // namespace vtoe::app
