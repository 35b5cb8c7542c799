// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The device model driven through its register page and admin queue, in
// process, against fake guest RAM: bring-up, every admin command, and the
// malformed input a hostile guest can produce.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/bar2.h"
#include "base/guest_memory.h"
#include "base/irq.h"
#include "device/device.h"
#include "fake_driver.h"

namespace {

using vrnic_test::FakeDriver;
using vrnic_test::make_cmd;

class RecordingIrq final : public vrnicd::IrqSink {
 public:
  void raise(uint32_t vector) noexcept override { raised.push_back(vector); }
  size_t count(uint32_t v) const {
    return static_cast<size_t>(std::count(raised.begin(), raised.end(), v));
  }
  std::vector<uint32_t> raised;
};

class DeviceTest : public ::testing::Test {
 protected:
  static constexpr size_t kRamSize = 1U << 20;

  DeviceTest()
      : ram_(kRamSize),
        mem_({{0, kRamSize, ram_.data()}}),
        bar_(make_bar()),
        dev_(cfg_, *bar_, mem_, irq_),
        drv_(
            bar_->data(), ram_.data(), kRamSize, [this] { dev_.on_ctrl_doorbell_st(); },
            std::chrono::milliseconds(0)) {
    dev_.init_registers_st();
  }

  static std::optional<vrnicd::Bar2> make_bar() {
    std::string err;
    return vrnicd::Bar2::create(vrnicd::Bar2::kDefaultSize, &err);
  }

  void bring_up() {
    ASSERT_TRUE(drv_.reset());
    ASSERT_EQ(drv_.enable(), VRNIC_STATE_READY);
  }

  vrnic_aq_cmd create_eq_cmd(uint32_t eqn, uint32_t vector, uint32_t log_depth,
                             uint64_t ring = FakeDriver::kEqRing,
                             uint64_t dbrec = FakeDriver::kEqDbrec) {
    auto c = make_cmd(VRNIC_AQ_OP_CREATE_EQ);
    c.create_eq.eqn = eqn;
    c.create_eq.vector = vector;
    c.create_eq.log_depth = log_depth;
    c.create_eq.ring_addr = ring;
    c.create_eq.dbrec_addr = dbrec;
    return c;
  }

  vrnic_aq_cmd nop_event(uint32_t eqn, uint32_t cookie) {
    auto c = make_cmd(VRNIC_AQ_OP_NOP, VRNIC_AQ_NOP_F_EVENT);
    c.nop.eqn = eqn;
    c.nop.cookie = cookie;
    return c;
  }

  vrnicd::DeviceConfig cfg_;
  std::vector<std::byte> ram_;
  vrnicd::GuestMemory mem_;
  std::optional<vrnicd::Bar2> bar_;
  RecordingIrq irq_;
  vrnicd::Device dev_;
  FakeDriver drv_;
};

TEST_F(DeviceTest, PublishesIdentity) {
  EXPECT_EQ(drv_.reg(VRNIC_REG_MAGIC), VRNIC_MAGIC);
  EXPECT_EQ(vrnic::field_get<VRNIC_VERSION_MAJOR_MASK>(drv_.reg(VRNIC_REG_VERSION)),
            VRNIC_VERSION_MAJOR);
  EXPECT_EQ(drv_.reg(VRNIC_REG_STATE), VRNIC_STATE_RESET);
  EXPECT_EQ(drv_.reg(VRNIC_REG_NUM_VECTORS), cfg_.num_vectors);
  EXPECT_NE(drv_.reg(VRNIC_REG_CAPS_LO) & VRNIC_CAP_ROCE_V2, 0U);
  EXPECT_EQ(drv_.reg(VRNIC_REG_DB_PEER), vrnicd::kDevicePeerId);
  EXPECT_EQ(bar_->status(VRNIC_STATUS_DB_PEER), vrnicd::kDevicePeerId);
  // Nothing to poll yet: the engine says it is asleep, so producers ring.
  EXPECT_EQ(bar_->status(VRNIC_STATUS_ENGINE_ASLEEP), 1U);
}

// The asleep flag: set before a sleep or a --doze-ring doze, cleared on
// waking; only a sleep counts as one.
TEST_F(DeviceTest, ADozeWithTheFlagSetIsNoSleep) {
  bring_up();
  dev_.engine_wake_st();
  ASSERT_EQ(bar_->status(VRNIC_STATUS_ENGINE_ASLEEP), 0U);
  const uint64_t sleeps = dev_.engine().stat(VRNIC_STAT_ENGINE_SLEEPS);
  ASSERT_TRUE(dev_.engine_prepare_sleep_st(true));
  EXPECT_EQ(bar_->status(VRNIC_STATUS_ENGINE_ASLEEP), 1U);
  EXPECT_EQ(dev_.engine().stat(VRNIC_STAT_ENGINE_SLEEPS), sleeps);
  dev_.engine_wake_st();
  EXPECT_EQ(bar_->status(VRNIC_STATUS_ENGINE_ASLEEP), 0U);
  ASSERT_TRUE(dev_.engine_prepare_sleep_st());
  EXPECT_EQ(bar_->status(VRNIC_STATUS_ENGINE_ASLEEP), 1U);
  EXPECT_EQ(dev_.engine().stat(VRNIC_STAT_ENGINE_SLEEPS), sleeps + 1);
}

TEST_F(DeviceTest, EnableAndQueryDevice) {
  bring_up();
  auto c = make_cmd(VRNIC_AQ_OP_QUERY_DEVICE);
  c.query_device.resp.addr = FakeDriver::kResp;
  c.query_device.resp.len = sizeof(vrnic_device_attr);
  auto cqe = drv_.exec(c);
  ASSERT_TRUE(cqe);
  EXPECT_EQ(vrnic::field_get<VRNIC_AQ_CQE_STATUS_MASK>(cqe->info), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(cqe->result, sizeof(vrnic_device_attr));
  vrnic_device_attr attr{};
  std::memcpy(&attr, drv_.ram(FakeDriver::kResp), sizeof(attr));
  EXPECT_EQ(attr.max_qp, cfg_.limits.max_qp);
  EXPECT_EQ(attr.max_cq, cfg_.limits.max_cq);
  EXPECT_EQ(attr.max_eq, cfg_.limits.max_eq);
  EXPECT_EQ(attr.num_ports, 1U);
  EXPECT_EQ(0, std::memcmp(attr.mac, cfg_.mac.data(), 6));
  EXPECT_EQ(attr.node_guid, vrnicd::mac_to_guid(cfg_.mac));
  // It claims what it does (rdma-core's test_resize_srq trusts the SRQ
  // resize flag).
  const uint32_t want = VRNIC_DEV_CAP_RC | VRNIC_DEV_CAP_UC | VRNIC_DEV_CAP_UD | VRNIC_DEV_CAP_SRQ |
                        VRNIC_DEV_CAP_SRQ_RESIZE | VRNIC_DEV_CAP_ATOMIC |
                        VRNIC_DEV_CAP_MEM_MGT_EXT | VRNIC_DEV_CAP_MW | VRNIC_DEV_CAP_REREG_MR |
                        VRNIC_DEV_CAP_ATOMIC_WRITE | VRNIC_DEV_CAP_FLUSH_GLOBAL |
                        VRNIC_DEV_CAP_ROCE_V1 | VRNIC_DEV_CAP_RATE_LIMIT;
  EXPECT_EQ(attr.dev_caps & want, want);
  // Pacing from 1 Mbit/s to 100 Gbit/s.
  EXPECT_EQ(attr.rate_limit_min, 1000U);
  EXPECT_EQ(attr.rate_limit_max, 100'000'000U);
  // Device memory: the upper half of the 1-MiB BAR2.
  EXPECT_NE(attr.dev_caps & VRNIC_DEV_CAP_DM, 0U);
  EXPECT_EQ(attr.dm_offset, 512U << 10);
  EXPECT_EQ(attr.dm_size, 512U << 10);
  // Guest RAM here is the test's own memory: nothing it flushes persists.
  EXPECT_EQ(attr.dev_caps & VRNIC_DEV_CAP_FLUSH_PERSISTENT, 0U);
  // The completion raised vector 0.
  EXPECT_GE(irq_.count(0), 1U);
}

TEST_F(DeviceTest, ShortResponseBufferGetsTruncatedCopy) {
  bring_up();
  std::memset(drv_.ram(FakeDriver::kResp), 0xab, 64);
  auto c = make_cmd(VRNIC_AQ_OP_QUERY_DEVICE);
  c.query_device.resp.addr = FakeDriver::kResp;
  c.query_device.resp.len = 16;
  auto cqe = drv_.exec(c);
  ASSERT_TRUE(cqe);
  EXPECT_EQ(cqe->result, sizeof(vrnic_device_attr));
  EXPECT_EQ(cqe->result2, 16U);
  EXPECT_EQ(static_cast<uint8_t>(*drv_.ram(FakeDriver::kResp + 16)), 0xab);
}

TEST_F(DeviceTest, ResponseBufferOutsideRamIsRefused) {
  bring_up();
  for (uint64_t addr : {uint64_t{kRamSize}, uint64_t{kRamSize - 8}, ~uint64_t{7}, uint64_t{3}}) {
    auto c = make_cmd(VRNIC_AQ_OP_QUERY_DEVICE);
    c.query_device.resp.addr = addr;
    c.query_device.resp.len = sizeof(vrnic_device_attr);
    EXPECT_EQ(drv_.exec_status(c), VRNIC_AQ_STATUS_BAD_ADDR) << std::hex << addr;
  }
}

TEST_F(DeviceTest, BadEnableConfigGoesFatal) {
  ASSERT_TRUE(drv_.reset());
  // The admin SQ runs past the end of guest RAM.
  EXPECT_EQ(drv_.enable(4, 4, kRamSize - 256), VRNIC_STATE_FATAL);
  EXPECT_EQ(drv_.reg(VRNIC_REG_FATAL_CODE), VRNIC_FATAL_BAD_CONFIG);
  ASSERT_TRUE(drv_.reset());
  EXPECT_EQ(drv_.enable(1, 4), VRNIC_STATE_FATAL);  // depth too small
  ASSERT_TRUE(drv_.reset());
  EXPECT_EQ(drv_.enable(4, 4, FakeDriver::kAqSq + 64), VRNIC_STATE_FATAL);  // misaligned
  ASSERT_TRUE(drv_.reset());
  EXPECT_EQ(drv_.enable(4, 30), VRNIC_STATE_FATAL);  // AEQ too deep
  // And a good configuration still works after all that.
  ASSERT_TRUE(drv_.reset());
  EXPECT_EQ(drv_.enable(), VRNIC_STATE_READY);
}

TEST_F(DeviceTest, UnknownOpcodeAndFlags) {
  bring_up();
  EXPECT_EQ(drv_.exec_status(make_cmd(VRNIC_AQ_OP_MAX)), VRNIC_AQ_STATUS_BAD_OPCODE);
  EXPECT_EQ(drv_.exec_status(make_cmd(0xffff)), VRNIC_AQ_STATUS_BAD_OPCODE);
  EXPECT_EQ(drv_.exec_status(make_cmd(VRNIC_AQ_OP_NOP, 0x80)), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(drv_.exec_status(make_cmd(VRNIC_AQ_OP_NOP)), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dev_.counters().admin_errors, 2U + 1U);
}

// Every opcode of the uapi list has a name and a handler: none answers
// BAD_OPCODE, and a failure of any is logged under its own name.
TEST_F(DeviceTest, EveryOpcodeHasANameAndAHandler) {
  bring_up();
  std::set<std::string> names;
  for (uint32_t op = 0; op < VRNIC_AQ_OP_MAX; ++op) {
    const std::string name = vrnicd::aq_opcode_name(op);
    EXPECT_NE(name, "UNKNOWN") << "opcode " << op;
    names.insert(name);
    // A zeroed command: most handlers refuse it, but none as unknown.
    EXPECT_NE(drv_.exec_status(make_cmd(static_cast<uint16_t>(op))), VRNIC_AQ_STATUS_BAD_OPCODE)
        << name;
  }
  EXPECT_EQ(names.size(), size_t{VRNIC_AQ_OP_MAX});
  EXPECT_STREQ(vrnicd::aq_opcode_name(VRNIC_AQ_OP_CREATE_QP), "CREATE_QP");
  EXPECT_STREQ(vrnicd::aq_opcode_name(VRNIC_AQ_OP_QUERY_COUNTER), "QUERY_COUNTER");
  EXPECT_STREQ(vrnicd::aq_opcode_name(VRNIC_AQ_OP_MAX), "UNKNOWN");
}

TEST_F(DeviceTest, CookieIsEchoed) {
  bring_up();
  for (int i = 0; i < 40; ++i) {  // wraps the 16-entry rings twice
    const uint32_t expect = drv_.sq_pi();
    auto cqe = drv_.exec(make_cmd(VRNIC_AQ_OP_NOP));
    ASSERT_TRUE(cqe) << i;
    EXPECT_EQ(vrnic::field_get<VRNIC_AQ_CQE_COOKIE_MASK>(cqe->info), expect & 0xffff);
  }
  EXPECT_EQ(drv_.reg(VRNIC_REG_AQ_SQ_CI), 40U);
}

TEST_F(DeviceTest, ProducerIndexOverrunIsFatal) {
  bring_up();
  drv_.set_reg(VRNIC_REG_AQ_SQ_PI, 17);  // 17 commands in a 16-entry ring
  drv_.ring();
  EXPECT_EQ(drv_.reg(VRNIC_REG_STATE), VRNIC_STATE_FATAL);
  EXPECT_EQ(drv_.reg(VRNIC_REG_FATAL_CODE), VRNIC_FATAL_AQ_OVERRUN);
  // In FATAL the device ignores the admin queue until reset.
  const uint32_t cmds = static_cast<uint32_t>(dev_.counters().admin_cmds);
  drv_.ring();
  EXPECT_EQ(dev_.counters().admin_cmds, cmds);
  ASSERT_TRUE(drv_.reset());
  EXPECT_EQ(drv_.enable(), VRNIC_STATE_READY);
}

TEST_F(DeviceTest, FullCompletionQueueStallsUntilConsumed) {
  bring_up();
  for (int i = 0; i < 16; ++i) {
    drv_.post(make_cmd(VRNIC_AQ_OP_NOP));
  }
  drv_.ring();
  EXPECT_EQ(drv_.reg(VRNIC_REG_AQ_SQ_CI), 16U);
  // Sixteen completions sit unconsumed; the next command must wait.
  drv_.post(make_cmd(VRNIC_AQ_OP_NOP));
  drv_.ring();
  EXPECT_EQ(drv_.reg(VRNIC_REG_AQ_SQ_CI), 16U);
  EXPECT_EQ(drv_.reg(VRNIC_REG_STATE), VRNIC_STATE_READY);
  for (int i = 0; i < 16; ++i) {
    ASSERT_TRUE(drv_.poll_cqe());
  }
  drv_.ring();
  EXPECT_EQ(drv_.reg(VRNIC_REG_AQ_SQ_CI), 17U);
  EXPECT_TRUE(drv_.poll_cqe());
}

TEST_F(DeviceTest, QueryPortAndPortEvents) {
  bring_up();
  auto q = make_cmd(VRNIC_AQ_OP_QUERY_PORT);
  q.query_port.port = 1;
  q.query_port.resp.addr = FakeDriver::kResp;
  q.query_port.resp.len = sizeof(vrnic_port_attr);
  ASSERT_EQ(drv_.exec_status(q), VRNIC_AQ_STATUS_OK);
  vrnic_port_attr pa{};
  std::memcpy(&pa, drv_.ram(FakeDriver::kResp), sizeof(pa));
  EXPECT_EQ(pa.state, VRNIC_PORT_DOWN);  // the netdev state is not known yet
  EXPECT_EQ(pa.phys_state, VRNIC_PORT_PHYS_DISABLED);

  auto m =
      make_cmd(VRNIC_AQ_OP_MODIFY_PORT, VRNIC_AQ_MODIFY_PORT_F_NETDEV | VRNIC_AQ_MODIFY_PORT_F_MTU);
  m.modify_port.port = 1;
  m.modify_port.netdev_state = VRNIC_NETDEV_STATE_UP | VRNIC_NETDEV_STATE_CARRIER;
  m.modify_port.netdev_mtu = 1500;
  ASSERT_EQ(drv_.exec_status(m), VRNIC_AQ_STATUS_OK);
  auto ev = drv_.poll_aeqe();
  ASSERT_TRUE(ev);
  EXPECT_EQ(vrnic::field_get<VRNIC_EQE_TYPE_MASK>(ev->info), VRNIC_EQE_TYPE_PORT_CHANGE);
  EXPECT_EQ(ev->data[0], 1U);
  EXPECT_EQ(ev->data[1], static_cast<uint32_t>(VRNIC_PORT_ACTIVE));
  EXPECT_EQ(ev->data[2], static_cast<uint32_t>(VRNIC_PORT_PHYS_LINK_UP));

  ASSERT_EQ(drv_.exec_status(q), VRNIC_AQ_STATUS_OK);
  std::memcpy(&pa, drv_.ram(FakeDriver::kResp), sizeof(pa));
  EXPECT_EQ(pa.state, VRNIC_PORT_ACTIVE);
  EXPECT_EQ(pa.active_mtu, 3);  // 1024 on a 1500-byte link
  EXPECT_EQ(pa.netdev_mtu, 1500U);

  // Same state again: no event.
  ASSERT_EQ(drv_.exec_status(m), VRNIC_AQ_STATUS_OK);
  EXPECT_FALSE(drv_.poll_aeqe());

  // Carrier loss takes the port down.
  m.modify_port.netdev_state = VRNIC_NETDEV_STATE_UP;
  ASSERT_EQ(drv_.exec_status(m), VRNIC_AQ_STATUS_OK);
  ev = drv_.poll_aeqe();
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->data[1], static_cast<uint32_t>(VRNIC_PORT_DOWN));
  EXPECT_EQ(ev->data[2], static_cast<uint32_t>(VRNIC_PORT_PHYS_POLLING));

  // The cable too.
  m.modify_port.netdev_state = VRNIC_NETDEV_STATE_UP | VRNIC_NETDEV_STATE_CARRIER;
  ASSERT_EQ(drv_.exec_status(m), VRNIC_AQ_STATUS_OK);
  ASSERT_TRUE(drv_.poll_aeqe());
  dev_.set_cable_st(false);
  ev = drv_.poll_aeqe();
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->data[1], static_cast<uint32_t>(VRNIC_PORT_DOWN));
  dev_.set_cable_st(true);
  ev = drv_.poll_aeqe();
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->data[1], static_cast<uint32_t>(VRNIC_PORT_ACTIVE));
}

TEST_F(DeviceTest, ModifyPortValidation) {
  bring_up();
  auto m = make_cmd(VRNIC_AQ_OP_MODIFY_PORT, VRNIC_AQ_MODIFY_PORT_F_MTU);
  m.modify_port.port = 1;
  m.modify_port.netdev_mtu = 67;
  EXPECT_EQ(drv_.exec_status(m), VRNIC_AQ_STATUS_BAD_PARAM);
  m.modify_port.netdev_mtu = 100000;
  EXPECT_EQ(drv_.exec_status(m), VRNIC_AQ_STATUS_BAD_PARAM);
  m.modify_port.netdev_mtu = 9000;
  m.modify_port.port = 2;
  EXPECT_EQ(drv_.exec_status(m), VRNIC_AQ_STATUS_BAD_PARAM);
  m.modify_port.port = 1;
  EXPECT_EQ(drv_.exec_status(m), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dev_.port().active_mtu(), 5);  // 4096 with jumbo frames
  m.hdr.flags = VRNIC_AQ_MODIFY_PORT_F_NETDEV;
  m.modify_port.netdev_state = 0x10;
  EXPECT_EQ(drv_.exec_status(m), VRNIC_AQ_STATUS_BAD_PARAM);
}

TEST_F(DeviceTest, SetGid) {
  bring_up();
  auto g = make_cmd(VRNIC_AQ_OP_SET_GID, VRNIC_AQ_SET_GID_F_VALID);
  g.set_gid.port = 1;
  g.set_gid.index = 1;
  const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
  std::memcpy(g.set_gid.gid, gid, 16);
  g.set_gid.vlan_id = 0xffff;
  EXPECT_EQ(drv_.exec_status(g), VRNIC_AQ_STATUS_OK);
  ASSERT_TRUE(dev_.port().gids()[1].valid);
  EXPECT_EQ(0, std::memcmp(dev_.port().gids()[1].gid.data(), gid, 16));

  g.set_gid.index = cfg_.limits.gid_tbl_len;
  EXPECT_EQ(drv_.exec_status(g), VRNIC_AQ_STATUS_BAD_PARAM);
  g.set_gid.index = 2;
  g.set_gid.type = 7;
  EXPECT_EQ(drv_.exec_status(g), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_FALSE(dev_.port().gids()[2].valid);
  // The same GID as RoCEv1 beside the v2 entry, as ib_core lays them out.
  g.set_gid.type = VRNIC_GID_TYPE_ROCE_V1;
  EXPECT_EQ(drv_.exec_status(g), VRNIC_AQ_STATUS_OK);
  ASSERT_TRUE(dev_.port().gids()[2].valid);
  EXPECT_EQ(dev_.port().gids()[2].type, static_cast<uint32_t>(VRNIC_GID_TYPE_ROCE_V1));
  EXPECT_EQ(dev_.port().gids()[1].type, static_cast<uint32_t>(VRNIC_GID_TYPE_ROCE_V2));
  g.set_gid.type = VRNIC_GID_TYPE_ROCE_V2;
  g.set_gid.vlan_id = 5000;
  EXPECT_EQ(drv_.exec_status(g), VRNIC_AQ_STATUS_BAD_PARAM);

  auto clr = make_cmd(VRNIC_AQ_OP_SET_GID);
  clr.set_gid.port = 1;
  clr.set_gid.index = 1;
  EXPECT_EQ(drv_.exec_status(clr), VRNIC_AQ_STATUS_OK);
  EXPECT_FALSE(dev_.port().gids()[1].valid);
}

// The port's own GIDs, as every frame asks of them: a GID in two entries
// stays the port's until both are cleared, and a reset forgets them all.
TEST_F(DeviceTest, LocalGidsFollowTheTable) {
  bring_up();
  const std::array<uint8_t, 16> gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 9};
  std::array<uint8_t, 16> other = gid;
  other[15] = 8;
  auto set = [&](uint32_t index, bool valid) {
    auto g = make_cmd(VRNIC_AQ_OP_SET_GID, valid ? VRNIC_AQ_SET_GID_F_VALID : 0);
    g.set_gid.port = 1;
    g.set_gid.index = index;
    std::memcpy(g.set_gid.gid, gid.data(), gid.size());
    g.set_gid.vlan_id = 0xffff;
    return drv_.exec_status(g);
  };
  EXPECT_FALSE(dev_.port().is_local(gid));
  ASSERT_EQ(set(3, true), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(set(7, true), VRNIC_AQ_STATUS_OK);
  EXPECT_TRUE(dev_.port().is_local(gid));
  EXPECT_FALSE(dev_.port().is_local(other));
  ASSERT_EQ(set(3, false), VRNIC_AQ_STATUS_OK);
  EXPECT_TRUE(dev_.port().is_local(gid)) << "entry 7 still holds it";
  ASSERT_EQ(set(7, false), VRNIC_AQ_STATUS_OK);
  EXPECT_FALSE(dev_.port().is_local(gid));
  ASSERT_EQ(set(7, true), VRNIC_AQ_STATUS_OK);
  ASSERT_TRUE(drv_.reset());
  EXPECT_FALSE(dev_.port().is_local(gid)) << "after a reset";
}

TEST_F(DeviceTest, EventQueueCreateNopInterruptAndArming) {
  bring_up();
  ASSERT_EQ(drv_.exec_status(create_eq_cmd(1, 2, 3)), VRNIC_AQ_STATUS_OK);
  ASSERT_NE(dev_.eq(1), nullptr);
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(1, 2, 3)), VRNIC_AQ_STATUS_BUSY);

  auto* dbrec = reinterpret_cast<vrnic_eq_dbrec*>(drv_.ram(FakeDriver::kEqDbrec));
  // Not armed yet: the event is written but no interrupt.
  irq_.raised.clear();
  ASSERT_EQ(drv_.exec_status(nop_event(1, 0x1234)), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(irq_.count(2), 0U);
  auto* eqe = reinterpret_cast<vrnic_eqe*>(drv_.ram(FakeDriver::kEqRing));
  EXPECT_EQ(vrnic::field_get<VRNIC_EQE_TYPE_MASK>(eqe[0].info), VRNIC_EQE_TYPE_NOP);
  EXPECT_EQ(vrnic::field_get<VRNIC_EQE_OWNER_MASK>(eqe[0].info), 1U);
  EXPECT_EQ(eqe[0].data[0], 0x1234U);

  // Arming with an unconsumed entry fires at the next CTRL doorbell.
  dbrec->arm_sn = dbrec->arm_sn + 1;
  drv_.ring();
  EXPECT_EQ(irq_.count(2), 1U);
  // One interrupt per arm.
  drv_.ring();
  EXPECT_EQ(irq_.count(2), 1U);
  dbrec->ci = 1;
  ASSERT_EQ(drv_.exec_status(nop_event(1, 2)), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(irq_.count(2), 1U);
  dbrec->ci = 2;
  dbrec->arm_sn = dbrec->arm_sn + 1;
  ASSERT_EQ(drv_.exec_status(nop_event(1, 3)), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(irq_.count(2), 2U);

  // Fill the 8-entry ring (two entries consumed, three posted so far): the
  // ninth unconsumed event overruns.
  for (int i = 0; i < 7; ++i) {
    ASSERT_EQ(drv_.exec_status(nop_event(1, 10 + i)), VRNIC_AQ_STATUS_OK) << i;
  }
  EXPECT_EQ(drv_.exec_status(nop_event(1, 99)), VRNIC_AQ_STATUS_NO_RESOURCES);
  auto ev = drv_.poll_aeqe();
  ASSERT_TRUE(ev);
  EXPECT_EQ(vrnic::field_get<VRNIC_EQE_TYPE_MASK>(ev->info), VRNIC_EQE_TYPE_EQ_OVERRUN);
  EXPECT_EQ(ev->data[0], 1U);

  ASSERT_EQ(drv_.exec_status([] {
    auto c = make_cmd(VRNIC_AQ_OP_DESTROY_EQ);
    c.destroy_eq.eqn = 1;
    return c;
  }()),
            VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dev_.eq(1), nullptr);
  EXPECT_EQ(drv_.exec_status(nop_event(1, 1)), VRNIC_AQ_STATUS_NOT_FOUND);
}

TEST_F(DeviceTest, NopEventOnAsyncQueue) {
  bring_up();
  ASSERT_EQ(drv_.exec_status(nop_event(0, 77)), VRNIC_AQ_STATUS_OK);
  auto ev = drv_.poll_aeqe();
  ASSERT_TRUE(ev);
  EXPECT_EQ(vrnic::field_get<VRNIC_EQE_TYPE_MASK>(ev->info), VRNIC_EQE_TYPE_NOP);
  EXPECT_EQ(ev->data[0], 77U);
}

TEST_F(DeviceTest, CreateEqValidation) {
  bring_up();
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(0, 1, 4)), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(cfg_.limits.max_eq, 1, 4)), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(1, 0, 4)), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(1, cfg_.num_vectors, 4)), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(1, 1, 1)), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(1, 1, 17)), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(1, 1, 4, FakeDriver::kEqRing + 16)),
            VRNIC_AQ_STATUS_BAD_ADDR);
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(1, 1, 4, FakeDriver::kEqRing, 4)),
            VRNIC_AQ_STATUS_BAD_ADDR);
  // A 2^16-entry ring (1 MiB) does not fit behind kEqRing in 1 MiB of RAM.
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(1, 1, 16)), VRNIC_AQ_STATUS_BAD_ADDR);
  EXPECT_EQ(drv_.exec_status(create_eq_cmd(1, 1, 4, FakeDriver::kEqRing, kRamSize)),
            VRNIC_AQ_STATUS_BAD_ADDR);
  auto d = make_cmd(VRNIC_AQ_OP_DESTROY_EQ);
  d.destroy_eq.eqn = 3;
  EXPECT_EQ(drv_.exec_status(d), VRNIC_AQ_STATUS_NOT_FOUND);
  d.destroy_eq.eqn = 0;
  EXPECT_EQ(drv_.exec_status(d), VRNIC_AQ_STATUS_BAD_PARAM);
}

TEST_F(DeviceTest, ResetForgetsEverything) {
  bring_up();
  ASSERT_EQ(drv_.exec_status(create_eq_cmd(1, 1, 4)), VRNIC_AQ_STATUS_OK);
  ASSERT_TRUE(drv_.reset());
  EXPECT_EQ(dev_.eq(1), nullptr);
  EXPECT_EQ(dev_.eq(0), nullptr);
  EXPECT_EQ(drv_.reg(VRNIC_REG_AQ_SQ_BASE_LO), 0U);
  EXPECT_EQ(dev_.port().state(), VRNIC_PORT_DOWN);
  // Commands are ignored while in RESET.
  const uint64_t cmds = dev_.counters().admin_cmds;
  drv_.post(make_cmd(VRNIC_AQ_OP_NOP));
  drv_.ring();
  EXPECT_EQ(dev_.counters().admin_cmds, cmds);
  EXPECT_EQ(drv_.reg(VRNIC_REG_AQ_SQ_CI), 0U);
}

// The fault the driver's command timeout recovers from: with the admin
// queue stalled (SIGUSR1) commands go unanswered while the heartbeat goes
// on; a reset ends the stall and the device serves commands again.
TEST_F(DeviceTest, AStalledAdminQueueRecoversOnReset) {
  bring_up();
  dev_.stall_admin_st();
  drv_.post(make_cmd(VRNIC_AQ_OP_NOP));
  drv_.ring();
  EXPECT_FALSE(drv_.poll_cqe().has_value());
  const uint32_t hb = drv_.reg(VRNIC_REG_HEARTBEAT);
  dev_.on_heartbeat_st();
  EXPECT_EQ(drv_.reg(VRNIC_REG_HEARTBEAT), hb + 1);
  EXPECT_EQ(dev_.state(), VRNIC_STATE_READY);
  ASSERT_TRUE(drv_.reset());
  ASSERT_EQ(drv_.enable(), VRNIC_STATE_READY);
  EXPECT_EQ(drv_.exec_status(make_cmd(VRNIC_AQ_OP_NOP)), VRNIC_AQ_STATUS_OK);
}

TEST_F(DeviceTest, ShutdownIsReported) {
  bring_up();
  irq_.raised.clear();
  dev_.shutdown_st();
  EXPECT_EQ(drv_.reg(VRNIC_REG_STATE), VRNIC_STATE_GONE);
  EXPECT_EQ(drv_.reg(VRNIC_REG_FATAL_CODE), VRNIC_FATAL_SHUTDOWN);
  EXPECT_EQ(irq_.count(0), 1U);
}

// Random commands: the device must answer every one with a completion and
// stay READY, whatever the bytes are.
TEST_F(DeviceTest, GarbageCommandsGetErrorCompletions) {
  bring_up();
  std::mt19937_64 rng(12345);
  int errors = 0;
  for (int i = 0; i < 20000; ++i) {
    vrnic_aq_cmd c{};
    for (auto& b : c.raw) {
      b = static_cast<uint8_t>(rng());
    }
    // Keep half of them on valid opcodes so the handlers get exercised.
    if ((i & 1) != 0) {
      c.hdr.opcode = static_cast<uint16_t>(rng() % VRNIC_AQ_OP_MAX);
    }
    const int st = drv_.exec_status(c);
    ASSERT_GE(st, 0) << "no completion for command " << i;
    errors += st != VRNIC_AQ_STATUS_OK;
    ASSERT_EQ(drv_.reg(VRNIC_REG_STATE), VRNIC_STATE_READY);
    // Anything an EQ event was posted to must be drained so rings do not fill.
    while (drv_.poll_aeqe()) {
    }
  }
  EXPECT_GT(errors, 15000);
}

}  // namespace
