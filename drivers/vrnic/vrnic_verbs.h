/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vrnic verbs: the ib_device_ops the driver implements.
 */
#ifndef VRNIC_VERBS_H
#define VRNIC_VERBS_H

#include <rdma/ib_verbs.h>

#include "vrnic.h"

enum vrnic_mmap_type {
	VRNIC_MMAP_IO_NC,	/* device registers, uncached */
	VRNIC_MMAP_IO_RO,	/* device status page, read-only */
};

struct vrnic_user_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	phys_addr_t address;
	enum vrnic_mmap_type type;
};

struct vrnic_ucontext {
	struct ib_ucontext ibucontext;
	struct rdma_user_mmap_entry *db_entry;
	struct rdma_user_mmap_entry *status_entry;
};

static inline struct vrnic_ucontext *to_vuctx(struct ib_ucontext *ibuctx)
{
	return container_of(ibuctx, struct vrnic_ucontext, ibucontext);
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
void vrnic_dealloc_ucontext(struct ib_ucontext *ibuctx);
void vrnic_disassociate_ucontext(struct ib_ucontext *ibuctx);
int vrnic_mmap(struct ib_ucontext *ibuctx, struct vm_area_struct *vma);
void vrnic_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

extern const struct attribute_group vrnic_attr_group;

#endif /* VRNIC_VERBS_H */
