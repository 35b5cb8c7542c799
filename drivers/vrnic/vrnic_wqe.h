/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's WQE encoder (vrnic_wqe.c): what it needs of a send queue,
 * an MR and an address handle, and what it offers.  This header and its
 * .c include no more of the kernel than types, byte order, bit fields and
 * ib_verbs.h's work requests, so that the host test (tests/unit/kcodec)
 * can build them with stand-ins for those.
 */
#ifndef VRNIC_WQE_H
#define VRNIC_WQE_H

#include <linux/bitfield.h>
#include <linux/log2.h>
#include <linux/string.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "vrnic-hw.h"

/*
 * 6.2's flush access rights, by their numbers (the uverbs ABI's, which the
 * kernel's IB_ACCESS_* share): ib_core before 6.2 refuses them, so there
 * they never get here.  vrnic_compat.h checks them against 6.2's names.
 */
#define VRNIC_IB_ACCESS_FLUSH_GLOBAL		VRNIC_BIT(8)
#define VRNIC_IB_ACCESS_FLUSH_PERSISTENT	VRNIC_BIT(9)

/* A send queue as the encoder sees it. */
struct vrnic_sq_shape {
	bool ud;		/* UD or GSI: WQEs carry an address */
	bool sig_all;		/* every WQE asks for a completion */
	u8 log_stride;		/* a slot is 1 << log_stride bytes */
	u32 max_sge;
	u32 max_inline;
};

/* The page list a fast-register MR's REG_MR WQE points the device at. */
struct vrnic_fr_list {
	dma_addr_t dma;
	u32 npages;
};

/* From the driver (vrnic_mr.c, vrnic_verbs.c), or the host test. */
bool vrnic_mr_fr_list(struct ib_mr *ibmr, struct vrnic_fr_list *out);
const struct vrnic_av *vrnic_ah_av(struct ib_ah *ibah);

u32 vrnic_access(int ib_access);
int vrnic_build_sqe(const struct vrnic_sq_shape *sq, const struct ib_send_wr *wr,
		    void *slot);
int vrnic_write_rqe(void *slot, const struct ib_recv_wr *wr, u32 max_sge);

#endif /* VRNIC_WQE_H */
