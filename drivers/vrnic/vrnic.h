/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vrnic: driver for the vrnic virtual RDMA NIC.
 *
 * The device is a QEMU ivshmem-doorbell PCI function whose BAR2 is owned by
 * the vrnicd soft device.  See Documentation/hw-spec.rst.
 */
#ifndef VRNIC_H
#define VRNIC_H

#include <linux/bitfield.h>
#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/semaphore.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "vrnic-hw.h"

#define VRNIC_DRV_NAME		"vrnic"

/* Queue sizes the driver asks for (log2 of entries). */
#define VRNIC_AQ_LOG_DEPTH	5
#define VRNIC_AEQ_LOG_DEPTH	8
#define VRNIC_CEQ_LOG_DEPTH	10

/* How long the device gets to answer. */
#define VRNIC_RESET_TIMEOUT_MS		2000
#define VRNIC_ENABLE_TIMEOUT_MS		2000
#define VRNIC_CMD_TIMEOUT_MS		5000
#define VRNIC_IRQ_TEST_TIMEOUT_MS	1000
/* Watchdog: checks without heartbeat progress before declaring death. */
#define VRNIC_WATCHDOG_MS		1000
#define VRNIC_WATCHDOG_MISSES		5
/* Recovery: the longest wait between two resets of a dead device. */
#define VRNIC_RECOVER_MAX_DELAY_MS	10000

struct vrnic_dev;

/* A wait context for one admin command in flight. */
struct vrnic_cmd_ctx {
	struct completion done;
	struct vrnic_aq_cqe cqe;
	u16 cookie;
	bool in_use;
	bool aborted;
};

/* Admin queue: SQ of commands, CQ of completions, both in host memory. */
struct vrnic_cmdq {
	struct vrnic_dev *dev;
	union vrnic_aq_cmd *sq;
	dma_addr_t sq_dma;
	struct vrnic_aq_cqe *cq;
	dma_addr_t cq_dma;
	u32 log_depth;
	u32 sq_pi;		/* protected by sq_lock */
	u32 cq_ci;		/* protected by cq_lock */
	u16 seq;		/* cookie sequence, protected by sq_lock */
	spinlock_t sq_lock;	/* SQ slots, contexts */
	spinlock_t cq_lock;	/* CQ consumption */
	struct vrnic_cmd_ctx *ctx;
	struct semaphore credits;
	bool running;
};

/* An event queue: the async EQ (eqn 0) or a completion EQ. */
struct vrnic_eq {
	struct vrnic_dev *dev;
	struct vrnic_eqe *ring;
	dma_addr_t ring_dma;
	struct vrnic_eq_dbrec *dbrec;	/* NULL for the async EQ */
	dma_addr_t dbrec_dma;
	u32 eqn;
	u32 log_depth;
	u32 ci;
	u32 arm_sn;
	u32 vector;
	int irq;
	bool irq_requested;
	bool created;		/* known to the device */
	atomic_t nop_seen;	/* NOP events received (interrupt test) */
	u32 nop_cookie;
	wait_queue_head_t nop_wait;
	char irq_name[32];
};

/* Device attributes from QUERY_DEVICE, in CPU byte order. */
struct vrnic_dev_attrs {
	u64 fw_version;
	u64 node_guid;
	u64 sys_image_guid;
	u64 max_mr_size;
	u64 page_size_cap;
	u32 vendor_id;
	u32 vendor_part_id;
	u32 hw_version;
	u32 dev_caps;
	u32 max_qp;
	u32 max_qp_wr;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_sge_rd;
	u32 max_cq;
	u32 max_cqe;
	u32 max_mr;
	u32 max_pd;
	u32 max_qp_rd_atom;
	u32 max_qp_init_rd_atom;
	u32 max_srq;
	u32 max_srq_wr;
	u32 max_srq_sge;
	u32 max_ah;
	u32 max_inline_data;
	u32 max_mcast_grp;
	u32 max_mcast_qp_attach;
	u32 max_pkeys;
	u32 max_eq;
	u32 max_fast_reg_page_list_len;
	u32 max_mw;
	u32 local_ca_ack_delay;
	u32 rate_limit_min;	/* kbit/s, VRNIC_DEV_CAP_RATE_LIMIT */
	u32 rate_limit_max;
	u32 dm_offset;		/* BAR2 bytes, VRNIC_DEV_CAP_DM */
	u32 dm_size;
	u8 mac[ETH_ALEN];
};

/* Port attributes from QUERY_PORT, in CPU byte order. */
struct vrnic_port_attrs {
	u8 state;
	u8 phys_state;
	u8 active_mtu;
	u8 max_mtu;
	u8 active_speed;
	u8 active_width;
	u16 gid_tbl_len;
	u16 pkey_tbl_len;
	u32 max_msg_sz;
	u32 netdev_mtu;
	u8 mac[ETH_ALEN];
};

/*
 * A queue buffer: zeroed pages the device reads and writes (CQ, QP and SRQ
 * rings with their doorbell records in page 0), described to the device by
 * a page list, and mapped into the owning process.
 */
struct vrnic_qbuf {
	void *buf;		/* vmalloc_user(), npages * PAGE_SIZE */
	u32 npages;
	dma_addr_t *dma;	/* per page */
	__le64 *pbl;		/* the page list, for the device */
	dma_addr_t pbl_dma;
};

struct vrnic_reg_mr_params {
	u64 iova;
	u64 length;
	dma_addr_t pbl_addr;
	u32 pdn;
	u32 access;		/* VRNIC_ACCESS_* */
	u32 npages;
	u32 page_shift;
	bool indirect;
	bool phys;		/* all guest RAM by GPA: the local DMA key */
	bool dm;		/* device memory; pbl_addr is its offset */
};

struct vrnic_create_qp_params {
	const struct vrnic_qbuf *qb;
	u32 type;		/* enum vrnic_qp_type */
	u32 pdn;
	u32 send_cqn;
	u32 recv_cqn;
	u32 srqn;
	bool has_srq;
	bool sq_sig_all;
	bool gsi;
	bool block_self_mcast_lb;
	u8 sq_log_depth;
	u8 sq_log_stride;
	u8 rq_log_depth;
	u8 rq_log_stride;
	u16 sq_page;
	u16 rq_page;
	u32 max_inline;
};

enum vrnic_dev_flags {
	VRNIC_FLAG_FATAL,		/* device dead: fail everything */
	VRNIC_FLAG_IB_REGISTERED,	/* events may be dispatched */
	VRNIC_FLAG_QUIESCED,		/* reset confirmed: it holds no memory */
	VRNIC_FLAG_REMOVING,		/* no more recovery */
};

/*
 * Device memory (VRNIC_DEV_CAP_DM): a window of BAR2, handed out in pages
 * to alloc_dm.  A page is free again once no process maps it.
 */
struct vrnic_dev_dm {
	spinlock_t lock;		/* used */
	unsigned long *used;		/* a bit per page */
	void __iomem *base;
	phys_addr_t phys;
	u32 offset;			/* in BAR2 */
	u32 size;			/* bytes; 0: none */
};

struct vrnic_dev {
	struct ib_device ibdev;
	struct pci_dev *pdev;
	void __iomem *regs;		/* BAR0: ivshmem registers */
	void __iomem *shm;		/* BAR2: register and status pages */
	u32 db_peer;
	u64 caps;
	bool user_db;			/* BAR0 may be mapped to userspace */
	unsigned long flags;

	struct vrnic_cmdq cmdq;
	struct vrnic_eq aeq;
	struct vrnic_eq *ceqs;
	u32 num_ceqs;
	int num_vectors;

	struct vrnic_dev_attrs attrs;
	struct vrnic_dev_dm dm;
	struct vrnic_port_attrs port;	/* as of probe */
	u8 port_state;			/* last state the device reported */

	/* The paired netdev; protected by RTNL. */
	struct net_device *netdev;
	bool netdev_rescan;
	bool port_stopping;		/* the notifier is going away */
	struct notifier_block netdev_nb;
	struct work_struct port_work;

	/* Objects by device number, for events; entries are RCU-safe. */
	struct xarray cq_xa;
	struct xarray qp_xa;
	struct xarray srq_xa;
	/*
	 * Held from a CREATE command to its xarray entry, and from a DESTROY
	 * command to the entry's removal: the device hands a freed number
	 * out again at once, and it must not reach an xarray that still
	 * holds it.
	 */
	struct mutex obj_xa_lock;

	struct delayed_work watchdog;
	u32 last_heartbeat;
	u32 heartbeat_misses;

	/* After death: reset the device, then probe it again. */
	spinlock_t recover_lock;	/* REMOVING against queueing recovery */
	struct delayed_work recover_work;
	u32 recover_tries;

	/* Memory keys user contexts hold, all together (vrnic_mr.c). */
	atomic_t user_keys;

	/* Memory the device may still hold (vrnic_reclaim.c). */
	spinlock_t lent_lock;
	struct list_head lent;
	u32 lent_count;
};

static inline struct vrnic_dev *to_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vrnic_dev, ibdev);
}

static inline u32 vrnic_reg_read(struct vrnic_dev *dev, u32 off)
{
	return readl(dev->shm + VRNIC_BAR2_REG_PAGE + off);
}

static inline void vrnic_reg_write(struct vrnic_dev *dev, u32 off, u32 val)
{
	writel(val, dev->shm + VRNIC_BAR2_REG_PAGE + off);
}

static inline void vrnic_reg_write64(struct vrnic_dev *dev, u32 off, u64 val)
{
	vrnic_reg_write(dev, off, lower_32_bits(val));
	vrnic_reg_write(dev, off + 4, upper_32_bits(val));
}

static inline u32 vrnic_status_read(struct vrnic_dev *dev, u32 off)
{
	return readl(dev->shm + VRNIC_BAR2_STATUS_PAGE + off);
}

/* Ring a doorbell channel of the device. */
static inline void vrnic_ring_db(struct vrnic_dev *dev, u32 channel)
{
	writel(FIELD_PREP(VRNIC_DOORBELL_PEER_MASK, dev->db_peer) |
	       FIELD_PREP(VRNIC_DOORBELL_CHANNEL_MASK, channel),
	       dev->regs + VRNIC_IVSHMEM_DOORBELL);
}

static inline bool vrnic_dead(struct vrnic_dev *dev)
{
	return test_bit(VRNIC_FLAG_FATAL, &dev->flags);
}

/* Ring arithmetic on free-running indices. */
static inline u32 vrnic_ring_slot(u32 idx, u32 log_depth)
{
	return idx & ((1U << log_depth) - 1);
}

static inline u32 vrnic_ring_owner(u32 idx, u32 log_depth)
{
	return ((idx >> log_depth) & 1) ^ 1;
}

/* vrnic_main.c */
void vrnic_dev_fatal(struct vrnic_dev *dev, const char *why);

/* vrnic_reclaim.c */
struct ib_umem;
typedef void (*vrnic_release_fn)(struct vrnic_dev *dev, void *obj);
void vrnic_reclaim(struct vrnic_dev *dev, int err, vrnic_release_fn release,
		   void *obj, size_t len);
void vrnic_reclaim_qbuf(struct vrnic_dev *dev, struct vrnic_qbuf *qb, int err);
void vrnic_reclaim_umem(struct vrnic_dev *dev, struct ib_umem *umem, int err);
void vrnic_reclaim_coherent(struct vrnic_dev *dev, size_t len, void *buf,
			    dma_addr_t dma, int err);
void vrnic_dev_quiesced(struct vrnic_dev *dev);
void vrnic_dev_abandon_lent(struct vrnic_dev *dev);

/*
 * For vrnic_reclaim_*() after a command that would have lent memory failed:
 * a live device that refused it holds nothing; a dead one may.
 */
static inline int vrnic_lend_failed(struct vrnic_dev *dev, int err)
{
	return vrnic_dead(dev) ? err : 0;
}

/* vrnic_cmdq.c */
int vrnic_cmdq_init(struct vrnic_dev *dev);
void vrnic_cmdq_destroy(struct vrnic_dev *dev);
void vrnic_cmdq_complete(struct vrnic_cmdq *cmdq);
void vrnic_cmdq_abort(struct vrnic_cmdq *cmdq);
int vrnic_cmdq_exec(struct vrnic_cmdq *cmdq, union vrnic_aq_cmd *cmd,
		    struct vrnic_aq_cqe *cqe);
const char *vrnic_cmd_str(u32 opcode);

/* vrnic_cmd.c */
int vrnic_cmd_nop_event(struct vrnic_dev *dev, u32 eqn, u32 cookie);
int vrnic_cmd_query_device(struct vrnic_dev *dev,
			   struct vrnic_dev_attrs *attrs);
int vrnic_cmd_query_port(struct vrnic_dev *dev, struct vrnic_port_attrs *pa);
int vrnic_cmd_modify_port(struct vrnic_dev *dev, u32 netdev_state, u32 mtu,
			  const u8 *mac);
int vrnic_cmd_set_gid(struct vrnic_dev *dev, u32 index, const u8 *gid,
		      u32 type, u16 vlan_id, const u8 *mac);
int vrnic_cmd_clear_gid(struct vrnic_dev *dev, u32 index);
int vrnic_cmd_create_eq(struct vrnic_dev *dev, struct vrnic_eq *eq);
int vrnic_cmd_destroy_eq(struct vrnic_dev *dev, u32 eqn);
int vrnic_cmd_create_pd(struct vrnic_dev *dev, u32 *pdn);
int vrnic_cmd_destroy_pd(struct vrnic_dev *dev, u32 pdn);
int vrnic_cmd_reg_mr(struct vrnic_dev *dev, const struct vrnic_reg_mr_params *p,
		     u32 *key);
int vrnic_cmd_rereg_mr(struct vrnic_dev *dev, u32 key, u32 flags,
		       const struct vrnic_reg_mr_params *p);
int vrnic_cmd_dereg_mr(struct vrnic_dev *dev, u32 key);
int vrnic_cmd_alloc_mr(struct vrnic_dev *dev, u32 pdn, u32 max_pages, u32 *key);
int vrnic_cmd_alloc_mw(struct vrnic_dev *dev, u32 pdn, u32 type, u32 *key);
int vrnic_cmd_dealloc_mw(struct vrnic_dev *dev, u32 key);
int vrnic_cmd_create_cq(struct vrnic_dev *dev, const struct vrnic_qbuf *qb,
			u32 log_depth, u32 eqn, u32 *cqn);
int vrnic_cmd_destroy_cq(struct vrnic_dev *dev, u32 cqn);
int vrnic_cmd_resize_cq(struct vrnic_dev *dev, u32 cqn, const struct vrnic_qbuf *qb,
			u32 log_depth);
int vrnic_cmd_modify_cq(struct vrnic_dev *dev, u32 cqn, u16 count, u16 period_us);
int vrnic_cmd_create_qp(struct vrnic_dev *dev, const struct vrnic_create_qp_params *p,
			u32 *qpn);
int vrnic_cmd_modify_qp(struct vrnic_dev *dev, u32 qpn, u32 mask,
			const struct vrnic_qp_attr *attr);
int vrnic_cmd_query_qp(struct vrnic_dev *dev, u32 qpn, struct vrnic_qp_attr *attr);
int vrnic_cmd_destroy_qp(struct vrnic_dev *dev, u32 qpn);
int vrnic_cmd_mcast(struct vrnic_dev *dev, bool attach, u32 qpn, const union ib_gid *gid);
int vrnic_cmd_counter(struct vrnic_dev *dev, u16 opcode, u32 *id, u32 qpn);
int vrnic_cmd_query_counter(struct vrnic_dev *dev, u32 id, struct vrnic_stats *stats);
int vrnic_cmd_create_srq(struct vrnic_dev *dev, const struct vrnic_qbuf *qb, u32 pdn,
			 u8 log_depth, u8 log_stride, u32 limit, u32 *srqn);
int vrnic_cmd_modify_srq(struct vrnic_dev *dev, u32 srqn, u32 limit);
int vrnic_cmd_resize_srq(struct vrnic_dev *dev, u32 srqn, const struct vrnic_qbuf *qb,
			 u8 log_depth, u32 *moved);
int vrnic_cmd_query_srq(struct vrnic_dev *dev, u32 srqn, u32 *limit);
int vrnic_cmd_destroy_srq(struct vrnic_dev *dev, u32 srqn);
int vrnic_cmd_query_stats(struct vrnic_dev *dev, struct vrnic_stats *stats);

/* vrnic_qbuf.c */
int vrnic_qbuf_alloc(struct vrnic_dev *dev, struct vrnic_qbuf *qb, u32 npages);
void vrnic_qbuf_free(struct vrnic_dev *dev, struct vrnic_qbuf *qb);

/* vrnic_eq.c */
int vrnic_aeq_init(struct vrnic_dev *dev);
void vrnic_aeq_destroy(struct vrnic_dev *dev);
irqreturn_t vrnic_ctrl_irq(int irq, void *data);
int vrnic_ceqs_init(struct vrnic_dev *dev);
void vrnic_ceqs_destroy(struct vrnic_dev *dev);
void vrnic_eq_sync(struct vrnic_dev *dev, u32 eqn);

/* vrnic_port.c */
int vrnic_port_init(struct vrnic_dev *dev);
void vrnic_port_uninit(struct vrnic_dev *dev);
void vrnic_port_event(struct vrnic_dev *dev, u32 state, u32 phys_state);

#endif /* VRNIC_H */
