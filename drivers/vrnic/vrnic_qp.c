// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs and shared receive queues.  Their rings and doorbell records
 * live in queue buffers, mapped into the process for user QPs; the driver
 * creates them, moves QPs through their states and answers queries, and
 * for kernel QPs also posts work (vrnic_kverbs.c).  The GSI QP (QP1) is a
 * UD QP that the device numbers 1 and gives Q_Key 0x80010000.
 */

#include <linux/log2.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/restrack.h>

#include "vrnic-abi.h"
#include "vrnic_verbs.h"

#define VRNIC_SGE_SIZE		sizeof(struct vrnic_sge)

static u32 vrnic_ring_pages(u32 log_depth, u32 log_stride)
{
	return DIV_ROUND_UP((size_t)1 << (log_depth + log_stride), PAGE_SIZE);
}

/* Send WQE stride and the capacities it gives. */
static int vrnic_sq_geometry(struct vrnic_dev *dev, struct ib_qp_init_attr *attr,
			     u8 *log_depth, u8 *log_stride)
{
	struct ib_qp_cap *cap = &attr->cap;
	bool ud = attr->qp_type == IB_QPT_UD || attr->qp_type == IB_QPT_GSI;
	u32 data = ud ? VRNIC_SQE_UD_DATA_OFFSET : VRNIC_SQE_DATA_OFFSET;
	u32 wqe;

	if (cap->max_send_wr > dev->attrs.max_qp_wr ||
	    cap->max_send_sge > dev->attrs.max_send_sge ||
	    cap->max_inline_data > dev->attrs.max_inline_data)
		return -EINVAL;
	wqe = data + max_t(u32, max_t(u32, cap->max_send_sge, 1) * VRNIC_SGE_SIZE,
			   cap->max_inline_data);
	*log_stride = max_t(u32, order_base_2(wqe), VRNIC_WQE_MIN_LOG_STRIDE);
	if (*log_stride > VRNIC_WQE_MAX_LOG_STRIDE)
		return -EINVAL;
	*log_depth = order_base_2(max_t(u32, cap->max_send_wr, 1));
	if ((1U << *log_depth) > dev->attrs.max_qp_wr)
		return -EINVAL;
	cap->max_send_wr = 1U << *log_depth;
	cap->max_send_sge = min_t(u32, ((1U << *log_stride) - data) / VRNIC_SGE_SIZE,
				  dev->attrs.max_send_sge);
	cap->max_inline_data = min_t(u32, (1U << *log_stride) - data,
				     dev->attrs.max_inline_data);
	return 0;
}

/* Receive WQE stride: a header and the SGEs. */
static int vrnic_rq_geometry(u32 max_wr, u32 max_sge, u32 dev_max_wr,
			     u32 dev_max_sge, u8 *log_depth, u8 *log_stride)
{
	if (max_wr > dev_max_wr || max_sge > dev_max_sge)
		return -EINVAL;
	*log_stride = order_base_2(sizeof(struct vrnic_rqe) +
				   max_t(u32, max_sge, 1) * VRNIC_SGE_SIZE);
	*log_depth = order_base_2(max_t(u32, max_wr, 1));
	if ((1U << *log_depth) > dev_max_wr)
		return -EINVAL;
	return 0;
}

static u32 vrnic_rq_sges(u8 log_stride, u32 dev_max_sge)
{
	return min_t(u32, ((1U << log_stride) - sizeof(struct vrnic_rqe)) /
			  VRNIC_SGE_SIZE, dev_max_sge);
}

/*
 * The device's QP type for an IB one, and what it may not come with.  Of
 * the creation flags, only IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK, where the
 * device has it (ibv_create_qp_ex's IBV_QP_CREATE_BLOCK_SELF_MCAST_LB).
 */
static int vrnic_qp_type(struct vrnic_dev *dev, struct ib_qp_init_attr *attr,
			 struct ib_udata *udata, struct vrnic_create_qp_params *p)
{
	u32 flags = attr->create_flags;

	switch (attr->qp_type) {
	case IB_QPT_RC:
		p->type = VRNIC_QPT_RC;
		break;
	case IB_QPT_UC:
		p->type = VRNIC_QPT_UC;
		break;
	case IB_QPT_UD:
		p->type = VRNIC_QPT_UD;
		break;
	case IB_QPT_GSI:
		if (udata || attr->port_num != 1)
			return -EINVAL;
		p->type = VRNIC_QPT_UD;
		p->gsi = true;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if ((dev->attrs.dev_caps & VRNIC_DEV_CAP_BLOCK_MCAST_LB) &&
	    (flags & IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK)) {
		p->block_self_mcast_lb = true;
		flags &= ~IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
	}
	if (flags || (attr->srq && attr->qp_type == IB_QPT_UC))
		return -EOPNOTSUPP;
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}

/*
 * The rings' geometry and where they go in the queue buffer: page 0 is the
 * doorbell record, then the SQ, then the RQ unless the QP has an SRQ.
 * attr->cap gets the capacities granted.  Returns the buffer's pages.
 */
static int vrnic_qp_layout(struct vrnic_dev *dev, struct ib_qp_init_attr *attr,
			   struct vrnic_create_qp_params *p, u32 *npages)
{
	int err;

	err = vrnic_sq_geometry(dev, attr, &p->sq_log_depth, &p->sq_log_stride);
	if (err)
		return err;
	p->sq_page = 1;
	*npages = 1 + vrnic_ring_pages(p->sq_log_depth, p->sq_log_stride);
	if (attr->srq) {
		p->has_srq = true;
		p->srqn = to_vsrq(attr->srq)->srqn;
		attr->cap.max_recv_wr = 0;
		attr->cap.max_recv_sge = 0;
	} else {
		err = vrnic_rq_geometry(attr->cap.max_recv_wr,
					attr->cap.max_recv_sge,
					dev->attrs.max_qp_wr,
					dev->attrs.max_recv_sge,
					&p->rq_log_depth, &p->rq_log_stride);
		if (err)
			return err;
		p->rq_page = *npages;
		*npages += vrnic_ring_pages(p->rq_log_depth, p->rq_log_stride);
		attr->cap.max_recv_wr = 1U << p->rq_log_depth;
		attr->cap.max_recv_sge =
			vrnic_rq_sges(p->rq_log_stride, dev->attrs.max_recv_sge);
	}
	return *npages > VRNIC_QBUF_MAX_PAGES ? -EINVAL : 0;
}

/* The driver's view of a QP the device has just created. */
static void vrnic_qp_init(struct vrnic_qp *qp, struct ib_qp_init_attr *attr,
			  const struct vrnic_create_qp_params *p)
{
	qp->ibqp.qp_num = qp->qpn;
	qp->state = IB_QPS_RESET;
	qp->cap = attr->cap;
	qp->sq_sig_all = p->sq_sig_all;
	qp->ud = p->type == VRNIC_QPT_UD;
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qp->sq.base = qp->qb.buf + ((size_t)p->sq_page << PAGE_SHIFT);
	qp->sq.log_depth = p->sq_log_depth;
	qp->sq.log_stride = p->sq_log_stride;
	if (!p->has_srq) {
		qp->rq.base = qp->qb.buf + ((size_t)p->rq_page << PAGE_SHIFT);
		qp->rq.log_depth = p->rq_log_depth;
		qp->rq.log_stride = p->rq_log_stride;
	}
}

/* A user QP's queue buffer goes to libvrnic: its mmap key and layout. */
static int vrnic_qp_to_user(struct vrnic_qp *qp, struct ib_udata *udata,
			    const struct vrnic_create_qp_params *p, u32 npages)
{
	struct vrnic_create_qp_resp resp = {};
	u64 key = 0;
	int err;

	qp->mmap_entry = vrnic_mmap_qbuf(vrnic_udata_ucontext(udata), &qp->qb, &key);
	if (!qp->mmap_entry)
		return -ENOMEM;
	resp.qbuf_key = key;
	resp.qbuf_size = npages << PAGE_SHIFT;
	resp.sq_offset = p->sq_page << PAGE_SHIFT;
	resp.rq_offset = p->rq_page << PAGE_SHIFT;
	resp.sq_log_depth = p->sq_log_depth;
	resp.sq_log_stride = p->sq_log_stride;
	resp.rq_log_depth = p->rq_log_depth;
	resp.rq_log_stride = p->rq_log_stride;
	resp.max_inline = p->max_inline;
	err = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (err)
		rdma_user_mmap_entry_remove(qp->mmap_entry);
	return err;
}

int vrnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		    struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct vrnic_create_qp_params p = {};
	u32 npages;
	int err;

	err = vrnic_qp_type(dev, attr, udata, &p);
	if (err)
		return err;
	err = vrnic_qp_layout(dev, attr, &p, &npages);
	if (err)
		return err;
	err = vrnic_qbuf_alloc(dev, &qp->qb, npages);
	if (err)
		return err;
	p.qb = &qp->qb;
	p.pdn = to_vpd(ibqp->pd)->pdn;
	p.send_cqn = to_vcq(attr->send_cq)->cqn;
	p.recv_cqn = to_vcq(attr->recv_cq)->cqn;
	p.sq_sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	p.max_inline = attr->cap.max_inline_data;
	mutex_lock(&dev->obj_xa_lock);
	err = vrnic_cmd_create_qp(dev, &p, &qp->qpn);
	if (err) {
		mutex_unlock(&dev->obj_xa_lock);
		goto err_free;
	}
	vrnic_qp_init(qp, attr, &p);
	err = xa_insert_irq(&dev->qp_xa, qp->qpn, qp, GFP_KERNEL);
	mutex_unlock(&dev->obj_xa_lock);
	if (err)
		goto err_destroy;
	if (!udata)
		return 0;
	err = vrnic_qp_to_user(qp, udata, &p, npages);
	if (err)
		goto err_erase;
	return 0;

err_erase:
	xa_erase_irq(&dev->qp_xa, qp->qpn);
err_destroy:
	vrnic_reclaim_qbuf(dev, &qp->qb, vrnic_cmd_destroy_qp(dev, qp->qpn));
err_free:
	vrnic_reclaim_qbuf(dev, &qp->qb, vrnic_lend_failed(dev, err));
	return err;
}

/* IB attribute mask bits and the device's, side by side. */
static const struct {
	int ib;
	u32 hw;
} vrnic_qp_mask_map[] = {
	{ IB_QP_STATE, VRNIC_QP_ATTR_STATE },
	{ IB_QP_ACCESS_FLAGS, VRNIC_QP_ATTR_ACCESS },
	{ IB_QP_PATH_MTU, VRNIC_QP_ATTR_PATH_MTU },
	{ IB_QP_DEST_QPN, VRNIC_QP_ATTR_DEST_QPN },
	{ IB_QP_RQ_PSN, VRNIC_QP_ATTR_RQ_PSN },
	{ IB_QP_SQ_PSN, VRNIC_QP_ATTR_SQ_PSN },
	{ IB_QP_QKEY, VRNIC_QP_ATTR_QKEY },
	{ IB_QP_PKEY_INDEX, VRNIC_QP_ATTR_PKEY_INDEX },
	{ IB_QP_PORT, VRNIC_QP_ATTR_PORT },
	{ IB_QP_TIMEOUT, VRNIC_QP_ATTR_TIMEOUT },
	{ IB_QP_RETRY_CNT, VRNIC_QP_ATTR_RETRY_CNT },
	{ IB_QP_RNR_RETRY, VRNIC_QP_ATTR_RNR_RETRY },
	{ IB_QP_MIN_RNR_TIMER, VRNIC_QP_ATTR_MIN_RNR_TIMER },
	{ IB_QP_MAX_QP_RD_ATOMIC, VRNIC_QP_ATTR_MAX_RD_ATOMIC },
	{ IB_QP_MAX_DEST_RD_ATOMIC, VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC },
	{ IB_QP_AV, VRNIC_QP_ATTR_AV },
	{ IB_QP_EN_SQD_ASYNC_NOTIFY, VRNIC_QP_ATTR_SQD_ASYNC_NOTIFY },
};

/* The attributes a device with one port and one P_Key can take. */
static int vrnic_modify_qp_attrs_ok(struct vrnic_dev *dev,
				    const struct ib_qp_attr *attr, int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > dev->attrs.max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > dev->attrs.max_qp_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	return 0;
}

/*
 * IB_QP_RATE_LIMIT (packet pacing) and the burst udata may give with it.
 * ib_core's state table has it for raw packet QPs only; the device paces
 * RC, UC and UD QPs, as they go to RTS or while in it.
 */
static int vrnic_rate_limit(struct vrnic_dev *dev, struct ib_qp *ibqp,
			    const struct ib_qp_attr *attr, enum ib_qp_state cur,
			    enum ib_qp_state next, struct ib_udata *udata,
			    struct vrnic_qp_attr *a)
{
	const struct vrnic_dev_attrs *da = &dev->attrs;
	struct vrnic_modify_qp_req req = {};
	int err;

	if (!(da->dev_caps & VRNIC_DEV_CAP_RATE_LIMIT))
		return -EOPNOTSUPP;
	if (ibqp->qp_type != IB_QPT_RC && ibqp->qp_type != IB_QPT_UC &&
	    ibqp->qp_type != IB_QPT_UD)
		return -EINVAL;
	if (next != IB_QPS_RTS || (cur != IB_QPS_RTR && cur != IB_QPS_RTS))
		return -EINVAL;
	if (attr->rate_limit &&
	    (attr->rate_limit < da->rate_limit_min ||
	     attr->rate_limit > da->rate_limit_max))
		return -EINVAL;
	if (udata && udata->inlen) {
		err = ib_copy_from_udata(&req, udata,
					 min(sizeof(req), udata->inlen));
		if (err)
			return err;
		if (req.rsvd || (udata->inlen > sizeof(req) &&
				 !ib_is_udata_cleared(udata, sizeof(req),
						      udata->inlen - sizeof(req))))
			return -EOPNOTSUPP;
	}
	a->rate_limit = cpu_to_le32(attr->rate_limit);
	a->max_burst = cpu_to_le32(req.max_burst);
	return 0;
}

/* MODIFY_QP's attributes, from ib_core's; the mask says which count. */
static int vrnic_qp_attr_to_hw(const struct ib_qp_attr *attr, int mask,
			       enum ib_qp_state next, struct vrnic_qp_attr *a)
{
	a->state = cpu_to_le32(next);
	/* Kept so that query_qp returns it; it means nothing for a QP. */
	a->access = cpu_to_le32(vrnic_access(attr->qp_access_flags));
	a->path_mtu = cpu_to_le32(attr->path_mtu);
	a->dest_qpn = cpu_to_le32(attr->dest_qp_num);
	a->rq_psn = cpu_to_le32(attr->rq_psn);
	a->sq_psn = cpu_to_le32(attr->sq_psn);
	a->qkey = cpu_to_le32(attr->qkey);
	a->pkey_index = cpu_to_le16(attr->pkey_index);
	a->port = (mask & IB_QP_PORT) ? attr->port_num : 1;
	a->timeout = attr->timeout;
	a->retry_cnt = attr->retry_cnt;
	a->rnr_retry = attr->rnr_retry;
	a->min_rnr_timer = attr->min_rnr_timer;
	a->max_rd_atomic = attr->max_rd_atomic;
	a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	a->sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_AV)
		return vrnic_fill_av(&attr->ah_attr, &a->av);
	return 0;
}

/*
 * MODIFY_QP.  A kernel QP to RESET posts nothing while the device empties
 * its rings; then its producers start over and its completions leave its
 * CQs (vrnic_kqp_reset).
 */
static int vrnic_modify_qp_cmd(struct vrnic_dev *dev, struct vrnic_qp *qp,
			       enum ib_qp_state next, u32 hw_mask,
			       const struct vrnic_qp_attr *a)
{
	bool kreset = next == IB_QPS_RESET && !qp->mmap_entry;
	enum ib_qp_state prev = qp->state;
	int err;

	if (kreset)
		vrnic_kqp_set_state(qp, IB_QPS_RESET);
	err = vrnic_cmd_modify_qp(dev, qp->qpn, hw_mask, a);
	if (err) {
		if (kreset)
			vrnic_kqp_set_state(qp, prev);
		return err;
	}
	if (kreset)
		vrnic_kqp_reset(qp);
	qp->state = next;
	return 0;
}

int vrnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp *qp = to_vqp(ibqp);
	enum ib_qp_state cur, next;
	struct vrnic_qp_attr a = {};
	u32 hw_mask = 0;
	unsigned int i;
	int err;

	if (mask & ~(IB_QP_ATTR_STANDARD_BITS | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	if (!(mask & IB_QP_RATE_LIMIT) && udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type,
				mask & ~IB_QP_RATE_LIMIT))
		return -EINVAL;
	err = vrnic_modify_qp_attrs_ok(dev, attr, mask);
	if (err)
		return err;
	if (mask & IB_QP_RATE_LIMIT) {
		err = vrnic_rate_limit(dev, ibqp, attr, cur, next, udata, &a);
		if (err)
			return err;
		hw_mask |= VRNIC_QP_ATTR_RATE_LIMIT;
	}

	for (i = 0; i < ARRAY_SIZE(vrnic_qp_mask_map); i++)
		if (mask & vrnic_qp_mask_map[i].ib)
			hw_mask |= vrnic_qp_mask_map[i].hw;
	/* QP1 belongs to its port: ib_mad does not name it, the device wants it. */
	if (ibqp->qp_type == IB_QPT_GSI && cur == IB_QPS_RESET && next == IB_QPS_INIT)
		hw_mask |= VRNIC_QP_ATTR_PORT;
	err = vrnic_qp_attr_to_hw(attr, mask, next, &a);
	if (err)
		return err;
	return vrnic_modify_qp_cmd(dev, qp, next, hw_mask, &a);
}

static void vrnic_av_to_ah(struct vrnic_dev *dev, const struct vrnic_av *av,
			   struct rdma_ah_attr *ah)
{
	union ib_gid dgid;

	memcpy(dgid.raw, av->dgid, sizeof(dgid.raw));
	memset(ah, 0, sizeof(*ah));
	ah->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(ah, 1);
	rdma_ah_set_grh(ah, &dgid, le32_to_cpu(av->flow_label), av->sgid_index,
			av->hop_limit, av->traffic_class);
	memcpy(ah->roce.dmac, av->dmac, ETH_ALEN);
}

/* A QP's remote rights, as QUERY_QP reports them. */
static int vrnic_qp_access_from_hw(u32 access)
{
	int ib = 0;

	if (access & VRNIC_ACCESS_LOCAL_WRITE)
		ib |= IB_ACCESS_LOCAL_WRITE;
	if (access & VRNIC_ACCESS_REMOTE_WRITE)
		ib |= IB_ACCESS_REMOTE_WRITE;
	if (access & VRNIC_ACCESS_REMOTE_READ)
		ib |= IB_ACCESS_REMOTE_READ;
	if (access & VRNIC_ACCESS_REMOTE_ATOMIC)
		ib |= IB_ACCESS_REMOTE_ATOMIC;
	if (access & VRNIC_ACCESS_FLUSH_GLOBAL)
		ib |= VRNIC_IB_ACCESS_FLUSH_GLOBAL;
	if (access & VRNIC_ACCESS_FLUSH_PERSISTENT)
		ib |= VRNIC_IB_ACCESS_FLUSH_PERSISTENT;
	return ib;
}

int vrnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp *qp = to_vqp(ibqp);
	struct vrnic_qp_attr a;
	int err;

	err = vrnic_cmd_query_qp(dev, qp->qpn, &a);
	if (err)
		return err;
	if (le32_to_cpu(a.state) > IB_QPS_ERR)
		return -EIO;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = le32_to_cpu(a.state);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = clamp_t(u32, le32_to_cpu(a.path_mtu), IB_MTU_256,
				 IB_MTU_4096);
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qkey = le32_to_cpu(a.qkey);
	attr->rq_psn = le32_to_cpu(a.rq_psn);
	attr->sq_psn = le32_to_cpu(a.sq_psn);
	attr->dest_qp_num = le32_to_cpu(a.dest_qpn);
	attr->qp_access_flags = vrnic_qp_access_from_hw(le32_to_cpu(a.access));
	attr->cap = qp->cap;
	if (ibqp->qp_type != IB_QPT_UD)
		vrnic_av_to_ah(dev, &a.av, &attr->ah_attr);
	attr->pkey_index = le16_to_cpu(a.pkey_index);
	attr->port_num = 1;
	attr->sq_draining = a.sq_draining;
	attr->max_rd_atomic = a.max_rd_atomic;
	attr->max_dest_rd_atomic = a.max_dest_rd_atomic;
	attr->min_rnr_timer = a.min_rnr_timer;
	attr->timeout = a.timeout;
	attr->retry_cnt = a.retry_cnt;
	attr->rnr_retry = a.rnr_retry;
	attr->en_sqd_async_notify = a.sqd_async_notify;
	attr->rate_limit = le32_to_cpu(a.rate_limit);

	memset(init, 0, sizeof(*init));
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = qp->cap;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/*
 * rdma resource show qp -dd: the device's own view of the QP (QUERY_QP),
 * beside the attributes the core shows.  A device that cannot answer adds
 * nothing rather than failing the whole dump.
 */
int vrnic_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	static const char * const states[] = {
		[IB_QPS_RESET] = "RESET", [IB_QPS_INIT] = "INIT", [IB_QPS_RTR] = "RTR",
		[IB_QPS_RTS] = "RTS", [IB_QPS_SQD] = "SQD", [IB_QPS_SQE] = "SQE",
		[IB_QPS_ERR] = "ERR",
	};
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp_attr a;
	struct nlattr *table;
	u32 state;

	if (vrnic_cmd_query_qp(dev, to_vqp(ibqp)->qpn, &a))
		return 0;
	state = le32_to_cpu(a.state);
	if (state >= ARRAY_SIZE(states))
		return 0;
	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "state", states[state]) ||
	    rdma_nl_put_driver_u32(msg, "sq_psn", le32_to_cpu(a.sq_psn)) ||
	    rdma_nl_put_driver_u32(msg, "rq_psn", le32_to_cpu(a.rq_psn)) ||
	    rdma_nl_put_driver_u32(msg, "sq_draining", a.sq_draining))
		goto cancel;
	if (ibqp->qp_type != IB_QPT_UD && ibqp->qp_type != IB_QPT_GSI &&
	    rdma_nl_put_driver_u32(msg, "dest_qpn", le32_to_cpu(a.dest_qpn)))
		goto cancel;
	nla_nest_end(msg, table);
	return 0;

cancel:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

int vrnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibqp->device);
	struct vrnic_qp *qp = to_vqp(ibqp);
	int err;

	mutex_lock(&dev->obj_xa_lock);
	err = vrnic_cmd_destroy_qp(dev, qp->qpn);
	if (err && !vrnic_dead(dev)) {
		mutex_unlock(&dev->obj_xa_lock);
		return err;
	}
	xa_erase_irq(&dev->qp_xa, qp->qpn);
	mutex_unlock(&dev->obj_xa_lock);
	vrnic_eq_sync(dev, 0);	/* no async event handler still has it */
	if (!qp->mmap_entry)
		vrnic_kqp_clean_cqs(qp);
	rdma_user_mmap_entry_remove(qp->mmap_entry);
	vrnic_reclaim_qbuf(dev, &qp->qb, err);
	return 0;
}

/*
 * Multicast: UD QPs only, and RoCE group GIDs only (ff00::/8, or
 * IPv4-mapped 224.0.0.0/4).  uverbs calls these directly, so the checks
 * ib_attach_mcast() would make are made here.
 */
static int vrnic_mcast(struct ib_qp *ibqp, union ib_gid *gid, bool attach)
{
	if (ibqp->qp_type != IB_QPT_UD ||
	    !rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	return vrnic_cmd_mcast(to_vdev(ibqp->device), attach, to_vqp(ibqp)->qpn, gid);
}

int vrnic_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return vrnic_mcast(ibqp, gid, true);
}

int vrnic_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return vrnic_mcast(ibqp, gid, false);
}

/* An SRQ's ring: page 0 of its queue buffer is the doorbell record. */
static int vrnic_srq_layout(struct vrnic_dev *dev, struct ib_srq_attr *attr,
			    u8 *log_depth, u8 *log_stride, u32 *npages)
{
	int err;

	err = vrnic_rq_geometry(attr->max_wr, attr->max_sge,
				dev->attrs.max_srq_wr, dev->attrs.max_srq_sge,
				log_depth, log_stride);
	if (err)
		return err;
	if (attr->srq_limit > (1U << *log_depth))
		return -EINVAL;
	*npages = 1 + vrnic_ring_pages(*log_depth, *log_stride);
	return *npages > VRNIC_QBUF_MAX_PAGES ? -EINVAL : 0;
}

/* A user SRQ's queue buffer goes to libvrnic: its mmap key and layout. */
static int vrnic_srq_to_user(struct vrnic_srq *srq, struct ib_udata *udata,
			     u32 npages, u8 log_depth, u8 log_stride)
{
	struct vrnic_create_srq_resp resp = {};
	u64 key = 0;
	int err;

	srq->mmap_entry = vrnic_mmap_qbuf(vrnic_udata_ucontext(udata), &srq->qb, &key);
	if (!srq->mmap_entry)
		return -ENOMEM;
	resp.qbuf_key = key;
	resp.qbuf_size = npages << PAGE_SHIFT;
	resp.ring_offset = PAGE_SIZE;
	resp.log_depth = log_depth;
	resp.log_stride = log_stride;
	resp.srqn = srq->srqn;
	err = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (err)
		rdma_user_mmap_entry_remove(srq->mmap_entry);
	return err;
}

int vrnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibsrq->device);
	struct vrnic_srq *srq = to_vsrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	u8 log_depth, log_stride;
	u32 npages;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	err = vrnic_srq_layout(dev, attr, &log_depth, &log_stride, &npages);
	if (err)
		return err;
	err = vrnic_qbuf_alloc(dev, &srq->qb, npages);
	if (err)
		return err;
	mutex_lock(&dev->obj_xa_lock);
	err = vrnic_cmd_create_srq(dev, &srq->qb, to_vpd(ibsrq->pd)->pdn, log_depth,
				   log_stride, attr->srq_limit, &srq->srqn);
	if (err) {
		mutex_unlock(&dev->obj_xa_lock);
		goto err_free;
	}
	err = xa_insert_irq(&dev->srq_xa, srq->srqn, srq, GFP_KERNEL);
	mutex_unlock(&dev->obj_xa_lock);
	if (err)
		goto err_destroy;
	srq->max_wr = 1U << log_depth;
	srq->max_sge = vrnic_rq_sges(log_stride, dev->attrs.max_srq_sge);
	srq->log_stride = log_stride;
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	if (!udata) {
		/* A kernel SRQ (nvmet-rdma use_srq=1): vrnic_post_srq_recv(). */
		spin_lock_init(&srq->lock);
		srq->ring.base = srq->qb.buf + PAGE_SIZE;
		srq->ring.log_depth = log_depth;
		srq->ring.log_stride = log_stride;
		return 0;
	}
	err = vrnic_srq_to_user(srq, udata, npages, log_depth, log_stride);
	if (err)
		goto err_erase;
	mutex_init(&srq->resize_lock);
	return 0;

err_erase:
	xa_erase_irq(&dev->srq_xa, srq->srqn);
err_destroy:
	vrnic_reclaim_qbuf(dev, &srq->qb, vrnic_cmd_destroy_srq(dev, srq->srqn));
err_free:
	vrnic_reclaim_qbuf(dev, &srq->qb, vrnic_lend_failed(dev, err));
	return err;
}

/*
 * A user SRQ moves to a ring of max_wr WQEs: the device copies the WQEs
 * posted and not taken to the new ring, which libvrnic maps in place of
 * the old one.  libvrnic holds its SRQ lock across this, so nobody posts
 * to the old ring meanwhile.  uverbs' modify_srq has no response, so the
 * new ring's key goes to the address libvrnic gave (rxe does the same).
 * The device refuses a depth below the WQEs posted, or below the limit
 * armed in it (a limit set in the same call is armed after the resize).
 */
static int vrnic_resize_srq_req(struct vrnic_srq *srq, u32 max_wr, bool new_limit,
				struct ib_udata *udata,
				struct vrnic_modify_srq_req *req)
{
	u32 limit;
	int err;

	if (udata->inlen < sizeof(*req))
		return -EOPNOTSUPP;	/* a libvrnic that cannot follow */
	/* Not below the armed limit, as rxe says, unless it is replaced. */
	if (!new_limit) {
		err = vrnic_cmd_query_srq(to_vdev(srq->ibsrq.device), srq->srqn,
					  &limit);
		if (err)
			return err;
		if (limit > max_wr)
			return -EINVAL;
	}
	err = ib_copy_from_udata(req, udata, sizeof(*req));
	if (err)
		return err;
	if (udata->inlen > sizeof(*req) &&
	    !ib_is_udata_cleared(udata, sizeof(*req), udata->inlen - sizeof(*req)))
		return -EINVAL;
	return 0;
}

static int vrnic_resize_srq_locked(struct vrnic_srq *srq, u32 max_wr,
				   bool new_limit, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(srq->ibsrq.device);
	struct vrnic_resize_srq_resp resp = {};
	struct rdma_user_mmap_entry *entry;
	struct vrnic_modify_srq_req req;
	struct vrnic_qbuf qb;
	u8 log_depth, log_stride;
	u32 npages, moved = 0;
	u64 key = 0;
	int err;

	err = vrnic_resize_srq_req(srq, max_wr, new_limit, udata, &req);
	if (err)
		return err;
	err = vrnic_rq_geometry(max_wr, srq->max_sge, dev->attrs.max_srq_wr,
				dev->attrs.max_srq_sge, &log_depth, &log_stride);
	if (err)
		return err;
	if (log_stride != srq->log_stride)
		return -EINVAL;
	npages = 1 + vrnic_ring_pages(log_depth, log_stride);
	if (npages > VRNIC_QBUF_MAX_PAGES)
		return -EINVAL;
	err = vrnic_qbuf_new_user(dev, udata, npages, &qb, &entry, &key);
	if (err)
		return err;
	err = vrnic_cmd_resize_srq(dev, srq->srqn, &qb, log_depth, &moved);
	if (err) {
		vrnic_qbuf_drop_new(dev, &qb, entry, err);
		return err;
	}
	vrnic_qbuf_replace(dev, &srq->qb, &srq->mmap_entry, &qb, entry);
	srq->max_wr = 1U << log_depth;
	resp.qbuf_key = key;
	resp.qbuf_size = npages << PAGE_SHIFT;
	resp.ring_offset = PAGE_SIZE;
	resp.log_depth = log_depth;
	resp.log_stride = log_stride;
	resp.pi = moved;
	if (copy_to_user(u64_to_user_ptr(req.resp_addr), &resp, sizeof(resp)))
		return -EFAULT;
	return 0;
}

int vrnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibsrq->device);
	struct vrnic_srq *srq = to_vsrq(ibsrq);
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		/* A kernel SRQ keeps its ring, as on mlx5. */
		if (!(dev->attrs.dev_caps & VRNIC_DEV_CAP_SRQ_RESIZE) || !udata)
			return -EOPNOTSUPP;
		if (!attr->max_wr || attr->max_wr > dev->attrs.max_srq_wr ||
		    ((mask & IB_SRQ_LIMIT) && attr->srq_limit > attr->max_wr))
			return -EINVAL;
		mutex_lock(&srq->resize_lock);
		err = vrnic_resize_srq_locked(srq, attr->max_wr,
					      mask & IB_SRQ_LIMIT, udata);
		mutex_unlock(&srq->resize_lock);
		if (err)
			return err;
		attr->max_wr = srq->max_wr;
	}
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->max_wr)
		return -EINVAL;
	return vrnic_cmd_modify_srq(dev, srq->srqn, attr->srq_limit);
}

int vrnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct vrnic_srq *srq = to_vsrq(ibsrq);
	u32 limit;
	int err;

	err = vrnic_cmd_query_srq(to_vdev(ibsrq->device), srq->srqn, &limit);
	if (err)
		return err;
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = limit;
	return 0;
}

int vrnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibsrq->device);
	struct vrnic_srq *srq = to_vsrq(ibsrq);
	int err;

	mutex_lock(&dev->obj_xa_lock);
	err = vrnic_cmd_destroy_srq(dev, srq->srqn);
	if (err && !vrnic_dead(dev)) {
		mutex_unlock(&dev->obj_xa_lock);
		return err;
	}
	xa_erase_irq(&dev->srq_xa, srq->srqn);
	mutex_unlock(&dev->obj_xa_lock);
	vrnic_eq_sync(dev, 0);
	if (srq->mmap_entry) {
		rdma_user_mmap_entry_remove(srq->mmap_entry);
		mutex_destroy(&srq->resize_lock);
	}
	vrnic_reclaim_qbuf(dev, &srq->qb, err);
	return 0;
}
