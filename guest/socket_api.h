// The guest's socket API (paper §2.2), BSD-like and blocking, on top of the TOE driver's rings.
// Data is copied by programmed I/O between the application's buffer and a per-socket kernel
// buffer in guest memory (one-copy): send() fills the kernel send buffer and posts SendQ
// contexts pointing into it; the TOE writes received payload into the kernel receive buffer and
// recv() copies it out and hands the space back through RecvQ.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <systemc>
#include <vector>

#include "guest/costs.h"
#include "guest/guest_memory.h"
#include "guest/toe_driver.h"
#include "models/core/module.h"
#include "models/core/stream_clock.h"
#include "models/cpu/core.h"
#include "models/toe/descriptors.h"

namespace vtoe::guest {

struct SocketParams {
  std::uint32_t send_buffer = 64 * 1024;   // kernel send buffer per socket
  std::uint32_t recv_buffer = 16 * 1024;   // kernel receive buffer per socket
  std::uint32_t max_context = 64 * 1024;   // largest payload of one SendQ context
  std::uint32_t release_batch = 4 * 1024;  // consumed receive-buffer bytes handed back at once
  std::uint32_t local_ip = 0;              // the guest's own address (0 = the TOE's primary)
  // workload.path user: the library runs in the process (no system call) and polls the channel
  // instead of sleeping until the kernel thread wakes it (the driver is polled, no interrupt).
  bool user_space = false;
  // workload.zero_copy: the TOE's DMA reads and writes pinned user pages; a call moving at least
  // guest.costs.remap_threshold bytes pins its pages instead of copying them.
  bool zero_copy = false;
};

enum class SockError : int {
  Ok = 0,
  BadSocket = -1,
  Refused = -2,
  Reset = -3,
  TimedOut = -4,
  NoResources = -5,
  Closed = -6
};

class SocketLayer : public core::Module {
 public:
  using Ctx = cpu::Core::Context;
  SocketLayer(const sc_core::sc_module_name& name, ToeDriver& driver, cpu::Core& core,
              GuestMemory& mem, const GuestCosts& costs, const SocketParams& params);

  int socket(Ctx& ctx);  // >0 socket id, <0 error
  SockError connect(Ctx& ctx, int s, std::uint32_t ip, std::uint16_t port);
  SockError listen(Ctx& ctx, int s, std::uint16_t port, int backlog);
  int accept(Ctx& ctx, int s);  // new socket id or <0
  // Blocks until all `len` bytes are in kernel buffers; returns bytes taken (< len on error).
  // `before`: the caller's own work just before the call (an application's per-message
  // processing), run with the call's entry as one CPU request, as nothing between them is seen
  // by anyone else.
  std::size_t send(Ctx& ctx, int s, const std::uint8_t* data, std::size_t len,
                   cpu::Core::Work before = {});
  // Blocks until at least one byte is there; returns bytes copied, 0 at end of stream or error.
  // `immediate`: the caller needs data as soon as it arrives, so an empty buffer asks the TOE to
  // interrupt on the next packet (paper §2.2); otherwise the TOE tells the host when the kernel
  // buffer is full (or its notification timer expires), which costs far fewer interrupts.
  std::size_t recv(Ctx& ctx, int s, std::uint8_t* out, std::size_t max, bool immediate = true);
  // abortive: a reset instead of a FIN (SO_LINGER 0), so no TIME_WAIT holds the connection's
  // context in the TOE (a connection-rate benchmark's client closes so).
  void close(Ctx& ctx, int s, bool abortive = false);
  SockError error(int s) const;
  // Times socket `s`'s stream: each SendDone completion tells `clock` how far the TOE is done
  // with it (bytes since the connection's start; nullptr: no longer).
  void time_send_done(int s, core::StreamClock* clock);

  void on_completion(const toe::EcqDesc& d);  // from the driver's kernel thread
  // A wake-up of a process sleeping on another core than the kernel thread's is a reschedule
  // IPI (Linux's remote wake-up): `send(from, to)` sends it from the waker's context to that
  // core. Unset: such wake-ups cost nothing beyond `wakeup` (native, one vCPU).
  void set_ipi(std::function<void(Ctx& from, cpu::Core& to)> send) { ipi_ = std::move(send); }
  // User space: called by the calling thread before each poll turn of a wait (a cooperative
  // thread hands the core on there). Set per thread.
  void set_idle_hook(std::function<void()> hook) {
    idle_hooks_[sc_core::sc_get_current_process_handle().get_process_object()] = std::move(hook);
  }

 private:
  struct Socket {
    int id = 0;
    bool listening = false, connected = false, peer_closed = false, closed = false;
    // A socket goes away (id and buffers back to the kernel) once the application has closed it,
    // the TOE has released it (kEcqSocketReleased) and every send context of it has completed.
    bool user_closed = false, released = false;
    // Send contexts the TOE has not completed, oldest first (a handful: no node to allocate per
    // context, as a set would).
    std::vector<std::uint32_t> send_cookies;
    SockError err = SockError::Ok;
    // Kernel send buffer: a byte ring; [tx_done, tx_tail) is owned by the TOE until SendDone.
    std::uint64_t tx_addr = 0;
    std::uint64_t tx_tail = 0, tx_done = 0;
    // Kernel receive buffer: [rx_read, rx_avail_end) is data the TOE reported.
    std::uint64_t rx_addr = 0;
    std::uint64_t rx_read = 0, rx_avail_end = 0;
    bool waiting_notify = false;
    std::uint32_t unreleased = 0;                  // consumed bytes not yet handed back to the TOE
    core::StreamClock* send_done_clock = nullptr;  // time_send_done()
    std::deque<int> accepted;                      // listener: sockets whose Accepted arrived
    bool cmd_done = false;
    bool accepting = false;  // accept() waits for it: user space checks it now and then only
    int waiters = 0;
    Ctx* sleeper = nullptr;  // the process sleeping in block(), last to sleep
    sc_core::sc_event ev;
  };
  Socket* get(int s);
  Socket& create_socket();
  void block(Ctx& ctx, Socket& so);  // sleep until the socket's event (user space: poll once)
  // A socket call's entry: a system call, unless user space; `before` runs first, in the same
  // request.
  void enter(Ctx& ctx, cpu::Core::Work before = {});
  // send(): the call's entry and its first context's copy and post as one request that ends at
  // the kernel's look at the socket if anything could have happened meanwhile. Returns the bytes
  // it posted (0: it did not, or ended at the look; `entered` says whether the entry ran).
  std::size_t send_at_once(Ctx& ctx, int s, const std::uint8_t* data, std::size_t len,
                           cpu::Core::Work before, bool& entered);
  // One context of send() covering `n` bytes at the buffer's tail, its copy and post spent
  // (`spent`) or as one request of its own.
  void post_send(Ctx& ctx, Socket& so, const std::uint8_t* data, std::size_t n, bool spent);
  void command(Ctx& ctx, Socket& so, toe::CmdOp op, std::uint32_t ip, std::uint16_t port,
               std::uint16_t arg, bool with_rx_buffer);
  // One programmed-I/O copy of `bytes` to (write) or from the kernel buffer at `addr`.
  void copy_cost(Ctx& ctx, std::size_t bytes, double per_byte, bool write, std::uint64_t addr);
  // The same copy as work still to run, for a request that goes on with a post: only when it is
  // plain CPU work (with the memory traffic model the copy's DRAM traffic runs here, now, and
  // nothing is left to run).
  cpu::Core::Work copy_work(Ctx& ctx, std::size_t bytes, double per_byte, bool write,
                            std::uint64_t addr);
  void wake(Socket& so);
  void free_if_done(Socket& so);

  ToeDriver& driver_;
  cpu::Core& core_;
  GuestMemory& mem_;
  GuestCosts costs_;
  SocketParams params_;
  std::map<int, Socket> sockets_;
  std::map<const sc_core::sc_object*, std::function<void()>> idle_hooks_;
  std::function<void(Ctx&, cpu::Core&)> ipi_;
  int next_id_ = 1;
  std::uint32_t next_cookie_ = 1;
  std::vector<std::uint8_t> bounce_;
  core::Counter& sends_;
  core::Counter& recvs_;
  core::Counter& blocked_;
  core::Counter& errors_;
  core::Counter& freed_;
};

}  // namespace vtoe::guest
