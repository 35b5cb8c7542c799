// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// The kernel's WQE encoder (drivers/vrnic/vrnic_wqe.c, built here with the
// stand-in kernel headers of shim/) against the device's decoder
// (userspace/common/queue_entry.h, what vrnicd runs): every send WQE the
// driver emits for a kernel ULP, and its receive WQE, must parse back to
// the work request it came from.  A field the encoder writes to the wrong
// place, or leaves out, fails here.
#include <gtest/gtest.h>
#include <rdma/ib_verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "queue_entry.h"

extern "C" {
#include "vrnic_wqe.h"
}

namespace {

// A fast-register MR and an address handle as the driver would have them.
struct TestMr {
  ib_mr ibmr{};
  bool has_list = true;
  vrnic_fr_list list{};
};

struct TestAh {
  ib_ah ibah{};
  vrnic_av av{};
};

}  // namespace

// What the driver provides to the encoder (vrnic_mr.c, vrnic_verbs.c).
extern "C" bool vrnic_mr_fr_list(ib_mr* ibmr, vrnic_fr_list* out) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): ibmr is TestMr's first member
  const auto* mr = reinterpret_cast<const TestMr*>(ibmr);
  if (!mr->has_list) {
    return false;
  }
  *out = mr->list;
  return true;
}

extern "C" const vrnic_av* vrnic_ah_av(ib_ah* ibah) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): ibah is TestAh's first member
  return &reinterpret_cast<const TestAh*>(ibah)->av;
}

namespace {

constexpr uint8_t kLogStride = 8;  // 256-byte slots
constexpr size_t kStride = size_t{1} << kLogStride;

class KernelCodec : public ::testing::Test {
 protected:
  vrnic_sq_shape rc_{false, false, kLogStride, 6, 128};
  vrnic_sq_shape ud_{true, false, kLogStride, 4, 64};
  alignas(64) std::array<std::byte, kStride> slot_{};
  std::array<ib_sge, 6> sges_{{{0x1000, 100, 0x11},
                               {0x2000, 200, 0x22},
                               {0x3000, 300, 0x33},
                               {0x4000, 400, 0x44},
                               {0x5000, 500, 0x55},
                               {0x6000, 600, 0x66}}};

  // Encode wr into a slot full of 0xa5 (so that a field left unwritten
  // shows), then parse the slot as the device does.
  int encode(const vrnic_sq_shape& sq, const ib_send_wr& wr) {
    slot_.fill(std::byte{0xa5});
    return vrnic_build_sqe(&sq, &wr, slot_.data());
  }
  vrnic::SqeFields parse(bool ud, uint32_t expect = VRNIC_VERR_NONE) {
    vrnic::SqeFields f;
    EXPECT_EQ(vrnic::sqe_parse(std::span(slot_), ud, &f), expect);
    return f;
  }
  ib_send_wr base(ib_wr_opcode op, int nsge, int flags = 0) {
    ib_send_wr wr{};
    wr.wr_id = 0x1122334455667788ULL + static_cast<uint64_t>(op);
    wr.opcode = op;
    wr.sg_list = sges_.data();
    wr.num_sge = nsge;
    wr.send_flags = flags;
    return wr;
  }
  void expect_sges(const vrnic::SqeFields& f, int n) {
    ASSERT_EQ(f.num_sge, static_cast<uint32_t>(n));
    for (int i = 0; i < n; ++i) {
      const auto u = static_cast<size_t>(i);
      EXPECT_EQ(f.sge.at(u).addr, sges_.at(u).addr) << i;
      EXPECT_EQ(f.sge.at(u).length, sges_.at(u).length) << i;
      EXPECT_EQ(f.sge.at(u).lkey, sges_.at(u).lkey) << i;
    }
  }
};

TEST_F(KernelCodec, SendsCarryTheirSgesAndFlags) {
  auto wr = base(IB_WR_SEND, 3, IB_SEND_SIGNALED | IB_SEND_SOLICITED | IB_SEND_FENCE);
  ASSERT_EQ(encode(rc_, wr), 0);
  const auto f = parse(false);
  EXPECT_EQ(f.opcode, VRNIC_WQE_SEND);
  EXPECT_EQ(f.wr_id, wr.wr_id);
  EXPECT_TRUE(f.signaled);
  EXPECT_TRUE(f.solicited);
  EXPECT_TRUE(f.fence);
  EXPECT_FALSE(f.is_inline);
  expect_sges(f, 3);

  wr = base(IB_WR_SEND, 6);
  ASSERT_EQ(encode(rc_, wr), 0);
  const auto g = parse(false);
  EXPECT_FALSE(g.signaled || g.solicited || g.fence);
  expect_sges(g, 6);
}

TEST_F(KernelCodec, SignalAllSignalsEveryWqe) {
  vrnic_sq_shape sq = rc_;
  sq.sig_all = true;
  ASSERT_EQ(encode(sq, base(IB_WR_SEND, 1)), 0);
  EXPECT_TRUE(parse(false).signaled);
}

TEST_F(KernelCodec, ImmediateDataIsInCpuOrderForTheDevice) {
  for (const auto op : {IB_WR_SEND_WITH_IMM, IB_WR_RDMA_WRITE_WITH_IMM}) {
    ib_rdma_wr wr{};
    wr.wr = base(op, 1);
    wr.wr.ex.imm_data = cpu_to_be32(0xdeadbeef);  // ULPs give it big-endian
    wr.remote_addr = 0xfeedf00d000ULL;
    wr.rkey = 0xabcd01;
    ASSERT_EQ(encode(rc_, wr.wr), 0);
    const auto f = parse(false);
    EXPECT_EQ(f.imm, 0xdeadbeefU) << op;
    if (op == IB_WR_RDMA_WRITE_WITH_IMM) {
      EXPECT_EQ(f.opcode, VRNIC_WQE_RDMA_WRITE_WITH_IMM);
      EXPECT_EQ(f.remote_addr, wr.remote_addr);
      EXPECT_EQ(f.rkey, wr.rkey);
    } else {
      EXPECT_EQ(f.opcode, VRNIC_WQE_SEND_WITH_IMM);
    }
    expect_sges(f, 1);
  }
}

TEST_F(KernelCodec, RdmaWritesAndReadsNameTheRemoteBuffer) {
  for (const auto& [op, opcode] : {std::pair{IB_WR_RDMA_WRITE, VRNIC_WQE_RDMA_WRITE},
                                   std::pair{IB_WR_RDMA_READ, VRNIC_WQE_RDMA_READ}}) {
    ib_rdma_wr wr{};
    wr.wr = base(op, 2);
    wr.remote_addr = 0x7fff12345678ULL;
    wr.rkey = 0x00abc123;
    ASSERT_EQ(encode(rc_, wr.wr), 0);
    const auto f = parse(false);
    EXPECT_EQ(f.opcode, static_cast<uint32_t>(opcode));
    EXPECT_EQ(f.wr_id, wr.wr.wr_id);
    EXPECT_EQ(f.remote_addr, wr.remote_addr);
    EXPECT_EQ(f.rkey, wr.rkey);
    expect_sges(f, 2);
  }
}

TEST_F(KernelCodec, AtomicsCarryTheirOperands) {
  for (const auto& [op, opcode] :
       {std::pair{IB_WR_ATOMIC_CMP_AND_SWP, VRNIC_WQE_ATOMIC_CMP_AND_SWP},
        std::pair{IB_WR_ATOMIC_FETCH_AND_ADD, VRNIC_WQE_ATOMIC_FETCH_AND_ADD}}) {
    ib_atomic_wr wr{};
    wr.wr = base(op, 1);
    wr.remote_addr = 0x10000008ULL;
    wr.rkey = 0x00777701;
    wr.compare_add = 0x0102030405060708ULL;
    wr.swap = 0x1112131415161718ULL;
    ASSERT_EQ(encode(rc_, wr.wr), 0);
    const auto f = parse(false);
    EXPECT_EQ(f.opcode, static_cast<uint32_t>(opcode));
    EXPECT_EQ(f.remote_addr, wr.remote_addr);
    EXPECT_EQ(f.rkey, wr.rkey);
    EXPECT_EQ(f.compare_add, wr.compare_add);
    EXPECT_EQ(f.swap, wr.swap);
    expect_sges(f, 1);
  }
}

TEST_F(KernelCodec, InvalidationsNameTheKey) {
  auto wr = base(IB_WR_SEND_WITH_INV, 1);
  wr.ex.invalidate_rkey = 0x00123405;
  ASSERT_EQ(encode(rc_, wr), 0);
  auto f = parse(false);
  EXPECT_EQ(f.opcode, VRNIC_WQE_SEND_WITH_INV);
  EXPECT_EQ(f.imm, 0x00123405U);
  expect_sges(f, 1);

  wr = base(IB_WR_LOCAL_INV, 0);
  wr.ex.invalidate_rkey = 0x00543206;
  ASSERT_EQ(encode(rc_, wr), 0);
  f = parse(false);
  EXPECT_EQ(f.opcode, VRNIC_WQE_LOCAL_INV);
  EXPECT_EQ(f.imm, 0x00543206U);
  EXPECT_EQ(f.num_sge, 0U);

  wr.num_sge = 1;  // LOCAL_INV has no data
  EXPECT_EQ(encode(rc_, wr), -EINVAL);
}

TEST_F(KernelCodec, FastRegistrationPointsAtThePageList) {
  TestMr mr;
  mr.ibmr.iova = 0xffff888012340000ULL;
  mr.ibmr.length = 5 * 4096 + 100;
  mr.ibmr.page_size = 4096;
  mr.list = {0x12345000, 6};
  ib_reg_wr wr{};
  wr.wr = base(IB_WR_REG_MR, 0, IB_SEND_SIGNALED);
  wr.mr = &mr.ibmr;
  wr.key = 0x00abc1ff;
  wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
  ASSERT_EQ(encode(rc_, wr.wr), 0);
  const auto f = parse(false);
  EXPECT_EQ(f.opcode, VRNIC_WQE_REG_MR);
  EXPECT_EQ(f.wr_id, wr.wr.wr_id);
  EXPECT_TRUE(f.signaled);
  EXPECT_EQ(f.reg.key, wr.key);
  EXPECT_EQ(f.reg.iova, mr.ibmr.iova);
  EXPECT_EQ(f.reg.length, mr.ibmr.length);
  EXPECT_EQ(f.reg.pbl_addr, mr.list.dma);
  EXPECT_EQ(f.reg.npages, 6U);
  EXPECT_EQ(f.reg.page_shift, 12U);
  EXPECT_EQ(f.reg.access,
            VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_READ | VRNIC_ACCESS_REMOTE_WRITE);

  mr.ibmr.page_size = 2 * 1024 * 1024;  // huge pages
  ASSERT_EQ(encode(rc_, wr.wr), 0);
  EXPECT_EQ(parse(false).reg.page_shift, 21U);

  mr.ibmr.page_size = 3 * 4096;  // not a power of two
  EXPECT_EQ(encode(rc_, wr.wr), -EINVAL);
  mr.ibmr.page_size = 4096;
  mr.has_list = false;  // not a fast-register MR
  EXPECT_EQ(encode(rc_, wr.wr), -EINVAL);
  mr.has_list = true;
  mr.list.npages = 0;  // not mapped
  EXPECT_EQ(encode(rc_, wr.wr), -EINVAL);
}

TEST_F(KernelCodec, AccessFlagsMapOneToOne) {
  EXPECT_EQ(vrnic_access(0), 0U);
  EXPECT_EQ(vrnic_access(IB_ACCESS_LOCAL_WRITE), VRNIC_ACCESS_LOCAL_WRITE);
  EXPECT_EQ(vrnic_access(IB_ACCESS_REMOTE_WRITE), VRNIC_ACCESS_REMOTE_WRITE);
  EXPECT_EQ(vrnic_access(IB_ACCESS_REMOTE_READ), VRNIC_ACCESS_REMOTE_READ);
  EXPECT_EQ(vrnic_access(IB_ACCESS_REMOTE_ATOMIC), VRNIC_ACCESS_REMOTE_ATOMIC);
  EXPECT_EQ(vrnic_access(IB_ACCESS_MW_BIND), VRNIC_ACCESS_MW_BIND);
  // 6.2's IB_ACCESS_FLUSH_GLOBAL and _PERSISTENT, by their uverbs numbers.
  EXPECT_EQ(vrnic_access(1 << 8), VRNIC_ACCESS_FLUSH_GLOBAL);
  EXPECT_EQ(vrnic_access(1 << 9), VRNIC_ACCESS_FLUSH_PERSISTENT);
  EXPECT_EQ(vrnic_access(1 << 10), 0U) << "nothing the device does not know";
}

TEST_F(KernelCodec, UdSendsCarryTheAddress) {
  TestAh ah;
  ah.av.dmac[0] = 0x02;
  ah.av.dmac[5] = 0x42;
  ah.av.dgid[15] = 0x07;
  ah.av.sgid_index = 1;
  ah.av.hop_limit = 64;
  ib_ud_wr wr{};
  wr.wr = base(IB_WR_SEND, 2, IB_SEND_SIGNALED);
  wr.ah = &ah.ibah;
  wr.remote_qpn = 0x000abc;
  wr.remote_qkey = 0x80010000;
  ASSERT_EQ(encode(ud_, wr.wr), 0);
  const auto f = parse(true);
  EXPECT_EQ(f.opcode, VRNIC_WQE_SEND);
  EXPECT_EQ(f.remote_qpn, wr.remote_qpn);
  EXPECT_EQ(f.remote_qkey, wr.remote_qkey);
  EXPECT_EQ(std::memcmp(&f.av, &ah.av, sizeof(ah.av)), 0);
  expect_sges(f, 2);

  wr.ah = nullptr;
  EXPECT_EQ(encode(ud_, wr.wr), -EINVAL);
}

TEST_F(KernelCodec, UdTakesOnlySendsAndMemoryWork) {
  TestAh ah;
  ib_ud_wr wr{};
  wr.ah = &ah.ibah;
  for (const auto op :
       {IB_WR_RDMA_WRITE, IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_RDMA_READ, IB_WR_ATOMIC_CMP_AND_SWP,
        IB_WR_ATOMIC_FETCH_AND_ADD, IB_WR_SEND_WITH_INV}) {
    wr.wr = base(op, 1);
    EXPECT_EQ(encode(ud_, wr.wr), -EINVAL) << op;
  }
  wr.wr = base(IB_WR_SEND_WITH_IMM, 1);
  wr.wr.ex.imm_data = cpu_to_be32(5);
  ASSERT_EQ(encode(ud_, wr.wr), 0);
  EXPECT_EQ(parse(true).imm, 5U);
}

TEST_F(KernelCodec, OpcodesTheDeviceLacksAreRefused) {
  for (const auto op :
       {IB_WR_BIND_MW, IB_WR_LSO, IB_WR_RDMA_READ_WITH_INV, IB_WR_MASKED_ATOMIC_CMP_AND_SWP,
        IB_WR_MASKED_ATOMIC_FETCH_AND_ADD, IB_WR_REG_MR_INTEGRITY}) {
    EXPECT_EQ(encode(rc_, base(op, 1)), -EINVAL) << op;
  }
}

TEST_F(KernelCodec, InlineDataIsCopiedIntoTheWqe) {
  std::array<char, 40> a{};
  std::array<char, 24> b{};
  a.fill('a');
  b.fill('b');
  std::array<ib_sge, 2> in = {{{reinterpret_cast<uintptr_t>(a.data()), 40, 0},    // NOLINT
                               {reinterpret_cast<uintptr_t>(b.data()), 24, 0}}};  // NOLINT
  ib_rdma_wr wr{};
  wr.wr = base(IB_WR_RDMA_WRITE, 2, IB_SEND_INLINE);
  wr.wr.sg_list = in.data();
  wr.remote_addr = 0x9000;
  wr.rkey = 0x42;
  ASSERT_EQ(encode(rc_, wr.wr), 0);
  const auto f = parse(false);
  EXPECT_TRUE(f.is_inline);
  EXPECT_EQ(f.remote_addr, 0x9000U);
  ASSERT_EQ(f.inline_data.size(), 64U);
  std::vector<char> want(a.begin(), a.end());
  want.insert(want.end(), b.begin(), b.end());
  EXPECT_EQ(std::memcmp(f.inline_data.data(), want.data(), want.size()), 0);

  vrnic_sq_shape small = rc_;
  small.max_inline = 63;  // one byte short
  EXPECT_EQ(encode(small, wr.wr), -EINVAL);

  // READs and atomics cannot be inline: their SGEs are where data lands.
  wr.wr.opcode = IB_WR_RDMA_READ;
  ASSERT_EQ(encode(rc_, wr.wr), 0);
  const auto r = parse(false);
  EXPECT_FALSE(r.is_inline);
  EXPECT_EQ(r.num_sge, 2U);
}

TEST_F(KernelCodec, SgeCountsAreBounded) {
  EXPECT_EQ(encode(rc_, base(IB_WR_SEND, 7)), -EINVAL);   // beyond max_sge
  EXPECT_EQ(encode(rc_, base(IB_WR_SEND, -1)), -EINVAL);  // negative
  vrnic_sq_shape tight = rc_;
  tight.log_stride = 6;  // 64 bytes: room for 2 SGEs after the header
  tight.max_sge = 6;
  const size_t room = (64 - VRNIC_SQE_DATA_OFFSET) / sizeof(vrnic_sge);
  EXPECT_EQ(encode(tight, base(IB_WR_SEND, static_cast<int>(room))), 0);
  EXPECT_EQ(encode(tight, base(IB_WR_SEND, static_cast<int>(room) + 1)), -EINVAL);
}

TEST_F(KernelCodec, ReceiveWqesParseBack) {
  ib_recv_wr wr{};
  wr.wr_id = 0xabcdef0123456789ULL;
  wr.sg_list = sges_.data();
  wr.num_sge = 4;
  slot_.fill(std::byte{0xa5});
  ASSERT_EQ(vrnic_write_rqe(slot_.data(), &wr, 4), 0);
  vrnic::RqeFields f;
  ASSERT_EQ(vrnic::rqe_parse(std::span(slot_), &f), VRNIC_VERR_NONE);
  EXPECT_EQ(f.wr_id, wr.wr_id);
  ASSERT_EQ(f.num_sge, 4U);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(f.sge.at(i).addr, sges_.at(i).addr);
    EXPECT_EQ(f.sge.at(i).length, sges_.at(i).length);
    EXPECT_EQ(f.sge.at(i).lkey, sges_.at(i).lkey);
  }
  wr.num_sge = 0;  // a receive with no buffer: zero-length messages
  ASSERT_EQ(vrnic_write_rqe(slot_.data(), &wr, 4), 0);
  ASSERT_EQ(vrnic::rqe_parse(std::span(slot_), &f), VRNIC_VERR_NONE);
  EXPECT_EQ(f.num_sge, 0U);
  wr.num_sge = 5;
  EXPECT_EQ(vrnic_write_rqe(slot_.data(), &wr, 4), -EINVAL);
}

}  // namespace
