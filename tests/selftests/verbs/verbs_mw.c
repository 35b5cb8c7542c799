// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, memory windows and invalidation from userspace: ibv_alloc_mw,
 * ibv_bind_mw (type 1), IBV_WR_BIND_MW (type 2), IBV_WR_LOCAL_INV and
 * IBV_WR_SEND_WITH_INV with IBV_WC_WITH_INV, remote access through a
 * window within its range only, and the error statuses of a bind without
 * MW_BIND, an invalidated key and a key the responder cannot invalidate.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_common.h"

#define WIN_LEN 8192

/* A pair whose side 1 MR allows windows. */
static bool mw_pair(struct pair *p, int access1)
{
	struct qp_opts o = default_opts();

	o.access[1] = access1;
	return pair_create(p, IBV_QPT_RC, &o);
}

/* An RDMA WRITE of len bytes from side 0 to raddr through rkey; its status. */
static bool write_through(struct pair *p, uint64_t wr_id, uint64_t raddr, uint32_t rkey,
			  size_t len, enum ibv_wc_status want, const char *what)
{
	struct ibv_sge sg = { (uintptr_t)p->s[0].buf, (uint32_t)len, p->s[0].mr->lkey };
	struct send w = { .op = IBV_WR_RDMA_WRITE, .wr_id = wr_id, .flags = IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1, .raddr = raddr, .rkey = rkey };

	fill_random(p->s[0].buf, len);
	CHECK(!post_one(p, 0, &w), "%s: post failed", what);
	if (!expect_status(&p->s[0], wr_id, want, what))
		return false;
	if (want == IBV_WC_SUCCESS)
		CHECK(!memcmp((void *)(uintptr_t)raddr, p->s[0].buf, len),
		      "%s: the data did not land", what);
	return true;
}

/* Post one WR on side i and expect its completion's status and opcode. */
static bool post_expect(struct pair *p, int i, struct ibv_send_wr *wr, enum ibv_wc_status st,
			enum ibv_wc_opcode op, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;

	wr->send_flags |= IBV_SEND_SIGNALED;
	CHECK(!ibv_post_send(p->s[i].qp, wr, &bad), "%s: ibv_post_send failed", what);
	if (!expect_wc(&p->s[i], &wc, what))
		return false;
	CHECK(wc.wr_id == wr->wr_id && wc.status == st,
	      "%s: got wr_id %" PRIu64 " status %s, want %" PRIu64 " %s", what, wc.wr_id,
	      ibv_wc_status_str(wc.status), wr->wr_id, ibv_wc_status_str(st));
	CHECK(st != IBV_WC_SUCCESS || wc.opcode == op, "%s: opcode %d, want %d", what, wc.opcode,
	      op);
	return true;
}

/* IBV_WR_BIND_MW on side 1: window mw as key rkey over len bytes at addr of
 * side 1's MR; want is the completion's status. */
static bool bind_type2(struct pair *p, struct ibv_mw *mw, uint32_t rkey, uint64_t addr,
		       uint64_t len, unsigned int access, enum ibv_wc_status want, const char *what)
{
	struct ibv_send_wr wr = { .wr_id = 10, .opcode = IBV_WR_BIND_MW };

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = p->s[1].mr, .addr = addr, .length = len, .mw_access_flags = access,
	};
	return post_expect(p, 1, &wr, want, IBV_WC_BIND_MW, what);
}

/* A SEND_WITH_INV of key from side 0 into a receive on side 1: the send's
 * status must be want; *recv gets the receive's completion. */
static bool send_inv(struct pair *p, uint32_t key, enum ibv_wc_status want, struct ibv_wc *recv,
		     const char *what)
{
	struct ibv_sge rsg = { (uintptr_t)p->s[1].buf, 4096, p->s[1].mr->lkey };
	struct ibv_sge ssg = { (uintptr_t)p->s[0].buf, 64, p->s[0].mr->lkey };
	struct ibv_send_wr si = { .wr_id = 12, .opcode = IBV_WR_SEND_WITH_INV, .sg_list = &ssg,
				  .num_sge = 1, .invalidate_rkey = key };

	CHECK(!post_recv(&p->s[1], 13, &rsg, 1), "%s: post_recv failed", what);
	return post_expect(p, 0, &si, want, IBV_WC_SEND, what) &&
	       expect_wc(&p->s[1], recv, what);
}

/* The end of a window test: the pair and the window go; ok unless that
 * fails. */
static bool mw_done(struct pair *p, struct ibv_mw *mw, bool ok)
{
	pair_destroy(p);
	if (mw && ibv_dealloc_mw(mw) && ok) {
		snprintf(why, sizeof(why), "ibv_dealloc_mw failed");
		return false;
	}
	return ok;
}

/* Type 1: ibv_bind_mw from one QP, access within the window only. */
bool do_mw_type1(void)
{
	struct ibv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_mw *mw = NULL;
	struct pair p;
	struct ibv_wc wc;
	uint32_t before;
	uint8_t *win;
	bool ok = false;

	if (!mw_pair(&p, ALL_ACCESS | IBV_ACCESS_MW_BIND))
		goto out;
	win = p.s[1].buf + REMOTE_OFF;
	mw = ibv_alloc_mw(E.pd, IBV_MW_TYPE_1);
	CHECK_OUT(mw, "ibv_alloc_mw(type 1) failed");
	/* A zero-based window is refused, as mlx5 refuses it. */
	b.bind_info = (struct ibv_mw_bind_info){
		.mr = p.s[1].mr, .addr = 0, .length = WIN_LEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED,
	};
	CHECK_OUT(ibv_bind_mw(p.s[1].qp, mw, &b) == EINVAL,
		  "ibv_bind_mw of a zero-based window was not EINVAL");
	/* LOCAL_WRITE beside the remote rights: rxe and mlx5 take it (and
	 * ignore it), and so must vrnic. */
	b.bind_info = (struct ibv_mw_bind_info){
		.mr = p.s[1].mr, .addr = (uintptr_t)win, .length = WIN_LEN,
		.mw_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	before = mw->rkey;
	CHECK_OUT(!ibv_bind_mw(p.s[1].qp, mw, &b), "ibv_bind_mw failed");
	if (!expect_wc(&p.s[1], &wc, "the bind"))
		goto out;
	CHECK_OUT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW,
		  "bind: status %s opcode %d", ibv_wc_status_str(wc.status), wc.opcode);
	CHECK_OUT(mw->rkey != before, "ibv_bind_mw kept the old key %#x", before);
	if (!write_through(&p, 2, (uintptr_t)win + 100, mw->rkey, 4096, IBV_WC_SUCCESS,
			   "WRITE within the window"))
		goto out;
	/* Past the window is refused. */
	if (!write_through(&p, 3, (uintptr_t)win + WIN_LEN - 100, mw->rkey, 4096,
			   IBV_WC_REM_ACCESS_ERR, "WRITE past the window"))
		goto out;
	ok = true;
out:
	return mw_done(&p, mw, ok);
}

/*
 * A zero-based type 2 window (IBV_ACCESS_ZERO_BASED): the peer addresses
 * it from 0, the data lands at the window's start plus that offset, and
 * its end is its length.
 */
bool do_mw_zero_based(void)
{
	struct ibv_mw *mw = NULL;
	struct pair p = { 0 };
	struct ibv_sge sg;
	struct send w = { .op = IBV_WR_RDMA_WRITE, .wr_id = 21, .flags = IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1, .raddr = 1000 };
	uint8_t *win;
	uint32_t rkey;
	bool ok = false;

	mw = ibv_alloc_mw(E.pd, IBV_MW_TYPE_2);
	CHECK_OUT(mw, "ibv_alloc_mw(type 2) failed");
	if (!mw_pair(&p, ALL_ACCESS | IBV_ACCESS_MW_BIND))
		goto out;
	win = p.s[1].buf + REMOTE_OFF;
	rkey = ibv_inc_rkey(mw->rkey);
	if (!bind_type2(&p, mw, rkey, (uintptr_t)win, WIN_LEN,
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED, IBV_WC_SUCCESS,
			"IBV_WR_BIND_MW, zero-based"))
		goto out;
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf, 2048, p.s[0].mr->lkey };
	w.rkey = rkey;
	fill_random(p.s[0].buf, 2048);
	CHECK_OUT(!post_one(&p, 0, &w), "WRITE at offset 1000: post failed");
	if (!expect_status(&p.s[0], 21, IBV_WC_SUCCESS, "WRITE at offset 1000"))
		goto out;
	CHECK_OUT(!memcmp(win + 1000, p.s[0].buf, 2048),
		  "WRITE at offset 1000 did not land at the window's start + 1000");
	/* The window ends at its length, not at the MR's end. */
	if (!write_through(&p, 22, WIN_LEN - 100, rkey, 2048, IBV_WC_REM_ACCESS_ERR,
			   "WRITE past the zero-based window's length"))
		goto out;
	ok = true;
out:
	return mw_done(&p, mw, ok);
}

/* Type 2: IBV_WR_BIND_MW, then SEND_WITH_INV, then LOCAL_INV. */
bool do_mw_type2(void)
{
	struct ibv_mw *mw = NULL;
	struct pair p = { 0 };
	struct ibv_wc wc;
	uint8_t *win;
	uint32_t rkey;
	bool ok = false;
	int round;

	mw = ibv_alloc_mw(E.pd, IBV_MW_TYPE_2);
	CHECK_OUT(mw, "ibv_alloc_mw(type 2) failed");
	rkey = mw->rkey;
	for (round = 0; round < 2; round++) {
		if (!mw_pair(&p, ALL_ACCESS | IBV_ACCESS_MW_BIND))
			goto out;
		win = p.s[1].buf + REMOTE_OFF;
		rkey = ibv_inc_rkey(rkey);
		/* The second round with LOCAL_WRITE too, as rxe and mlx5 take it. */
		if (!bind_type2(&p, mw, rkey, (uintptr_t)win, WIN_LEN,
				IBV_ACCESS_REMOTE_WRITE | (round ? IBV_ACCESS_LOCAL_WRITE : 0),
				IBV_WC_SUCCESS, "IBV_WR_BIND_MW") ||
		    !write_through(&p, 11, (uintptr_t)win, rkey, 2048, IBV_WC_SUCCESS,
				   "WRITE through the type 2 window"))
			goto out;
		if (round == 0) {
			/* The peer invalidates it with its SEND. */
			if (!send_inv(&p, rkey, IBV_WC_SUCCESS, &wc, "IBV_WR_SEND_WITH_INV"))
				goto out;
			CHECK_OUT(wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_INV) &&
				  wc.invalidated_rkey == rkey,
				  "receive: status %s flags %#x invalidated_rkey %#x, want %#x",
				  ibv_wc_status_str(wc.status), wc.wc_flags, wc.invalidated_rkey,
				  rkey);
		} else {
			struct ibv_send_wr inv = { .wr_id = 14, .opcode = IBV_WR_LOCAL_INV,
						   .invalidate_rkey = rkey };

			if (!post_expect(&p, 1, &inv, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV,
					 "IBV_WR_LOCAL_INV"))
				goto out;
		}
		/* Access through the invalidated key. */
		if (!write_through(&p, 15, (uintptr_t)win, rkey, 64, IBV_WC_REM_ACCESS_ERR,
				   round == 0 ? "WRITE after SEND_WITH_INV" : "WRITE after LOCAL_INV"))
			goto out;
		pair_destroy(&p);
		memset(&p, 0, sizeof(p));
	}
	ok = true;
out:
	return mw_done(&p, mw, ok);
}

/*
 * The error statuses: a bind to an MR without MW_BIND is MW_BIND_ERR; a
 * SEND_WITH_INV naming a key the responder cannot invalidate (a window of
 * another PD) is REM_INV_REQ_ERR on both sides.
 */
bool do_mw_errors(void)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(E.ctx);
	struct ibv_mw *mw = NULL, *other = NULL;
	struct pair p = { 0 };
	struct ibv_wc wc;
	bool ok = false;

	CHECK_OUT(pd2, "ibv_alloc_pd failed");
	mw = ibv_alloc_mw(E.pd, IBV_MW_TYPE_2);
	other = ibv_alloc_mw(pd2, IBV_MW_TYPE_2);
	CHECK_OUT(mw && other, "ibv_alloc_mw failed");
	if (!mw_pair(&p, ALL_ACCESS))	/* no MW_BIND */
		goto out;
	if (!bind_type2(&p, mw, ibv_inc_rkey(mw->rkey), (uintptr_t)p.s[1].buf, 4096,
			IBV_ACCESS_REMOTE_READ, IBV_WC_MW_BIND_ERR,
			"bind to an MR without IBV_ACCESS_MW_BIND"))
		goto out;
	pair_destroy(&p);
	memset(&p, 0, sizeof(p));
	if (!mw_pair(&p, ALL_ACCESS | IBV_ACCESS_MW_BIND))
		goto out;
	if (!send_inv(&p, other->rkey, IBV_WC_REM_INV_REQ_ERR, &wc,
		      "SEND_WITH_INV of another PD's window"))
		goto out;
	CHECK_OUT(wc.status == IBV_WC_REM_INV_REQ_ERR, "the receive: status %s, want %s",
		  ibv_wc_status_str(wc.status), ibv_wc_status_str(IBV_WC_REM_INV_REQ_ERR));
	ok = true;
out:
	pair_destroy(&p);
	if (mw)
		ibv_dealloc_mw(mw);
	if (other)
		ibv_dealloc_mw(other);
	if (pd2)
		ibv_dealloc_pd(pd2);
	return ok;
}
