// core::PayloadMap: per-payload state of transactions in flight; entries found, overwritten,
// erased and their slots reused, and references that stay valid while other entries come and go.
#include "models/core/payload_map.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "tests/support/sc_test_main.h"

using vtoe::core::PayloadMap;

TEST(PayloadMap, FindsOverwritesAndErasesByPayload) {
  tlm::tlm_generic_payload a, b;
  PayloadMap<int> map;
  EXPECT_EQ(map.find(&a), nullptr);
  map.insert(&a, 1);
  map.insert(&b, 2);
  ASSERT_NE(map.find(&a), nullptr);
  EXPECT_EQ(*map.find(&a), 1);
  EXPECT_EQ(map.at(&b, "test"), 2);
  map.insert(&a, 3);  // a payload reused before its end: overwritten, not added
  EXPECT_EQ(*map.find(&a), 3);
  EXPECT_EQ(map.size(), 2u);
  map.erase(&a);
  EXPECT_EQ(map.find(&a), nullptr);
  EXPECT_EQ(map.size(), 1u);
  map.erase(&a);  // absent: ignored
  EXPECT_EQ(map.size(), 1u);
  EXPECT_THROW(map.at(&a, "test"), std::logic_error);
}

TEST(PayloadMap, AReferenceStaysValidWhileOthersComeAndGo) {
  std::vector<tlm::tlm_generic_payload> gp(40);
  PayloadMap<int> map;
  int& first = map.insert(&gp[0], 7);
  for (std::size_t i = 1; i < gp.size(); ++i) map.insert(&gp[i], static_cast<int>(i));  // grows
  for (std::size_t i = 1; i < gp.size(); i += 2) map.erase(&gp[i]);
  first = 8;  // still the entry of gp[0]
  EXPECT_EQ(*map.find(&gp[0]), 8);
  EXPECT_EQ(*map.find(&gp[2]), 2);
  EXPECT_EQ(map.size(), 20u);
  // Freed slots are reused: the table does not grow past the most ever in flight.
  for (std::size_t i = 1; i < gp.size(); i += 2) map.insert(&gp[i], -1);
  EXPECT_EQ(map.size(), 40u);
  EXPECT_EQ(*map.find(&gp[39]), -1);
  EXPECT_EQ(&map.at(&gp[0], "test"), &first);
}

VTOE_TEST_MAIN
