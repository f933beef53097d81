#include "netvp/raw_socket.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
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
}  // namespace

RawSocket::RawSocket(const std::string& interface, std::size_t queue_frames, std::size_t mtu)
    : interface_(interface), capacity_(queue_frames), fixup_(mtu) {
  ifindex_ = static_cast<int>(if_nametoindex(interface.c_str()));
  if (ifindex_ == 0) throw failure(interface, "no such interface");
  fd_ = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  if (fd_ < 0) throw failure(interface, "cannot open a raw socket (needs root or CAP_NET_RAW)");
  sockaddr_ll addr{};
  addr.sll_family = AF_PACKET;
  addr.sll_protocol = htons(ETH_P_ALL);
  addr.sll_ifindex = ifindex_;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) {
    close(fd_);
    throw failure(interface, "cannot bind the raw socket");
  }
  packet_mreq mreq{};
  mreq.mr_ifindex = ifindex_;
  mreq.mr_type = PACKET_MR_PROMISC;
  if (setsockopt(fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof mreq) < 0) {
    close(fd_);
    throw failure(interface, "cannot make the interface promiscuous");
  }
  // The kernel's word on each frame (is its checksum finished?) comes as ancillary data.
  const int one = 1;
  if (setsockopt(fd_, SOL_PACKET, PACKET_AUXDATA, &one, sizeof one) < 0) {
    close(fd_);
    throw failure(interface, "cannot enable PACKET_AUXDATA");
  }
  // Our own transmissions would come back to this socket as PACKET_OUTGOING copies, to be read
  // and thrown away: one clone and one read per frame sent. Kernels before 4.20 lack the option;
  // there the reader skips them.
  (void)setsockopt(fd_, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
  int buf = 8 << 20;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  if (pipe(wake_) < 0) {
    close(fd_);
    throw failure(interface, "cannot create a pipe");
  }
  thread_ = std::thread([this] { reader(); });
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
  if (wake_[1] >= 0) {
    const char c = 0;
    (void)!write(wake_[1], &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (int fd : {wake_[0], wake_[1], fd_})
    if (fd >= 0) close(fd);
}

namespace {
// The bridge's threads only move frames and sleep in between; a frame they are late to take or
// send is latency every connection through the bridge pays (on a loaded 2-core machine a woken
// writer waited 0.6-1.7 ms on average for a CPU). They ask the scheduler to run them first; when
// the process may not raise its priority, they run as they are.
void favour_this_thread() {
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), -10);
}
}  // namespace

void RawSocket::reader() {
  favour_this_thread();
  // Up to this many frames are read per wake-up: a burst costs one poll, not one per frame.
  constexpr int kBurst = 64;
  std::vector<std::uint8_t> buf(65536);
  pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    for (int i = 0; i < kBurst; ++i) {
      sockaddr_ll from{};
      iovec iov{buf.data(), buf.size()};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(tpacket_auxdata))];
      msghdr msg{};
      msg.msg_name = &from;
      msg.msg_namelen = sizeof from;
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      const ssize_t n = recvmsg(fd_, &msg, MSG_DONTWAIT | MSG_TRUNC);
      if (n <= 0) break;  // nothing more queued (EAGAIN) or an error: back to poll
      if (from.sll_pkttype == PACKET_OUTGOING) continue;  // our own transmissions
      bool csum_not_ready = false;
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA) continue;
        tpacket_auxdata aux;
        std::memcpy(&aux, CMSG_DATA(c), sizeof aux);
        csum_not_ready = aux.tp_status & TP_STATUS_CSUMNOTREADY;
      }
      take(buf.data(), std::min<std::size_t>(static_cast<std::size_t>(n), buf.size()),
           csum_not_ready);
    }
  }
}

void RawSocket::take(const std::uint8_t* data, std::size_t len, bool csum_not_ready) {
  ++received_;
  std::lock_guard<std::mutex> lock(mutex_);
  fixed_.clear();
  fixup_.fix(data, len, csum_not_ready, fixed_);
  for (auto& f : fixed_) {
    if (queue_.size() >= capacity_) {
      ++queue_drops_;
      continue;
    }
    queue_.push_back(std::move(f));
  }
}

void RawSocket::writer() {
  favour_this_thread();
  std::vector<std::vector<std::uint8_t>> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(send_mutex_);
      send_ready_.wait(lock, [this] { return !send_queue_.empty() || stopping_; });
      if (send_queue_.empty()) return;  // stopping, and everything was sent
      batch.swap(send_queue_);
    }
    send_batch(batch);
    batch.clear();
  }
}

IngressStats RawSocket::ingress() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fixup_.stats();
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
  bool was_empty;
  {
    std::lock_guard<std::mutex> lock(send_mutex_);
    if (send_queue_.size() >= capacity_) return false;
    was_empty = send_queue_.empty();
    send_queue_.push_back(std::move(frame));
  }
  // A writer busy with a batch finds the new frame when it comes back; only an empty queue can
  // have the writer asleep.
  if (was_empty) send_ready_.notify_one();
  return true;
}

void RawSocket::drain(std::vector<std::vector<std::uint8_t>>& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (!queue_.empty()) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
}

}  // namespace vtoe::netvp
