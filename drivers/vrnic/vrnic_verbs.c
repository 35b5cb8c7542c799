// SPDX-License-Identifier: GPL-2.0
/*
 * vrnic verbs: device and port queries, GIDs, user contexts and mmap.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>

#include "vrnic-abi.h"
#include "vrnic_compat.h"
#include "vrnic_verbs.h"

/* The capability flags for what the device announces in dev_caps. */
static void vrnic_cap_flags(const struct vrnic_dev_attrs *a,
			    struct ib_device_attr *attr)
{
	if (a->dev_caps & VRNIC_DEV_CAP_RC_RNR_NAK_GEN)
		attr->device_cap_flags |= IB_DEVICE_RC_RNR_NAK_GEN;
	if (a->dev_caps & VRNIC_DEV_CAP_SRQ_RESIZE)
		attr->device_cap_flags |= IB_DEVICE_SRQ_RESIZE;
	if (a->dev_caps & VRNIC_DEV_CAP_MEM_MGT_EXT)
		attr->device_cap_flags |= IB_DEVICE_MEM_MGT_EXTENSIONS;
	if (a->dev_caps & VRNIC_DEV_CAP_MW) {
		attr->device_cap_flags |= IB_DEVICE_MEM_WINDOW |
					  IB_DEVICE_MEM_WINDOW_TYPE_2B;
		attr->max_mw = a->max_mw;
	}
	if (a->dev_caps & VRNIC_DEV_CAP_BLOCK_MCAST_LB)
		attr->kernel_cap_flags |= IBK_BLOCK_MULTICAST_LOOPBACK;
	if (a->dev_caps & VRNIC_DEV_CAP_ATOMIC_WRITE)
		attr->device_cap_flags |= VRNIC_DEVICE_ATOMIC_WRITE;
	if (a->dev_caps & VRNIC_DEV_CAP_FLUSH_GLOBAL)
		attr->device_cap_flags |= VRNIC_DEVICE_FLUSH_GLOBAL;
	if (a->dev_caps & VRNIC_DEV_CAP_FLUSH_PERSISTENT)
		attr->device_cap_flags |= VRNIC_DEVICE_FLUSH_PERSISTENT;
	if (a->dev_caps & VRNIC_DEV_CAP_CQ_MODERATION) {
		attr->cq_caps.max_cq_moderation_count = VRNIC_CQ_MOD_MAX_COUNT;
		attr->cq_caps.max_cq_moderation_period =
			VRNIC_CQ_MOD_MAX_PERIOD_US;
	}
	attr->device_cap_flags |= IB_DEVICE_PORT_ACTIVE_EVENT |
				  IB_DEVICE_SYS_IMAGE_GUID;
	if (a->dev_caps & VRNIC_DEV_CAP_ATOMIC)
		attr->atomic_cap = IB_ATOMIC_HCA;
}

/* What the extended query's core response has no field for (libvrnic). */
static int vrnic_query_device_resp(const struct vrnic_dev_attrs *a,
				   struct ib_udata *udata)
{
	struct vrnic_query_device_resp resp = {};

	if (!udata || !udata->outlen)
		return 0;
	if (a->dev_caps & VRNIC_DEV_CAP_RATE_LIMIT) {
		resp.rate_limit_min = a->rate_limit_min;
		resp.rate_limit_max = a->rate_limit_max;
		resp.pacing_qpts = BIT(IB_QPT_RC) | BIT(IB_QPT_UC) |
				   BIT(IB_QPT_UD);
	}
	return ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
}

int vrnic_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibdev);
	const struct vrnic_dev_attrs *a = &dev->attrs;
	int err;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	err = vrnic_query_device_resp(a, udata);
	if (err)
		return err;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = a->fw_version;
	attr->sys_image_guid = cpu_to_be64(a->sys_image_guid);
	attr->max_mr_size = a->max_mr_size;
	attr->page_size_cap = a->page_size_cap;
	attr->vendor_id = a->vendor_id;
	attr->vendor_part_id = a->vendor_part_id;
	attr->hw_ver = a->hw_version;
	attr->max_qp = a->max_qp;
	attr->max_qp_wr = a->max_qp_wr;
	vrnic_cap_flags(a, attr);
	attr->max_send_sge = a->max_send_sge;
	attr->max_recv_sge = a->max_recv_sge;
	attr->max_sge_rd = a->max_sge_rd;
	attr->max_cq = a->max_cq;
	attr->max_cqe = a->max_cqe;
	attr->max_mr = a->max_mr;
	attr->max_pd = a->max_pd;
	attr->max_qp_rd_atom = a->max_qp_rd_atom;
	attr->max_qp_init_rd_atom = a->max_qp_init_rd_atom;
	attr->max_res_rd_atom = min_t(u64, (u64)a->max_qp * a->max_qp_rd_atom,
				      INT_MAX);
	attr->max_srq = a->max_srq;
	attr->max_srq_wr = a->max_srq_wr;
	attr->max_srq_sge = a->max_srq_sge;
	attr->max_ah = a->max_ah;
	attr->max_mcast_grp = a->max_mcast_grp;
	attr->max_mcast_qp_attach = a->max_mcast_qp_attach;
	attr->max_total_mcast_qp_attach =
		min_t(u64, (u64)a->max_mcast_grp * a->max_mcast_qp_attach,
		      INT_MAX);
	attr->max_pkeys = a->max_pkeys;
	attr->local_ca_ack_delay = a->local_ca_ack_delay;
	attr->max_fast_reg_page_list_len = a->max_fast_reg_page_list_len;
	attr->max_dm_size = dev->dm.size;
	return 0;
}

int vrnic_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct vrnic_dev *dev = to_vdev(ibdev);
	struct vrnic_port_attrs pa;

	/* A dead device still answers, with the port down. */
	if (vrnic_dead(dev) || vrnic_cmd_query_port(dev, &pa)) {
		pa = dev->port;
		pa.state = IB_PORT_DOWN;
		pa.phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	attr->state = pa.state;
	attr->phys_state = pa.phys_state;
	attr->max_mtu = pa.max_mtu;
	attr->active_mtu = pa.active_mtu;
	attr->phys_mtu = pa.netdev_mtu;
	attr->gid_tbl_len = pa.gid_tbl_len;
	attr->pkey_tbl_len = pa.pkey_tbl_len;
	attr->max_msg_sz = pa.max_msg_sz;
	attr->active_speed = pa.active_speed;
	attr->active_width = pa.active_width;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->ip_gids = true;
	attr->max_vl_num = 1;
	return 0;
}

int vrnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

int vrnic_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable)
{
	struct vrnic_dev *dev = to_vdev(ibdev);

	immutable->pkey_tbl_len = dev->port.pkey_tbl_len;
	immutable->gid_tbl_len = dev->port.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	/* RoCEv1 GIDs beside the v2 ones, as mlx5 has them */
	if (dev->attrs.dev_caps & VRNIC_DEV_CAP_ROCE_V1)
		immutable->core_cap_flags |= RDMA_CORE_PORT_IBA_ROCE;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

enum rdma_link_layer vrnic_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

void vrnic_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	u64 fw = to_vdev(ibdev)->attrs.fw_version;

	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u",
		 (u32)(fw >> 48), (u32)(fw >> 32) & 0xffff, (u32)fw);
}

int vrnic_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct vrnic_dev *dev = to_vdev(attr->device);
	u8 mac[ETH_ALEN];
	u16 vlan_id;
	u32 type;
	int err;

	if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP)
		type = VRNIC_GID_TYPE_ROCE_V2;
	else if (attr->gid_type == IB_GID_TYPE_ROCE &&
		 (dev->attrs.dev_caps & VRNIC_DEV_CAP_ROCE_V1))
		type = VRNIC_GID_TYPE_ROCE_V1;
	else
		return -EINVAL;
	err = rdma_read_gid_l2_fields(attr, &vlan_id, mac);
	if (err)
		return err;
	return vrnic_cmd_set_gid(dev, attr->index, attr->gid.raw, type, vlan_id,
				 mac);
}

int vrnic_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct vrnic_dev *dev = to_vdev(attr->device);

	if (vrnic_dead(dev))
		return 0;
	return vrnic_cmd_clear_gid(dev, attr->index);
}

static struct rdma_user_mmap_entry *
vrnic_mmap_entry_insert(struct vrnic_ucontext *uctx, phys_addr_t address,
			enum vrnic_mmap_type type)
{
	struct vrnic_user_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return NULL;
	entry->address = address;
	entry->type = type;
	err = rdma_user_mmap_entry_insert(&uctx->ibucontext, &entry->rdma_entry,
					  PAGE_SIZE);
	if (err) {
		kfree(entry);
		return NULL;
	}
	return &entry->rdma_entry;
}

/* The provider's request: nothing asked for that this driver lacks. */
static int vrnic_uctx_req_check(struct ib_udata *udata)
{
	struct vrnic_alloc_ucontext_req req = {};
	int err;

	if (!udata->inlen)
		return 0;
	err = ib_copy_from_udata(&req, udata, min(sizeof(req), udata->inlen));
	if (err)
		return err;
	if (req.comp_mask || req.rsvd ||
	    (udata->inlen > sizeof(req) &&
	     !ib_is_udata_cleared(udata, sizeof(req),
				  udata->inlen - sizeof(req))))
		return -EOPNOTSUPP;
	return 0;
}

/* What the device executes that the provider must know of. */
static u32 vrnic_uctx_op_flags(const struct vrnic_dev *dev)
{
	u32 flags = 0;

	if (dev->attrs.dev_caps & VRNIC_DEV_CAP_ATOMIC_WRITE)
		flags |= VRNIC_UCTX_F_ATOMIC_WRITE;
	if (VRNIC_DEVICE_FLUSH_GLOBAL &&
	    (dev->attrs.dev_caps & VRNIC_DEV_CAP_FLUSH_GLOBAL))
		flags |= VRNIC_UCTX_F_FLUSH;
	return flags;
}

/* What the provider learns of a context (alloc_ucontext, import). */
void vrnic_uctx_resp(struct vrnic_ucontext *uctx,
		     struct vrnic_alloc_ucontext_resp *resp)
{
	struct vrnic_dev *dev = to_vdev(uctx->ibucontext.device);

	memset(resp, 0, sizeof(*resp));
	resp->status_mmap_key = rdma_user_mmap_get_offset(uctx->status_entry);
	if (uctx->db_entry) {
		resp->db_mmap_key = rdma_user_mmap_get_offset(uctx->db_entry);
		resp->flags |= VRNIC_UCTX_F_USER_DB;
	}
	resp->flags |= vrnic_uctx_op_flags(dev);
	resp->db_offset = VRNIC_IVSHMEM_DOORBELL;
	resp->db_peer = dev->db_peer;
	resp->max_inline_data = dev->attrs.max_inline_data;
}

int vrnic_alloc_ucontext(struct ib_ucontext *ibuctx, struct ib_udata *udata)
{
	struct vrnic_ucontext *uctx = to_vuctx(ibuctx);
	struct vrnic_dev *dev = to_vdev(ibuctx->device);
	struct vrnic_alloc_ucontext_resp resp;
	int err;

	if (vrnic_dead(dev))
		return -EIO;
	err = vrnic_uctx_req_check(udata);
	if (err)
		return err;

	uctx->status_entry =
		vrnic_mmap_entry_insert(uctx,
					pci_resource_start(dev->pdev, VRNIC_BAR_SHMEM) +
					VRNIC_BAR2_STATUS_PAGE,
					VRNIC_MMAP_IO_RO);
	if (!uctx->status_entry)
		return -ENOMEM;

	if (dev->user_db) {
		uctx->db_entry =
			vrnic_mmap_entry_insert(uctx,
						pci_resource_start(dev->pdev,
								   VRNIC_BAR_REGS),
						VRNIC_MMAP_IO_NC);
		if (!uctx->db_entry) {
			err = -ENOMEM;
			goto err_remove;
		}
	}
	vrnic_uctx_resp(uctx, &resp);
	err = ib_copy_to_udata(udata, &resp, min(sizeof(resp), udata->outlen));
	if (err)
		goto err_remove;
	return 0;

err_remove:
	if (uctx->db_entry)
		rdma_user_mmap_entry_remove(uctx->db_entry);
	rdma_user_mmap_entry_remove(uctx->status_entry);
	return err;
}

void vrnic_dealloc_ucontext(struct ib_ucontext *ibuctx)
{
	struct vrnic_ucontext *uctx = to_vuctx(ibuctx);

	if (uctx->db_entry)
		rdma_user_mmap_entry_remove(uctx->db_entry);
	rdma_user_mmap_entry_remove(uctx->status_entry);
}

/*
 * The device is going away while the context is open.  ib_core zaps the
 * context's mappings and destroys its objects itself; nothing in vrnic
 * outlives that, so there is nothing more to do here.
 */
void vrnic_disassociate_ucontext(struct ib_ucontext *ibuctx)
{
}

int vrnic_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct vrnic_user_mmap_entry *entry;
	pgprot_t prot = pgprot_noncached(vma->vm_page_prot);
	int err;

	rdma_entry = rdma_user_mmap_entry_get(ibuctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = to_vmmap(rdma_entry);

	switch (entry->type) {
	case VRNIC_MMAP_QBUF:
		/* The mapping takes page references: the pages stay until it
		 * goes, whatever happens to the queue.
		 */
		err = remap_vmalloc_range(vma, entry->vaddr, 0);
		break;
	case VRNIC_MMAP_IO_RO:
		if (vma->vm_flags & VM_WRITE) {
			err = -EPERM;
			break;
		}
		vrnic_vma_clear_flags(vma, VM_MAYWRITE);
		fallthrough;
	case VRNIC_MMAP_IO_NC:
		err = rdma_user_mmap_io(ibuctx, vma, PHYS_PFN(entry->address),
					rdma_entry->npages * PAGE_SIZE, prot,
					rdma_entry);
		break;
	case VRNIC_MMAP_DM:
		err = rdma_user_mmap_io(ibuctx, vma, PHYS_PFN(entry->address),
					rdma_entry->npages * PAGE_SIZE,
					pgprot_writecombine(vma->vm_page_prot),
					rdma_entry);
		break;
	default:
		err = -EINVAL;
	}
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

void vrnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct vrnic_user_mmap_entry *entry = to_vmmap(rdma_entry);

	/* No process maps the device memory any more: it is free. */
	if (entry->type == VRNIC_MMAP_DM)
		vrnic_dm_release(to_vdev(rdma_entry->ucontext->device),
				 entry->dm_page, rdma_entry->npages);
	kfree(entry);
}

/* Offer a queue buffer to the process at *key. */
struct rdma_user_mmap_entry *vrnic_mmap_qbuf(struct ib_ucontext *ibuctx,
					     struct vrnic_qbuf *qb, u64 *key)
{
	struct vrnic_user_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return NULL;
	entry->vaddr = qb->buf;
	entry->type = VRNIC_MMAP_QBUF;
	err = rdma_user_mmap_entry_insert(ibuctx, &entry->rdma_entry,
					  (size_t)qb->npages << PAGE_SHIFT);
	if (err) {
		kfree(entry);
		return NULL;
	}
	*key = rdma_user_mmap_get_offset(&entry->rdma_entry);
	return &entry->rdma_entry;
}

/*
 * A resize's new queue buffer of npages, mapped for udata's context, its
 * mmap key in *key.  vrnic_qbuf_drop_new() undoes it when the device does
 * not take it; vrnic_qbuf_replace() puts it in the old one's place once
 * the device has moved to it.
 */
int vrnic_qbuf_new_user(struct vrnic_dev *dev, struct ib_udata *udata,
			u32 npages, struct vrnic_qbuf *qb,
			struct rdma_user_mmap_entry **entry, u64 *key)
{
	int err;

	err = vrnic_qbuf_alloc(dev, qb, npages);
	if (err)
		return err;
	*entry = vrnic_mmap_qbuf(vrnic_udata_ucontext(udata), qb, key);
	if (*entry)
		return 0;
	vrnic_reclaim_qbuf(dev, qb, vrnic_lend_failed(dev, -ENOMEM));
	return -ENOMEM;
}

/* The device refused the new buffer (err): it never had it. */
void vrnic_qbuf_drop_new(struct vrnic_dev *dev, struct vrnic_qbuf *qb,
			 struct rdma_user_mmap_entry *entry, int err)
{
	rdma_user_mmap_entry_remove(entry);
	vrnic_reclaim_qbuf(dev, qb, vrnic_lend_failed(dev, err));
}

/* The device moved to the new buffer: the old one is back. */
void vrnic_qbuf_replace(struct vrnic_dev *dev, struct vrnic_qbuf *qb,
			struct rdma_user_mmap_entry **entry,
			const struct vrnic_qbuf *new_qb,
			struct rdma_user_mmap_entry *new_entry)
{
	rdma_user_mmap_entry_remove(*entry);
	vrnic_qbuf_free(dev, qb);
	*qb = *new_qb;
	*entry = new_entry;
}

int vrnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);
	struct vrnic_alloc_pd_resp resp = {};
	struct vrnic_pd *pd = to_vpd(ibpd);
	int err;

	err = vrnic_cmd_create_pd(dev, &pd->pdn);
	if (err)
		return err;
	if (udata && udata->outlen) {
		resp.pdn = pd->pdn;
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err) {
			vrnic_cmd_destroy_pd(dev, pd->pdn);
			return err;
		}
	}
	return 0;
}

int vrnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vrnic_dev *dev = to_vdev(ibpd->device);
	int err = vrnic_cmd_destroy_pd(dev, to_vpd(ibpd)->pdn);

	/* A dead device has no PD left to destroy. */
	if (err && !vrnic_dead(dev))
		ibdev_warn(&dev->ibdev, "DESTROY_PD %u failed: %d\n",
			   to_vpd(ibpd)->pdn, err);
	return 0;
}

int vrnic_fill_av(const struct rdma_ah_attr *ah, struct vrnic_av *av)
{
	const struct ib_global_route *grh;
	u16 vlan_id = 0xffff;
	int err;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (!grh->sgid_attr || grh->sgid_attr->index > U8_MAX)
		return -EINVAL;
	err = rdma_read_gid_l2_fields(grh->sgid_attr, &vlan_id, NULL);
	if (err)
		return err;
	memset(av, 0, sizeof(*av));
	memcpy(av->dgid, grh->dgid.raw, sizeof(av->dgid));
	ether_addr_copy(av->dmac, ah->roce.dmac);
	av->sgid_index = grh->sgid_attr->index;
	av->hop_limit = grh->hop_limit;
	av->flow_label = cpu_to_le32(grh->flow_label);
	av->traffic_class = grh->traffic_class;
	av->vlan_id = cpu_to_le16(vlan_id < VLAN_N_VID ? vlan_id : 0xffff);
	return 0;
}

/* Address handles need no device object: UD WQEs carry the address. */
int vrnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct vrnic_create_ah_resp resp = {};
	struct vrnic_ah *ah = to_vah(ibah);
	int err;

	err = vrnic_fill_av(init->ah_attr, &ah->av);
	if (err)
		return err;
	if (udata && udata->outlen) {
		resp.av = ah->av;
		return ib_copy_to_udata(udata, &resp,
					min(sizeof(resp), udata->outlen));
	}
	return 0;
}

int vrnic_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}

/* The address a UD WQE to ibah carries (vrnic_wqe.c). */
const struct vrnic_av *vrnic_ah_av(struct ib_ah *ibah)
{
	return &to_vah(ibah)->av;
}

static const struct rdma_stat_desc vrnic_stat_descs[] = {
	[VRNIC_STAT_TX_PACKETS].name = "tx_packets",
	[VRNIC_STAT_TX_BYTES].name = "tx_bytes",
	[VRNIC_STAT_RX_PACKETS].name = "rx_packets",
	[VRNIC_STAT_RX_BYTES].name = "rx_bytes",
	[VRNIC_STAT_RX_DROPPED].name = "rx_dropped",
	[VRNIC_STAT_ICRC_ERRORS].name = "rx_icrc_errors",
	[VRNIC_STAT_RETRANSMITS].name = "retransmits",
	[VRNIC_STAT_RNR_NAKS_SENT].name = "rnr_naks_sent",
	[VRNIC_STAT_RNR_NAKS_RCVD].name = "rnr_naks_received",
	[VRNIC_STAT_SEQ_NAKS_SENT].name = "seq_naks_sent",
	[VRNIC_STAT_SEQ_NAKS_RCVD].name = "seq_naks_received",
	[VRNIC_STAT_DUPLICATES].name = "duplicates",
	[VRNIC_STAT_DOORBELLS].name = "doorbells",
	[VRNIC_STAT_ENGINE_SLEEPS].name = "engine_sleeps",
	[VRNIC_STAT_WQES].name = "send_wqes",
	[VRNIC_STAT_CQES].name = "cqes",
	[VRNIC_STAT_PDS].name = "objects_pd",
	[VRNIC_STAT_MRS].name = "objects_mr",
	[VRNIC_STAT_CQS].name = "objects_cq",
	[VRNIC_STAT_QPS].name = "objects_qp",
	[VRNIC_STAT_SRQS].name = "objects_srq",
	[VRNIC_STAT_MR_PAGES].name = "mr_pages",
	[VRNIC_STAT_RX_ADDR_ERRORS].name = "rx_addr_errors",
	[VRNIC_STAT_RX_KEY_ERRORS].name = "rx_key_errors",
	[VRNIC_STAT_RX_QKEY_ERRORS].name = "rx_qkey_errors",
	[VRNIC_STAT_RX_PKEY_ERRORS].name = "rx_pkey_errors",
	[VRNIC_STAT_RX_INVALID].name = "rx_invalid_requests",
	[VRNIC_STAT_RX_NO_BUFFER].name = "rx_no_buffer",
	[VRNIC_STAT_TX_ACKS_DROPPED].name = "tx_acks_dropped",
};

struct rdma_hw_stats *vrnic_alloc_hw_port_stats(struct ib_device *ibdev, u32 port)
{
	BUILD_BUG_ON(ARRAY_SIZE(vrnic_stat_descs) != VRNIC_STAT_MAX);
	return rdma_alloc_hw_stats_struct(vrnic_stat_descs, VRNIC_STAT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int vrnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct vrnic_stats *s;
	int err, i;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	err = vrnic_cmd_query_stats(to_vdev(ibdev), s);
	if (!err) {
		for (i = 0; i < VRNIC_STAT_MAX && i < stats->num_counters; i++)
			stats->value[i] = le64_to_cpu(s->counter[i]);
	}
	kfree(s);
	return err ? err : VRNIC_STAT_MAX;
}

/*
 * Per-QP counters ("rdma statistic qp"): an rdma_counter is a device
 * counter set, allocated when its first QP is bound; the QPs bound to it
 * count into it from then on.
 */
static const u8 vrnic_qp_stat_index[] = {
	VRNIC_STAT_TX_PACKETS, VRNIC_STAT_TX_BYTES, VRNIC_STAT_RX_PACKETS,
	VRNIC_STAT_RX_BYTES, VRNIC_STAT_RETRANSMITS, VRNIC_STAT_RNR_NAKS_SENT,
	VRNIC_STAT_RNR_NAKS_RCVD, VRNIC_STAT_SEQ_NAKS_SENT, VRNIC_STAT_SEQ_NAKS_RCVD,
	VRNIC_STAT_DUPLICATES, VRNIC_STAT_WQES,
};

static const struct rdma_stat_desc vrnic_qp_stat_descs[] = {
	{ .name = "tx_packets" }, { .name = "tx_bytes" }, { .name = "rx_packets" },
	{ .name = "rx_bytes" }, { .name = "retransmits" }, { .name = "rnr_naks_sent" },
	{ .name = "rnr_naks_received" }, { .name = "seq_naks_sent" },
	{ .name = "seq_naks_received" }, { .name = "duplicates" }, { .name = "send_wqes" },
};

struct rdma_hw_stats *vrnic_counter_alloc_stats(struct rdma_counter *counter)
{
	BUILD_BUG_ON(ARRAY_SIZE(vrnic_qp_stat_descs) != ARRAY_SIZE(vrnic_qp_stat_index));
	return rdma_alloc_hw_stats_struct(vrnic_qp_stat_descs, ARRAY_SIZE(vrnic_qp_stat_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int vrnic_counter_update_stats(struct rdma_counter *counter)
{
	struct vrnic_stats *s;
	int err, i;

	if (!counter->id)
		return 0;	/* no QP was ever bound */
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	err = vrnic_cmd_query_counter(to_vdev(counter->device), counter->id, s);
	for (i = 0; !err && i < ARRAY_SIZE(vrnic_qp_stat_index); i++)
		counter->stats->value[i] = le64_to_cpu(s->counter[vrnic_qp_stat_index[i]]);
	kfree(s);
	return err;
}

int vrnic_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *qp)
{
	struct vrnic_dev *dev = to_vdev(qp->device);
	u32 id = counter->id;
	int err;

	if (!id) {
		err = vrnic_cmd_counter(dev, VRNIC_AQ_OP_ALLOC_COUNTER, &id, 0);
		if (err)
			return err;
	}
	err = vrnic_cmd_counter(dev, VRNIC_AQ_OP_SET_QP_COUNTER, &id, to_vqp(qp)->qpn);
	if (err) {
		if (!counter->id)
			vrnic_cmd_counter(dev, VRNIC_AQ_OP_DEALLOC_COUNTER, &id, 0);
		return err;
	}
	counter->id = id;
	qp->counter = counter;	/* the driver's to set, as in mlx5 */
	return 0;
}

int vrnic_counter_unbind_qp(struct ib_qp *qp)
{
	struct vrnic_dev *dev = to_vdev(qp->device);
	u32 none = 0;
	int err;

	err = vrnic_cmd_counter(dev, VRNIC_AQ_OP_SET_QP_COUNTER, &none, to_vqp(qp)->qpn);
	if (err && !vrnic_dead(dev))
		return err;
	qp->counter = NULL;
	return 0;
}

int vrnic_counter_dealloc(struct rdma_counter *counter)
{
	struct vrnic_dev *dev = to_vdev(counter->device);
	u32 id = counter->id;
	int err;

	if (!id)
		return 0;
	err = vrnic_cmd_counter(dev, VRNIC_AQ_OP_DEALLOC_COUNTER, &id, 0);
	return err && !vrnic_dead(dev) ? err : 0;
}

static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", VRNIC_DRV_NAME);
}
static DEVICE_ATTR_RO(hca_type);

static ssize_t hw_rev_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct vrnic_dev *dev =
		rdma_device_to_drv_device(device, struct vrnic_dev, ibdev);

	return sysfs_emit(buf, "%u\n", dev->attrs.hw_version);
}
static DEVICE_ATTR_RO(hw_rev);

static ssize_t board_id_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	struct vrnic_dev *dev =
		rdma_device_to_drv_device(device, struct vrnic_dev, ibdev);

	return sysfs_emit(buf, "VRNIC-%04x-%04x\n", dev->attrs.vendor_id,
			  dev->attrs.vendor_part_id);
}
static DEVICE_ATTR_RO(board_id);

static struct attribute *vrnic_attributes[] = {
	&dev_attr_hw_rev.attr,
	&dev_attr_hca_type.attr,
	&dev_attr_board_id.attr,
	NULL
};

const struct attribute_group vrnic_attr_group = {
	.attrs = vrnic_attributes,
};
