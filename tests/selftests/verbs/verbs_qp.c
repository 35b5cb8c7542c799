// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, the QP and SRQ state machines: SRQ limit, query, refused
 * transitions, SQD draining, reset and reuse.
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

bool do_srq(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 2 } };
	struct ibv_srq *srq = ibv_create_srq(E.pd, &sa);
	struct qp_opts o = default_opts();
	struct ibv_srq_attr attr = { .srq_limit = 4 };
	struct pair p = { 0 };
	struct ibv_wc wc;
	bool ok = false;
	int i;

	if (!srq) {
		snprintf(why, sizeof(why), "ibv_create_srq: %s", strerror(errno));
		return false;
	}
	drain_async();
	o.srq = srq;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	for (i = 0; i < 8; i++) {
		struct ibv_sge sg = { (uintptr_t)p.s[1].buf + (size_t)i * 4096, 4096,
				      p.s[1].mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + (uint64_t)i, .sg_list = &sg,
					  .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(srq, &wr, &bad)) {
			snprintf(why, sizeof(why), "ibv_post_srq_recv failed");
			goto out;
		}
	}
	if (ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT)) {
		snprintf(why, sizeof(why), "arming the limit: %s", strerror(errno));
		goto out;
	}
	memset(&attr, 0, sizeof(attr));
	if (ibv_query_srq(srq, &attr) || attr.srq_limit != 4 || attr.max_wr < 16) {
		snprintf(why, sizeof(why), "query_srq: limit %u max_wr %u", attr.srq_limit,
			 attr.max_wr);
		goto out;
	}
	for (i = 0; i < 5; i++) {
		struct ibv_sge sg = { (uintptr_t)p.s[0].buf, 100, p.s[0].mr->lkey };
		struct send w = { .op = IBV_WR_SEND, .wr_id = (uint64_t)i, .sg = &sg, .nsge = 1,
				  .flags = IBV_SEND_SIGNALED };

		if (post_one(&p, 0, &w) ||
		    !expect_status(&p.s[0], (uint64_t)i, IBV_WC_SUCCESS, "SEND") ||
		    !expect_wc(&p.s[1], &wc, "SRQ receive"))
			goto out;
		if (wc.wr_id != 100 + (uint64_t)i || wc.byte_len != 100 ||
		    wc.qp_num != p.s[1].qp->qp_num) {
			snprintf(why, sizeof(why), "SRQ receive %d: wr_id %" PRIu64 " byte_len %u", i,
				 wc.wr_id, wc.byte_len);
			goto out;
		}
	}
	/* 3 left, below the limit of 4: one event, and the limit disarms. */
	if (!expect_async(IBV_EVENT_SRQ_LIMIT_REACHED, srq, "SRQ limit"))
		goto out;
	if (ibv_query_srq(srq, &attr) || attr.srq_limit != 0) {
		snprintf(why, sizeof(why), "limit still armed after the event (%u)",
			 attr.srq_limit);
		goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	ibv_destroy_srq(srq);
	return ok;
}

/* Receive WQE k of do_srq_resize: 256 bytes at k * 256, wr_id 100 + k. */
static bool post_srq_k(struct ibv_srq *srq, const struct side *s, int k)
{
	struct ibv_sge sg = { (uintptr_t)s->buf + (size_t)k * 256, 256, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 100 + (uint64_t)k, .sg_list = &sg, .num_sge = 1 },
			   *bad;

	CHECK(!ibv_post_srq_recv(srq, &wr, &bad), "ibv_post_srq_recv %d: refused", k);
	return true;
}

/* SEND k (100 bytes of k) and its receive, which must be WQE k's. */
static bool srq_send_k(struct pair *p, int k)
{
	struct ibv_sge sg = { (uintptr_t)p->s[0].buf, 100, p->s[0].mr->lkey };
	struct send w = { .op = IBV_WR_SEND, .wr_id = (uint64_t)k, .sg = &sg, .nsge = 1,
			  .flags = IBV_SEND_SIGNALED };
	uint8_t want[100];
	struct ibv_wc wc;

	memset(p->s[0].buf, k, sizeof(want));
	memset(want, k, sizeof(want));
	if (post_one(p, 0, &w) || !expect_status(&p->s[0], (uint64_t)k, IBV_WC_SUCCESS, "SEND") ||
	    !expect_wc(&p->s[1], &wc, "SRQ receive"))
		return false;
	CHECK(wc.wr_id == 100 + (uint64_t)k && wc.byte_len == 100,
	      "receive of SEND %d: wr_id %" PRIu64 " byte_len %u", k, wc.wr_id, wc.byte_len);
	CHECK(!memcmp(p->s[1].buf + (size_t)k * 256, want, sizeof(want)),
	      "SEND %d's bytes are not in its receive buffer", k);
	return true;
}

/*
 * ibv_modify_srq with IBV_SRQ_MAX_WR, as rxe does it: the WQEs posted and
 * not taken stay and are taken first; the SRQ then holds more than it
 * did.  A depth below those WQEs or below the armed limit is EINVAL and
 * loses none.
 */
bool do_srq_resize(void)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(E.pd, &sa);
	struct qp_opts o = default_opts();
	struct ibv_device_attr da;
	struct ibv_srq_attr attr;
	struct pair p = { 0 };
	bool ok = false;
	int k;

	if (!srq) {
		snprintf(why, sizeof(why), "ibv_create_srq: %s", strerror(errno));
		return false;
	}
	CHECK_OUT(!ibv_query_device(E.ctx, &da) &&
		  (da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE),
		  "ibv_query_device does not announce IBV_DEVICE_SRQ_RESIZE");
	o.srq = srq;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	for (k = 0; k < 6; k++)
		if (!post_srq_k(srq, &p.s[1], k))
			goto out;
	if (!srq_send_k(&p, 0))
		goto out;
	/* Five posted: four is too few. */
	attr = (struct ibv_srq_attr){ .max_wr = 4 };
	k = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	CHECK_OUT(k == EINVAL, "max_wr 4 below the 5 posted: %d (%s), not EINVAL", k,
		  strerror(k));
	/* Armed at 6: five is below it. */
	attr = (struct ibv_srq_attr){ .srq_limit = 6 };
	CHECK_OUT(!ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), "arming the limit at 6");
	attr = (struct ibv_srq_attr){ .max_wr = 5 };
	k = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	CHECK_OUT(k == EINVAL, "max_wr 5 below the limit 6: %d (%s), not EINVAL", k, strerror(k));
	attr = (struct ibv_srq_attr){ .srq_limit = 0 };
	CHECK_OUT(!ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), "disarming the limit");
	attr = (struct ibv_srq_attr){ .max_wr = 32 };
	k = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	CHECK_OUT(!k, "max_wr 32: %s", strerror(k));
	CHECK_OUT(!ibv_query_srq(srq, &attr) && attr.max_wr >= 32, "query_srq: max_wr %u",
		  attr.max_wr);
	/* 5 old and 20 new: more than the 8 it held. */
	for (k = 6; k < 26; k++)
		if (!post_srq_k(srq, &p.s[1], k))
			goto out;
	for (k = 1; k < 26; k++)
		if (!srq_send_k(&p, k))
			goto out;
	ok = true;
out:
	pair_destroy(&p);
	ibv_destroy_srq(srq);
	return ok;
}

static bool check_query(const struct pair *p)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr init;

	CHECK(!ibv_query_qp(p->s[0].qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS |
			    IBV_QP_AV | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_CAP | IBV_QP_PORT | IBV_QP_PKEY_INDEX, &init),
	      "ibv_query_qp: %s", strerror(errno));
	CHECK(a.qp_state == IBV_QPS_RTS, "qp_state %d", a.qp_state);
	CHECK(a.path_mtu == IBV_MTU_1024, "path_mtu %d", a.path_mtu);
	CHECK(a.dest_qp_num == p->s[1].qp->qp_num, "dest_qp_num %u", a.dest_qp_num);
	CHECK(a.rq_psn == 0x123 && a.sq_psn == 0x123, "psns %#x %#x", a.rq_psn, a.sq_psn);
	CHECK(a.timeout == 12 && a.retry_cnt == 5 && a.rnr_retry == 3,
	      "timeout %u retry_cnt %u rnr_retry %u", a.timeout, a.retry_cnt, a.rnr_retry);
	CHECK(a.min_rnr_timer == 9, "min_rnr_timer %u", a.min_rnr_timer);
	CHECK(a.qp_access_flags == (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
	      "access %#x", a.qp_access_flags);
	CHECK(a.max_rd_atomic == 4 && a.max_dest_rd_atomic == 4, "rd_atomic %u/%u",
	      a.max_rd_atomic, a.max_dest_rd_atomic);
	CHECK(a.ah_attr.is_global && a.ah_attr.grh.sgid_index == E.gid_index &&
	      !memcmp(&a.ah_attr.grh.dgid, &E.gid, sizeof(E.gid)) && a.ah_attr.port_num == 1,
	      "address vector differs");
	CHECK(a.cap.max_send_wr >= 64 && a.cap.max_recv_wr >= 64 &&
	      a.cap.max_send_sge >= MAX_SGE && a.cap.max_inline_data >= 128,
	      "caps %u/%u/%u/%u", a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge,
	      a.cap.max_inline_data);
	CHECK(init.qp_type == IBV_QPT_RC && init.send_cq == p->s[0].cq, "init attributes differ");
	return true;
}

bool do_query_qp(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	bool ok;

	o.timeout = 12;
	o.retry_cnt = 5;
	o.rnr_retry = 3;
	o.min_rnr_timer = 9;
	o.access[0] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	ok = pair_create(&p, IBV_QPT_RC, &o) && check_query(&p);
	pair_destroy(&p);
	return ok;
}

bool do_bad_transitions(void)
{
	struct qp_opts o = default_opts();
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };
	struct pair p;
	bool ok = false;

	o.stop_at_init = true;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	/* INIT to RTS skips RTR. */
	if (!ibv_modify_qp(p.s[0].qp, &a, IBV_QP_STATE)) {
		snprintf(why, sizeof(why), "INIT->RTS was accepted");
		goto out;
	}
	/* RTR without the attributes RC requires. */
	a.qp_state = IBV_QPS_RTR;
	if (!ibv_modify_qp(p.s[0].qp, &a, IBV_QP_STATE)) {
		snprintf(why, sizeof(why), "RC INIT->RTR without a path was accepted");
		goto out;
	}
	if (qp_to_rtr(p.s[0].qp, IBV_QPT_RC, p.s[1].qp->qp_num, &o)) {
		snprintf(why, sizeof(why), "a good INIT->RTR failed: %s", strerror(errno));
		goto out;
	}
	/* RTS without timeout, retry counts and PSN. */
	a.qp_state = IBV_QPS_RTS;
	if (!ibv_modify_qp(p.s[0].qp, &a, IBV_QP_STATE)) {
		snprintf(why, sizeof(why), "RC RTR->RTS without timeouts was accepted");
		goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

bool do_sqd(void)
{
	struct qp_opts o = default_opts();
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct ibv_qp_init_attr init;
	bool ok = false, started;
	struct ibv_wc wc = { 0 };
	struct pair p;
	int n;

	drain_async();
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	fill_random(p.s[0].buf, 4096);
	if (!post_write(&p, 1, IBV_SEND_SIGNALED, 0, 4096))
		goto out;
	if (ibv_modify_qp(p.s[0].qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY)) {
		snprintf(why, sizeof(why), "RTS->SQD: %s", strerror(errno));
		goto out;
	}
	if (!expect_async(IBV_EVENT_SQ_DRAINED, p.s[0].qp, "SQD"))
		goto out;
	/*
	 * The WRITE posted before SQD completes in the drain if the device had
	 * started it; one it had not started waits for RTS (IB 10.3.1, and so
	 * do rxe and mlx5).  Which of the two depends on timing.
	 */
	n = poll_wc(&p.s[0], &wc, QUIET_MS);
	if (n < 0 || (n == 1 && (wc.wr_id != 1 || wc.status != IBV_WC_SUCCESS))) {
		snprintf(why, sizeof(why), "the WRITE before SQD: n %d wr_id %" PRIu64 " status %s",
			 n, wc.wr_id, ibv_wc_status_str(wc.status));
		goto out;
	}
	started = n == 1;
	if (!started)
		verbs_diag("the WRITE before SQD had not started: it waits for RTS");
	memset(&a, 0, sizeof(a));
	if (ibv_query_qp(p.s[0].qp, &a, IBV_QP_STATE, &init) || a.qp_state != IBV_QPS_SQD) {
		snprintf(why, sizeof(why), "query in SQD: state %d", a.qp_state);
		goto out;
	}
	/* Posted in SQD: waits until RTS again. */
	if (!post_write(&p, 2, IBV_SEND_SIGNALED, 0, 64) || !expect_no_wc(&p.s[0], "in SQD"))
		goto out;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(p.s[0].qp, &a, IBV_QP_STATE)) {
		snprintf(why, sizeof(why), "SQD->RTS: %s", strerror(errno));
		goto out;
	}
	if (!started && !expect_status(&p.s[0], 1, IBV_WC_SUCCESS, "the WRITE before SQD"))
		goto out;
	if (!expect_status(&p.s[0], 2, IBV_WC_SUCCESS, "the WRITE posted in SQD"))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/* ERR, then RESET and up again: the rings start over and traffic flows. */
bool do_reset_and_reuse(bool ex)
{
	struct qp_opts o = default_opts();
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct pair p;
	bool ok = false;
	int i, round;

	o.ex = ex;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	for (round = 0; round < 3; round++) {
		/* A few messages so the rings are part-used. */
		for (i = 0; i < 5 + round; i++)
			if (!send_msg(&p, (uint64_t)i, 0) ||
			    !expect_status(&p.s[1], (uint64_t)i, IBV_WC_SUCCESS, "recv"))
				goto out;
		for (i = 0; i < 2; i++) {
			a.qp_state = IBV_QPS_ERR;
			if (ibv_modify_qp(p.s[i].qp, &a, IBV_QP_STATE)) {
				snprintf(why, sizeof(why), "to ERR: %s", strerror(errno));
				goto out;
			}
			a.qp_state = IBV_QPS_RESET;
			if (ibv_modify_qp(p.s[i].qp, &a, IBV_QP_STATE) ||
			    qp_to_init(p.s[i].qp, IBV_QPT_RC, ALL_ACCESS)) {
				snprintf(why, sizeof(why), "to RESET and INIT: %s", strerror(errno));
				goto out;
			}
		}
		if (!pair_connect(&p))
			goto out;
	}
	if (!xfer(&p, IBV_WR_RDMA_WRITE_WITH_IMM, false, 2, 3000))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}
