// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's part of the uverbs ioctl interface: what libvrnic needs
 * beyond the core methods, for ibv_import_device, ibv_import_pd,
 * ibv_alloc_dm and ibv_import_dm (uapi/vrnic-abi.h names the attributes).
 */

#define UVERBS_MODULE_NAME vrnic_ib
#include <rdma/uverbs_ioctl.h>
#include <rdma/uverbs_named_ioctl.h>

#include "vrnic-abi.h"
#include "vrnic_verbs.h"

/* ibv_import_device: the context's data, as alloc_ucontext gave it. */
int vrnic_query_ucontext(struct ib_ucontext *ibuctx,
			 struct uverbs_attr_bundle *attrs)
{
	struct vrnic_alloc_ucontext_resp resp;

	vrnic_uctx_resp(to_vuctx(ibuctx), &resp);
	return uverbs_copy_to(attrs, VRNIC_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
			      &resp, sizeof(resp));
}

/* ibv_import_pd: the device's number of the PD. */
static int UVERBS_HANDLER(VRNIC_IB_METHOD_PD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_pd *pd = uverbs_attr_get_obj(attrs, VRNIC_IB_ATTR_QUERY_PD_HANDLE);
	u32 pdn;

	if (IS_ERR(pd))
		return PTR_ERR(pd);
	pdn = to_vpd(pd)->pdn;
	return uverbs_copy_to(attrs, VRNIC_IB_ATTR_QUERY_PD_RESP_PDN, &pdn,
			      sizeof(pdn));
}

DECLARE_UVERBS_NAMED_METHOD(VRNIC_IB_METHOD_PD_QUERY,
			    UVERBS_ATTR_IDR(VRNIC_IB_ATTR_QUERY_PD_HANDLE,
					    UVERBS_OBJECT_PD, UVERBS_ACCESS_READ,
					    UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(VRNIC_IB_ATTR_QUERY_PD_RESP_PDN,
						UVERBS_ATTR_TYPE(u32),
						UA_MANDATORY));

ADD_UVERBS_METHODS(vrnic_ib_pd, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(VRNIC_IB_METHOD_PD_QUERY));

ADD_UVERBS_ATTRIBUTES_SIMPLE(vrnic_ib_query_context, UVERBS_OBJECT_DEVICE,
			     UVERBS_METHOD_QUERY_CONTEXT,
			     UVERBS_ATTR_PTR_OUT(VRNIC_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
						 UVERBS_ATTR_TYPE(struct vrnic_alloc_ucontext_resp),
						 UA_MANDATORY));

/* ibv_import_dm: the mmap offset of the DM's memory, and its length. */
static int UVERBS_HANDLER(VRNIC_IB_METHOD_DM_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ibdm = uverbs_attr_get_obj(attrs, VRNIC_IB_ATTR_QUERY_DM_HANDLE);
	u64 key, length;
	int err;

	if (IS_ERR(ibdm))
		return PTR_ERR(ibdm);
	key = rdma_user_mmap_get_offset(to_vdm(ibdm)->mmap_entry);
	length = ibdm->length;
	err = uverbs_copy_to(attrs, VRNIC_IB_ATTR_QUERY_DM_RESP_MMAP_KEY, &key,
			     sizeof(key));
	if (err)
		return err;
	return uverbs_copy_to(attrs, VRNIC_IB_ATTR_QUERY_DM_RESP_LENGTH, &length,
			      sizeof(length));
}

DECLARE_UVERBS_NAMED_METHOD(VRNIC_IB_METHOD_DM_QUERY,
			    UVERBS_ATTR_IDR(VRNIC_IB_ATTR_QUERY_DM_HANDLE,
					    UVERBS_OBJECT_DM, UVERBS_ACCESS_READ,
					    UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(VRNIC_IB_ATTR_QUERY_DM_RESP_MMAP_KEY,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(VRNIC_IB_ATTR_QUERY_DM_RESP_LENGTH,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY));

ADD_UVERBS_METHODS(vrnic_ib_dm_query, UVERBS_OBJECT_DM,
		   &UVERBS_METHOD(VRNIC_IB_METHOD_DM_QUERY));

ADD_UVERBS_ATTRIBUTES_SIMPLE(vrnic_ib_dm, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(VRNIC_IB_ATTR_ALLOC_DM_RESP_MMAP_KEY,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

const struct uapi_definition vrnic_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &vrnic_ib_pd),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &vrnic_ib_query_context),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &vrnic_ib_dm),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &vrnic_ib_dm_query),
	{},
};
