/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Stand-in for the kernel's <rdma/ib_verbs.h>: the work requests, MR and
 * AH that drivers/vrnic/vrnic_wqe.c reads, with the kernel's names and
 * values and only the fields it reads (see types.h here).  C and C++.
 */
#ifndef VRNIC_KSHIM_IB_VERBS_H
#define VRNIC_KSHIM_IB_VERBS_H

#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ib_wr_opcode {
	IB_WR_RDMA_WRITE = 0,
	IB_WR_RDMA_WRITE_WITH_IMM = 1,
	IB_WR_SEND = 2,
	IB_WR_SEND_WITH_IMM = 3,
	IB_WR_RDMA_READ = 4,
	IB_WR_ATOMIC_CMP_AND_SWP = 5,
	IB_WR_ATOMIC_FETCH_AND_ADD = 6,
	IB_WR_BIND_MW = 8,
	IB_WR_LSO = 10,
	IB_WR_SEND_WITH_INV = 9,
	IB_WR_RDMA_READ_WITH_INV = 11,
	IB_WR_LOCAL_INV = 7,
	IB_WR_MASKED_ATOMIC_CMP_AND_SWP = 12,
	IB_WR_MASKED_ATOMIC_FETCH_AND_ADD = 13,
	IB_WR_REG_MR = 0x20,
	IB_WR_REG_MR_INTEGRITY,
};

enum ib_send_flags {
	IB_SEND_FENCE = 1,
	IB_SEND_SIGNALED = 2,
	IB_SEND_SOLICITED = 4,
	IB_SEND_INLINE = 8,
	IB_SEND_IP_CSUM = 16,
};

enum ib_access_flags {
	IB_ACCESS_LOCAL_WRITE = 1,
	IB_ACCESS_REMOTE_WRITE = 2,
	IB_ACCESS_REMOTE_READ = 4,
	IB_ACCESS_REMOTE_ATOMIC = 8,
	IB_ACCESS_MW_BIND = 16,
};

struct ib_sge {
	u64 addr;
	u32 length;
	u32 lkey;
};

struct ib_send_wr {
	struct ib_send_wr *next;
	u64 wr_id;
	struct ib_sge *sg_list;
	int num_sge;
	enum ib_wr_opcode opcode;
	int send_flags;
	union {
		__be32 imm_data;
		u32 invalidate_rkey;
	} ex;
};

struct ib_recv_wr {
	struct ib_recv_wr *next;
	u64 wr_id;
	struct ib_sge *sg_list;
	int num_sge;
};

struct ib_mr {
	u64 iova;
	u64 length;
	unsigned int page_size;
};

struct ib_ah {
	int unused;
};

struct ib_rdma_wr {
	struct ib_send_wr wr;
	u64 remote_addr;
	u32 rkey;
};

struct ib_atomic_wr {
	struct ib_send_wr wr;
	u64 remote_addr;
	u64 compare_add;
	u64 swap;
	u64 compare_add_mask;
	u64 swap_mask;
	u32 rkey;
};

struct ib_ud_wr {
	struct ib_send_wr wr;
	struct ib_ah *ah;
	u32 remote_qpn;
	u32 remote_qkey;
	u16 pkey_index;
	u32 port_num;
};

struct ib_reg_wr {
	struct ib_send_wr wr;
	struct ib_mr *mr;
	u32 key;
	int access;
};

/* Each work request's first member is its ib_send_wr, as in the kernel. */
static inline const struct ib_rdma_wr *rdma_wr(const struct ib_send_wr *wr)
{
	return (const struct ib_rdma_wr *)wr;
}

static inline const struct ib_atomic_wr *atomic_wr(const struct ib_send_wr *wr)
{
	return (const struct ib_atomic_wr *)wr;
}

static inline const struct ib_ud_wr *ud_wr(const struct ib_send_wr *wr)
{
	return (const struct ib_ud_wr *)wr;
}

static inline const struct ib_reg_wr *reg_wr(const struct ib_send_wr *wr)
{
	return (const struct ib_reg_wr *)wr;
}

#ifdef __cplusplus
}
#endif

#endif
