// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Ring arithmetic shared by the driver, provider and device: free-running
// indices, slots and owner bits, across the 32-bit wrap.
#include <gtest/gtest.h>

#include "hw_access.h"

namespace {

TEST(Ring, SlotsWrapWithinTheRing) {
  EXPECT_EQ(vrnic::ring_slot(0, 4), 0U);
  EXPECT_EQ(vrnic::ring_slot(15, 4), 15U);
  EXPECT_EQ(vrnic::ring_slot(16, 4), 0U);
  EXPECT_EQ(vrnic::ring_slot(0xffffffffU, 4), 15U);
}

TEST(Ring, UsedCountSurvivesIndexWrap) {
  EXPECT_EQ(vrnic::ring_used(5, 3), 2U);
  EXPECT_EQ(vrnic::ring_used(2, 0xfffffffeU), 4U);
  EXPECT_EQ(vrnic::ring_used(0, 0), 0U);
  // A consumer "ahead" of the producer reads as a huge count, which the
  // device treats as an overrun.
  EXPECT_GT(vrnic::ring_used(3, 5), 1U << 16);
}

TEST(Ring, OwnerBitFlipsEachPass) {
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(vrnic::ring_owner(i, 4), 1U) << i;
    EXPECT_EQ(vrnic::ring_owner(i + 16, 4), 0U) << i;
    EXPECT_EQ(vrnic::ring_owner(i + 32, 4), 1U) << i;
  }
  // 2^32 is a whole number of passes for any depth, so the owner sequence
  // continues seamlessly across the index wrap.
  EXPECT_EQ(vrnic::ring_owner(0xffffffffU, 4), 0U);
  EXPECT_EQ(vrnic::ring_owner(0, 4), 1U);
}

TEST(Ring, FieldHelpersMatchMasks) {
  const uint32_t info = vrnic::field_prep<VRNIC_AQ_CQE_COOKIE_MASK>(0xbeef) |
                        vrnic::field_prep<VRNIC_AQ_CQE_STATUS_MASK>(6) |
                        vrnic::field_prep<VRNIC_AQ_CQE_OWNER_MASK>(1);
  EXPECT_EQ(info, 0x8006beefU);
  EXPECT_EQ(vrnic::field_get<VRNIC_AQ_CQE_COOKIE_MASK>(info), 0xbeefU);
  EXPECT_EQ(vrnic::field_get<VRNIC_AQ_CQE_STATUS_MASK>(info), 6U);
  EXPECT_EQ(vrnic::field_get<VRNIC_AQ_CQE_OWNER_MASK>(info), 1U);
  // Values wider than the field are truncated, never spill into neighbours.
  EXPECT_EQ(vrnic::field_prep<VRNIC_AQ_CQE_STATUS_MASK>(0x1ff), 0xff0000U);
  EXPECT_EQ(VRNIC_GENMASK(31, 0), 0xffffffffU);
  EXPECT_EQ(VRNIC_GENMASK(0, 0), 1U);
  EXPECT_EQ(VRNIC_GENMASK_ULL(63, 32), 0xffffffff00000000ULL);
}

}  // namespace
