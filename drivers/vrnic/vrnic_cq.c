// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues.  A CQ's ring and doorbell record live in a queue
 * buffer: a user CQ's is mapped into the process, which polls it without
 * system calls; a kernel CQ's is polled by the driver (vrnic_kverbs.c).
 * The device signals completion events on the CQ's completion EQ.
 */

#include <linux/log2.h>

#include "vrnic-abi.h"
#include "vrnic_verbs.h"

static u32 vrnic_cq_npages(u32 log_depth)
{
	return 1 + DIV_ROUND_UP(sizeof(struct vrnic_cqe) << log_depth, PAGE_SIZE);
}

static int vrnic_cq_resp(struct vrnic_cq *cq, struct ib_udata *udata, u64 key)
{
	struct vrnic_create_cq_resp resp = {};

	resp.qbuf_key = key;
	resp.qbuf_size = cq->qb.npages << PAGE_SHIFT;
	resp.cqn = cq->cqn;
	resp.log_depth = cq->log_depth;
	resp.ring_offset = PAGE_SIZE;
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

static int vrnic_cq_log_depth(struct vrnic_dev *dev, int entries, u32 *log_depth)
{
	if (entries < 1 || entries > dev->attrs.max_cqe)
		return -EINVAL;
	*log_depth = max_t(u32, order_base_2(entries), 1);
	return 0;
}

int vrnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibcq->device);
	struct vrnic_cq *cq = to_vcq(ibcq);
	u64 key = 0;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	/* libvrnic passes nothing in; anything else is not understood. */
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (attr->comp_vector >= dev->num_ceqs)
		return -EINVAL;
	err = vrnic_cq_log_depth(dev, attr->cqe, &cq->log_depth);
	if (err)
		return err;
	cq->eqn = dev->ceqs[attr->comp_vector].eqn;
	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_lock);

	err = vrnic_qbuf_alloc(dev, &cq->qb, vrnic_cq_npages(cq->log_depth));
	if (err)
		goto err_mutex;
	mutex_lock(&dev->obj_xa_lock);
	err = vrnic_cmd_create_cq(dev, &cq->qb, cq->log_depth, cq->eqn, &cq->cqn);
	if (err) {
		mutex_unlock(&dev->obj_xa_lock);
		goto err_free;
	}
	err = xa_insert_irq(&dev->cq_xa, cq->cqn, cq, GFP_KERNEL);
	mutex_unlock(&dev->obj_xa_lock);
	if (err)
		goto err_destroy;
	ibcq->cqe = 1 << cq->log_depth;
	if (!udata)
		return 0;
	cq->mmap_entry = vrnic_mmap_qbuf(vrnic_udata_ucontext(udata), &cq->qb, &key);
	if (!cq->mmap_entry) {
		err = -ENOMEM;
		goto err_erase;
	}
	err = vrnic_cq_resp(cq, udata, key);
	if (err)
		goto err_remove;
	return 0;

err_remove:
	rdma_user_mmap_entry_remove(cq->mmap_entry);
err_erase:
	xa_erase_irq(&dev->cq_xa, cq->cqn);
err_destroy:
	vrnic_reclaim_qbuf(dev, &cq->qb, vrnic_cmd_destroy_cq(dev, cq->cqn));
err_free:
	vrnic_reclaim_qbuf(dev, &cq->qb, vrnic_lend_failed(dev, err));
err_mutex:
	mutex_destroy(&cq->resize_lock);
	return err;
}

int vrnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibcq->device);
	struct vrnic_cq *cq = to_vcq(ibcq);
	int err;

	mutex_lock(&dev->obj_xa_lock);
	err = vrnic_cmd_destroy_cq(dev, cq->cqn);
	if (err && !vrnic_dead(dev)) {
		mutex_unlock(&dev->obj_xa_lock);
		return err;
	}
	xa_erase_irq(&dev->cq_xa, cq->cqn);
	mutex_unlock(&dev->obj_xa_lock);
	/*
	 * No event handler may still be looking at it: neither its completion
	 * vector's nor the async one's (a CQ_ERROR handled in the same pass
	 * as this command's completion).
	 */
	vrnic_eq_sync(dev, 0);
	if (cq->eqn)
		vrnic_eq_sync(dev, cq->eqn);
	rdma_user_mmap_entry_remove(cq->mmap_entry);
	vrnic_reclaim_qbuf(dev, &cq->qb, err);
	mutex_destroy(&cq->resize_lock);
	return 0;
}

/*
 * The device moves the completions not yet consumed to the new ring, which
 * libvrnic maps in place of the old one.  libvrnic holds its CQ lock
 * across this, so nobody polls the old ring meanwhile; resize_lock keeps
 * two resizes (from two threads) from swapping buffers under each other.
 */
static int vrnic_resize_cq_locked(struct ib_cq *ibcq, int entries,
				  struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibcq->device);
	struct vrnic_cq *cq = to_vcq(ibcq);
	struct rdma_user_mmap_entry *entry;
	struct vrnic_qbuf qb;
	u32 log_depth;
	u64 key = 0;
	int err;

	if (!udata)
		return -EOPNOTSUPP;
	err = vrnic_cq_log_depth(dev, entries, &log_depth);
	if (err)
		return err;
	err = vrnic_qbuf_new_user(dev, udata, vrnic_cq_npages(log_depth), &qb,
				  &entry, &key);
	if (err)
		return err;
	err = vrnic_cmd_resize_cq(dev, cq->cqn, &qb, log_depth);
	if (err) {
		vrnic_qbuf_drop_new(dev, &qb, entry, err);
		return err;
	}
	vrnic_qbuf_replace(dev, &cq->qb, &cq->mmap_entry, &qb, entry);
	cq->log_depth = log_depth;
	ibcq->cqe = 1 << log_depth;
	return vrnic_cq_resp(cq, udata, key);
}

int vrnic_resize_cq(struct ib_cq *ibcq, int entries, struct ib_udata *udata)
{
	struct vrnic_cq *cq = to_vcq(ibcq);
	int err;

	mutex_lock(&cq->resize_lock);
	err = vrnic_resize_cq_locked(ibcq, entries, udata);
	mutex_unlock(&cq->resize_lock);
	return err;
}

/*
 * ib_modify_cq and ibv_modify_cq: completion event moderation, a count of
 * completions and a period in microseconds, as ConnectX takes them.  The
 * device holds an armed CQ's event back until either is reached.
 */
int vrnic_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period)
{
	struct vrnic_dev *dev = to_vdev(ibcq->device);

	BUILD_BUG_ON(VRNIC_CQ_MOD_MAX_COUNT != U16_MAX);
	if (!(dev->attrs.dev_caps & VRNIC_DEV_CAP_CQ_MODERATION))
		return -EOPNOTSUPP;
	if (cq_period > VRNIC_CQ_MOD_MAX_PERIOD_US)
		return -EINVAL;
	return vrnic_cmd_modify_cq(dev, to_vcq(ibcq)->cqn, cq_count, cq_period);
}
