// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: user memory pinned with ib_umem and described to the
 * device by a page list, direct or through pages of page-list entries.
 * The device copies the list at REG_MR, so it lives only for the command.
 */

#include <linux/dma-mapping.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "vrnic_compat.h"
#include "vrnic_verbs.h"

/*
 * Memory keys are one table for the whole device (max_mr): MRs, FRWR MRs
 * and windows alike, and a window pins no memory.  So that one process
 * cannot take every key, from the others and from the kernel ULPs' FRWR
 * pools, a user context may hold context_keys of them, and user contexts
 * together all but kernel_keys.  The rdma cgroup's hca_object counts them
 * as well: ib_core charges every MR and window a user creates.
 */
static unsigned int kernel_keys = 512;
module_param(kernel_keys, uint, 0644);
MODULE_PARM_DESC(kernel_keys,
		 "memory keys (MRs, windows) kept for kernel users (default 512)");

static unsigned int context_keys = 1024;
module_param(context_keys, uint, 0644);
MODULE_PARM_DESC(context_keys,
		 "memory keys (MRs, windows) one user context may hold (default 1024)");

/* The user context a verb with udata is for; NULL for the kernel's. */
static struct vrnic_ucontext *vrnic_key_owner(struct ib_udata *udata)
{
	return udata ? to_vuctx(vrnic_udata_ucontext(udata)) : NULL;
}

/* Count one more key against owner's quotas; -ENOSPC past either. */
static int vrnic_charge_key(struct vrnic_dev *dev, struct vrnic_ucontext *owner)
{
	u32 limit = READ_ONCE(context_keys);
	u32 reserve = READ_ONCE(kernel_keys);
	u32 users = dev->attrs.max_mr > reserve ? dev->attrs.max_mr - reserve : 0;

	if (!owner)
		return 0;
	if (atomic_inc_return(&owner->keys) > limit) {
		atomic_dec(&owner->keys);
		ibdev_info_ratelimited(&dev->ibdev,
				       "%s[%d]: a context holds %u memory keys at most (context_keys)\n",
				       current->comm, task_pid_nr(current), limit);
		return -ENOSPC;
	}
	if (atomic_inc_return(&dev->user_keys) > users) {
		atomic_dec(&dev->user_keys);
		atomic_dec(&owner->keys);
		ibdev_info_ratelimited(&dev->ibdev,
				       "%s[%d]: user contexts hold all %u memory keys they may; %u are the kernel's (kernel_keys)\n",
				       current->comm, task_pid_nr(current), users, reserve);
		return -ENOSPC;
	}
	return 0;
}

static void vrnic_uncharge_key(struct vrnic_dev *dev,
			       struct vrnic_ucontext *owner)
{
	if (!owner)
		return;
	atomic_dec(&dev->user_keys);
	atomic_dec(&owner->keys);
}

#define VRNIC_PBL_PAGE_BYTES	(VRNIC_PBL_ENTRIES_PER_PAGE * sizeof(__le64))

/* A page list in DMA memory: one buffer, or a directory and leaf pages. */
struct vrnic_pbl {
	u32 nlists;		/* 0: direct */
	__le64 *dir;
	dma_addr_t dir_dma;
	size_t dir_bytes;
	__le64 **lists;
	dma_addr_t *lists_dma;
};

static void vrnic_pbl_free(struct vrnic_dev *dev, struct vrnic_pbl *pbl)
{
	struct device *dmadev = &dev->pdev->dev;
	u32 i;

	for (i = 0; i < pbl->nlists && pbl->lists; i++)
		if (pbl->lists[i])
			dma_free_coherent(dmadev, VRNIC_PBL_PAGE_BYTES,
					  pbl->lists[i], pbl->lists_dma[i]);
	kfree(pbl->lists);
	kfree(pbl->lists_dma);
	if (pbl->dir)
		dma_free_coherent(dmadev, pbl->dir_bytes, pbl->dir, pbl->dir_dma);
}

static void vrnic_release_pbl(struct vrnic_dev *dev, void *obj)
{
	vrnic_pbl_free(dev, obj);
}

static int vrnic_pbl_build(struct vrnic_dev *dev, struct ib_umem *umem,
			   unsigned long pgsz, u32 npages, struct vrnic_pbl *pbl)
{
	struct device *dmadev = &dev->pdev->dev;
	struct ib_block_iter biter;
	u32 i = 0, n;

	memset(pbl, 0, sizeof(*pbl));
	if (npages > VRNIC_PBL_ENTRIES_PER_PAGE) {
		pbl->nlists = DIV_ROUND_UP(npages, VRNIC_PBL_ENTRIES_PER_PAGE);
		if (pbl->nlists > VRNIC_PBL_ENTRIES_PER_PAGE)
			return -EINVAL;
		pbl->lists = kcalloc(pbl->nlists, sizeof(*pbl->lists), GFP_KERNEL);
		pbl->lists_dma = kcalloc(pbl->nlists, sizeof(*pbl->lists_dma),
					 GFP_KERNEL);
		if (!pbl->lists || !pbl->lists_dma)
			goto err_nomem;
		for (n = 0; n < pbl->nlists; n++) {
			pbl->lists[n] = dma_alloc_coherent(dmadev,
							   VRNIC_PBL_PAGE_BYTES,
							   &pbl->lists_dma[n],
							   GFP_KERNEL);
			if (!pbl->lists[n])
				goto err_nomem;
		}
		pbl->dir_bytes = pbl->nlists * sizeof(__le64);
	} else {
		pbl->dir_bytes = npages * sizeof(__le64);
	}
	pbl->dir = dma_alloc_coherent(dmadev, pbl->dir_bytes, &pbl->dir_dma,
				      GFP_KERNEL);
	if (!pbl->dir)
		goto err_nomem;

	rdma_umem_for_each_dma_block(umem, &biter, pgsz) {
		__le64 addr = cpu_to_le64(rdma_block_iter_dma_address(&biter));

		if (i >= npages)
			break;
		if (pbl->nlists)
			pbl->lists[i / VRNIC_PBL_ENTRIES_PER_PAGE]
				  [i % VRNIC_PBL_ENTRIES_PER_PAGE] = addr;
		else
			pbl->dir[i] = addr;
		i++;
	}
	if (i != npages) {
		/* The umem has fewer blocks than its length said: nothing to lend. */
		vrnic_pbl_free(dev, pbl);
		return -EINVAL;
	}
	for (n = 0; n < pbl->nlists; n++)
		pbl->dir[n] = cpu_to_le64(pbl->lists_dma[n]);
	return 0;

err_nomem:
	vrnic_pbl_free(dev, pbl);
	return -ENOMEM;
}

/*
 * The translation of @umem, mapped at @virt_addr for @length bytes, for
 * REG_MR or REREG_MR: into @p, with its page list in @pbl.
 */
static int vrnic_mr_translation(struct vrnic_dev *dev, struct ib_umem *umem,
				u64 virt_addr, u64 length,
				struct vrnic_reg_mr_params *p,
				struct vrnic_pbl *pbl)
{
	unsigned long pgsz;
	int err;

	pgsz = ib_umem_find_best_pgsz(umem,
				      dev->attrs.page_size_cap &
				      GENMASK_ULL(VRNIC_MR_MAX_PAGE_SHIFT,
						  VRNIC_MR_MIN_PAGE_SHIFT),
				      virt_addr);
	if (!pgsz)
		return -EINVAL;
	p->npages = ib_umem_num_dma_blocks(umem, pgsz);
	err = vrnic_pbl_build(dev, umem, pgsz, p->npages, pbl);
	if (err)
		return err;
	p->iova = virt_addr;
	p->length = length;
	p->pbl_addr = pbl->dir_dma;
	p->indirect = pbl->nlists != 0;
	p->page_shift = __ffs(pgsz);
	return 0;
}

/*
 * Register mr->umem with the device: its page list, then REG_MR.  On
 * failure the umem is gone (released, or kept by reclaim while a dead
 * device may still use it).
 */
static int vrnic_reg_umem(struct vrnic_dev *dev, struct vrnic_mr *mr, u32 pdn,
			  u64 virt_addr, u64 length, int access)
{
	struct vrnic_reg_mr_params p = {};
	struct vrnic_pbl pbl;
	int err;

	err = vrnic_mr_translation(dev, mr->umem, virt_addr, length, &p, &pbl);
	if (err) {
		ib_umem_release(mr->umem);
		return err;
	}
	p.pdn = pdn;
	p.access = vrnic_access(access);
	err = vrnic_cmd_reg_mr(dev, &p, &mr->key);
	/* The device copies the list at REG_MR, unless it died on it. */
	vrnic_reclaim(dev, vrnic_lend_failed(dev, err), vrnic_release_pbl,
		      &pbl, sizeof(pbl));
	/* A device that died on REG_MR may have registered the pages. */
	if (err)
		vrnic_reclaim_umem(dev, mr->umem, vrnic_lend_failed(dev, err));
	return err;
}

/* The access rights a user MR may have: -EOPNOTSUPP for any other. */
static int vrnic_mr_access_ok(struct vrnic_dev *dev, int access)
{
	const int supported = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			      IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
			      IB_ACCESS_MW_BIND | IB_ACCESS_RELAXED_ORDERING |
			      VRNIC_IB_ACCESS_FLUSH_GLOBAL |
			      VRNIC_IB_ACCESS_FLUSH_PERSISTENT;

	if (access & ~supported) {
		ibdev_dbg(&dev->ibdev, "unsupported MR access %#x\n", access);
		return -EOPNOTSUPP;
	}
	return 0;
}

struct ib_mr *vrnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 virt_addr, int access, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);
	struct vrnic_mr *mr;
	int err;

	err = vrnic_mr_access_ok(dev, access);
	if (err)
		return ERR_PTR(err);
	if (!length || length > dev->attrs.max_mr_size)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->owner = vrnic_key_owner(udata);
	err = vrnic_charge_key(dev, mr->owner);
	if (err)
		goto err_free;
	mr->umem = vrnic_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_uncharge;
	}
	err = vrnic_reg_umem(dev, mr, to_vpd(ibpd)->pdn, virt_addr, length,
			     access);
	if (err)
		goto err_uncharge;

	mr->access = access;
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return &mr->ibmr;

err_uncharge:
	vrnic_uncharge_key(dev, mr->owner);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/*
 * REREG_MR's new translation: @length bytes at @start, mapped at
 * @virt_addr, pinned for @access into *@umem, its page list in @pbl.
 */
static int vrnic_rereg_pin(struct vrnic_dev *dev, u64 start, u64 length,
			   u64 virt_addr, int access, struct ib_umem **umem,
			   struct vrnic_reg_mr_params *p, struct vrnic_pbl *pbl)
{
	int err;

	if (!length || length > dev->attrs.max_mr_size)
		return -EINVAL;
	*umem = vrnic_umem_get(&dev->ibdev, start, length, access);
	if (IS_ERR(*umem))
		return PTR_ERR(*umem);
	err = vrnic_mr_translation(dev, *umem, virt_addr, length, p, pbl);
	if (err)
		ib_umem_release(*umem);
	return err;
}

/*
 * After REREG_MR (@err) with a new translation: as at REG_MR, the list is
 * copied unless the device died; then the old pages go, which the device
 * no longer reaches, or on failure the new ones.
 */
static int vrnic_rereg_unpin(struct vrnic_dev *dev, struct vrnic_mr *mr,
			     struct ib_umem *umem, struct vrnic_pbl *pbl,
			     int err)
{
	vrnic_reclaim(dev, vrnic_lend_failed(dev, err), vrnic_release_pbl,
		      pbl, sizeof(*pbl));
	if (err) {
		vrnic_reclaim_umem(dev, umem, vrnic_lend_failed(dev, err));
		return err;
	}
	ib_umem_release(mr->umem);
	mr->umem = umem;
	return 0;
}

/*
 * A user MR changed in place (REREG_MR): it keeps its keys, as a rereg
 * that mlx5 does without a new mkey does, and on failure it is as it was.
 * New rights that change whether the pages must be pinned writable pin
 * them again.  NULL tells ib_core the MR is the same one; it moves the MR
 * to @ibpd and records the new range itself.
 */
struct ib_mr *vrnic_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 virt_addr, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibmr->device);
	struct vrnic_mr *mr = to_vmr(ibmr);
	struct vrnic_reg_mr_params p = {};
	struct ib_umem *umem = NULL;
	struct vrnic_pbl pbl;
	u32 aq_flags = 0;
	int err;

	if (!(dev->attrs.dev_caps & VRNIC_DEV_CAP_REREG_MR) || !mr->umem ||
	    (flags & ~IB_MR_REREG_SUPPORTED))
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	err = vrnic_mr_access_ok(dev, access);
	if (err)
		return ERR_PTR(err);
	if (!(flags & IB_MR_REREG_TRANS) &&
	    ib_access_writable(access) != ib_access_writable(mr->access)) {
		/* The same range, pinned for the new rights. */
		flags |= IB_MR_REREG_TRANS;
		start = mr->umem->address;
		length = mr->umem->length;
		virt_addr = ibmr->iova;
	}
	if (flags & IB_MR_REREG_TRANS) {
		err = vrnic_rereg_pin(dev, start, length, virt_addr, access,
				      &umem, &p, &pbl);
		if (err)
			return ERR_PTR(err);
		aq_flags |= VRNIC_AQ_REREG_MR_F_TRANS;
	}
	if (flags & IB_MR_REREG_PD) {
		p.pdn = to_vpd(ibpd)->pdn;
		aq_flags |= VRNIC_AQ_REREG_MR_F_PD;
	}
	if (flags & IB_MR_REREG_ACCESS) {
		p.access = vrnic_access(access);
		aq_flags |= VRNIC_AQ_REREG_MR_F_ACCESS;
	}
	err = vrnic_cmd_rereg_mr(dev, mr->key, aq_flags, &p);
	if (umem)
		err = vrnic_rereg_unpin(dev, mr, umem, &pbl, err);
	if (err)
		return ERR_PTR(err);
	mr->access = access;
	return NULL;
}

/*
 * The DMA MR ib_core makes for a kernel PD's local_dma_lkey: a physical
 * region, addressed by DMA address (GPA), that only the kernel can get.
 */
struct ib_mr *vrnic_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);
	struct vrnic_reg_mr_params p = {};
	struct vrnic_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	p.phys = true;
	p.pdn = to_vpd(ibpd)->pdn;
	p.access = vrnic_access(access);
	err = vrnic_cmd_reg_mr(dev, &p, &mr->key);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return &mr->ibmr;
}

/*
 * A fast-register MR for kernel ULPs: the device keeps it free (no access)
 * until a REG_MR WQE, posted after vrnic_map_mr_sg(), registers the pages
 * of mr->pages.  The list stays the driver's; the device reads it when it
 * executes the WQE.
 */
struct ib_mr *vrnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);
	struct vrnic_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > dev->attrs.max_fast_reg_page_list_len)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->max_pages = max_num_sg;
	mr->pages = dma_alloc_coherent(&dev->pdev->dev,
				       max_num_sg * sizeof(*mr->pages),
				       &mr->pages_dma, GFP_KERNEL);
	if (!mr->pages) {
		err = -ENOMEM;
		goto err_free;
	}
	err = vrnic_cmd_alloc_mr(dev, to_vpd(ibpd)->pdn, max_num_sg, &mr->key);
	if (err)
		goto err_pages;
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return &mr->ibmr;

err_pages:
	/* ALLOC_MR does not lend the list: the device reads it at REG_MR. */
	dma_free_coherent(&dev->pdev->dev, max_num_sg * sizeof(*mr->pages),
			  mr->pages, mr->pages_dma);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int vrnic_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct vrnic_mr *mr = to_vmr(ibmr);

	if (mr->npages >= mr->max_pages)
		return -ENOMEM;
	mr->pages[mr->npages++] = cpu_to_le64(addr);
	return 0;
}

/* A fast-register MR's page list, for its REG_MR WQE (vrnic_wqe.c). */
bool vrnic_mr_fr_list(struct ib_mr *ibmr, struct vrnic_fr_list *out)
{
	struct vrnic_mr *mr = to_vmr(ibmr);

	if (!mr->pages)
		return false;
	out->dma = mr->pages_dma;
	out->npages = mr->npages;
	return true;
}

int vrnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct vrnic_mr *mr = to_vmr(ibmr);

	if (!mr->pages)
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, vrnic_set_page);
}

/*
 * Memory windows (ibv_alloc_mw): the device makes an unbound window of
 * the PD; users bind it with BIND_MW WQEs they post themselves.
 */
int vrnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibmw->device);
	struct vrnic_mw *mw = to_vmw(ibmw);
	u32 type;
	int err;

	if (ibmw->type == IB_MW_TYPE_1)
		type = VRNIC_MW_TYPE_1;
	else if (ibmw->type == IB_MW_TYPE_2)
		type = VRNIC_MW_TYPE_2;
	else
		return -EINVAL;
	if (!(dev->attrs.dev_caps & VRNIC_DEV_CAP_MW))
		return -EOPNOTSUPP;
	/* libvrnic passes nothing in; anything else is not understood. */
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	mw->owner = vrnic_key_owner(udata);
	err = vrnic_charge_key(dev, mw->owner);
	if (err)
		return err;
	err = vrnic_cmd_alloc_mw(dev, to_vpd(ibmw->pd)->pdn, type, &mw->key);
	if (err) {
		vrnic_uncharge_key(dev, mw->owner);
		return err;
	}
	ibmw->rkey = mw->key;
	return 0;
}

int vrnic_dealloc_mw(struct ib_mw *ibmw)
{
	struct vrnic_dev *dev = to_vdev(ibmw->device);
	int err;

	/* No memory is lent to a window: a dead device has nothing to free. */
	err = vrnic_cmd_dealloc_mw(dev, to_vmw(ibmw)->key);
	if (err && !vrnic_dead(dev))
		return err;
	vrnic_uncharge_key(dev, to_vmw(ibmw)->owner);
	return 0;
}

int vrnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibmr->device);
	struct vrnic_mr *mr = to_vmr(ibmr);
	int err;

	/*
	 * Once this completes the device no longer touches the pages; if it
	 * died first, they stay pinned until it confirms a reset.
	 */
	err = vrnic_cmd_dereg_mr(dev, mr->key);
	if (err && !vrnic_dead(dev))
		return err;
	if (mr->umem)
		vrnic_reclaim_umem(dev, mr->umem, err);
	vrnic_reclaim_coherent(dev, mr->max_pages * sizeof(*mr->pages),
			       mr->pages, mr->pages_dma, err);
	vrnic_uncharge_key(dev, mr->owner);
	kfree(mr);
	return 0;
}

/*
 * A region of device memory: zero-based (ib_core insists), length bytes
 * from offset in the allocation, which must start on 8 bytes as atomics
 * need.  The device checks that it lies inside its memory.
 */
struct ib_mr *vrnic_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs)
{
	const int allowed = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
			    IB_ZERO_BASED;
	struct vrnic_dev *dev = to_vdev(ibpd->device);
	struct vrnic_reg_mr_params p = {};
	struct vrnic_mr *mr;
	int err;

	if ((attr->access_flags & ~allowed) || !IS_ALIGNED(attr->offset, 8))
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->owner = vrnic_key_owner(&attrs->driver_udata);
	err = vrnic_charge_key(dev, mr->owner);
	if (err)
		goto err_free;
	p.dm = true;
	p.pbl_addr = to_vdm(ibdm)->offset + attr->offset;
	p.length = attr->length;
	p.npages = DIV_ROUND_UP(attr->length, SZ_4K);
	p.page_shift = VRNIC_MR_MIN_PAGE_SHIFT;
	p.pdn = to_vpd(ibpd)->pdn;
	p.access = vrnic_access(attr->access_flags);
	err = vrnic_cmd_reg_mr(dev, &p, &mr->key);
	if (err)
		goto err_uncharge;
	mr->access = attr->access_flags;
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return &mr->ibmr;

err_uncharge:
	vrnic_uncharge_key(dev, mr->owner);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}
