#include "netvp/raw_socket.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace vtoe::netvp {

namespace {
std::runtime_error failure(const std::string& interface, const std::string& what) {
  return std::runtime_error("netvp interface '" + interface + "': " + what + ": " +
                            std::strerror(errno));
}

// A ring slot holds the kernel's frame header, the sender's address and one frame of up to
// 1,500 bytes of IP (plus Ethernet and VLAN headers); longer frames take the copy path.
constexpr std::size_t kSlotSize = 2048;
constexpr std::size_t kBlockSize = 1 << 16;  // slots are grouped in blocks of pages
constexpr std::size_t kSlotsPerBlock = kBlockSize / kSlotSize;
}  // namespace

RawSocket::RawSocket(const std::string& interface, std::size_t ring_frames, std::size_t mtu)
    : interface_(interface), copy_buf_(65536 + 64), capacity_(ring_frames), fixup_(mtu) {
  ifindex_ = static_cast<int>(if_nametoindex(interface.c_str()));
  if (ifindex_ == 0) throw failure(interface, "no such interface");
  fd_ = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  if (fd_ < 0) throw failure(interface, "cannot open a raw socket (needs root or CAP_NET_RAW)");
  auto fail = [this, &interface](const std::string& what) {
    const auto e = failure(interface, what);
    if (ring_) munmap(ring_, ring_bytes_);
    close(fd_);
    return e;
  };
  // The ring, before bind, so that no frame arrives before it exists. Version 2 headers carry
  // the checksum status (TP_STATUS_CSUMNOTREADY) that PACKET_AUXDATA carries for a read.
  const int version = TPACKET_V2;
  if (setsockopt(fd_, SOL_PACKET, PACKET_VERSION, &version, sizeof version) < 0)
    throw fail("cannot select TPACKET_V2");
  tpacket_req req{};
  req.tp_block_size = kBlockSize;
  req.tp_block_nr =
      static_cast<unsigned>(std::max<std::size_t>(1, (ring_frames + kSlotsPerBlock - 1) /
                                                         kSlotsPerBlock));
  req.tp_frame_size = kSlotSize;
  req.tp_frame_nr = static_cast<unsigned>(req.tp_block_nr * kSlotsPerBlock);
  if (setsockopt(fd_, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) < 0)
    throw fail("cannot set up the receive ring (PACKET_RX_RING)");
  slots_ = req.tp_frame_nr;
  ring_bytes_ = static_cast<std::size_t>(req.tp_block_size) * req.tp_block_nr;
  void* ring = mmap(nullptr, ring_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (ring == MAP_FAILED) throw fail("cannot map the receive ring");
  ring_ = static_cast<std::uint8_t*>(ring);
  // A frame longer than a slot is also queued whole on the socket (the slot says
  // TP_STATUS_COPY), where it is read like any datagram, with its checksum status as aux data.
  const int one = 1;
  if (setsockopt(fd_, SOL_PACKET, PACKET_COPY_THRESH, &one, sizeof one) < 0)
    throw fail("cannot enable PACKET_COPY_THRESH");
  if (setsockopt(fd_, SOL_PACKET, PACKET_AUXDATA, &one, sizeof one) < 0)
    throw fail("cannot enable PACKET_AUXDATA");
  int buf = 8 << 20;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  // Our own transmissions would come back as PACKET_OUTGOING copies, each to be copied into the
  // ring and thrown away. Kernels before 4.20 lack the option; there drain() skips them.
  (void)setsockopt(fd_, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(ETH_P_ALL);
  addr.sll_ifindex = ifindex_;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0)
    throw fail("cannot bind the raw socket");
  packet_mreq mreq{};
  mreq.mr_ifindex = ifindex_;
  mreq.mr_type = PACKET_MR_PROMISC;
  if (setsockopt(fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof mreq) < 0)
    throw fail("cannot make the interface promiscuous");
  writer_ = std::thread([this] { writer(); });
}

RawSocket::~RawSocket() {
  {
    // The writer sends what is queued, then stops.
    std::lock_guard<std::mutex> lock(send_mutex_);
    stopping_ = true;
  }
  send_ready_.notify_one();
  if (writer_.joinable()) writer_.join();
  if (ring_) munmap(ring_, ring_bytes_);
  if (fd_ >= 0) close(fd_);
}

namespace {
// The writer only moves frames and sleeps in between; a frame it is late to send is latency
// every connection through the bridge pays (on a loaded 2-core machine a woken writer waited
// 0.6-1.7 ms on average for a CPU). It asks the scheduler to run it first; when the process may
// not raise its priority, it runs as it is.
void favour_this_thread() {
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), -10);
}
}  // namespace

void RawSocket::drain(std::vector<std::vector<std::uint8_t>>& out) {
  for (;;) {
    auto* hdr = reinterpret_cast<tpacket2_hdr*>(ring_ + next_slot_ * kSlotSize);
    const std::uint32_t status = __atomic_load_n(&hdr->tp_status, __ATOMIC_ACQUIRE);
    if (!(status & TP_STATUS_USER)) return;  // the kernel has not filled this slot yet
    const auto* from = reinterpret_cast<const sockaddr_ll*>(reinterpret_cast<std::uint8_t*>(hdr) +
                                                            TPACKET_ALIGN(sizeof(tpacket2_hdr)));
    if (status & TP_STATUS_COPY) {
      // Too long for the slot: the whole frame waits on the socket's queue, in ring order.
      if (!read_copied(out)) ++ring_drops_;
    } else if (hdr->tp_snaplen < hdr->tp_len) {
      ++ring_drops_;  // cut short, and the socket's queue had no room for the whole frame
    } else if (from->sll_pkttype != PACKET_OUTGOING) {
      take(reinterpret_cast<const std::uint8_t*>(hdr) + hdr->tp_mac, hdr->tp_snaplen,
           (status & TP_STATUS_CSUMNOTREADY) != 0, out);
    }
    __atomic_store_n(&hdr->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
    next_slot_ = (next_slot_ + 1) % slots_;
  }
}

void RawSocket::wait_readable(std::chrono::steady_clock::time_point until) {
  const auto left = until - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero()) return;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
  const timespec timeout{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  // The ring is readable once the kernel filled the slot drain() looks at next (and the socket
  // once an oversized frame waits on its queue).
  pollfd fds{fd_, POLLIN, 0};
  (void)ppoll(&fds, 1, &timeout, nullptr);
}

bool RawSocket::read_copied(std::vector<std::vector<std::uint8_t>>& out) {
  sockaddr_ll from{};
  iovec iov{copy_buf_.data(), copy_buf_.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(tpacket_auxdata))];
  msghdr msg{};
  msg.msg_name = &from;
  msg.msg_namelen = sizeof from;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = recvmsg(fd_, &msg, MSG_DONTWAIT | MSG_TRUNC);
  if (n <= 0) return false;
  if (from.sll_pkttype == PACKET_OUTGOING) return true;
  bool csum_not_ready = false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA) continue;
    tpacket_auxdata aux;
    std::memcpy(&aux, CMSG_DATA(c), sizeof aux);
    csum_not_ready = aux.tp_status & TP_STATUS_CSUMNOTREADY;
  }
  take(copy_buf_.data(), std::min<std::size_t>(static_cast<std::size_t>(n), copy_buf_.size()),
       csum_not_ready, out);
  return true;
}

void RawSocket::take(const std::uint8_t* data, std::size_t len, bool csum_not_ready,
                     std::vector<std::vector<std::uint8_t>>& out) {
  ++received_;
  fixup_.fix(data, len, csum_not_ready, out);
}

std::uint64_t RawSocket::queue_drops() {
  // The kernel's counters restart at each read: keep the sum.
  tpacket_stats st{};
  socklen_t len = sizeof st;
  if (getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) ring_drops_ += st.tp_drops;
  return ring_drops_;
}

void RawSocket::writer() {
  favour_this_thread();
  std::vector<std::vector<std::uint8_t>> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(send_mutex_);
      send_ready_.wait(lock, [this] { return flush_requested_ || stopping_; });
      flush_requested_ = false;
      if (send_queue_.empty()) {
        if (stopping_) return;  // everything was sent
        continue;
      }
      batch.swap(send_queue_);
    }
    send_batch(batch);
    batch.clear();
  }
}

void RawSocket::send_batch(const std::vector<std::vector<std::uint8_t>>& batch) {
  // Up to 64 frames per system call (sendmmsg): the kernel's work per frame stays, the entry
  // and exit per frame go.
  constexpr std::size_t kPerCall = 64;
  iovec iov[kPerCall];
  mmsghdr msgs[kPerCall];
  for (std::size_t i = 0; i < batch.size();) {
    const std::size_t n = std::min(kPerCall, batch.size() - i);
    for (std::size_t k = 0; k < n; ++k) {
      const auto& f = batch[i + k];
      iov[k] = {const_cast<std::uint8_t*>(f.data()), f.size()};
      msgs[k] = {};
      msgs[k].msg_hdr.msg_iov = &iov[k];
      msgs[k].msg_hdr.msg_iovlen = 1;
    }
    std::size_t done = 0;
    while (done < n) {
      const int sent = sendmmsg(fd_, msgs + done, static_cast<unsigned>(n - done), 0);
      if (sent <= 0) {  // the first frame left was refused: count it, go on after it
        ++send_errors_;
        ++done;
        continue;
      }
      for (int k = 0; k < sent; ++k)
        if (msgs[done + k].msg_len != iov[done + k].iov_len) ++send_errors_;
      done += static_cast<std::size_t>(sent);
    }
    i += n;
  }
}

bool RawSocket::send(std::vector<std::uint8_t>&& frame) {
  {
    std::lock_guard<std::mutex> lock(send_mutex_);
    if (send_queue_.size() >= capacity_) return false;
    send_queue_.push_back(std::move(frame));
  }
  if (++unflushed_ >= kFlushFrames) flush();
  return true;
}

void RawSocket::flush() {
  if (unflushed_ == 0) return;
  unflushed_ = 0;
  {
    std::lock_guard<std::mutex> lock(send_mutex_);
    flush_requested_ = true;
  }
  send_ready_.notify_one();
}

}  // namespace vtoe::netvp
