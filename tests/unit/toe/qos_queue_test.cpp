// toe::QosQueue: the heads of N queues as the QoS policy sees them (shared by the TOE's dispatcher
// and the device-emulation manager).
#include "models/toe/qos_queue.h"

#include <gtest/gtest.h>

#include "tests/support/bench.h"

using vtoe::toe::DispatchPolicyKind;
using vtoe::toe::QosQueue;

TEST(QosQueue, EmptyQueuesPickNothing) {
  QosQueue q(DispatchPolicyKind::RoundRobin, 3, {}, 16000);
  EXPECT_EQ(q.queues(), 3u);
  EXPECT_EQ(q.pick(), -1);
  EXPECT_FALSE(q.has_head(1));
}

TEST(QosQueue, FcfsServesTheOldestArrivalAcrossQueues) {
  QosQueue q(DispatchPolicyKind::Fcfs, 3, {}, 16000);
  const auto a0 = q.next_arrival(), a1 = q.next_arrival(), a2 = q.next_arrival();
  q.set_head(2, 100, a0);
  q.set_head(0, 100, a2);
  q.set_head(1, 100, a1);
  EXPECT_EQ(q.pick(), 2);
  q.served(2, 100);
  q.clear_head(2);
  EXPECT_EQ(q.pick(), 1);
  q.served(1, 100);
  q.clear_head(1);
  EXPECT_EQ(q.pick(), 0);
}

TEST(QosQueue, RoundRobinTakesTurnsWhateverTheArrivalOrder) {
  QosQueue q(DispatchPolicyKind::RoundRobin, 2, {}, 16000);
  std::vector<int> order;
  for (int i = 0; i < 4; ++i) {
    for (std::size_t k = 0; k < 2; ++k)
      if (!q.has_head(k)) q.set_head(k, 1000, q.next_arrival());
    const int c = q.pick();
    ASSERT_GE(c, 0);
    order.push_back(c);
    q.served(c, 1000);
    q.clear_head(static_cast<std::size_t>(c));
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 0, 1}));
}

TEST(QosQueue, DwrrSharesBytesByQuantum) {
  // Quanta 3000:1000; every head 1000 B: queue 0 is served three times per turn of queue 1.
  QosQueue q(DispatchPolicyKind::Dwrr, 2, {3000, 1000}, 16000);
  std::uint64_t bytes[2] = {0, 0};
  for (int i = 0; i < 400; ++i) {
    for (std::size_t k = 0; k < 2; ++k)
      if (!q.has_head(k)) q.set_head(k, 1000, q.next_arrival());
    const int c = q.pick();
    ASSERT_GE(c, 0);
    bytes[c] += 1000;
    q.served(c, 1000);
    q.clear_head(static_cast<std::size_t>(c));
  }
  EXPECT_NEAR(static_cast<double>(bytes[0]) / static_cast<double>(bytes[1]), 3.0, 0.05);
}

TEST(QosQueue, WrongQueueIndexThrows) {
  QosQueue q(DispatchPolicyKind::RoundRobin, 2, {}, 16000);
  EXPECT_THROW(q.set_head(2, 10, 0), std::out_of_range);
}

VTOE_TEST_MAIN
