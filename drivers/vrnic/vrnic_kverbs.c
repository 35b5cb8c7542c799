// SPDX-License-Identifier: GPL-2.0
/*
 * The data path of kernel QPs and CQs: ib_post_send, ib_post_recv,
 * ib_poll_cq and ib_req_notify_cq for kernel ULPs (ib_mad on the GSI QP,
 * ib_cm, rdma_cm users).  The rings, doorbell records and doorbell are the
 * ones libvrnic uses for user QPs, with the same protocol: write the
 * WQEs, publish the producer index in the doorbell record, and ring the
 * ENGINE doorbell only when the device says it is asleep.
 */

#include "vrnic_verbs.h"

static struct vrnic_qp_dbrec *vrnic_qp_dbrec(struct vrnic_qp *qp)
{
	return qp->qb.buf;
}

static struct vrnic_cq_dbrec *vrnic_cq_dbrec(struct vrnic_cq *cq)
{
	return cq->qb.buf;
}

static void *vrnic_kring_slot(struct vrnic_kring *r, u32 idx)
{
	return r->base + ((size_t)vrnic_ring_slot(idx, r->log_depth) << r->log_stride);
}

/*
 * The producer index is out; wake the device if it sleeps.  The full
 * barrier orders the index write before the read of the flag, mirroring
 * the device, which sets the flag and then re-reads every index.
 */
static void vrnic_kick_engine(struct vrnic_dev *dev)
{
	/* Producer index store before the ENGINE_ASLEEP load. */
	mb();
	if (vrnic_status_read(dev, VRNIC_STATUS_ENGINE_ASLEEP))
		vrnic_ring_db(dev, VRNIC_DB_CHANNEL_ENGINE);
}

/* What the WQE encoder needs of a kernel QP's send queue. */
static struct vrnic_sq_shape vrnic_qp_sq_shape(const struct vrnic_qp *qp)
{
	return (struct vrnic_sq_shape){
		.ud = qp->ud,
		.sig_all = qp->sq_sig_all,
		.log_stride = qp->sq.log_stride,
		.max_sge = qp->cap.max_send_sge,
		.max_inline = qp->cap.max_inline_data,
	};
}

int vrnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct vrnic_qp_dbrec *db = vrnic_qp_dbrec(qp);
	const struct vrnic_sq_shape shape = vrnic_qp_sq_shape(qp);
	u32 depth = 1U << qp->sq.log_depth;
	unsigned long flags;
	u32 start, ci;
	int err = 0;

	if (qp->mmap_entry)
		return -EINVAL;	/* a user QP: its process posts */
	spin_lock_irqsave(&qp->sq_lock, flags);
	/* Before RTS only the error state takes work (to flush it). */
	if (qp->state < IB_QPS_RTS) {
		err = -EINVAL;
		*bad_wr = wr;
		goto out;
	}
	start = qp->sq.pi;
	for (; wr; wr = wr->next) {
		ci = le32_to_cpu(READ_ONCE(db->sq_ci));
		if (qp->sq.pi - ci >= depth) {
			err = -ENOMEM;
			break;
		}
		err = vrnic_build_sqe(&shape, wr, vrnic_kring_slot(&qp->sq, qp->sq.pi));
		if (err)
			break;
		qp->sq.pi++;
	}
	if (err)
		*bad_wr = wr;
	if (qp->sq.pi != start) {
		/* The WQEs before the index that publishes them. */
		dma_wmb();
		WRITE_ONCE(db->sq_pi, cpu_to_le32(qp->sq.pi));
		vrnic_kick_engine(dev);
	}
out:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return err;
}

/*
 * Post receive WQEs to ring r (its lock held): at most the ring's depth
 * beyond the consumer index the device publishes at *ci; the new producer
 * index goes to *pi, after the WQEs.
 */
static int vrnic_post_rqes(struct vrnic_dev *dev, struct vrnic_kring *r,
			   __le32 *pi, __le32 *ci, u32 max_sge,
			   const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	u32 depth = 1U << r->log_depth;
	u32 start = r->pi;
	int err = 0;

	for (; wr; wr = wr->next) {
		if (r->pi - le32_to_cpu(READ_ONCE(*ci)) >= depth) {
			err = -ENOMEM;
			break;
		}
		err = vrnic_write_rqe(vrnic_kring_slot(r, r->pi), wr, max_sge);
		if (err)
			break;
		r->pi++;
	}
	if (err)
		*bad_wr = wr;
	if (r->pi != start) {
		dma_wmb();
		WRITE_ONCE(*pi, cpu_to_le32(r->pi));
		vrnic_kick_engine(dev);
	}
	return err;
}

int vrnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct vrnic_qp_dbrec *db = vrnic_qp_dbrec(qp);
	unsigned long flags;
	int err;

	if (qp->mmap_entry || ibqp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (qp->state == IB_QPS_RESET) {
		err = -EINVAL;
		*bad_wr = wr;
	} else {
		err = vrnic_post_rqes(to_vdev(ibqp->device), &qp->rq, &db->rq_pi,
				      &db->rq_ci, qp->cap.max_recv_sge, wr, bad_wr);
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	return err;
}

int vrnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct vrnic_srq *srq = to_vsrq(ibsrq);
	struct vrnic_srq_dbrec *db = srq->qb.buf;
	unsigned long flags;
	int err;

	if (srq->mmap_entry) {
		*bad_wr = wr;
		return -EINVAL;	/* a user SRQ: its process posts */
	}
	spin_lock_irqsave(&srq->lock, flags);
	err = vrnic_post_rqes(to_vdev(ibsrq->device), &srq->ring, &db->pi, &db->ci,
			      srq->max_sge, wr, bad_wr);
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

static struct vrnic_cqe *vrnic_cqe_slot(struct vrnic_cq *cq, u32 idx)
{
	return cq->qb.buf + PAGE_SIZE +
		((size_t)vrnic_ring_slot(idx, cq->log_depth) << VRNIC_CQE_LOG_SIZE);
}

/* Entry idx of a kernel CQ, if the device has written it (cq->lock held). */
static struct vrnic_cqe *vrnic_cqe_at(struct vrnic_cq *cq, u32 idx, u32 *info)
{
	struct vrnic_cqe *cqe = vrnic_cqe_slot(cq, idx);
	u32 v = le32_to_cpu(READ_ONCE(cqe->info));

	if (FIELD_GET(VRNIC_CQE_OWNER_MASK, v) != vrnic_ring_owner(idx, cq->log_depth))
		return NULL;
	/* The rest of the entry was written before its info word. */
	dma_rmb();
	*info = v;
	return cqe;
}

/* The next CQE if the device has written it (cq->lock held). */
static struct vrnic_cqe *vrnic_next_cqe(struct vrnic_cq *cq, u32 *info)
{
	return vrnic_cqe_at(cq, cq->ci, info);
}

/* Give the consumed entries back to the device (cq->lock held). */
static void vrnic_cq_publish_ci(struct vrnic_cq *cq)
{
	/* Done reading the entries before the device may reuse them. */
	mb();
	WRITE_ONCE(vrnic_cq_dbrec(cq)->ci, cpu_to_le32(cq->ci));
}

/*
 * Take QP qpn's unpolled completions out of a kernel CQ.  The device
 * writes nothing for the QP once MODIFY_QP to RESET, or DESTROY_QP,
 * completed.  The written entries after the dropped ones move up over
 * them, from the newest back, and ci passes the slots they leave; the
 * device writes only beyond the newest.
 */
static void vrnic_cq_clean(struct vrnic_cq *cq, u32 qpn)
{
	u32 depth = 1U << cq->log_depth, written = 0, dropped = 0;
	struct vrnic_cqe *cqe, *to;
	unsigned long flags;
	u32 idx, info;

	spin_lock_irqsave(&cq->lock, flags);
	while (written < depth && vrnic_cqe_at(cq, cq->ci + written, &info))
		written++;
	for (idx = cq->ci + written; idx != cq->ci; ) {
		cqe = vrnic_cqe_slot(cq, --idx);
		if (le32_to_cpu(cqe->qpn) == qpn) {
			dropped++;
		} else if (dropped) {
			to = vrnic_cqe_slot(cq, idx + dropped);
			memmove(to, cqe, offsetof(struct vrnic_cqe, info));
			info = le32_to_cpu(cqe->info) & ~VRNIC_CQE_OWNER_MASK;
			info |= FIELD_PREP(VRNIC_CQE_OWNER_MASK,
					   vrnic_ring_owner(idx + dropped, cq->log_depth));
			WRITE_ONCE(to->info, cpu_to_le32(info));
		}
	}
	if (dropped) {
		cq->ci += dropped;
		vrnic_cq_publish_ci(cq);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * A kernel QP's state as its posting sees it, set under both ring locks:
 * RESET before MODIFY_QP to RESET, so that nothing is posted while the
 * device empties the rings (and the state before, if MODIFY_QP failed).
 */
void vrnic_kqp_set_state(struct vrnic_qp *qp, enum ib_qp_state state)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	spin_lock(&qp->rq_lock);
	qp->state = state;
	spin_unlock(&qp->rq_lock);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

/*
 * After MODIFY_QP to RESET: the device set its consumer indexes to 0, so
 * the producers start over; the QP's completions leave its CQs.
 */
void vrnic_kqp_reset(struct vrnic_qp *qp)
{
	struct vrnic_qp_dbrec *db = vrnic_qp_dbrec(qp);
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	spin_lock(&qp->rq_lock);
	qp->sq.pi = 0;
	qp->rq.pi = 0;
	WRITE_ONCE(db->sq_pi, 0);
	WRITE_ONCE(db->rq_pi, 0);
	spin_unlock(&qp->rq_lock);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	vrnic_kqp_clean_cqs(qp);
}

/*
 * A kernel QP's unpolled completions leave its CQs, once it is in RESET or
 * destroyed (as mlx5 does): a QP used again, or one that gets a destroyed
 * one's number, must not be handed the old entries.
 */
void vrnic_kqp_clean_cqs(struct vrnic_qp *qp)
{
	vrnic_cq_clean(to_vcq(qp->ibqp.send_cq), qp->qpn);
	if (qp->ibqp.recv_cq != qp->ibqp.send_cq)
		vrnic_cq_clean(to_vcq(qp->ibqp.recv_cq), qp->qpn);
}

/*
 * The device's completion opcodes are the uverbs ABI's, which the kernel's
 * share, but for REG_MR: it has no uverbs value, and 6.2 moved it when it
 * added IB_WC_ATOMIC_WRITE before it.  A kernel QP posts no ATOMIC_WRITE
 * and no FLUSH, so a completion of one there is the device's bug.
 */
static bool vrnic_wc_opcode(u32 opcode, enum ib_wc_opcode *out)
{
	static_assert((int)VRNIC_CQE_SEND == (int)IB_WC_SEND);
	static_assert((int)VRNIC_CQE_RDMA_WRITE == (int)IB_WC_RDMA_WRITE);
	static_assert((int)VRNIC_CQE_RDMA_READ == (int)IB_WC_RDMA_READ);
	static_assert((int)VRNIC_CQE_COMP_SWAP == (int)IB_WC_COMP_SWAP);
	static_assert((int)VRNIC_CQE_FETCH_ADD == (int)IB_WC_FETCH_ADD);
	static_assert((int)VRNIC_CQE_BIND_MW == (int)IB_WC_BIND_MW);
	static_assert((int)VRNIC_CQE_LOCAL_INV == (int)IB_WC_LOCAL_INV);
	static_assert((int)VRNIC_CQE_RECV == (int)IB_WC_RECV);
	static_assert((int)VRNIC_CQE_RECV_RDMA_WITH_IMM == (int)IB_WC_RECV_RDMA_WITH_IMM);

	if (!vrnic_cqe_opcode_valid(opcode) || opcode == VRNIC_CQE_ATOMIC_WRITE ||
	    opcode == VRNIC_CQE_FLUSH)
		return false;
	*out = opcode == VRNIC_CQE_REG_MR ? IB_WC_REG_MR : opcode;
	return true;
}

static void vrnic_fill_wc(struct vrnic_cqe *cqe, u32 info, struct ib_qp *qp,
			  struct ib_wc *wc)
{
	u32 status = FIELD_GET(VRNIC_CQE_STATUS_MASK, info);
	u32 opcode = FIELD_GET(VRNIC_CQE_OPCODE_MASK, info);

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = le64_to_cpu(cqe->wr_id);
	/*
	 * The device uses the IB encodings.  Anything outside them is its
	 * bug, reported as an error (as libvrnic does), never guessed at.
	 */
	if (!vrnic_wc_opcode(opcode, &wc->opcode) ||
	    !vrnic_cqe_status_valid(status)) {
		status = VRNIC_CQE_GENERAL_ERR;
		wc->opcode = IB_WC_SEND;
	}
	wc->status = status;
	wc->vendor_err = FIELD_GET(VRNIC_CQE_VENDOR_ERR_MASK, info);
	wc->byte_len = le32_to_cpu(cqe->byte_len);
	wc->qp = qp;
	wc->src_qp = le32_to_cpu(cqe->src_qp);
	wc->port_num = 1;
	if (info & VRNIC_CQE_F_IMM) {
		wc->ex.imm_data = cpu_to_be32(le32_to_cpu(cqe->imm_data));
		wc->wc_flags |= IB_WC_WITH_IMM;
	} else if (info & VRNIC_CQE_F_INV) {
		wc->ex.invalidate_rkey = le32_to_cpu(cqe->imm_data);
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	if (info & VRNIC_CQE_F_GRH) {
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		if (info & VRNIC_CQE_F_ROCE_V1)
			wc->network_hdr_type = RDMA_NETWORK_ROCE_V1;
		else if (info & VRNIC_CQE_F_IPV4)
			wc->network_hdr_type = RDMA_NETWORK_IPV4;
		else
			wc->network_hdr_type = RDMA_NETWORK_IPV6;
	}
}

int vrnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct vrnic_dev *dev = to_vdev(ibcq->device);
	struct vrnic_cq *cq = to_vcq(ibcq);
	struct vrnic_cqe *cqe;
	unsigned long flags;
	struct vrnic_qp *qp;
	u32 info, start;
	int n = 0;

	if (cq->mmap_entry)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	start = cq->ci;
	while (n < num_entries && (cqe = vrnic_next_cqe(cq, &info))) {
		cq->ci++;
		qp = xa_load(&dev->qp_xa, le32_to_cpu(cqe->qpn));
		if (!qp || (qp->ibqp.recv_cq != ibcq && qp->ibqp.send_cq != ibcq)) {
			/* Of a QP destroyed since, or bogus: nobody to tell. */
			ibdev_dbg(&dev->ibdev, "CQ %u: completion for unknown QP %u\n",
				  cq->cqn, le32_to_cpu(cqe->qpn));
			continue;
		}
		vrnic_fill_wc(cqe, info, &qp->ibqp, &wc[n++]);
	}
	if (cq->ci != start)
		vrnic_cq_publish_ci(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/*
 * Arming is a write to the doorbell record: the device reads arm_sn
 * whenever it adds a completion, so no doorbell is needed.
 */
int vrnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct vrnic_cq *cq = to_vcq(ibcq);
	struct vrnic_cq_dbrec *db = vrnic_cq_dbrec(cq);
	unsigned long irqflags;
	u32 info;
	int ret = 0;

	if (cq->mmap_entry)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, irqflags);
	WRITE_ONCE(db->arm_flags,
		   cpu_to_le32((flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
			       VRNIC_CQ_ARM_SOLICITED : 0));
	cq->arm_sn++;
	dma_wmb();
	WRITE_ONCE(db->arm_sn, cpu_to_le32(cq->arm_sn));
	/* Order the arm before the look for entries that beat it. */
	mb();
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && vrnic_next_cqe(cq, &info))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
