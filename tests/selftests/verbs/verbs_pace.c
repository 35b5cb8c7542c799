// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, packet pacing (IBV_QP_RATE_LIMIT): the limits the device
 * announces, the rules of modify_qp and ibv_modify_qp_rate_limit, and a
 * paced QP that holds its data back to its rate.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "verbs_common.h"

#define PACE_LEN	(256 << 10)	/* bytes a paced QP WRITEs */
#define PACE_KBPS	8000		/* 8 Mbit/s: PACE_LEN takes 262 ms */

static bool pacing_caps(struct ibv_packet_pacing_caps *pp)
{
	struct ibv_device_attr_ex a;

	if (ibv_query_device_ex(E.ctx, NULL, &a))
		return false;
	*pp = a.packet_pacing_caps;
	return true;
}

/* One WRITE of len bytes at rate; its time in ms, or -1 (why set). */
static int64_t paced_write(struct pair *p, uint32_t len)
{
	int64_t t0 = now_ms();

	if (!post_write(p, 9, IBV_SEND_SIGNALED, 0, len) ||
	    !expect_status(&p->s[0], 9, IBV_WC_SUCCESS, "paced WRITE"))
		return -1;
	return now_ms() - t0;
}

/* The limits and the rules, on an RC QP in RTS and one in INIT. */
static bool pace_rules(struct pair *p, const struct ibv_packet_pacing_caps *pp)
{
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = pp->qp_rate_limit_min };
	struct ibv_qp_attr a = { .rate_limit = pp->qp_rate_limit_min };
	int err;

	err = ibv_modify_qp_rate_limit(p->s[0].qp, &rl);
	CHECK(!err, "ibv_modify_qp_rate_limit(%u kbit/s): %d", rl.rate_limit, err);
	rl.rate_limit = pp->qp_rate_limit_min - 1;
	err = ibv_modify_qp_rate_limit(p->s[0].qp, &rl);
	CHECK(err == EINVAL, "a rate below the minimum: %d, want EINVAL", err);
	rl.rate_limit = pp->qp_rate_limit_max + 1;
	err = ibv_modify_qp_rate_limit(p->s[0].qp, &rl);
	CHECK(err == EINVAL, "a rate above the maximum: %d, want EINVAL", err);
	rl = (struct ibv_qp_rate_limit_attr){ .rate_limit = 0, .comp_mask = 1 };
	err = ibv_modify_qp_rate_limit(p->s[0].qp, &rl);
	CHECK(err == EINVAL, "an unknown comp_mask: %d, want EINVAL", err);
	/* ibv_modify_qp with IBV_QP_RATE_LIMIT, RTS to RTS */
	a.qp_state = IBV_QPS_RTS;
	err = ibv_modify_qp(p->s[0].qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT);
	CHECK(!err, "ibv_modify_qp RTS->RTS with IBV_QP_RATE_LIMIT: %d", err);
	/* not on the way to INIT: a QP is paced as it goes to RTS or in it */
	err = ibv_modify_qp(p->s[1].qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_ERR },
			    IBV_QP_STATE);
	CHECK(!err, "to ERR: %d", err);
	a.qp_state = IBV_QPS_RESET;
	err = ibv_modify_qp(p->s[1].qp, &a, IBV_QP_STATE);
	CHECK(!err, "to RESET: %d", err);
	err = qp_to_init(p->s[1].qp, IBV_QPT_RC, ALL_ACCESS);
	CHECK(!err, "to INIT: %d", err);
	a.qp_state = IBV_QPS_INIT;
	err = ibv_modify_qp(p->s[1].qp, &a, IBV_QP_STATE | IBV_QP_RATE_LIMIT);
	CHECK(err == EINVAL, "INIT->INIT with IBV_QP_RATE_LIMIT: %d, want EINVAL", err);
	return true;
}

/*
 * A QP paced at PACE_KBPS takes at least the wire time of what it sends
 * (less one burst); the bound is half of that, far from any machine's
 * noise, which can only make the transfer slower.
 */
static bool pace_holds_back(const struct ibv_packet_pacing_caps *pp)
{
	struct qp_opts o = default_opts();
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = PACE_KBPS, .max_burst_sz = 8192 };
	int64_t ms, floor_ms = (int64_t)PACE_LEN * 8 / PACE_KBPS / 2;
	struct pair p;
	bool ok = false;
	int err;

	if (PACE_KBPS < pp->qp_rate_limit_min || PACE_KBPS > pp->qp_rate_limit_max)
		SKIP("%d kbit/s is outside the device's rates", PACE_KBPS);
	if (!pair_create(&p, IBV_QPT_RC, &o))
		return false;
	fill_random(p.s[0].buf, PACE_LEN);
	err = ibv_modify_qp_rate_limit(p.s[0].qp, &rl);
	CHECK_OUT(!err, "ibv_modify_qp_rate_limit: %d", err);
	ms = paced_write(&p, PACE_LEN);
	CHECK_OUT(ms >= 0, "%s", why);
	verbs_diag("%d KiB paced at %d kbit/s took %" PRId64 " ms (no less than %" PRId64 ")",
		   PACE_LEN >> 10, PACE_KBPS, ms, floor_ms);
	CHECK_OUT(ms >= floor_ms, "%d KiB at %d kbit/s took %" PRId64 " ms, under %" PRId64,
		  PACE_LEN >> 10, PACE_KBPS, ms, floor_ms);
	CHECK_OUT(!memcmp(p.s[0].buf, p.s[1].buf + REMOTE_OFF, PACE_LEN),
		  "the paced WRITE's bytes did not all land");
	/* Unpaced again: rate 0 */
	rl = (struct ibv_qp_rate_limit_attr){ 0 };
	err = ibv_modify_qp_rate_limit(p.s[0].qp, &rl);
	CHECK_OUT(!err, "ibv_modify_qp_rate_limit(0): %d", err);
	ms = paced_write(&p, 4096);
	CHECK_OUT(ms >= 0, "%s", why);
	if (!pace_rules(&p, pp))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/* UD and UC QPs take a rate too, and send under it. */
static bool pace_other_types(const struct ibv_packet_pacing_caps *pp)
{
	static const enum ibv_qp_type types[] = { IBV_QPT_UD, IBV_QPT_UC };
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = pp->qp_rate_limit_max };
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct qp_opts o = default_opts();
		struct pair p;
		int err;
		bool ok;

		CHECK(pp->supported_qpts & (1U << types[i]), "supported_qpts %#x lacks QP type %d",
		      pp->supported_qpts, types[i]);
		if (!pair_create(&p, types[i], &o))
			return false;
		err = ibv_modify_qp_rate_limit(p.s[0].qp, &rl);
		ok = !err && xfer(&p, IBV_WR_SEND, false, 1, 1024);
		pair_destroy(&p);
		if (!ok && err)
			FAIL("QP type %d: ibv_modify_qp_rate_limit: %d", types[i], err);
		if (!ok)
			return false;
	}
	return true;
}

bool do_rate_limit(void)
{
	struct ibv_packet_pacing_caps pp;

	CHECK(pacing_caps(&pp), "ibv_query_device_ex failed");
	if (!pp.qp_rate_limit_max)
		SKIP("the device has no packet pacing");
	verbs_diag("packet pacing: %u to %u kbit/s, QP types %#x", pp.qp_rate_limit_min,
		   pp.qp_rate_limit_max, pp.supported_qpts);
	CHECK(pp.qp_rate_limit_min > 0 && pp.qp_rate_limit_min <= pp.qp_rate_limit_max,
	      "rate limits %u to %u", pp.qp_rate_limit_min, pp.qp_rate_limit_max);
	CHECK(pp.supported_qpts & (1U << IBV_QPT_RC), "supported_qpts %#x lacks RC",
	      pp.supported_qpts);
	return pace_holds_back(&pp) && pace_other_types(&pp);
}
