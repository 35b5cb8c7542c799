// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory: a window of BAR2 the device serves as memory of its own
 * (VRNIC_DEV_CAP_DM).  alloc_dm hands out whole pages of it, zeroed, and
 * offers them to the process to map; reg_dm_mr makes regions of them.
 *
 * A page is free again only when no process maps it any more: the mmap
 * entry of an allocation owns its pages, and mmap_free releases them.
 */

#include <linux/bitmap.h>
#include <linux/io.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "vrnic-abi.h"
#include "vrnic_verbs.h"

/*
 * Take the device memory the device offers, if it lies in BAR2 past the
 * register and status pages.  A device without it, or with a window that
 * makes no sense, has no device memory; that fails nothing else.
 */
int vrnic_dm_init(struct vrnic_dev *dev)
{
	const struct vrnic_dev_attrs *a = &dev->attrs;
	struct vrnic_dev_dm *dm = &dev->dm;
	u64 bar_len = pci_resource_len(dev->pdev, VRNIC_BAR_SHMEM);

	spin_lock_init(&dm->lock);
	if (!(a->dev_caps & VRNIC_DEV_CAP_DM))
		return 0;
	if (a->dm_offset < VRNIC_BAR2_MIN_SIZE ||
	    (u64)a->dm_offset + a->dm_size > bar_len) {
		ibdev_warn(&dev->ibdev,
			   "device memory at %#x, %#x bytes, is outside BAR2 (%#llx bytes); not used\n",
			   a->dm_offset, a->dm_size, bar_len);
		return 0;
	}
	dm->used = bitmap_zalloc(a->dm_size >> PAGE_SHIFT, GFP_KERNEL);
	if (!dm->used)
		return -ENOMEM;
	dm->base = pci_iomap_range(dev->pdev, VRNIC_BAR_SHMEM, a->dm_offset,
				   a->dm_size);
	if (!dm->base) {
		bitmap_free(dm->used);
		dm->used = NULL;
		return -ENOMEM;
	}
	dm->phys = pci_resource_start(dev->pdev, VRNIC_BAR_SHMEM) + a->dm_offset;
	dm->offset = a->dm_offset;
	dm->size = a->dm_size;
	return 0;
}

/* After ib_unregister_device(): no allocation or mapping is left. */
void vrnic_dm_fini(struct vrnic_dev *dev)
{
	struct vrnic_dev_dm *dm = &dev->dm;

	if (!dm->size)
		return;
	WARN_ON(!bitmap_empty(dm->used, dm->size >> PAGE_SHIFT));
	pci_iounmap(dev->pdev, dm->base);
	bitmap_free(dm->used);
	dm->used = NULL;
	dm->size = 0;
}

/* Give back npages from first (mmap_free of the allocation's entry). */
void vrnic_dm_release(struct vrnic_dev *dev, u32 first, u32 npages)
{
	spin_lock(&dev->dm.lock);
	bitmap_clear(dev->dm.used, first, npages);
	spin_unlock(&dev->dm.lock);
}

/* npages free pages aligned to 2^log_align bytes: the first, or -ENOMEM. */
static int vrnic_dm_take(struct vrnic_dev_dm *dm, u32 npages, u32 log_align)
{
	unsigned long total = dm->size >> PAGE_SHIFT;
	unsigned long mask = 0;
	unsigned long first;

	if (log_align > PAGE_SHIFT)
		mask = (1UL << (log_align - PAGE_SHIFT)) - 1;
	spin_lock(&dm->lock);
	first = bitmap_find_next_zero_area(dm->used, total, 0, npages, mask);
	if (first < total)
		bitmap_set(dm->used, first, npages);
	spin_unlock(&dm->lock);
	return first < total ? (int)first : -ENOMEM;
}

/*
 * Offer npages from first to the process: the entry owns them from here,
 * and frees them when it goes.  The mmap offset in *key.
 */
static int vrnic_dm_offer(struct vrnic_dev *dev, struct ib_ucontext *ibuctx,
			  u32 first, u32 npages, struct vrnic_dm *vdm, u64 *key)
{
	struct vrnic_user_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->type = VRNIC_MMAP_DM;
	entry->address = dev->dm.phys + ((phys_addr_t)first << PAGE_SHIFT);
	entry->dm_page = first;
	err = rdma_user_mmap_entry_insert(ibuctx, &entry->rdma_entry,
					  (size_t)npages << PAGE_SHIFT);
	if (err) {
		kfree(entry);
		return err;
	}
	vdm->mmap_entry = &entry->rdma_entry;
	*key = rdma_user_mmap_get_offset(vdm->mmap_entry);
	return 0;
}

struct ib_dm *vrnic_alloc_dm(struct ib_device *ibdev,
			     struct ib_ucontext *ibuctx,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct vrnic_dev *dev = to_vdev(ibdev);
	struct vrnic_dm *vdm;
	u32 npages;
	int first, err;
	u64 key;

	if (!dev->dm.size)
		return ERR_PTR(-EOPNOTSUPP);
	if (!attr->length || attr->flags || attr->alignment > 30)
		return ERR_PTR(-EINVAL);
	if (attr->length > dev->dm.size)
		return ERR_PTR(-ENOMEM);
	npages = PAGE_ALIGN(attr->length) >> PAGE_SHIFT;

	vdm = kzalloc(sizeof(*vdm), GFP_KERNEL);
	if (!vdm)
		return ERR_PTR(-ENOMEM);
	first = vrnic_dm_take(&dev->dm, npages, attr->alignment);
	if (first < 0) {
		kfree(vdm);
		return ERR_PTR(first);
	}
	vdm->offset = (u32)first << PAGE_SHIFT;
	/* Whatever the last owner left there is not the new one's to read. */
	memset_io(dev->dm.base + vdm->offset, 0, (size_t)npages << PAGE_SHIFT);
	err = vrnic_dm_offer(dev, ibuctx, first, npages, vdm, &key);
	if (err) {
		vrnic_dm_release(dev, first, npages);
		kfree(vdm);
		return ERR_PTR(err);
	}
	err = uverbs_copy_to(attrs, VRNIC_IB_ATTR_ALLOC_DM_RESP_MMAP_KEY, &key,
			     sizeof(key));
	if (err) {
		/* The entry frees itself, and its pages, once removed. */
		rdma_user_mmap_entry_remove(vdm->mmap_entry);
		kfree(vdm);
		return ERR_PTR(err);
	}
	return &vdm->ibdm;
}

int vrnic_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct vrnic_dm *vdm = to_vdm(ibdm);

	rdma_user_mmap_entry_remove(vdm->mmap_entry);
	kfree(vdm);
	return 0;
}
