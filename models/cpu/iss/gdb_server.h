// GDB's remote serial protocol for an IssCpu (`vtoe system run --gdb PORT`, or any platform built
// with find_package(vtoe) that links vtoe::iss_tlm): a gdb-multiarch (or any GDB for ARM)
// attached over TCP on 127.0.0.1 debugs the software on the core as it would on QEMU's gdbstub.
//
// Packets: ?, g/G (r0-r15, cpsr), p/P (0-15, 25 = cpsr as in QEMU's numbering), m/M (through
// the core's current translation: ArmCore::debug_read/debug_write), Z0/z0 and Z1/z1 (the core's
// breakpoints), s (one instruction or exception entry), c, D (detach: breakpoints removed, the
// run goes on), k (the run ends), qSupported with qXfer:features:read (target.xml: the
// org.gnu.gdb.arm.core feature, so gdb-multiarch knows the registers), qAttached, H. Anything
// else gets the empty reply (unsupported). When the run ends while GDB is attached it gets
// W<status>. Ctrl-C (0x03) while the core runs stops it (T02, SIGINT, as QEMU), seen within
// IssCpu::kInterruptPollBatches batches. Not supported: watchpoints, the VFP registers, no-ack
// mode.
//
// Several cores (a platform's `--smp N`): one GDB thread per core, thread ID = core index + 1, as
// QEMU's gdbstub shows its vCPUs: qfThreadInfo/qsThreadInfo list them, qC names the current one,
// T<id> says whether one exists, Hg<id> picks the core whose registers g/G/p/P and memory m/M
// reach (by its own translation), and the stop replies are T05thread:<id>; for the core that
// stopped. All-stop: a core stopped holds every other (they run in turn in one SystemC kernel);
// c runs them all on; s steps the core that stopped (Hc is taken and ignored); breakpoints are
// every core's. With one core the packets and replies are as they always were.
//
// The server runs in the stopped core's SystemC thread (IssCpu::Debugger): while GDB holds the
// core stopped, simulated time stands still.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "models/cpu/iss/iss_cpu.h"

namespace vtoe::cpu::iss {

class GdbServer : public IssCpu::Debugger {
 public:
  // Listens on 127.0.0.1:port at once (throws std::runtime_error if it cannot); the first
  // stopped() call waits for GDB to connect.
  GdbServer(IssCpu& cpu, unsigned port, std::ostream& log);
  // Every core of a platform (cpus[0] first): set_debugger(&debugger(i)) on each.
  GdbServer(const std::vector<IssCpu*>& cpus, unsigned port, std::ostream& log);
  // Core i's Debugger (0: this server itself).
  IssCpu::Debugger& debugger(int i);
  ~GdbServer() override;
  GdbServer(const GdbServer&) = delete;
  GdbServer& operator=(const GdbServer&) = delete;

  void stopped(bool at_start) override;
  bool breakpoint_at(uint32_t pc) const override { return breakpoints_.count(pc) != 0; }
  bool interrupted() override;
  // The run ended with `status`: tell an attached GDB (W packet) and close.
  void exited(int status);
  // Whether GDB asked to end the run (k).
  bool killed() const { return killed_; }

  // One packet's payload -> the reply's payload (also used by tests without a socket).
  // Sets resume_ for c/s/D/k.
  std::string handle(const std::string& packet);

 private:
  enum class Resume { None, Continue, Step, Detach, Kill };
  class CoreHook;  // a secondary core's Debugger: stopped() on that core
  void stopped_on(int core, bool at_start);
  std::string stop_reply(int signal) const;
  ArmCore& selected() { return cpus_[static_cast<std::size_t>(selected_)]->core(); }
  void remove_breakpoints();
  bool read_packet(std::string& out);  // false: connection closed
  void send_packet(const std::string& payload);
  std::string read_registers();
  std::string target_xml(const std::string& annex, const std::string& range);

  std::vector<IssCpu*> cpus_;
  std::vector<std::unique_ptr<CoreHook>> hooks_;
  int stopped_ = 0;   // the core that stopped (where s steps)
  int selected_ = 0;  // Hg's core
  std::ostream& log_;
  int listen_fd_ = -1, fd_ = -1;
  unsigned port_;
  bool detached_ = false, killed_ = false;
  int stop_signal_ = 5;  // of the next stop reply: SIGTRAP, or SIGINT after Ctrl-C
  Resume resume_ = Resume::None;
  std::set<uint32_t> breakpoints_;
};

}  // namespace vtoe::cpu::iss
