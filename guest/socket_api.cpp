#include "guest/socket_api.h"

#include <algorithm>
#include <cstring>

namespace vtoe::guest {

using cpu::CycleClass;
using toe::EventType;

SocketLayer::SocketLayer(const sc_core::sc_module_name& name, ToeDriver& driver, cpu::Core& core,
                         GuestMemory& mem, const GuestCosts& costs, const SocketParams& params)
    : core::Module(name),
      driver_(driver),
      core_(core),
      mem_(mem),
      costs_(costs),
      params_(params),
      sends_(stats_.counter("send_calls", "send() calls")),
      recvs_(stats_.counter("recv_calls", "recv() calls")),
      blocked_(stats_.counter("blocked", "times a call slept")),
      errors_(stats_.counter("errors", "error completions")),
      freed_(stats_.counter("sockets_freed", "closed sockets whose id and buffers were reused")) {
  driver_.on_completion([this](const toe::EcqDesc& d) { on_completion(d); });
}

SocketLayer::Socket* SocketLayer::get(int s) {
  auto it = sockets_.find(s);
  return it == sockets_.end() ? nullptr : &it->second;
}

SocketLayer::Socket& SocketLayer::create_socket() {
  // Socket ids are 16-bit on the TOE side; skip ids still in use after a wrap.
  while (sockets_.count(next_id_) || next_id_ == 0) next_id_ = (next_id_ + 1) & 0xffff;
  Socket& so = sockets_[next_id_];
  so.id = next_id_;
  next_id_ = (next_id_ + 1) & 0xffff;
  so.tx_addr = mem_.allocate(params_.send_buffer, 4096);
  so.rx_addr = mem_.allocate(params_.recv_buffer, 4096);
  return so;
}

void SocketLayer::enter(Ctx& ctx, cpu::Core::Work before) {
  if (!params_.user_space)
    core_.execute(ctx, before, costs_.syscall, CycleClass::GuestKernel);
  else if (before.cycles > 0)
    core_.execute(ctx, before.cycles, before.cls);
}

void SocketLayer::block(Ctx& ctx, Socket& so) {
  ++blocked_;
  if (params_.user_space) {
    // No sleeping: one turn of the poll loop over the channel's completion queue; the caller
    // looks at the socket again. A server's acceptor is not a hot loop: it looks every 20
    // microseconds (or when another process's polling delivered its connection), not to take
    // the core, and two process switches a turn, from the processes that serve connections.
    if (so.accepting) {
      ++so.waiters;
      sc_core::wait(sc_core::sc_time(20, sc_core::SC_US), so.ev);
      --so.waiters;
    }
    if (!idle_hooks_.empty()) {
      const auto hook =
          idle_hooks_.find(sc_core::sc_get_current_process_handle().get_process_object());
      if (hook != idle_hooks_.end()) hook->second();
    }
    core_.execute(ctx, costs_.poll, CycleClass::GuestUser);
    driver_.poll(ctx);
    return;
  }
  ++so.waiters;
  so.sleeper = &ctx;
  sc_core::wait(so.ev);
  --so.waiters;
}

void SocketLayer::wake(Socket& so) {
  if (so.waiters > 0) {
    // The kernel thread makes the sleeping process runnable; on another vCPU, through an IPI.
    Ctx& waker = driver_.kthread_context();
    if (ipi_ && so.sleeper && &so.sleeper->core() != &waker.core()) ipi_(waker, so.sleeper->core());
    so.ev.notify(sc_core::SC_ZERO_TIME);
  }
}

void SocketLayer::copy_cost(Ctx& ctx, std::size_t bytes, double per_byte, bool write,
                            std::uint64_t addr) {
  const cpu::Core::Work w = copy_work(ctx, bytes, per_byte, write, addr);
  if (w.cycles > 0) core_.execute(ctx, w.cycles, w.cls);
}

cpu::Core::Work SocketLayer::copy_work(Ctx& ctx, std::size_t bytes, double per_byte, bool write,
                                       std::uint64_t addr) {
  if (params_.zero_copy && static_cast<double>(bytes) >= costs_.remap_threshold) {
    // The TOE's DMA uses the user pages themselves: pin them instead of copying.
    const double pages = static_cast<double>((bytes + 4095) / 4096);
    return {costs_.page_remap * pages,
            params_.user_space ? CycleClass::GuestUser : CycleClass::GuestKernel};
  }
  const double cycles = costs_.copy_fixed + per_byte * static_cast<double>(bytes);
  if (cpu::MemoryTraffic* traffic = mem_.traffic()) {
    traffic->work(ctx, cycles, CycleClass::GuestKernel, write, mem_.physical(addr), bytes);
    return {};
  }
  return {cycles, CycleClass::GuestKernel};
}

int SocketLayer::socket(Ctx& ctx) {
  enter(ctx);
  driver_.start(ctx);
  return create_socket().id;
}

void SocketLayer::command(Ctx& ctx, Socket& so, toe::CmdOp op, std::uint32_t ip, std::uint16_t port,
                          std::uint16_t arg, bool with_rx_buffer) {
  toe::CmdDesc cmd{};
  cmd.opcode = static_cast<std::uint8_t>(op);
  cmd.sock = static_cast<std::uint16_t>(so.id);
  cmd.ip = ip;
  cmd.port = port;
  cmd.arg = arg;
  if (with_rx_buffer) {
    cmd.rx_addr = so.rx_addr;
    cmd.rx_size = params_.recv_buffer;
  }
  cmd.cookie = next_cookie_++;
  cmd.local_ip = params_.local_ip;
  so.cmd_done = false;
  driver_.post(ctx, toe::Ring::Cmd, &cmd);
}

SockError SocketLayer::connect(Ctx& ctx, int s, std::uint32_t ip, std::uint16_t port) {
  enter(ctx);
  Socket* so = get(s);
  if (!so) return SockError::BadSocket;
  command(ctx, *so, toe::CmdOp::Connect, ip, port, 0, true);
  while (!so->connected && so->err == SockError::Ok) block(ctx, *so);
  return so->err;
}

SockError SocketLayer::listen(Ctx& ctx, int s, std::uint16_t port, int backlog) {
  enter(ctx);
  Socket* so = get(s);
  if (!so) return SockError::BadSocket;
  command(ctx, *so, toe::CmdOp::Listen, 0, port, static_cast<std::uint16_t>(backlog), false);
  while (!so->cmd_done && so->err == SockError::Ok) block(ctx, *so);
  if (so->err == SockError::Ok) so->listening = true;
  return so->err;
}

int SocketLayer::accept(Ctx& ctx, int s) {
  enter(ctx);
  Socket* ls = get(s);
  if (!ls || !ls->listening) return static_cast<int>(SockError::BadSocket);
  Socket& so = create_socket();
  so.accepting = true;
  command(ctx, so, toe::CmdOp::Accept, 0, 0, static_cast<std::uint16_t>(s), true);
  while (!so.connected && so.err == SockError::Ok) block(ctx, so);
  so.accepting = false;
  if (so.err != SockError::Ok) {
    const int e = static_cast<int>(so.err);
    so.user_closed = so.closed = true;
    free_if_done(so);
    return e;
  }
  return so.id;
}

std::size_t SocketLayer::send(Ctx& ctx, int s, const std::uint8_t* data, std::size_t len,
                              cpu::Core::Work before) {
  ++sends_;
  bool entered = false;
  std::size_t done = send_at_once(ctx, s, data, len, before, entered);
  if (!entered) enter(ctx, before);
  Socket* so = get(s);
  if (!so || !so->connected) return 0;
  const std::uint32_t size = params_.send_buffer;
  while (done < len) {
    if (so->err != SockError::Ok || so->closed) break;
    const std::uint64_t used = so->tx_tail - so->tx_done;
    // A writer that found the buffer full sleeps until a good share of it is free again (as
    // Linux's sk_stream_write_space), so contexts do not shrink to the size of each completion.
    const std::uint64_t want = std::min<std::uint64_t>(len - done, size / 2);
    if (size - used < std::max<std::uint64_t>(want, 1)) {
      block(ctx, *so);
      continue;
    }
    // One context covers a contiguous piece of the ring.
    const std::uint32_t pos = static_cast<std::uint32_t>(so->tx_tail % size);
    const std::size_t n =
        std::min<std::size_t>({len - done, size - used, size - pos, params_.max_context});
    post_send(ctx, *so, data + done, n, /*spent=*/false);
    done += n;
  }
  return done;
}

std::size_t SocketLayer::send_at_once(Ctx& ctx, int s, const std::uint8_t* data, std::size_t len,
                                      cpu::Core::Work before, bool& entered) {
  // Only a system call whose look at the socket (below, as in send()'s loop) no other context
  // can change unseen: the socket's state is written by the kernel thread (completions), which
  // runs on this core, so the request runs through only if no other context ran meanwhile. With
  // the memory traffic model the copy is not plain CPU work.
  if (params_.user_space || mem_.traffic() || len == 0 ||
      &ctx.core() != &driver_.kthread_context().core())
    return 0;
  Socket* so = get(s);
  if (!so || !so->connected || so->err != SockError::Ok || so->closed) return 0;
  const std::uint32_t size = params_.send_buffer;
  const std::uint64_t used = so->tx_tail - so->tx_done;
  const std::uint64_t want = std::min<std::uint64_t>(len, size / 2);
  if (size - used < std::max<std::uint64_t>(want, 1)) return 0;  // it would sleep
  const std::uint32_t pos = static_cast<std::uint32_t>(so->tx_tail % size);
  const std::size_t n = std::min<std::size_t>({len, size - used, size - pos, params_.max_context});
  const cpu::Core::Work copy =
      copy_work(ctx, n, costs_.copy_per_byte, /*write=*/true, so->tx_addr + pos);
  if (copy.cls != CycleClass::GuestKernel) return 0;
  entered = true;
  if (!core_.execute_past_cut(ctx, before, costs_.syscall, CycleClass::GuestKernel,
                              {copy.cycles, driver_.post_cycles()}))
    return 0;  // something could have happened before the look: send() looks now
  post_send(ctx, *so, data, n, /*spent=*/true);
  return n;
}

void SocketLayer::post_send(Ctx& ctx, Socket& so, const std::uint8_t* data, std::size_t n,
                            bool spent) {
  const std::uint32_t pos = static_cast<std::uint32_t>(so.tx_tail % params_.send_buffer);
  // The copy and the post are one request: the buffer's free part is this process's alone
  // until the context that covers it is posted.
  const cpu::Core::Work copy =
      spent ? cpu::Core::Work{}
            : copy_work(ctx, n, costs_.copy_per_byte, /*write=*/true, so.tx_addr + pos);
  mem_.write(so.tx_addr + pos, data, n);
  toe::SendDesc desc{};
  desc.sock = static_cast<std::uint16_t>(so.id);
  desc.length = static_cast<std::uint32_t>(n);
  desc.addr = so.tx_addr + pos;
  desc.cookie = next_cookie_++;
  so.send_cookies.push_back(desc.cookie);
  so.tx_tail += n;
  if (spent)
    driver_.post_spent(ctx, toe::Ring::Send, &desc);
  else
    driver_.post(ctx, toe::Ring::Send, &desc, copy);
}

std::size_t SocketLayer::recv(Ctx& ctx, int s, std::uint8_t* out, std::size_t max, bool immediate) {
  ++recvs_;
  enter(ctx);
  Socket* so = get(s);
  if (!so || !so->connected) return 0;
  const std::uint32_t size = params_.recv_buffer;
  while (so->rx_avail_end == so->rx_read) {
    if (so->peer_closed || so->err != SockError::Ok || so->closed) return 0;
    // Before sleeping, hand back everything consumed (the TOE can only fill a free buffer) and,
    // if the caller needs data at once, ask to be told on the next packet.
    const bool ask = immediate && !so->waiting_notify;
    if (so->unreleased > 0 || ask) {
      toe::RecvDesc desc{};
      desc.sock = static_cast<std::uint16_t>(so->id);
      desc.release = so->unreleased;
      desc.flags = ask ? toe::kRecvNotifyNow : 0;
      so->unreleased = 0;
      if (ask) so->waiting_notify = true;
      driver_.post(ctx, toe::Ring::Recv, &desc);
      continue;  // the post may have slept; look again
    }
    block(ctx, *so);
  }
  const std::size_t avail = so->rx_avail_end - so->rx_read;
  std::size_t n = std::min(avail, max);
  // The kernel buffer's lines were written by the TOE: they come from DRAM (wrapping: the
  // first piece's address stands for the whole; only the timing uses it).
  // Space goes back to the TOE in batches: one RecvQ context per release_batch bytes. When this
  // copy completes a batch, the copy and the post are one request (the unreleased part of the
  // buffer is this process's alone).
  const bool release = so->unreleased + n >= std::min(params_.release_batch, size);
  cpu::Core::Work copy{};
  const std::uint64_t from = so->rx_addr + static_cast<std::uint32_t>(so->rx_read % size);
  if (release)
    copy = copy_work(ctx, n, costs_.copy_per_byte_rx, /*write=*/false, from);
  else
    copy_cost(ctx, n, costs_.copy_per_byte_rx, /*write=*/false, from);
  std::size_t copied = 0;
  while (copied < n) {  // the data may wrap around the ring's end
    const std::uint32_t pos = static_cast<std::uint32_t>((so->rx_read + copied) % size);
    const std::size_t piece = std::min<std::size_t>(n - copied, size - pos);
    mem_.read(so->rx_addr + pos, out + copied, piece);
    copied += piece;
  }
  so->rx_read += n;
  so->unreleased += static_cast<std::uint32_t>(n);
  if (release) {
    toe::RecvDesc desc{};
    desc.sock = static_cast<std::uint16_t>(so->id);
    desc.release = so->unreleased;
    so->unreleased = 0;
    driver_.post(ctx, toe::Ring::Recv, &desc, copy);
  }
  return n;
}

void SocketLayer::close(Ctx& ctx, int s, bool abortive) {
  enter(ctx);
  Socket* so = get(s);
  if (!so || so->user_closed) return;
  so->user_closed = true;
  ++so->waiters;  // posting the Close may sleep (full CmdQ): the socket must outlive this call
  if (!so->closed && !so->released) {
    // The TOE serves its CmdQ before its SendQ: a Close posted while send contexts wait would
    // overtake them and their data would be refused after the FIN. Wait until the TOE has taken
    // every send context (their data is then in its send buffer, and goes out before the FIN).
    while (so->tx_done != so->tx_tail && so->err == SockError::Ok && !so->closed) block(ctx, *so);
    if (!so->released)
      command(ctx, *so, abortive ? toe::CmdOp::Abort : toe::CmdOp::Close, 0, 0, 0, false);
  }
  so->closed = true;
  --so->waiters;
  free_if_done(*so);
}

void SocketLayer::free_if_done(Socket& so) {
  if (!so.user_closed || !so.released || !so.send_cookies.empty() || so.waiters > 0) return;
  mem_.release(so.tx_addr);
  mem_.release(so.rx_addr);
  ++freed_;
  sockets_.erase(so.id);
}

SockError SocketLayer::error(int s) const {
  auto it = sockets_.find(s);
  return it == sockets_.end() ? SockError::BadSocket : it->second.err;
}

void SocketLayer::time_send_done(int s, core::StreamClock* clock) {
  if (Socket* so = get(s)) so->send_done_clock = clock;
}

void SocketLayer::on_completion(const toe::EcqDesc& d) {
  Socket* so = get(d.sock);
  if (!so) return;
  bool wake_needed = true;
  if (d.flags & toe::kEcqSocketReleased) so->released = true;
  // SendDone, or Error for a send context: the TOE is done with that part of the buffer.
  const auto cookie = std::find(so->send_cookies.begin(), so->send_cookies.end(), d.cookie);
  if (cookie != so->send_cookies.end()) so->send_cookies.erase(cookie);
  switch (static_cast<EventType>(d.type)) {
    case EventType::CmdDone:
      so->cmd_done = true;
      break;
    case EventType::Connected:
    case EventType::Accepted:
      so->connected = true;
      break;
    case EventType::SendDone:
      so->tx_done += d.length;
      if (so->send_done_clock) so->send_done_clock->taken(so->tx_done, core::now_ps());
      break;
    case EventType::RxData:
      so->rx_avail_end += d.length;
      so->waiting_notify = false;
      break;
    case EventType::PeerClosed:
      so->peer_closed = true;
      break;
    case EventType::Closed:
      so->closed = true;
      if (d.status != 0 && so->err == SockError::Ok) so->err = SockError::Reset;
      break;
    case EventType::Error:
      ++errors_;
      so->err = d.status == static_cast<int>(toe::Status::Refused)    ? SockError::Refused
                : d.status == static_cast<int>(toe::Status::TimedOut) ? SockError::TimedOut
                : d.status == static_cast<int>(toe::Status::Reset)    ? SockError::Reset
                                                                      : SockError::NoResources;
      break;
    default:
      wake_needed = false;
      break;
  }
  if (wake_needed && so->waiters > 0 && !params_.user_space) {
    core_.execute(driver_.kthread_context(), costs_.wakeup, CycleClass::GuestKernel);
  }
  wake(*so);
  free_if_done(*so);
}

}  // namespace vtoe::guest
