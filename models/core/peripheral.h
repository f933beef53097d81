// The base of every register target: a module whose target sockets decode to register banks
// (register.h), with one bad-access policy, debug access and reset.
//
// A derived model declares its sockets (`Peripheral::Socket`, named `in` or after the window
// they serve), maps banks at offsets inside each socket's window with map(), and gives its
// registers behaviour with Reg<T>'s callbacks. Every socket then answers:
//  - b_transport: the access is decoded to one register element (any access size the register
//    takes, little-endian, no byte enables); the peripheral's access latency is added to the
//    annotated delay;
//  - transport_dbg: any length, from and into the stored values, no side effects, no time;
//  - bad accesses (no register, a size or alignment the register does not take, a write to a
//    read-only register, a read of a write-only one, byte enables or streaming): counted, warned
//    with the socket, offset, size and reason (the first few of them; then counted only), and
//    answered with the response the peripheral chose (RAZ/WI with an OK response, as the GIC
//    architecture and QEMU's PL011 do, or an error response, as the TOE does).
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "models/core/module.h"
#include "models/core/register.h"
#include "models/core/sim_time.h"

namespace vtoe::core {

// How a peripheral answers an access that hit no register or one it may not make.
enum class BadAccessResponse {
  ReadAsZero,    // TLM_OK_RESPONSE: reads give zeros, writes are ignored
  ReadAsOnes,    // TLM_OK_RESPONSE: reads give all ones (PCI's absent functions), writes ignored
  AddressError,  // TLM_ADDRESS_ERROR_RESPONSE (a bus error the core turns into an abort)
  GenericError,  // TLM_GENERIC_ERROR_RESPONSE
};

struct PeripheralParams {
  BadAccessResponse bad_response = BadAccessResponse::ReadAsZero;
  TimePs access_latency_ps = 0;  // added to each bus access's annotated delay
  // Statistic names (results.json keys): bad accesses, and, when not empty, every bus access.
  std::string bad_access_stat = "bad_accesses";
  std::string access_stat;
  unsigned warn_limit = 16;  // bad accesses warned one by one; the rest are only counted
};

class Peripheral : public Module {
 public:
  using Socket = tlm_utils::simple_target_socket_tagged<Peripheral>;

  Peripheral(const sc_core::sc_module_name& name, const PeripheralParams& params);

  // Puts every register back to its reset value, then calls reset_state() for the model's own.
  void reset();
  std::uint64_t bad_accesses() const { return bad_.value(); }
  // Bus-free access for tests and tools, as through `socket` (side effects included), made by
  // core `cpu` (see accessor()): false on a bad access (counted as one).
  bool read(const Socket& socket, std::uint64_t offset, std::uint64_t& value, unsigned bytes = 4,
            int cpu = 0);
  bool write(const Socket& socket, std::uint64_t offset, std::uint64_t value, unsigned bytes = 4,
             int cpu = 0);

 protected:
  // Makes `socket` decode its window through this peripheral's banks.
  void serve(Socket& socket);
  // Maps `bank` at [base, base + size) of `socket`'s window.
  void map(Socket& socket, RegisterBank& bank, std::uint64_t base, std::uint64_t size);
  // The model's state besides its registers (FIFOs, levels); the registers are reset already.
  virtual void reset_state() {}
  void set_access_latency(TimePs t) { latency_ = ps(t); }
  // Banked registers (one copy per CPU, at one address): from now on each bus access records the
  // core that made it (SidebandExtension::cpu, 0 without the extension), and the register
  // callbacks read it with accessor(). Off by default: other peripherals pay nothing for it.
  void bank_by_cpu() { bank_by_cpu_ = true; }
  int accessor() const { return accessor_; }

 private:
  struct Window {
    const Socket* socket;
    int id;
    RegisterBank* bank;
    std::uint64_t base, size;
  };
  void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  unsigned transport_dbg(int id, tlm::tlm_generic_payload& gp);
  const Window* window(int id, std::uint64_t addr) const;
  bool access(int id, bool write, std::uint64_t addr, std::uint8_t* data, unsigned bytes);
  void bad_access(int id, bool write, std::uint64_t addr, unsigned bytes, const char* reg,
                  const char* why);
  int socket_id(const Socket& socket) const;

  PeripheralParams params_;
  std::vector<const Socket*> sockets_;
  std::vector<Window> windows_;
  mutable std::size_t last_window_ = 0;  // accesses come in runs to one bank
  sc_core::sc_time latency_;
  bool bank_by_cpu_ = false;
  int accessor_ = 0;  // the core making the access being decoded (bank_by_cpu)
  Counter* accesses_ = nullptr;
  Counter& bad_;
};

}  // namespace vtoe::core
