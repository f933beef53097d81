// core::PayloadPool: reference counting, recycling, reset fields, auto extensions freed.
#include "models/core/payload_pool.h"

#include <gtest/gtest.h>

#include "tests/support/sc_test_main.h"

using vtoe::core::PayloadPool;

namespace {

struct Tag : tlm::tlm_extension<Tag> {
  static int alive;
  Tag() { ++alive; }
  ~Tag() override { --alive; }
  tlm::tlm_extension_base* clone() const override { return new Tag; }
  void copy_from(const tlm::tlm_extension_base&) override {}
};
int Tag::alive = 0;

}  // namespace

TEST(PayloadPool, RecyclesAPayloadWhenItsLastReferenceGoes) {
  PayloadPool pool;
  tlm::tlm_generic_payload* a = pool.acquire();
  EXPECT_EQ(a->get_ref_count(), 1);
  EXPECT_TRUE(a->has_mm());
  std::uint8_t data[4] = {};
  a->set_command(tlm::TLM_WRITE_COMMAND);
  a->set_address(0x1234);
  a->set_data_ptr(data);
  a->set_data_length(4);
  a->set_response_status(tlm::TLM_OK_RESPONSE);
  a->acquire();  // a target holds it too
  pool.release(a);
  EXPECT_EQ(pool.in_use(), 1u);  // still referenced
  tlm::tlm_generic_payload* b = pool.acquire();
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.allocated(), 2u);
  a->release();  // the target lets go: back to the pool
  EXPECT_EQ(pool.in_use(), 1u);
  tlm::tlm_generic_payload* c = pool.acquire();
  EXPECT_EQ(c, a);  // reused, with its fields reset
  EXPECT_EQ(c->get_address(), 0u);
  EXPECT_EQ(c->get_data_ptr(), nullptr);
  EXPECT_EQ(c->get_data_length(), 0u);
  EXPECT_EQ(c->get_command(), tlm::TLM_IGNORE_COMMAND);
  EXPECT_EQ(c->get_response_status(), tlm::TLM_INCOMPLETE_RESPONSE);
  EXPECT_EQ(pool.allocated(), 2u);
  pool.release(b);
  pool.release(c);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(PayloadPool, FreesAutoExtensionsOnReturn) {
  PayloadPool pool;
  tlm::tlm_generic_payload* a = pool.acquire();
  a->set_auto_extension(new Tag);
  EXPECT_EQ(Tag::alive, 1);
  pool.release(a);
  EXPECT_EQ(Tag::alive, 0);
  tlm::tlm_generic_payload* b = pool.acquire();
  EXPECT_EQ(b->get_extension<Tag>(), nullptr);
  pool.release(b);
}

VTOE_TEST_MAIN
