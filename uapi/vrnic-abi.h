/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB */
/*
 * uverbs driver data (udata) exchanged between vrnic.ko and libvrnic.
 *
 * Each request is appended to the core uverbs command and each response
 * to the core response.  Fields are only ever added at the end; a side
 * that sees a shorter structure treats the missing fields as zero.
 */
#ifndef VRNIC_ABI_H
#define VRNIC_ABI_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

#include "vrnic-hw.h"

/* Reported as ib_device_ops.uverbs_abi_ver; libvrnic matches on it. */
#define VRNIC_UVERBS_ABI_VERSION	1

/* Name of the PCI driver; libvrnic matches devices bound to it. */
#define VRNIC_DRIVER_NAME		"vrnic"

struct vrnic_alloc_ucontext_req {
	__u32 comp_mask;	/* must be 0 */
	__u32 rsvd;
};

VRNIC_ASSERT_SIZE(struct vrnic_alloc_ucontext_req, 8);

/* The doorbell page could be mapped: db_mmap_key is valid. */
#define VRNIC_UCTX_F_USER_DB		VRNIC_BIT(0)
/* The device executes ATOMIC_WRITE WQEs (VRNIC_DEV_CAP_ATOMIC_WRITE). */
#define VRNIC_UCTX_F_ATOMIC_WRITE	VRNIC_BIT(1)
/*
 * The device executes FLUSH WQEs (VRNIC_DEV_CAP_FLUSH_GLOBAL), and the
 * kernel (6.2 on) lets MRs and QPs have the flush rights.
 */
#define VRNIC_UCTX_F_FLUSH		VRNIC_BIT(2)

struct vrnic_alloc_ucontext_resp {
	__u32 comp_mask;
	__u32 flags;		/* VRNIC_UCTX_F_* */
	/* mmap offset of the page holding the BAR0 doorbell register */
	__aligned_u64 db_mmap_key;
	/* mmap offset of the BAR2 status page; map it read-only */
	__aligned_u64 status_mmap_key;
	__u32 db_offset;	/* doorbell register offset in that page */
	__u32 db_peer;		/* doorbell destination peer */
	__u32 max_inline_data;
	__u32 rsvd;
};

VRNIC_ASSERT_SIZE(struct vrnic_alloc_ucontext_resp, 40);

/*
 * Queue buffers (CQs, QPs, SRQs) are allocated by the kernel and mapped
 * into the process at qbuf_key, qbuf_size bytes: page 0 holds the doorbell
 * records, the rings follow at the offsets given.
 */

/* alloc_pd: the core response is 4 bytes, so only 32-bit fields here. */
struct vrnic_alloc_pd_resp {
	__u32 pdn;
	__u32 rsvd;
};

VRNIC_ASSERT_SIZE(struct vrnic_alloc_pd_resp, 8);

/* create_cq and resize_cq */
struct vrnic_create_cq_resp {
	__aligned_u64 qbuf_key;
	__u32 qbuf_size;
	__u32 cqn;
	__u32 log_depth;	/* ring of 2^log_depth struct vrnic_cqe */
	__u32 ring_offset;	/* bytes from the start of the mapping */
};

VRNIC_ASSERT_SIZE(struct vrnic_create_cq_resp, 24);

struct vrnic_create_qp_resp {
	__aligned_u64 qbuf_key;
	__u32 qbuf_size;
	__u32 sq_offset;
	__u32 rq_offset;
	__u8 sq_log_depth;
	__u8 sq_log_stride;
	__u8 rq_log_depth;	/* 0 with an SRQ */
	__u8 rq_log_stride;
	__u32 max_inline;
	__u32 rsvd;
};

VRNIC_ASSERT_SIZE(struct vrnic_create_qp_resp, 32);

struct vrnic_create_srq_resp {
	__aligned_u64 qbuf_key;
	__u32 qbuf_size;
	__u32 ring_offset;
	__u8 log_depth;
	__u8 log_stride;
	__u16 rsvd0;
	__u32 srqn;
};

VRNIC_ASSERT_SIZE(struct vrnic_create_srq_resp, 24);

/*
 * modify_srq has no response in uverbs.  With IB_SRQ_MAX_WR the kernel
 * writes struct vrnic_resize_srq_resp at resp_addr, in the caller's
 * memory (as rxe passes its resized SRQ's mmap information): the new
 * ring's queue buffer, and pi, the producer index the moved WQEs left.
 */
struct vrnic_modify_srq_req {
	__aligned_u64 resp_addr;
};

VRNIC_ASSERT_SIZE(struct vrnic_modify_srq_req, 8);

struct vrnic_resize_srq_resp {
	__aligned_u64 qbuf_key;
	__u32 qbuf_size;
	__u32 ring_offset;
	__u8 log_depth;
	__u8 log_stride;
	__u16 rsvd0;
	__u32 pi;
};

VRNIC_ASSERT_SIZE(struct vrnic_resize_srq_resp, 24);

/*
 * create_ah: the address vector the kernel resolved (destination MAC
 * included), which libvrnic puts in every UD send WQE.  The core response
 * is 4 bytes, so no 64-bit fields.
 */
struct vrnic_create_ah_resp {
	struct vrnic_av av;
};

VRNIC_ASSERT_SIZE(struct vrnic_create_ah_resp, 32);

/*
 * query_device (the extended command): what the core response has no
 * field for.  rate_limit_min and _max are the kbit/s IB_QP_RATE_LIMIT
 * takes besides 0, for the QP types in pacing_qpts (1 << IB_QPT_*); all
 * three are 0 without packet pacing.
 */
struct vrnic_query_device_resp {
	__u32 comp_mask;
	__u32 rate_limit_min;
	__u32 rate_limit_max;
	__u32 pacing_qpts;
};

VRNIC_ASSERT_SIZE(struct vrnic_query_device_resp, 16);

/*
 * modify_qp (the extended command) with IB_QP_RATE_LIMIT: the burst the
 * QP may send at once, in bytes; 0 lets the device choose.
 */
struct vrnic_modify_qp_req {
	__u32 max_burst;
	__u32 rsvd;
};

VRNIC_ASSERT_SIZE(struct vrnic_modify_qp_req, 8);

/*
 * Driver attributes and methods of the uverbs ioctl interface, in the
 * driver's namespace (UVERBS_ID_NS_SHIFT).
 */
enum vrnic_ib_query_context_attrs {
	/* struct vrnic_alloc_ucontext_resp, for ibv_import_device */
	VRNIC_IB_ATTR_QUERY_CONTEXT_RESP_UCTX = (1U << UVERBS_ID_NS_SHIFT),
};

enum vrnic_ib_pd_methods {
	/* ibv_import_pd: the device's number of a PD the context holds */
	VRNIC_IB_METHOD_PD_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

enum vrnic_ib_query_pd_attrs {
	VRNIC_IB_ATTR_QUERY_PD_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	VRNIC_IB_ATTR_QUERY_PD_RESP_PDN,
};

enum vrnic_ib_alloc_dm_attrs {
	/* __u64: the mmap offset of the allocation's device memory */
	VRNIC_IB_ATTR_ALLOC_DM_RESP_MMAP_KEY = (1U << UVERBS_ID_NS_SHIFT),
};

enum vrnic_ib_dm_methods {
	/* ibv_import_dm: where to map a DM the context holds, and its length */
	VRNIC_IB_METHOD_DM_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

enum vrnic_ib_query_dm_attrs {
	VRNIC_IB_ATTR_QUERY_DM_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	VRNIC_IB_ATTR_QUERY_DM_RESP_MMAP_KEY,	/* __u64 */
	VRNIC_IB_ATTR_QUERY_DM_RESP_LENGTH,	/* __u64 */
};

#endif /* VRNIC_ABI_H */
