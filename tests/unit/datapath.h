// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// A whole device in process, for host tests and fuzzers of the data path:
// vrnicd's Device over a fake guest RAM, driven the way vrnic.ko and
// libvrnic drive it: admin commands create PDs, MRs, CQs and QPs whose
// rings live in that RAM, WQEs are written into the rings, and the engine
// is polled by hand.  QPs talk to each other through the device's own
// RoCEv2 GID (loopback), or to another DataPath's QPs over a Cable.  No
// gtest here: fuzzers use it too.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "base/bar2.h"
#include "base/guest_memory.h"
#include "base/irq.h"
#include "device/device.h"
#include "fake_driver.h"
#include "hw_access.h"
#include "queue_entry.h"

namespace vrnic_test {

class DataPath {
 public:
  static constexpr size_t kRamSize = size_t{32} << 20;
  static constexpr uint64_t kHeap = uint64_t{1} << 20;  // above FakeDriver's queues
  static constexpr uint64_t kPage = 4096;
  static constexpr uint32_t kEqn = 1;
  static constexpr uint32_t kEqLog = 8;
  // The port's GID 0, an IPv4-mapped RoCEv2 GID, and its MAC.
  static constexpr std::array<uint8_t, 16> kGid = {0, 0, 0,    0,    0,  0, 0, 0,
                                                   0, 0, 0xff, 0xff, 10, 0, 0, 1};
  static constexpr std::array<uint8_t, 6> kMac = {0x52, 0x54, 0, 1, 2, 3};

  struct Cq {
    uint32_t cqn = 0;
    uint64_t dbrec = 0;
    uint64_t ring = 0;
    uint32_t log_depth = 0;
    uint32_t ci = 0;
    uint64_t pbl = 0;  // its page list, kept for recreate_cq()
    uint32_t npages = 0;
  };

  // A send work request, in CPU order, as libvrnic takes one.
  struct SendWr {
    uint32_t opcode = VRNIC_WQE_SEND;
    uint64_t wr_id = 0;
    uint32_t flags = VRNIC_WQE_CTRL_SIGNALED;  // VRNIC_WQE_CTRL_*
    uint32_t imm_data = 0;
    uint64_t remote_addr = 0;
    uint32_t rkey = 0;
    uint64_t compare_add = 0;
    uint64_t swap = 0;
    uint32_t remote_qpn = 0;
    uint32_t remote_qkey = 0;
  };

  struct Srq {
    uint32_t srqn = 0;
    uint64_t dbrec = 0;
    uint64_t ring = 0;
    uint32_t log_depth = 4;
    uint32_t log_stride = 6;
    uint32_t pi = 0;
  };

  struct Qp {
    uint32_t qpn = 0;
    uint32_t type = VRNIC_QPT_RC;
    uint64_t dbrec = 0;
    uint64_t sq = 0;
    uint64_t rq = 0;
    uint32_t sq_log_depth = 4;
    uint32_t sq_log_stride = 8;
    uint32_t rq_log_depth = 4;
    uint32_t rq_log_stride = 6;
    uint32_t sq_pi = 0;
    uint32_t rq_pi = 0;
    uint64_t pbl = 0;  // its page list, kept for recreate_qp()
    uint32_t npages = 0;
  };

  DataPath()
      : ram_(kRamSize),
        mem_({{0, kRamSize, ram_.data()}}),
        bar_(vrnicd::Bar2::create(vrnicd::Bar2::kDefaultSize, &err_)),
        dev_(cfg_, *bar_, mem_, irq_),
        drv_(
            bar_->data(), ram_.data(), kRamSize, [this] { dev_.on_ctrl_doorbell_st(); },
            std::chrono::milliseconds(0)) {
    dev_.init_registers_st();
  }

  // This device's GID 0 and MAC end in n, not in kGid's and kMac's last
  // bytes: a second device on a Cable.  Before bring_up().
  void set_host(uint8_t n) {
    gid_[15] = n;
    mac_[5] = n;
  }
  // GID 0's type (VRNIC_GID_TYPE_*: its packets' encapsulation).  Before
  // bring_up().
  void set_gid_type(uint32_t type) { gid_type_ = type; }

  // Enable the device, a completion EQ, the port and GID 0.
  bool bring_up() {
    if (!drv_.reset() || drv_.enable() != VRNIC_STATE_READY) {
      return false;
    }
    auto eq = make_cmd(VRNIC_AQ_OP_CREATE_EQ);
    eq.create_eq.eqn = kEqn;
    eq.create_eq.vector = 1;
    eq.create_eq.log_depth = kEqLog;
    eq_ring_ = alloc(sizeof(vrnic_eqe) << kEqLog);
    eq_dbrec_ = alloc(kPage);
    eq_ci_ = 0;
    eq.create_eq.ring_addr = eq_ring_;
    eq.create_eq.dbrec_addr = eq_dbrec_;
    auto port = make_cmd(VRNIC_AQ_OP_MODIFY_PORT,
                         VRNIC_AQ_MODIFY_PORT_F_NETDEV | VRNIC_AQ_MODIFY_PORT_F_MTU);
    port.modify_port.port = 1;
    port.modify_port.netdev_state = VRNIC_NETDEV_STATE_UP | VRNIC_NETDEV_STATE_CARRIER;
    port.modify_port.netdev_mtu = 1500;
    auto gid = make_cmd(VRNIC_AQ_OP_SET_GID, VRNIC_AQ_SET_GID_F_VALID);
    gid.set_gid.port = 1;
    gid.set_gid.index = 0;
    std::memcpy(gid.set_gid.gid, gid_.data(), gid_.size());
    std::memcpy(gid.set_gid.mac, mac_.data(), mac_.size());
    gid.set_gid.vlan_id = 0xffff;
    gid.set_gid.type = gid_type_;
    return drv_.exec_status(eq) == VRNIC_AQ_STATUS_OK &&
           drv_.exec_status(port) == VRNIC_AQ_STATUS_OK &&
           drv_.exec_status(gid) == VRNIC_AQ_STATUS_OK;
  }

  // Zeroed, page-aligned guest memory; 0 when the RAM is used up.
  uint64_t alloc(size_t bytes) {
    const uint64_t at = heap_;
    const uint64_t end = at + (bytes + kPage - 1) / kPage * kPage;
    if (end > kRamSize) {
      return 0;
    }
    heap_ = end;
    std::memset(ram(at), 0, end - at);
    return at;
  }
  std::byte* ram(uint64_t gpa) { return ram_.data() + gpa; }
  vrnicd::Device& dev() { return dev_; }
  vrnicd::DeviceConfig& cfg() { return cfg_; }
  FakeDriver& drv() { return drv_; }

  // A page list for npages contiguous pages from gpa.
  uint64_t pbl(uint64_t gpa, uint32_t npages) {
    const uint64_t list = alloc(npages * sizeof(uint64_t));
    for (uint32_t i = 0; i < npages; ++i) {
      const uint64_t page = vrnic::to_le64(gpa + i * kPage);
      std::memcpy(ram(list + i * sizeof(uint64_t)), &page, sizeof(page));
    }
    return list;
  }

  int create_pd(uint32_t* pdn) {
    auto c = drv_.exec(make_cmd(VRNIC_AQ_OP_CREATE_PD));
    if (!c) {
      return -1;
    }
    *pdn = static_cast<uint32_t>(c->result);
    return static_cast<int>(vrnic::field_get<VRNIC_AQ_CQE_STATUS_MASK>(c->info));
  }

  // An MR over [gpa, gpa + len) at iova gpa (identity mapping).
  int reg_mr(uint32_t pdn, uint64_t gpa, uint64_t len, uint32_t access, uint32_t* key) {
    const uint64_t first = gpa & ~(kPage - 1);
    const auto npages = static_cast<uint32_t>((gpa + len - first + kPage - 1) / kPage);
    auto c = make_cmd(VRNIC_AQ_OP_REG_MR);
    c.reg_mr.iova = gpa;
    c.reg_mr.length = len;
    c.reg_mr.pbl_addr = pbl(first, npages);
    c.reg_mr.pdn = pdn;
    c.reg_mr.access = access;
    c.reg_mr.npages = npages;
    c.reg_mr.page_shift = 12;
    return exec_result(c, key);
  }

  // An MR of len bytes of device memory from byte offset (REG_MR F_DM),
  // addressed from 0.
  int reg_dm_mr(uint32_t pdn, uint64_t offset, uint64_t len, uint32_t access, uint32_t* key) {
    auto c = make_cmd(VRNIC_AQ_OP_REG_MR, VRNIC_AQ_REG_MR_F_DM);
    c.reg_mr.length = len;
    c.reg_mr.pbl_addr = offset;
    c.reg_mr.pdn = pdn;
    c.reg_mr.access = access;
    c.reg_mr.npages = static_cast<uint32_t>((len + kPage - 1) / kPage);
    c.reg_mr.page_shift = 12;
    return exec_result(c, key);
  }

  // The device memory, as the device reports it and where it lies.
  std::span<std::byte> device_memory() { return bar_->device_memory(); }

  int create_cq(uint32_t log_depth, Cq* cq) {
    const auto npages = static_cast<uint32_t>(1 + (sizeof(vrnic_cqe) << log_depth) / kPage + 1);
    const uint64_t buf = alloc(npages * kPage);
    cq->pbl = pbl(buf, npages);
    cq->npages = npages;
    cq->dbrec = buf;
    cq->ring = buf + kPage;
    cq->log_depth = log_depth;
    return recreate_cq(cq);
  }

  // Create a CQ over the memory that cq had (after destroy_cq), empty.
  int recreate_cq(Cq* cq) {
    std::memset(ram(cq->dbrec), 0, static_cast<size_t>(cq->npages) * kPage);
    auto c = make_cmd(VRNIC_AQ_OP_CREATE_CQ);
    c.create_cq.buf.pbl_addr = cq->pbl;
    c.create_cq.buf.npages = cq->npages;
    c.create_cq.log_depth = cq->log_depth;
    c.create_cq.eqn = kEqn;
    cq->ci = 0;
    return exec_result(c, &cq->cqn);
  }

  // RESIZE_CQ of cq to a new ring of 2^log_depth in new memory: its
  // status; on success cq describes the new ring.
  int resize_cq(Cq* cq, uint32_t log_depth) {
    const auto npages = static_cast<uint32_t>(1 + (sizeof(vrnic_cqe) << log_depth) / kPage + 1);
    const uint64_t buf = alloc(npages * kPage);
    auto c = make_cmd(VRNIC_AQ_OP_RESIZE_CQ);
    c.resize_cq.buf.pbl_addr = pbl(buf, npages);
    c.resize_cq.buf.npages = npages;
    c.resize_cq.cqn = cq->cqn;
    c.resize_cq.log_depth = log_depth;
    uint32_t moved = 0;
    const int st = exec_result(c, &moved);
    if (st == VRNIC_AQ_STATUS_OK) {
      cq->dbrec = buf;
      cq->ring = buf + kPage;
      cq->log_depth = log_depth;
      cq->ci = 0;
      cq->pbl = c.resize_cq.buf.pbl_addr;
      cq->npages = npages;
    }
    return st;
  }

  int destroy_cq(uint32_t cqn) {
    auto c = make_cmd(VRNIC_AQ_OP_DESTROY_CQ);
    c.destroy_cq.cqn = cqn;
    return drv_.exec_status(c);
  }

  // Pages of a ring; one for a geometry too big to be real (the device is
  // to refuse it).
  static uint32_t ring_pages(uint32_t log_depth, uint32_t log_stride) {
    if (log_depth + log_stride > 24) {
      return 1;
    }
    return static_cast<uint32_t>(
        std::max<uint64_t>(1, (uint64_t{1} << (log_depth + log_stride)) / kPage));
  }

  int create_srq(uint32_t pdn, Srq* srq) {
    const uint32_t npages = 1 + ring_pages(srq->log_depth, srq->log_stride);
    const uint64_t buf = alloc(npages * kPage);
    auto c = make_cmd(VRNIC_AQ_OP_CREATE_SRQ);
    c.create_srq.buf.pbl_addr = pbl(buf, npages);
    c.create_srq.buf.npages = npages;
    c.create_srq.pdn = pdn;
    c.create_srq.log_depth = static_cast<uint8_t>(srq->log_depth);
    c.create_srq.log_stride = static_cast<uint8_t>(srq->log_stride);
    c.create_srq.ring_page = 1;
    srq->dbrec = buf;
    srq->ring = buf + kPage;
    srq->pi = 0;
    return exec_result(c, &srq->srqn);
  }

  // RESIZE_SRQ of srq to a new ring of 2^log_depth in new memory; raw
  // filled in last, for a test's own fields.  Its status, the WQEs moved in
  // *moved; on success srq describes the new ring, producing from there.
  int resize_srq(Srq* srq, uint32_t log_depth, uint32_t* moved,
                 const std::function<void(vrnic_aq_cmd&)>& raw = {}) {
    const uint32_t npages = 1 + ring_pages(log_depth, srq->log_stride);
    const uint64_t buf = alloc(npages * kPage);
    auto c = make_cmd(VRNIC_AQ_OP_RESIZE_SRQ);
    c.resize_srq.buf.pbl_addr = pbl(buf, npages);
    c.resize_srq.buf.npages = npages;
    c.resize_srq.srqn = srq->srqn;
    c.resize_srq.log_depth = static_cast<uint8_t>(log_depth);
    c.resize_srq.ring_page = 1;
    if (raw) {
      raw(c);
    }
    const int st = exec_result(c, moved);
    if (st == VRNIC_AQ_STATUS_OK) {
      srq->dbrec = buf;
      srq->ring = buf + kPage;
      srq->log_depth = log_depth;
      srq->pi = *moved;
    }
    return st;
  }

  // MODIFY_SRQ arming the limit event at limit.
  int arm_srq_limit(const Srq& srq, uint32_t limit) {
    auto c = make_cmd(VRNIC_AQ_OP_MODIFY_SRQ, VRNIC_AQ_MODIFY_SRQ_F_LIMIT);
    c.modify_srq.srqn = srq.srqn;
    c.modify_srq.limit = limit;
    return drv_.exec_status(c);
  }

  void post_srq_recv(Srq& srq, uint64_t wr_id, std::span<const vrnic_sge> sges) {
    std::byte* slot =
        ram(srq.ring + vrnic::ring_slot(srq.pi, srq.log_depth) * (size_t{1} << srq.log_stride));
    if (vrnic::rqe_write(slot, srq.log_stride, wr_id, sges)) {
      ++srq.pi;
      vrnic::store_release32(ram(srq.dbrec + offsetof(vrnic_srq_dbrec, pi)), srq.pi);
    }
  }

  // qp's type and ring geometry are inputs; the rest is filled in.  With
  // an SRQ (srq != nullptr) the QP receives from it.
  int create_qp(uint32_t pdn, const Cq& scq, const Cq& rcq, Qp* qp, uint32_t max_inline = 64,
                uint32_t flags = 0, const Srq* srq = nullptr) {
    const uint32_t sq_pages = ring_pages(qp->sq_log_depth, qp->sq_log_stride);
    const uint32_t rq_pages = ring_pages(qp->rq_log_depth, qp->rq_log_stride);
    qp->npages = 1 + sq_pages + rq_pages;
    const uint64_t buf = alloc(qp->npages * kPage);
    qp->pbl = pbl(buf, qp->npages);
    qp->dbrec = buf;
    qp->sq = buf + kPage;
    qp->rq = buf + (1 + sq_pages) * kPage;
    return recreate_qp(pdn, scq, rcq, qp, max_inline, flags, srq);
  }

  // Create a QP over the memory that qp had (after destroy_qp), with
  // empty rings.
  int recreate_qp(uint32_t pdn, const Cq& scq, const Cq& rcq, Qp* qp, uint32_t max_inline = 64,
                  uint32_t flags = 0, const Srq* srq = nullptr) {
    std::memset(ram(qp->dbrec), 0, static_cast<size_t>(qp->npages) * kPage);
    auto c = make_cmd(VRNIC_AQ_OP_CREATE_QP, flags);
    c.create_qp.buf.pbl_addr = qp->pbl;
    c.create_qp.buf.npages = qp->npages;
    c.create_qp.type = qp->type;
    c.create_qp.pdn = pdn;
    c.create_qp.send_cqn = scq.cqn;
    c.create_qp.recv_cqn = rcq.cqn;
    c.create_qp.sq_log_depth = static_cast<uint8_t>(qp->sq_log_depth);
    c.create_qp.sq_log_stride = static_cast<uint8_t>(qp->sq_log_stride);
    c.create_qp.rq_log_depth = static_cast<uint8_t>(qp->rq_log_depth);
    c.create_qp.rq_log_stride = static_cast<uint8_t>(qp->rq_log_stride);
    c.create_qp.sq_page = 1;
    c.create_qp.rq_page = static_cast<uint16_t>(1 + (qp->rq - qp->sq) / kPage);
    c.create_qp.max_inline = max_inline;
    if (srq != nullptr) {
      c.create_qp.hdr.flags |= VRNIC_AQ_CREATE_QP_F_SRQ;
      c.create_qp.srqn = srq->srqn;
    }
    qp->sq_pi = qp->rq_pi = 0;
    return exec_result(c, &qp->qpn);
  }

  int modify_qp(uint32_t qpn, uint32_t mask, const vrnic_qp_attr& a) {
    const uint64_t at = scratch();
    std::memcpy(ram(at), &a, sizeof(a));
    auto c = make_cmd(VRNIC_AQ_OP_MODIFY_QP);
    c.modify_qp.qpn = qpn;
    c.modify_qp.attr_mask = mask;
    c.modify_qp.attr.addr = at;
    c.modify_qp.attr.len = sizeof(a);
    return drv_.exec_status(c);
  }

  // ATTACH_MCAST or DETACH_MCAST.
  int mcast(uint16_t op, uint32_t qpn, const std::array<uint8_t, 16>& gid) {
    auto c = make_cmd(op);
    c.mcast.qpn = qpn;
    std::memcpy(c.mcast.gid, gid.data(), gid.size());
    return drv_.exec_status(c);
  }

  // A counter-set command on set id (and QP qpn); ALLOC_COUNTER's new id
  // goes to *new_id, QUERY_COUNTER's set to *out.
  int counter(uint16_t op, uint32_t id, uint32_t qpn = 0, vrnic_stats* out = nullptr,
              uint32_t* new_id = nullptr) {
    const uint64_t at = scratch();
    auto c = make_cmd(op);
    c.counter.id = id;
    c.counter.qpn = qpn;
    c.counter.resp.addr = at;
    c.counter.resp.len = sizeof(vrnic_stats);
    uint32_t result = 0;
    const int st = exec_result(c, &result);
    if (new_id != nullptr) {
      *new_id = result;
    }
    if (out != nullptr && st == VRNIC_AQ_STATUS_OK) {
      std::memcpy(out, ram(at), sizeof(*out));
    }
    return st;
  }

  int destroy_qp(uint32_t qpn) {
    auto c = make_cmd(VRNIC_AQ_OP_DESTROY_QP);
    c.destroy_qp.qpn = qpn;
    return drv_.exec_status(c);
  }

  std::optional<vrnic_qp_attr> query_qp(uint32_t qpn) {
    const uint64_t at = scratch();
    auto c = make_cmd(VRNIC_AQ_OP_QUERY_QP);
    c.query_qp.qpn = qpn;
    c.query_qp.resp.addr = at;
    c.query_qp.resp.len = sizeof(vrnic_qp_attr);
    if (drv_.exec_status(c) != VRNIC_AQ_STATUS_OK) {
      return std::nullopt;
    }
    vrnic_qp_attr a{};
    std::memcpy(&a, ram(at), sizeof(a));
    return a;
  }

  static vrnic_av loopback_av() { return av_to(kGid, kMac); }
  // An address vector to this device's GID 0, from another device.
  [[nodiscard]] vrnic_av av() const { return av_to(gid_, mac_); }

  // RESET -> INIT -> RTR -> RTS, talking to dest_qpn through our own GID
  // (or through the one av names), at path_mtu (an IB MTU encoding: 3 is
  // 1024).
  int connect(const Qp& qp, uint32_t dest_qpn, uint32_t access = VRNIC_ACCESS_ALL,
              uint32_t path_mtu = 3, const vrnic_av& av = loopback_av()) {
    vrnic_qp_attr a{};
    a.state = VRNIC_QPS_INIT;
    a.access = access;
    a.port = 1;
    a.qkey = 0x1234;
    uint32_t mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_PKEY_INDEX | VRNIC_QP_ATTR_PORT |
                    (qp.type == VRNIC_QPT_UD ? VRNIC_QP_ATTR_QKEY : VRNIC_QP_ATTR_ACCESS);
    if (int st = modify_qp(qp.qpn, mask, a); st != VRNIC_AQ_STATUS_OK) {
      return st;
    }
    a.state = VRNIC_QPS_RTR;
    a.path_mtu = path_mtu;
    a.dest_qpn = dest_qpn;
    a.rq_psn = 100;
    a.av = av;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 1;
    mask = VRNIC_QP_ATTR_STATE;
    if (qp.type != VRNIC_QPT_UD) {
      mask |=
          VRNIC_QP_ATTR_PATH_MTU | VRNIC_QP_ATTR_DEST_QPN | VRNIC_QP_ATTR_RQ_PSN | VRNIC_QP_ATTR_AV;
    }
    if (qp.type == VRNIC_QPT_RC) {
      mask |= VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | VRNIC_QP_ATTR_MIN_RNR_TIMER;
    }
    if (int st = modify_qp(qp.qpn, mask, a); st != VRNIC_AQ_STATUS_OK) {
      return st;
    }
    a.state = VRNIC_QPS_RTS;
    a.sq_psn = 100;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.max_rd_atomic = 4;
    mask = VRNIC_QP_ATTR_STATE | VRNIC_QP_ATTR_SQ_PSN;
    if (qp.type == VRNIC_QPT_RC) {
      mask |= VRNIC_QP_ATTR_TIMEOUT | VRNIC_QP_ATTR_RETRY_CNT | VRNIC_QP_ATTR_RNR_RETRY |
              VRNIC_QP_ATTR_MAX_RD_ATOMIC;
    }
    return modify_qp(qp.qpn, mask, a);
  }

  // Write raw bytes as the next send WQE and publish it.
  void post_send_raw(Qp& qp, std::span<const std::byte> wqe) {
    const size_t stride = size_t{1} << qp.sq_log_stride;
    std::byte* slot = ram(qp.sq + vrnic::ring_slot(qp.sq_pi, qp.sq_log_depth) * stride);
    std::memset(slot, 0, stride);
    if (!wqe.empty()) {
      std::memcpy(slot, wqe.data(), std::min(stride, wqe.size()));
    }
    ++qp.sq_pi;
    vrnic::store_release32(ram(qp.dbrec + offsetof(vrnic_qp_dbrec, sq_pi)), qp.sq_pi);
  }

  // A send WQE, built with libvrnic's encoder: header, the AV for UD,
  // SGEs.
  void post_send(Qp& qp, const SendWr& wr, std::span<const vrnic_sge> sges,
                 const vrnic_av* av = nullptr) {
    const size_t stride = size_t{1} << qp.sq_log_stride;
    const vrnic::SqeWriter w(ram(qp.sq + vrnic::ring_slot(qp.sq_pi, qp.sq_log_depth) * stride),
                             stride, av != nullptr);
    w.begin(wr.wr_id, wr.opcode, wr.flags);
    w.set_imm(wr.imm_data);
    w.set_remote(wr.remote_addr, wr.rkey);
    w.set_atomic(wr.compare_add, wr.swap);
    if (av != nullptr) {
      w.set_ud(*av, wr.remote_qpn, wr.remote_qkey);
    }
    if (!w.set_sges(sges)) {
      // More than fit: the count says so, and the device refuses it.
      vrnic_sqe h{};
      std::memcpy(&h, ram(qp.sq + vrnic::ring_slot(qp.sq_pi, qp.sq_log_depth) * stride), sizeof(h));
      h.ctrl |= vrnic::field_prep<VRNIC_WQE_CTRL_NUM_SGE_MASK>(static_cast<uint32_t>(sges.size()));
      std::memcpy(ram(qp.sq + vrnic::ring_slot(qp.sq_pi, qp.sq_log_depth) * stride), &h, sizeof(h));
    }
    ++qp.sq_pi;
    vrnic::store_release32(ram(qp.dbrec + offsetof(vrnic_qp_dbrec, sq_pi)), qp.sq_pi);
  }

  void post_recv_raw(Qp& qp, std::span<const std::byte> rqe) {
    const size_t stride = size_t{1} << qp.rq_log_stride;
    std::byte* slot = ram(qp.rq + vrnic::ring_slot(qp.rq_pi, qp.rq_log_depth) * stride);
    std::memset(slot, 0, stride);
    if (!rqe.empty()) {
      std::memcpy(slot, rqe.data(), std::min(stride, rqe.size()));
    }
    ++qp.rq_pi;
    vrnic::store_release32(ram(qp.dbrec + offsetof(vrnic_qp_dbrec, rq_pi)), qp.rq_pi);
  }

  // A receive WQE, built with libvrnic's encoder.
  void post_recv(Qp& qp, uint64_t wr_id, std::span<const vrnic_sge> sges) {
    std::byte* slot =
        ram(qp.rq + vrnic::ring_slot(qp.rq_pi, qp.rq_log_depth) * (size_t{1} << qp.rq_log_stride));
    if (!vrnic::rqe_write(slot, qp.rq_log_stride, wr_id, sges)) {
      return;
    }
    ++qp.rq_pi;
    vrnic::store_release32(ram(qp.dbrec + offsetof(vrnic_qp_dbrec, rq_pi)), qp.rq_pi);
  }

  // Ask for cq's next completion event (ibv_req_notify_cq).
  void arm(const Cq& cq, bool solicited = false) {
    std::byte* rec = ram(cq.dbrec);
    const uint32_t sn = vrnic::load_acquire32(rec + offsetof(vrnic_cq_dbrec, arm_sn));
    vrnic::store_release32(rec + offsetof(vrnic_cq_dbrec, arm_flags),
                           solicited ? VRNIC_CQ_ARM_SOLICITED : 0);
    vrnic::store_release32(rec + offsetof(vrnic_cq_dbrec, arm_sn), sn + 1);
  }

  // MODIFY_CQ: cq's event moderation.
  int moderate(const Cq& cq, uint32_t count, uint32_t period_us) {
    auto c = make_cmd(VRNIC_AQ_OP_MODIFY_CQ);
    c.modify_cq.cqn = cq.cqn;
    c.modify_cq.count = count;
    c.modify_cq.period_us = period_us;
    return drv_.exec_status(c);
  }

  // The CQNs of the COMPLETION events posted since the last call.
  std::vector<uint32_t> completion_events() {
    std::vector<uint32_t> cqns;
    for (;;) {
      const std::byte* slot = ram(eq_ring_ + vrnic::ring_slot(eq_ci_, kEqLog) * sizeof(vrnic_eqe));
      const uint32_t info = vrnic::load_acquire32(slot + offsetof(vrnic_eqe, info));
      if (vrnic::field_get<VRNIC_EQE_OWNER_MASK>(info) != vrnic::ring_owner(eq_ci_, kEqLog)) {
        break;
      }
      vrnic_eqe e{};
      std::memcpy(&e, slot, sizeof(e));
      if (vrnic::field_get<VRNIC_EQE_TYPE_MASK>(e.info) == VRNIC_EQE_TYPE_COMPLETION) {
        cqns.push_back(e.data[0]);
      }
      ++eq_ci_;
      vrnic::store_release32(ram(eq_dbrec_ + offsetof(vrnic_eq_dbrec, ci)), eq_ci_);
    }
    return cqns;
  }

  // Poll the engine until it has nothing left to do (or max_rounds).
  void run(int max_rounds = 100000) {
    int idle = 0;
    for (int i = 0; i < max_rounds && idle < 3; ++i) {
      idle = dev_.engine_poll_st() ? 0 : idle + 1;
    }
  }

  // The next completion, read with libvrnic's decoder.
  std::optional<vrnic::CqeFields> poll(Cq& cq) {
    vrnic::CqeFields e;
    if (!vrnic::cqe_read(ram(cq.ring + vrnic::ring_slot(cq.ci, cq.log_depth) * sizeof(vrnic_cqe)),
                         cq.ci, cq.log_depth, &e)) {
      return std::nullopt;
    }
    ++cq.ci;
    vrnic::store_release32(ram(cq.dbrec + offsetof(vrnic_cq_dbrec, ci)), cq.ci);
    return e;
  }

  uint32_t sq_ci(const Qp& qp) {
    return vrnic::load_acquire32(ram(qp.dbrec + offsetof(vrnic_qp_dbrec, sq_ci)));
  }

  // Run a command; its status, with its result in *out.
  template <typename T>
  int exec_result(const vrnic_aq_cmd& c, T* out) {
    auto cqe = drv_.exec(c);
    if (!cqe) {
      return -1;
    }
    *out = static_cast<T>(cqe->result);
    return static_cast<int>(vrnic::field_get<VRNIC_AQ_CQE_STATUS_MASK>(cqe->info));
  }

 private:
  static vrnic_av av_to(const std::array<uint8_t, 16>& gid, const std::array<uint8_t, 6>& mac) {
    vrnic_av av{};
    std::memcpy(av.dgid, gid.data(), gid.size());
    std::memcpy(av.dmac, mac.data(), mac.size());
    av.sgid_index = 0;
    av.hop_limit = 64;
    av.vlan_id = 0xffff;
    return av;
  }

  uint64_t scratch() {
    if (scratch_ == 0) {
      scratch_ = alloc(kPage);
    }
    return scratch_;
  }

  class NullIrq final : public vrnicd::IrqSink {
   public:
    void raise(uint32_t /*vector*/) noexcept override {}
  };

  std::string err_;
  vrnicd::DeviceConfig cfg_;
  std::vector<std::byte> ram_;
  vrnicd::GuestMemory mem_;
  std::optional<vrnicd::Bar2> bar_;
  NullIrq irq_;
  vrnicd::Device dev_;
  FakeDriver drv_;
  uint64_t heap_ = kHeap;
  uint64_t scratch_ = 0;
  uint64_t eq_ring_ = 0;
  uint64_t eq_dbrec_ = 0;
  uint32_t eq_ci_ = 0;
  std::array<uint8_t, 16> gid_ = kGid;
  uint32_t gid_type_ = VRNIC_GID_TYPE_ROCE_V2;
  std::array<uint8_t, 6> mac_ = kMac;
};

// Two devices' ports cabled back to back.  What one sends goes onto the
// cable (a copy, as a socket or a wire makes one) and reaches the other
// when the cable is run, between the devices' engine rounds: a device is
// never entered from inside its own round.  Frames are sealed (ICRC) as
// frames that leave a device are.
class Cable {
 public:
  Cable(DataPath& a, DataPath& b) : a_(a), b_(b) {
    plug(a_, &to_b_);
    plug(b_, &to_a_);
  }
  ~Cable() {
    a_.dev().engine().set_wire(nullptr);
    b_.dev().engine().set_wire(nullptr);
  }
  Cable(const Cable&) = delete;
  Cable& operator=(const Cable&) = delete;
  Cable(Cable&&) = delete;
  Cable& operator=(Cable&&) = delete;

  // One round of each engine, then the frames each sent to the other;
  // whether anything happened.
  bool step() {
    bool busy = a_.dev().engine_poll_st();
    busy = b_.dev().engine_poll_st() || busy;
    busy = deliver(&to_b_, b_) || busy;
    return deliver(&to_a_, a_) || busy;
  }
  // Step until both are idle (or max_rounds).
  void run(int max_rounds = 100000) {
    int idle = 0;
    for (int i = 0; i < max_rounds && idle < 3; ++i) {
      idle = step() ? 0 : idle + 1;
    }
  }
  // Frames carried so far, and those the receiver did not take as RoCE.
  [[nodiscard]] uint64_t carried() const { return carried_; }
  [[nodiscard]] uint64_t refused() const { return refused_; }
  // Frames carried with this Ethertype (untagged).
  [[nodiscard]] uint64_t carried(uint16_t ethertype) const {
    const auto it = ethertypes_.find(ethertype);
    return it == ethertypes_.end() ? 0 : it->second;
  }

 private:
  using Queue = std::deque<std::vector<std::byte>>;

  void plug(DataPath& from, Queue* q) {
    from.dev().engine().set_wire([this, q](std::span<const std::byte> f) {
      std::vector<std::byte> copy;
      if (!spare_.empty()) {
        copy = std::move(spare_.back());
        spare_.pop_back();
      }
      copy.assign(f.begin(), f.end());
      q->push_back(std::move(copy));
    });
  }
  bool deliver(Queue* q, DataPath& to) {
    const bool any = !q->empty();
    while (!q->empty()) {
      ++carried_;
      if (q->front().size() >= 14) {
        ++ethertypes_[static_cast<uint16_t>((std::to_integer<unsigned>(q->front()[12]) << 8) |
                                            std::to_integer<unsigned>(q->front()[13]))];
      }
      refused_ += to.dev().receive_frame_st(q->front()) ? 0 : 1;
      spare_.push_back(std::move(q->front()));
      q->pop_front();
    }
    return any;
  }

  DataPath& a_;
  DataPath& b_;
  Queue to_a_;
  Queue to_b_;
  std::vector<std::vector<std::byte>> spare_;
  uint64_t carried_ = 0;
  uint64_t refused_ = 0;
  std::map<uint16_t, uint64_t> ethertypes_;
};

}  // namespace vrnic_test
