#include "hypervisor/socket_map.h"

namespace vtoe::hypervisor {

int SocketMap::lookup(int slot, std::uint16_t vsock) const {
  auto it = by_vsock_.find({slot, vsock});
  return it == by_vsock_.end() ? -1 : it->second;
}

int SocketMap::allocate(int slot, std::uint16_t vsock) {
  for (int tries = 0; tries < 0xffff; ++tries) {
    const std::uint16_t ps = next_psock_;
    next_psock_ = static_cast<std::uint16_t>(next_psock_ == 0xffff ? 1 : next_psock_ + 1);
    if (by_psock_.count(ps)) continue;
    by_psock_[ps] = Socket{slot, vsock, false};
    by_vsock_[{slot, vsock}] = ps;
    ++per_slot_[slot];
    return ps;
  }
  return -1;
}

std::size_t SocketMap::sockets_of(int slot) const {
  const auto it = per_slot_.find(slot);
  return it == per_slot_.end() ? 0 : it->second;
}

SocketMap::Socket* SocketMap::find(std::uint16_t psock) {
  auto it = by_psock_.find(psock);
  return it == by_psock_.end() ? nullptr : &it->second;
}

void SocketMap::erase(std::uint16_t psock) {
  auto it = by_psock_.find(psock);
  if (it == by_psock_.end()) return;
  by_vsock_.erase({it->second.slot, it->second.vsock});
  --per_slot_[it->second.slot];
  by_psock_.erase(it);
}

std::uint32_t SocketMap::add_send(int slot, std::uint16_t vsock, std::uint32_t vcookie) {
  std::uint32_t pc = 0;
  do {
    pc = kSendCookie | (next_cookie_++ & ~kSendCookie);
  } while (sends_.count(pc));
  sends_[pc] = SendRef{slot, vsock, vcookie};
  return pc;
}

std::optional<SocketMap::SendRef> SocketMap::take_send(std::uint32_t pcookie) {
  auto it = sends_.find(pcookie);
  if (it == sends_.end()) return std::nullopt;
  const SendRef ref = it->second;
  sends_.erase(it);
  return ref;
}

}  // namespace vtoe::hypervisor
