// One VM's emulated TOE control channel under device emulation (paper §3.1): the register file the
// guest's trapped accesses read and write, with the same ring register rules as the real channel
// (toe::RingEngine per ring: base, power-of-two size, head and tail; the host owns the tails of
// CmdQ/SendQ/RecvQ and the head of the ECQ), plus what the manager keeps per VM: the virtual SendQ
// of translated send contexts waiting for the QoS dispatcher, and the virtual ECQ with the
// completions it had no room for.
#pragma once

#include <cstdint>
#include <array>
#include <deque>

#include "models/toe/descriptors.h"
#include "models/toe/ring_engine.h"

namespace vtoe::hypervisor {

class VirtualChannel {
 public:
  // What a trapped register write asks the manager to do next.
  enum class Effect {
    None,      // register updated (or the write refused and the error latched)
    Doorbell,  // a new tail on a host->TOE ring: fetch the contexts up to it
    EcqFreed,  // the guest handed ECQ slots back: move held completions in
  };
  struct SendContext {
    toe::SendDesc desc;  // physical: socket and address translated
    std::uint64_t arrival = 0;
  };

  explicit VirtualChannel(int vm) : vm_(vm) {}

  // Guest register access at `offset` in the channel page. A bad access latches status bit 0.
  Effect write(std::uint64_t offset, std::uint32_t value, toe::Ring* ring);
  std::uint32_t read(std::uint64_t offset);

  int vm() const { return vm_; }
  std::uint32_t status() const { return status_; }
  void latch_error() { status_ |= 1; }
  toe::RingEngine& ring(toe::Ring r) { return rings_[static_cast<int>(r)]; }

  // The virtual ECQ (the guest's own ring): writes `ev`, marked valid, at its tail through
  // `write_guest(ipa, data, len)` (false if the VM's stage 2 refuses the address; the error is
  // latched). Completions that find the ring full are held, in order, until the guest frees slots.
  enum class Delivery { Written, Held, NoEcq, Refused };
  template <typename WriteGuest>
  Delivery deliver(const toe::EcqDesc& ev, WriteGuest&& write_guest);
  // Moves held completions, oldest first, into the slots the guest freed. Returns how many left
  // the queue; `written` counts those written.
  template <typename WriteGuest>
  std::size_t flush_held(WriteGuest&& write_guest, std::size_t* written);
  std::size_t held() const { return held_.size(); }

  std::deque<SendContext>& sendq() { return sendq_; }
  const std::deque<SendContext>& sendq() const { return sendq_; }
  std::uint64_t contexts = 0;  // contexts read from this VM's rings
  // The manager's bookkeeping of its doorbell loops: a loop is running for a ring (its context
  // sleeps while costs are charged; a second doorbell must not read the same entries), and
  // contexts were left in the guest's rings because too many completions were held.
  std::array<bool, toe::kRings> draining{};
  bool left_behind = false;

 private:
  template <typename WriteGuest>
  bool write_now(const toe::EcqDesc& ev, WriteGuest& write_guest);

  int vm_;
  std::uint32_t ctrl_ = 0, status_ = 0;
  toe::RingEngine rings_[toe::kRings];
  std::deque<SendContext> sendq_;
  std::deque<toe::EcqDesc> held_;  // completions the virtual ECQ had no room for
};

template <typename WriteGuest>
VirtualChannel::Delivery VirtualChannel::deliver(const toe::EcqDesc& ev, WriteGuest&& write_guest) {
  if (!ring(toe::Ring::Ecq).configured()) return Delivery::NoEcq;
  if (ring(toe::Ring::Ecq).space() == 0 || !held_.empty()) {
    held_.push_back(ev);  // behind the ones already waiting: completions stay in order
    return Delivery::Held;
  }
  return write_now(ev, write_guest) ? Delivery::Written : Delivery::Refused;
}

template <typename WriteGuest>
std::size_t VirtualChannel::flush_held(WriteGuest&& write_guest, std::size_t* written) {
  std::size_t moved = 0;
  while (!held_.empty() && ring(toe::Ring::Ecq).space() > 0) {
    const toe::EcqDesc ev = held_.front();
    held_.pop_front();
    if (write_now(ev, write_guest) && written) ++*written;
    ++moved;
  }
  return moved;
}

template <typename WriteGuest>
bool VirtualChannel::write_now(const toe::EcqDesc& ev, WriteGuest& write_guest) {
  toe::RingEngine& e = ring(toe::Ring::Ecq);
  toe::EcqDesc out = ev;
  out.valid = 1;
  if (!write_guest(e.entry_addr(e.produce_index()), &out, sizeof out)) {
    latch_error();
    return false;
  }
  e.produce();
  return true;
}

}  // namespace vtoe::hypervisor
