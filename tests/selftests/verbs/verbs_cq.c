// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, completion queues: events (next and solicited), resize,
 * overrun.
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

static bool get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq *want, int timeout_ms)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	if (!fd_readable(ch->fd, timeout_ms))
		return false;
	if (ibv_get_cq_event(ch, &cq, &cq_ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	return cq == want;
}

bool do_cq_events(bool solicited)
{
	struct qp_opts o = default_opts();
	struct ibv_comp_channel *ch = ibv_create_comp_channel(E.ctx);
	struct pair p = { 0 };
	struct ibv_wc wc;
	bool ok = false;

	if (!ch) {
		snprintf(why, sizeof(why), "ibv_create_comp_channel: %s", strerror(errno));
		return false;
	}
	o.channel = ch;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	if (ibv_req_notify_cq(p.s[1].cq, solicited)) {
		snprintf(why, sizeof(why), "ibv_req_notify_cq failed");
		goto out;
	}
	if (solicited) {
		/* An unsolicited message completes but does not wake us. */
		if (!send_msg(&p, 1, 0) || !expect_status(&p.s[1], 1, IBV_WC_SUCCESS, "recv"))
			goto out;
		if (fd_readable(ch->fd, QUIET_MS)) {
			snprintf(why, sizeof(why), "an unsolicited message raised an event");
			goto out;
		}
		if (!send_msg(&p, 2, IBV_SEND_SOLICITED))
			goto out;
		if (!get_cq_event(ch, p.s[1].cq, TIMEOUT_MS)) {
			snprintf(why, sizeof(why), "no event for a solicited message");
			goto out;
		}
		if (!expect_status(&p.s[1], 2, IBV_WC_SUCCESS, "recv"))
			goto out;
	} else {
		if (!send_msg(&p, 1, 0))
			goto out;
		if (!get_cq_event(ch, p.s[1].cq, TIMEOUT_MS)) {
			snprintf(why, sizeof(why), "no completion event");
			goto out;
		}
		if (!expect_status(&p.s[1], 1, IBV_WC_SUCCESS, "recv"))
			goto out;
		/* One event per arm: the next completion stays quiet... */
		if (!send_msg(&p, 2, 0) || !expect_status(&p.s[1], 2, IBV_WC_SUCCESS, "recv"))
			goto out;
		if (fd_readable(ch->fd, QUIET_MS)) {
			snprintf(why, sizeof(why), "an event without arming");
			goto out;
		}
		/* ...until we arm again. */
		if (ibv_req_notify_cq(p.s[1].cq, 0) || !send_msg(&p, 3, 0) ||
		    !get_cq_event(ch, p.s[1].cq, TIMEOUT_MS)) {
			snprintf(why, sizeof(why), "no event after re-arming");
			goto out;
		}
		if (poll_wc(&p.s[1], &wc, TIMEOUT_MS) != 1 || wc.wr_id != 3) {
			snprintf(why, sizeof(why), "the third receive is missing");
			goto out;
		}
	}
	ok = true;
out:
	pair_destroy(&p);
	ibv_destroy_comp_channel(ch);
	return ok;
}

/*
 * ibv_resize_cq to fewer entries than are still to be polled: EINVAL (as
 * rxe and mlx5 say), and every completion still there, in order.
 */
bool do_resize_cq_below(void)
{
	struct qp_opts o = default_opts();
	struct ibv_wc wc;
	struct pair p;
	bool ok = false;
	int i, err;

	o.cqe = 64;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	fill_random(p.s[0].buf, 4096);
	for (i = 1; i <= 10; i++)
		if (!post_write(&p, (uint64_t)i, IBV_SEND_SIGNALED, (size_t)(i - 1) * 64, 64))
			goto out;
	/* All ten in the CQ, unpolled: the last WRITE's data is there. */
	if (!wait_bytes(p.s[1].buf + REMOTE_OFF + 576, p.s[0].buf + 576, 64))
		goto out;
	sleep_ms(50);
	err = ibv_resize_cq(p.s[0].cq, 4);
	if (err != EINVAL) {
		snprintf(why, sizeof(why), "ibv_resize_cq to 4 below 10 unpolled returned %d (%s)",
			 err, strerror(err));
		goto out;
	}
	for (i = 1; i <= 10; i++)
		if (!expect_status(&p.s[0], (uint64_t)i, IBV_WC_SUCCESS, "after the refused resize"))
			goto out;
	if (poll_wc(&p.s[0], &wc, 100) != 0) {
		snprintf(why, sizeof(why), "an eleventh completion (wr_id %" PRIu64 ")", wc.wr_id);
		goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

bool do_resize_cq(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	bool ok = false;
	int i;

	o.cqe = 4;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	fill_random(p.s[0].buf, 4096);
	for (i = 1; i <= 3; i++)
		if (!post_write(&p, (uint64_t)i, IBV_SEND_SIGNALED, (size_t)i * 1024, 1024))
			goto out;
	/* Let the three complete into the small ring, unpolled. */
	if (!wait_bytes(p.s[1].buf + REMOTE_OFF + 3072, p.s[0].buf + 3072, 1024))
		goto out;
	sleep_ms(50);
	if (ibv_resize_cq(p.s[0].cq, 200)) {
		snprintf(why, sizeof(why), "ibv_resize_cq: %s", strerror(errno));
		goto out;
	}
	if (p.s[0].cq->cqe < 200) {
		snprintf(why, sizeof(why), "resized CQ reports %d entries", p.s[0].cq->cqe);
		goto out;
	}
	for (i = 1; i <= 3; i++)
		if (!expect_status(&p.s[0], (uint64_t)i, IBV_WC_SUCCESS, "moved completion"))
			goto out;
	/* The bigger ring holds what the small one could not. */
	for (i = 0; i < 40; i++)
		if (!post_write(&p, 100 + (uint64_t)i, IBV_SEND_SIGNALED, 0, 64))
			goto out;
	for (i = 0; i < 40; i++)
		if (!expect_status(&p.s[0], 100 + (uint64_t)i, IBV_WC_SUCCESS, "after resize"))
			goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/*
 * libfabric's rxm sizes its verbs CQ for every peer it may have: (128 receives
 * + 128 sends) x FI_UNIVERSE_SIZE (1024) = 262144 entries.  The device must
 * take that, complete into it, and refuse one entry past max_cqe.
 */
#define RXM_MSG_CQ_ENTRIES (256 * 1024)

bool do_cq_max_cqe(void)
{
	struct qp_opts o = default_opts();
	struct ibv_device_attr attr;
	struct ibv_cq *over;
	struct pair p = {};
	bool ok = false;
	int i;

	if (ibv_query_device(E.ctx, &attr)) {
		snprintf(why, sizeof(why), "ibv_query_device: %s", strerror(errno));
		return false;
	}
	if (attr.max_cqe < RXM_MSG_CQ_ENTRIES) {
		snprintf(why, sizeof(why), "max_cqe %d < %d", attr.max_cqe, RXM_MSG_CQ_ENTRIES);
		return false;
	}
	errno = 0;
	over = ibv_create_cq(E.ctx, attr.max_cqe + 1, NULL, NULL, 0);
	if (over || errno != EINVAL) {
		snprintf(why, sizeof(why), "a CQ of max_cqe + 1 entries: %s",
			 over ? "created" : strerror(errno));
		if (over)
			ibv_destroy_cq(over);
		return false;
	}
	o.cqe = attr.max_cqe;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	if (p.s[0].cq->cqe < attr.max_cqe) {
		snprintf(why, sizeof(why), "CQ of %d reports %d entries", attr.max_cqe,
			 p.s[0].cq->cqe);
		goto out;
	}
	fill_random(p.s[0].buf, 4096);
	for (i = 0; i < 64; i++)
		if (!post_write(&p, 1 + (uint64_t)i, IBV_SEND_SIGNALED, (size_t)i * 64, 64))
			goto out;
	for (i = 0; i < 64; i++)
		if (!expect_status(&p.s[0], 1 + (uint64_t)i, IBV_WC_SUCCESS, "max_cqe CQ"))
			goto out;
	if (memcmp(p.s[1].buf + REMOTE_OFF, p.s[0].buf, 4096)) {
		snprintf(why, sizeof(why), "the written bytes differ");
		goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

bool do_cq_overrun(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	bool ok = false;
	int i;

	drain_async();
	o.cqe = 1;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	for (i = 0; i <= p.s[0].cq->cqe + 1; i++)
		if (!post_write(&p, (uint64_t)i, IBV_SEND_SIGNALED, 0, 64))
			goto out;
	if (!expect_async(IBV_EVENT_CQ_ERR, p.s[0].cq, "CQ overrun"))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/*
 * ibv_destroy_qp takes the QP's completions that were not polled out of its
 * CQ, as mlx5 does: libfabric's verbs provider drains its CQs right after
 * destroying a QP and hands what it finds to contexts it freed with the QP.
 * So does a move to RESET (mlx5 again; rdma-core's test_mr_rereg_pd counts
 * on it): after ERR and RESET, the QP's flushed receive is not found by the
 * traffic that follows.  Two QPs complete into one small CQ, interleaved;
 * the second is destroyed (or, with a receive posted, moved to ERR and to
 * RESET) with its completions unpolled, and the CQ yields exactly the
 * first's, in order.  Three rounds, so that the ring wraps.
 */
/* q's first QP goes: to ERR with a receive posted (a flush) and to RESET. */
static bool qp_reset_unpolled(struct pair *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge sg = { (uintptr_t)q->s[0].buf, 64, q->s[0].mr->lkey };

	CHECK(!post_recv(&q->s[0], 999, &sg, 1), "post_recv of the receive to flush failed");
	CHECK(!ibv_modify_qp(q->s[0].qp, &a, IBV_QP_STATE), "to ERR: %s", strerror(errno));
	sleep_ms(50);	/* its flush is written, unpolled */
	a.qp_state = IBV_QPS_RESET;
	CHECK(!ibv_modify_qp(q->s[0].qp, &a, IBV_QP_STATE), "to RESET: %s", strerror(errno));
	return true;
}

bool do_qp_gone_cleans_cq(bool reset)
{
	struct qp_opts o = default_opts();
	struct pair p = { 0 }, q = { 0 };
	bool ok = false;
	int round, i;

	o.cqe = 8;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	o.cq0 = p.s[0].cq;
	fill_random(p.s[0].buf, 4096);
	for (round = 0; round < 3; round++) {
		if (!pair_create(&q, IBV_QPT_RC, &o))
			goto out;
		fill_random(q.s[0].buf, 4096);
		for (i = 0; i < 3; i++)
			if (!post_write(&q, 100 + (uint64_t)i, IBV_SEND_SIGNALED, (size_t)i * 64, 64) ||
			    !post_write(&p, 10 * (uint64_t)round + (uint64_t)i, IBV_SEND_SIGNALED,
					(size_t)i * 64, 64))
				goto out;
		/* All six complete into the CQ, unpolled. */
		if (!wait_bytes(q.s[1].buf + REMOTE_OFF + 128, q.s[0].buf + 128, 64) ||
		    !wait_bytes(p.s[1].buf + REMOTE_OFF + 128, p.s[0].buf + 128, 64))
			goto out;
		sleep_ms(50);
		if (reset) {
			if (!qp_reset_unpolled(&q))
				goto out;
		} else {
			CHECK_OUT(!ibv_destroy_qp(q.s[0].qp), "ibv_destroy_qp: %s", strerror(errno));
			q.s[0].qp = NULL;
		}
		for (i = 0; i < 3; i++)
			if (!expect_status(&p.s[0], 10 * (uint64_t)round + (uint64_t)i, IBV_WC_SUCCESS,
					   "the live QP's completion"))
				goto out;
		if (!expect_no_wc(&p.s[0], "after the live QP's completions"))
			goto out;
		pair_destroy(&q);
	}
	ok = true;
out:
	pair_destroy(&q);
	pair_destroy(&p);
	return ok;
}

/* Interrupts of the device's completion EQs so far (/proc/interrupts). */
static unsigned long ceq_interrupts(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	unsigned long total = 0;
	char line[1024];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (!p || !strstr(line, "vrnic-ceq"))
			continue;
		for (p++;;) {
			char *end;
			unsigned long n = strtoul(p, &end, 10);

			if (end == p)
				break;
			total += n;
			p = end;
		}
	}
	fclose(f);
	return total;
}

/*
 * n messages to a receive CQ armed before the first and again after each
 * event; with moderation count every count-th message's event is awaited.
 * *events: how many events came, counted after a quiet window.
 */
static bool moderated_run(struct pair *p, struct ibv_comp_channel *ch, int n, int count,
			  int *events)
{
	struct ibv_cq *cq = p->s[1].cq;
	int i;

	*events = 0;
	CHECK(!ibv_req_notify_cq(cq, 0), "ibv_req_notify_cq failed");
	for (i = 1; i <= n; i++) {
		if (!send_msg(p, (uint64_t)i, 0) ||
		    !expect_status(&p->s[1], (uint64_t)i, IBV_WC_SUCCESS, "recv"))
			return false;
		if (i % count)
			continue;
		if (!get_cq_event(ch, cq, TIMEOUT_MS)) {
			snprintf(why, sizeof(why), "no event after message %d (count %d)", i, count);
			return false;
		}
		++*events;
		CHECK(!ibv_req_notify_cq(cq, 0), "ibv_req_notify_cq failed");
	}
	while (get_cq_event(ch, cq, QUIET_MS))
		++*events;
	return true;
}

/*
 * ibv_modify_cq (IBV_CQ_ATTR_MODERATE): the device's limits in
 * ibv_query_device_ex; an armed CQ's event waits for cq_count completions,
 * or cq_period microseconds after the first; fewer events and interrupts
 * for the same traffic; a period beyond the limit is EINVAL.
 */
bool do_cq_moderation(void)
{
	struct ibv_modify_cq_attr mod = { .attr_mask = IBV_CQ_ATTR_MODERATE };
	struct ibv_device_attr_ex dx;
	struct qp_opts o = default_opts();
	struct ibv_comp_channel *ch = ibv_create_comp_channel(E.ctx);
	unsigned long irq0, irq1, irq2;
	int plain, moderated, err;
	struct pair p = { 0 };
	bool ok = false;

	if (!ch) {
		snprintf(why, sizeof(why), "ibv_create_comp_channel: %s", strerror(errno));
		return false;
	}
	o.channel = ch;
	o.cqe = 128;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	if (ibv_query_device_ex(E.ctx, NULL, &dx)) {
		snprintf(why, sizeof(why), "ibv_query_device_ex failed");
		goto out;
	}
	if (dx.cq_mod_caps.max_cq_count != 65535 || dx.cq_mod_caps.max_cq_period != 4095) {
		snprintf(why, sizeof(why), "cq_mod_caps %u/%u, not 65535/4095",
			 dx.cq_mod_caps.max_cq_count, dx.cq_mod_caps.max_cq_period);
		goto out;
	}

	/* The same 64 messages, without and with a count of 8. */
	irq0 = ceq_interrupts();
	if (!moderated_run(&p, ch, 64, 1, &plain))
		goto out;
	irq1 = ceq_interrupts();
	mod.moderate.cq_count = 8;
	mod.moderate.cq_period = 0;
	err = ibv_modify_cq(p.s[1].cq, &mod);
	if (err) {
		snprintf(why, sizeof(why), "ibv_modify_cq count 8: %s", strerror(err));
		goto out;
	}
	if (!moderated_run(&p, ch, 64, 8, &moderated))
		goto out;
	irq2 = ceq_interrupts();
	printf("# 64 messages: %d events and %lu interrupts without moderation, "
	       "%d and %lu with cq_count 8\n", plain, irq1 - irq0, moderated, irq2 - irq1);
	if (plain != 64 || moderated != 8) {
		snprintf(why, sizeof(why), "%d events unmoderated (64 wanted), %d with count 8 (8)",
			 plain, moderated);
		goto out;
	}
	if (irq2 - irq1 >= irq1 - irq0) {
		snprintf(why, sizeof(why), "%lu interrupts moderated, not fewer than %lu",
			 irq2 - irq1, irq1 - irq0);
		goto out;
	}

	/* A count never reached: the period raises the event. */
	mod.moderate.cq_count = 65535;
	mod.moderate.cq_period = 4095;
	if (ibv_modify_cq(p.s[1].cq, &mod) || ibv_req_notify_cq(p.s[1].cq, 0) ||
	    !send_msg(&p, 100, 0) || !expect_status(&p.s[1], 100, IBV_WC_SUCCESS, "recv"))
		goto out;
	if (!get_cq_event(ch, p.s[1].cq, TIMEOUT_MS)) {
		snprintf(why, sizeof(why), "no event when the 4095 us period ended");
		goto out;
	}

	mod.moderate.cq_count = 1;
	mod.moderate.cq_period = 4096;
	err = ibv_modify_cq(p.s[1].cq, &mod);
	if (err != EINVAL) {
		snprintf(why, sizeof(why), "cq_period 4096 returned %d (%s), not EINVAL", err,
			 strerror(err));
		goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	ibv_destroy_comp_channel(ch);
	return ok;
}
