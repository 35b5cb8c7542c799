// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The binary layouts every part relies on: the device formats in
// uapi/vrnic-hw.h (the offsets Documentation/hw-spec.rst gives), the uverbs
// udata in uapi/vrnic-abi.h, and libvrnic's declarations of libibverbs'
// private provider ABI (the rdma-core release this build is for).
#include <gtest/gtest.h>

#include <cstddef>

#include "../../userspace/provider/ibverbs_private.h"
#include "vrnic-abi.h"
#include "vrnic-hw.h"

namespace {

TEST(Abi, DeviceStructSizes) {
  EXPECT_EQ(sizeof(vrnic_aq_hdr), 8U);
  EXPECT_EQ(sizeof(vrnic_aq_resp_buf), 16U);
  EXPECT_EQ(sizeof(vrnic_aq_cmd), 64U);
  EXPECT_EQ(sizeof(vrnic_aq_cqe), 16U);
  EXPECT_EQ(sizeof(vrnic_eqe), 16U);
  EXPECT_EQ(sizeof(vrnic_eq_dbrec), 8U);
  EXPECT_EQ(sizeof(vrnic_device_attr), 256U);
  EXPECT_EQ(sizeof(vrnic_port_attr), 64U);
  for (size_t s : {sizeof(vrnic_aq_nop), sizeof(vrnic_aq_query_device), sizeof(vrnic_aq_query_port),
                   sizeof(vrnic_aq_modify_port), sizeof(vrnic_aq_set_gid),
                   sizeof(vrnic_aq_create_eq), sizeof(vrnic_aq_destroy_eq)}) {
    EXPECT_EQ(s, VRNIC_AQ_CMD_SIZE);
  }
}

// The field offsets the hardware spec documents.
TEST(Abi, CommandFieldOffsetsMatchTheSpec) {
  EXPECT_EQ(offsetof(vrnic_aq_hdr, cookie), 0x2U);
  EXPECT_EQ(offsetof(vrnic_aq_hdr, flags), 0x4U);
  EXPECT_EQ(offsetof(vrnic_aq_nop, eqn), 0x8U);
  EXPECT_EQ(offsetof(vrnic_aq_nop, cookie), 0xcU);
  EXPECT_EQ(offsetof(vrnic_aq_query_device, resp), 0x8U);
  EXPECT_EQ(offsetof(vrnic_aq_query_port, resp), 0x8U);
  EXPECT_EQ(offsetof(vrnic_aq_query_port, port), 0x18U);
  EXPECT_EQ(offsetof(vrnic_aq_modify_port, port), 0x8U);
  EXPECT_EQ(offsetof(vrnic_aq_modify_port, netdev_state), 0xcU);
  EXPECT_EQ(offsetof(vrnic_aq_modify_port, netdev_mtu), 0x10U);
  EXPECT_EQ(offsetof(vrnic_aq_modify_port, mac), 0x14U);
  EXPECT_EQ(offsetof(vrnic_aq_set_gid, port), 0x8U);
  EXPECT_EQ(offsetof(vrnic_aq_set_gid, index), 0xcU);
  EXPECT_EQ(offsetof(vrnic_aq_set_gid, gid), 0x10U);
  EXPECT_EQ(offsetof(vrnic_aq_set_gid, type), 0x20U);
  EXPECT_EQ(offsetof(vrnic_aq_set_gid, vlan_id), 0x24U);
  EXPECT_EQ(offsetof(vrnic_aq_set_gid, mac), 0x26U);
  EXPECT_EQ(offsetof(vrnic_aq_create_eq, ring_addr), 0x8U);
  EXPECT_EQ(offsetof(vrnic_aq_create_eq, dbrec_addr), 0x10U);
  EXPECT_EQ(offsetof(vrnic_aq_create_eq, eqn), 0x18U);
  EXPECT_EQ(offsetof(vrnic_aq_create_eq, vector), 0x1cU);
  EXPECT_EQ(offsetof(vrnic_aq_create_eq, log_depth), 0x20U);
  EXPECT_EQ(offsetof(vrnic_aq_destroy_eq, eqn), 0x8U);
  EXPECT_EQ(offsetof(vrnic_aq_mcast, qpn), 0x8U);
  EXPECT_EQ(offsetof(vrnic_aq_mcast, gid), 0x10U);
  EXPECT_EQ(offsetof(vrnic_aq_counter, id), 0x8U);
  EXPECT_EQ(offsetof(vrnic_aq_counter, qpn), 0xcU);
  EXPECT_EQ(offsetof(vrnic_aq_counter, resp), 0x10U);
  // Packet pacing (hw-spec, "Packet pacing").
  EXPECT_EQ(offsetof(vrnic_qp_attr, rate_limit), 0x48U);
  EXPECT_EQ(offsetof(vrnic_qp_attr, max_burst), 0x4cU);
  EXPECT_EQ(offsetof(vrnic_device_attr, rate_limit_min), 0xa4U);
  EXPECT_EQ(offsetof(vrnic_device_attr, rate_limit_max), 0xa8U);
  // Device memory (hw-spec, "BAR2 layout").
  EXPECT_EQ(offsetof(vrnic_device_attr, dm_offset), 0xacU);
  EXPECT_EQ(offsetof(vrnic_device_attr, dm_size), 0xb0U);
}

// The owner bit must be in the last 32-bit word, which the device writes last.
TEST(Abi, OwnerBitsAreInTheLastWord) {
  EXPECT_EQ(offsetof(vrnic_aq_cqe, info), sizeof(vrnic_aq_cqe) - 4);
  EXPECT_EQ(offsetof(vrnic_eqe, info), sizeof(vrnic_eqe) - 4);
  EXPECT_EQ(VRNIC_AQ_CQE_OWNER_MASK, 1U << 31);
  EXPECT_EQ(VRNIC_EQE_OWNER_MASK, 1U << 31);
}

TEST(Abi, RegisterMap) {
  EXPECT_EQ(VRNIC_REG_MAGIC, 0x000);
  EXPECT_EQ(VRNIC_REG_STATE, 0x010);
  EXPECT_EQ(VRNIC_REG_CTRL, 0x018);
  EXPECT_EQ(VRNIC_REG_AQ_SQ_PI, 0x054);
  EXPECT_EQ(VRNIC_REG_AEQ_OVERFLOW, 0x070);
  EXPECT_EQ(VRNIC_BAR2_STATUS_PAGE, 0x1000);
  // Every register lies within the register page, 4-byte aligned.
  for (uint32_t r : {VRNIC_REG_MAGIC,         VRNIC_REG_VERSION,       VRNIC_REG_CAPS_LO,
                     VRNIC_REG_CAPS_HI,       VRNIC_REG_STATE,         VRNIC_REG_FATAL_CODE,
                     VRNIC_REG_CTRL,          VRNIC_REG_HEARTBEAT,     VRNIC_REG_DB_PEER,
                     VRNIC_REG_NUM_VECTORS,   VRNIC_REG_QUEUE_LIMITS,  VRNIC_REG_HEARTBEAT_MS,
                     VRNIC_REG_AQ_SQ_BASE_LO, VRNIC_REG_AQ_CQ_BASE_LO, VRNIC_REG_AQ_DEPTH,
                     VRNIC_REG_AQ_SQ_PI,      VRNIC_REG_AQ_CQ_CI,      VRNIC_REG_AQ_SQ_CI,
                     VRNIC_REG_AEQ_BASE_LO,   VRNIC_REG_AEQ_DEPTH,     VRNIC_REG_AEQ_CI,
                     VRNIC_REG_AEQ_OVERFLOW}) {
    EXPECT_EQ(r % 4, 0U);
    EXPECT_LT(r, static_cast<uint32_t>(VRNIC_BAR2_PAGE_SIZE));
  }
}

// After a 4- or 12-byte core response the driver's data would be
// misaligned; get_context's core response is 8 bytes, so u64s are fine.
TEST(Abi, UverbsUdata) {
  EXPECT_EQ(sizeof(vrnic_alloc_ucontext_req), 8U);
  EXPECT_EQ(sizeof(vrnic_alloc_ucontext_resp), 40U);
  EXPECT_EQ(offsetof(vrnic_alloc_ucontext_resp, db_mmap_key), 8U);
  EXPECT_EQ(offsetof(vrnic_alloc_ucontext_resp, status_mmap_key), 16U);
  EXPECT_EQ(sizeof(ib_uverbs_get_context_resp), 8U);
}

// ibverbs_private.h pins every private layout with static_asserts; what
// is left to check is at run time: that the libibverbs the tests run with
// is of the release family this build's layouts are for, and that a
// library's real name says its release.
TEST(Abi, LibibverbsReleaseFamily) {
  EXPECT_EQ(vrnic::pabi::rdma_core_major_of("/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"),
            44);
  EXPECT_EQ(vrnic::pabi::rdma_core_major_of("libibverbs.so.1.18.65.0"), 65);
  EXPECT_EQ(vrnic::pabi::rdma_core_major_of("/lib/libibverbs.so.1"), 0);
  EXPECT_EQ(vrnic::pabi::rdma_core_major_of("libmlx5.so.1.24.44.0"), 0);
  EXPECT_EQ(vrnic::pabi::layout_family(44), 44);
  EXPECT_EQ(vrnic::pabi::layout_family(50), 56);
  EXPECT_EQ(vrnic::pabi::layout_family(56), 56);
  EXPECT_EQ(vrnic::pabi::layout_family(57), 0);
  EXPECT_EQ(vrnic::pabi::layout_family(65), 65);
  EXPECT_EQ(vrnic::pabi::layout_family(vrnic::pabi::running_rdma_core_major()),
            vrnic::pabi::kBuiltFamily);
}

}  // namespace
