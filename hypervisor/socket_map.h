// The connection manager of device emulation (paper §3.1): the guests' socket ids and the
// physical channel's socket ids, in both directions, and which guest context each physical send
// context stands for. Guests choose their own socket ids, so two VMs may both use socket 1; the
// physical channel sees one id space, allocated here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

namespace vtoe::hypervisor {

class SocketMap {
 public:
  struct Socket {
    int slot = 0;  // the served VM (index in the manager's VM list)
    std::uint16_t vsock = 0;
    bool established = false;
  };
  struct SendRef {
    int slot = 0;
    std::uint16_t vsock = 0;
    std::uint32_t vcookie = 0;
  };
  // Send contexts carry physical cookies with this bit; commands carry cookie 0.
  static constexpr std::uint32_t kSendCookie = 0x8000'0000u;
  static bool is_send_cookie(std::uint32_t cookie) { return (cookie & kSendCookie) != 0; }

  // The physical socket of a VM's socket, or -1.
  int lookup(int slot, std::uint16_t vsock) const;
  // A new physical socket for a VM's socket (ids 1..65535, round robin); -1 when all are taken.
  int allocate(int slot, std::uint16_t vsock);
  Socket* find(std::uint16_t psock);
  void erase(std::uint16_t psock);
  std::size_t sockets() const { return by_psock_.size(); }
  std::size_t sockets_of(int slot) const;

  // A physical cookie for a VM's send context, and the context back when it completes.
  std::uint32_t add_send(int slot, std::uint16_t vsock, std::uint32_t vcookie);
  std::optional<SendRef> take_send(std::uint32_t pcookie);
  std::size_t sends() const { return sends_.size(); }

 private:
  std::map<std::uint16_t, Socket> by_psock_;
  std::map<std::pair<int, std::uint16_t>, std::uint16_t> by_vsock_;
  std::uint16_t next_psock_ = 1;
  std::map<std::uint32_t, SendRef> sends_;
  std::map<int, std::size_t> per_slot_;
  std::uint32_t next_cookie_ = 1;
};

}  // namespace vtoe::hypervisor
