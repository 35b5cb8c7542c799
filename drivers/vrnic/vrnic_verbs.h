/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vrnic verbs: the ib_device_ops the driver implements.
 */
#ifndef VRNIC_VERBS_H
#define VRNIC_VERBS_H

#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "vrnic-abi.h"
#include "vrnic.h"
#include "vrnic_wqe.h"

enum vrnic_mmap_type {
	VRNIC_MMAP_IO_NC,	/* device registers, uncached */
	VRNIC_MMAP_IO_RO,	/* device status page, read-only */
	VRNIC_MMAP_QBUF,	/* a queue buffer (vmalloc memory) */
	VRNIC_MMAP_DM,		/* device memory, write-combined */
};

struct vrnic_user_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	phys_addr_t address;	/* IO, DM */
	void *vaddr;		/* QBUF */
	u32 dm_page;		/* DM: its first page, freed with the entry */
	enum vrnic_mmap_type type;
};

/* An allocation of device memory, dm_page and on in the device's pages. */
struct vrnic_dm {
	struct ib_dm ibdm;
	struct rdma_user_mmap_entry *mmap_entry;
	u32 offset;		/* bytes from the start of device memory */
};

struct vrnic_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

struct vrnic_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct vrnic_ucontext *owner;	/* whose key quota it counts in */
	u32 key;		/* as the device made it (DEREG_MR takes it) */
	int access;		/* user MRs: IB_ACCESS_*, as registered */
	/* Fast-register MRs: the page list a REG_MR WQE points the device at */
	__le64 *pages;
	dma_addr_t pages_dma;
	u32 max_pages;
	u32 npages;
};

struct vrnic_mw {
	struct ib_mw ibmw;
	struct vrnic_ucontext *owner;	/* whose key quota it counts in */
	u32 key;		/* as the device made it */
};

struct vrnic_cq {
	struct ib_cq ibcq;
	u32 cqn;
	u32 log_depth;
	u32 eqn;
	struct vrnic_qbuf qb;
	struct rdma_user_mmap_entry *mmap_entry;	/* user CQs */
	/*
	 * uverbs resizes under a shared lock only: two resizes of one CQ
	 * would free each other's buffers.
	 */
	struct mutex resize_lock;	/* qb, mmap_entry, log_depth */
	/* Kernel CQs: the driver is the consumer. */
	spinlock_t lock;	/* ci, arm_sn */
	u32 ci;
	u32 arm_sn;
};

/* A work ring in a queue buffer, as a kernel QP produces into it. */
struct vrnic_kring {
	void *base;
	u32 pi;
	u8 log_depth;
	u8 log_stride;
};

struct vrnic_qp {
	struct ib_qp ibqp;
	u32 qpn;
	enum ib_qp_state state;
	struct ib_qp_cap cap;
	bool sq_sig_all;
	bool ud;		/* UD or GSI: send WQEs carry an address */
	struct vrnic_qbuf qb;
	struct rdma_user_mmap_entry *mmap_entry;	/* user QPs */
	/* Kernel QPs: the driver is the producer. */
	spinlock_t sq_lock;	/* sq */
	spinlock_t rq_lock;	/* rq */
	struct vrnic_kring sq;
	struct vrnic_kring rq;
};

struct vrnic_srq {
	struct ib_srq ibsrq;
	u32 srqn;
	u32 max_wr;
	u32 max_sge;
	u8 log_stride;
	struct vrnic_qbuf qb;
	struct rdma_user_mmap_entry *mmap_entry;	/* user SRQs */
	struct mutex resize_lock;		/* user SRQs: one resize at a time */
	spinlock_t lock;			/* kernel SRQs: ring */
	struct vrnic_kring ring;
};

struct vrnic_ah {
	struct ib_ah ibah;
	struct vrnic_av av;
};

static inline struct vrnic_pd *to_vpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vrnic_pd, ibpd);
}

static inline struct vrnic_mr *to_vmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct vrnic_mr, ibmr);
}

static inline struct vrnic_mw *to_vmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct vrnic_mw, ibmw);
}

static inline struct vrnic_cq *to_vcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct vrnic_cq, ibcq);
}

static inline struct vrnic_qp *to_vqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct vrnic_qp, ibqp);
}

static inline struct vrnic_srq *to_vsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct vrnic_srq, ibsrq);
}

static inline struct vrnic_dm *to_vdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct vrnic_dm, ibdm);
}

static inline struct vrnic_ah *to_vah(struct ib_ah *ibah)
{
	return container_of(ibah, struct vrnic_ah, ibah);
}

struct vrnic_ucontext {
	struct ib_ucontext ibucontext;
	struct rdma_user_mmap_entry *db_entry;
	struct rdma_user_mmap_entry *status_entry;
	atomic_t keys;		/* MRs and windows it holds (vrnic_mr.c) */
};

static inline struct vrnic_ucontext *to_vuctx(struct ib_ucontext *ibuctx)
{
	return container_of(ibuctx, struct vrnic_ucontext, ibucontext);
}

/* The user context a verb's udata belongs to. */
static inline struct ib_ucontext *vrnic_udata_ucontext(struct ib_udata *udata)
{
	return &rdma_udata_to_drv_context(udata, struct vrnic_ucontext,
					  ibucontext)->ibucontext;
}

static inline struct vrnic_user_mmap_entry *
to_vmmap(struct rdma_user_mmap_entry *rdma_entry)
{
	return container_of(rdma_entry, struct vrnic_user_mmap_entry,
			    rdma_entry);
}

int vrnic_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int vrnic_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int vrnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int vrnic_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
enum rdma_link_layer vrnic_get_link_layer(struct ib_device *ibdev, u32 port);
void vrnic_get_dev_fw_str(struct ib_device *ibdev, char *str);
int vrnic_add_gid(const struct ib_gid_attr *attr, void **context);
int vrnic_del_gid(const struct ib_gid_attr *attr, void **context);
int vrnic_alloc_ucontext(struct ib_ucontext *ibuctx, struct ib_udata *udata);
void vrnic_uctx_resp(struct vrnic_ucontext *uctx,
		     struct vrnic_alloc_ucontext_resp *resp);
void vrnic_dealloc_ucontext(struct ib_ucontext *ibuctx);
void vrnic_disassociate_ucontext(struct ib_ucontext *ibuctx);
int vrnic_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma);
void vrnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
struct rdma_user_mmap_entry *vrnic_mmap_qbuf(struct ib_ucontext *ibuctx,
					     struct vrnic_qbuf *qb, u64 *key);
int vrnic_qbuf_new_user(struct vrnic_dev *dev, struct ib_udata *udata,
			u32 npages, struct vrnic_qbuf *qb,
			struct rdma_user_mmap_entry **entry, u64 *key);
void vrnic_qbuf_drop_new(struct vrnic_dev *dev, struct vrnic_qbuf *qb,
			 struct rdma_user_mmap_entry *entry, int err);
void vrnic_qbuf_replace(struct vrnic_dev *dev, struct vrnic_qbuf *qb,
			struct rdma_user_mmap_entry **entry,
			const struct vrnic_qbuf *new_qb,
			struct rdma_user_mmap_entry *new_entry);

int vrnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int vrnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int vrnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int vrnic_destroy_ah(struct ib_ah *ibah, u32 flags);
int vrnic_fill_av(const struct rdma_ah_attr *ah, struct vrnic_av *av);
struct rdma_hw_stats *vrnic_alloc_hw_port_stats(struct ib_device *ibdev, u32 port);
int vrnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

/* vrnic_mr.c */
struct ib_mr *vrnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 virt_addr, int access, struct ib_udata *udata);
struct ib_mr *vrnic_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 virt_addr, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata);
int vrnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *vrnic_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *vrnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int vrnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int vrnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int vrnic_dealloc_mw(struct ib_mw *ibmw);
struct ib_mr *vrnic_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			      struct ib_dm_mr_attr *attr,
			      struct uverbs_attr_bundle *attrs);

/* vrnic_dm.c */
int vrnic_dm_init(struct vrnic_dev *dev);
void vrnic_dm_fini(struct vrnic_dev *dev);
void vrnic_dm_release(struct vrnic_dev *dev, u32 first, u32 npages);
struct ib_dm *vrnic_alloc_dm(struct ib_device *ibdev,
			     struct ib_ucontext *ibuctx,
			     struct ib_dm_alloc_attr *attr,
			     struct uverbs_attr_bundle *attrs);
int vrnic_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);

/* vrnic_uapi.c: the driver's methods and attributes of uverbs ioctls */
extern const struct uapi_definition vrnic_uapi_defs[];
int vrnic_query_ucontext(struct ib_ucontext *ibuctx,
			 struct uverbs_attr_bundle *attrs);

/* vrnic_cq.c */
int vrnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    struct ib_udata *udata);
int vrnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int vrnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int vrnic_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period);

/* vrnic_kverbs.c: the data path of kernel QPs and CQs */
int vrnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int vrnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
int vrnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int vrnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int vrnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
void vrnic_kqp_set_state(struct vrnic_qp *qp, enum ib_qp_state state);
void vrnic_kqp_reset(struct vrnic_qp *qp);
void vrnic_kqp_clean_cqs(struct vrnic_qp *qp);

/* vrnic_qp.c */
int vrnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		    struct ib_udata *udata);
int vrnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int vrnic_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int vrnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int vrnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
struct rdma_hw_stats *vrnic_counter_alloc_stats(struct rdma_counter *counter);
int vrnic_counter_update_stats(struct rdma_counter *counter);
int vrnic_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *qp);
int vrnic_counter_unbind_qp(struct ib_qp *qp);
int vrnic_counter_dealloc(struct rdma_counter *counter);
int vrnic_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int vrnic_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int vrnic_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int vrnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int vrnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int vrnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);

/* vrnic_eq.c */
void vrnic_async_event(struct vrnic_dev *dev, u32 type, u32 num);

extern const struct attribute_group vrnic_attr_group;

#endif /* VRNIC_VERBS_H */
