// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
//
// vrnicdv (include/vrnicdv.h): the queues behind a QP or CQ, for tools
// that drive them directly.
#include <cerrno>

#include "vrnic.h"
#include "vrnicdv.h"

using vrnic::is_vrnic_context;

extern "C" {

__attribute__((visibility("default"))) int vrnicdv_query_qp(ibv_qp* ibqp,
                                                            vrnicdv_qp* out) noexcept {
  if (ibqp == nullptr || out == nullptr || !is_vrnic_context(ibqp->context)) {
    return EINVAL;
  }
  const vrnic::Qp* qp = vrnic::to_vqp(ibqp);
  *out = {};
  out->dbrec = qp->dbrec;
  out->sq = qp->sq;
  out->sq_log_depth = qp->sq_log_depth;
  out->sq_log_stride = qp->sq_log_stride;
  if (qp->srq == nullptr) {
    out->rq = qp->rq.base;
    out->rq_log_depth = qp->rq.log_depth;
    out->rq_log_stride = qp->rq.log_stride;
  }
  out->qpn = ibqp->qp_num;
  return 0;
}

__attribute__((visibility("default"))) int vrnicdv_query_cq(ibv_cq* ibcq,
                                                            vrnicdv_cq* out) noexcept {
  if (ibcq == nullptr || out == nullptr || !is_vrnic_context(ibcq->context)) {
    return EINVAL;
  }
  const vrnic::Cq* cq = vrnic::to_vcq(ibcq);
  *out = {};
  out->ring = cq->ring;
  out->dbrec = cq->dbrec;
  out->log_depth = cq->log_depth;
  out->cqn = cq->cqn;
  return 0;
}

__attribute__((visibility("default"))) int vrnicdv_ring_doorbell(ibv_context* ctx) noexcept {
  if (ctx == nullptr || !is_vrnic_context(ctx)) {
    return EINVAL;
  }
  vrnic::ring_engine(vrnic::to_vctx(ctx));
  return 0;
}

}  // extern "C"
