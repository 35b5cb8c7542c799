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

#endif /* VRNIC_ABI_H */
