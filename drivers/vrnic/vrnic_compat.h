/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels vrnic.ko builds for, Linux 6.1 to 7.3:
 * each difference once, tested by the release that brought it, so that
 * the rest of the driver is written for one kernel API.
 *
 * The driver's own verbs keep the 6.1 signatures (vrnic_verbs.h); where
 * ib_device_ops changed, an adapter here has the new signature and calls
 * them, and VRNIC_COMPAT_DEV_OPS puts the adapters in the ops table.
 */
#ifndef VRNIC_COMPAT_H
#define VRNIC_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "vrnic_verbs.h"

/*
 * 7.1, and stable kernels since 2026-06 (Debian's 6.1.0-57 and 6.12.95
 * have it): the DMA block iterator is in rdma/iter.h; before, ib_verbs.h
 * and ib_umem.h held it.  Kbuild looks for the header (a backport has no
 * version to test).
 */
#ifdef VRNIC_HAVE_RDMA_ITER_H
#include <rdma/iter.h>
#endif

#define VRNIC_LINUX_AT_LEAST(a, b)	(KERNEL_VERSION(a, b, 0) <= LINUX_VERSION_CODE)

/*
 * 6.2: IB_DEVICE_ATOMIC_WRITE.  Before it, ib_core hands device_cap_flags
 * to user space whole, so the uverbs bit (IB_UVERBS_DEVICE_ATOMIC_WRITE,
 * bit 40, which rdma-core 44 knows) is set by its number.
 */
#if VRNIC_LINUX_AT_LEAST(6, 2)
#define VRNIC_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define VRNIC_DEVICE_ATOMIC_WRITE	BIT_ULL(40)
#endif

/*
 * 6.2: FLUSH and its device capabilities.  Before it, ib_core refuses the
 * flush access rights, so the device's FLUSH is not offered there at all.
 */
#if VRNIC_LINUX_AT_LEAST(6, 2)
#define VRNIC_DEVICE_FLUSH_GLOBAL	IB_DEVICE_FLUSH_GLOBAL
#define VRNIC_DEVICE_FLUSH_PERSISTENT	IB_DEVICE_FLUSH_PERSISTENT
static_assert(VRNIC_IB_ACCESS_FLUSH_GLOBAL == IB_ACCESS_FLUSH_GLOBAL);
static_assert(VRNIC_IB_ACCESS_FLUSH_PERSISTENT == IB_ACCESS_FLUSH_PERSISTENT);
#else
#define VRNIC_DEVICE_FLUSH_GLOBAL	0
#define VRNIC_DEVICE_FLUSH_PERSISTENT	0
#endif

/* 6.3: vm_flags is read-only; it changes through vm_flags_clear(). */
static inline void vrnic_vma_clear_flags(struct vm_area_struct *vma,
					 vm_flags_t flags)
{
#if VRNIC_LINUX_AT_LEAST(6, 3)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/* 7.2: ib_umem_get() is ib_umem_get_va(). */
static inline struct ib_umem *vrnic_umem_get(struct ib_device *ibdev,
					     unsigned long addr, size_t size,
					     int access)
{
#if VRNIC_LINUX_AT_LEAST(7, 2)
	return ib_umem_get_va(ibdev, addr, size, access);
#else
	return ib_umem_get(ibdev, addr, size, access);
#endif
}

/*
 * 6.11: create_cq takes the uverbs attribute bundle (NULL for a kernel
 * CQ) instead of its udata.  (7.1 added create_user_cq; without it, user
 * CQs still come through create_cq.)
 */
#if VRNIC_LINUX_AT_LEAST(6, 11)
static inline int vrnic_ib_create_cq(struct ib_cq *ibcq,
				     const struct ib_cq_init_attr *attr,
				     struct uverbs_attr_bundle *attrs)
{
	return vrnic_create_cq(ibcq, attr, attrs ? &attrs->driver_udata : NULL);
}
#else
#define vrnic_ib_create_cq	vrnic_create_cq
#endif

/* 7.1: resize_cq is resize_user_cq, and its depth is unsigned. */
#if VRNIC_LINUX_AT_LEAST(7, 1)
static inline int vrnic_ib_resize_cq(struct ib_cq *ibcq, unsigned int cqe,
				     struct ib_udata *udata)
{
	return vrnic_resize_cq(ibcq, min_t(unsigned int, cqe, INT_MAX), udata);
}

#define VRNIC_COMPAT_RESIZE_CQ_OP	.resize_user_cq = vrnic_ib_resize_cq
#else
#define VRNIC_COMPAT_RESIZE_CQ_OP	.resize_cq = vrnic_resize_cq
#endif

/* 6.17: reg_user_mr takes a DMA handle, which vrnic does not support. */
#if VRNIC_LINUX_AT_LEAST(6, 17)
static inline struct ib_mr *vrnic_ib_reg_user_mr(struct ib_pd *ibpd, u64 start,
						 u64 length, u64 virt_addr,
						 int access,
						 struct ib_dmah *dmah,
						 struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return vrnic_reg_user_mr(ibpd, start, length, virt_addr, access, udata);
}
#else
#define vrnic_ib_reg_user_mr	vrnic_reg_user_mr
#endif

/*
 * 6.15: binding a QP to a counter names its port (vrnic has one), and
 * ib_core allocates the rdma_counter at the driver's size and calls
 * counter_init on it, unconditionally.
 */
#if VRNIC_LINUX_AT_LEAST(6, 15)
struct vrnic_counter {
	struct rdma_counter rdma_counter;
};

static inline void vrnic_ib_counter_init(struct rdma_counter *counter)
{
}

static inline int vrnic_ib_counter_bind_qp(struct rdma_counter *counter,
					   struct ib_qp *qp, u32 port)
{
	return vrnic_counter_bind_qp(counter, qp);
}

static inline int vrnic_ib_counter_unbind_qp(struct ib_qp *qp, u32 port)
{
	return vrnic_counter_unbind_qp(qp);
}

#define VRNIC_COMPAT_COUNTER_OPS \
	.counter_bind_qp = vrnic_ib_counter_bind_qp, \
	.counter_init = vrnic_ib_counter_init, \
	.counter_unbind_qp = vrnic_ib_counter_unbind_qp, \
	INIT_RDMA_OBJ_SIZE(rdma_counter, vrnic_counter, rdma_counter)
#else
#define VRNIC_COMPAT_COUNTER_OPS \
	.counter_bind_qp = vrnic_counter_bind_qp, \
	.counter_unbind_qp = vrnic_counter_unbind_qp
#endif

/*
 * 6.14: ib_core sends PORT_ACTIVE and PORT_ERR from the paired netdev's
 * carrier unless the driver takes its netdev events.  vrnic's port state
 * is the device's (vrnic_port.c sends those events when vrnicd reports
 * it), so the core's would come twice and might disagree.
 */
#if VRNIC_LINUX_AT_LEAST(6, 14)
static inline void vrnic_ib_report_port_event(struct ib_device *ibdev,
					      struct net_device *ndev,
					      unsigned long event)
{
}

#define VRNIC_COMPAT_PORT_EVENT_OP \
	.report_port_event = vrnic_ib_report_port_event,
#else
#define VRNIC_COMPAT_PORT_EVENT_OP
#endif

#define VRNIC_COMPAT_DEV_OPS \
	VRNIC_COMPAT_COUNTER_OPS, \
	VRNIC_COMPAT_PORT_EVENT_OP \
	VRNIC_COMPAT_RESIZE_CQ_OP, \
	.create_cq = vrnic_ib_create_cq, \
	.reg_user_mr = vrnic_ib_reg_user_mr

#endif /* VRNIC_COMPAT_H */
