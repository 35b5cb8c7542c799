// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, ordering and signaling: unsignaled WRs, sq_sig_all, fences.
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

bool do_selective_signaling(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	bool ok = false;
	int i;

	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	fill_random(p.s[0].buf, 10 * 4096);
	for (i = 1; i <= 10; i++)
		if (!post_write(&p, (uint64_t)i, i == 10 ? IBV_SEND_SIGNALED : 0,
				(size_t)(i - 1) * 4096, 4096))
			goto out;
	if (!expect_status(&p.s[0], 10, IBV_WC_SUCCESS, "the signaled WRITE") ||
	    !expect_no_wc(&p.s[0], "after it"))
		goto out;
	if (memcmp(p.s[1].buf + REMOTE_OFF, p.s[0].buf, 10 * 4096)) {
		snprintf(why, sizeof(why), "unsignaled WRITEs did not all land");
		goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

bool do_sig_all(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	bool ok = false;
	int i;

	o.sig_all = true;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	for (i = 1; i <= 3; i++)
		if (!post_write(&p, (uint64_t)i, 0, (size_t)i * 64, 64))
			goto out;
	for (i = 1; i <= 3; i++)
		if (!expect_status(&p.s[0], (uint64_t)i, IBV_WC_SUCCESS, "sq_sig_all"))
			goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/* A fenced SEND of a buffer that an earlier READ fills must carry what
 * the READ brought.
 */
bool do_fence(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge rsg, ssg, recv;
	struct send rd = { .op = IBV_WR_RDMA_READ, .wr_id = 1, .sg = &rsg, .nsge = 1 };
	struct send sd = { .op = IBV_WR_SEND, .wr_id = 2, .sg = &ssg, .nsge = 1,
			   .flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED };
	const size_t len = 16384;
	bool ok = false;
	int round;

	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	for (round = 0; round < 20; round++) {
		uint8_t *src = p.s[1].buf + REMOTE_OFF, *mid = p.s[0].buf + READ_OFF;

		fill_random(src, len);
		memset(mid, 0, len);
		rsg = (struct ibv_sge){ (uintptr_t)mid, len, p.s[0].mr->lkey };
		ssg = rsg;
		recv = (struct ibv_sge){ (uintptr_t)p.s[1].buf, len, p.s[1].mr->lkey };
		rd.raddr = (uintptr_t)src;
		rd.rkey = p.s[1].mr->rkey;
		if (post_recv(&p.s[1], 3, &recv, 1) || post_one(&p, 0, &rd) ||
		    post_one(&p, 0, &sd)) {
			snprintf(why, sizeof(why), "posting failed");
			goto out;
		}
		if (!expect_status(&p.s[0], 2, IBV_WC_SUCCESS, "fenced SEND") ||
		    !expect_status(&p.s[1], 3, IBV_WC_SUCCESS, "its receive"))
			goto out;
		if (memcmp(p.s[1].buf, src, len)) {
			snprintf(why, sizeof(why), "round %d: the SEND overtook the READ", round);
			goto out;
		}
	}
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}
