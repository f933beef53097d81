// hypervisor::VirtualChannel: a VM's emulated control channel (register rules of the real
// channel, virtual ECQ with held completions).
#include "hypervisor/virtual_channel.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "tests/support/bench.h"

using vtoe::hypervisor::VirtualChannel;
using namespace vtoe::toe;
using Effect = VirtualChannel::Effect;
using Delivery = VirtualChannel::Delivery;

namespace {

std::uint64_t ring_reg(Ring r, std::uint64_t sub) {
  return reg::kRingBase + static_cast<std::uint64_t>(r) * reg::kRingStride + sub;
}

void program(VirtualChannel& v, Ring r, std::uint64_t addr, std::uint32_t size) {
  EXPECT_EQ(v.write(ring_reg(r, reg::kRingSize), size, nullptr), Effect::None);
  EXPECT_EQ(v.write(ring_reg(r, reg::kRingAddrLo), static_cast<std::uint32_t>(addr), nullptr),
            Effect::None);
}

// Guest memory as the manager writes it: a map of entries; `refuse` models a stage-2 fault.
struct GuestEcq {
  std::map<std::uint64_t, EcqDesc> at;
  bool refuse = false;
  bool operator()(std::uint64_t ipa, const void* src, std::size_t len) {
    if (refuse) return false;
    EXPECT_EQ(len, sizeof(EcqDesc));
    at[ipa] = *static_cast<const EcqDesc*>(src);
    return true;
  }
};

EcqDesc event(std::uint16_t sock) {
  EcqDesc e{};
  e.sock = sock;
  return e;
}

}  // namespace

TEST(VirtualChannel, RingRegistersFollowTheRealChannelsRules) {
  VirtualChannel v(3);
  EXPECT_EQ(v.vm(), 3);
  program(v, Ring::Send, 0x8000'1000, 16);
  EXPECT_EQ(v.read(ring_reg(Ring::Send, reg::kRingSize)), 16u);
  EXPECT_EQ(v.read(ring_reg(Ring::Send, reg::kRingAddrLo)), 0x8000'1000u);
  EXPECT_EQ(v.status(), 0u);
  Ring r = Ring::Cmd;
  EXPECT_EQ(v.write(ring_reg(Ring::Send, reg::kRingTail), 5, &r), Effect::Doorbell);
  EXPECT_EQ(r, Ring::Send);
  EXPECT_EQ(v.ring(Ring::Send).pending(), 5u);
  // The TOE owns the head of a host->TOE ring, the host the ECQ's head only.
  EXPECT_EQ(v.write(ring_reg(Ring::Send, reg::kRingHead), 1, nullptr), Effect::None);
  EXPECT_EQ(v.status() & 1, 1u);
  v.write(reg::kStatus, 1, nullptr);  // write 1 to clear
  EXPECT_EQ(v.status(), 0u);
  EXPECT_EQ(v.write(ring_reg(Ring::Send, reg::kRingSize), 3, nullptr), Effect::None);
  EXPECT_EQ(v.status() & 1, 1u) << "a size that is no power of two is refused";
  EXPECT_EQ(v.read(ring_reg(Ring::Send, reg::kRingSize)), 16u);
  v.write(reg::kStatus, 1, nullptr);
  EXPECT_EQ(v.write(ring_reg(Ring::Send, reg::kRingTail), 16, nullptr), Effect::None);
  EXPECT_EQ(v.status() & 1, 1u) << "a tail past the ring's end is refused";
  v.write(reg::kStatus, 1, nullptr);
  EXPECT_EQ(v.write(ring_reg(Ring::Cmd, reg::kRingTail), 1, nullptr), Effect::None);
  EXPECT_EQ(v.status() & 1, 1u) << "a doorbell on an unprogrammed ring is refused";
  v.write(reg::kStatus, 1, nullptr);
  EXPECT_EQ(v.read(0x800), 0u);
  EXPECT_EQ(v.status() & 1, 1u) << "an access outside the register map latches an error";
  v.write(reg::kCtrl, reg::kCtrlEnable, nullptr);
  EXPECT_EQ(v.read(reg::kCtrl), reg::kCtrlEnable);
}

TEST(VirtualChannel, CompletionsGoToTheGuestsEcqMarkedValid) {
  VirtualChannel v(0);
  GuestEcq guest;
  EXPECT_EQ(v.deliver(event(1), guest), Delivery::NoEcq);
  program(v, Ring::Ecq, 0x9000, 4);
  EXPECT_EQ(v.deliver(event(1), guest), Delivery::Written);
  EXPECT_EQ(v.deliver(event(2), guest), Delivery::Written);
  ASSERT_EQ(guest.at.size(), 2u);
  EXPECT_EQ(guest.at[0x9000].sock, 1);
  EXPECT_EQ(guest.at[0x9000].valid, 1);
  EXPECT_EQ(guest.at[0x9000 + kDescBytes].sock, 2);
  guest.refuse = true;
  EXPECT_EQ(v.deliver(event(3), guest), Delivery::Refused);
  EXPECT_EQ(v.status() & 1, 1u);
}

TEST(VirtualChannel, AFullEcqHoldsCompletionsAndReleasesThemInOrder) {
  VirtualChannel v(0);
  GuestEcq guest;
  program(v, Ring::Ecq, 0x9000, 4);  // three usable slots
  for (std::uint16_t s = 1; s <= 6; ++s) v.deliver(event(s), guest);
  EXPECT_EQ(guest.at.size(), 3u);
  EXPECT_EQ(v.held(), 3u);
  // The guest consumed two entries and writes the ECQ head.
  EXPECT_EQ(v.write(ring_reg(Ring::Ecq, reg::kRingHead), 2, nullptr), Effect::EcqFreed);
  std::size_t written = 0;
  EXPECT_EQ(v.flush_held(guest, &written), 2u);
  EXPECT_EQ(written, 2u);
  EXPECT_EQ(v.held(), 1u);
  EXPECT_EQ(guest.at[0x9000 + 3 * kDescBytes].sock, 4);
  EXPECT_EQ(guest.at[0x9000].sock, 5);  // wrapped
  // A new completion waits behind the held one: order is kept.
  EXPECT_EQ(v.deliver(event(7), guest), Delivery::Held);
  v.write(ring_reg(Ring::Ecq, reg::kRingHead), 1, nullptr);
  EXPECT_EQ(v.flush_held(guest, &written), 2u);
  EXPECT_EQ(guest.at[0x9000 + 1 * kDescBytes].sock, 6);
  EXPECT_EQ(guest.at[0x9000 + 2 * kDescBytes].sock, 7);
  EXPECT_EQ(v.held(), 0u);
}

VTOE_TEST_MAIN
