// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// libvrnic queue pairs, the control path: creation (mapping the rings the
// kernel allocated), modification, query and destruction through the
// kernel.  Posting is in post.cc.
#include <endian.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <span>

#include "abi_mirror.h"
#include "vrnic.h"

namespace vrnic {
namespace {

constexpr uint32_t kMaxLogDepth = 16;

bool rings_ok(const vrnic_create_qp_resp& r, bool has_rq) noexcept {
  const auto ring_ok = [&](uint32_t off, uint32_t log_depth, uint32_t log_stride,
                           uint32_t min_stride) {
    return log_depth <= kMaxLogDepth && log_stride >= min_stride &&
           log_stride <= VRNIC_WQE_MAX_LOG_STRIDE && off >= sizeof(vrnic_qp_dbrec) &&
           uint64_t{off} + (uint64_t{1} << (log_depth + log_stride)) <= r.qbuf_size;
  };
  return ring_ok(r.sq_offset, r.sq_log_depth, r.sq_log_stride, VRNIC_WQE_MIN_LOG_STRIDE) &&
         (!has_rq ||
          ring_ok(r.rq_offset, r.rq_log_depth, r.rq_log_stride, VRNIC_RQE_MIN_LOG_STRIDE));
}

// ---------------------------------------------------------------------------

constexpr uint32_t kSupportedQpInitMask =
    IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

// The one creation flag: the driver passes it on where the device has it,
// and refuses it (EOPNOTSUPP) where not.
constexpr uint32_t kSupportedCreateFlags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;

// Why a QP cannot be created here, as an errno (0: it can).
int check_init_attr(const Context* ctx, const ibv_qp_init_attr_ex* attr) noexcept {
  if ((attr->comp_mask & ~kSupportedQpInitMask) != 0 ||
      ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) != 0 &&
       (attr->create_flags & ~kSupportedCreateFlags) != 0)) {
    debug("create_qp: unsupported init attributes (comp_mask %#x)", attr->comp_mask);
    return EOPNOTSUPP;
  }
  uint64_t ops = send_ops_for(attr->qp_type);
  if ((ctx->flags & VRNIC_UCTX_F_ATOMIC_WRITE) == 0) {
    ops &= ~uint64_t{IBV_QP_EX_WITH_ATOMIC_WRITE};  // a device without it
  }
  if ((ctx->flags & VRNIC_UCTX_F_FLUSH) == 0) {
    ops &= ~flush_send_ops();  // a device or kernel without it
  }
  if (ops == 0) {
    debug("create_qp: QP type %d is not supported", attr->qp_type);
    return EOPNOTSUPP;
  }
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0 &&
      (attr->send_ops_flags & ~ops) != 0) {
    debug("create_qp: send ops %#llx are not supported on this QP type",
          static_cast<unsigned long long>(attr->send_ops_flags & ~ops));
    return EOPNOTSUPP;
  }
  if (ctx->db_page == nullptr) {
    explain_once(
        "the doorbell register could not be mapped, so queue pairs are unavailable to "
        "user space. Boot the guest with pci=resource_alignment=12@pci:1af4:1110 so that "
        "BAR0 gets a page of its own (see Documentation/user-guide.rst).");
    return EOPNOTSUPP;
  }
  return 0;
}

// cap: what the kernel granted (libibverbs copied it back, from the write
// or the ioctl interface).
int attach_rings(Qp* qp, const ibv_qp_cap& cap, const vrnic_create_qp_resp& r) noexcept {
  const bool has_rq = qp->srq == nullptr;
  if (!rings_ok(r, has_rq) || r.max_inline > (1U << r.sq_log_stride) ||
      cap.max_send_sge > VRNIC_MAX_SGE || cap.max_recv_sge > VRNIC_MAX_SGE) {
    debug(
        "kernel described bad QP rings: size %u, SQ at %u 2^%u x 2^%u, RQ at %u 2^%u x 2^%u, "
        "inline %u, sge %u/%u",
        r.qbuf_size, r.sq_offset, r.sq_log_depth, r.sq_log_stride, r.rq_offset, r.rq_log_depth,
        r.rq_log_stride, r.max_inline, cap.max_send_sge, cap.max_recv_sge);
    return EPROTO;
  }
  if (!map_queue(qp->ctx, r.qbuf_key, r.qbuf_size, &qp->map)) {
    return errno;
  }
  qp->dbrec = qp->map.at(0);
  qp->sq = qp->map.at(r.sq_offset);
  qp->sq_log_depth = r.sq_log_depth;
  qp->sq_log_stride = r.sq_log_stride;
  qp->max_send_sge = cap.max_send_sge;
  qp->max_inline = r.max_inline;
  if (has_rq) {
    qp->rq.base = qp->map.at(r.rq_offset);
    qp->rq.pi_rec = qp->dbrec + offsetof(vrnic_qp_dbrec, rq_pi);
    qp->rq.ci_rec = qp->dbrec + offsetof(vrnic_qp_dbrec, rq_ci);
    qp->rq.log_depth = r.rq_log_depth;
    qp->rq.log_stride = r.rq_log_stride;
    qp->rq.max_sge = cap.max_recv_sge;
  }
  return 0;
}

void delete_qp(Qp* qp) noexcept {
  unmap_queue(&qp->map);
  pthread_spin_destroy(&qp->sq_lock);
  pthread_spin_destroy(&qp->rq_lock);
  delete qp;
}

}  // namespace

ibv_qp* create_qp_ex(ibv_context* ibctx, ibv_qp_init_attr_ex* attr) noexcept {
  Context* ctx = to_vctx(ibctx);
  if (const int err = check_init_attr(ctx, attr); err != 0) {
    errno = err;
    return nullptr;
  }
  auto* qp = new (std::nothrow) Qp{};
  if (qp == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  qp->ctx = ctx;
  qp->type = attr->qp_type;
  qp->sq_sig_all = attr->sq_sig_all != 0;
  qp->srq = attr->srq != nullptr ? to_vsrq(attr->srq) : nullptr;
  pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
  pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0) {
    set_wr_ops(qp, attr->send_ops_flags);
  }

  abi::CreateQpExCmd cmd{};
  abi::CreateQpExResp resp{};
  int err = vrnic::pabi::cmd_create_qp_ex2(
      ibctx, &qp->vqp, attr, abi::as<struct ibv_create_qp_ex>(&cmd), sizeof(cmd),
      abi::as<ib_uverbs_ex_create_qp_resp>(&resp), sizeof(resp));
  if (err != 0) {
    delete_qp(qp);
    errno = err;
    return nullptr;
  }
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0) {
    qp->vqp.comp_mask |= VERBS_QP_EX;
  }
  err = attach_rings(qp, attr->cap, resp.drv);
  if (err != 0) {
    ibv_cmd_destroy_qp(&qp->vqp.qp);
    delete_qp(qp);
    errno = err;
    return nullptr;
  }
  // What we can actually hold, as the spec asks (the kernel rounded up).
  attr->cap.max_inline_data = qp->max_inline;
  debug("QP %u: SQ 2^%u x %u B, RQ 2^%u x %u B, inline %u", qp->vqp.qp.qp_num, qp->sq_log_depth,
        1U << qp->sq_log_stride, qp->rq.log_depth, 1U << qp->rq.log_stride, qp->max_inline);
  return &qp->vqp.qp;
}

ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) noexcept {
  ibv_qp_init_attr_ex ex{};
  ex.qp_context = attr->qp_context;
  ex.send_cq = attr->send_cq;
  ex.recv_cq = attr->recv_cq;
  ex.srq = attr->srq;
  ex.cap = attr->cap;
  ex.qp_type = attr->qp_type;
  ex.sq_sig_all = attr->sq_sig_all;
  ex.comp_mask = IBV_QP_INIT_ATTR_PD;
  ex.pd = pd;
  ibv_qp* qp = create_qp_ex(pd->context, &ex);
  if (qp != nullptr) {
    attr->cap = ex.cap;
  }
  return qp;
}

namespace {

// The QP's completions that were not polled leave its CQs (clean_cq): once
// it is destroyed, and once it is in RESET, as mlx5 does.  A QP that went
// through ERR to RESET to be used again must not have its old flushes found
// by the traffic that follows (rdma-core's test_mr_rereg_pd).
void clean_cqs(const ibv_qp* ibqp) noexcept {
  for (ibv_cq* cq : {ibqp->send_cq, ibqp->recv_cq == ibqp->send_cq ? nullptr : ibqp->recv_cq}) {
    if (cq != nullptr) {
      clean_cq(to_vcq(cq), ibqp->qp_num);
    }
  }
}

}  // namespace

int destroy_qp(ibv_qp* ibqp) noexcept {
  const int err = ibv_cmd_destroy_qp(ibqp);
  if (err != 0) {
    return err;
  }
  clean_cqs(ibqp);
  delete_qp(to_vqp(ibqp));
  return 0;
}

namespace {

// IBV_QP_RATE_LIMIT travels in the extended command only, with the burst.
int modify_qp_paced(ibv_qp* ibqp, ibv_qp_attr* attr, int mask, uint32_t max_burst) noexcept {
  abi::ModifyQpExCmd cmd{};
  cmd.drv.max_burst = max_burst;
  ib_uverbs_ex_modify_qp_resp resp{};
  return ibv_cmd_modify_qp_ex(ibqp, attr, mask, abi::as<struct ibv_modify_qp_ex>(&cmd), sizeof(cmd),
                              &resp, sizeof(resp));
}

}  // namespace

// ibv_modify_qp_rate_limit: the rate and the burst; the device has no use
// for the typical packet size.
int modify_qp_rate_limit(ibv_qp* ibqp, ibv_qp_rate_limit_attr* attr) noexcept {
  if (attr->comp_mask != 0) {
    return EINVAL;
  }
  ibv_qp_attr qp_attr{};
  qp_attr.rate_limit = attr->rate_limit;
  return modify_qp_paced(ibqp, &qp_attr, IBV_QP_RATE_LIMIT, attr->max_burst_sz);
}

int modify_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask) noexcept {
  Qp* qp = to_vqp(ibqp);
  int err = 0;
  if ((mask & IBV_QP_RATE_LIMIT) != 0) {
    err = modify_qp_paced(ibqp, attr, mask, 0);
  } else {
    abi::ModifyQpCmd cmd{};
    err = ibv_cmd_modify_qp(ibqp, attr, mask, abi::as<struct ibv_modify_qp>(&cmd), sizeof(cmd));
  }
  if (err != 0) {
    return err;
  }
  if ((mask & IBV_QP_STATE) != 0 && attr->qp_state == IBV_QPS_RESET) {
    {
      // The device emptied the rings; start them again from index 0.
      const SpinGuard sq(&qp->sq_lock);
      const SpinGuard rq(&qp->rq_lock);
      qp->sq_pi = 0;
      qp->rq.pi = 0;
      store_release32(qp->dbrec + offsetof(vrnic_qp_dbrec, sq_pi), 0);
      store_release32(qp->dbrec + offsetof(vrnic_qp_dbrec, rq_pi), 0);
    }
    clean_cqs(ibqp);  // each CQ's lock on its own, as in destroy_qp
  }
  return 0;
}

int query_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init) noexcept {
  const Qp* qp = to_vqp(ibqp);
  abi::QueryQpCmd cmd{};
  const int err =
      ibv_cmd_query_qp(ibqp, attr, mask, init, abi::as<struct ibv_query_qp>(&cmd), sizeof(cmd));
  if (err != 0) {
    return err;
  }
  attr->cap.max_inline_data = qp->max_inline;
  init->cap.max_inline_data = qp->max_inline;
  return 0;
}

}  // namespace vrnic
