// hypervisor::SocketMap: the device-emulation connection manager.
#include "hypervisor/socket_map.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/support/bench.h"

using vtoe::hypervisor::SocketMap;

TEST(SocketMap, TwoVmsMayUseTheSameSocketIdAndGetDistinctPhysicalOnes) {
  SocketMap m;
  const int a = m.allocate(0, 1), b = m.allocate(1, 1);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  EXPECT_NE(a, b);
  EXPECT_EQ(m.lookup(0, 1), a);
  EXPECT_EQ(m.lookup(1, 1), b);
  EXPECT_EQ(m.lookup(0, 2), -1);
  ASSERT_NE(m.find(static_cast<std::uint16_t>(b)), nullptr);
  EXPECT_EQ(m.find(static_cast<std::uint16_t>(b))->slot, 1);
  EXPECT_EQ(m.find(static_cast<std::uint16_t>(b))->vsock, 1);
  EXPECT_FALSE(m.find(static_cast<std::uint16_t>(b))->established);
}

TEST(SocketMap, EraseForgetsBothDirectionsAndIdsAreReusedOnlyAfterAFullTurn) {
  SocketMap m;
  const int a = m.allocate(0, 5);
  m.erase(static_cast<std::uint16_t>(a));
  EXPECT_EQ(m.lookup(0, 5), -1);
  EXPECT_EQ(m.find(static_cast<std::uint16_t>(a)), nullptr);
  EXPECT_NE(m.allocate(0, 5), a) << "a freed id is not handed out again at once";
  m.erase(999);  // unknown: nothing happens
  EXPECT_EQ(m.sockets(), 1u);
}

TEST(SocketMap, AllocationFailsWhenEveryPhysicalIdIsTaken) {
  SocketMap m;
  std::set<int> ids;
  for (int i = 0; i < 0xffff; ++i) ids.insert(m.allocate(i % 4, static_cast<std::uint16_t>(i / 4)));
  EXPECT_EQ(ids.size(), 0xffffu);
  EXPECT_EQ(ids.count(-1), 0u);
  EXPECT_EQ(ids.count(0), 0u) << "0 is never a socket id";
  EXPECT_EQ(m.allocate(9, 9), -1);
}

TEST(SocketMap, SendCookiesMapBackToTheGuestContextOnce) {
  SocketMap m;
  const std::uint32_t c1 = m.add_send(0, 3, 0x11), c2 = m.add_send(1, 3, 0x11);
  EXPECT_TRUE(SocketMap::is_send_cookie(c1));
  EXPECT_NE(c1, c2);
  EXPECT_EQ(m.sends(), 2u);
  const auto r = m.take_send(c2);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->slot, 1);
  EXPECT_EQ(r->vsock, 3);
  EXPECT_EQ(r->vcookie, 0x11u);
  EXPECT_FALSE(m.take_send(c2).has_value()) << "a completion is delivered once";
  EXPECT_FALSE(m.take_send(0x1234).has_value());
  EXPECT_FALSE(SocketMap::is_send_cookie(0));
}

VTOE_TEST_MAIN
