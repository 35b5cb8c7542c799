// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's WQE encoder: ib_core's send and receive work requests as
 * the device's ring entries (uapi/vrnic-hw.h).  libvrnic has the C++ twin
 * (userspace/common/queue_entry.h).  Nothing here touches the device, a
 * lock or an allocator, so that tests/unit/kcodec builds this file on the
 * host and parses what it writes with the device's own decoder.
 */

#include "vrnic_wqe.h"

u32 vrnic_access(int ib_access)
{
	u32 a = 0;

	if (ib_access & IB_ACCESS_LOCAL_WRITE)
		a |= VRNIC_ACCESS_LOCAL_WRITE;
	if (ib_access & IB_ACCESS_REMOTE_WRITE)
		a |= VRNIC_ACCESS_REMOTE_WRITE;
	if (ib_access & IB_ACCESS_REMOTE_READ)
		a |= VRNIC_ACCESS_REMOTE_READ;
	if (ib_access & IB_ACCESS_REMOTE_ATOMIC)
		a |= VRNIC_ACCESS_REMOTE_ATOMIC;
	if (ib_access & IB_ACCESS_MW_BIND)
		a |= VRNIC_ACCESS_MW_BIND;
	if (ib_access & VRNIC_IB_ACCESS_FLUSH_GLOBAL)
		a |= VRNIC_ACCESS_FLUSH_GLOBAL;
	if (ib_access & VRNIC_IB_ACCESS_FLUSH_PERSISTENT)
		a |= VRNIC_ACCESS_FLUSH_PERSISTENT;
	return a;
}

static int vrnic_wqe_opcode(enum ib_wr_opcode op, bool ud, u32 *out)
{
	switch (op) {
	case IB_WR_SEND:
		*out = VRNIC_WQE_SEND;
		return 0;
	case IB_WR_SEND_WITH_IMM:
		*out = VRNIC_WQE_SEND_WITH_IMM;
		return 0;
	case IB_WR_LOCAL_INV:
		*out = VRNIC_WQE_LOCAL_INV;
		return 0;
	case IB_WR_REG_MR:
		*out = VRNIC_WQE_REG_MR;
		return 0;
	default:
		break;
	}
	if (ud)
		return -EINVAL;
	switch (op) {
	case IB_WR_RDMA_WRITE:
		*out = VRNIC_WQE_RDMA_WRITE;
		return 0;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		*out = VRNIC_WQE_RDMA_WRITE_WITH_IMM;
		return 0;
	case IB_WR_RDMA_READ:
		*out = VRNIC_WQE_RDMA_READ;
		return 0;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		*out = VRNIC_WQE_ATOMIC_CMP_AND_SWP;
		return 0;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		*out = VRNIC_WQE_ATOMIC_FETCH_AND_ADD;
		return 0;
	case IB_WR_SEND_WITH_INV:
		*out = VRNIC_WQE_SEND_WITH_INV;
		return 0;
	default:
		/* Memory windows, signature MRs: none. */
		return -EINVAL;
	}
}

static u32 vrnic_sqe_flags(const struct vrnic_sq_shape *sq,
			   const struct ib_send_wr *wr)
{
	u32 ctrl = 0;

	if ((wr->send_flags & IB_SEND_SIGNALED) || sq->sig_all)
		ctrl |= VRNIC_WQE_CTRL_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		ctrl |= VRNIC_WQE_CTRL_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		ctrl |= VRNIC_WQE_CTRL_FENCE;
	return ctrl;
}

/*
 * IB_WR_REG_MR: register the pages vrnic_map_mr_sg() listed.  The device
 * reads the list when it reaches the WQE; ULPs map an MR again only after
 * its invalidation completed, so the list stays put until then.
 */
static int vrnic_build_reg_mr(const struct vrnic_sq_shape *sq,
			      const struct ib_send_wr *wr, void *slot)
{
	const struct ib_reg_wr *reg = reg_wr(wr);
	struct vrnic_sqe_reg_mr *r = slot;
	struct vrnic_fr_list list;

	if (!vrnic_mr_fr_list(reg->mr, &list) || !list.npages || wr->num_sge ||
	    !is_power_of_2(reg->mr->page_size))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->wr_id = cpu_to_le64(wr->wr_id);
	r->key = cpu_to_le32(reg->key);
	r->iova = cpu_to_le64(reg->mr->iova);
	r->length = cpu_to_le64(reg->mr->length);
	r->pbl_addr = cpu_to_le64(list.dma);
	r->npages = cpu_to_le32(list.npages);
	r->page_shift = cpu_to_le32(ilog2(reg->mr->page_size));
	r->access = cpu_to_le32(vrnic_access(reg->access));
	r->ctrl = cpu_to_le32(FIELD_PREP(VRNIC_WQE_CTRL_OPCODE_MASK, VRNIC_WQE_REG_MR) |
			      vrnic_sqe_flags(sq, wr));
	return 0;
}

/* The header fields an opcode carries beyond wr_id: immediate, remote. */
static void vrnic_sqe_header(struct vrnic_sqe *h, const struct ib_send_wr *wr,
			     u32 opcode)
{
	h->wr_id = cpu_to_le64(wr->wr_id);
	switch (opcode) {
	case VRNIC_WQE_SEND_WITH_IMM:
		h->imm_data = cpu_to_le32(be32_to_cpu(wr->ex.imm_data));
		break;
	case VRNIC_WQE_LOCAL_INV:
	case VRNIC_WQE_SEND_WITH_INV:
		h->imm_data = cpu_to_le32(wr->ex.invalidate_rkey);
		break;
	case VRNIC_WQE_RDMA_WRITE_WITH_IMM:
		h->imm_data = cpu_to_le32(be32_to_cpu(wr->ex.imm_data));
		fallthrough;
	case VRNIC_WQE_RDMA_WRITE:
	case VRNIC_WQE_RDMA_READ:
		h->remote_addr = cpu_to_le64(rdma_wr(wr)->remote_addr);
		h->rkey = cpu_to_le32(rdma_wr(wr)->rkey);
		break;
	case VRNIC_WQE_ATOMIC_CMP_AND_SWP:
	case VRNIC_WQE_ATOMIC_FETCH_AND_ADD:
		h->remote_addr = cpu_to_le64(atomic_wr(wr)->remote_addr);
		h->rkey = cpu_to_le32(atomic_wr(wr)->rkey);
		h->compare_add = cpu_to_le64(atomic_wr(wr)->compare_add);
		h->swap = cpu_to_le64(atomic_wr(wr)->swap);
		break;
	default:
		break;
	}
}

static bool vrnic_sqe_may_inline(u32 opcode)
{
	return opcode != VRNIC_WQE_LOCAL_INV && opcode != VRNIC_WQE_RDMA_READ &&
	       opcode != VRNIC_WQE_ATOMIC_CMP_AND_SWP &&
	       opcode != VRNIC_WQE_ATOMIC_FETCH_AND_ADD;
}

/*
 * The WQE's data at offset data of the slot: the bytes themselves when the
 * WR is inline (kernel inline SGEs hold kernel virtual addresses), its SGEs
 * otherwise; *ctrl gets the control bits that say which.
 */
static int vrnic_sqe_data(const struct vrnic_sq_shape *sq,
			  const struct ib_send_wr *wr, u32 opcode, void *slot,
			  u32 data, u32 *ctrl)
{
	size_t stride = (size_t)1 << sq->log_stride;
	struct vrnic_sqe *h = slot;
	struct vrnic_sge *sge = slot + data;
	u32 len = 0;
	int i;

	if ((wr->send_flags & IB_SEND_INLINE) && vrnic_sqe_may_inline(opcode)) {
		for (i = 0; i < wr->num_sge; i++) {
			const struct ib_sge *s = &wr->sg_list[i];

			if (s->length > sq->max_inline - len)
				return -EINVAL;
			memcpy(slot + data + len, (void *)(uintptr_t)s->addr, s->length);
			len += s->length;
		}
		h->length = cpu_to_le32(len);
		*ctrl = VRNIC_WQE_CTRL_INLINE;
		return 0;
	}
	if (data + (size_t)wr->num_sge * sizeof(*sge) > stride)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
		sge[i].length = cpu_to_le32(wr->sg_list[i].length);
		sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
	}
	*ctrl = FIELD_PREP(VRNIC_WQE_CTRL_NUM_SGE_MASK, wr->num_sge);
	return 0;
}

/* Build one send WQE in its ring slot of 1 << sq->log_stride bytes. */
int vrnic_build_sqe(const struct vrnic_sq_shape *sq, const struct ib_send_wr *wr,
		    void *slot)
{
	u32 data = sq->ud ? VRNIC_SQE_UD_DATA_OFFSET : VRNIC_SQE_DATA_OFFSET;
	struct vrnic_sqe *h = slot;
	u32 opcode, ctrl;
	int err;

	err = vrnic_wqe_opcode(wr->opcode, sq->ud, &opcode);
	if (err)
		return err;
	if (opcode == VRNIC_WQE_REG_MR)
		return vrnic_build_reg_mr(sq, wr, slot);
	if (wr->num_sge < 0 || wr->num_sge > sq->max_sge ||
	    (opcode == VRNIC_WQE_LOCAL_INV && wr->num_sge))
		return -EINVAL;

	memset(slot, 0, data);
	vrnic_sqe_header(h, wr, opcode);
	if (sq->ud) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		if (!ud->ah)
			return -EINVAL;
		h->remote_qpn = cpu_to_le32(ud->remote_qpn);
		h->remote_qkey = cpu_to_le32(ud->remote_qkey);
		memcpy(slot + VRNIC_SQE_DATA_OFFSET, vrnic_ah_av(ud->ah),
		       sizeof(struct vrnic_av));
	}
	err = vrnic_sqe_data(sq, wr, opcode, slot, data, &ctrl);
	if (err)
		return err;
	h->ctrl = cpu_to_le32(FIELD_PREP(VRNIC_WQE_CTRL_OPCODE_MASK, opcode) |
			      vrnic_sqe_flags(sq, wr) | ctrl);
	return 0;
}

/* One receive WQE into its slot; max_sge bounds its SGEs. */
int vrnic_write_rqe(void *slot, const struct ib_recv_wr *wr, u32 max_sge)
{
	struct vrnic_rqe *rqe = slot;
	struct vrnic_sge *sge = (struct vrnic_sge *)(rqe + 1);
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	rqe->wr_id = cpu_to_le64(wr->wr_id);
	rqe->num_sge = cpu_to_le32(wr->num_sge);
	rqe->rsvd = 0;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
		sge[i].length = cpu_to_le32(wr->sg_list[i].length);
		sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
	}
	return 0;
}
