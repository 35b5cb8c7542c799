// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// vrnicd's data path driven through its rings in a fake guest RAM: the
// memory-region checks (keys, PDs, access, bounds) on every access, MR
// registration, and the QP state machine as the device enforces it.
#include "datapath.h"
#include "base/log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <unordered_set>

namespace {

using vrnic_test::DataPath;

constexpr size_t kBuf = 64 * 1024;

DataPath::SendWr sqe(uint32_t opcode, uint64_t wr_id) {
  DataPath::SendWr wr;
  wr.opcode = opcode;
  wr.wr_id = wr_id;
  return wr;
}

// A raw send WQE header, for entries libvrnic would never build.
vrnic_sqe raw_sqe(uint32_t opcode, uint64_t wr_id) {
  vrnic_sqe h{};
  h.wr_id = wr_id;
  h.ctrl = vrnic::field_prep<VRNIC_WQE_CTRL_OPCODE_MASK>(opcode) | VRNIC_WQE_CTRL_SIGNALED;
  return h;
}

uint32_t status_of(const vrnic::CqeFields& e) { return e.status; }
uint32_t opcode_of(const vrnic::CqeFields& e) { return e.opcode; }

class DataPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dp_.bring_up());
    ASSERT_EQ(dp_.create_pd(&pd_), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.create_pd(&pd2_), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.create_cq(8, &cq_), VRNIC_AQ_STATUS_OK);
    buf_a_ = dp_.alloc(kBuf);
    buf_b_ = dp_.alloc(kBuf);
    ASSERT_EQ(dp_.reg_mr(pd_, buf_a_, kBuf, VRNIC_ACCESS_ALL, &key_a_), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.reg_mr(pd_, buf_b_, kBuf, VRNIC_ACCESS_ALL, &key_b_), VRNIC_AQ_STATUS_OK);
    std::mt19937 g(7);
    for (size_t i = 0; i < kBuf; ++i) {
      *dp_.ram(buf_a_ + i) = std::byte(g());
      *dp_.ram(buf_b_ + i) = std::byte(g());
    }
  }

  // A fresh pair of RC QPs, a and b, connected to each other; b receives
  // from srq if there is one.
  void pair(uint32_t access_b = VRNIC_ACCESS_ALL, const DataPath::Srq* srq = nullptr) {
    a_ = {};
    b_ = {};
    ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &a_), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &b_, 64, 0, srq), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.connect(a_, b_.qpn), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.connect(b_, a_.qpn, access_b), VRNIC_AQ_STATUS_OK);
  }

  // Completions for qpn, in order.
  std::vector<vrnic::CqeFields> cqes(uint32_t qpn) {
    std::vector<vrnic::CqeFields> out;
    while (auto e = dp_.poll(cq_)) {
      if (e->qpn == qpn) {
        out.push_back(*e);
      }
    }
    return out;
  }

  // N 64-byte RDMA WRITEs from a to b, wr_id 0 .. N-1, posted and not run.
  void post_writes(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) {
      auto h = sqe(VRNIC_WQE_RDMA_WRITE, i);
      h.remote_addr = buf_b_;
      h.rkey = key_b_;
      const vrnic_sge local{buf_a_, 64, key_a_};
      dp_.post_send(a_, h, std::span(&local, 1));
    }
  }

  // a's completions are the N writes of post_writes, in order, all good.
  void expect_writes_done(uint64_t n) {
    auto done = cqes(a_.qpn);
    ASSERT_EQ(done.size(), n);
    for (uint64_t i = 0; i < n; ++i) {
      EXPECT_EQ(done[i].wr_id, i);
      EXPECT_EQ(status_of(done[i]), VRNIC_CQE_SUCCESS);
    }
  }

  // One RDMA WRITE from a to b's buffer; returns a's completion status.
  uint32_t write(vrnic_sge local, uint64_t remote, uint32_t rkey) {
    return rdma_one(VRNIC_WQE_RDMA_WRITE, local, remote, rkey);
  }
  // One RDMA READ into a's local SGE; returns a's completion status.
  uint32_t read(vrnic_sge local, uint64_t remote, uint32_t rkey) {
    return rdma_one(VRNIC_WQE_RDMA_READ, local, remote, rkey);
  }
  uint32_t rdma_one(uint32_t opcode, vrnic_sge local, uint64_t remote, uint32_t rkey) {
    auto h = sqe(opcode, 42);
    h.remote_addr = remote;
    h.rkey = rkey;
    dp_.post_send(a_, h, std::span(&local, 1));
    dp_.run();
    auto done = cqes(a_.qpn);
    EXPECT_EQ(done.size(), 1U);
    return done.empty() ? ~0U : status_of(done[0]);
  }

  bool unchanged(uint64_t gpa, const std::vector<std::byte>& before) {
    return std::memcmp(dp_.ram(gpa), before.data(), before.size()) == 0;
  }
  std::vector<std::byte> snapshot(uint64_t gpa, size_t n) {
    return {dp_.ram(gpa), dp_.ram(gpa) + n};
  }

  DataPath dp_;
  uint32_t pd_ = 0;
  uint32_t pd2_ = 0;
  DataPath::Cq cq_;
  DataPath::Qp a_;
  DataPath::Qp b_;
  uint64_t buf_a_ = 0;
  uint64_t buf_b_ = 0;
  uint32_t key_a_ = 0;
  uint32_t key_b_ = 0;
};

TEST_F(DataPathTest, SendWithImmLoopsBackThroughTheGid) {
  pair();
  const vrnic_sge rsge{buf_b_, 4096, key_b_};
  dp_.post_recv(b_, 77, std::span(&rsge, 1));
  auto h = sqe(VRNIC_WQE_SEND_WITH_IMM, 5);
  h.imm_data = 0xdeadbeef;
  const vrnic_sge ssge{buf_a_ + 100, 3000, key_a_};
  dp_.post_send(a_, h, std::span(&ssge, 1));
  dp_.run();
  auto sent = cqes(a_.qpn);
  // (cqes() drained the CQ: b's completion is in it too.)
  ASSERT_EQ(sent.size(), 1U);
  EXPECT_EQ(status_of(sent[0]), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(opcode_of(sent[0]), VRNIC_CQE_SEND);
  EXPECT_EQ(sent[0].wr_id, 5U);
  EXPECT_EQ(sent[0].wqe_idx, 0U);
  EXPECT_EQ(dp_.sq_ci(a_), 1U);  // the slot is free again
  EXPECT_EQ(std::memcmp(dp_.ram(buf_a_ + 100), dp_.ram(buf_b_), 3000), 0);
}

TEST_F(DataPathTest, ReceiveCompletionFields) {
  pair();
  const vrnic_sge rsge{buf_b_, 4096, key_b_};
  dp_.post_recv(b_, 77, std::span(&rsge, 1));
  auto h = sqe(VRNIC_WQE_SEND_WITH_IMM, 5);
  h.imm_data = 0x01020304;
  const vrnic_sge ssge{buf_a_, 1500, key_a_};
  dp_.post_send(a_, h, std::span(&ssge, 1));
  dp_.run();
  auto got = cqes(b_.qpn);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(status_of(got[0]), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(opcode_of(got[0]), VRNIC_CQE_RECV);
  EXPECT_EQ(got[0].wr_id, 77U);
  EXPECT_EQ(got[0].byte_len, 1500U);
  EXPECT_TRUE(got[0].has_imm);
  EXPECT_EQ(got[0].imm, 0x01020304U);
}

// Local keys: every SGE is checked against key, PD, access and bounds.
TEST_F(DataPathTest, LocalKeyChecks) {
  uint32_t other_pd_key = 0;
  uint32_t read_only = 0;
  ASSERT_EQ(dp_.reg_mr(pd2_, buf_a_, kBuf, VRNIC_ACCESS_ALL, &other_pd_key), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.reg_mr(pd_, buf_a_, kBuf, VRNIC_ACCESS_REMOTE_READ, &read_only),
            VRNIC_AQ_STATUS_OK);
  const struct {
    const char* what;
    vrnic_sge sge;
  } cases[] = {
      {"unknown index", {buf_a_, 64, key_a_ + 0x100000}},
      {"stale variant", {buf_a_, 64, key_a_ ^ 1}},
      {"MR of another PD", {buf_a_, 64, other_pd_key}},
      {"past the end", {buf_a_ + kBuf - 10, 64, key_a_}},
      {"before the start", {buf_a_ - 8, 64, key_a_}},
      {"wrapping the address space", {~uint64_t{0} - 16, 64, key_a_}},
  };
  for (const auto& c : cases) {
    pair();
    EXPECT_EQ(write(c.sge, buf_b_, key_b_), VRNIC_CQE_LOC_PROT_ERR) << c.what;
  }
  // A READ lands in local memory: it needs local write access.
  pair();
  auto h = sqe(VRNIC_WQE_RDMA_READ, 9);
  h.remote_addr = buf_b_;
  h.rkey = key_b_;
  const vrnic_sge into{buf_a_, 64, read_only};
  dp_.post_send(a_, h, std::span(&into, 1));
  dp_.run();
  auto done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(status_of(done[0]), VRNIC_CQE_LOC_PROT_ERR);
}

// Remote keys: checked on the responder; nothing is written on failure.
TEST_F(DataPathTest, RemoteKeyChecks) {
  uint32_t no_write = 0;
  uint32_t other_pd_key = 0;
  ASSERT_EQ(
      dp_.reg_mr(pd_, buf_b_, kBuf, VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_READ, &no_write),
      VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.reg_mr(pd2_, buf_b_, kBuf, VRNIC_ACCESS_ALL, &other_pd_key), VRNIC_AQ_STATUS_OK);
  uint32_t stale = 0;
  ASSERT_EQ(dp_.reg_mr(pd_, buf_b_, kBuf, VRNIC_ACCESS_ALL, &stale), VRNIC_AQ_STATUS_OK);
  auto dereg = vrnic_test::make_cmd(VRNIC_AQ_OP_DEREG_MR);
  dereg.dereg_mr.key = stale;
  ASSERT_EQ(dp_.drv().exec_status(dereg), VRNIC_AQ_STATUS_OK);
  const struct {
    const char* what;
    uint64_t remote;
    uint32_t rkey;
  } cases[] = {
      {"no remote write access", buf_b_, no_write},
      {"MR of another PD", buf_b_, other_pd_key},
      {"deregistered key", buf_b_, stale},
      {"past the end", buf_b_ + kBuf - 100, key_b_},
      {"before the start", buf_b_ - 64, key_b_},
      {"wrapping the address space", ~uint64_t{0} - 100, key_b_},
  };
  const auto before = snapshot(buf_b_ - 4096, kBuf + 8192);
  for (const auto& c : cases) {
    pair();
    EXPECT_EQ(write({buf_a_, 1024, key_a_}, c.remote, c.rkey), VRNIC_CQE_REM_ACCESS_ERR) << c.what;
    EXPECT_TRUE(unchanged(buf_b_ - 4096, before)) << c.what;
  }
  // The QP's own remote access flags count too.
  pair(VRNIC_ACCESS_REMOTE_READ);
  EXPECT_EQ(write({buf_a_, 1024, key_a_}, buf_b_, key_b_), VRNIC_CQE_REM_ACCESS_ERR);
  EXPECT_TRUE(unchanged(buf_b_ - 4096, before));
  // And with everything right, the write lands.
  pair();
  EXPECT_EQ(write({buf_a_, 1024, key_a_}, buf_b_ + 8, key_b_), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_a_), dp_.ram(buf_b_ + 8), 1024), 0);
}

TEST_F(DataPathTest, RegMrValidation) {
  auto reg = [&](uint64_t iova, uint64_t len, uint64_t pbl, uint32_t npages, uint32_t shift,
                 uint32_t access, uint32_t pdn) {
    auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_REG_MR);
    c.reg_mr.iova = iova;
    c.reg_mr.length = len;
    c.reg_mr.pbl_addr = pbl;
    c.reg_mr.npages = npages;
    c.reg_mr.page_shift = shift;
    c.reg_mr.access = access;
    c.reg_mr.pdn = pdn;
    return dp_.drv().exec_status(c);
  };
  const uint64_t pages = dp_.alloc(4 * DataPath::kPage);
  const uint64_t good = dp_.pbl(pages, 4);
  EXPECT_EQ(reg(pages, 4 * 4096, good, 4, 12, VRNIC_ACCESS_ALL, pd_), VRNIC_AQ_STATUS_OK);
  // The page list outside guest RAM, or misaligned.
  EXPECT_EQ(reg(pages, 4096, DataPath::kRamSize, 1, 12, 0, pd_), VRNIC_AQ_STATUS_BAD_ADDR);
  EXPECT_EQ(reg(pages, 4096, good + 3, 1, 12, 0, pd_), VRNIC_AQ_STATUS_BAD_ADDR);
  // A page outside guest RAM.
  const uint64_t bad = dp_.pbl(DataPath::kRamSize, 1);
  EXPECT_EQ(reg(0, 4096, bad, 1, 12, 0, pd_), VRNIC_AQ_STATUS_BAD_ADDR);
  // Sizes that do not add up.
  EXPECT_EQ(reg(pages, 5 * 4096, good, 4, 12, 0, pd_), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(reg(~uint64_t{0} - 4096, 8192, good, 2, 12, 0, pd_), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(reg(pages, 4096, good, 1, 11, 0, pd_), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(reg(pages, 4096, good, 0, 12, 0, pd_), VRNIC_AQ_STATUS_BAD_PARAM);
  // Unknown access bits, a PD that does not exist.
  EXPECT_EQ(reg(pages, 4096, good, 1, 12, 0x100, pd_), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_NE(reg(pages, 4096, good, 1, 12, 0, 999), VRNIC_AQ_STATUS_OK);
}

// REREG_MR of key: flags, and the new translation (len bytes at iova, in
// the pages at gpa), PD and rights, each 0 when its flag is not given.
int rereg(DataPath& dp, uint32_t key, uint32_t flags, uint64_t iova, uint64_t len, uint64_t gpa,
          uint32_t pdn, uint32_t access) {
  auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_REREG_MR, flags);
  c.rereg_mr.key = key;
  if ((flags & VRNIC_AQ_REREG_MR_F_TRANS) != 0) {
    const auto npages = static_cast<uint32_t>((len + DataPath::kPage - 1) / DataPath::kPage);
    c.rereg_mr.iova = iova;
    c.rereg_mr.length = len;
    c.rereg_mr.pbl_addr = dp.pbl(gpa, npages);
    c.rereg_mr.npages = npages;
    c.rereg_mr.page_shift = 12;
  }
  c.rereg_mr.pdn = pdn;
  c.rereg_mr.access = access;
  return dp.drv().exec_status(c);
}

// A new translation: the key stays, and reaches the new pages at the new
// address, no longer the old ones.
TEST_F(DataPathTest, ReregMrMovesTheRegionAndKeepsItsKey) {
  const uint64_t buf_c = dp_.alloc(kBuf);
  constexpr uint64_t kIova = 0x7f0000000000;
  ASSERT_EQ(rereg(dp_, key_b_, VRNIC_AQ_REREG_MR_F_TRANS, kIova, kBuf, buf_c, 0, 0),
            VRNIC_AQ_STATUS_OK);
  const auto old_b = snapshot(buf_b_, kBuf);
  pair();
  EXPECT_EQ(write({buf_a_, 1024, key_a_}, kIova + 4096 + 8, key_b_), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_a_), dp_.ram(buf_c + 4096 + 8), 1024), 0);
  pair();
  EXPECT_EQ(write({buf_a_, 64, key_a_}, buf_b_, key_b_), VRNIC_CQE_REM_ACCESS_ERR);
  EXPECT_TRUE(unchanged(buf_b_, old_b));
  // Locally too: an SGE with the key names the new range.
  pair();
  EXPECT_EQ(write({kIova, 512, key_b_}, buf_a_ + 4096, key_a_), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_c), dp_.ram(buf_a_ + 4096), 512), 0);
}

// New rights and a new PD apply to the next access; the old PD is free to go.
TEST_F(DataPathTest, ReregMrRightsAndPd) {
  ASSERT_EQ(rereg(dp_, key_b_, VRNIC_AQ_REREG_MR_F_ACCESS, 0, 0, 0, 0,
                  VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_READ),
            VRNIC_AQ_STATUS_OK);
  pair();
  EXPECT_EQ(write({buf_a_, 64, key_a_}, buf_b_, key_b_), VRNIC_CQE_REM_ACCESS_ERR);
  ASSERT_EQ(rereg(dp_, key_b_, VRNIC_AQ_REREG_MR_F_ACCESS, 0, 0, 0, 0, VRNIC_ACCESS_ALL),
            VRNIC_AQ_STATUS_OK);
  pair();
  EXPECT_EQ(write({buf_a_, 64, key_a_}, buf_b_, key_b_), VRNIC_CQE_SUCCESS);

  uint32_t pd3 = 0;
  ASSERT_EQ(dp_.create_pd(&pd3), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(rereg(dp_, key_b_, VRNIC_AQ_REREG_MR_F_PD, 0, 0, 0, pd3, 0), VRNIC_AQ_STATUS_OK);
  pair();
  EXPECT_EQ(write({buf_a_, 64, key_a_}, buf_b_, key_b_), VRNIC_CQE_REM_ACCESS_ERR);
  auto destroy = vrnic_test::make_cmd(VRNIC_AQ_OP_DESTROY_PD);
  destroy.destroy_pd.pdn = pd3;
  EXPECT_EQ(dp_.drv().exec_status(destroy), VRNIC_AQ_STATUS_BUSY);  // the MR is in it
  // All three at once, back into the QPs' PD.
  const uint64_t buf_c = dp_.alloc(kBuf);
  ASSERT_EQ(rereg(dp_, key_b_,
                  VRNIC_AQ_REREG_MR_F_TRANS | VRNIC_AQ_REREG_MR_F_PD | VRNIC_AQ_REREG_MR_F_ACCESS,
                  buf_c, kBuf, buf_c, pd_, VRNIC_ACCESS_ALL),
            VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.drv().exec_status(destroy), VRNIC_AQ_STATUS_OK);
  pair();
  EXPECT_EQ(write({buf_a_, 64, key_a_}, buf_c + 64, key_b_), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_a_), dp_.ram(buf_c + 64), 64), 0);
}

// What REREG_MR refuses, and that a refusal leaves the region as it was.
TEST_F(DataPathTest, ReregMrValidation) {
  constexpr uint32_t kTrans = VRNIC_AQ_REREG_MR_F_TRANS;
  constexpr uint32_t kAccess = VRNIC_AQ_REREG_MR_F_ACCESS;
  constexpr uint32_t kPd = VRNIC_AQ_REREG_MR_F_PD;
  const uint64_t buf_c = dp_.alloc(kBuf);
  // Nothing to change, a flag it does not know, INDIRECT without TRANS.
  EXPECT_EQ(rereg(dp_, key_b_, 0, 0, 0, 0, 0, 0), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(rereg(dp_, key_b_, kAccess | 0x100, 0, 0, 0, 0, 0), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(rereg(dp_, key_b_, kAccess | VRNIC_AQ_REREG_MR_F_INDIRECT, 0, 0, 0, 0, 0),
            VRNIC_AQ_STATUS_BAD_PARAM);
  // Fields of what does not change, reserved words, bad values.
  EXPECT_EQ(rereg(dp_, key_b_, kAccess, 0, 0, 0, pd2_, 0), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(rereg(dp_, key_b_, kPd, 0, 0, 0, pd2_, VRNIC_ACCESS_ALL), VRNIC_AQ_STATUS_BAD_PARAM);
  auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_REREG_MR, kAccess);
  c.rereg_mr.key = key_b_;
  c.rereg_mr.iova = 4096;
  EXPECT_EQ(dp_.drv().exec_status(c), VRNIC_AQ_STATUS_BAD_PARAM);
  c.rereg_mr.iova = 0;
  c.rereg_mr.rsvd[1] = 1;
  EXPECT_EQ(dp_.drv().exec_status(c), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(rereg(dp_, key_b_, kAccess, 0, 0, 0, 0, 0x100), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(rereg(dp_, key_b_, kPd, 0, 0, 0, 999, 0), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(rereg(dp_, key_b_, kTrans, buf_c, 0, buf_c, 0, 0), VRNIC_AQ_STATUS_BAD_PARAM);
  // Keys that name no registered region: another variant, a fast-register
  // MR, a window.
  EXPECT_EQ(rereg(dp_, key_b_ ^ 1, kAccess, 0, 0, 0, 0, 0), VRNIC_AQ_STATUS_NOT_FOUND);
  auto fr = vrnic_test::make_cmd(VRNIC_AQ_OP_ALLOC_MR);
  fr.alloc_mr.pdn = pd_;
  fr.alloc_mr.max_pages = 4;
  uint32_t fast = 0;
  ASSERT_EQ(dp_.exec_result(fr, &fast), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(rereg(dp_, fast, kAccess, 0, 0, 0, 0, 0), VRNIC_AQ_STATUS_NOT_FOUND);
  auto mw = vrnic_test::make_cmd(VRNIC_AQ_OP_ALLOC_MW);
  mw.alloc_mw.pdn = pd_;
  mw.alloc_mw.type = VRNIC_MW_TYPE_2;
  uint32_t window = 0;
  ASSERT_EQ(dp_.exec_result(mw, &window), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(rereg(dp_, window, kAccess, 0, 0, 0, 0, 0), VRNIC_AQ_STATUS_NOT_FOUND);
  // A new page outside guest RAM: refused, and the region is unchanged,
  // its rights too.
  EXPECT_EQ(rereg(dp_, key_b_, kTrans | kAccess, DataPath::kRamSize, 4096, DataPath::kRamSize, 0,
                  VRNIC_ACCESS_REMOTE_READ),
            VRNIC_AQ_STATUS_BAD_ADDR);
  pair();
  EXPECT_EQ(write({buf_a_, 256, key_a_}, buf_b_ + 16, key_b_), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_a_), dp_.ram(buf_b_ + 16), 256), 0);
}

// The kernel's local DMA key: a physical region addresses guest RAM by
// GPA, all of it and nothing else.
TEST_F(DataPathTest, PhysicalRegionCoversGuestRamOnly) {
  auto reg_phys = [&](uint64_t iova, uint32_t pdn, uint32_t* key) {
    auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_REG_MR, VRNIC_AQ_REG_MR_F_PHYS);
    c.reg_mr.iova = iova;
    c.reg_mr.pdn = pdn;
    c.reg_mr.access = VRNIC_ACCESS_LOCAL_WRITE;
    return dp_.exec_result(c, key);
  };
  uint32_t phys = 0;
  uint32_t junk = 0;
  ASSERT_EQ(reg_phys(0, pd_, &phys), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(reg_phys(4096, pd_, &junk), VRNIC_AQ_STATUS_BAD_PARAM);  // no ranges
  EXPECT_NE(reg_phys(0, 999, &junk), VRNIC_AQ_STATUS_OK);
  pair();
  const vrnic_sge rsge{buf_b_, 4096, key_b_};
  dp_.post_recv(b_, 1, std::span(&rsge, 1));
  // Any GPA in RAM, through the one key.
  const vrnic_sge ssge{buf_a_ + 8, 2000, phys};
  dp_.post_send(a_, sqe(VRNIC_WQE_SEND, 2), std::span(&ssge, 1));
  dp_.run();
  auto done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(status_of(done[0]), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_a_ + 8), dp_.ram(buf_b_), 2000), 0);
  // Past the end of RAM: a local protection error, nothing read.
  pair();
  const vrnic_sge outside{DataPath::kRamSize - 1000, 2000, phys};
  EXPECT_EQ(write(outside, buf_b_, key_b_), VRNIC_CQE_LOC_PROT_ERR);
}

// Device memory (REG_MR F_DM): a region of it is addressed from 0 and its
// bytes are the device's own, which WRITE fills and READ returns; it lies
// inside the device memory, starts 8-byte aligned, cannot persist and
// cannot be re-registered.
TEST_F(DataPathTest, DeviceMemoryRegions) {
  const std::span<std::byte> dm = dp_.device_memory();
  ASSERT_GE(dm.size(), 64U << 10);
  uint32_t key = 0;
  uint32_t junk = 0;
  constexpr uint32_t kRights = VRNIC_ACCESS_LOCAL_WRITE | VRNIC_ACCESS_REMOTE_WRITE |
                               VRNIC_ACCESS_REMOTE_READ | VRNIC_ACCESS_REMOTE_ATOMIC;
  ASSERT_EQ(dp_.reg_dm_mr(pd_, 8192 + 16, 10000, kRights, &key), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.reg_dm_mr(pd_, dm.size() - 4096, 8192, kRights, &junk), VRNIC_AQ_STATUS_BAD_ADDR)
      << "past the end";
  EXPECT_EQ(dp_.reg_dm_mr(pd_, 12, 100, kRights, &junk), VRNIC_AQ_STATUS_BAD_PARAM) << "unaligned";
  EXPECT_EQ(dp_.reg_dm_mr(pd_, 0, 100, kRights | VRNIC_ACCESS_FLUSH_PERSISTENT, &junk),
            VRNIC_AQ_STATUS_BAD_PARAM);
  // A region of no bytes: registered, and nothing reaches through it.
  uint32_t empty = 0;
  ASSERT_EQ(dp_.reg_dm_mr(pd_, 4096, 0, kRights, &empty), VRNIC_AQ_STATUS_OK);
  pair();
  // WRITE at 100 of the region: byte 8192 + 16 + 100 of the device memory.
  for (size_t i = 0; i < 5000; ++i) {
    *dp_.ram(buf_a_ + i) = std::byte(i * 7);
  }
  EXPECT_EQ(write(vrnic_sge{buf_a_, 5000, key_a_}, 100, key), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dm.data() + 8192 + 16 + 100, dp_.ram(buf_a_), 5000), 0);
  // Past its end (zero-based: 10000 bytes): a remote access error.
  EXPECT_EQ(write(vrnic_sge{buf_a_, 64, key_a_}, 9990, key), VRNIC_CQE_REM_ACCESS_ERR);
  // READ from it what the guest put there itself.
  pair();
  std::memset(dm.data() + 8192 + 16, 0x5a, 64);
  EXPECT_EQ(read(vrnic_sge{buf_b_ + 4096, 64, key_b_}, 0, key), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(*dp_.ram(buf_b_ + 4096), std::byte{0x5a});
  EXPECT_EQ(*dp_.ram(buf_b_ + 4096 + 63), std::byte{0x5a});
  EXPECT_EQ(write(vrnic_sge{buf_a_, 8, key_a_}, 0, empty), VRNIC_CQE_REM_ACCESS_ERR);
  // No REREG_MR of it.
  auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_REREG_MR, VRNIC_AQ_REREG_MR_F_PD);
  c.rereg_mr.key = key;
  c.rereg_mr.pdn = pd_;
  EXPECT_EQ(dp_.drv().exec_status(c), VRNIC_AQ_STATUS_NOT_FOUND);
  c = vrnic_test::make_cmd(VRNIC_AQ_OP_DEREG_MR);
  c.dereg_mr.key = key;
  EXPECT_EQ(dp_.drv().exec_status(c), VRNIC_AQ_STATUS_OK);
}

// The GSI QP is QP 1, one of it, and it speaks only Q_Key 0x80010000.
TEST_F(DataPathTest, GsiQpIsQpOneWithItsQkey) {
  DataPath::Qp gsi;
  gsi.type = VRNIC_QPT_UD;
  ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &gsi, 64, VRNIC_AQ_CREATE_QP_F_GSI), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(gsi.qpn, VRNIC_GSI_QPN);
  DataPath::Qp second;
  second.type = VRNIC_QPT_UD;
  EXPECT_EQ(dp_.create_qp(pd_, cq_, cq_, &second, 64, VRNIC_AQ_CREATE_QP_F_GSI),
            VRNIC_AQ_STATUS_BUSY);
  DataPath::Qp rc;
  EXPECT_EQ(dp_.create_qp(pd_, cq_, cq_, &rc, 64, VRNIC_AQ_CREATE_QP_F_GSI),
            VRNIC_AQ_STATUS_BAD_PARAM);
  DataPath::Qp ud;
  ud.type = VRNIC_QPT_UD;
  ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &ud), VRNIC_AQ_STATUS_OK);
  EXPECT_GT(ud.qpn, VRNIC_GSI_QPN);
  ASSERT_EQ(dp_.connect(gsi, 0), VRNIC_AQ_STATUS_OK);  // Q_Key 0x1234 asked for
  ASSERT_EQ(dp_.connect(ud, 0), VRNIC_AQ_STATUS_OK);

  const vrnic_av av = DataPath::loopback_av();
  const vrnic_sge rsge{buf_b_, 4096, key_b_};
  dp_.post_recv(gsi, 10, std::span(&rsge, 1));
  // A datagram to QP 1 with the QP's own Q_Key (0x1234) is not a MAD: dropped.
  auto h = sqe(VRNIC_WQE_SEND, 20);
  h.remote_qpn = VRNIC_GSI_QPN;
  h.remote_qkey = 0x1234;
  const vrnic_sge ssge{buf_a_, 256, key_a_};
  dp_.post_send(ud, h, std::span(&ssge, 1), &av);
  dp_.run();
  EXPECT_TRUE(cqes(gsi.qpn).empty());
  // From the GSI QP itself: sent with 0x80010000 whatever the WR says, and
  // accepted.
  h.remote_qkey = 0x1234;
  dp_.post_send(gsi, h, std::span(&ssge, 1), &av);
  dp_.run();
  auto got = cqes(gsi.qpn);
  ASSERT_EQ(got.size(), 2U);  // the send and the receive
  const auto& recv = opcode_of(got[0]) == VRNIC_CQE_RECV ? got[0] : got[1];
  EXPECT_EQ(status_of(recv), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(recv.wr_id, 10U);
  EXPECT_EQ(recv.src_qp, VRNIC_GSI_QPN);
  EXPECT_EQ(recv.byte_len, 256U + 40U);  // behind the GRH
}

// ::ffff:239.1.2.3, the GID rdma_cm gives an IPv4 group on RoCEv2.
constexpr std::array<uint8_t, 16> kGroup = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 1, 2, 3};

vrnic_av group_av() {
  vrnic_av av = DataPath::loopback_av();
  std::memcpy(av.dgid, kGroup.data(), kGroup.size());
  const std::array<uint8_t, 6> mac = {0x01, 0x00, 0x5e, 0x01, 0x02, 0x03};
  std::memcpy(av.dmac, mac.data(), mac.size());
  return av;
}

// A datagram to a group reaches every attached UD QP on the port (the
// sender's port loops it back), and only QPN 0xFFFFFF addresses a group.
TEST_F(DataPathTest, MulticastReachesEveryMember) {
  std::array<DataPath::Qp, 3> q;  // sender, two members
  for (auto& x : q) {
    x.type = VRNIC_QPT_UD;
    ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &x), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.connect(x, 0), VRNIC_AQ_STATUS_OK);
  }
  ASSERT_EQ(dp_.mcast(VRNIC_AQ_OP_ATTACH_MCAST, q[1].qpn, kGroup), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.mcast(VRNIC_AQ_OP_ATTACH_MCAST, q[2].qpn, kGroup), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.mcast(VRNIC_AQ_OP_ATTACH_MCAST, q[2].qpn, kGroup), VRNIC_AQ_STATUS_OK);  // again
  const vrnic_av av = group_av();
  // Each round's completions, by QPN.
  std::map<uint32_t, std::vector<vrnic::CqeFields>> done;
  auto send = [&](uint32_t dqpn, uint64_t wr_id) {
    for (int m = 1; m <= 2; ++m) {
      const vrnic_sge rsge{buf_b_ + m * 4096U, 4096, key_b_};
      dp_.post_recv(q[m], 100 + m, std::span(&rsge, 1));
    }
    auto h = sqe(VRNIC_WQE_SEND, wr_id);
    h.remote_qpn = dqpn;
    h.remote_qkey = 0x1234;
    const vrnic_sge ssge{buf_a_, 200, key_a_};
    dp_.post_send(q[0], h, std::span(&ssge, 1), &av);
    dp_.run();
    done.clear();
    while (auto e = dp_.poll(cq_)) {
      done[e->qpn].push_back(*e);
    }
  };
  send(vrnicd::roce::kMulticastQpn, 1);
  ASSERT_EQ(done[q[0].qpn].size(), 1U);
  EXPECT_EQ(status_of(done[q[0].qpn][0]), VRNIC_CQE_SUCCESS);
  for (int m = 1; m <= 2; ++m) {
    const auto& got = done[q[m].qpn];
    ASSERT_EQ(got.size(), 1U) << "member " << m;
    EXPECT_EQ(status_of(got[0]), VRNIC_CQE_SUCCESS);
    EXPECT_EQ(got[0].wr_id, 100U + m);
    EXPECT_EQ(got[0].src_qp, q[0].qpn);
    EXPECT_EQ(got[0].byte_len, 200U + 40U);
    EXPECT_EQ(std::memcmp(dp_.ram(buf_b_ + m * 4096U + 40), dp_.ram(buf_a_), 200), 0);
  }
  // To a member's own QPN, not 0xFFFFFF: no group delivery.
  const uint64_t dropped = dp_.dev().engine().stat(VRNIC_STAT_RX_DROPPED);
  send(q[1].qpn, 2);
  EXPECT_TRUE(done[q[1].qpn].empty());
  EXPECT_TRUE(done[q[2].qpn].empty());
  EXPECT_GT(dp_.dev().engine().stat(VRNIC_STAT_RX_DROPPED), dropped);
  // Detached: member 1 hears nothing more; member 2 takes the next one
  // (its receive from the last round is still posted).
  ASSERT_EQ(dp_.mcast(VRNIC_AQ_OP_DETACH_MCAST, q[1].qpn, kGroup), VRNIC_AQ_STATUS_OK);
  send(vrnicd::roce::kMulticastQpn, 3);
  EXPECT_TRUE(done[q[1].qpn].empty());
  EXPECT_EQ(done[q[2].qpn].size(), 1U);
}

// CREATE_QP's BLOCK_SELF_MCAST_LB: a member that sends to its group gets
// no copy of its own datagram (every other member does, and a member
// without the flag gets its own); a datagram from the wire is never its
// own, even from a QP of the same number elsewhere.
TEST_F(DataPathTest, MulticastSelfLoopbackCanBeBlocked) {
  std::array<DataPath::Qp, 3> q;  // q[0] blocks its own multicasts
  for (size_t i = 0; i < q.size(); ++i) {
    q[i].type = VRNIC_QPT_UD;
    ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &q[i], 64,
                            i == 0 ? VRNIC_AQ_CREATE_QP_F_BLOCK_SELF_MCAST_LB : 0),
              VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.connect(q[i], 0), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.mcast(VRNIC_AQ_OP_ATTACH_MCAST, q[i].qpn, kGroup), VRNIC_AQ_STATUS_OK);
  }
  std::vector<std::vector<std::byte>> wire;
  dp_.dev().engine().set_wire(
      [&](std::span<const std::byte> f) { wire.emplace_back(f.begin(), f.end()); });
  const vrnic_av av = group_av();
  // Receive completions by QPN after from sends one datagram (or after
  // frame comes from the wire, when given).
  auto round = [&](size_t from, const std::vector<std::byte>* frame) {
    for (size_t m = 0; m < q.size(); ++m) {
      const vrnic_sge rsge{buf_b_ + m * 4096U, 4096, key_b_};
      dp_.post_recv(q[m], 100 + m, std::span(&rsge, 1));
    }
    if (frame != nullptr) {
      EXPECT_TRUE(dp_.dev().receive_frame_st(*frame));
    } else {
      auto h = sqe(VRNIC_WQE_SEND, 1);
      h.remote_qpn = vrnicd::roce::kMulticastQpn;
      h.remote_qkey = 0x1234;
      const vrnic_sge ssge{buf_a_, 100, key_a_};
      dp_.post_send(q[from], h, std::span(&ssge, 1), &av);
    }
    dp_.run();
    std::map<uint32_t, int> recvs;
    while (auto e = dp_.poll(cq_)) {
      EXPECT_EQ(status_of(*e), VRNIC_CQE_SUCCESS);
      if (e->opcode == VRNIC_CQE_RECV) {
        EXPECT_EQ(e->src_qp, q[from].qpn);
        ++recvs[e->qpn];
      }
    }
    return recvs;
  };
  auto got = round(0, nullptr);
  EXPECT_EQ(got[q[0].qpn], 0) << "the blocking sender";
  EXPECT_EQ(got[q[1].qpn], 1);
  EXPECT_EQ(got[q[2].qpn], 1);
  got = round(1, nullptr);
  EXPECT_EQ(got[q[0].qpn], 1);
  EXPECT_EQ(got[q[1].qpn], 1) << "a sender without the flag";
  EXPECT_EQ(got[q[2].qpn], 1);
  // q[0]'s datagram as the wire carried it, coming back from the wire.
  ASSERT_EQ(wire.size(), 2U);
  const std::vector<std::byte> from_q0 = wire[0];
  got = round(0, &from_q0);
  EXPECT_EQ(got[q[0].qpn], 1) << "from the wire";
  EXPECT_EQ(got[q[1].qpn], 1);
  EXPECT_EQ(got[q[2].qpn], 1);
}

// Frames that leave the device carry their ICRC.  Frames between QPs of
// the device loop back inside it unsealed, and no ICRC is checked on them
// (hw-spec: Transport).  A datagram to a group with members here is both:
// the wire's copy is sealed, and each member gets the datagram.
TEST_F(DataPathTest, FramesThatLeaveAreSealed) {
  pair();
  std::vector<vrnicd::roce::DecodeStatus> wire;
  dp_.dev().engine().set_wire([&](std::span<const std::byte> f) {
    vrnicd::roce::Packet p;
    wire.push_back(vrnicd::roce::decode_frame(f, &p));
  });
  std::array<DataPath::Qp, 2> q;  // sender, member
  for (auto& x : q) {
    x.type = VRNIC_QPT_UD;
    ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &x), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.connect(x, 0), VRNIC_AQ_STATUS_OK);
  }
  ASSERT_EQ(dp_.mcast(VRNIC_AQ_OP_ATTACH_MCAST, q[1].qpn, kGroup), VRNIC_AQ_STATUS_OK);
  const vrnic_sge rsge{buf_b_, 4096, key_b_};
  dp_.post_recv(q[1], 7, std::span(&rsge, 1));
  vrnic_av remote = DataPath::loopback_av();
  remote.dgid[15] ^= 0x7;  // another host on the link
  const vrnic_av group = group_av();
  const vrnic_sge ssge{buf_a_, 1000, key_a_};
  for (const vrnic_av* av : {static_cast<const vrnic_av*>(&remote), &group}) {
    auto h = sqe(VRNIC_WQE_SEND, 1);
    h.remote_qpn = av == &remote ? 77 : vrnicd::roce::kMulticastQpn;
    h.remote_qkey = 0x1234;
    dp_.post_send(q[0], h, std::span(&ssge, 1), av);
    dp_.run();
  }
  ASSERT_EQ(wire.size(), 2U);
  EXPECT_EQ(wire[0], vrnicd::roce::DecodeStatus::kOk) << "to another host";
  EXPECT_EQ(wire[1], vrnicd::roce::DecodeStatus::kOk) << "to the group";
  auto got = cqes(q[1].qpn);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(status_of(got[0]), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_b_ + 40), dp_.ram(buf_a_), 1000), 0);
  // RC between a and b: nothing on the wire, every byte delivered, and no
  // ICRC error for the unsealed frames.
  wire.clear();
  ASSERT_EQ(write({buf_a_, 8192, key_a_}, buf_b_, key_b_), VRNIC_CQE_SUCCESS);
  EXPECT_TRUE(wire.empty());
  EXPECT_EQ(std::memcmp(dp_.ram(buf_b_), dp_.ram(buf_a_), 8192), 0);
  EXPECT_EQ(dp_.dev().engine().stat(VRNIC_STAT_ICRC_ERRORS), 0U);
}

// One end of a connection between two devices: a device, and on it a PD,
// a CQ, an RC QP and a registered buffer of kBuf random bytes.
struct CableEnd {
  explicit CableEnd(uint8_t host, uint32_t seed, uint32_t gid_type = VRNIC_GID_TYPE_ROCE_V2) {
    dp->set_host(host);
    dp->set_gid_type(gid_type);
    ok = dp->bring_up() && dp->create_pd(&pd) == VRNIC_AQ_STATUS_OK &&
         dp->create_cq(8, &cq) == VRNIC_AQ_STATUS_OK &&
         dp->create_qp(pd, cq, cq, &qp) == VRNIC_AQ_STATUS_OK && (buf = dp->alloc(kBuf)) != 0 &&
         dp->reg_mr(pd, buf, kBuf, VRNIC_ACCESS_ALL, &key) == VRNIC_AQ_STATUS_OK;
    std::mt19937 g(seed);
    for (size_t i = 0; ok && i < kBuf; ++i) {
      *dp->ram(buf + i) = std::byte(g());
    }
  }
  bool connect(const CableEnd& peer) {
    return dp->connect(qp, peer.qp.qpn, VRNIC_ACCESS_ALL, 3, peer.dp->av()) == VRNIC_AQ_STATUS_OK;
  }
  std::unique_ptr<DataPath> dp = std::make_unique<DataPath>();  // 32 MiB: on the heap
  bool ok = false;
  uint32_t pd = 0;
  DataPath::Cq cq;
  DataPath::Qp qp;
  uint64_t buf = 0;
  uint32_t key = 0;
};

// Two devices on a cable: RDMA WRITE, READ and SEND between them in frames
// that leave each device sealed, each taken by the other as RoCEv2 with a
// good ICRC, and every byte where it belongs.
TEST(CableTest, TwoDevicesTalkRcOverTheWire) {
  CableEnd a(1, 1);
  CableEnd b(2, 2);
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_TRUE(a.connect(b) && b.connect(a));
  vrnic_test::Cable cable(*a.dp, *b.dp);
  auto done = [&](CableEnd& e, size_t n) {
    std::vector<uint32_t> st;
    while (auto c = e.dp->poll(e.cq)) {
      st.push_back(c->status);
    }
    return st.size() == n && std::ranges::all_of(st, [](uint32_t x) { return x == 0; });
  };
  // WRITE 40,000 bytes into b (40 frames at MTU 1024), READ 30,000 of b's
  // back into a, SEND 3,000 into a receive of b's.
  auto w = sqe(VRNIC_WQE_RDMA_WRITE, 1);
  w.remote_addr = b.buf;
  w.rkey = b.key;
  const vrnic_sge wsge{a.buf, 40000, a.key};
  a.dp->post_send(a.qp, w, std::span(&wsge, 1));
  cable.run();
  ASSERT_TRUE(done(a, 1));
  EXPECT_EQ(std::memcmp(b.dp->ram(b.buf), a.dp->ram(a.buf), 40000), 0);
  auto r = sqe(VRNIC_WQE_RDMA_READ, 2);
  r.remote_addr = b.buf + 40000;
  r.rkey = b.key;
  const vrnic_sge rsge{a.buf + 40000, 20000, a.key};
  a.dp->post_send(a.qp, r, std::span(&rsge, 1));
  cable.run();
  ASSERT_TRUE(done(a, 1));
  EXPECT_EQ(std::memcmp(a.dp->ram(a.buf + 40000), b.dp->ram(b.buf + 40000), 20000), 0);
  const vrnic_sge recv{b.buf, 4096, b.key};
  b.dp->post_recv(b.qp, 9, std::span(&recv, 1));
  const vrnic_sge ssge{a.buf + 100, 3000, a.key};
  a.dp->post_send(a.qp, sqe(VRNIC_WQE_SEND, 3), std::span(&ssge, 1));
  cable.run();
  ASSERT_TRUE(done(a, 1));
  ASSERT_TRUE(done(b, 1));
  EXPECT_EQ(std::memcmp(b.dp->ram(b.buf), a.dp->ram(a.buf + 100), 3000), 0);
  // 40 + 3 data frames and their ACKs, 20 READ responses and the request.
  EXPECT_GE(cable.carried(), 40U + 3 + 20 + 1 + 2);
  EXPECT_EQ(cable.refused(), 0U);
  for (const CableEnd* e : {&a, &b}) {
    EXPECT_EQ(e->dp->dev().engine().stat(VRNIC_STAT_ICRC_ERRORS), 0U);
  }
}

// The same over GIDs of type RoCEv1: every frame carries Ethertype 0x8915
// and a GRH, none goes out as IP, and each is taken with a good ICRC.
TEST(CableTest, TwoDevicesTalkRcOverRoceV1) {
  CableEnd a(1, 1, VRNIC_GID_TYPE_ROCE_V1);
  CableEnd b(2, 2, VRNIC_GID_TYPE_ROCE_V1);
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_TRUE(a.connect(b) && b.connect(a));
  vrnic_test::Cable cable(*a.dp, *b.dp);
  auto w = sqe(VRNIC_WQE_RDMA_WRITE, 1);
  w.remote_addr = b.buf;
  w.rkey = b.key;
  const vrnic_sge wsge{a.buf, 5000, a.key};
  a.dp->post_send(a.qp, w, std::span(&wsge, 1));
  auto r = sqe(VRNIC_WQE_RDMA_READ, 2);
  r.remote_addr = b.buf + 8000;
  r.rkey = b.key;
  const vrnic_sge rsge{a.buf + 8000, 3000, a.key};
  a.dp->post_send(a.qp, r, std::span(&rsge, 1));
  cable.run();
  for (int i = 0; i < 2; ++i) {
    const auto c = a.dp->poll(a.cq);
    ASSERT_TRUE(c.has_value()) << i;
    EXPECT_EQ(c->status, VRNIC_CQE_SUCCESS) << i;
  }
  EXPECT_EQ(std::memcmp(b.dp->ram(b.buf), a.dp->ram(a.buf), 5000), 0);
  EXPECT_EQ(std::memcmp(a.dp->ram(a.buf + 8000), b.dp->ram(b.buf + 8000), 3000), 0);
  // 5 WRITE frames, 1 READ request, 3 responses, and ACKs.
  EXPECT_GE(cable.carried(), 5U + 1 + 3 + 1);
  EXPECT_EQ(cable.carried(0x8915), cable.carried());
  EXPECT_EQ(cable.refused(), 0U);
  for (const CableEnd* e : {&a, &b}) {
    EXPECT_EQ(e->dp->dev().engine().stat(VRNIC_STAT_ICRC_ERRORS), 0U);
  }
}

// A UD datagram over RoCEv1: the receive buffer starts with the GRH as it
// came (IP version 6, next header 0x1b, the GIDs), and the completion says
// RoCEv1 and not IPv4, so that the driver reports the network type.
TEST(CableTest, UdOverRoceV1DeliversTheGrh) {
  CableEnd a(1, 1, VRNIC_GID_TYPE_ROCE_V1);
  CableEnd b(2, 2, VRNIC_GID_TYPE_ROCE_V1);
  ASSERT_TRUE(a.ok && b.ok);
  DataPath::Qp ua;
  DataPath::Qp ub;
  ua.type = ub.type = VRNIC_QPT_UD;
  ASSERT_EQ(a.dp->create_qp(a.pd, a.cq, a.cq, &ua), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(b.dp->create_qp(b.pd, b.cq, b.cq, &ub), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(a.dp->connect(ua, 0), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(b.dp->connect(ub, 0), VRNIC_AQ_STATUS_OK);
  vrnic_test::Cable cable(*a.dp, *b.dp);
  std::memset(b.dp->ram(b.buf), 0, 4096);
  const vrnic_sge recv{b.buf, 4096, b.key};
  b.dp->post_recv(ub, 5, std::span(&recv, 1));
  auto h = sqe(VRNIC_WQE_SEND, 6);
  h.remote_qpn = ub.qpn;
  h.remote_qkey = 0x1234;
  const vrnic_sge ssge{a.buf, 300, a.key};
  const vrnic_av to_b = b.dp->av();
  a.dp->post_send(ua, h, std::span(&ssge, 1), &to_b);
  cable.run();
  EXPECT_EQ(cable.carried(0x8915), 1U);
  const auto c = b.dp->poll(b.cq);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->status, VRNIC_CQE_SUCCESS);
  EXPECT_EQ(c->byte_len, 40U + 300);
  EXPECT_TRUE(c->grh);
  EXPECT_TRUE(c->roce_v1);
  EXPECT_FALSE(c->ipv4);
  EXPECT_EQ(c->src_qp, ua.qpn);
  const std::byte* grh = b.dp->ram(b.buf);
  EXPECT_EQ(std::to_integer<unsigned>(grh[0]) >> 4, 6U);
  EXPECT_EQ(std::to_integer<unsigned>(grh[6]), 0x1bU);
  EXPECT_EQ(std::memcmp(grh + 8, a.dp->av().dgid, 16), 0) << "source GID";
  EXPECT_EQ(std::memcmp(grh + 24, to_b.dgid, 16), 0) << "destination GID";
  EXPECT_EQ(std::memcmp(grh + 40, a.dp->ram(a.buf), 300), 0);
}

TEST_F(DataPathTest, MulticastAttachRules) {
  dp_.cfg().limits.max_mcast_grp = 2;
  dp_.cfg().limits.max_mcast_qp_attach = 2;
  std::array<DataPath::Qp, 3> ud;
  for (auto& x : ud) {
    x.type = VRNIC_QPT_UD;
    ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &x), VRNIC_AQ_STATUS_OK);
  }
  DataPath::Qp rc;
  ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &rc), VRNIC_AQ_STATUS_OK);
  const uint16_t attach = VRNIC_AQ_OP_ATTACH_MCAST;
  const uint16_t detach = VRNIC_AQ_OP_DETACH_MCAST;
  EXPECT_EQ(dp_.mcast(attach, rc.qpn, kGroup), VRNIC_AQ_STATUS_BAD_PARAM);             // UD only
  EXPECT_EQ(dp_.mcast(attach, ud[0].qpn, DataPath::kGid), VRNIC_AQ_STATUS_BAD_PARAM);  // unicast
  EXPECT_EQ(dp_.mcast(attach, 999, kGroup), VRNIC_AQ_STATUS_NOT_FOUND);
  EXPECT_EQ(dp_.mcast(detach, ud[0].qpn, kGroup), VRNIC_AQ_STATUS_NOT_FOUND);  // not a member
  std::array<uint8_t, 16> v6 = {0xff, 0x0e};                                   // ff0e::1
  v6[15] = 1;
  std::array<uint8_t, 16> v6b = v6;
  v6b[15] = 2;
  EXPECT_EQ(dp_.mcast(attach, ud[0].qpn, kGroup), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.mcast(attach, ud[1].qpn, kGroup), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.mcast(attach, ud[2].qpn, kGroup), VRNIC_AQ_STATUS_NO_RESOURCES);  // group full
  EXPECT_EQ(dp_.mcast(attach, ud[0].qpn, v6), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.mcast(attach, ud[0].qpn, v6b), VRNIC_AQ_STATUS_NO_RESOURCES);  // table full
  // Destroying a QP detaches it everywhere: v6 is empty, so gone, and
  // there is room for another group.
  ASSERT_EQ(dp_.destroy_qp(ud[0].qpn), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.mcast(attach, ud[2].qpn, kGroup), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.mcast(attach, ud[1].qpn, v6b), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.mcast(detach, ud[1].qpn, kGroup), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.mcast(detach, ud[1].qpn, kGroup), VRNIC_AQ_STATUS_NOT_FOUND);
}

// Counter sets count for the QPs bound to them, from the binding on, as
// well as the port's counters.
TEST_F(DataPathTest, CounterSetsCountPerQp) {
  pair();
  uint32_t s1 = 0;
  uint32_t s2 = 0;
  ASSERT_EQ(dp_.counter(VRNIC_AQ_OP_ALLOC_COUNTER, 0, 0, nullptr, &s1), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.counter(VRNIC_AQ_OP_ALLOC_COUNTER, 0, 0, nullptr, &s2), VRNIC_AQ_STATUS_OK);
  EXPECT_NE(s1, 0U);
  EXPECT_NE(s1, s2);
  ASSERT_EQ(dp_.counter(VRNIC_AQ_OP_SET_QP_COUNTER, s1, a_.qpn), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.counter(VRNIC_AQ_OP_SET_QP_COUNTER, s2, b_.qpn), VRNIC_AQ_STATUS_OK);
  const uint64_t port_tx = dp_.dev().engine().stat(VRNIC_STAT_TX_PACKETS);
  // 3000 bytes: three 1024-byte packets from a, an ACK from b.
  ASSERT_EQ(write({buf_a_, 3000, key_a_}, buf_b_, key_b_), VRNIC_CQE_SUCCESS);
  vrnic_stats sa{};
  vrnic_stats sb{};
  ASSERT_EQ(dp_.counter(VRNIC_AQ_OP_QUERY_COUNTER, s1, 0, &sa), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.counter(VRNIC_AQ_OP_QUERY_COUNTER, s2, 0, &sb), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(sa.counter[VRNIC_STAT_WQES], 1U);
  EXPECT_EQ(sa.counter[VRNIC_STAT_TX_PACKETS], 3U);
  EXPECT_GT(sa.counter[VRNIC_STAT_TX_BYTES], 3000U);
  EXPECT_EQ(sa.counter[VRNIC_STAT_RX_PACKETS], 1U);  // the ACK
  EXPECT_EQ(sb.counter[VRNIC_STAT_RX_PACKETS], 3U);
  EXPECT_EQ(sb.counter[VRNIC_STAT_TX_PACKETS], 1U);
  EXPECT_EQ(sb.counter[VRNIC_STAT_WQES], 0U);
  EXPECT_EQ(sa.counter[VRNIC_STAT_QPS], 0U);  // not a per-QP counter
  EXPECT_EQ(dp_.dev().engine().stat(VRNIC_STAT_TX_PACKETS), port_tx + 4);
  // Unbound, a QP counts into no set; a set in use cannot go.
  EXPECT_EQ(dp_.counter(VRNIC_AQ_OP_DEALLOC_COUNTER, s1), VRNIC_AQ_STATUS_BUSY);
  ASSERT_EQ(dp_.counter(VRNIC_AQ_OP_SET_QP_COUNTER, 0, a_.qpn), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(write({buf_a_, 100, key_a_}, buf_b_, key_b_), VRNIC_CQE_SUCCESS);
  ASSERT_EQ(dp_.counter(VRNIC_AQ_OP_QUERY_COUNTER, s1, 0, &sa), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(sa.counter[VRNIC_STAT_WQES], 1U);
  EXPECT_EQ(dp_.counter(VRNIC_AQ_OP_DEALLOC_COUNTER, s1), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.counter(VRNIC_AQ_OP_QUERY_COUNTER, s1, 0, &sa), VRNIC_AQ_STATUS_NOT_FOUND);
  EXPECT_EQ(dp_.counter(VRNIC_AQ_OP_SET_QP_COUNTER, s1, a_.qpn), VRNIC_AQ_STATUS_NOT_FOUND);
  EXPECT_EQ(dp_.counter(VRNIC_AQ_OP_SET_QP_COUNTER, s2, 999), VRNIC_AQ_STATUS_NOT_FOUND);
  EXPECT_EQ(dp_.counter(VRNIC_AQ_OP_DEALLOC_COUNTER, 0), VRNIC_AQ_STATUS_NOT_FOUND);
  // The table holds max_counter_sets sets.
  uint32_t n = 1;  // s2
  for (uint32_t id = 0;
       dp_.counter(VRNIC_AQ_OP_ALLOC_COUNTER, 0, 0, nullptr, &id) == VRNIC_AQ_STATUS_OK;) {
    ++n;
  }
  EXPECT_EQ(n, dp_.cfg().limits.max_counter_sets);
}

// The transitions the device accepts are those of the IB spec (and of
// ib_modify_qp_is_ok), with the attributes each one requires.
TEST_F(DataPathTest, QpStateMachine) {
  DataPath::Qp q;
  ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &q), VRNIC_AQ_STATUS_OK);
  auto to = [&](uint32_t state, uint32_t extra_mask = 0, vrnic_qp_attr a = {}) {
    a.state = state;
    return dp_.modify_qp(q.qpn, VRNIC_QP_ATTR_STATE | extra_mask, a);
  };
  auto state = [&] {
    auto a = dp_.query_qp(q.qpn);
    return a ? a->state : ~0U;
  };
  EXPECT_EQ(state(), VRNIC_QPS_RESET);
  EXPECT_EQ(to(VRNIC_QPS_RTR), VRNIC_AQ_STATUS_BAD_PARAM);  // RESET -> RTR
  EXPECT_EQ(to(VRNIC_QPS_RTS), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(to(VRNIC_QPS_SQD), VRNIC_AQ_STATUS_BAD_PARAM);
  vrnic_qp_attr init{};
  init.port = 1;
  init.access = VRNIC_ACCESS_REMOTE_WRITE;
  EXPECT_EQ(to(VRNIC_QPS_INIT, VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_ACCESS,
               init),
            VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(state(), VRNIC_QPS_INIT);
  EXPECT_EQ(to(VRNIC_QPS_RTS), VRNIC_AQ_STATUS_BAD_PARAM);  // INIT -> RTS
  EXPECT_EQ(to(VRNIC_QPS_RTR), VRNIC_AQ_STATUS_BAD_PARAM);  // RC needs a path
  vrnic_qp_attr rtr{};
  rtr.path_mtu = 3;
  rtr.dest_qpn = q.qpn;
  rtr.av = DataPath::loopback_av();
  rtr.max_dest_rd_atomic = 1;
  rtr.min_rnr_timer = 1;
  const uint32_t rtr_mask = VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN | VRNIC_QP_ATTR_RQ_PSN |
                            VRNIC_QP_ATTR_AV | VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC |
                            VRNIC_QP_ATTR_MIN_RNR_TIMER;
  rtr.av.sgid_index = 99;  // no such GID
  EXPECT_EQ(to(VRNIC_QPS_RTR, rtr_mask, rtr), VRNIC_AQ_STATUS_BAD_PARAM);
  rtr.av.sgid_index = 0;
  EXPECT_EQ(to(VRNIC_QPS_RTR, rtr_mask, rtr), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(to(VRNIC_QPS_RTS), VRNIC_AQ_STATUS_BAD_PARAM);  // RC needs timeouts, PSN
  vrnic_qp_attr rts{};
  rts.timeout = 14;
  rts.retry_cnt = 7;
  rts.rnr_retry = 7;
  rts.max_rd_atomic = 1;
  const uint32_t rts_mask = VRNIC_QP_ATTR_SQ_PSN | VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT |
                            VRNIC_QP_ATTR_RNR_RETRY | VRNIC_QP_ATTR_MAX_RD_ATOMIC;
  EXPECT_EQ(to(VRNIC_QPS_RTS, rts_mask, rts), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(to(VRNIC_QPS_INIT), VRNIC_AQ_STATUS_BAD_PARAM);  // no way back but RESET/ERR
  EXPECT_EQ(to(VRNIC_QPS_SQD), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(state(), VRNIC_QPS_SQD);
  EXPECT_EQ(to(VRNIC_QPS_RTS), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(to(VRNIC_QPS_SQE), VRNIC_AQ_STATUS_BAD_PARAM);  // only the device enters SQE
  EXPECT_EQ(to(VRNIC_QPS_ERR), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(to(VRNIC_QPS_RTS), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(to(VRNIC_QPS_RESET), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(state(), VRNIC_QPS_RESET);
  EXPECT_EQ(to(7), VRNIC_AQ_STATUS_BAD_PARAM);  // no such state
}

// A send WQE the device cannot parse completes with an error, in order,
// and never reaches outside the QP's ring.
TEST_F(DataPathTest, MalformedWqesComplete) {
  pair();
  auto h = raw_sqe(VRNIC_WQE_SEND, 1);
  h.ctrl |= vrnic::field_prep<VRNIC_WQE_CTRL_NUM_SGE_MASK>(200);  // more SGEs than fit
  std::vector<std::byte> w(256);
  std::memcpy(w.data(), &h, sizeof(h));
  dp_.post_send_raw(a_, w);
  dp_.run();
  auto done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(status_of(done[0]), VRNIC_CQE_LOC_QP_OP_ERR);

  pair();
  h = raw_sqe(0x7f, 2);  // no such opcode
  std::memcpy(w.data(), &h, sizeof(h));
  dp_.post_send_raw(a_, w);
  dp_.run();
  done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(status_of(done[0]), VRNIC_CQE_LOC_QP_OP_ERR);
}

// ATOMIC_WRITE through the device: the WQE's compare_add lands in guest
// memory as the bytes it holds, the completion says ATOMIC_WRITE with
// byte_len 8.  The WQE carries no SGEs: one that has some is malformed.
TEST_F(DataPathTest, AtomicWriteLandsItsBytesInGuestMemory) {
  pair();
  auto h = sqe(VRNIC_WQE_ATOMIC_WRITE, 7);
  h.remote_addr = buf_b_ + 64;
  h.rkey = key_b_;
  h.compare_add = 0x0102030405060708ULL;
  dp_.post_send(a_, h, {});
  dp_.run();
  auto done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(status_of(done[0]), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(done[0].opcode, static_cast<uint32_t>(VRNIC_CQE_ATOMIC_WRITE));
  EXPECT_EQ(done[0].byte_len, 8U);
  const std::array<uint8_t, 8> want = {8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_EQ(std::memcmp(dp_.ram(buf_b_ + 64), want.data(), want.size()), 0);
  EXPECT_TRUE(cqes(b_.qpn).empty()) << "the responder's receive queue is not touched";

  pair();
  const auto before = snapshot(buf_b_, 4096);
  const vrnic_sge local{buf_a_, 8, key_a_};
  h.remote_addr = buf_b_ + 128;
  dp_.post_send(a_, h, std::span(&local, 1));
  dp_.run();
  done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(status_of(done[0]), VRNIC_CQE_LOC_QP_OP_ERR);
  EXPECT_EQ(done[0].vendor_err, static_cast<uint32_t>(VRNIC_VERR_WQE_LAYOUT));
  EXPECT_TRUE(unchanged(buf_b_, before));
}

// FLUSH through the device, from the shared codec's WQE: of global
// visibility it completes as FLUSH with the range's length; of persistence
// it is refused where guest RAM cannot persist (here, the test's memory),
// as a remote access error.  A WQE with SGEs is malformed.
TEST_F(DataPathTest, FlushCompletesAndPersistenceNeedsAFile) {
  const auto post_flush = [&](uint32_t type_level, uint32_t nsge) {
    std::vector<std::byte> w(256);
    const vrnic::SqeWriter wr(w.data(), w.size(), false);
    wr.begin(9, VRNIC_WQE_FLUSH, VRNIC_WQE_CTRL_SIGNALED);
    wr.set_remote(buf_b_ + 4096, key_b_);
    wr.set_flush(type_level, 8192);
    if (nsge != 0) {
      const vrnic_sge local{buf_a_, 8, key_a_};
      ASSERT_TRUE(wr.set_sges(std::span(&local, 1)));
    }
    dp_.post_send_raw(a_, w);
    dp_.run();
  };
  pair();
  post_flush(VRNIC_FLUSH_GLOBAL, 0);
  auto done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(status_of(done[0]), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(done[0].opcode, static_cast<uint32_t>(VRNIC_CQE_FLUSH));
  EXPECT_EQ(done[0].byte_len, 8192U);
  post_flush(VRNIC_FLUSH_GLOBAL | (VRNIC_FLUSH_LEVEL_MR << 4), 0);
  done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(status_of(done[0]), VRNIC_CQE_SUCCESS);

  post_flush(VRNIC_FLUSH_PERSISTENT, 0);
  done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(status_of(done[0]), VRNIC_CQE_REM_ACCESS_ERR);

  pair();
  post_flush(VRNIC_FLUSH_GLOBAL, 1);
  done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(status_of(done[0]), VRNIC_CQE_LOC_QP_OP_ERR);
  EXPECT_EQ(done[0].vendor_err, static_cast<uint32_t>(VRNIC_VERR_WQE_LAYOUT));
}

}  // namespace

namespace {

// An RC WRITE_ONLY frame for QP dest_qp, as a peer on the device's own GID
// would send it: 64 bytes of 0xab at va through rkey, PSN psn.
std::vector<std::byte> write_frame(uint32_t dest_qp, uint32_t psn, uint64_t va, uint32_t rkey,
                                   uint8_t src_last = DataPath::kGid[15]) {
  static const std::vector<std::byte> payload(64, std::byte{0xab});
  vrnicd::roce::Packet p;
  std::copy(DataPath::kGid.begin(), DataPath::kGid.end(), p.path.sgid.begin());
  p.path.dgid = p.path.sgid;
  p.path.sgid[15] = src_last;
  std::copy(DataPath::kMac.begin(), DataPath::kMac.end(), p.path.smac.begin());
  p.path.dmac = p.path.smac;
  p.bth.opcode = vrnicd::roce::kWriteOnly;
  p.bth.dest_qp = dest_qp;
  p.bth.psn = psn;
  p.reth = {va, rkey, static_cast<uint32_t>(payload.size())};
  p.payload = payload;
  std::vector<std::byte> frame;
  vrnicd::roce::encode_frame(p, &frame);
  return frame;
}

// Refused packets are counted by reason in the device's statistics
// (issue 9, defect 5): a WRITE from a stranger, and one through a bad rkey.
TEST_F(DataPathTest, RefusedPacketsAreCounted) {
  pair();
  auto& eng = dp_.dev().engine();
  const uint64_t addr = eng.stat(VRNIC_STAT_RX_ADDR_ERRORS);
  const uint64_t key = eng.stat(VRNIC_STAT_RX_KEY_ERRORS);
  const std::vector<std::byte> before(dp_.ram(buf_b_), dp_.ram(buf_b_) + 64);
  ASSERT_TRUE(dp_.dev().receive_frame_st(write_frame(b_.qpn, 100, buf_b_, key_b_, 99)));
  EXPECT_EQ(eng.stat(VRNIC_STAT_RX_ADDR_ERRORS), addr + 1);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_b_), before.data(), before.size()), 0);
  ASSERT_TRUE(dp_.dev().receive_frame_st(write_frame(b_.qpn, 100, buf_b_, key_b_ ^ 0x100)));
  EXPECT_EQ(eng.stat(VRNIC_STAT_RX_KEY_ERRORS), key + 1);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_b_), before.data(), before.size()), 0);
}

// Outside READY the device runs no QP and lets no frame reach one (issue 9,
// defect 1): the driver may be taking back the memory.  After the device
// goes FATAL, a WRITE through a valid rkey changes nothing and a posted
// WQE does not run; before, the same frame lands.
TEST_F(DataPathTest, OutsideReadyNoQpRunsAndNoFrameLands) {
  pair();
  const std::vector<std::byte> frame = write_frame(b_.qpn, 100, buf_b_, key_b_);
  const std::vector<std::byte> before(dp_.ram(buf_b_), dp_.ram(buf_b_) + 64);
  ASSERT_TRUE(dp_.dev().receive_frame_st(frame));
  EXPECT_EQ(*dp_.ram(buf_b_), std::byte{0xab});  // READY: it lands

  std::memcpy(dp_.ram(buf_b_), before.data(), before.size());
  dp_.drv().set_reg(VRNIC_REG_AQ_SQ_PI, 1000);  // an overrun: FATAL
  dp_.drv().ring();
  ASSERT_EQ(dp_.dev().state(), VRNIC_STATE_FATAL);
  const uint64_t dropped = dp_.dev().engine().stat(VRNIC_STAT_RX_DROPPED);
  EXPECT_TRUE(dp_.dev().receive_frame_st(write_frame(b_.qpn, 101, buf_b_, key_b_)));
  EXPECT_EQ(std::memcmp(dp_.ram(buf_b_), before.data(), before.size()), 0);
  EXPECT_EQ(dp_.dev().engine().stat(VRNIC_STAT_RX_DROPPED), dropped + 1);
  const vrnic_sge local{buf_a_, 64, key_a_};
  auto h = sqe(VRNIC_WQE_RDMA_WRITE, 1);
  h.remote_addr = buf_b_ + 128;
  h.rkey = key_b_;
  dp_.post_send(a_, h, std::span(&local, 1));
  dp_.run();
  EXPECT_FALSE(dp_.poll(cq_).has_value());
  EXPECT_FALSE(dp_.dev().engine_poll_st());
}

// RESET stops all DMA from the moment it is written, not from the moment
// the CTRL doorbell is read (issue 24, defect 1): a device that was only
// stalled while vrnic.ko gave up on it must not execute the frames and
// WQEs queued meanwhile into pages the guest has reused.  CTRL is written
// and its doorbell not rung; a WRITE frame through a valid rkey does not
// land, a posted WQE does not run, and the device is in RESET.
TEST_F(DataPathTest, ResetWrittenStopsDmaBeforeItsDoorbell) {
  pair();
  const std::vector<std::byte> before(dp_.ram(buf_b_), dp_.ram(buf_b_) + 256);
  const vrnic_sge local{buf_a_, 64, key_a_};
  auto h = sqe(VRNIC_WQE_RDMA_WRITE, 1);
  h.remote_addr = buf_b_ + 128;
  h.rkey = key_b_;
  dp_.post_send(a_, h, std::span(&local, 1));
  dp_.drv().set_reg(VRNIC_REG_CTRL, VRNIC_CTRL_RESET);  // no ring()

  EXPECT_TRUE(dp_.dev().receive_frame_st(write_frame(b_.qpn, 100, buf_b_, key_b_)));
  EXPECT_EQ(std::memcmp(dp_.ram(buf_b_), before.data(), before.size()), 0);
  EXPECT_FALSE(dp_.dev().engine_poll_st());
  EXPECT_EQ(std::memcmp(dp_.ram(buf_b_), before.data(), before.size()), 0);
  EXPECT_FALSE(dp_.poll(cq_).has_value());
  EXPECT_EQ(dp_.dev().state(), VRNIC_STATE_RESET);
  EXPECT_EQ(dp_.drv().reg(VRNIC_REG_CTRL), 0U);  // acknowledged
}

// Memory windows (issue 10): a window reaches an MR with MW_BIND access
// only once bound, within its range and rights, a type 2 window only from
// its QP; LOCAL_INV and SEND_WITH_INV free a type 2 window; every refused
// bind is MW_BIND_ERR with its vendor error and changes nothing; an MR
// with a bound window cannot be deregistered.
class MwTest : public DataPathTest {
 protected:
  uint32_t alloc(uint32_t type, uint32_t pdn = 0) {
    auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_ALLOC_MW);
    c.alloc_mw.pdn = pdn == 0 ? pd_ : pdn;
    c.alloc_mw.type = type;
    uint32_t key = 0;
    EXPECT_EQ(dp_.exec_result(c, &key), VRNIC_AQ_STATUS_OK);
    return key;
  }
  // BIND_MW on qp; returns (opcode, status, vendor error) of its CQE.
  std::tuple<uint32_t, uint32_t, uint32_t> bind(DataPath::Qp& qp, uint32_t rkey, uint64_t addr,
                                                uint64_t len, uint32_t lkey, uint32_t access) {
    vrnic_sqe_bind_mw b{};
    b.wr_id = 300;
    b.ctrl =
        vrnic::field_prep<VRNIC_WQE_CTRL_OPCODE_MASK>(VRNIC_WQE_BIND_MW) | VRNIC_WQE_CTRL_SIGNALED;
    b.rkey = rkey;
    b.addr = addr;
    b.length = len;
    b.mr_lkey = lkey;
    b.access = access;
    std::vector<std::byte> raw(sizeof(b));
    std::memcpy(raw.data(), &b, sizeof(b));
    dp_.post_send_raw(qp, raw);
    dp_.run();
    auto done = cqes(qp.qpn);
    EXPECT_EQ(done.size(), 1U);
    if (done.empty()) {
      return {~0U, ~0U, ~0U};
    }
    return {done[0].opcode, done[0].status, done[0].vendor_err};
  }
  static std::tuple<uint32_t, uint32_t, uint32_t> bound() {
    return {VRNIC_CQE_BIND_MW, VRNIC_CQE_SUCCESS, VRNIC_VERR_NONE};
  }
  static std::tuple<uint32_t, uint32_t, uint32_t> refused(uint32_t verr) {
    return {VRNIC_CQE_BIND_MW, VRNIC_CQE_MW_BIND_ERR, verr};
  }
  // One RDMA operation from a to b through rkey; a's status.
  uint32_t rdma(uint32_t opcode, uint64_t remote, uint32_t rkey) {
    auto h = sqe(opcode, 7);
    h.remote_addr = remote;
    h.rkey = rkey;
    h.compare_add = 1;
    const vrnic_sge local{buf_a_, opcode == VRNIC_WQE_ATOMIC_FETCH_AND_ADD ? 8U : 512U, key_a_};
    dp_.post_send(a_, h, std::span(&local, 1));
    dp_.run();
    auto done = cqes(a_.qpn);
    EXPECT_EQ(done.size(), 1U);
    return done.empty() ? ~0U : done[0].status;
  }
  static constexpr uint32_t kRw = VRNIC_ACCESS_REMOTE_WRITE | VRNIC_ACCESS_REMOTE_READ;
};

// A zero-based type 2 window is addressed from 0 (IB 10.6.7.2.2): an
// offset reaches the window's start plus it, within the window's length
// only; a type 1 window cannot be zero-based.
TEST_F(MwTest, ZeroBasedType2Window) {
  pair();
  const uint32_t kZero = VRNIC_ACCESS_ZERO_BASED;
  const uint32_t kAll = kRw | VRNIC_ACCESS_REMOTE_ATOMIC | kZero;
  const uint32_t t1 = alloc(VRNIC_MW_TYPE_1);
  EXPECT_EQ(bind(b_, (t1 & ~0xffU) | 1, buf_b_, 4096, key_b_, kRw | kZero),
            refused(VRNIC_VERR_MW_ACCESS));
  pair();  // the refused bind ended b
  const uint64_t lo = buf_b_ + 4096;
  const uint32_t mw = alloc(VRNIC_MW_TYPE_2);
  const uint32_t key = (mw & ~0xffU) | 0x33;
  ASSERT_EQ(bind(b_, key, lo, 8192, key_b_, kAll), bound());
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, 100, key), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(lo + 100), dp_.ram(buf_a_), 512), 0);
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_READ, 8192 - 512, key), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_a_), dp_.ram(lo + 8192 - 512), 512), 0);
  uint64_t word = 0;
  std::memcpy(&word, dp_.ram(lo + 8), 8);
  EXPECT_EQ(rdma(VRNIC_WQE_ATOMIC_FETCH_AND_ADD, 8, key), VRNIC_CQE_SUCCESS);
  uint64_t after = 0;
  std::memcpy(&after, dp_.ram(lo + 8), 8);
  EXPECT_EQ(after, word + 1) << "the atomic reached the window's offset 8";
  // An address that would be right were it not zero-based, and the end
  // of the window overrun: outside it, nothing written (each on a window
  // of its own, bound to a fresh pair: the error ends the QP).
  const auto before = snapshot(buf_b_, kBuf);
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, lo + 100, key), VRNIC_CQE_REM_ACCESS_ERR);
  pair();
  const uint32_t mw2 = alloc(VRNIC_MW_TYPE_2);
  const uint32_t key2 = (mw2 & ~0xffU) | 0x34;
  ASSERT_EQ(bind(b_, key2, lo, 8192, key_b_, kAll), bound());
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, 8192 - 100, key2), VRNIC_CQE_REM_ACCESS_ERR);
  EXPECT_TRUE(unchanged(buf_b_, before));
}

TEST_F(MwTest, Type2WindowRangeRightsQpAndInvalidation) {
  pair();
  const uint32_t mw = alloc(VRNIC_MW_TYPE_2);
  const uint32_t k1 = (mw & ~0xffU) | 0x21;
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, buf_b_, mw), VRNIC_CQE_REM_ACCESS_ERR);  // unbound
  pair();
  const uint64_t lo = buf_b_ + 4096;
  EXPECT_EQ(bind(b_, k1, lo, 8192, key_b_, kRw), bound());
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, lo + 100, k1), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(lo + 100), dp_.ram(buf_a_), 512), 0);
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_READ, lo + 8192 - 512, k1), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(bind(b_, k1 + 1, lo, 8192, key_b_, kRw), refused(VRNIC_VERR_MW_STATE));  // bound
  // Refused: outside the window, a right it lacks, from a QP it is not
  // bound to.  Each case binds it afresh to the b of a new pair.
  uint32_t key = k1;
  const auto invalidate = [&](uint32_t k) {
    auto inv = sqe(VRNIC_WQE_LOCAL_INV, 8);
    inv.imm_data = k;
    dp_.post_send(a_, inv, {});
    dp_.run();
    auto done = cqes(a_.qpn);
    return done.size() == 1 && done[0].opcode == VRNIC_CQE_LOCAL_INV &&
           done[0].status == VRNIC_CQE_SUCCESS;
  };
  const auto before = snapshot(buf_b_, kBuf);
  for (const auto& [what, op, at] :
       {std::tuple{"before the window", VRNIC_WQE_RDMA_WRITE, buf_b_},
        std::tuple{"past the window", VRNIC_WQE_RDMA_WRITE, lo + 8000},
        std::tuple{"no atomic right", VRNIC_WQE_ATOMIC_FETCH_AND_ADD, lo}}) {
    pair();
    ASSERT_TRUE(invalidate(key)) << what;  // LOCAL_INV frees it, from any QP of the PD
    key = (key & ~0xffU) | ((key + 1) & 0xffU);
    ASSERT_EQ(bind(b_, key, lo, 8192, key_b_, kRw), bound()) << what;
    EXPECT_EQ(rdma(op, at, key), VRNIC_CQE_REM_ACCESS_ERR) << what;
  }
  pair();  // the window is bound to the b before
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, lo, key), VRNIC_CQE_REM_ACCESS_ERR);
  EXPECT_TRUE(unchanged(buf_b_, before));
  // Bound again, the new key works and the old ones do not.
  pair();
  ASSERT_TRUE(invalidate(key));
  const uint32_t k2 = (mw & ~0xffU) | 0x42;
  EXPECT_EQ(bind(b_, k2, lo, 8192, key_b_, kRw), bound());
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, lo, k2), VRNIC_CQE_SUCCESS);
  // SEND_WITH_INV from the peer frees it too, and the receive names it.
  const vrnic_sge rsge{buf_b_, 4096, key_b_};
  dp_.post_recv(b_, 9, std::span(&rsge, 1));
  auto si = sqe(VRNIC_WQE_SEND_WITH_INV, 10);
  si.imm_data = k2;
  const vrnic_sge ssge{buf_a_, 64, key_a_};
  dp_.post_send(a_, si, std::span(&ssge, 1));
  dp_.run();
  auto got = cqes(b_.qpn);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].status, VRNIC_CQE_SUCCESS);
  EXPECT_TRUE(got[0].has_inv);
  EXPECT_EQ(got[0].imm, k2);
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, lo, k2), VRNIC_CQE_REM_ACCESS_ERR);
  pair();
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, lo, k1), VRNIC_CQE_REM_ACCESS_ERR);
}

// A type 2 window goes with its QP (issue 24, defect 8): once the QP is
// destroyed, a later QP that gets the same QPN does not inherit the
// window, and the window can be bound again.  Before, the new QP's peer
// wrote through it.
TEST_F(MwTest, Type2WindowDoesNotOutliveItsQp) {
  pair();
  const uint32_t mw = alloc(VRNIC_MW_TYPE_2);
  const uint32_t key = (mw & ~0xffU) | 0x51;
  ASSERT_EQ(bind(b_, key, buf_b_, 8192, key_b_, kRw), bound());
  ASSERT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, buf_b_, key), VRNIC_CQE_SUCCESS);
  const uint32_t old_qpn = b_.qpn;
  ASSERT_EQ(dp_.destroy_qp(old_qpn), VRNIC_AQ_STATUS_OK);
  // QPNs rotate: create and destroy until the number comes round again.
  bool same = false;
  for (int i = 0; i < 2048 && !same; ++i) {
    ASSERT_EQ(dp_.recreate_qp(pd_, cq_, cq_, &b_), VRNIC_AQ_STATUS_OK);
    same = b_.qpn == old_qpn;
    if (!same) {
      ASSERT_EQ(dp_.destroy_qp(b_.qpn), VRNIC_AQ_STATUS_OK);
    }
  }
  ASSERT_TRUE(same);
  a_ = {};
  ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &a_), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.connect(a_, b_.qpn), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.connect(b_, a_.qpn), VRNIC_AQ_STATUS_OK);
  const auto before = snapshot(buf_b_, 8192);
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, buf_b_, key), VRNIC_CQE_REM_ACCESS_ERR);
  EXPECT_TRUE(unchanged(buf_b_, before));
  pair();
  const uint32_t again = (mw & ~0xffU) | 0x52;
  EXPECT_EQ(bind(b_, again, buf_b_, 8192, key_b_, kRw), bound());  // free again
}

// A bind may change only the consumer's byte of a window's key: the tag is
// the device's (issue 24, defect 2), or a window could take the key a
// freed one had.
TEST_F(MwTest, ABindKeepsTheWindowsTag) {
  pair();
  for (const uint32_t type : {uint32_t{VRNIC_MW_TYPE_1}, uint32_t{VRNIC_MW_TYPE_2}}) {
    const uint32_t mw = alloc(type);
    const uint32_t other_tag = mw ^ vrnic::field_prep<VRNIC_KEY_TAG_MASK>(1U);
    EXPECT_EQ(bind(b_, other_tag, buf_b_, 4096, key_b_, kRw), refused(VRNIC_VERR_MW_KEY));
    pair();
    EXPECT_EQ(bind(b_, (mw & ~0xffU) | ((mw + 1) & 0xffU), buf_b_, 4096, key_b_, kRw), bound());
  }
}

TEST_F(MwTest, Type1WindowAndTheBindRules) {
  pair();
  const uint32_t mw = alloc(VRNIC_MW_TYPE_1);
  const uint32_t k1 = (mw & ~0xffU) | 0x31;
  // Bound from one QP, used through another of the PD.
  EXPECT_EQ(bind(a_, k1, buf_b_, 4096, key_b_, kRw), bound());
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, buf_b_ + 64, k1), VRNIC_CQE_SUCCESS);
  // Bound again (type 1 may be), elsewhere; then unbound with length 0.
  const uint32_t k2 = (mw & ~0xffU) | 0x32;
  EXPECT_EQ(bind(a_, k2, buf_b_ + 8192, 4096, key_b_, kRw), bound());
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, buf_b_ + 8192, k1), VRNIC_CQE_REM_ACCESS_ERR);
  pair();
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, buf_b_ + 8192, k2), VRNIC_CQE_SUCCESS);
  // An MR with a window bound cannot go.
  auto dereg = vrnic_test::make_cmd(VRNIC_AQ_OP_DEREG_MR);
  dereg.dereg_mr.key = key_b_;
  EXPECT_EQ(dp_.drv().exec_status(dereg), VRNIC_AQ_STATUS_BUSY);
  // Nor change: each window was checked against it when it was bound.
  EXPECT_EQ(rereg(dp_, key_b_, VRNIC_AQ_REREG_MR_F_ACCESS, 0, 0, 0, 0, VRNIC_ACCESS_ALL),
            VRNIC_AQ_STATUS_BUSY);
  // LOCAL_INV cannot free a type 1 window.
  auto inv = sqe(VRNIC_WQE_LOCAL_INV, 8);
  inv.imm_data = k2;
  dp_.post_send(a_, inv, {});
  dp_.run();
  auto done = cqes(a_.qpn);
  ASSERT_EQ(done.size(), 1U);
  EXPECT_EQ(std::make_tuple(done[0].status, done[0].vendor_err),
            std::make_tuple(uint32_t{VRNIC_CQE_LOC_QP_OP_ERR}, uint32_t{VRNIC_VERR_MR_KEY}));
  pair();
  EXPECT_EQ(bind(a_, k2, 0, 0, key_b_, 0), bound());  // unbind
  EXPECT_EQ(dp_.drv().exec_status(dereg), VRNIC_AQ_STATUS_OK);

  // The bind rules, each its own vendor error.
  uint32_t no_bind = 0;
  uint32_t no_local_write = 0;
  ASSERT_EQ(dp_.reg_mr(pd_, buf_b_, kBuf, VRNIC_ACCESS_ALL & ~VRNIC_ACCESS_MW_BIND, &no_bind),
            VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.reg_mr(pd_, buf_b_, kBuf, VRNIC_ACCESS_MW_BIND | VRNIC_ACCESS_REMOTE_READ,
                       &no_local_write),
            VRNIC_AQ_STATUS_OK);
  const uint32_t other_pd_mw = alloc(VRNIC_MW_TYPE_1, pd2_);
  const struct {
    const char* what;
    uint32_t rkey;
    uint64_t addr;
    uint64_t len;
    uint32_t lkey;
    uint32_t access;
    uint32_t verr;
  } cases[] = {
      {"MR without MW_BIND", k1, buf_b_, 4096, no_bind, kRw, VRNIC_VERR_MW_MR},
      {"remote write without local write", k1, buf_b_, 4096, no_local_write, kRw,
       VRNIC_VERR_MW_ACCESS},
      {"local write right", k1, buf_b_, 4096, no_local_write, VRNIC_ACCESS_LOCAL_WRITE,
       VRNIC_VERR_MW_ACCESS},
      {"past the MR", k1, buf_b_ + kBuf - 4096, 8192, no_local_write, VRNIC_ACCESS_REMOTE_READ,
       VRNIC_VERR_MW_BOUNDS},
      {"window of another PD", other_pd_mw, buf_b_, 4096, no_local_write, VRNIC_ACCESS_REMOTE_READ,
       VRNIC_VERR_MW_KEY},
      {"no such window", key_a_, buf_b_, 4096, no_local_write, VRNIC_ACCESS_REMOTE_READ,
       VRNIC_VERR_MW_KEY},
  };
  for (const auto& c : cases) {
    pair();
    EXPECT_EQ(bind(a_, c.rkey, c.addr, c.len, c.lkey, c.access), refused(c.verr)) << c.what;
  }
  pair();
  EXPECT_EQ(rdma(VRNIC_WQE_RDMA_WRITE, buf_b_, k1), VRNIC_CQE_REM_ACCESS_ERR);  // still unbound
  auto dealloc = vrnic_test::make_cmd(VRNIC_AQ_OP_DEALLOC_MW);
  dealloc.dereg_mr.key = mw;
  EXPECT_EQ(dp_.drv().exec_status(dealloc), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.drv().exec_status(dealloc), VRNIC_AQ_STATUS_NOT_FOUND);
}

// A port that is not ACTIVE (its netdev down: a pulled link) carries
// nothing: a datagram to the wire is lost, and a frame from it is dropped
// and counted, memory unchanged.  Once the port is up again both pass.
TEST_F(DataPathTest, APortThatIsDownCarriesNothing) {
  pair();
  int on_wire = 0;
  dp_.dev().engine().set_wire([&](std::span<const std::byte>) { ++on_wire; });
  DataPath::Qp ud;
  ud.type = VRNIC_QPT_UD;
  ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &ud), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.connect(ud, 0), VRNIC_AQ_STATUS_OK);
  vrnic_av remote = DataPath::loopback_av();
  remote.dgid[15] ^= 0x7;  // another host on the link
  auto h = sqe(VRNIC_WQE_SEND, 1);
  h.remote_qpn = 77;
  h.remote_qkey = 0x1234;
  const vrnic_sge ssge{buf_a_, 256, key_a_};
  auto set_netdev = [&](uint32_t state) {
    auto m = vrnic_test::make_cmd(VRNIC_AQ_OP_MODIFY_PORT, VRNIC_AQ_MODIFY_PORT_F_NETDEV);
    m.modify_port.port = 1;
    m.modify_port.netdev_state = state;
    return dp_.drv().exec_status(m);
  };
  const uint32_t up = VRNIC_NETDEV_STATE_UP | VRNIC_NETDEV_STATE_CARRIER;
  const std::vector<std::byte> before(dp_.ram(buf_b_), dp_.ram(buf_b_) + 64);
  for (const uint32_t state : {0U, up}) {
    SCOPED_TRACE(state == up ? "port up" : "port down");
    ASSERT_EQ(set_netdev(state), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.dev().port().state(), state == up ? VRNIC_PORT_ACTIVE : VRNIC_PORT_DOWN);
    on_wire = 0;
    dp_.post_send(ud, h, std::span(&ssge, 1), &remote);
    dp_.run();
    EXPECT_EQ(on_wire, state == up ? 1 : 0);
    std::memcpy(dp_.ram(buf_b_), before.data(), before.size());
    const uint64_t dropped = dp_.dev().engine().stat(VRNIC_STAT_RX_DROPPED);
    EXPECT_TRUE(dp_.dev().receive_frame_st(write_frame(b_.qpn, 100, buf_b_, key_b_)));
    if (state == up) {
      EXPECT_EQ(*dp_.ram(buf_b_), std::byte{0xab});
    } else {
      EXPECT_EQ(std::memcmp(dp_.ram(buf_b_), before.data(), before.size()), 0);
      EXPECT_EQ(dp_.dev().engine().stat(VRNIC_STAT_RX_DROPPED), dropped + 1);
    }
  }
}

}  // namespace

namespace {

// Registers an MR of pd over buf and deregisters it: the key it had.
uint32_t reg_dereg(DataPath& dp, uint32_t pd, uint64_t buf) {
  uint32_t key = 0;
  EXPECT_EQ(dp.reg_mr(pd, buf, 4096, VRNIC_ACCESS_ALL, &key), VRNIC_AQ_STATUS_OK);
  auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_DEREG_MR);
  c.dereg_mr.key = key;
  EXPECT_EQ(dp.drv().exec_status(c), VRNIC_AQ_STATUS_OK);
  return key;
}

// A DataPath with one free MR index: the other is held.
struct OneFreeKeySlot {
  OneFreeKeySlot() {
    dp.cfg().limits.max_mr = 2;
    EXPECT_TRUE(dp.bring_up());
    EXPECT_EQ(dp.create_pd(&pd), VRNIC_AQ_STATUS_OK);
    buf = dp.alloc(4096);
    EXPECT_EQ(dp.reg_mr(pd, buf, 4096, VRNIC_ACCESS_ALL, &held), VRNIC_AQ_STATUS_OK);
  }
  DataPath dp;
  uint32_t pd = 0;
  uint64_t buf = 0;
  uint32_t held = 0;
};

// Memory keys cannot be guessed, and a deregistered key does not come back
// soon (issue 9, defect 5; issue 24, defect 2): 6,000 registrations of one
// index never repeat a tag within 1,024 keys, draw over 2,500 different
// tags, and neither tag nor variant counts up.
TEST(Keys, TagsAreDrawnAndNotReusedSoon) {
  OneFreeKeySlot s;
  std::vector<uint32_t> tags;
  int counting_up = 0;
  uint32_t prev = 0;
  for (int i = 0; i < 6000; ++i) {
    const uint32_t key = reg_dereg(s.dp, s.pd, s.buf);
    EXPECT_NE(key, s.held);
    const uint32_t tag = vrnic::field_get<VRNIC_KEY_TAG_MASK>(key);
    const size_t from = tags.size() > 1023 ? tags.size() - 1023 : 0;
    EXPECT_EQ(std::find(tags.begin() + static_cast<std::ptrdiff_t>(from), tags.end(), tag),
              tags.end())
        << "tag " << tag << " again at " << i;
    tags.push_back(tag);
    counting_up += i > 0 && (key & 0xfffffU) == ((prev + 1) & 0xfffffU);
    counting_up += i > 0 && tag == ((vrnic::field_get<VRNIC_KEY_TAG_MASK>(prev) + 1) & 0xfffU);
    prev = key;
  }
  EXPECT_GT(std::set<uint32_t>(tags.begin(), tags.end()).size(), 2500U);
  EXPECT_LT(counting_up, 10);
}

// The stale-key PoC of issue 24, defect 2.  An attacker holds every other
// MR slot and cycles the victim's freed index, watching the keys it gets,
// until the victim's old key is the only one of the index's key space it
// has not seen since the victim let go of it: as far as it can tell, the
// device's whole choice, or for 300,000 keys.  Then the victim registers
// again; four times.  With 8 variant
// bits, each run through all 256 before any came back, the victim got its
// old key back, and a peer's stale WRITE landed in its new memory.
TEST(Keys, AStaleKeyCannotBeSteeredBack) {
  OneFreeKeySlot s;
  const size_t space = size_t{1} << (32 - std::popcount(uint32_t{VRNIC_KEY_INDEX_MASK}));
  for (int trial = 0; trial < 4; ++trial) {
    const uint32_t victim = reg_dereg(s.dp, s.pd, s.buf);
    std::unordered_set<uint32_t> seen;
    for (int i = 0; i < 300000 && seen.size() + 1 < space; ++i) {
      const uint32_t key = reg_dereg(s.dp, s.pd, s.buf);
      if (key == victim) {
        seen.clear();
      } else {
        seen.insert(key);
      }
    }
    EXPECT_NE(reg_dereg(s.dp, s.pd, s.buf), victim) << "trial " << trial;
  }
}

// A free MR index is drawn (issue 24, defect 2): registrations do not take
// the indices in order, nor the freed ones oldest first, so which index the
// next registration gets cannot be worked out from the ones before it.
TEST(Keys, TheFreeIndexIsDrawn) {
  DataPath dp;
  dp.cfg().limits.max_mr = 64;
  ASSERT_TRUE(dp.bring_up());
  uint32_t pd = 0;
  ASSERT_EQ(dp.create_pd(&pd), VRNIC_AQ_STATUS_OK);
  const uint64_t buf = dp.alloc(4096);
  const auto index = [](uint32_t key) { return vrnic::field_get<VRNIC_KEY_INDEX_MASK>(key); };
  std::vector<uint32_t> keys(32);
  int in_order = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(dp.reg_mr(pd, buf, 4096, VRNIC_ACCESS_ALL, &keys[i]), VRNIC_AQ_STATUS_OK);
    in_order += i > 0 && index(keys[i]) == index(keys[i - 1]) + 1;
  }
  EXPECT_LT(in_order, 8);
  // Free them all, in order; oldest-first reuse would give them back so.
  std::deque<uint32_t> fifo;
  for (const uint32_t key : keys) {
    auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_DEREG_MR);
    c.dereg_mr.key = key;
    ASSERT_EQ(dp.drv().exec_status(c), VRNIC_AQ_STATUS_OK);
    fifo.push_back(index(key));
  }
  int oldest_first = 0;
  for (int i = 0; i < 200; ++i) {
    const uint32_t key = reg_dereg(dp, pd, buf);
    oldest_first += !fifo.empty() && index(key) == fifo.front();
    if (!fifo.empty() && index(key) == fifo.front()) {
      fifo.pop_front();
    }
    fifo.push_back(index(key));
  }
  EXPECT_LT(oldest_first, 30);  // 1 in 64 by chance
}

}  // namespace

namespace {

// The SGEs of a receive WQE posted to an SRQ name memory of the SRQ's PD,
// not the QP's (issue 9, defect 6): a buffer registered in the SRQ's PD
// takes a SEND, one registered in the QP's PD is refused.
TEST_F(DataPathTest, SrqReceivesUseTheSrqsPd) {
  DataPath::Srq srq;
  ASSERT_EQ(dp_.create_srq(pd2_, &srq), VRNIC_AQ_STATUS_OK);
  uint32_t key_srq = 0;
  ASSERT_EQ(dp_.reg_mr(pd2_, buf_b_, kBuf, VRNIC_ACCESS_ALL, &key_srq), VRNIC_AQ_STATUS_OK);
  pair(VRNIC_ACCESS_ALL, &srq);
  const vrnic_sge into_srq_pd{buf_b_, 256, key_srq};
  const vrnic_sge into_qp_pd{buf_b_ + 4096, 256, key_b_};
  dp_.post_srq_recv(srq, 1, std::span(&into_srq_pd, 1));
  dp_.post_srq_recv(srq, 2, std::span(&into_qp_pd, 1));
  const vrnic_sge from{buf_a_, 200, key_a_};
  for (uint64_t id = 10; id < 12; ++id) {
    dp_.post_send(a_, sqe(VRNIC_WQE_SEND, id), std::span(&from, 1));
    dp_.run();
  }
  const auto got = cqes(b_.qpn);
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].wr_id, 1U);
  EXPECT_EQ(status_of(got[0]), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_b_), dp_.ram(buf_a_), 200), 0);
  EXPECT_EQ(got[1].wr_id, 2U);
  EXPECT_EQ(status_of(got[1]), VRNIC_CQE_LOC_PROT_ERR);
}

// RESIZE_SRQ moves the WQEs posted and not taken, in order, to the new
// ring; the driver produces on from the count it returns, and the QP
// receives the old WQEs first, then the new ones.
TEST_F(DataPathTest, SrqResizeMovesPostedWqesInOrder) {
  DataPath::Srq srq;
  srq.log_depth = 2;
  ASSERT_EQ(dp_.create_srq(pd_, &srq), VRNIC_AQ_STATUS_OK);
  pair(VRNIC_ACCESS_ALL, &srq);
  const auto into = [&](uint64_t n) { return vrnic_sge{buf_b_ + n * 512, 512, key_b_}; };
  for (uint64_t id = 1; id <= 4; ++id) {
    const vrnic_sge s = into(id);
    dp_.post_srq_recv(srq, id, std::span(&s, 1));
  }
  auto send = [&](uint64_t id) {
    std::memset(dp_.ram(buf_a_), static_cast<int>(id), 100);
    const vrnic_sge from{buf_a_, 100, key_a_};
    dp_.post_send(a_, sqe(VRNIC_WQE_SEND, 100 + id), std::span(&from, 1));
    dp_.run();
  };
  send(1);  // takes WQE 1; 2, 3 and 4 move
  const uint64_t old_dbrec = srq.dbrec;
  uint32_t moved = 0;
  ASSERT_EQ(dp_.resize_srq(&srq, 4, &moved), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(moved, 3U);
  EXPECT_EQ(vrnic::load_acquire32(dp_.ram(srq.dbrec + offsetof(vrnic_srq_dbrec, pi))), 3U);
  EXPECT_EQ(vrnic::load_acquire32(dp_.ram(srq.dbrec + offsetof(vrnic_srq_dbrec, ci))), 0U);
  // More than the old ring held: four more WQEs fit beside the three.
  for (uint64_t id = 5; id <= 8; ++id) {
    const vrnic_sge s = into(id);
    dp_.post_srq_recv(srq, id, std::span(&s, 1));
  }
  // The old ring is the driver's again: what it writes there is not read.
  std::memset(dp_.ram(old_dbrec), 0xff, 4096);
  for (uint64_t id = 2; id <= 8; ++id) {
    send(id);
  }
  const auto got = cqes(b_.qpn);
  ASSERT_EQ(got.size(), 8U);
  for (uint64_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].wr_id, i + 1);
    EXPECT_EQ(status_of(got[i]), VRNIC_CQE_SUCCESS);
    EXPECT_EQ(*dp_.ram(buf_b_ + (i + 1) * 512), static_cast<std::byte>(i + 1)) << i;
  }
}

// A depth below the WQEs posted, below the armed limit or above
// max_srq_wr, a producer more than a ring ahead, reserved bits and an
// unknown SRQ are refused, and the SRQ goes on in its old ring.
TEST_F(DataPathTest, SrqResizeRefusesWhatDoesNotFit) {
  DataPath::Srq srq;
  srq.log_depth = 3;
  ASSERT_EQ(dp_.create_srq(pd_, &srq), VRNIC_AQ_STATUS_OK);
  pair(VRNIC_ACCESS_ALL, &srq);
  for (uint64_t id = 1; id <= 5; ++id) {
    const vrnic_sge s{buf_b_ + id * 512, 512, key_b_};
    dp_.post_srq_recv(srq, id, std::span(&s, 1));
  }
  DataPath::Srq same = srq;
  uint32_t moved = 0;
  EXPECT_EQ(dp_.resize_srq(&same, 2, &moved), VRNIC_AQ_STATUS_BAD_PARAM);  // 5 > 4
  same = srq;
  EXPECT_EQ(dp_.resize_srq(&same, 13, &moved), VRNIC_AQ_STATUS_BAD_PARAM);  // > max_srq_wr
  same = srq;
  EXPECT_EQ(dp_.resize_srq(&same, 4, &moved, [](vrnic_aq_cmd& c) { c.resize_srq.rsvd[3] = 1; }),
            VRNIC_AQ_STATUS_BAD_PARAM);
  same = srq;
  EXPECT_EQ(dp_.resize_srq(&same, 4, &moved, [](vrnic_aq_cmd& c) { c.resize_srq.srqn = 999; }),
            VRNIC_AQ_STATUS_NOT_FOUND);
  same = srq;
  EXPECT_EQ(dp_.resize_srq(&same, 4, &moved, [](vrnic_aq_cmd& c) { c.resize_srq.ring_page = 0; }),
            VRNIC_AQ_STATUS_BAD_PARAM);
  ASSERT_EQ(dp_.arm_srq_limit(srq, 8), VRNIC_AQ_STATUS_OK);
  same = srq;
  EXPECT_EQ(dp_.resize_srq(&same, 2, &moved), VRNIC_AQ_STATUS_BAD_PARAM);  // limit 8 > 4
  ASSERT_EQ(dp_.arm_srq_limit(srq, 0), VRNIC_AQ_STATUS_OK);
  // The driver's producer index 100 ahead of the device's consumer.
  const uint64_t pi_at = srq.dbrec + offsetof(vrnic_srq_dbrec, pi);
  vrnic::store_release32(dp_.ram(pi_at), 100);
  same = srq;
  EXPECT_EQ(dp_.resize_srq(&same, 8, &moved), VRNIC_AQ_STATUS_BAD_PARAM);
  vrnic::store_release32(dp_.ram(pi_at), srq.pi);
  // Every refusal left the SRQ as it was: the five WQEs complete in order.
  const vrnic_sge from{buf_a_, 100, key_a_};
  for (uint64_t id = 1; id <= 5; ++id) {
    dp_.post_send(a_, sqe(VRNIC_WQE_SEND, 100 + id), std::span(&from, 1));
    dp_.run();
  }
  const auto got = cqes(b_.qpn);
  ASSERT_EQ(got.size(), 5U);
  for (uint64_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].wr_id, i + 1);
    EXPECT_EQ(status_of(got[i]), VRNIC_CQE_SUCCESS);
  }
}

// A malformed receive WQE on a UD QP completes in error when a datagram
// takes it, instead of vanishing (issue 9, defect 6).
TEST_F(DataPathTest, MalformedUdReceiveWqeCompletes) {
  DataPath::Qp tx;
  DataPath::Qp rx;
  tx.type = rx.type = VRNIC_QPT_UD;
  ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &tx), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &rx), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.connect(tx, 0), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.connect(rx, 0), VRNIC_AQ_STATUS_OK);
  const vrnic_rqe bad{7, 200, 0};  // 200 SGEs: more than any stride holds
  dp_.post_recv_raw(rx, std::as_bytes(std::span(&bad, 1)));
  const vrnic_av av = DataPath::loopback_av();
  auto h = sqe(VRNIC_WQE_SEND, 8);
  h.remote_qpn = rx.qpn;
  h.remote_qkey = 0x1234;
  const vrnic_sge from{buf_a_, 100, key_a_};
  dp_.post_send(tx, h, std::span(&from, 1), &av);
  dp_.run();
  const auto got = cqes(rx.qpn);
  ASSERT_EQ(got.size(), 1U);
  EXPECT_EQ(got[0].wr_id, 7U);
  EXPECT_EQ(status_of(got[0]), VRNIC_CQE_LOC_QP_OP_ERR);
  const auto attr = dp_.query_qp(rx.qpn);
  ASSERT_TRUE(attr.has_value());
  EXPECT_EQ(attr->state, VRNIC_QPS_ERR);
}

}  // namespace

namespace {

// Every refusal says why in the CQE's vendor error (issue 9, defect 6),
// which libvrnic and the kernel pass on as ibv_wc.vendor_err.
TEST_F(DataPathTest, ErrorCompletionsCarryAVendorError) {
  struct Case {
    const char* what;
    uint32_t status;
    uint32_t vendor_err;
  };
  std::vector<Case> seen;
  auto last_error = [&](uint32_t qpn) {
    for (const auto& e : cqes(qpn)) {
      if (e.status != VRNIC_CQE_SUCCESS && e.status != VRNIC_CQE_WR_FLUSH_ERR) {
        return std::make_pair(e.status, e.vendor_err);
      }
    }
    return std::make_pair(~0U, ~0U);
  };
  auto raw = [&](vrnic_sqe h) {
    std::vector<std::byte> w(256);
    std::memcpy(w.data(), &h, sizeof(h));
    dp_.post_send_raw(a_, w);
    dp_.run();
    return last_error(a_.qpn);
  };
  pair();
  EXPECT_EQ(raw(raw_sqe(0x7f, 1)),
            std::make_pair(uint32_t{VRNIC_CQE_LOC_QP_OP_ERR}, uint32_t{VRNIC_VERR_WQE_OPCODE}));
  pair();
  auto h = raw_sqe(VRNIC_WQE_SEND, 2);
  h.ctrl |= vrnic::field_prep<VRNIC_WQE_CTRL_NUM_SGE_MASK>(200);
  EXPECT_EQ(raw(h),
            std::make_pair(uint32_t{VRNIC_CQE_LOC_QP_OP_ERR}, uint32_t{VRNIC_VERR_WQE_LAYOUT}));
  pair();
  const vrnic_sge no_key{buf_a_, 64, key_a_ ^ 0x100};
  auto w = sqe(VRNIC_WQE_RDMA_WRITE, 3);
  w.remote_addr = buf_b_;
  w.rkey = key_b_;
  dp_.post_send(a_, w, std::span(&no_key, 1));
  dp_.run();
  EXPECT_EQ(last_error(a_.qpn),
            std::make_pair(uint32_t{VRNIC_CQE_LOC_PROT_ERR}, uint32_t{VRNIC_VERR_LKEY}));
  pair();
  const vrnic_sge past{buf_a_ + kBuf - 8, 64, key_a_};
  dp_.post_send(a_, w, std::span(&past, 1));
  dp_.run();
  EXPECT_EQ(last_error(a_.qpn),
            std::make_pair(uint32_t{VRNIC_CQE_LOC_PROT_ERR}, uint32_t{VRNIC_VERR_LOCAL_BOUNDS}));
  pair();
  const vrnic_sge ok{buf_a_, 64, key_a_};
  w.rkey = key_b_ ^ 0x100;
  dp_.post_send(a_, w, std::span(&ok, 1));
  dp_.run();
  EXPECT_EQ(last_error(a_.qpn),
            std::make_pair(uint32_t{VRNIC_CQE_REM_ACCESS_ERR}, uint32_t{VRNIC_VERR_NAK_ACCESS}));
  pair();
  const vrnic_sge small{buf_b_, 16, key_b_};
  dp_.post_recv(b_, 4, std::span(&small, 1));
  dp_.post_send(a_, sqe(VRNIC_WQE_SEND, 5), std::span(&ok, 1));
  dp_.run();
  EXPECT_EQ(last_error(b_.qpn),
            std::make_pair(uint32_t{VRNIC_CQE_LOC_LEN_ERR}, uint32_t{VRNIC_VERR_RECV_LENGTH}));
}

// Fast registration (issue 10): an ALLOC_MR key matches nothing until a
// REG_MR WQE makes it valid, with the consumer's key byte; LOCAL_INV and a
// SEND_WITH_INV received make it invalid again.  Every refusal has its
// status and vendor error, and changes nothing.
class FastRegTest : public DataPathTest {
 protected:
  static constexpr uint32_t kMaxPages = 4;

  void SetUp() override {
    DataPathTest::SetUp();
    auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_ALLOC_MR);
    c.alloc_mr.pdn = pd_;
    c.alloc_mr.max_pages = kMaxPages;
    ASSERT_EQ(dp_.exec_result(c, &key_), VRNIC_AQ_STATUS_OK);
    pair();
  }

  // A REG_MR WQE on a of key over npages pages of buf_b_ from page first.
  void post_reg(uint32_t key, uint64_t iova, uint64_t len, uint32_t npages, uint32_t first = 0) {
    vrnic_sqe_reg_mr r{};
    r.wr_id = 100;
    r.ctrl =
        vrnic::field_prep<VRNIC_WQE_CTRL_OPCODE_MASK>(VRNIC_WQE_REG_MR) | VRNIC_WQE_CTRL_SIGNALED;
    r.key = key;
    r.iova = iova;
    r.length = len;
    r.pbl_addr = dp_.pbl(buf_b_ + first * DataPath::kPage, npages);
    r.npages = npages;
    r.page_shift = 12;
    r.access = VRNIC_ACCESS_ALL;
    post_raw(r);
  }
  void post_inv(uint32_t opcode, uint32_t key) {
    auto h = sqe(opcode, 101);
    h.imm_data = key;
    h.flags = VRNIC_WQE_CTRL_SIGNALED;
    const vrnic_sge s{buf_a_, 64, key_a_};
    dp_.post_send(a_, h,
                  opcode == VRNIC_WQE_LOCAL_INV ? std::span<const vrnic_sge>{} : std::span(&s, 1));
  }
  template <typename T>
  void post_raw(const T& w) {
    std::vector<std::byte> raw(sizeof(w));
    std::memcpy(raw.data(), &w, sizeof(w));
    dp_.post_send_raw(a_, raw);
  }
  // a's completion for the last WQE: opcode, status, vendor error.
  std::tuple<uint32_t, uint32_t, uint32_t> result() {
    dp_.run();
    auto done = cqes(a_.qpn);
    EXPECT_FALSE(done.empty());
    if (done.empty()) {
      return {~0U, ~0U, ~0U};
    }
    return {done.back().opcode, done.back().status, done.back().vendor_err};
  }
  uint32_t with_byte(uint8_t b) const { return (key_ & ~0xffU) | b; }

  uint32_t key_ = 0;
};

TEST_F(FastRegTest, KeyStatesAndTheConsumerKeyByte) {
  constexpr uint64_t kIova = 0x7000000100;
  // Free: the key matches nothing.
  EXPECT_EQ(write({buf_a_, 64, key_a_}, kIova, key_), VRNIC_CQE_REM_ACCESS_ERR);
  pair();
  // REG_MR with the consumer's byte 0x5a: 2 pages, from 0x100 into page 1.
  post_reg(with_byte(0x5a), kIova, 6000, 2, 1);
  EXPECT_EQ(result(), std::make_tuple(uint32_t{VRNIC_CQE_REG_MR}, uint32_t{VRNIC_CQE_SUCCESS},
                                      uint32_t{VRNIC_VERR_NONE}));
  EXPECT_EQ(write({buf_a_, 5000, key_a_}, kIova + 900, with_byte(0x5a)), VRNIC_CQE_SUCCESS);
  EXPECT_EQ(std::memcmp(dp_.ram(buf_b_ + DataPath::kPage + 0x100 + 900), dp_.ram(buf_a_), 5000), 0);
  // The allocation's own byte is stale now, and the region's bounds hold.
  if (with_byte(0x5a) != key_) {
    EXPECT_EQ(write({buf_a_, 64, key_a_}, kIova, key_), VRNIC_CQE_REM_ACCESS_ERR);
    pair();
  }
  EXPECT_EQ(write({buf_a_, 64, key_a_}, kIova + 6000 - 32, with_byte(0x5a)),
            VRNIC_CQE_REM_ACCESS_ERR);
  pair();
  // REG_MR over a valid MR is refused, and leaves it valid.
  post_reg(with_byte(0x5b), kIova, 4096 - 0x100, 1);
  EXPECT_EQ(result(), std::make_tuple(uint32_t{VRNIC_CQE_REG_MR}, uint32_t{VRNIC_CQE_LOC_QP_OP_ERR},
                                      uint32_t{VRNIC_VERR_MR_STATE}));
  pair();
  EXPECT_EQ(write({buf_a_, 64, key_a_}, kIova, with_byte(0x5a)), VRNIC_CQE_SUCCESS);
  // LOCAL_INV with another byte is refused; with its own, it invalidates.
  post_inv(VRNIC_WQE_LOCAL_INV, with_byte(0x5b));
  EXPECT_EQ(result(),
            std::make_tuple(uint32_t{VRNIC_CQE_LOCAL_INV}, uint32_t{VRNIC_CQE_LOC_QP_OP_ERR},
                            uint32_t{VRNIC_VERR_MR_KEY}));
  pair();
  post_inv(VRNIC_WQE_LOCAL_INV, with_byte(0x5a));
  EXPECT_EQ(result(), std::make_tuple(uint32_t{VRNIC_CQE_LOCAL_INV}, uint32_t{VRNIC_CQE_SUCCESS},
                                      uint32_t{VRNIC_VERR_NONE}));
  EXPECT_EQ(write({buf_a_, 64, key_a_}, kIova, with_byte(0x5a)), VRNIC_CQE_REM_ACCESS_ERR);
  pair();
  // Invalid: registered again, with a new byte.
  post_reg(with_byte(0x5c), kIova, 4096 - 0x100, 1);
  EXPECT_EQ(result(), std::make_tuple(uint32_t{VRNIC_CQE_REG_MR}, uint32_t{VRNIC_CQE_SUCCESS},
                                      uint32_t{VRNIC_VERR_NONE}));
  EXPECT_EQ(write({buf_a_, 64, key_a_}, kIova, with_byte(0x5c)), VRNIC_CQE_SUCCESS);
  // DEREG_MR takes the key with any byte.
  auto dereg = vrnic_test::make_cmd(VRNIC_AQ_OP_DEREG_MR);
  dereg.dereg_mr.key = with_byte(0x01);
  EXPECT_EQ(dp_.drv().exec_status(dereg), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(write({buf_a_, 64, key_a_}, kIova, with_byte(0x5c)), VRNIC_CQE_REM_ACCESS_ERR);
}

// REG_MR may change only the consumer's byte of the key (issue 24,
// defect 2): one with another tag names no MR, and DEREG_MR needs the tag.
TEST_F(FastRegTest, TheTagIsTheDevices) {
  const uint32_t other_tag = key_ ^ vrnic::field_prep<VRNIC_KEY_TAG_MASK>(0x800U);
  post_reg(other_tag, 0x1000, 4096, 1);
  EXPECT_EQ(result(), std::make_tuple(uint32_t{VRNIC_CQE_REG_MR}, uint32_t{VRNIC_CQE_LOC_QP_OP_ERR},
                                      uint32_t{VRNIC_VERR_MR_KEY}));
  auto dereg = vrnic_test::make_cmd(VRNIC_AQ_OP_DEREG_MR);
  dereg.dereg_mr.key = other_tag;
  EXPECT_EQ(dp_.drv().exec_status(dereg), VRNIC_AQ_STATUS_NOT_FOUND);
  dereg.dereg_mr.key = key_;
  EXPECT_EQ(dp_.drv().exec_status(dereg), VRNIC_AQ_STATUS_OK);
}

TEST_F(FastRegTest, RegMrRefusals) {
  const auto refused = [&](uint32_t verr) {
    return std::make_tuple(uint32_t{VRNIC_CQE_REG_MR}, uint32_t{VRNIC_CQE_LOC_QP_OP_ERR}, verr);
  };
  // More pages than ALLOC_MR allowed, pages that do not cover the length.
  post_reg(key_, 0, 5 * 4096, kMaxPages + 1);
  EXPECT_EQ(result(), refused(VRNIC_VERR_MR_PAGES));
  pair();
  post_reg(key_, 0x100, 4096, 1);
  EXPECT_EQ(result(), refused(VRNIC_VERR_MR_PAGES));
  pair();
  // A registered MR is no fast-register MR; nor is a key of no MR.
  post_reg(key_b_, 0, 4096, 1);
  EXPECT_EQ(result(), refused(VRNIC_VERR_MR_KEY));
  pair();
  post_reg(0x7fff00, 0, 4096, 1);
  EXPECT_EQ(result(), refused(VRNIC_VERR_MR_KEY));
  pair();
  // A page list or a page outside guest RAM.
  vrnic_sqe_reg_mr r{};
  r.ctrl = vrnic::field_prep<VRNIC_WQE_CTRL_OPCODE_MASK>(VRNIC_WQE_REG_MR);
  r.key = key_;
  r.length = 4096;
  r.npages = 1;
  r.page_shift = 12;
  r.pbl_addr = DataPath::kRamSize - 4;
  post_raw(r);
  EXPECT_EQ(result(), refused(VRNIC_VERR_MR_PBL));
  pair();
  r.pbl_addr = dp_.pbl(DataPath::kRamSize, 1);
  post_raw(r);
  EXPECT_EQ(result(), refused(VRNIC_VERR_MR_PBL));
  pair();
  // Data on a memory management WQE.
  r.pbl_addr = dp_.pbl(buf_b_, 1);
  r.ctrl |= vrnic::field_prep<VRNIC_WQE_CTRL_NUM_SGE_MASK>(1);
  post_raw(r);
  EXPECT_EQ(result(), std::make_tuple(uint32_t{VRNIC_CQE_REG_MR}, uint32_t{VRNIC_CQE_LOC_QP_OP_ERR},
                                      uint32_t{VRNIC_VERR_WQE_LAYOUT}));
  // A QP of another PD cannot register it.
  DataPath::Qp other;
  ASSERT_EQ(dp_.create_qp(pd2_, cq_, cq_, &other), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.connect(other, other.qpn), VRNIC_AQ_STATUS_OK);
  std::swap(a_, other);
  post_reg(key_, 0, 4096, 1);
  EXPECT_EQ(result(), refused(VRNIC_VERR_MR_KEY));
  // ALLOC_MR's own limits.
  auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_ALLOC_MR);
  c.alloc_mr.pdn = pd_;
  c.alloc_mr.max_pages = 0;
  EXPECT_EQ(dp_.drv().exec_status(c), VRNIC_AQ_STATUS_BAD_PARAM);
  c.alloc_mr.max_pages = dp_.cfg().limits.max_fast_reg_page_list_len + 1;
  EXPECT_EQ(dp_.drv().exec_status(c), VRNIC_AQ_STATUS_BAD_PARAM);
  c.alloc_mr.max_pages = 1;
  c.alloc_mr.pdn = 999;
  EXPECT_EQ(dp_.drv().exec_status(c), VRNIC_AQ_STATUS_NOT_FOUND);
}

// SEND_WITH_INV: the receiver's MR becomes invalid, and its completion
// names the key; a key of another PD fails both sides with
// REM_INV_REQ_ERR and changes nothing.
TEST_F(FastRegTest, SendWithInvalidate) {
  post_reg(with_byte(0x11), 0, 4096, 1);
  EXPECT_EQ(std::get<1>(result()), VRNIC_CQE_SUCCESS);
  const vrnic_sge rsge{buf_b_ + 8192, 4096, key_b_};
  dp_.post_recv(b_, 7, std::span(&rsge, 1));
  post_inv(VRNIC_WQE_SEND_WITH_INV, with_byte(0x11));
  dp_.run();
  auto got = cqes(b_.qpn);
  ASSERT_EQ(got.size(), 1U);  // (cqes() drained a's completion too)
  EXPECT_EQ(got[0].status, VRNIC_CQE_SUCCESS);
  EXPECT_EQ(got[0].opcode, VRNIC_CQE_RECV);
  EXPECT_TRUE(got[0].has_inv);
  EXPECT_FALSE(got[0].has_imm);
  EXPECT_EQ(got[0].imm, with_byte(0x11));
  EXPECT_EQ(got[0].byte_len, 64U);
  EXPECT_EQ(write({buf_a_, 64, key_a_}, 0, with_byte(0x11)), VRNIC_CQE_REM_ACCESS_ERR);

  uint32_t other = 0;
  auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_ALLOC_MR);
  c.alloc_mr.pdn = pd2_;
  c.alloc_mr.max_pages = 1;
  ASSERT_EQ(dp_.exec_result(c, &other), VRNIC_AQ_STATUS_OK);
  pair();
  dp_.post_recv(b_, 8, std::span(&rsge, 1));
  post_inv(VRNIC_WQE_SEND_WITH_INV, other);
  dp_.run();
  std::vector<vrnic::CqeFields> a_done;
  std::vector<vrnic::CqeFields> b_done;
  while (auto e = dp_.poll(cq_)) {
    (e->qpn == a_.qpn ? a_done : b_done).push_back(*e);
  }
  ASSERT_EQ(b_done.size(), 1U);
  EXPECT_EQ(b_done[0].status, VRNIC_CQE_REM_INV_REQ_ERR);
  EXPECT_EQ(b_done[0].vendor_err, VRNIC_VERR_INV_RKEY);
  ASSERT_EQ(a_done.size(), 1U);
  EXPECT_EQ(a_done[0].status, VRNIC_CQE_REM_INV_REQ_ERR);
}

}  // namespace

namespace {

// The loopback queue is bounded, and senders wait for room in it (issue 9,
// defect 4): 16 UD QPs flooding their own GID with 128 datagrams each
// never queue more than FrameRouter::kMaxLoopback frames, and every
// datagram arrives.  (Unbounded, the queue grew by 256 frames a round.)
TEST(Loopback, BoundedWithBackpressure) {
  DataPath dp;
  ASSERT_TRUE(dp.bring_up());
  uint32_t pd = 0;
  ASSERT_EQ(dp.create_pd(&pd), VRNIC_AQ_STATUS_OK);
  DataPath::Cq scq;
  DataPath::Cq rcq;
  ASSERT_EQ(dp.create_cq(12, &scq), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp.create_cq(12, &rcq), VRNIC_AQ_STATUS_OK);
  const uint64_t buf = dp.alloc(1 << 20);
  uint32_t key = 0;
  ASSERT_EQ(dp.reg_mr(pd, buf, 1 << 20, VRNIC_ACCESS_ALL, &key), VRNIC_AQ_STATUS_OK);
  constexpr int kPairs = 16;
  constexpr int kEach = 128;
  std::vector<DataPath::Qp> tx(kPairs);
  std::vector<DataPath::Qp> rx(kPairs);
  for (int i = 0; i < kPairs; ++i) {
    tx[i].type = rx[i].type = VRNIC_QPT_UD;
    tx[i].sq_log_depth = rx[i].rq_log_depth = 7;
    ASSERT_EQ(dp.create_qp(pd, scq, rcq, &tx[i]), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp.create_qp(pd, scq, rcq, &rx[i]), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp.connect(tx[i], 0), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp.connect(rx[i], 0), VRNIC_AQ_STATUS_OK);
  }
  const vrnic_av av = DataPath::loopback_av();
  const vrnic_sge from{buf, 64, key};
  for (int i = 0; i < kPairs; ++i) {
    for (int n = 0; n < kEach; ++n) {
      const vrnic_sge into{buf + 4096 + static_cast<uint64_t>(i * kEach + n) * 128, 128, key};
      dp.post_recv(rx[i], 1, std::span(&into, 1));
      DataPath::SendWr wr;
      wr.remote_qpn = rx[i].qpn;
      wr.remote_qkey = 0x1234;
      dp.post_send(tx[i], wr, std::span(&from, 1), &av);
    }
  }
  size_t deepest = 0;
  int received = 0;
  for (int round = 0, idle = 0; round < 100000 && idle < 3; ++round) {
    idle = dp.dev().engine_poll_st() ? 0 : idle + 1;
    deepest = std::max(deepest, dp.dev().engine().loopback_depth());
    while (auto e = dp.poll(rcq)) {
      EXPECT_EQ(e->status, VRNIC_CQE_SUCCESS);
      ++received;
    }
    while (dp.poll(scq)) {
    }
  }
  EXPECT_LE(deepest, vrnicd::FrameRouter::kMaxLoopback);
  EXPECT_GT(deepest, vrnicd::FrameRouter::kMaxLoopback / 2);  // the bound was reached
  EXPECT_EQ(received, kPairs * kEach);
}

}  // namespace

namespace {

// A producer index that cannot be right is a catastrophic error of the
// QP, reported once: a QP already in error whose producer stays wrong
// neither raises QP_FATAL again nor keeps the engine busy (found by
// fuzz_poll: the old engine raised an event on every pass and never went
// idle, so one user's bad ring spun vrnicd's thread and flooded the AEQ).
TEST_F(DataPathTest, ARunawayProducerIsReportedOnceAndTheEngineIdles) {
  pair();
  while (dp_.drv().poll_aeqe()) {
  }
  vrnic::store_release32(dp_.ram(a_.dbrec + offsetof(vrnic_qp_dbrec, sq_pi)), 1000);
  dp_.run();
  int fatal = 0;
  while (const auto ev = dp_.drv().poll_aeqe()) {
    fatal += vrnic::field_get<VRNIC_EQE_TYPE_MASK>(ev->info) == VRNIC_EQE_TYPE_QP_FATAL ? 1 : 0;
  }
  EXPECT_EQ(fatal, 1);
  EXPECT_EQ(dp_.query_qp(a_.qpn)->state, VRNIC_QPS_ERR);
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(dp_.dev().engine_poll_st()) << "pass " << i;
  }
  EXPECT_FALSE(dp_.drv().poll_aeqe().has_value());
}

// RESIZE_CQ to fewer entries than are still to be polled is a bad value
// (EINVAL for the user, as on rxe and mlx5), and loses nothing: the CQ goes
// on in its old ring.  Once they are polled, the same resize is fine.
TEST_F(DataPathTest, ResizeBelowTheUnpolledIsRefusedAndLosesNothing) {
  pair();
  post_writes(10);
  dp_.run();
  const uint64_t ring = cq_.ring;
  EXPECT_EQ(dp_.resize_cq(&cq_, 2), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(cq_.ring, ring);
  expect_writes_done(10);
  EXPECT_EQ(dp_.resize_cq(&cq_, 2), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(write({buf_a_, 64, key_a_}, buf_b_, key_b_), VRNIC_CQE_SUCCESS) << "in the new ring";
}

// Work posted before a RESIZE_CQ is the device's before the command, as
// SQ doorbells written before the command's are on a PCIe device: the
// resize counts those completions (rdma-core's test_resize_cq posts six
// sends and then shrinks the CQ below them).
TEST_F(DataPathTest, AResizeSeesTheWorkPostedBeforeIt) {
  pair();
  post_writes(10);
  EXPECT_EQ(dp_.resize_cq(&cq_, 2), VRNIC_AQ_STATUS_BAD_PARAM);
  dp_.run();
  expect_writes_done(10);
}

// Completion event moderation (MODIFY_CQ, ibv_modify_cq): an armed CQ's
// event waits for count completions; a failed one does not wait.
TEST_F(DataPathTest, ModeratedEventsWaitForTheirCount) {
  pair();
  dp_.arm(cq_);
  post_writes(1);
  dp_.run();
  EXPECT_EQ(dp_.completion_events(), std::vector<uint32_t>{cq_.cqn}) << "unmoderated: at once";
  expect_writes_done(1);

  ASSERT_EQ(dp_.moderate(cq_, 4, 0), VRNIC_AQ_STATUS_OK);
  dp_.arm(cq_);
  post_writes(3);
  dp_.run();
  EXPECT_TRUE(dp_.completion_events().empty()) << "three of four";
  EXPECT_EQ(dp_.dev().engine_next_deadline_us(), UINT64_MAX) << "no period, no timer";
  post_writes(1);
  dp_.run();
  EXPECT_EQ(dp_.completion_events(), std::vector<uint32_t>{cq_.cqn}) << "the fourth";
  cqes(a_.qpn);
  post_writes(8);
  dp_.run();
  EXPECT_TRUE(dp_.completion_events().empty()) << "not armed: no event, whatever the count";
  cqes(a_.qpn);

  // An error completion raises it at once.
  dp_.arm(cq_);
  post_writes(1);
  dp_.run();
  EXPECT_TRUE(dp_.completion_events().empty());
  expect_writes_done(1);
  EXPECT_EQ(write({buf_a_, 64, key_a_}, buf_b_, key_b_ ^ 0x100), VRNIC_CQE_REM_ACCESS_ERR);
  EXPECT_EQ(dp_.completion_events(), std::vector<uint32_t>{cq_.cqn}) << "after an error CQE";
}

// The period: an event held back by its count goes out period_us after
// the first completion it waits behind, from the engine's timer, with no
// completion after it; the wait is the engine's next deadline.
TEST_F(DataPathTest, ModeratedEventsGoOutWhenThePeriodEnds) {
  pair();
  ASSERT_EQ(dp_.moderate(cq_, VRNIC_CQ_MOD_MAX_COUNT, VRNIC_CQ_MOD_MAX_PERIOD_US),
            VRNIC_AQ_STATUS_OK);
  dp_.arm(cq_);
  const uint64_t before = dp_.dev().engine().now_us();
  post_writes(2);
  dp_.run();
  const uint64_t deadline = dp_.dev().engine_next_deadline_us();
  ASSERT_NE(deadline, UINT64_MAX) << "a held event sets the engine a deadline";
  EXPECT_GE(deadline, before + VRNIC_CQ_MOD_MAX_PERIOD_US);
  EXPECT_LE(deadline, dp_.dev().engine().now_us() + VRNIC_CQ_MOD_MAX_PERIOD_US);
  if (dp_.dev().engine().now_us() < deadline) {
    EXPECT_TRUE(dp_.completion_events().empty()) << "held until the period ends";
  }
  while (dp_.dev().engine().now_us() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  dp_.run();
  EXPECT_EQ(dp_.completion_events(), std::vector<uint32_t>{cq_.cqn}) << "the timer's event";
  EXPECT_EQ(dp_.dev().engine_next_deadline_us(), UINT64_MAX);
  expect_writes_done(2);
}

// A new setting applies to what the old one holds back, and MODIFY_CQ
// checks its fields.
TEST_F(DataPathTest, ModifyCqRulesAndValidation) {
  pair();
  ASSERT_EQ(dp_.moderate(cq_, 8, 0), VRNIC_AQ_STATUS_OK);
  dp_.arm(cq_);
  post_writes(3);
  dp_.run();
  EXPECT_TRUE(dp_.completion_events().empty());
  ASSERT_EQ(dp_.moderate(cq_, 2, 0), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.completion_events(), std::vector<uint32_t>{cq_.cqn}) << "3 held, 2 asked for";
  ASSERT_EQ(dp_.moderate(cq_, 0, 0), VRNIC_AQ_STATUS_OK);
  dp_.arm(cq_);
  post_writes(1);
  dp_.run();
  EXPECT_EQ(dp_.completion_events(), std::vector<uint32_t>{cq_.cqn}) << "moderation off again";

  EXPECT_EQ(dp_.moderate(cq_, VRNIC_CQ_MOD_MAX_COUNT + 1, 0), VRNIC_AQ_STATUS_BAD_PARAM);
  EXPECT_EQ(dp_.moderate(cq_, 2, VRNIC_CQ_MOD_MAX_PERIOD_US + 1), VRNIC_AQ_STATUS_BAD_PARAM);
  DataPath::Cq none = cq_;
  none.cqn = 999;
  EXPECT_EQ(dp_.moderate(none, 2, 10), VRNIC_AQ_STATUS_NOT_FOUND);
  auto c = vrnic_test::make_cmd(VRNIC_AQ_OP_MODIFY_CQ, 1);
  c.modify_cq.cqn = cq_.cqn;
  EXPECT_EQ(dp_.drv().exec_status(c), VRNIC_AQ_STATUS_BAD_PARAM) << "flags";
  c = vrnic_test::make_cmd(VRNIC_AQ_OP_MODIFY_CQ);
  c.modify_cq.cqn = cq_.cqn;
  c.modify_cq.rsvd[3] = 1;
  EXPECT_EQ(dp_.drv().exec_status(c), VRNIC_AQ_STATUS_BAD_PARAM) << "reserved";

  // A CQ destroyed with its timer running leaves the engine no deadline.
  ASSERT_EQ(dp_.moderate(cq_, 4, 1000), VRNIC_AQ_STATUS_OK);
  dp_.arm(cq_);
  post_writes(1);
  dp_.run();
  EXPECT_NE(dp_.dev().engine_next_deadline_us(), UINT64_MAX);
  ASSERT_EQ(dp_.destroy_qp(a_.qpn), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.destroy_qp(b_.qpn), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.destroy_cq(cq_.cqn), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(dp_.dev().engine_next_deadline_us(), UINT64_MAX);
}

// MODIFY_QP's rate limit: taken on RTR -> RTS and RTS -> RTS, within the
// device's range, a burst only with a rate; QUERY_QP gives both back and
// RESET forgets them.  (The pacing itself: transport_test.cc.)
TEST_F(DataPathTest, RateLimitRulesAndQuery) {
  pair();
  auto pace = [&](uint32_t kbps, uint32_t burst, uint32_t state = VRNIC_QPS_RTS) {
    vrnic_qp_attr a{};
    a.state = state;
    a.rate_limit = kbps;
    a.max_burst = burst;
    return dp_.modify_qp(a_.qpn, VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_RATE_LIMIT, a);
  };
  auto paced = [&] {
    auto q = dp_.query_qp(a_.qpn);
    return q ? std::pair{q->rate_limit, q->max_burst} : std::pair{~0U, ~0U};
  };
  ASSERT_EQ(pace(8000, 0), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(paced(), std::pair(8000U, 0U));
  ASSERT_EQ(pace(100'000'000, 1 << 20), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(paced(), std::pair(100'000'000U, 1U << 20));
  EXPECT_EQ(pace(999, 0), VRNIC_AQ_STATUS_BAD_PARAM) << "below 1 Mbit/s";
  EXPECT_EQ(pace(100'000'001, 0), VRNIC_AQ_STATUS_BAD_PARAM) << "above 100 Gbit/s";
  EXPECT_EQ(pace(0, 4096), VRNIC_AQ_STATUS_BAD_PARAM) << "a burst without a rate";
  EXPECT_EQ(pace(8000, 0, VRNIC_QPS_SQD), VRNIC_AQ_STATUS_BAD_PARAM) << "RTS -> SQD";
  EXPECT_EQ(paced(), std::pair(100'000'000U, 1U << 20)) << "refused: unchanged";
  ASSERT_EQ(pace(0, 0), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(paced(), std::pair(0U, 0U));
  ASSERT_EQ(pace(8000, 0), VRNIC_AQ_STATUS_OK);
  vrnic_qp_attr reset{};
  reset.state = VRNIC_QPS_RESET;
  ASSERT_EQ(dp_.modify_qp(a_.qpn, VRNIC_QP_ATTR_STATE, reset), VRNIC_AQ_STATUS_OK);
  EXPECT_EQ(paced(), std::pair(0U, 0U)) << "RESET forgets the rate";
  vrnic_qp_attr init{};
  init.state = VRNIC_QPS_INIT;
  init.port = 1;
  init.rate_limit = 8000;
  const uint32_t init_mask =
      VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_PORT | VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_ACCESS;
  EXPECT_EQ(dp_.modify_qp(a_.qpn, init_mask | VRNIC_QP_ATTR_RATE_LIMIT, init),
            VRNIC_AQ_STATUS_BAD_PARAM)
      << "RESET -> INIT";
  // Paced (at a rate the test's time does not notice), the QP still works.
  ASSERT_EQ(dp_.modify_qp(b_.qpn, VRNIC_QP_ATTR_STATE, reset), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.connect(a_, b_.qpn), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(dp_.connect(b_, a_.qpn), VRNIC_AQ_STATUS_OK);
  ASSERT_EQ(pace(100'000'000, 0), VRNIC_AQ_STATUS_OK);
  post_writes(4);
  dp_.run();
  expect_writes_done(4);
}

// A CQ overrun is the guest's doing: its warning is rate limited, so that a
// user who overruns CQ after CQ cannot flood vrnicd's log (issue 9,
// defect 6; it was one LOG_WARN per CQ).
TEST_F(DataPathTest, CqOverrunWarningsAreRateLimited) {
  char path[] = "/tmp/vrnic-log-test-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_TRUE(vrnicd::log_open_file(path));
  const vrnicd::LogLevel level = vrnicd::log_level();
  vrnicd::log_set_level(vrnicd::LogLevel::kWarn);
  vrnicd::log_guest_error_new_window();
  constexpr int kCqs = 40;
  for (int n = 0; n < kCqs; ++n) {
    DataPath::Cq cq;
    ASSERT_EQ(dp_.create_cq(2, &cq), VRNIC_AQ_STATUS_OK);
    DataPath::Qp a;
    DataPath::Qp b;
    ASSERT_EQ(dp_.create_qp(pd_, cq, cq, &a), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.create_qp(pd_, cq, cq, &b), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.connect(a, b.qpn), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.connect(b, a.qpn), VRNIC_AQ_STATUS_OK);
    const vrnic_sge local{buf_a_, 8, key_a_};
    for (uint64_t i = 0; i < 8; ++i) {  // twice what the CQ holds
      auto h = sqe(VRNIC_WQE_RDMA_WRITE, i);
      h.remote_addr = buf_b_;
      h.rkey = key_b_;
      dp_.post_send(a, h, std::span(&local, 1));
    }
    dp_.run();
  }
  vrnicd::log_close_file();
  vrnicd::log_set_level(level);
  std::ifstream in(path);
  int overruns = 0;
  for (std::string line; std::getline(in, line);) {
    overruns += line.find("overrun") != std::string::npos ? 1 : 0;
  }
  unlink(path);
  EXPECT_GE(overruns, 1);
  EXPECT_LE(overruns, 21) << "of " << kCqs << " overruns";
}

// Ring depths are the guest's log2 values: 32 and more are refused before
// anything shifts by them (issue 9, defect 6; under UBSan, make sanitize,
// the old 1U << value aborted).
TEST_F(DataPathTest, HugeLogDepthsAreRefused) {
  for (const uint32_t log : {32U, 40U, 255U}) {
    DataPath::Qp q;
    q.sq_log_depth = log;
    EXPECT_EQ(dp_.create_qp(pd_, cq_, cq_, &q), VRNIC_AQ_STATUS_BAD_PARAM) << log;
    q = {};
    q.rq_log_depth = log;
    EXPECT_EQ(dp_.create_qp(pd_, cq_, cq_, &q), VRNIC_AQ_STATUS_BAD_PARAM) << log;
    DataPath::Srq srq;
    srq.log_depth = log;
    EXPECT_EQ(dp_.create_srq(pd_, &srq), VRNIC_AQ_STATUS_BAD_PARAM) << log;
  }
}

}  // namespace
