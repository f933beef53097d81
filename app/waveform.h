// `vtoe run --vcd FILE`: a waveform for GTKWave. The interrupt lines are written as they switch
// (a method sensitive to each); the rest is read from the models' accessors every `period` by a
// probe that only reads (results are the same with and without it): the TOE's interrupt bit
// vector, each SendQ's and each VM's virtual SendQ's occupancy, the CCB's entries, whether each
// direction of the link carried a frame in the last period, and the VM the scheduler runs. The
// file is bounded (VcdWriter: a window of simulated time and a size, docs/outputs.md).
#pragma once

#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "app/vcd_writer.h"
#include "platform/platform.h"

namespace vtoe::app {

class WaveformProbe : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(WaveformProbe);
  // Opens FILE (".vcd" is added when missing) and traces; throws std::runtime_error.
  WaveformProbe(const sc_core::sc_module_name& name, platform::Platform& p, const std::string& file,
                core::TimePs period, VcdBounds bounds);

  // Ends the file at the present simulated time; the writer tells what its bound left out.
  const VcdWriter& finish();

 private:
  void sample();
  void read_lines();

  platform::Platform& p_;
  core::TimePs period_;
  VcdWriter vcd_;
  // The lines written as they switch, and their variables' ids.
  std::vector<std::pair<const sc_core::sc_signal_in_if<bool>*, std::size_t>> lines_;
  std::size_t irq_vector_id_ = 0, ccb_id_ = 0, link_tx_id_ = 0, link_rx_id_ = 0, vm_id_ = 0;
  std::vector<std::size_t> sendq_ids_, vsendq_ids_;
  std::uint64_t last_tx_frames_ = 0, last_rx_frames_ = 0;
};

}  // namespace vtoe::app
