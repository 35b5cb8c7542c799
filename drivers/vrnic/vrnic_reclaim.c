// SPDX-License-Identifier: GPL-2.0
/*
 * Memory lent to the device, and getting it back.
 *
 * Rings, page lists, pinned user pages and command buffers are lent to the
 * device: it may read and write them until it gives them back, either by
 * completing the command that ends the loan (DESTROY_*, DEREG_MR, the
 * command a buffer was for) or by a confirmed reset.  When that command
 * fails, because the device refused it, died or stopped answering, the
 * device may still hold the memory, and freeing it would let a late DMA
 * land in pages the kernel has reused.  Such memory waits on dev->lent
 * until a reset is confirmed (vrnic_dev_quiesced()), and is never freed if
 * none ever is (vrnic_dev_abandon_lent()).
 */

#include <linux/dma-mapping.h>
#include <linux/kmemleak.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "vrnic.h"

/* Memory the device may still hold, and how to free it. */
struct vrnic_loan {
	struct list_head list;
	vrnic_release_fn release;
	size_t len;
	u8 obj[];		/* a copy of the caller's description */
};

/**
 * vrnic_reclaim - free memory the device was lent, once it is safe to
 * @dev: the device
 * @err: how the command that ends the loan went; 0 if the device let go
 * @release: frees @obj
 * @obj: describes the memory (copied if it has to wait)
 * @len: size of *@obj
 *
 * Process context.  With @err 0, or once the device has confirmed a reset,
 * @release runs now; otherwise it runs when a reset is confirmed.
 */
void vrnic_reclaim(struct vrnic_dev *dev, int err, vrnic_release_fn release,
		   void *obj, size_t len)
{
	struct vrnic_loan *loan = NULL;
	bool kept = false;

	if (err)
		loan = kmalloc(struct_size(loan, obj, len), GFP_KERNEL);
	spin_lock(&dev->lent_lock);
	if (err && !test_bit(VRNIC_FLAG_QUIESCED, &dev->flags)) {
		kept = true;
		if (loan) {
			loan->release = release;
			loan->len = len;
			memcpy(loan->obj, obj, len);
			list_add_tail(&loan->list, &dev->lent);
			dev->lent_count++;
		}
	}
	spin_unlock(&dev->lent_lock);
	if (!kept) {
		kfree(loan);
		release(dev, obj);
	} else if (!loan) {
		dev_warn_once(&dev->pdev->dev,
			      "out of memory while the device holds a buffer; it stays allocated\n");
	}
}

static void vrnic_release_qbuf(struct vrnic_dev *dev, void *obj)
{
	vrnic_qbuf_free(dev, obj);
}

/* A queue buffer: *qb is emptied either way. */
void vrnic_reclaim_qbuf(struct vrnic_dev *dev, struct vrnic_qbuf *qb, int err)
{
	if (!qb->buf)
		return;
	vrnic_reclaim(dev, err, vrnic_release_qbuf, qb, sizeof(*qb));
	qb->buf = NULL;
}

static void vrnic_release_umem(struct vrnic_dev *dev, void *obj)
{
	ib_umem_release(*(struct ib_umem **)obj);
}

/* Pinned user pages. */
void vrnic_reclaim_umem(struct vrnic_dev *dev, struct ib_umem *umem, int err)
{
	vrnic_reclaim(dev, err, vrnic_release_umem, &umem, sizeof(umem));
}

struct vrnic_coherent {
	void *buf;
	dma_addr_t dma;
	size_t len;
};

static void vrnic_release_coherent(struct vrnic_dev *dev, void *obj)
{
	struct vrnic_coherent *c = obj;

	dma_free_coherent(&dev->pdev->dev, c->len, c->buf, c->dma);
}

/* A dma_alloc_coherent() buffer; NULL is ignored. */
void vrnic_reclaim_coherent(struct vrnic_dev *dev, size_t len, void *buf,
			    dma_addr_t dma, int err)
{
	struct vrnic_coherent c = { .buf = buf, .dma = dma, .len = len };

	if (buf)
		vrnic_reclaim(dev, err, vrnic_release_coherent, &c, sizeof(c));
}

/**
 * vrnic_dev_quiesced - the device confirmed a reset: it holds nothing now
 * @dev: the device
 *
 * Frees what waited on the device, and anything reclaimed from now on is
 * freed at once.  Process context.
 */
void vrnic_dev_quiesced(struct vrnic_dev *dev)
{
	struct vrnic_loan *loan, *next;
	LIST_HEAD(list);

	spin_lock(&dev->lent_lock);
	set_bit(VRNIC_FLAG_QUIESCED, &dev->flags);
	list_splice_init(&dev->lent, &list);
	dev->lent_count = 0;
	spin_unlock(&dev->lent_lock);
	list_for_each_entry_safe(loan, next, &list, list) {
		list_del(&loan->list);
		loan->release(dev, loan->obj);
		kfree(loan);
	}
}

/**
 * vrnic_dev_abandon_lent - the device is going away unreset
 * @dev: the device
 *
 * No reset was confirmed, so the device may still use what it holds: keep
 * it allocated for good, and say so once.
 */
void vrnic_dev_abandon_lent(struct vrnic_dev *dev)
{
	struct vrnic_loan *loan, *next;
	u32 n;

	spin_lock(&dev->lent_lock);
	n = dev->lent_count;
	list_for_each_entry_safe(loan, next, &dev->lent, list) {
		list_del_init(&loan->list);
		/* Kept on purpose: not a leak, and what it points to is not. */
		kmemleak_not_leak(loan);
	}
	dev->lent_count = 0;
	spin_unlock(&dev->lent_lock);
	if (n)
		dev_warn(&dev->pdev->dev,
			 "the device never confirmed a reset: keeping %u buffers it may still use\n",
			 n);
}
