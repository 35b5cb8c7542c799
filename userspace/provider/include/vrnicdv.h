/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * vrnicdv: direct access to libvrnic's queues, as mlx5dv gives to mlx5's.
 *
 * For tools and tests that write WQEs and doorbell records themselves
 * (Documentation/hw-spec.rst describes the formats).  These are the
 * process's own mappings: nothing here is more than the process could find
 * in its own address space, and the device treats all of it as hostile.
 *
 * The functions live in libvrnic-rdmav34.so, which libibverbs loads when a
 * vrnic context is opened; look them up with dlsym() after
 * ibv_open_device().
 */
#ifndef VRNICDV_H
#define VRNICDV_H

#include <infiniband/verbs.h>
#include <stdint.h> /* NOLINT(modernize-deprecated-headers): a C header */

#ifdef __cplusplus
extern "C" {
#define VRNICDV_NOEXCEPT noexcept
#else
#define VRNICDV_NOEXCEPT
#endif

struct vrnicdv_qp {
  void* dbrec; /* struct vrnic_qp_dbrec */
  void* sq;    /* 2^sq_log_depth send WQEs of 2^sq_log_stride bytes */
  uint32_t sq_log_depth;
  uint32_t sq_log_stride;
  void* rq; /* receive WQEs; NULL when the QP has an SRQ */
  uint32_t rq_log_depth;
  uint32_t rq_log_stride;
  uint32_t qpn;
};

struct vrnicdv_cq {
  void* ring;  /* 2^log_depth struct vrnic_cqe */
  void* dbrec; /* struct vrnic_cq_dbrec */
  uint32_t log_depth;
  uint32_t cqn;
};

/* 0, or EINVAL when the object is not a vrnic one. */
int vrnicdv_query_qp(struct ibv_qp* qp, struct vrnicdv_qp* out) VRNICDV_NOEXCEPT;
int vrnicdv_query_cq(struct ibv_cq* cq, struct vrnicdv_cq* out) VRNICDV_NOEXCEPT;
/* Wake the device's engine (as after publishing a producer index). */
int vrnicdv_ring_doorbell(struct ibv_context* ctx) VRNICDV_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* VRNICDV_H */
