// SPDX-License-Identifier: GPL-2.0
/*
 * Typed admin commands: build the wire format from parameters, run it, and
 * turn the device's answer into CPU-order results.
 */

#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/sizes.h>

#include "vrnic.h"

static void vrnic_cmd_init(union vrnic_aq_cmd *cmd, u16 opcode, u32 flags)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->hdr.opcode = cpu_to_le16(opcode);
	cmd->hdr.flags = cpu_to_le32(flags);
}

/*
 * Run a command that writes a response into a DMA buffer of @len bytes and
 * copy the response to @out.  Fails unless the device wrote all of it.
 */
static int vrnic_cmd_with_resp(struct vrnic_dev *dev, union vrnic_aq_cmd *cmd,
			       struct vrnic_aq_resp_buf *rb, void *out,
			       size_t len)
{
	struct device *dmadev = &dev->pdev->dev;
	struct vrnic_aq_cqe cqe;
	dma_addr_t dma;
	void *buf;
	int err;

	buf = dma_alloc_coherent(dmadev, len, &dma, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	rb->addr = cpu_to_le64(dma);
	rb->len = cpu_to_le32(len);
	err = vrnic_cmdq_exec(&dev->cmdq, cmd, &cqe);
	if (!err && le32_to_cpu(cqe.result2) != len) {
		ibdev_err(&dev->ibdev, "%s returned %u of %zu bytes\n",
			  vrnic_cmd_str(le16_to_cpu(cmd->hdr.opcode)),
			  le32_to_cpu(cqe.result2), len);
		err = -EIO;
	}
	if (!err)
		memcpy(out, buf, len);
	/* A device that died on the command may still write the buffer. */
	vrnic_reclaim_coherent(dev, len, buf, dma, vrnic_lend_failed(dev, err));
	return err;
}

int vrnic_cmd_nop_event(struct vrnic_dev *dev, u32 eqn, u32 cookie)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_NOP, VRNIC_AQ_NOP_F_EVENT);
	cmd.nop.eqn = cpu_to_le32(eqn);
	cmd.nop.cookie = cpu_to_le32(cookie);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

/* Device limits land in int fields of struct ib_device_attr. */
static u32 vrnic_attr_int(__le32 v)
{
	return min_t(u32, le32_to_cpu(v), INT_MAX);
}

/*
 * The ranges that come with the capabilities that have them; true if the
 * device reported nonsense.
 */
static bool vrnic_cmd_cap_ranges(struct vrnic_dev *dev,
				 const struct vrnic_device_attr *da,
				 struct vrnic_dev_attrs *a)
{
	a->rate_limit_min = le32_to_cpu(da->rate_limit_min);
	a->rate_limit_max = le32_to_cpu(da->rate_limit_max);
	a->dm_offset = le32_to_cpu(da->dm_offset);
	a->dm_size = le32_to_cpu(da->dm_size);
	if ((a->dev_caps & VRNIC_DEV_CAP_RATE_LIMIT) &&
	    (!a->rate_limit_min || a->rate_limit_min > a->rate_limit_max)) {
		ibdev_err(&dev->ibdev, "device reported invalid rate limits %u to %u kbit/s\n",
			  a->rate_limit_min, a->rate_limit_max);
		return true;
	}
	if ((a->dev_caps & VRNIC_DEV_CAP_DM) &&
	    (!a->dm_size || !IS_ALIGNED(a->dm_offset, SZ_4K) ||
	     !IS_ALIGNED(a->dm_size, SZ_4K))) {
		ibdev_err(&dev->ibdev, "device reported invalid device memory at %#x, %#x bytes\n",
			  a->dm_offset, a->dm_size);
		return true;
	}
	return false;
}

int vrnic_cmd_query_device(struct vrnic_dev *dev, struct vrnic_dev_attrs *a)
{
	struct vrnic_device_attr da;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_QUERY_DEVICE, 0);
	err = vrnic_cmd_with_resp(dev, &cmd, &cmd.query_device.resp, &da,
				  sizeof(da));
	if (err)
		return err;

	a->fw_version = le64_to_cpu(da.fw_version);
	a->node_guid = le64_to_cpu(da.node_guid);
	a->sys_image_guid = le64_to_cpu(da.sys_image_guid);
	a->max_mr_size = le64_to_cpu(da.max_mr_size);
	a->page_size_cap = le64_to_cpu(da.page_size_cap);
	a->vendor_id = le32_to_cpu(da.vendor_id);
	a->vendor_part_id = le32_to_cpu(da.vendor_part_id);
	a->hw_version = le32_to_cpu(da.hw_version);
	a->dev_caps = le32_to_cpu(da.dev_caps);
	a->max_qp = vrnic_attr_int(da.max_qp);
	a->max_qp_wr = vrnic_attr_int(da.max_qp_wr);
	a->max_send_sge = vrnic_attr_int(da.max_send_sge);
	a->max_recv_sge = vrnic_attr_int(da.max_recv_sge);
	a->max_sge_rd = vrnic_attr_int(da.max_sge_rd);
	a->max_cq = vrnic_attr_int(da.max_cq);
	a->max_cqe = vrnic_attr_int(da.max_cqe);
	a->max_mr = vrnic_attr_int(da.max_mr);
	a->max_pd = vrnic_attr_int(da.max_pd);
	a->max_qp_rd_atom = vrnic_attr_int(da.max_qp_rd_atom);
	a->max_qp_init_rd_atom = vrnic_attr_int(da.max_qp_init_rd_atom);
	a->max_srq = vrnic_attr_int(da.max_srq);
	a->max_srq_wr = vrnic_attr_int(da.max_srq_wr);
	a->max_srq_sge = vrnic_attr_int(da.max_srq_sge);
	a->max_ah = vrnic_attr_int(da.max_ah);
	a->max_inline_data = vrnic_attr_int(da.max_inline_data);
	a->max_mcast_grp = vrnic_attr_int(da.max_mcast_grp);
	a->max_mcast_qp_attach = vrnic_attr_int(da.max_mcast_qp_attach);
	a->max_pkeys = min_t(u32, le32_to_cpu(da.max_pkeys), U16_MAX);
	a->max_eq = vrnic_attr_int(da.max_eq);
	a->max_fast_reg_page_list_len =
		vrnic_attr_int(da.max_fast_reg_page_list_len);
	a->max_mw = vrnic_attr_int(da.max_mw);
	a->local_ca_ack_delay = min_t(u32, le32_to_cpu(da.local_ca_ack_delay),
				      U8_MAX);
	ether_addr_copy(a->mac, da.mac);

	if (vrnic_cmd_cap_ranges(dev, &da, a))
		return -EIO;
	if (!is_valid_ether_addr(a->mac) || a->max_eq < 2 || !a->max_pkeys) {
		ibdev_err(&dev->ibdev,
			  "device reported invalid attributes (mac %pM, max_eq %u, max_pkeys %u)\n",
			  a->mac, a->max_eq, a->max_pkeys);
		return -EIO;
	}
	return 0;
}

int vrnic_cmd_query_port(struct vrnic_dev *dev, struct vrnic_port_attrs *pa)
{
	struct vrnic_port_attr a;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_QUERY_PORT, 0);
	cmd.query_port.port = cpu_to_le32(1);
	err = vrnic_cmd_with_resp(dev, &cmd, &cmd.query_port.resp, &a,
				  sizeof(a));
	if (err)
		return err;

	if (a.state < IB_PORT_DOWN || a.state > IB_PORT_ACTIVE_DEFER ||
	    a.active_mtu < IB_MTU_256 || a.active_mtu > IB_MTU_4096 ||
	    a.max_mtu < IB_MTU_256 || a.max_mtu > IB_MTU_4096 ||
	    !le16_to_cpu(a.gid_tbl_len) || !le16_to_cpu(a.pkey_tbl_len)) {
		ibdev_err(&dev->ibdev, "device reported invalid port attributes\n");
		return -EIO;
	}
	pa->state = a.state;
	pa->phys_state = a.phys_state;
	pa->active_mtu = a.active_mtu;
	pa->max_mtu = a.max_mtu;
	pa->active_speed = a.active_speed;
	pa->active_width = a.active_width;
	pa->gid_tbl_len = le16_to_cpu(a.gid_tbl_len);
	pa->pkey_tbl_len = le16_to_cpu(a.pkey_tbl_len);
	pa->max_msg_sz = le32_to_cpu(a.max_msg_sz);
	pa->netdev_mtu = le32_to_cpu(a.netdev_mtu);
	ether_addr_copy(pa->mac, a.mac);
	return 0;
}

int vrnic_cmd_modify_port(struct vrnic_dev *dev, u32 netdev_state, u32 mtu,
			  const u8 *mac)
{
	u32 flags = VRNIC_AQ_MODIFY_PORT_F_NETDEV;
	union vrnic_aq_cmd cmd;

	if (mtu)
		flags |= VRNIC_AQ_MODIFY_PORT_F_MTU;
	if (mac)
		flags |= VRNIC_AQ_MODIFY_PORT_F_MAC;
	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_MODIFY_PORT, flags);
	cmd.modify_port.port = cpu_to_le32(1);
	cmd.modify_port.netdev_state = cpu_to_le32(netdev_state);
	cmd.modify_port.netdev_mtu = cpu_to_le32(mtu);
	if (mac)
		ether_addr_copy(cmd.modify_port.mac, mac);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

int vrnic_cmd_set_gid(struct vrnic_dev *dev, u32 index, const u8 *gid,
		      u32 type, u16 vlan_id, const u8 *mac)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_SET_GID, VRNIC_AQ_SET_GID_F_VALID);
	cmd.set_gid.port = cpu_to_le32(1);
	cmd.set_gid.index = cpu_to_le32(index);
	memcpy(cmd.set_gid.gid, gid, sizeof(cmd.set_gid.gid));
	cmd.set_gid.type = cpu_to_le32(type);
	cmd.set_gid.vlan_id = cpu_to_le16(vlan_id);
	ether_addr_copy(cmd.set_gid.mac, mac);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

int vrnic_cmd_clear_gid(struct vrnic_dev *dev, u32 index)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_SET_GID, 0);
	cmd.set_gid.port = cpu_to_le32(1);
	cmd.set_gid.index = cpu_to_le32(index);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

int vrnic_cmd_create_eq(struct vrnic_dev *dev, struct vrnic_eq *eq)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_CREATE_EQ, 0);
	cmd.create_eq.ring_addr = cpu_to_le64(eq->ring_dma);
	cmd.create_eq.dbrec_addr = cpu_to_le64(eq->dbrec_dma);
	cmd.create_eq.eqn = cpu_to_le32(eq->eqn);
	cmd.create_eq.vector = cpu_to_le32(eq->vector);
	cmd.create_eq.log_depth = cpu_to_le32(eq->log_depth);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

int vrnic_cmd_destroy_eq(struct vrnic_dev *dev, u32 eqn)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_DESTROY_EQ, 0);
	cmd.destroy_eq.eqn = cpu_to_le32(eqn);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

int vrnic_cmd_create_pd(struct vrnic_dev *dev, u32 *pdn)
{
	struct vrnic_aq_cqe cqe;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_CREATE_PD, 0);
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, &cqe);
	if (!err)
		*pdn = lower_32_bits(le64_to_cpu(cqe.result));
	return err;
}

/* Destroy commands share one shape: an object number after the header. */
static int vrnic_cmd_destroy(struct vrnic_dev *dev, u16 opcode, u32 num)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, opcode, 0);
	cmd.destroy_pd.pdn = cpu_to_le32(num);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

int vrnic_cmd_destroy_pd(struct vrnic_dev *dev, u32 pdn)
{
	return vrnic_cmd_destroy(dev, VRNIC_AQ_OP_DESTROY_PD, pdn);
}

int vrnic_cmd_reg_mr(struct vrnic_dev *dev, const struct vrnic_reg_mr_params *p,
		     u32 *key)
{
	struct vrnic_aq_cqe cqe;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_REG_MR,
		       (p->indirect ? VRNIC_AQ_REG_MR_F_INDIRECT : 0) |
		       (p->phys ? VRNIC_AQ_REG_MR_F_PHYS : 0) |
		       (p->dm ? VRNIC_AQ_REG_MR_F_DM : 0));
	cmd.reg_mr.iova = cpu_to_le64(p->iova);
	cmd.reg_mr.length = cpu_to_le64(p->length);
	cmd.reg_mr.pbl_addr = cpu_to_le64(p->pbl_addr);
	cmd.reg_mr.pdn = cpu_to_le32(p->pdn);
	cmd.reg_mr.access = cpu_to_le32(p->access);
	cmd.reg_mr.npages = cpu_to_le32(p->npages);
	cmd.reg_mr.page_shift = cpu_to_le32(p->page_shift);
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, &cqe);
	if (!err)
		*key = lower_32_bits(le64_to_cpu(cqe.result));
	return err;
}

/*
 * REREG_MR of the region key: what @flags (VRNIC_AQ_REREG_MR_F_*) names
 * comes from @p, the translation (F_TRANS), pdn (F_PD) or access
 * (F_ACCESS); the rest stays 0, as the device wants it.
 */
int vrnic_cmd_rereg_mr(struct vrnic_dev *dev, u32 key, u32 flags,
		       const struct vrnic_reg_mr_params *p)
{
	union vrnic_aq_cmd cmd;

	if ((flags & VRNIC_AQ_REREG_MR_F_TRANS) && p->indirect)
		flags |= VRNIC_AQ_REREG_MR_F_INDIRECT;
	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_REREG_MR, flags);
	cmd.rereg_mr.key = cpu_to_le32(key);
	if (flags & VRNIC_AQ_REREG_MR_F_TRANS) {
		cmd.rereg_mr.iova = cpu_to_le64(p->iova);
		cmd.rereg_mr.length = cpu_to_le64(p->length);
		cmd.rereg_mr.pbl_addr = cpu_to_le64(p->pbl_addr);
		cmd.rereg_mr.npages = cpu_to_le32(p->npages);
		cmd.rereg_mr.page_shift = cpu_to_le32(p->page_shift);
	}
	if (flags & VRNIC_AQ_REREG_MR_F_PD)
		cmd.rereg_mr.pdn = cpu_to_le32(p->pdn);
	if (flags & VRNIC_AQ_REREG_MR_F_ACCESS)
		cmd.rereg_mr.access = cpu_to_le32(p->access);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

int vrnic_cmd_dereg_mr(struct vrnic_dev *dev, u32 key)
{
	return vrnic_cmd_destroy(dev, VRNIC_AQ_OP_DEREG_MR, key);
}

int vrnic_cmd_alloc_mw(struct vrnic_dev *dev, u32 pdn, u32 type, u32 *key)
{
	struct vrnic_aq_cqe cqe;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_ALLOC_MW, 0);
	cmd.alloc_mw.pdn = cpu_to_le32(pdn);
	cmd.alloc_mw.type = cpu_to_le32(type);
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, &cqe);
	if (!err)
		*key = lower_32_bits(le64_to_cpu(cqe.result));
	return err;
}

int vrnic_cmd_dealloc_mw(struct vrnic_dev *dev, u32 key)
{
	return vrnic_cmd_destroy(dev, VRNIC_AQ_OP_DEALLOC_MW, key);
}

int vrnic_cmd_alloc_mr(struct vrnic_dev *dev, u32 pdn, u32 max_pages, u32 *key)
{
	struct vrnic_aq_cqe cqe;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_ALLOC_MR, 0);
	cmd.alloc_mr.pdn = cpu_to_le32(pdn);
	cmd.alloc_mr.max_pages = cpu_to_le32(max_pages);
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, &cqe);
	if (!err)
		*key = lower_32_bits(le64_to_cpu(cqe.result));
	return err;
}

static void vrnic_cmd_qbuf(struct vrnic_qbuf_desc *d, const struct vrnic_qbuf *qb)
{
	d->pbl_addr = cpu_to_le64(qb->pbl_dma);
	d->npages = cpu_to_le32(qb->npages);
	d->rsvd = 0;
}

int vrnic_cmd_create_cq(struct vrnic_dev *dev, const struct vrnic_qbuf *qb,
			u32 log_depth, u32 eqn, u32 *cqn)
{
	struct vrnic_aq_cqe cqe;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_CREATE_CQ, 0);
	vrnic_cmd_qbuf(&cmd.create_cq.buf, qb);
	cmd.create_cq.log_depth = cpu_to_le32(log_depth);
	cmd.create_cq.eqn = cpu_to_le32(eqn);
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, &cqe);
	if (!err)
		*cqn = lower_32_bits(le64_to_cpu(cqe.result));
	return err;
}

int vrnic_cmd_destroy_cq(struct vrnic_dev *dev, u32 cqn)
{
	return vrnic_cmd_destroy(dev, VRNIC_AQ_OP_DESTROY_CQ, cqn);
}

int vrnic_cmd_resize_cq(struct vrnic_dev *dev, u32 cqn, const struct vrnic_qbuf *qb,
			u32 log_depth)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_RESIZE_CQ, 0);
	vrnic_cmd_qbuf(&cmd.resize_cq.buf, qb);
	cmd.resize_cq.cqn = cpu_to_le32(cqn);
	cmd.resize_cq.log_depth = cpu_to_le32(log_depth);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

int vrnic_cmd_modify_cq(struct vrnic_dev *dev, u32 cqn, u16 count, u16 period_us)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_MODIFY_CQ, 0);
	cmd.modify_cq.cqn = cpu_to_le32(cqn);
	cmd.modify_cq.count = cpu_to_le32(count);
	cmd.modify_cq.period_us = cpu_to_le32(period_us);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

int vrnic_cmd_create_qp(struct vrnic_dev *dev, const struct vrnic_create_qp_params *p,
			u32 *qpn)
{
	struct vrnic_aq_create_qp *c;
	struct vrnic_aq_cqe cqe;
	union vrnic_aq_cmd cmd;
	u32 flags = 0;
	int err;

	if (p->sq_sig_all)
		flags |= VRNIC_AQ_CREATE_QP_F_SQ_SIG_ALL;
	if (p->has_srq)
		flags |= VRNIC_AQ_CREATE_QP_F_SRQ;
	if (p->gsi)
		flags |= VRNIC_AQ_CREATE_QP_F_GSI;
	if (p->block_self_mcast_lb)
		flags |= VRNIC_AQ_CREATE_QP_F_BLOCK_SELF_MCAST_LB;
	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_CREATE_QP, flags);
	c = &cmd.create_qp;
	vrnic_cmd_qbuf(&c->buf, p->qb);
	c->type = cpu_to_le32(p->type);
	c->pdn = cpu_to_le32(p->pdn);
	c->send_cqn = cpu_to_le32(p->send_cqn);
	c->recv_cqn = cpu_to_le32(p->recv_cqn);
	c->srqn = cpu_to_le32(p->srqn);
	c->sq_log_depth = p->sq_log_depth;
	c->sq_log_stride = p->sq_log_stride;
	c->rq_log_depth = p->rq_log_depth;
	c->rq_log_stride = p->rq_log_stride;
	c->sq_page = cpu_to_le16(p->sq_page);
	c->rq_page = cpu_to_le16(p->rq_page);
	c->max_inline = cpu_to_le32(p->max_inline);
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, &cqe);
	if (!err)
		*qpn = lower_32_bits(le64_to_cpu(cqe.result));
	return err;
}

int vrnic_cmd_modify_qp(struct vrnic_dev *dev, u32 qpn, u32 mask,
			const struct vrnic_qp_attr *attr)
{
	struct device *dmadev = &dev->pdev->dev;
	struct vrnic_qp_attr *buf;
	union vrnic_aq_cmd cmd;
	dma_addr_t dma;
	int err;

	buf = dma_alloc_coherent(dmadev, sizeof(*buf), &dma, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, attr, sizeof(*buf));
	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_MODIFY_QP, 0);
	cmd.modify_qp.qpn = cpu_to_le32(qpn);
	cmd.modify_qp.attr_mask = cpu_to_le32(mask);
	cmd.modify_qp.attr.addr = cpu_to_le64(dma);
	cmd.modify_qp.attr.len = cpu_to_le32(sizeof(*buf));
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
	vrnic_reclaim_coherent(dev, sizeof(*buf), buf, dma,
			       vrnic_lend_failed(dev, err));
	return err;
}

int vrnic_cmd_query_qp(struct vrnic_dev *dev, u32 qpn, struct vrnic_qp_attr *attr)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_QUERY_QP, 0);
	cmd.query_qp.qpn = cpu_to_le32(qpn);
	return vrnic_cmd_with_resp(dev, &cmd, &cmd.query_qp.resp, attr, sizeof(*attr));
}

int vrnic_cmd_destroy_qp(struct vrnic_dev *dev, u32 qpn)
{
	return vrnic_cmd_destroy(dev, VRNIC_AQ_OP_DESTROY_QP, qpn);
}

int vrnic_cmd_mcast(struct vrnic_dev *dev, bool attach, u32 qpn, const union ib_gid *gid)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, attach ? VRNIC_AQ_OP_ATTACH_MCAST : VRNIC_AQ_OP_DETACH_MCAST, 0);
	cmd.mcast.qpn = cpu_to_le32(qpn);
	memcpy(cmd.mcast.gid, gid->raw, sizeof(cmd.mcast.gid));
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

/* ALLOC_COUNTER (*id out), DEALLOC_COUNTER, SET_QP_COUNTER. */
int vrnic_cmd_counter(struct vrnic_dev *dev, u16 opcode, u32 *id, u32 qpn)
{
	struct vrnic_aq_cqe cqe;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, opcode, 0);
	cmd.counter.id = cpu_to_le32(*id);
	cmd.counter.qpn = cpu_to_le32(qpn);
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, &cqe);
	if (!err && opcode == VRNIC_AQ_OP_ALLOC_COUNTER)
		*id = lower_32_bits(le64_to_cpu(cqe.result));
	return err;
}

int vrnic_cmd_query_counter(struct vrnic_dev *dev, u32 id, struct vrnic_stats *stats)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_QUERY_COUNTER, 0);
	cmd.counter.id = cpu_to_le32(id);
	return vrnic_cmd_with_resp(dev, &cmd, &cmd.counter.resp, stats, sizeof(*stats));
}

int vrnic_cmd_create_srq(struct vrnic_dev *dev, const struct vrnic_qbuf *qb, u32 pdn,
			 u8 log_depth, u8 log_stride, u32 limit, u32 *srqn)
{
	struct vrnic_aq_cqe cqe;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_CREATE_SRQ, 0);
	vrnic_cmd_qbuf(&cmd.create_srq.buf, qb);
	cmd.create_srq.pdn = cpu_to_le32(pdn);
	cmd.create_srq.log_depth = log_depth;
	cmd.create_srq.log_stride = log_stride;
	cmd.create_srq.ring_page = cpu_to_le16(1);
	cmd.create_srq.limit = cpu_to_le32(limit);
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, &cqe);
	if (!err)
		*srqn = lower_32_bits(le64_to_cpu(cqe.result));
	return err;
}

int vrnic_cmd_modify_srq(struct vrnic_dev *dev, u32 srqn, u32 limit)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_MODIFY_SRQ, VRNIC_AQ_MODIFY_SRQ_F_LIMIT);
	cmd.modify_srq.srqn = cpu_to_le32(srqn);
	cmd.modify_srq.limit = cpu_to_le32(limit);
	return vrnic_cmdq_exec(&dev->cmdq, &cmd, NULL);
}

int vrnic_cmd_resize_srq(struct vrnic_dev *dev, u32 srqn, const struct vrnic_qbuf *qb,
			 u8 log_depth, u32 *moved)
{
	struct vrnic_aq_cqe cqe;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_RESIZE_SRQ, 0);
	vrnic_cmd_qbuf(&cmd.resize_srq.buf, qb);
	cmd.resize_srq.srqn = cpu_to_le32(srqn);
	cmd.resize_srq.log_depth = log_depth;
	cmd.resize_srq.ring_page = cpu_to_le16(1);
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, &cqe);
	if (!err)
		*moved = lower_32_bits(le64_to_cpu(cqe.result));
	return err;
}

int vrnic_cmd_query_srq(struct vrnic_dev *dev, u32 srqn, u32 *limit)
{
	struct vrnic_aq_cqe cqe;
	union vrnic_aq_cmd cmd;
	int err;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_QUERY_SRQ, 0);
	cmd.query_srq.srqn = cpu_to_le32(srqn);
	err = vrnic_cmdq_exec(&dev->cmdq, &cmd, &cqe);
	if (!err)
		*limit = lower_32_bits(le64_to_cpu(cqe.result));
	return err;
}

int vrnic_cmd_destroy_srq(struct vrnic_dev *dev, u32 srqn)
{
	return vrnic_cmd_destroy(dev, VRNIC_AQ_OP_DESTROY_SRQ, srqn);
}

int vrnic_cmd_query_stats(struct vrnic_dev *dev, struct vrnic_stats *stats)
{
	union vrnic_aq_cmd cmd;

	vrnic_cmd_init(&cmd, VRNIC_AQ_OP_QUERY_STATS, 0);
	return vrnic_cmd_with_resp(dev, &cmd, &cmd.query_stats.resp, stats,
				   sizeof(*stats));
}
