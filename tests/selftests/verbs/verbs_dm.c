// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, device memory: ibv_alloc_dm in the device's BAR2 memory,
 * copies to and from it, and zero-based MRs of it that RDMA reaches from
 * both ends, each byte checked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_common.h"

#define DM_LEN		(8 << 10)
#define DM_OFF		512		/* where the MR of the test starts */
#define XFER_LEN	2048

static size_t max_dm_size(void)
{
	struct ibv_device_attr_ex a;

	if (ibv_query_device_ex(E.ctx, NULL, &a))
		return 0;
	return a.max_dm_size;
}

/* The copy calls' rules: 4-byte words (EINVAL), inside (EFAULT). */
static bool dm_copy_rules(struct ibv_dm *dm)
{
	uint8_t b[16] = { 0 };
	int err;

	err = ibv_memcpy_to_dm(dm, 2, b, 8);
	CHECK(err == EINVAL, "memcpy_to_dm at offset 2: %d, want EINVAL", err);
	err = ibv_memcpy_from_dm(b, dm, 0, 3);
	CHECK(err == EINVAL, "memcpy_from_dm of 3 bytes: %d, want EINVAL", err);
	err = ibv_memcpy_to_dm(dm, DM_LEN - 4, b, 8);
	CHECK(err == EFAULT, "memcpy_to_dm past the end: %d, want EFAULT", err);
	return true;
}

/*
 * RDMA WRITE into a DM MR, READ out of it, and a SEND whose local SGE is
 * in it: the device reaches its own memory from both ends of a QP.
 */
static bool dm_rdma(struct ibv_dm *dm, struct ibv_mr *dmr)
{
	struct qp_opts o = default_opts();
	uint8_t *want = malloc(XFER_LEN), *got = malloc(XFER_LEN);
	struct ibv_sge sg, rsg;
	struct send w = { .op = IBV_WR_RDMA_WRITE, .wr_id = 1, .flags = IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1, .raddr = 0, .rkey = dmr->rkey };
	struct ibv_wc wc;
	struct pair p;
	bool ok = false;

	if (!want || !got || !pair_create(&p, IBV_QPT_RC, &o)) {
		free(want);
		free(got);
		FAIL("no memory or no pair");
	}
	/* WRITE XFER_LEN random bytes at 0 of the MR, which is DM_OFF in the DM */
	fill_random(p.s[0].buf, XFER_LEN);
	memcpy(want, p.s[0].buf, XFER_LEN);
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf, XFER_LEN, p.s[0].mr->lkey };
	CHECK_OUT(!post_one(&p, 0, &w), "post WRITE failed");
	if (!expect_status(&p.s[0], 1, IBV_WC_SUCCESS, "WRITE into device memory"))
		goto out;
	CHECK_OUT(!ibv_memcpy_from_dm(got, dm, DM_OFF, XFER_LEN), "memcpy_from_dm failed");
	CHECK_OUT(!memcmp(got, want, XFER_LEN), "the WRITE's bytes are not in device memory "
		  "(first difference at %zu)", first_diff(got, want, XFER_LEN));

	/* READ it back into side 0, at READ_OFF */
	w = (struct send){ .op = IBV_WR_RDMA_READ, .wr_id = 2, .flags = IBV_SEND_SIGNALED,
			   .sg = &sg, .nsge = 1, .raddr = 0, .rkey = dmr->rkey };
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf + READ_OFF, XFER_LEN, p.s[0].mr->lkey };
	CHECK_OUT(!post_one(&p, 0, &w), "post READ failed");
	if (!expect_status(&p.s[0], 2, IBV_WC_SUCCESS, "READ from device memory"))
		goto out;
	CHECK_OUT(!memcmp(p.s[0].buf + READ_OFF, want, XFER_LEN),
		  "the READ brought other bytes than device memory holds");

	/* SEND from device memory: the local SGE's lkey is the DM MR's */
	rsg = (struct ibv_sge){ (uintptr_t)p.s[1].buf, XFER_LEN, p.s[1].mr->lkey };
	memset(p.s[1].buf, 0, XFER_LEN);
	CHECK_OUT(!post_recv(&p.s[1], 3, &rsg, 1), "post_recv failed");
	w = (struct send){ .op = IBV_WR_SEND, .wr_id = 4, .flags = IBV_SEND_SIGNALED,
			   .sg = &sg, .nsge = 1 };
	sg = (struct ibv_sge){ 0, XFER_LEN, dmr->lkey };
	CHECK_OUT(!post_one(&p, 0, &w), "post SEND failed");
	if (!expect_status(&p.s[0], 4, IBV_WC_SUCCESS, "SEND from device memory") ||
	    !expect_wc(&p.s[1], &wc, "the receive of the SEND"))
		goto out;
	CHECK_OUT(wc.status == IBV_WC_SUCCESS && wc.byte_len == XFER_LEN,
		  "receive: status %d, %u bytes", wc.status, wc.byte_len);
	CHECK_OUT(!memcmp(p.s[1].buf, want, XFER_LEN), "the SEND carried other bytes");
	ok = true;
out:
	pair_destroy(&p);
	free(want);
	free(got);
	return ok;
}

/* An MR of device memory must be zero-based; a busy DM is not freed. */
static bool dm_mr_rules(struct ibv_dm *dm, struct ibv_mr *dmr)
{
	struct ibv_mr *mr;
	int err;

	errno = 0;
	mr = ibv_reg_dm_mr(E.pd, dm, 0, 64, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr && errno == EINVAL, "a DM MR without ZERO_BASED: %s, errno %d, want EINVAL",
	      mr ? "registered" : "refused", errno);
	mr = ibv_reg_dm_mr(E.pd, dm, DM_LEN - 64, 128,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED);
	CHECK(!mr, "a DM MR past the end of its allocation was registered");
	mr = ibv_reg_dm_mr(E.pd, dm, 0, 0, IBV_ACCESS_ZERO_BASED);
	CHECK(mr, "a DM MR of 0 bytes: errno %d", errno);
	CHECK(!ibv_dereg_mr(mr), "dereg of the 0-byte DM MR failed");
	err = ibv_free_dm(dm);
	CHECK(err == EBUSY, "ibv_free_dm with an MR on it: %d, want EBUSY", err);
	CHECK(dmr->length == DM_LEN - DM_OFF, "DM MR length %zu", dmr->length);
	return true;
}

/* A new allocation reads as zeros, whatever the last owner left. */
static bool dm_fresh_is_zero(void)
{
	struct ibv_alloc_dm_attr attr = { .length = DM_LEN };
	uint8_t *b = malloc(DM_LEN);
	struct ibv_dm *dm;
	bool ok = false;
	size_t i;

	if (!b)
		FAIL("no memory");
	dm = ibv_alloc_dm(E.ctx, &attr);
	CHECK_OUT(dm, "ibv_alloc_dm failed: errno %d", errno);
	memset(b, 0xa5, DM_LEN);
	CHECK_OUT(!ibv_memcpy_to_dm(dm, 0, b, DM_LEN), "memcpy_to_dm failed");
	CHECK_OUT(!ibv_free_dm(dm), "ibv_free_dm failed");
	dm = ibv_alloc_dm(E.ctx, &attr);
	CHECK_OUT(dm, "the second ibv_alloc_dm failed: errno %d", errno);
	CHECK_OUT(!ibv_memcpy_from_dm(b, dm, 0, DM_LEN), "memcpy_from_dm failed");
	for (i = 0; i < DM_LEN && !b[i]; i++)
		;
	CHECK_OUT(i == DM_LEN, "a new allocation holds %#x at %zu", b[i], i);
	ok = true;
out:
	if (dm && ibv_free_dm(dm) && ok) {
		snprintf(why, sizeof(why), "ibv_free_dm failed");
		ok = false;
	}
	free(b);
	return ok;
}

bool do_dm(void)
{
	struct ibv_alloc_dm_attr attr = { .length = DM_LEN };
	size_t max = max_dm_size();
	struct ibv_mr *dmr = NULL;
	struct ibv_dm *dm;
	uint8_t b[256], c[256];
	bool ok = false;

	if (!max)
		SKIP("the device has no device memory (max_dm_size 0)");
	attr.length = max + 1;
	errno = 0;
	dm = ibv_alloc_dm(E.ctx, &attr);
	CHECK(!dm && errno == ENOMEM, "ibv_alloc_dm of max_dm_size + 1: errno %d, want ENOMEM",
	      errno);
	attr.length = DM_LEN;
	dm = ibv_alloc_dm(E.ctx, &attr);
	CHECK(dm, "ibv_alloc_dm of %d bytes failed: errno %d", DM_LEN, errno);

	fill_random(b, sizeof(b));
	CHECK_OUT(!ibv_memcpy_to_dm(dm, 1024, b, sizeof(b)), "memcpy_to_dm failed");
	CHECK_OUT(!ibv_memcpy_from_dm(c, dm, 1024, sizeof(c)), "memcpy_from_dm failed");
	CHECK_OUT(!memcmp(b, c, sizeof(b)), "device memory gave back other bytes");
	if (!dm_copy_rules(dm))
		goto out;
	dmr = ibv_reg_dm_mr(E.pd, dm, DM_OFF, DM_LEN - DM_OFF,
			    ALL_ACCESS | IBV_ACCESS_ZERO_BASED);
	CHECK_OUT(dmr, "ibv_reg_dm_mr failed: errno %d", errno);
	if (!dm_rdma(dm, dmr) || !dm_mr_rules(dm, dmr))
		goto out;
	ok = true;
out:
	if (dmr && ibv_dereg_mr(dmr) && ok) {
		snprintf(why, sizeof(why), "dereg of the DM MR failed");
		ok = false;
	}
	if (ibv_free_dm(dm) && ok) {
		snprintf(why, sizeof(why), "ibv_free_dm failed");
		ok = false;
	}
	return ok && dm_fresh_is_zero();
}
