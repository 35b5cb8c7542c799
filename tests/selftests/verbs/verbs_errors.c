// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, errors: every error status and errno the verbs spec promises
 * for bad keys, bounds and access, RNR, flushing, wrong states and limits.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verbs_common.h"
#include "verbs_names.h"

bool do_bad_access(enum bad_kind kind)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge sg;
	struct send w = { .op = IBV_WR_RDMA_WRITE, .wr_id = 77, .flags = IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1 };
	enum ibv_wc_status want = IBV_WC_REM_ACCESS_ERR;
	uint8_t *target, *copy = malloc(8192);
	bool ok = false;

	if (!copy)
		return false;
	if (kind == BAD_REMOTE_ACCESS_WRITE)
		o.access[1] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	if (kind == BAD_REMOTE_ACCESS_READ)
		o.access[1] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	target = p.s[1].buf + REMOTE_OFF;
	fill_random(target, 8192);
	memcpy(copy, target, 8192);
	fill_random(p.s[0].buf, 8192);
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf, 4096, p.s[0].mr->lkey };
	w.raddr = (uintptr_t)target;
	w.rkey = p.s[1].mr->rkey;
	switch (kind) {
	case BAD_LKEY:
		sg.lkey ^= 0x5a5a00;
		want = IBV_WC_LOC_PROT_ERR;
		break;
	case BAD_SGE_BOUNDS:
		sg.addr = (uintptr_t)p.s[0].buf + BUF_SIZE - 100;
		want = IBV_WC_LOC_PROT_ERR;
		break;
	case BAD_RKEY:
		w.rkey ^= 0x5a5a00;
		break;
	case BAD_REMOTE_ACCESS_WRITE:
		break;
	case BAD_REMOTE_BOUNDS:
		/* Starts inside the MR, ends 100 bytes past it. */
		w.raddr = (uintptr_t)p.s[1].buf + BUF_SIZE - 4096 + 100;
		target = p.s[1].buf + BUF_SIZE - 8192;
		fill_random(target, 8192);
		memcpy(copy, target, 8192);
		break;
	case BAD_REMOTE_ACCESS_READ:
		w.op = IBV_WR_RDMA_READ;
		break;
	}
	if (post_one(&p, 0, &w)) {
		snprintf(why, sizeof(why), "post failed");
		goto out;
	}
	if (!expect_status(&p.s[0], 77, want, "the bad WR"))
		goto out;
	if (memcmp(target, copy, 8192)) {
		snprintf(why, sizeof(why), "remote memory changed at byte %zu",
			 first_diff(target, copy, 8192));
		goto out;
	}
	/* The QP is in error now: what follows is flushed. */
	w.wr_id = 78;
	w.rkey = p.s[1].mr->rkey;
	sg.lkey = p.s[0].mr->lkey;
	sg.addr = (uintptr_t)p.s[0].buf;
	w.raddr = (uintptr_t)p.s[1].buf + REMOTE_OFF;
	if (post_one(&p, 0, &w) || !expect_status(&p.s[0], 78, IBV_WC_WR_FLUSH_ERR, "after it"))
		goto out;
	ok = true;
out:
	free(copy);
	pair_destroy(&p);
	return ok;
}

/* One signaled 64-byte SEND from side i to the other, which receives it
 * into READ_OFF (behind a GRH for UD): both completions and the bytes. */
static bool sq_error_send(struct pair *p, int i, uint64_t wr_id)
{
	struct side *to = &p->s[1 - i];
	size_t grh = p->type == IBV_QPT_UD ? GRH_SIZE : 0;
	struct ibv_sge sg = { (uintptr_t)p->s[i].buf, 64, p->s[i].mr->lkey };
	struct ibv_sge rsg = { (uintptr_t)to->buf + READ_OFF, (uint32_t)(64 + grh), to->mr->lkey };
	struct send w = { .op = IBV_WR_SEND, .wr_id = wr_id, .flags = IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1 };
	struct ibv_wc wc;

	fill_random(p->s[i].buf, 64);
	CHECK(!post_recv(to, wr_id + 100, &rsg, 1), "post_recv failed");
	CHECK(!post_one(p, i, &w), "post_one failed");
	if (!expect_status(&p->s[i], wr_id, IBV_WC_SUCCESS, "the send") ||
	    !expect_wc(to, &wc, "the receive"))
		return false;
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == wr_id + 100 && wc.byte_len == 64 + grh,
	      "receive: wr_id %" PRIu64 " status %s byte_len %u", wc.wr_id,
	      ibv_wc_status_str(wc.status), wc.byte_len);
	CHECK(!memcmp(to->buf + READ_OFF + grh, p->s[i].buf, 64), "the received bytes differ");
	return true;
}

/*
 * UC and UD: a send WR that fails (a bad lkey) takes the send queue to SQE
 * (IBA 10.3.1), as ib_mad expects of its QPs, not the QP to ERR: it
 * completes with LOC_PROT_ERR, the next WR flushes, ibv_query_qp says
 * SQE, a message from the peer is still received, and SQE->RTS sends again.
 */
bool do_sq_error(enum ibv_qp_type type)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge sg;
	struct send w = { .op = IBV_WR_SEND, .wr_id = 1, .flags = IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1 };
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	bool ok = false;

	if (!pair_create(&p, type, &o))
		goto out;
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf, 64, p.s[0].mr->lkey ^ 0x5a5a00 };
	CHECK_OUT(!post_one(&p, 0, &w), "post failed");
	if (!expect_status(&p.s[0], 1, IBV_WC_LOC_PROT_ERR, "the bad WR"))
		goto out;
	sg.lkey = p.s[0].mr->lkey;
	w.wr_id = 2;
	CHECK_OUT(!post_one(&p, 0, &w), "post after the error: %s", strerror(errno));
	if (!expect_status(&p.s[0], 2, IBV_WC_WR_FLUSH_ERR, "the WR after it"))
		goto out;
	CHECK_OUT(!ibv_query_qp(p.s[0].qp, &a, IBV_QP_STATE, &ia) && a.qp_state == IBV_QPS_SQE,
		  "ibv_query_qp: state %d, want SQE (%d)", a.qp_state, IBV_QPS_SQE);
	if (!sq_error_send(&p, 1, 3))
		goto out;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	CHECK_OUT(!ibv_modify_qp(p.s[0].qp, &a, IBV_QP_STATE), "SQE->RTS: %s", strerror(errno));
	if (!sq_error_send(&p, 0, 4))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

bool do_rnr(bool recover)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge sg, rsg;
	struct send w = { .op = IBV_WR_SEND, .wr_id = 5, .flags = IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1 };
	bool ok = false;

	o.rnr_retry = recover ? 7 : 2;	/* 7: retry for ever */
	o.min_rnr_timer = 1;		/* 0.01 ms */
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf, 256, p.s[0].mr->lkey };
	rsg = (struct ibv_sge){ (uintptr_t)p.s[1].buf, 256, p.s[1].mr->lkey };
	if (post_one(&p, 0, &w)) {
		snprintf(why, sizeof(why), "post failed");
		goto out;
	}
	if (!recover) {
		if (!expect_status(&p.s[0], 5, IBV_WC_RNR_RETRY_EXC_ERR, "SEND with no receive"))
			goto out;
	} else {
		if (!expect_no_wc(&p.s[0], "while the receiver is not ready"))
			goto out;
		if (post_recv(&p.s[1], 6, &rsg, 1) ||
		    !expect_status(&p.s[0], 5, IBV_WC_SUCCESS, "SEND once a receive is posted") ||
		    !expect_status(&p.s[1], 6, IBV_WC_SUCCESS, "the receive"))
			goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

bool do_flush(void)
{
	struct qp_opts o = default_opts();
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct pair p;
	struct ibv_sge rsg;
	bool ok = false;
	int i;

	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	rsg = (struct ibv_sge){ (uintptr_t)p.s[1].buf, 256, p.s[1].mr->lkey };
	for (i = 0; i < 10; i++)
		if (post_recv(&p.s[1], 200 + (uint64_t)i, &rsg, 1)) {
			snprintf(why, sizeof(why), "post_recv failed");
			goto out;
		}
	if (ibv_modify_qp(p.s[1].qp, &a, IBV_QP_STATE)) {
		snprintf(why, sizeof(why), "to ERR: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 10; i++)
		if (!expect_status(&p.s[1], 200 + (uint64_t)i, IBV_WC_WR_FLUSH_ERR, "posted receive"))
			goto out;
	/* Posted in ERR: flushed too, sends and receives alike. */
	if (post_recv(&p.s[1], 300, &rsg, 1) ||
	    !expect_status(&p.s[1], 300, IBV_WC_WR_FLUSH_ERR, "receive posted in ERR"))
		goto out;
	{
		struct ibv_sge sg = { (uintptr_t)p.s[1].buf, 64, p.s[1].mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 301, .sg_list = &sg, .num_sge = 1,
					  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		if (ibv_post_send(p.s[1].qp, &wr, &bad) ||
		    !expect_status(&p.s[1], 301, IBV_WC_WR_FLUSH_ERR, "send posted in ERR"))
			goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/*
 * Posting sends before RTS (RESET, INIT, RTR) is EINVAL, through
 * ibv_post_send (with *bad at the WR) and through ibv_wr_complete (ex),
 * and posts nothing: a refused WR would run once the QP reaches RTS.
 * Receives in RESET are EINVAL too.
 */
bool do_wrong_state(bool ex)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge sg;
	struct send w = { .op = IBV_WR_SEND, .wr_id = 1, .flags = IBV_SEND_SIGNALED, .sg = &sg,
			  .nsge = 1 };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1 }, *rbad = NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	const char *const state[] = { "INIT", "RTR", "RESET" };
	bool ok = false;
	int i, err;

	o.stop_at_init = true;
	o.ex = ex;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf, 64, p.s[0].mr->lkey };
	for (i = 0; i < 3; i++) {
		if (i == 1 && qp_to_rtr(p.s[0].qp, IBV_QPT_RC, p.s[1].qp->qp_num, &o)) {
			snprintf(why, sizeof(why), "to RTR failed");
			goto out;
		}
		if (i == 2 && ibv_modify_qp(p.s[0].qp, &a, IBV_QP_STATE)) {
			snprintf(why, sizeof(why), "to RESET failed");
			goto out;
		}
		err = post_one(&p, 0, &w);
		if (err != EINVAL) {
			snprintf(why, sizeof(why), "a send in %s (%s) returned %d", state[i],
				 ex ? "ibv_wr_complete" : "ibv_post_send", err);
			goto out;
		}
	}
	err = ibv_post_recv(p.s[0].qp, &rwr, &rbad);
	if (err != EINVAL || rbad != &rwr) {
		snprintf(why, sizeof(why), "post_recv in RESET returned %d", err);
		goto out;
	}
	/* Up to RTS: none of the refused sends may run now. */
	if (qp_to_init(p.s[0].qp, IBV_QPT_RC, o.access[0]) ||
	    qp_to_rtr(p.s[0].qp, IBV_QPT_RC, p.s[1].qp->qp_num, &o) ||
	    qp_to_rts(p.s[0].qp, IBV_QPT_RC, &o)) {
		snprintf(why, sizeof(why), "to RTS failed");
		goto out;
	}
	if (!expect_no_wc(&p.s[0], "send refused before RTS"))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

bool do_too_many_sends(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge sg, rsg;
	struct send w = { .op = IBV_WR_SEND, .wr_id = 0, .flags = IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1 };
	uint32_t depth, i;
	bool ok = false;
	int err;

	o.max_send_wr = 16;
	o.rnr_retry = 7;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	depth = p.s[0].cap.max_send_wr;
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf, 64, p.s[0].mr->lkey };
	rsg = (struct ibv_sge){ (uintptr_t)p.s[1].buf, 64, p.s[1].mr->lkey };
	/* No receives: the first SEND waits on RNR and holds the queue. */
	for (i = 0; i < depth; i++) {
		w.wr_id = i;
		err = post_one(&p, 0, &w);
		if (err) {
			snprintf(why, sizeof(why), "WR %u of %u refused: %s", i, depth,
				 strerror(abs(err)));
			goto out;
		}
	}
	w.wr_id = depth;
	err = post_one(&p, 0, &w);
	if (err != ENOMEM) {
		snprintf(why, sizeof(why), "WR %u beyond max_send_wr %u returned %d", depth, depth,
			 err);
		goto out;
	}
	for (i = 0; i < depth; i++)
		if (post_recv(&p.s[1], i, &rsg, 1)) {
			snprintf(why, sizeof(why), "post_recv failed");
			goto out;
		}
	for (i = 0; i < depth; i++)
		if (!expect_status(&p.s[0], i, IBV_WC_SUCCESS, "queued SEND"))
			goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

bool do_too_many_recvs(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge sg;
	struct ibv_recv_wr *wrs = NULL, *bad = NULL;
	uint32_t depth, i;
	bool ok = false;
	int err;

	o.max_recv_wr = 16;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	depth = p.s[1].cap.max_recv_wr;
	wrs = calloc(depth + 1, sizeof(*wrs));
	if (!wrs)
		goto out;
	sg = (struct ibv_sge){ (uintptr_t)p.s[1].buf, 64, p.s[1].mr->lkey };
	for (i = 0; i <= depth; i++) {
		wrs[i].wr_id = i;
		wrs[i].sg_list = &sg;
		wrs[i].num_sge = 1;
		wrs[i].next = i < depth ? &wrs[i + 1] : NULL;
	}
	err = ibv_post_recv(p.s[1].qp, wrs, &bad);
	if (err != ENOMEM || bad != &wrs[depth]) {
		snprintf(why, sizeof(why), "%u receives into %u slots: returned %d, bad_wr %s",
			 depth + 1, depth, err, bad == &wrs[depth] ? "right" : "wrong");
		goto out;
	}
	/* The first depth were posted: they all take a message. */
	for (i = 0; i < depth; i++) {
		struct ibv_sge ssg = { (uintptr_t)p.s[0].buf, 64, p.s[0].mr->lkey };
		struct send w = { .op = IBV_WR_SEND, .wr_id = 1000 + i, .sg = &ssg, .nsge = 1,
				  .flags = IBV_SEND_SIGNALED };

		if (post_one(&p, 0, &w) ||
		    !expect_status(&p.s[0], 1000 + i, IBV_WC_SUCCESS, "SEND") ||
		    !expect_status(&p.s[1], i, IBV_WC_SUCCESS, "posted receive"))
			goto out;
	}
	ok = true;
out:
	free(wrs);
	pair_destroy(&p);
	return ok;
}

bool do_too_many_sges(bool ex)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge sg[ALL_SGE + 1];
	struct send w = { .op = IBV_WR_SEND, .wr_id = 1, .flags = IBV_SEND_SIGNALED, .sg = sg };
	uint32_t n;
	bool ok = false;
	int err;

	o.ex = ex;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	n = p.s[0].cap.max_send_sge + 1;
	if (n > ALL_SGE + 1) {
		snprintf(why, sizeof(why), "max_send_sge %u is more than this test covers", n - 1);
		goto out;
	}
	make_sges(&p.s[0], 0, 1000, (int)n, sg);
	w.nsge = (int)n;
	err = post_one(&p, 0, &w);
	if (err != EINVAL) {
		snprintf(why, sizeof(why), "%u SGEs (max %u): post returned %d", n, n - 1, err);
		goto out;
	}
	n = p.s[1].cap.max_recv_sge + 1;
	if (n <= ALL_SGE + 1) {
		make_sges(&p.s[1], 0, 1000, (int)n, sg);
		err = post_recv(&p.s[1], 1, sg, (int)n);
		if (err != EINVAL) {
			snprintf(why, sizeof(why), "%u receive SGEs: post_recv returned %d", n, err);
			goto out;
		}
	}
	/* Nothing of it reached the device. */
	if (!expect_no_wc(&p.s[0], "refused WR"))
		goto out;
	if (!xfer(&p, IBV_WR_SEND, false, 1, 100))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

bool do_inline_too_big(bool ex)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge sg;
	struct send w = { .op = IBV_WR_SEND, .wr_id = 1, .sg = &sg, .nsge = 1,
			  .flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE };
	bool ok = false;
	int err;

	o.ex = ex;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf, p.s[0].cap.max_inline_data + 1, 0 };
	err = post_one(&p, 0, &w);
	if (err != EINVAL) {
		snprintf(why, sizeof(why), "inline of %u bytes (max %u) returned %d", sg.length,
			 p.s[0].cap.max_inline_data, err);
		goto out;
	}
	if (!expect_no_wc(&p.s[0], "refused WR"))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/* ibv_wr_complete() with an error posts none of the batch. */
bool do_wr_batch_error(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge sg[ALL_SGE + 1];
	struct ibv_qp_ex *x;
	bool ok = false;
	int err;

	o.ex = true;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	x = p.s[0].qpx;
	if (p.s[0].cap.max_send_sge > ALL_SGE) {
		snprintf(why, sizeof(why), "max_send_sge %u", p.s[0].cap.max_send_sge);
		goto out;
	}
	make_sges(&p.s[0], 0, 1000, (int)p.s[0].cap.max_send_sge + 1, sg);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, p.s[1].mr->rkey, (uintptr_t)p.s[1].buf + REMOTE_OFF);
	ibv_wr_set_sge(x, sg[0].lkey, sg[0].addr, sg[0].length);
	x->wr_id = 2;
	ibv_wr_rdma_write(x, p.s[1].mr->rkey, (uintptr_t)p.s[1].buf + REMOTE_OFF);
	ibv_wr_set_sge_list(x, p.s[0].cap.max_send_sge + 1, sg);
	err = ibv_wr_complete(x);
	if (err != EINVAL) {
		snprintf(why, sizeof(why), "ibv_wr_complete returned %d", err);
		goto out;
	}
	if (!expect_no_wc(&p.s[0], "the failed batch"))
		goto out;
	if (!xfer(&p, IBV_WR_RDMA_WRITE, false, 2, 1000))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}
