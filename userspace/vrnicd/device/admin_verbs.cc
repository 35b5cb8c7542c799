// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// Admin commands for data-path objects: PDs, MRs, CQs, QPs, SRQs,
// multicast groups and counters.  Each handler decodes its wire command
// into the engine's CPU-order parameters (params.h) and validates every
// field there - flags, ranges, the device's limits - so that the engine
// never sees a wire struct and checks only what needs its tables.
#include <algorithm>
#include <cstring>

#include "base/guest_memory.h"
#include "device/device.h"
#include "engine/address.h"
#include "hw_access.h"
#include "queue_entry.h"
#include "roce/pacer.h"

namespace vrnicd {
namespace {

// Engine rounds RESIZE_CQ runs first (Device::cmd_resize_cq).
constexpr int kResizeDrainRounds = 8;

AqResult status(uint8_t s, uint64_t result = 0) {
  AqResult r;
  r.status = s;
  r.result = result;
  return r;
}

uint32_t flags_of(const vrnic_aq_cmd& cmd) { return vrnic::le32(cmd.hdr.flags); }

uint32_t log2_floor(uint32_t v) {
  return v == 0 ? 0 : 31 - static_cast<uint32_t>(__builtin_clz(v));
}

// A command's reserved words, which must be 0.
template <size_t N>
bool reserved_zero(const __le32 (&rsvd)[N]) {
  return std::all_of(std::begin(rsvd), std::end(rsvd), [](auto r) { return r == 0; });
}

QueueBufferDesc buffer_of(const vrnic_qbuf_desc& d) {
  return {vrnic::le64(d.pbl_addr), vrnic::le32(d.npages)};
}

bool log_stride_ok(uint32_t log_stride, uint32_t min) {
  return log_stride >= min && log_stride <= VRNIC_WQE_MAX_LOG_STRIDE;
}

// 2^log_depth entries, at most max (the shift is bounded first).
bool depth_ok(uint32_t log_depth, uint32_t max) {
  return log_depth < 32 && (1U << log_depth) <= max;
}

roce::Gid mcast_gid(const vrnic_aq_mcast& c) {
  roce::Gid gid{};
  std::copy(std::begin(c.gid), std::end(c.gid), gid.begin());
  return gid;
}

// The translation fields REG_MR and REREG_MR share, as they are.
template <typename Cmd>
void translation_of(const Cmd& c, RegMrParams* p) {
  p->iova = vrnic::le64(c.iova);
  p->length = vrnic::le64(c.length);
  p->page_shift = vrnic::le32(c.page_shift);
  p->npages = vrnic::le32(c.npages);
  p->pbl_addr = vrnic::le64(c.pbl_addr);
}

// A region of length bytes at iova in npages pages that cover it exactly.
bool translation_ok(const RegMrParams& p, uint64_t max_mr_size) {
  constexpr uint32_t kMaxPages = VRNIC_PBL_ENTRIES_PER_PAGE * VRNIC_PBL_ENTRIES_PER_PAGE;
  if (p.page_shift < VRNIC_MR_MIN_PAGE_SHIFT || p.page_shift > VRNIC_MR_MAX_PAGE_SHIFT ||
      p.length == 0 || p.length > max_mr_size || p.iova + p.length < p.iova || p.npages == 0 ||
      p.npages > kMaxPages) {
    return false;
  }
  const uint64_t psize = 1ULL << p.page_shift;
  const uint64_t base = p.iova & ~(psize - 1);
  return (p.iova - base + p.length + psize - 1) >> p.page_shift == p.npages;
}

bool decode_reg_mr(const vrnic_aq_reg_mr& c, uint64_t max_mr_size, RegMrParams* p) {
  const uint32_t flags = vrnic::le32(c.hdr.flags);
  p->pdn = vrnic::le32(c.pdn);
  p->access = vrnic::le32(c.access);
  p->phys = (flags & VRNIC_AQ_REG_MR_F_PHYS) != 0;
  p->indirect = (flags & VRNIC_AQ_REG_MR_F_INDIRECT) != 0;
  translation_of(c, p);
  if (p->pdn == 0 || (p->access & ~VRNIC_ACCESS_ALL) != 0) {
    return false;
  }
  if (p->phys) {
    // The guest-physical region names no pages.
    return flags == VRNIC_AQ_REG_MR_F_PHYS && p->iova == 0 && p->length == 0 && p->npages == 0 &&
           p->page_shift == 0 && p->pbl_addr == 0;
  }
  p->dm = (flags & VRNIC_AQ_REG_MR_F_DM) != 0;
  if (p->dm) {
    // Device memory from an 8-byte aligned offset, addressed from 0, in
    // 4-KiB pages, or of no bytes at all (as mlx5 takes, and rdma-core's
    // suite asks); it cannot persist.  Where it ends is the table's check.
    return flags == VRNIC_AQ_REG_MR_F_DM && p->iova == 0 && p->pbl_addr % 8 == 0 &&
           p->page_shift == VRNIC_MR_MIN_PAGE_SHIFT &&
           (p->access & VRNIC_ACCESS_FLUSH_PERSISTENT) == 0 &&
           (p->length == 0 ? p->npages == 0 : translation_ok(*p, max_mr_size));
  }
  return (flags & ~VRNIC_AQ_REG_MR_F_INDIRECT) == 0 && translation_ok(*p, max_mr_size);
}

// REREG_MR: at least one change; the fields of what does not change are 0.
bool decode_rereg_mr(const vrnic_aq_rereg_mr& c, uint64_t max_mr_size, ReregMrParams* p) {
  constexpr uint32_t kChanges =
      VRNIC_AQ_REREG_MR_F_TRANS | VRNIC_AQ_REREG_MR_F_PD | VRNIC_AQ_REREG_MR_F_ACCESS;
  const uint32_t flags = vrnic::le32(c.hdr.flags);
  p->key = vrnic::le32(c.key);
  p->trans = (flags & VRNIC_AQ_REREG_MR_F_TRANS) != 0;
  p->pd = (flags & VRNIC_AQ_REREG_MR_F_PD) != 0;
  p->access = (flags & VRNIC_AQ_REREG_MR_F_ACCESS) != 0;
  p->reg.indirect = (flags & VRNIC_AQ_REREG_MR_F_INDIRECT) != 0;
  p->reg.pdn = vrnic::le32(c.pdn);
  p->reg.access = vrnic::le32(c.access);
  translation_of(c, &p->reg);
  if ((flags & ~(kChanges | VRNIC_AQ_REREG_MR_F_INDIRECT)) != 0 || (flags & kChanges) == 0 ||
      !reserved_zero(c.rsvd)) {
    return false;
  }
  if (p->pd ? p->reg.pdn == 0 : p->reg.pdn != 0) {
    return false;
  }
  if (p->access ? (p->reg.access & ~VRNIC_ACCESS_ALL) != 0 : p->reg.access != 0) {
    return false;
  }
  if (!p->trans) {
    return !p->reg.indirect && p->reg.iova == 0 && p->reg.length == 0 && p->reg.npages == 0 &&
           p->reg.page_shift == 0 && p->reg.pbl_addr == 0;
  }
  return translation_ok(p->reg, max_mr_size);
}

// A pacing rate the device offers (or 0, unpaced); a burst needs a rate.
bool rate_limit_ok(uint32_t kbps, uint32_t burst) {
  if (kbps == 0) {
    return burst == 0;
  }
  return kbps >= roce::kRateLimitMinKbps && kbps <= roce::kRateLimitMaxKbps;
}

bool decode_create_qp(const vrnic_aq_create_qp& c, const DeviceLimits& l, CreateQpParams* p) {
  const uint32_t flags = vrnic::le32(c.hdr.flags);
  const uint32_t t = vrnic::le32(c.type);
  p->type = static_cast<roce::QpType>(t);
  p->pdn = vrnic::le32(c.pdn);
  p->send_cqn = vrnic::le32(c.send_cqn);
  p->recv_cqn = vrnic::le32(c.recv_cqn);
  if ((flags & VRNIC_AQ_CREATE_QP_F_SRQ) != 0) {
    p->srqn = vrnic::le32(c.srqn);
  }
  p->sq_sig_all = (flags & VRNIC_AQ_CREATE_QP_F_SQ_SIG_ALL) != 0;
  p->gsi = (flags & VRNIC_AQ_CREATE_QP_F_GSI) != 0;
  p->block_self_mcast_lb = (flags & VRNIC_AQ_CREATE_QP_F_BLOCK_SELF_MCAST_LB) != 0;
  p->buf = buffer_of(c.buf);
  p->sq = {vrnic::le16(c.sq_page), c.sq_log_depth, c.sq_log_stride};
  p->rq = {vrnic::le16(c.rq_page), c.rq_log_depth, c.rq_log_stride};
  p->max_inline = vrnic::le32(c.max_inline);
  const bool ud = t == VRNIC_QPT_UD;
  if ((flags & ~(VRNIC_AQ_CREATE_QP_F_SQ_SIG_ALL | VRNIC_AQ_CREATE_QP_F_SRQ |
                 VRNIC_AQ_CREATE_QP_F_GSI | VRNIC_AQ_CREATE_QP_F_BLOCK_SELF_MCAST_LB)) != 0 ||
      (t != VRNIC_QPT_RC && t != VRNIC_QPT_UC && !ud) || (p->gsi && !ud) || p->pdn == 0 ||
      !log_stride_ok(p->sq.log_stride, VRNIC_WQE_MIN_LOG_STRIDE) ||
      !depth_ok(p->sq.log_depth, l.max_qp_wr)) {
    return false;
  }
  if (p->srqn ? t == VRNIC_QPT_UC
              : !log_stride_ok(p->rq.log_stride, VRNIC_RQE_MIN_LOG_STRIDE) ||
                    !depth_ok(p->rq.log_depth, l.max_qp_wr)) {
    return false;  // UC has no SRQs
  }
  return vrnic::sqe_data_offset(ud) + p->max_inline <= (1U << p->sq.log_stride) &&
         p->max_inline <= l.max_inline_data;
}

}  // namespace

AqResult Device::cmd_create_pd(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t pdn = 0;
  const uint8_t st = engine_.objects().create_pd(&pdn);
  return status(st, pdn);
}

AqResult Device::cmd_destroy_pd(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.objects().destroy_pd(vrnic::le32(cmd.destroy_pd.pdn)));
}

AqResult Device::cmd_reg_mr(const vrnic_aq_cmd& cmd) {
  RegMrParams p;
  if (!decode_reg_mr(cmd.reg_mr, cfg_.limits.max_mr_size, &p)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t key = 0;
  const uint8_t st = engine_.objects().reg_mr(p, &key);
  return status(st, key);
}

AqResult Device::cmd_rereg_mr(const vrnic_aq_cmd& cmd) {
  ReregMrParams p;
  if (!decode_rereg_mr(cmd.rereg_mr, cfg_.limits.max_mr_size, &p)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.objects().rereg_mr(p));
}

AqResult Device::cmd_alloc_mr(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_alloc_mr& c = cmd.alloc_mr;
  const uint32_t max_pages = vrnic::le32(c.max_pages);
  if (flags_of(cmd) != 0 || max_pages == 0 || max_pages > cfg_.limits.max_fast_reg_page_list_len) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t key = 0;
  const uint8_t st = engine_.objects().alloc_mr(vrnic::le32(c.pdn), max_pages, &key);
  return status(st, key);
}

AqResult Device::cmd_alloc_mw(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_alloc_mw& c = cmd.alloc_mw;
  const uint32_t type = vrnic::le32(c.type);
  if (flags_of(cmd) != 0 || (type != VRNIC_MW_TYPE_1 && type != VRNIC_MW_TYPE_2)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t key = 0;
  const uint8_t st = engine_.objects().alloc_mw(vrnic::le32(c.pdn), type, &key);
  return status(st, key);
}

AqResult Device::cmd_dealloc_mw(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.objects().dealloc_mw(vrnic::le32(cmd.dereg_mr.key)));
}

AqResult Device::cmd_dereg_mr(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.objects().dereg_mr(vrnic::le32(cmd.dereg_mr.key)));
}

// A CQ ring of 2^log_depth entries: 2 .. twice max_cqe (the driver rounds
// up and keeps one free).
bool Device::cq_depth_ok(uint32_t log_depth) const {
  return log_depth >= 1 && log_depth <= log2_floor(cfg_.limits.max_cqe) + 1;
}

AqResult Device::cmd_create_cq(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_create_cq& c = cmd.create_cq;
  const CreateCqParams p{buffer_of(c.buf), vrnic::le32(c.log_depth), vrnic::le32(c.eqn)};
  if (flags_of(cmd) != 0 || !cq_depth_ok(p.log_depth) || p.eqn == 0 || eq(p.eqn) == nullptr) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);  // CQs report to completion EQs
  }
  uint32_t cqn = 0;
  const uint8_t st = engine_.objects().create_cq(p, &cqn);
  return status(st, cqn);
}

AqResult Device::cmd_destroy_cq(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.objects().destroy_cq(vrnic::le32(cmd.destroy_cq.cqn)));
}

AqResult Device::cmd_resize_cq(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_resize_cq& c = cmd.resize_cq;
  const ResizeCqParams p{vrnic::le32(c.cqn), buffer_of(c.buf), vrnic::le32(c.log_depth)};
  if (flags_of(cmd) != 0 || !cq_depth_ok(p.log_depth)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  // Work the driver posted before this command is the device's first, as
  // a PCIe device sees SQ doorbells written before the command's: the
  // resize counts the completions of sends rung in before it.  Bounded:
  // the engine's budget per round, a few rounds.
  for (int round = 0; round < kResizeDrainRounds && engine_poll_st(); ++round) {
  }
  uint32_t moved = 0;
  const uint8_t st = engine_.objects().resize_cq(p, &moved);
  return status(st, moved);
}

AqResult Device::cmd_modify_cq(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_modify_cq& c = cmd.modify_cq;
  const uint32_t count = vrnic::le32(c.count);
  const uint32_t period_us = vrnic::le32(c.period_us);
  if (flags_of(cmd) != 0 || count > VRNIC_CQ_MOD_MAX_COUNT ||
      period_us > VRNIC_CQ_MOD_MAX_PERIOD_US || !reserved_zero(c.rsvd)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.objects().modify_cq(vrnic::le32(c.cqn), count, period_us));
}

AqResult Device::cmd_create_qp(const vrnic_aq_cmd& cmd) {
  CreateQpParams p;
  if (!decode_create_qp(cmd.create_qp, cfg_.limits, &p)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t qpn = 0;
  const uint8_t st = engine_.objects().create_qp(p, &qpn);
  return status(st, qpn);
}

// The attributes a MODIFY_QP sets, each within its IB range.
bool Device::decode_qp_attr(const vrnic_qp_attr& w, uint32_t mask, QpAttrs* a) const {
  a->mask = mask;
  const uint32_t state = vrnic::le32(w.state);
  a->state = static_cast<roce::QpState>(state);
  a->access = vrnic::le32(w.access);
  a->path_mtu = vrnic::le32(w.path_mtu);
  a->dest_qpn = vrnic::le32(w.dest_qpn);
  a->rq_psn = vrnic::le32(w.rq_psn);
  a->sq_psn = vrnic::le32(w.sq_psn);
  a->qkey = vrnic::le32(w.qkey);
  a->pkey_index = vrnic::le16(w.pkey_index);
  a->port = w.port;
  a->timeout = w.timeout;
  a->retry_cnt = w.retry_cnt;
  a->rnr_retry = w.rnr_retry;
  a->min_rnr_timer = w.min_rnr_timer;
  a->max_rd_atomic = w.max_rd_atomic;
  a->max_dest_rd_atomic = w.max_dest_rd_atomic;
  a->sqd_async_notify = w.sqd_async_notify;
  a->av = address_from_wire(w.av);
  a->rate_limit = vrnic::le32(w.rate_limit);
  a->max_burst = vrnic::le32(w.max_burst);
  const auto given = [mask](uint32_t bit) { return (mask & bit) != 0; };
  return (mask & ~VRNIC_QP_ATTR_ALL) == 0 &&
         !(given(VRNIC_QP_ATTR_STATE) && state > VRNIC_QPS_ERR) &&
         !(given(VRNIC_QP_ATTR_ACCESS) && (a->access & ~VRNIC_ACCESS_ALL) != 0) &&
         !(given(VRNIC_QP_ATTR_PATH_MTU) && (a->path_mtu < 1 || a->path_mtu > 5)) &&
         !(given(VRNIC_QP_ATTR_PKEY_INDEX) && a->pkey_index != 0) &&
         !(given(VRNIC_QP_ATTR_PORT) && a->port != 1) &&
         !(given(VRNIC_QP_ATTR_TIMEOUT) && a->timeout > 31) &&
         !(given(VRNIC_QP_ATTR_RETRY_CNT) && a->retry_cnt > 7) &&
         !(given(VRNIC_QP_ATTR_RNR_RETRY) && a->rnr_retry > 7) &&
         !(given(VRNIC_QP_ATTR_MIN_RNR_TIMER) && a->min_rnr_timer > 31) &&
         !(given(VRNIC_QP_ATTR_MAX_RD_ATOMIC) &&
           a->max_rd_atomic > cfg_.limits.max_qp_init_rd_atom) &&
         !(given(VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC) &&
           a->max_dest_rd_atomic > cfg_.limits.max_qp_rd_atom) &&
         !(given(VRNIC_QP_ATTR_RATE_LIMIT) && !rate_limit_ok(a->rate_limit, a->max_burst));
}

AqResult Device::cmd_modify_qp(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_modify_qp& c = cmd.modify_qp;
  const uint64_t addr = vrnic::le64(c.attr.addr);
  vrnic_qp_attr wire{};
  if (flags_of(cmd) != 0 || vrnic::le32(c.attr.len) < sizeof(wire)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  if (addr % 8 != 0 || !mem_.read(addr, &wire, sizeof(wire))) {
    return status(VRNIC_AQ_STATUS_BAD_ADDR);
  }
  QpAttrs a;
  if (!decode_qp_attr(wire, vrnic::le32(c.attr_mask), &a)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.modify_qp(vrnic::le32(c.qpn), a));
}

AqResult Device::cmd_query_qp(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  QpAttrs a;
  const uint8_t st = engine_.query_qp(vrnic::le32(cmd.query_qp.qpn), &a);
  if (st != VRNIC_AQ_STATUS_OK) {
    return status(st);
  }
  vrnic_qp_attr w{};
  w.state = vrnic::to_le32(static_cast<uint32_t>(a.state));
  w.access = vrnic::to_le32(a.access);
  w.path_mtu = vrnic::to_le32(a.path_mtu);
  w.dest_qpn = vrnic::to_le32(a.dest_qpn);
  w.rq_psn = vrnic::to_le32(a.rq_psn);
  w.sq_psn = vrnic::to_le32(a.sq_psn);
  w.qkey = vrnic::to_le32(a.qkey);
  w.pkey_index = vrnic::to_le16(a.pkey_index);
  w.port = a.port;
  w.sq_draining = a.sq_draining ? 1 : 0;
  w.timeout = a.timeout;
  w.retry_cnt = a.retry_cnt;
  w.rnr_retry = a.rnr_retry;
  w.min_rnr_timer = a.min_rnr_timer;
  w.max_rd_atomic = a.max_rd_atomic;
  w.max_dest_rd_atomic = a.max_dest_rd_atomic;
  w.sqd_async_notify = a.sqd_async_notify;
  w.av = address_to_wire(a.av);
  w.rate_limit = vrnic::to_le32(a.rate_limit);
  w.max_burst = vrnic::to_le32(a.max_burst);
  return write_resp(cmd.query_qp.resp, &w, sizeof(w));
}

AqResult Device::cmd_destroy_qp(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.objects().destroy_qp(vrnic::le32(cmd.destroy_qp.qpn)));
}

AqResult Device::cmd_create_srq(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_create_srq& c = cmd.create_srq;
  const CreateSrqParams p{vrnic::le32(c.pdn), buffer_of(c.buf),
                          RingDesc{vrnic::le16(c.ring_page), c.log_depth, c.log_stride},
                          vrnic::le32(c.limit)};
  if (flags_of(cmd) != 0 || p.pdn == 0 ||
      !log_stride_ok(p.ring.log_stride, VRNIC_RQE_MIN_LOG_STRIDE) ||
      !depth_ok(p.ring.log_depth, cfg_.limits.max_srq_wr)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t srqn = 0;
  const uint8_t st = engine_.objects().create_srq(p, &srqn);
  return status(st, srqn);
}

AqResult Device::cmd_modify_srq(const vrnic_aq_cmd& cmd) {
  const uint32_t flags = flags_of(cmd);
  if ((flags & ~VRNIC_AQ_MODIFY_SRQ_F_LIMIT) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.objects().modify_srq(vrnic::le32(cmd.modify_srq.srqn),
                                             (flags & VRNIC_AQ_MODIFY_SRQ_F_LIMIT) != 0,
                                             vrnic::le32(cmd.modify_srq.limit)));
}

AqResult Device::cmd_resize_srq(const vrnic_aq_cmd& cmd) {
  const vrnic_aq_resize_srq& c = cmd.resize_srq;
  const ResizeSrqParams p{vrnic::le32(c.srqn), buffer_of(c.buf), vrnic::le16(c.ring_page),
                          c.log_depth};
  if (flags_of(cmd) != 0 || c.rsvd0 != 0 || !reserved_zero(c.rsvd) ||
      !depth_ok(p.log_depth, cfg_.limits.max_srq_wr)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t moved = 0;
  const uint8_t st = engine_.objects().resize_srq(p, &moved);
  return status(st, moved);
}

AqResult Device::cmd_query_srq(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t limit = 0;
  const uint8_t st = engine_.objects().query_srq(vrnic::le32(cmd.query_srq.srqn), &limit);
  return status(st, limit);
}

AqResult Device::cmd_destroy_srq(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.objects().destroy_srq(vrnic::le32(cmd.destroy_srq.srqn)));
}

// Counters as the device reports them (struct vrnic_stats).
AqResult Device::write_stats(const vrnic_aq_resp_buf& buf, const Counters::Values& values) {
  vrnic_stats st{};
  for (size_t i = 0; i < VRNIC_STAT_MAX; ++i) {
    st.counter[i] = vrnic::to_le64(values[i]);
  }
  return write_resp(buf, &st, sizeof(st));
}

AqResult Device::cmd_query_stats(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return write_stats(cmd.query_stats.resp, engine_.counters().port());
}

AqResult Device::cmd_attach_mcast(const vrnic_aq_cmd& cmd) {
  const roce::Gid gid = mcast_gid(cmd.mcast);
  if (flags_of(cmd) != 0 || !roce::gid_is_multicast(gid)) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.objects().attach_mcast(vrnic::le32(cmd.mcast.qpn), gid));
}

AqResult Device::cmd_detach_mcast(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  // A GID that is not multicast names no group: NOT_FOUND.
  return status(engine_.objects().detach_mcast(vrnic::le32(cmd.mcast.qpn), mcast_gid(cmd.mcast)));
}

AqResult Device::cmd_alloc_counter(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  uint32_t id = 0;
  const uint8_t st = engine_.alloc_counter(&id);
  return status(st, id);
}

AqResult Device::cmd_dealloc_counter(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.dealloc_counter(vrnic::le32(cmd.counter.id)));
}

AqResult Device::cmd_set_qp_counter(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  return status(engine_.set_qp_counter(vrnic::le32(cmd.counter.qpn), vrnic::le32(cmd.counter.id)));
}

AqResult Device::cmd_query_counter(const vrnic_aq_cmd& cmd) {
  if (flags_of(cmd) != 0) {
    return status(VRNIC_AQ_STATUS_BAD_PARAM);
  }
  const Counters::Values* set = engine_.counters().set(vrnic::le32(cmd.counter.id));
  if (set == nullptr) {
    return status(VRNIC_AQ_STATUS_NOT_FOUND);
  }
  return write_stats(cmd.counter.resp, *set);
}

}  // namespace vrnicd
