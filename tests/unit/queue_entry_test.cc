// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic and the device agree on every queue entry.  libvrnic's own
// posting and polling code (post.cc, poll.cc) runs here against the device
// model's rings: every send WQE libvrnic can build, through both
// ibv_post_send() and ibv_wr_*(), is parsed by the device's parser
// (Qp::read_send_wqe), and every CQE the device writes is read back
// through ibv_poll_cq() and ibv_start_poll().
#include <endian.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../userspace/provider/vrnic.h"
#include "datapath.h"
#include "engine/object_table.h"
#include "engine/qp.h"

namespace {

using vrnic_test::DataPath;
namespace roce = vrnicd::roce;

constexpr uint32_t kLogStride = 9;  // room for 16 SGEs after a UD address
constexpr uint32_t kMaxInline = 256;

const char* type_name(ibv_qp_type t) {
  return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

uint32_t device_type(ibv_qp_type t) {
  return t == IBV_QPT_RC ? VRNIC_QPT_RC : t == IBV_QPT_UC ? VRNIC_QPT_UC : VRNIC_QPT_UD;
}

// How a WR carries its data.
struct Data {
  bool is_inline = false;
  size_t n = 0;  // SGEs, or inline bytes
};

// A device QP and a libvrnic QP on the same rings.
class QueueEntries : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dp_.bring_up());
    ASSERT_EQ(dp_.create_pd(&pd_), VRNIC_AQ_STATUS_OK);
    ASSERT_EQ(dp_.create_cq(8, &cq_), VRNIC_AQ_STATUS_OK);
    ah_.av = DataPath::loopback_av();
    for (size_t i = 0; i < inline_src_.size(); ++i) {
      inline_src_[i] = static_cast<uint8_t>(i * 13 + 1);
    }
  }
  void TearDown() override {
    if (qp_.sq != nullptr) {
      pthread_spin_destroy(&qp_.sq_lock);
    }
  }

  void make_qp(ibv_qp_type type) {
    dq_ = {};
    dq_.type = device_type(type);
    dq_.sq_log_stride = kLogStride;
    ASSERT_EQ(dp_.create_qp(pd_, cq_, cq_, &dq_, kMaxInline), VRNIC_AQ_STATUS_OK);
    dev_qp_ = dp_.dev().engine().objects().find_qp(dq_.qpn);
    ASSERT_NE(dev_qp_, nullptr);
    if (qp_.sq != nullptr) {
      pthread_spin_destroy(&qp_.sq_lock);
    }
    qp_ = vrnic::Qp{};
    qp_.ctx = &ctx_;  // no doorbell page: the device here is polled by hand
    qp_.type = type;
    qp_.vqp.qp.qp_type = type;
    qp_.vqp.qp.state = IBV_QPS_RTS;
    qp_.dbrec = dp_.ram(dq_.dbrec);
    qp_.sq = dp_.ram(dq_.sq);
    qp_.sq_log_depth = dq_.sq_log_depth;
    qp_.sq_log_stride = dq_.sq_log_stride;
    qp_.max_send_sge = VRNIC_MAX_SGE;
    qp_.max_inline = kMaxInline;
    pthread_spin_init(&qp_.sq_lock, PTHREAD_PROCESS_PRIVATE);
    vrnic::set_wr_ops(&qp_, vrnic::send_ops_for(type));
    pi_ = 0;
  }

  // A WR of opcode op with random fields and data as d says.
  ibv_send_wr make_wr(ibv_wr_opcode op, const Data& d, unsigned int flags) {
    ibv_send_wr wr{};
    wr.wr_id = rng_();
    wr.opcode = op;
    wr.send_flags = flags | (d.is_inline ? IBV_SEND_INLINE : 0U);
    wr.imm_data = static_cast<uint32_t>(rng_());
    if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
      wr.wr.atomic = {rng_(), rng_(), rng_(), static_cast<uint32_t>(rng_())};
    } else if (qp_.type == IBV_QPT_UD) {
      wr.wr.ud = {&ah_.ibv_ah, static_cast<uint32_t>(rng_() & 0xffffff),
                  static_cast<uint32_t>(rng_())};
    } else {
      wr.wr.rdma = {rng_(), static_cast<uint32_t>(rng_())};
    }
    sges_.clear();
    if (d.is_inline) {
      sges_.push_back({reinterpret_cast<uintptr_t>(inline_src_.data()),  // NOLINT
                       static_cast<uint32_t>(d.n), 0});
    } else {
      for (size_t i = 0; i < d.n; ++i) {
        sges_.push_back(
            {rng_(), static_cast<uint32_t>(rng_() & 0xfffff), static_cast<uint32_t>(rng_())});
      }
    }
    wr.sg_list = sges_.data();
    wr.num_sge = static_cast<int>(sges_.size());
    return wr;
  }

  // The device's view of the WQE libvrnic just posted equals wr.
  void expect_parsed(const ibv_send_wr& wr, const std::string& what) {
    SCOPED_TRACE(what);
    roce::SendWqe w;
    bool bad = false;
    ASSERT_TRUE(dev_qp_->read_send_wqe(pi_, &w, &bad)) << "bad " << bad;
    dev_qp_->retire_send(++pi_);  // the slot is free again
    EXPECT_EQ(w.wr_id, wr.wr_id);
    EXPECT_EQ(static_cast<int>(w.opcode), static_cast<int>(wr.opcode));
    EXPECT_EQ(w.signaled, (wr.send_flags & IBV_SEND_SIGNALED) != 0);
    EXPECT_EQ(w.solicited, (wr.send_flags & IBV_SEND_SOLICITED) != 0);
    EXPECT_EQ(w.fence, (wr.send_flags & IBV_SEND_FENCE) != 0);
    if (wr.opcode == IBV_WR_SEND_WITH_IMM || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
      EXPECT_EQ(w.imm, be32toh(wr.imm_data));
    }
    expect_fields(wr, w);
    expect_data(wr, w);
  }

  static void expect_fields(const ibv_send_wr& wr, const roce::SendWqe& w) {
    switch (wr.opcode) {
      case IBV_WR_ATOMIC_CMP_AND_SWP:
      case IBV_WR_ATOMIC_FETCH_AND_ADD:
        EXPECT_EQ(w.remote_addr, wr.wr.atomic.remote_addr);
        EXPECT_EQ(w.rkey, wr.wr.atomic.rkey);
        EXPECT_EQ(w.compare_add, wr.wr.atomic.compare_add);
        if (wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
          EXPECT_EQ(w.swap, wr.wr.atomic.swap);
        }
        return;
      case IBV_WR_RDMA_WRITE:
      case IBV_WR_RDMA_WRITE_WITH_IMM:
      case IBV_WR_RDMA_READ:
        EXPECT_EQ(w.remote_addr, wr.wr.rdma.remote_addr);
        EXPECT_EQ(w.rkey, wr.wr.rdma.rkey);
        return;
      default:
        return;
    }
  }

  void expect_data(const ibv_send_wr& wr, const roce::SendWqe& w) const {
    if (qp_.type == IBV_QPT_UD) {
      EXPECT_EQ(w.remote_qpn, wr.wr.ud.remote_qpn);
      EXPECT_EQ(w.remote_qkey, wr.wr.ud.remote_qkey);
      EXPECT_EQ(w.ud_path.dgid, DataPath::kGid);  // the AH's address, resolved
    }
    if ((wr.send_flags & IBV_SEND_INLINE) != 0) {
      ASSERT_TRUE(w.is_inline);
      ASSERT_EQ(w.inline_data.size(), wr.sg_list[0].length);
      EXPECT_TRUE(
          std::equal(w.inline_data.begin(), w.inline_data.end(), inline_src_.begin(),
                     [](std::byte a, uint8_t b) { return std::to_integer<uint8_t>(a) == b; }));
      return;
    }
    EXPECT_FALSE(w.is_inline);
    ASSERT_EQ(w.num_sge, static_cast<uint32_t>(wr.num_sge));
    uint64_t total = 0;
    for (uint32_t i = 0; i < w.num_sge; ++i) {
      EXPECT_EQ(w.sge[i].addr, wr.sg_list[i].addr);
      EXPECT_EQ(w.sge[i].length, wr.sg_list[i].length);
      EXPECT_EQ(w.sge[i].lkey, wr.sg_list[i].lkey);
      total += wr.sg_list[i].length;
    }
    EXPECT_EQ(w.length, total);
  }

  // The same WR through the ibv_wr_*() API.
  void post_wr_api(const ibv_send_wr& wr) {
    ibv_qp_ex* qpx = &qp_.vqp.qp_ex;
    ibv_wr_start(qpx);
    qpx->wr_id = wr.wr_id;
    qpx->wr_flags = wr.send_flags;
    const auto& r = wr.wr.rdma;
    const auto& a = wr.wr.atomic;
    switch (wr.opcode) {
      case IBV_WR_SEND:
        ibv_wr_send(qpx);
        break;
      case IBV_WR_SEND_WITH_IMM:
        ibv_wr_send_imm(qpx, wr.imm_data);
        break;
      case IBV_WR_RDMA_WRITE:
        ibv_wr_rdma_write(qpx, r.rkey, r.remote_addr);
        break;
      case IBV_WR_RDMA_WRITE_WITH_IMM:
        ibv_wr_rdma_write_imm(qpx, r.rkey, r.remote_addr, wr.imm_data);
        break;
      case IBV_WR_RDMA_READ:
        ibv_wr_rdma_read(qpx, r.rkey, r.remote_addr);
        break;
      case IBV_WR_ATOMIC_CMP_AND_SWP:
        ibv_wr_atomic_cmp_swp(qpx, a.rkey, a.remote_addr, a.compare_add, a.swap);
        break;
      default:
        ibv_wr_atomic_fetch_add(qpx, a.rkey, a.remote_addr, a.compare_add);
        break;
    }
    if (qp_.type == IBV_QPT_UD) {
      ibv_wr_set_ud_addr(qpx, wr.wr.ud.ah, wr.wr.ud.remote_qpn, wr.wr.ud.remote_qkey);
    }
    if ((wr.send_flags & IBV_SEND_INLINE) != 0) {
      ibv_wr_set_inline_data(qpx, inline_src_.data(), wr.sg_list[0].length);
    } else {
      ibv_wr_set_sge_list(qpx, static_cast<size_t>(wr.num_sge), wr.sg_list);
    }
    ASSERT_EQ(ibv_wr_complete(qpx), 0);
  }

  DataPath dp_;
  uint32_t pd_ = 0;
  DataPath::Cq cq_;
  DataPath::Qp dq_;
  vrnicd::Qp* dev_qp_ = nullptr;
  vrnic::Context ctx_{};
  vrnic::Qp qp_{};
  vrnic::Ah ah_{};
  uint32_t pi_ = 0;
  std::vector<ibv_sge> sges_;
  std::array<uint8_t, kMaxInline> inline_src_{};
  std::mt19937_64 rng_{42};
};

constexpr ibv_wr_opcode kOpcodes[] = {
    IBV_WR_RDMA_WRITE,          IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
    IBV_WR_SEND_WITH_IMM,       IBV_WR_RDMA_READ,           IBV_WR_ATOMIC_CMP_AND_SWP,
    IBV_WR_ATOMIC_FETCH_AND_ADD};

bool inline_capable(ibv_wr_opcode op) {
  return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE ||
         op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

// Every opcode each QP type allows, from 0, 1, 3 and 16 SGEs and from
// inline data of 0, 1, 17 and 256 bytes, with every flag: through
// ibv_post_send() and ibv_wr_*(), and the device reads back what was meant.
TEST_F(QueueEntries, EveryWqeLibvrnicBuildsParsesOnTheDevice) {
  const std::vector<Data> data = {{false, 0}, {false, 1}, {false, 3}, {false, 16},
                                  {true, 0},  {true, 1},  {true, 17}, {true, kMaxInline}};
  const unsigned int flag_sets[] = {0, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, IBV_SEND_FENCE};
  int checked = 0;
  for (const ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD}) {
    make_qp(type);
    for (const ibv_wr_opcode op : kOpcodes) {
      if ((vrnic::send_ops_for(type) & vrnic::send_op_bit(op)) == 0) {
        continue;
      }
      for (const Data& d : data) {
        if (d.is_inline && !inline_capable(op)) {
          continue;
        }
        for (const unsigned int flags : flag_sets) {
          const std::string what = std::string(type_name(type)) + " opcode " + std::to_string(op) +
                                   (d.is_inline ? " inline " : " sges ") + std::to_string(d.n) +
                                   " flags " + std::to_string(flags);
          ibv_send_wr wr = make_wr(op, d, flags);
          ibv_send_wr* bad = nullptr;
          ASSERT_EQ(vrnic::post_send(&qp_.vqp.qp, &wr, &bad), 0) << what;
          expect_parsed(wr, what + " (ibv_post_send)");
          wr = make_wr(op, d, flags);
          post_wr_api(wr);
          expect_parsed(wr, what + " (ibv_wr_*)");
          checked += 2;
        }
      }
    }
  }
  // Two APIs, three flag sets; RC: 4 opcodes with inline data and 3
  // without, UC: 4 with, UD: 2 with.
  EXPECT_EQ(checked, 2 * 3 * ((4 * 8 + 3 * 4) + 4 * 8 + 2 * 8));
}

// A WR libvrnic refuses is not posted, and the device sees nothing.
TEST_F(QueueEntries, WhatLibvrnicRefusesNeverReachesTheDevice) {
  make_qp(IBV_QPT_UD);
  ibv_send_wr wr = make_wr(IBV_WR_RDMA_WRITE, {false, 1}, 0);  // no WRITE on UD
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(vrnic::post_send(&qp_.vqp.qp, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
  wr = make_wr(IBV_WR_SEND, {true, kMaxInline + 1}, 0);  // inline beyond the QP's
  EXPECT_EQ(vrnic::post_send(&qp_.vqp.qp, &wr, &bad), EINVAL);
  roce::SendWqe w;
  bool dev_bad = false;
  EXPECT_FALSE(dev_qp_->read_send_wqe(0, &w, &dev_bad));
  EXPECT_FALSE(dev_bad);
}

// A libvrnic CQ on the device CQ's ring.
class Completions : public QueueEntries {
 protected:
  void SetUp() override {
    QueueEntries::SetUp();
    make_qp(IBV_QPT_UD);
    cq_p_.ring = dp_.ram(cq_.ring);
    cq_p_.dbrec = dp_.ram(cq_.dbrec);
    cq_p_.log_depth = cq_.log_depth;
    pthread_spin_init(&cq_p_.lock, PTHREAD_PROCESS_PRIVATE);
    vrnic::set_ex_ops(&cq_p_, IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
                                  IBV_WC_EX_WITH_SRC_QP);
  }
  void TearDown() override {
    pthread_spin_destroy(&cq_p_.lock);
    QueueEntries::TearDown();
  }

  static void expect_wc(const roce::Completion& c, uint32_t qpn, const ibv_wc& wc) {
    EXPECT_EQ(wc.wr_id, c.wr_id);
    EXPECT_EQ(static_cast<int>(wc.status), static_cast<int>(c.status));
    EXPECT_EQ(static_cast<int>(wc.opcode), static_cast<int>(c.opcode));
    EXPECT_EQ(wc.byte_len, c.byte_len);
    EXPECT_EQ(wc.qp_num, qpn);
    EXPECT_EQ(wc.src_qp, c.src_qp);
    EXPECT_EQ(wc.vendor_err, c.vendor_err);
    EXPECT_EQ((wc.wc_flags & IBV_WC_WITH_IMM) != 0, c.has_imm);
    EXPECT_EQ((wc.wc_flags & IBV_WC_GRH) != 0, c.grh);
    if (c.has_imm) {
      EXPECT_EQ(be32toh(wc.imm_data), c.imm);
    }
  }

  vrnic::Cq cq_p_{};
};

constexpr roce::WcOpcode kWcOpcodes[] = {roce::WcOpcode::kSend,        roce::WcOpcode::kWrite,
                                         roce::WcOpcode::kRead,        roce::WcOpcode::kCompareSwap,
                                         roce::WcOpcode::kFetchAdd,    roce::WcOpcode::kRecv,
                                         roce::WcOpcode::kRecvWriteImm};

constexpr roce::WcStatus kWcStatuses[] = {
    roce::WcStatus::kSuccess,      roce::WcStatus::kLocLenErr,    roce::WcStatus::kLocQpOpErr,
    roce::WcStatus::kLocProtErr,   roce::WcStatus::kWrFlushErr,   roce::WcStatus::kBadRespErr,
    roce::WcStatus::kLocAccessErr, roce::WcStatus::kRemInvReqErr, roce::WcStatus::kRemAccessErr,
    roce::WcStatus::kRemOpErr,     roce::WcStatus::kRetryExcErr,  roce::WcStatus::kRnrRetryExcErr,
    roce::WcStatus::kFatalErr,     roce::WcStatus::kGeneralErr};

// Every opcode, status and flag the device writes into a CQE reads back
// the same through ibv_poll_cq() and through ibv_start_poll(), over more
// than one pass of the ring.
TEST_F(Completions, EveryCqeTheDeviceWritesPollsBackTheSame) {
  std::mt19937 rng(5);
  int n = 0;
  for (const roce::WcOpcode op : kWcOpcodes) {
    for (const roce::WcStatus st : kWcStatuses) {
      for (int f = 0; f < 4; ++f, ++n) {
        roce::Completion c;
        c.wr_id = rng();
        c.wqe_idx = static_cast<uint32_t>(rng() & 0xff);
        c.opcode = op;
        c.status = st;
        c.byte_len = static_cast<uint32_t>(rng());
        c.has_imm = (f & 1) != 0;
        c.imm = static_cast<uint32_t>(rng());
        c.grh = (f & 2) != 0;
        c.ipv4 = c.grh && (n & 4) != 0;
        c.src_qp = static_cast<uint32_t>(rng() & 0xffffff);
        c.vendor_err = st == roce::WcStatus::kSuccess ? 0 : static_cast<uint8_t>(n % 127 + 1);
        if (op >= roce::WcOpcode::kRecv) {
          dev_qp_->complete_recv(c);
        } else {
          dev_qp_->complete_send(c);
        }
        if ((n & 1) == 0) {
          ibv_wc wc{};
          ASSERT_EQ(vrnic::poll_cq(&cq_p_.vcq.cq, 1, &wc), 1) << n;
          expect_wc(c, dq_.qpn, wc);
          continue;
        }
        ibv_cq_ex* cqx = &cq_p_.vcq.cq_ex;
        ibv_poll_cq_attr attr{};
        ASSERT_EQ(ibv_start_poll(cqx, &attr), 0) << n;
        ibv_wc wc{};
        wc.wr_id = cqx->wr_id;
        wc.status = cqx->status;
        wc.opcode = ibv_wc_read_opcode(cqx);
        wc.byte_len = ibv_wc_read_byte_len(cqx);
        wc.imm_data = ibv_wc_read_imm_data(cqx);
        wc.qp_num = ibv_wc_read_qp_num(cqx);
        wc.src_qp = ibv_wc_read_src_qp(cqx);
        wc.wc_flags = ibv_wc_read_wc_flags(cqx);
        wc.vendor_err = ibv_wc_read_vendor_err(cqx);
        ibv_end_poll(cqx);
        expect_wc(c, dq_.qpn, wc);
      }
    }
  }
  EXPECT_GT(n, 1 << cq_.log_depth);  // the owner bit flipped
  ibv_wc wc{};
  EXPECT_EQ(vrnic::poll_cq(&cq_p_.vcq.cq, 1, &wc), 0);
}

// A CQE whose opcode or status the interface does not define is a device
// bug: libvrnic reports it as GENERAL_ERR (as vrnic.ko does), never as a
// successful RECV.
TEST_F(Completions, UnknownOpcodesAndStatusesAreErrors) {
  const std::pair<uint32_t, uint32_t> cases[] = {
      {0x55, VRNIC_CQE_SUCCESS}, {VRNIC_CQE_RECV, 0x33}, {VRNIC_CQE_SEND, 3}, {0xff, 0xff}};
  uint32_t idx = 0;
  for (const auto& [opcode, status] : cases) {
    vrnic::CqeFields f;
    f.wr_id = 1000 + idx;
    f.opcode = opcode;
    f.status = status;
    vrnic::cqe_write(dp_.ram(cq_.ring) + (size_t{idx} << VRNIC_CQE_LOG_SIZE), f, idx,
                     cq_.log_depth);
    ibv_wc wc{};
    ASSERT_EQ(vrnic::poll_cq(&cq_p_.vcq.cq, 1, &wc), 1);
    EXPECT_EQ(wc.wr_id, f.wr_id);
    EXPECT_EQ(wc.status, IBV_WC_GENERAL_ERR) << opcode << "/" << status;
    EXPECT_NE(wc.opcode, IBV_WC_RECV);
    ++idx;
  }
}

// ibv_destroy_qp's CQ clean: the destroyed QP's unpolled entries go, every
// other entry stays, in order and whole, across the ring's wrap; the
// consumer index passes the freed slots and the device's next entry
// (after them) polls normally.
TEST_F(Completions, CleaningDropsOneQpsEntriesAndKeepsTheRest) {
  const uint32_t depth = 1U << cq_.log_depth;
  const auto write = [&](uint32_t idx, uint32_t qpn) {
    vrnic::CqeFields f;
    f.wr_id = (uint64_t{qpn} << 32) | idx;
    f.opcode = VRNIC_CQE_RECV;
    f.byte_len = idx * 3;
    f.has_imm = (idx & 1) != 0;
    f.imm = idx ^ 0x5a5a;
    f.qpn = qpn;
    f.src_qp = idx + 7;
    vrnic::cqe_write(
        dp_.ram(cq_.ring) + (size_t{vrnic::ring_slot(idx, cq_.log_depth)} << VRNIC_CQE_LOG_SIZE), f,
        idx, cq_.log_depth);
  };
  // Start near the end of the first pass, so that the kept entries move
  // across the wrap and take the other owner bit.
  uint32_t idx = 0;
  ibv_wc wc{};
  for (; idx < depth - 3; ++idx) {
    write(idx, 9);
    ASSERT_EQ(vrnic::poll_cq(&cq_p_.vcq.cq, 1, &wc), 1);
  }
  std::vector<uint32_t> kept;
  for (uint32_t n = 0; n < 8; ++n, ++idx) {
    const uint32_t qpn = (n % 3 == 1) ? 5 : 9;
    write(idx, qpn);
    if (qpn == 9) {
      kept.push_back(idx);
    }
  }
  vrnic::clean_cq(&cq_p_, 5);
  for (const uint32_t i : kept) {
    ASSERT_EQ(vrnic::poll_cq(&cq_p_.vcq.cq, 1, &wc), 1) << i;
    EXPECT_EQ(wc.wr_id, (uint64_t{9} << 32) | i);
    EXPECT_EQ(wc.qp_num, 9U);
    EXPECT_EQ(wc.byte_len, i * 3);
    EXPECT_EQ(wc.src_qp, i + 7);
    EXPECT_EQ((wc.wc_flags & IBV_WC_WITH_IMM) != 0, (i & 1) != 0);
  }
  EXPECT_EQ(vrnic::poll_cq(&cq_p_.vcq.cq, 1, &wc), 0);
  uint32_t published = 0;
  std::memcpy(&published, cq_p_.dbrec + offsetof(vrnic_cq_dbrec, ci), sizeof(published));
  EXPECT_EQ(le32toh(published), idx);
  write(idx, 9);
  ASSERT_EQ(vrnic::poll_cq(&cq_p_.vcq.cq, 1, &wc), 1);
  EXPECT_EQ(wc.wr_id, (uint64_t{9} << 32) | idx);
  // Nothing of the QP: nothing moves.
  vrnic::clean_cq(&cq_p_, 5);
  EXPECT_EQ(vrnic::poll_cq(&cq_p_.vcq.cq, 1, &wc), 0);
}

}  // namespace
