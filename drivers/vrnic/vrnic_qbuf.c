// SPDX-License-Identifier: GPL-2.0
/*
 * Queue buffers: the memory CQs, QPs and SRQs live in.  Pages come from
 * vmalloc, so no large contiguous allocation is needed; the device gets
 * their DMA addresses in a page list, and the owning process maps them
 * (the mapping holds page references, so the memory outlives neither).
 */

#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "vrnic.h"

int vrnic_qbuf_alloc(struct vrnic_dev *dev, struct vrnic_qbuf *qb, u32 npages)
{
	struct device *dmadev = &dev->pdev->dev;
	struct page *page;
	u32 i;

	BUILD_BUG_ON(PAGE_SIZE != VRNIC_BAR2_PAGE_SIZE);
	if (!npages || npages > VRNIC_QBUF_MAX_PAGES)
		return -EINVAL;
	memset(qb, 0, sizeof(*qb));
	qb->buf = vmalloc_user((size_t)npages << PAGE_SHIFT);
	if (!qb->buf)
		return -ENOMEM;
	qb->dma = kvcalloc(npages, sizeof(*qb->dma), GFP_KERNEL);
	if (!qb->dma)
		goto err_free_buf;
	qb->pbl = dma_alloc_coherent(dmadev, npages * sizeof(*qb->pbl),
				     &qb->pbl_dma, GFP_KERNEL);
	if (!qb->pbl)
		goto err_free_dma;

	for (i = 0; i < npages; i++) {
		page = vmalloc_to_page(qb->buf + ((size_t)i << PAGE_SHIFT));
		qb->dma[i] = dma_map_page(dmadev, page, 0, PAGE_SIZE,
					  DMA_BIDIRECTIONAL);
		if (dma_mapping_error(dmadev, qb->dma[i]))
			goto err_unmap;
		qb->pbl[i] = cpu_to_le64(qb->dma[i]);
	}
	qb->npages = npages;
	return 0;

err_unmap:
	while (i--)
		dma_unmap_page(dmadev, qb->dma[i], PAGE_SIZE, DMA_BIDIRECTIONAL);
	dma_free_coherent(dmadev, npages * sizeof(*qb->pbl), qb->pbl,
			  qb->pbl_dma);
err_free_dma:
	kvfree(qb->dma);
err_free_buf:
	vfree(qb->buf);
	qb->buf = NULL;
	return -ENOMEM;
}

/* The device must no longer use the buffer. */
void vrnic_qbuf_free(struct vrnic_dev *dev, struct vrnic_qbuf *qb)
{
	struct device *dmadev = &dev->pdev->dev;
	u32 i;

	if (!qb->buf)
		return;
	for (i = 0; i < qb->npages; i++)
		dma_unmap_page(dmadev, qb->dma[i], PAGE_SIZE, DMA_BIDIRECTIONAL);
	dma_free_coherent(dmadev, qb->npages * sizeof(*qb->pbl), qb->pbl,
			  qb->pbl_dma);
	kvfree(qb->dma);
	vfree(qb->buf);
	qb->buf = NULL;
}
