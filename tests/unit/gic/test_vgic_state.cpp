// The virtual CPU interface's rules on a VgicState, as the hypervisor applies them to the saved
// copy of a VM whose vCPU is off the core. A saved-copy EOI that did not drop the running
// priority once left a VM unable to take any further interrupt (its ISR spun on spurious IDs).
#include <gtest/gtest.h>

#include "models/gic/gic.h"
#include "tests/support/bench.h"

using namespace vtoe;
using gic::LrState;

namespace {
gic::VgicState with_pending(int vid) {
  gic::VgicState s;
  s.lr[0] = gic::ListRegister::make_pending(vid, gic::kDefaultPriority);
  return s;
}
}  // namespace

TEST(VgicState, AcknowledgeRaisesTheRunningPriorityAndEoiDropsIt) {
  gic::VgicState s = with_pending(48);
  EXPECT_EQ(gic::virtual_running_priority(s), gic::kIdlePriority);
  ASSERT_EQ(gic::acknowledge_virtual(s), 0);
  EXPECT_EQ(s.lr[0].state, LrState::Active);
  EXPECT_EQ(gic::virtual_running_priority(s), gic::kDefaultPriority & gic::kVirtualPriorityMask);
  // The same interrupt again while the first is active: it cannot be acknowledged.
  s.lr[1] = gic::ListRegister::make_pending(49, gic::kDefaultPriority);
  EXPECT_EQ(gic::acknowledge_virtual(s), -1);
  ASSERT_EQ(gic::end_virtual_interrupt(s, 48), 0);
  EXPECT_EQ(s.lr[0].state, LrState::Invalid);
  EXPECT_EQ(s.apr, 0u);
  EXPECT_EQ(gic::acknowledge_virtual(s), 1);  // now it can
}

TEST(VgicState, EoiOfAnInterruptNotInTheListRegistersCountsIt) {
  gic::VgicState s;
  EXPECT_EQ(gic::end_virtual_interrupt(s, 48), -1);
  EXPECT_EQ(gic::hcr::eoi_count(s.hcr), 1u);
}

TEST(VgicState, PendingAgainWhileActiveBecomesPendingOnEoi) {
  gic::VgicState s = with_pending(48);
  ASSERT_EQ(gic::acknowledge_virtual(s), 0);
  s.lr[0].state = LrState::PendingActive;  // the hypervisor injected it again meanwhile
  EXPECT_EQ(gic::end_virtual_interrupt(s, 48), 0);
  EXPECT_EQ(s.lr[0].state, LrState::Pending);
  EXPECT_EQ(gic::acknowledge_virtual(s), 0);
}

VTOE_TEST_MAIN
