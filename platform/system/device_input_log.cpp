#include "platform/system/device_input_log.h"

#include <cstring>
#include <iomanip>
#include <sstream>

namespace vtoe::platform::system {

DeviceInputLog::DeviceInputLog(const sc_core::sc_module_name& name, std::uint64_t ram_base,
                               std::uint64_t ram_size, std::size_t limit)
    : BusPassThrough(name), ram_base_(ram_base), ram_size_(ram_size), limit_(limit) {
  SC_HAS_PROCESS(DeviceInputLog);
  SC_THREAD(replay_thread);
}

DeviceInputLog::Input& DeviceInputLog::append(Input::Kind kind) {
  inputs_.emplace_back();
  Input& i = inputs_.back();
  i.kind = kind;
  i.time = sc_core::sc_time_stamp().value();
  i.data = bytes_.size();
  return i;
}

void DeviceInputLog::record(const std::uint32_t (&args)[5]) {
  if (!recording_) return;
  if (inputs_.size() >= limit_) {
    overflowed_ = true;
    return;
  }
  Input& i = append(Input::Event);
  std::memcpy(i.args, args, sizeof args);
}

void DeviceInputLog::b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
  const std::uint64_t a = t.get_address();
  const bool ram = a >= ram_base_ && a - ram_base_ < ram_size_;
  if (!recording_ || ram || t.get_command() == tlm::TLM_IGNORE_COMMAND) {
    forward(t, delay);
    return;
  }
  if (inputs_.size() >= limit_ || t.get_byte_enable_ptr()) {
    // (The core never sends byte enables; an input that cannot be replayed spoils the log.)
    overflowed_ = true;
    forward(t, delay);
    return;
  }
  const bool write = t.get_command() == tlm::TLM_WRITE_COMMAND;
  const std::size_t index = inputs_.size();
  Input& i = append(write ? Input::Write : Input::Read);
  i.delay = delay.value();
  i.address = a;
  i.length = t.get_data_length();
  if (write) bytes_.insert(bytes_.end(), t.get_data_ptr(), t.get_data_ptr() + i.length);
  forward(t, delay);
  // (By index: an event recorded during the access may have moved the vector.)
  Input& done = inputs_[index];
  done.response = static_cast<std::int32_t>(t.get_response_status());
  if (!write) {
    done.data = bytes_.size();
    bytes_.insert(bytes_.end(), t.get_data_ptr(), t.get_data_ptr() + done.length);
  }
}

void DeviceInputLog::replay(std::vector<Input> inputs, std::vector<std::uint8_t> bytes,
                            std::function<void(const Input&)> on_event) {
  inputs_ = std::move(inputs);
  bytes_ = std::move(bytes);
  on_event_ = std::move(on_event);
  replay_done_ = inputs_.empty();
  divergence_.clear();
  replay_pending_ = !replay_done_;
  // (Before the simulation starts the thread finds replay_pending_ at its first run.)
  if (replay_pending_ && sc_core::sc_is_running()) start_replay_.notify(sc_core::SC_ZERO_TIME);
}

void DeviceInputLog::replay_thread() {
  for (;;) {
    if (!replay_pending_) sc_core::wait(start_replay_);
    replay_pending_ = false;
    for (const Input& i : inputs_) {
      const std::uint64_t now = sc_core::sc_time_stamp().value();
      if (i.time > now) sc_core::wait(sc_core::sc_time::from_value(i.time - now));
      if (i.kind == Input::Event) {
        if (on_event_) on_event_(i);
      } else {
        replay_access(i);
      }
    }
    replay_done_ = true;
  }
}

void DeviceInputLog::replay_access(const Input& i) {
  const bool write = i.kind == Input::Write;
  buffer_.assign(i.length, 0);
  if (write) std::memcpy(buffer_.data(), bytes_.data() + i.data, i.length);
  trans_.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  trans_.set_address(i.address);
  trans_.set_data_ptr(buffer_.data());
  trans_.set_data_length(i.length);
  trans_.set_streaming_width(i.length);
  trans_.set_byte_enable_ptr(nullptr);
  trans_.set_byte_enable_length(0);
  trans_.set_dmi_allowed(false);
  trans_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::sc_time::from_value(i.delay);
  out->b_transport(trans_, delay);
  const bool same_response = static_cast<std::int32_t>(trans_.get_response_status()) == i.response;
  const bool same_data =
      write || std::memcmp(buffer_.data(), bytes_.data() + i.data, i.length) == 0;
  if ((same_response && same_data) || !divergence_.empty()) return;
  std::ostringstream m;
  m << (write ? "a write of " : "a read of ") << i.length << " bytes at 0x" << std::hex << i.address
    << std::dec << " at " << sc_core::sc_time_stamp() << " answered "
    << (same_response ? "other data" : "another response") << " than when it was recorded";
  divergence_ = m.str();
}

}  // namespace vtoe::platform::system
