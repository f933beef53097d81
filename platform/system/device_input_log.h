// What the core did to the devices since time 0: how a snapshot brings the GIC, the UART, the
// TOE, the link and the peer to the snapshot's point exactly, pending events included, without
// a save and restore function in each model.
//
// Sits between the core and the rest of the bus (BusErrorWatch) and passes everything through
// (BusPassThrough). While recording, it logs every b_transport outside
// the RAM (a device register: the time, the annotated delay, the command, the address, the data
// written or read, the response); the platform adds the inputs that do not cross the bus (the
// generic timer's PPI levels, the firmware's PSCI calls) with record(). Nothing else reaches the
// devices from the core, and they are deterministic: replayed in order at their times while the
// core is held, the same inputs bring them to the same state (the devices' DMA into the RAM
// aside: a snapshot is taken only if there was none). A replayed read that answers otherwise
// than the recorded one means the devices went another way (a model changed under a snapshot
// made by the same binary cannot happen; a bug can): the first one is kept for the error.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "platform/system/bus_pass_through.h"

namespace vtoe::platform::system {

class DeviceInputLog : public BusPassThrough {
 public:
  // One input. Plain data: a snapshot file holds the array as it is.
  struct Input {
    enum Kind : std::uint8_t { Read, Write, Event };
    std::uint64_t time = 0;   // sc_time value (kernel resolution units) of the access
    std::uint64_t delay = 0;  // its annotated delay, the same units
    std::uint64_t address = 0;
    std::uint64_t data = 0;  // offset of its bytes in bytes() (Read: what the read returned)
    std::uint32_t length = 0;
    std::int32_t response = 0;   // tlm_response_status
    std::uint32_t args[5] = {};  // Event: the platform's (what, and its arguments)
    Kind kind = Read;
  };

  // Accesses to [ram_base, ram_base + ram_size) are the RAM's: not logged (a snapshot saves the
  // RAM's contents instead). At most `limit` inputs are logged (about 64 bytes each; a Linux
  // boot to its shell logs some tens of thousands); beyond, overflowed() and no snapshot.
  DeviceInputLog(const sc_core::sc_module_name& name, std::uint64_t ram_base,
                 std::uint64_t ram_size, std::size_t limit = 2'000'000);

  void start_recording() { recording_ = true; }
  void stop_recording() { recording_ = false; }
  bool recording() const { return recording_; }
  bool overflowed() const { return overflowed_; }
  // An input that does not cross the bus, at the current time (while recording).
  void record(const std::uint32_t (&args)[5]);

  const std::vector<Input>& inputs() const { return inputs_; }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

  // Replays `inputs` (their data in `bytes`) from now on, each at its time, through `out`; an
  // Event goes to `on_event`. replayed() once the last has been replayed (or at once if none).
  void replay(std::vector<Input> inputs, std::vector<std::uint8_t> bytes,
              std::function<void(const Input&)> on_event);
  bool replayed() const { return replay_done_; }
  // The first replayed access whose answer differs from the recorded one ("" if none).
  const std::string& divergence() const { return divergence_; }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) override;
  Input& append(Input::Kind kind);
  void replay_thread();
  void replay_access(const Input& in);

  std::uint64_t ram_base_, ram_size_;
  std::size_t limit_;
  bool recording_ = false, overflowed_ = false;
  std::vector<Input> inputs_;
  std::vector<std::uint8_t> bytes_;
  std::function<void(const Input&)> on_event_;
  sc_core::sc_event start_replay_;
  bool replay_done_ = false, replay_pending_ = false;
  std::string divergence_;
  tlm::tlm_generic_payload trans_;
  std::vector<std::uint8_t> buffer_;
};

}  // namespace vtoe::platform::system
