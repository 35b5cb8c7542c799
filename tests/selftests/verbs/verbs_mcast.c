// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, UD multicast on one device.
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

/* An address handle for group (on the RoCEv2 GID). */
static struct ibv_ah *group_ah(const union ibv_gid *group)
{
	struct ibv_ah_attr aha = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *group, .sgid_index = (uint8_t)E.gid_index, .hop_limit = 64 },
	};

	return ibv_create_ah(E.pd, &aha);
}

/* Post a receive on side 1 and one UD datagram of len bytes from side 0. */
static int mcast_post(struct pair *p, struct ibv_ah *ah, uint64_t wr_id, uint32_t len)
{
	struct side *a = &p->s[0], *b = &p->s[1];
	struct ibv_sge ssg = { (uintptr_t)a->buf, len, a->mr->lkey };
	struct ibv_sge rsg = { (uintptr_t)b->buf, len + GRH_SIZE, b->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &ssg, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = 0xffffff, .remote_qkey = QKEY },
	}, *bad;
	int err = post_recv(b, wr_id, &rsg, 1);

	return err ? err : ibv_post_send(a->qp, &wr, &bad);
}

/* One UD datagram from side 0 to group; side 1 has a receive posted. */
static int mcast_send(struct pair *p, struct ibv_ah *ah, uint64_t wr_id)
{
	struct ibv_wc wc;
	int err = mcast_post(p, ah, wr_id, 256);

	if (err || !expect_wc(&p->s[0], &wc, "sender"))
		return err ? err : -1;
	return wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/*
 * UD multicast on one device: a datagram to a group reaches an attached
 * QP (multicast loopback) and no longer after it detaches; attaching an
 * RC QP or a unicast GID is refused.
 */
bool do_mcast(void)
{
	union ibv_gid group = { .raw = { [10] = 0xff, [11] = 0xff, 239, 9, 9, 9 } };
	struct qp_opts o = default_opts();
	struct pair p, rc;
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	bool ok = false;
	int err;

	memset(&rc, 0, sizeof(rc));
	if (!pair_create(&p, IBV_QPT_UD, &o))
		goto out;
	if (!pair_create(&rc, IBV_QPT_RC, &o))
		goto out;
	err = ibv_attach_mcast(rc.s[0].qp, &group, 0);
	if (err != EINVAL) {
		snprintf(why, sizeof(why), "attach of an RC QP: %d, want EINVAL", err);
		goto out;
	}
	err = ibv_attach_mcast(p.s[1].qp, &E.gid, 0);
	if (err != EINVAL) {
		snprintf(why, sizeof(why), "attach to a unicast GID: %d, want EINVAL", err);
		goto out;
	}
	err = ibv_attach_mcast(p.s[1].qp, &group, 0);
	ah = group_ah(&group);
	if (err || !ah) {
		snprintf(why, sizeof(why), "attach %d, AH %s", err, ah ? "ok" : strerror(errno));
		goto out;
	}
	fill_random(p.s[0].buf, 256);
	if (mcast_send(&p, ah, 1) || !expect_wc(&p.s[1], &wc, "member"))
		goto out;
	if (wc.status != IBV_WC_SUCCESS || wc.byte_len != 256 + GRH_SIZE ||
	    wc.src_qp != p.s[0].qp->qp_num || !(wc.wc_flags & IBV_WC_GRH) ||
	    memcmp(p.s[1].buf + GRH_SIZE, p.s[0].buf, 256)) {
		snprintf(why, sizeof(why), "member's CQE: status %s byte_len %u src_qp %u flags %#x",
			 ibv_wc_status_str(wc.status), wc.byte_len, wc.src_qp, wc.wc_flags);
		goto out;
	}
	err = ibv_detach_mcast(p.s[1].qp, &group, 0);
	if (err || mcast_send(&p, ah, 2) || !expect_no_wc(&p.s[1], "detached member")) {
		if (!why[0])
			snprintf(why, sizeof(why), "detach: %d", err);
		goto out;
	}
	ok = true;
out:
	if (ah)
		ibv_destroy_ah(ah);
	pair_destroy(&rc);
	pair_destroy(&p);
	return ok;
}

/*
 * Side 0 sends one datagram to the group, both sides members with a
 * receive posted: side 1 gets it, and side 0 gets its own unless blocked.
 * Side 0's send and receive may complete in either order.
 */
static bool mcast_to_self(struct pair *p, struct ibv_ah *ah, bool blocked)
{
	struct side *a = &p->s[0], *b = &p->s[1];
	struct ibv_sge own = { (uintptr_t)a->buf + 1024, 64 + GRH_SIZE, a->mr->lkey };
	struct ibv_wc wc;
	int sends = 0, recvs = 0;

	fill_random(a->buf, 64);
	CHECK(!post_recv(a, 8, &own, 1), "the sender's post_recv failed");
	CHECK(!mcast_post(p, ah, 9, 64), "posting the datagram failed");
	if (!expect_wc(b, &wc, "the other member"))
		return false;
	CHECK(wc.status == IBV_WC_SUCCESS && wc.src_qp == a->qp->qp_num &&
	      !memcmp(b->buf + GRH_SIZE, a->buf, 64),
	      "the other member's CQE: %s, src_qp %u", ibv_wc_status_str(wc.status), wc.src_qp);
	while (sends + recvs < (blocked ? 1 : 2) && poll_wc(a, &wc, 5000) == 1) {
		CHECK(wc.status == IBV_WC_SUCCESS, "sender's CQE: %s", ibv_wc_status_str(wc.status));
		if (wc.opcode != IBV_WC_RECV) {
			sends++;
			continue;
		}
		CHECK(wc.src_qp == a->qp->qp_num && !memcmp(a->buf + 1024 + GRH_SIZE, a->buf, 64),
		      "the sender's own datagram: src_qp %u, or its data differs", wc.src_qp);
		recvs++;
	}
	CHECK(sends == 1 && recvs == !blocked,
	      "sender: %d send and %d receive completions, want 1 and %d", sends, recvs, !blocked);
	return !blocked || expect_no_wc(a, "a sender that blocks its own multicast");
}

/*
 * IBV_QP_CREATE_BLOCK_SELF_MCAST_LB (mlx5's block_lb_mc): a member that
 * sends to its group receives its datagram too, as every member on the
 * port does, unless it was created with the flag; the others still do.
 */
bool do_mcast_self_lb(void)
{
	union ibv_gid group = { .raw = { [10] = 0xff, [11] = 0xff, 239, 9, 9, 10 } };
	struct qp_opts o = default_opts();
	struct ibv_ah *ah = NULL;
	bool ok = false, attached = false;
	struct pair p = { 0 };
	int blocked;

	ah = group_ah(&group);
	CHECK(ah, "ibv_create_ah: %s", strerror(errno));
	for (blocked = 0; blocked < 2; blocked++) {
		o.create_flags0 = blocked ? IBV_QP_CREATE_BLOCK_SELF_MCAST_LB : 0;
		if (!pair_create(&p, IBV_QPT_UD, &o))
			goto out;
		attached = true;
		CHECK_OUT(!ibv_attach_mcast(p.s[0].qp, &group, 0) &&
			  !ibv_attach_mcast(p.s[1].qp, &group, 0), "attach: %s", strerror(errno));
		if (!mcast_to_self(&p, ah, blocked))
			goto out;
		CHECK_OUT(!ibv_detach_mcast(p.s[0].qp, &group, 0) &&
			  !ibv_detach_mcast(p.s[1].qp, &group, 0), "detach: %s", strerror(errno));
		attached = false;
		pair_destroy(&p);
	}
	ok = true;
out:
	if (attached) {
		ibv_detach_mcast(p.s[0].qp, &group, 0);
		ibv_detach_mcast(p.s[1].qp, &group, 0);
	}
	pair_destroy(&p);
	ibv_destroy_ah(ah);
	return ok;
}
