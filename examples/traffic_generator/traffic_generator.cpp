#include "traffic_generator.h"

#include <array>
#include <iostream>
#include <vector>

using vtoe::toe::EventType;
using vtoe::toe::Ring;

// The ring driver reaches the registers over the bus socket and the rings in memory directly.
struct TrafficGenerator::Access : vtoe::toe::HostRingDriver::Access {
  TrafficGenerator& g;
  explicit Access(TrafficGenerator& gen) : g(gen) {}
  void write_reg(std::uint64_t off, std::uint32_t v) override { g.write_reg(off, v); }
  std::uint32_t read_reg(std::uint64_t off) override { return g.read_reg(off); }
  void read_mem(std::uint64_t a, void* d, std::size_t n) override { g.memory_.read(a, d, n); }
  void write_mem(std::uint64_t a, const void* d, std::size_t n) override {
    g.memory_.write(a, d, n);
  }
  void wait_for_space() override { sc_core::wait(sc_core::sc_time(1, sc_core::SC_US)); }
};

TrafficGenerator::TrafficGenerator(const sc_core::sc_module_name& name, vtoe::mem::Dram& memory,
                                   const Params& params)
    : sc_core::sc_module(name), memory_(memory), params_(params) {
  SC_THREAD(run);
}

void TrafficGenerator::write_reg(std::uint64_t offset, std::uint32_t value) {
  tlm::tlm_generic_payload gp;
  gp.set_command(tlm::TLM_WRITE_COMMAND);
  gp.set_address(params_.regs + offset);
  gp.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
  gp.set_data_length(4);
  gp.set_streaming_width(4);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  bus->b_transport(gp, delay);
  wait(delay);
}

std::uint32_t TrafficGenerator::read_reg(std::uint64_t offset) {
  std::uint32_t value = 0;
  tlm::tlm_generic_payload gp;
  gp.set_command(tlm::TLM_READ_COMMAND);
  gp.set_address(params_.regs + offset);
  gp.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
  gp.set_data_length(4);
  gp.set_streaming_width(4);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  bus->b_transport(gp, delay);
  wait(delay);
  return value;
}

bool TrafficGenerator::reap(EventType wanted) {
  if (!irq.read()) wait(sc_core::sc_time(10, sc_core::SC_MS), irq.posedge_event());
  Access access(*this);
  vtoe::toe::EcqDesc d;
  bool ok = true;
  while (rings_.next_completion(access, d)) {
    if (d.type == static_cast<std::uint8_t>(EventType::Error)) ok = false;
    if (d.type == static_cast<std::uint8_t>(wanted)) {
      (wanted == EventType::Connected ? connected_ : completed_) += 1;
    }
  }
  rings_.release_completions(access);
  return ok;
}

void TrafficGenerator::run() {
  // Rings, the socket's receive buffer and the payload buffer at 16 MiB and up.
  std::uint64_t next = 16 << 20;
  auto alloc = [&](std::uint64_t n) {
    const std::uint64_t at = next;
    next += (n + 4095) & ~std::uint64_t{4095};
    return at;
  };
  std::array<std::uint64_t, vtoe::toe::kRings> ring_addr{};
  for (auto& a : ring_addr) a = alloc(64 * vtoe::toe::kDescBytes);
  Access access(*this);
  rings_.start(access, ring_addr);

  vtoe::toe::CmdDesc connect{};
  connect.opcode = static_cast<std::uint8_t>(vtoe::toe::CmdOp::Connect);
  connect.sock = 1;
  connect.ip = params_.peer_ip;
  connect.port = params_.peer_port;
  connect.rx_size = 64 * 1024;
  connect.rx_addr = alloc(connect.rx_size);
  rings_.post(access, Ring::Cmd, &connect);
  while (connected_ == 0)
    if (!reap(EventType::Connected)) break;

  const std::uint64_t buffer = alloc(std::uint64_t{params_.message} * params_.window);
  std::vector<std::uint8_t> data(params_.message, 0x5a);
  for (std::uint32_t i = 0; i < params_.window; ++i)
    memory_.write(buffer + std::uint64_t{i} * params_.message, data.data(), data.size());
  for (std::uint32_t posted = 0; posted < params_.count; ++posted) {
    while (posted - completed_ >= params_.window)
      if (!reap(EventType::SendDone)) return;
    vtoe::toe::SendDesc s{};
    s.sock = 1;
    s.length = params_.message;
    s.addr = buffer + std::uint64_t{posted % params_.window} * params_.message;
    s.cookie = posted;
    rings_.post(access, Ring::Send, &s);
  }
  while (completed_ < params_.count)
    if (!reap(EventType::SendDone)) return;
  finished_at_ = sc_core::sc_time_stamp();
  // Acknowledged is not yet read: give the peer's application a moment to take the last bytes.
  wait(sc_core::sc_time(1, sc_core::SC_MS));
  sc_core::sc_stop();
}
