// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs: the device under test, QP pairs looped back to each other
 * through its own GID, and the helpers every test uses.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "verbs_common.h"
#include "verbs_names.h"

struct verbs_env E;
char why[256];
char skip_why[256];

uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed printed at the start */
	E.rng ^= E.rng >> 12;
	E.rng ^= E.rng << 25;
	E.rng ^= E.rng >> 27;
	return E.rng * 0x2545f4914f6cdd1dULL;
}

void fill_random(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

bool linux_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

struct qp_opts default_opts(void)
{
	struct qp_opts o = {
		.cqe = 256,
		.max_send_wr = 64,
		.max_recv_wr = 64,
		.max_inline = 128,
		.access = { ALL_ACCESS, ALL_ACCESS },
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.min_rnr_timer = 1,
	};
	return o;
}

uint64_t send_ops(enum ibv_qp_type type)
{
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

	if (type != IBV_QPT_UD)
		ops |= IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	if (type == IBV_QPT_RC)
		ops |= IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	return ops;
}

void side_destroy(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->ah)
		ibv_destroy_ah(s->ah);
	if (s->cq && !s->cq_borrowed)
		ibv_destroy_cq(s->cq);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

void pair_destroy(struct pair *p)
{
	side_destroy(&p->s[0]);
	side_destroy(&p->s[1]);
}

struct ibv_ah *make_ah(void)
{
	struct ibv_ah_attr ah = {
		.is_global = 1,
		.port_num = 1,
		.grh = {
			.dgid = E.gid,
			.sgid_index = (uint8_t)E.gid_index,
			.hop_limit = 64,
		},
	};
	return ibv_create_ah(E.pd, &ah);
}

int qp_to_init(struct ibv_qp *qp, enum ibv_qp_type type, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (type == IBV_QPT_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = (unsigned int)access;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask);
}

int qp_to_rtr(struct ibv_qp *qp, enum ibv_qp_type type, uint32_t dest_qpn,
	      const struct qp_opts *o)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest_qpn,
		.rq_psn = 0x123,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = (uint8_t)o->min_rnr_timer,
		.ah_attr = {
			.is_global = 1,
			.port_num = 1,
			.grh = {
				.dgid = E.gid,
				.sgid_index = (uint8_t)E.gid_index,
				.hop_limit = 64,
			},
		},
	};
	int mask = IBV_QP_STATE;

	if (type != IBV_QPT_UD)
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (type == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

int qp_to_rts(struct ibv_qp *qp, enum ibv_qp_type type, const struct qp_opts *o)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = 0x123,
		.timeout = (uint8_t)o->timeout,
		.retry_cnt = (uint8_t)o->retry_cnt,
		.rnr_retry = (uint8_t)o->rnr_retry,
		.max_rd_atomic = 4,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

bool side_create(struct pair *p, int i)
{
	struct side *s = &p->s[i];
	const struct qp_opts *o = &p->o;
	struct ibv_qp_init_attr_ex qa = {
		.cap = {
			.max_send_wr = (uint32_t)o->max_send_wr,
			.max_recv_wr = (uint32_t)o->max_recv_wr,
			.max_send_sge = MAX_SGE,
			.max_recv_sge = MAX_SGE,
			.max_inline_data = (uint32_t)o->max_inline,
		},
		.qp_type = p->type,
		.sq_sig_all = o->sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = E.pd,
	};

	if (i == 0 && o->cq0) {
		CHECK(!o->ex, "qp_opts.cq0 takes an ibv_poll_cq CQ");
		s->cq = o->cq0;
		s->cq_borrowed = true;
	} else if (o->ex) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = (uint32_t)o->cqe,
			.channel = o->channel,
			.wc_flags = IBV_WC_STANDARD_FLAGS,
		};

		s->cqx = ibv_create_cq_ex(E.ctx, &ca);
		CHECK(s->cqx, "ibv_create_cq_ex: %s", strerror(errno));
		s->cq = ibv_cq_ex_to_cq(s->cqx);
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = send_ops(p->type) | o->more_ops;
	} else {
		s->cq = ibv_create_cq(E.ctx, o->cqe, NULL, o->channel, 0);
		CHECK(s->cq, "ibv_create_cq: %s", strerror(errno));
	}
	s->buf = aligned_alloc(4096, BUF_SIZE);
	CHECK(s->buf, "out of memory");
	memset(s->buf, 0, BUF_SIZE);
	s->mr = ibv_reg_mr(E.pd, s->buf, BUF_SIZE, o->access[i]);
	CHECK(s->mr, "ibv_reg_mr: %s", strerror(errno));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	if (i == 1 && o->srq)
		qa.srq = o->srq;
	if (i == 0 && o->create_flags0) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
		qa.create_flags = o->create_flags0;
	}
	s->qp = ibv_create_qp_ex(E.ctx, &qa);
	CHECK(s->qp, "ibv_create_qp_ex: %s", strerror(errno));
	s->cap = qa.cap;
	if (o->ex) {
		s->qpx = ibv_qp_to_qp_ex(s->qp);
		CHECK(s->qpx, "ibv_qp_to_qp_ex failed");
	}
	if (p->type == IBV_QPT_UD) {
		s->ah = make_ah();
		CHECK(s->ah, "ibv_create_ah: %s", strerror(errno));
	}
	CHECK(!qp_to_init(s->qp, p->type, o->access[i]), "to INIT: %s", strerror(errno));
	return true;
}

bool pair_connect(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct ibv_qp *qp = p->s[i].qp;
		uint32_t dest = p->s[1 - i].qp->qp_num;

		CHECK(!qp_to_rtr(qp, p->type, dest, &p->o), "to RTR: %s", strerror(errno));
		CHECK(!qp_to_rts(qp, p->type, &p->o), "to RTS: %s", strerror(errno));
	}
	return true;
}

bool pair_create(struct pair *p, enum ibv_qp_type type, const struct qp_opts *o)
{
	memset(p, 0, sizeof(*p));
	p->type = type;
	p->o = *o;
	if (!side_create(p, 0) || !side_create(p, 1))
		return false;
	if (o->stop_at_init)
		return true;
	return pair_connect(p);
}

/* One completion, through ibv_poll_cq or ibv_start_poll: 1, 0 (none in
 * time) or -errno.
 */
int poll_wc(struct side *s, struct ibv_wc *wc, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;

	for (;;) {
		if (s->cqx) {
			struct ibv_poll_cq_attr pa = { 0 };
			int ret = ibv_start_poll(s->cqx, &pa);

			if (ret == 0) {
				memset(wc, 0, sizeof(*wc));
				wc->wr_id = s->cqx->wr_id;
				wc->status = s->cqx->status;
				wc->opcode = ibv_wc_read_opcode(s->cqx);
				wc->vendor_err = ibv_wc_read_vendor_err(s->cqx);
				wc->byte_len = ibv_wc_read_byte_len(s->cqx);
				wc->wc_flags = ibv_wc_read_wc_flags(s->cqx);
				wc->imm_data = ibv_wc_read_imm_data(s->cqx);
				wc->qp_num = ibv_wc_read_qp_num(s->cqx);
				wc->src_qp = ibv_wc_read_src_qp(s->cqx);
				wc->sl = ibv_wc_read_sl(s->cqx);
				ibv_end_poll(s->cqx);
				return 1;
			}
			if (ret != ENOENT)
				return -ret;
		} else {
			int n = ibv_poll_cq(s->cq, 1, wc);

			if (n)
				return n;
		}
		if (now_ms() >= end)
			return 0;
	}
}

bool expect_wc(struct side *s, struct ibv_wc *wc, const char *what)
{
	int n = poll_wc(s, wc, TIMEOUT_MS);

	CHECK(n >= 0, "%s: polling failed: %s", what, strerror(-n));
	CHECK(n == 1, "%s: no completion within %d ms", what, TIMEOUT_MS);
	return true;
}

bool expect_no_wc(struct side *s, const char *what)
{
	struct ibv_wc wc;
	int n = poll_wc(s, &wc, QUIET_MS);

	CHECK(n == 0, "%s: unexpected completion: wr_id %" PRIu64 " status %s", what,
	      wc.wr_id, ibv_wc_status_str(wc.status));
	return true;
}

bool expect_status(struct side *s, uint64_t wr_id, enum ibv_wc_status st,
		   const char *what)
{
	struct ibv_wc wc;

	if (!expect_wc(s, &wc, what))
		return false;
	CHECK(wc.wr_id == wr_id && wc.status == st,
	      "%s: got wr_id %" PRIu64 " status %s, want wr_id %" PRIu64 " status %s", what,
	      wc.wr_id, ibv_wc_status_str(wc.status), wr_id, ibv_wc_status_str(st));
	return true;
}

bool fd_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms) == 1;
}

/* Wait for an async event of this type about this object. */
bool expect_async(enum ibv_event_type type, const void *obj, const char *what)
{
	int64_t end = now_ms() + TIMEOUT_MS;
	struct ibv_async_event ev;

	while (now_ms() < end) {
		const void *about;

		if (!fd_readable(E.ctx->async_fd, 100))
			continue;
		if (ibv_get_async_event(E.ctx, &ev))
			FAIL("%s: ibv_get_async_event: %s", what, strerror(errno));
		switch (ev.event_type) {
		case IBV_EVENT_CQ_ERR:
			about = ev.element.cq;
			break;
		case IBV_EVENT_SRQ_ERR:
		case IBV_EVENT_SRQ_LIMIT_REACHED:
			about = ev.element.srq;
			break;
		case IBV_EVENT_PORT_ACTIVE:
		case IBV_EVENT_PORT_ERR:
		case IBV_EVENT_GID_CHANGE:
		case IBV_EVENT_DEVICE_FATAL:
			about = NULL;
			break;
		default:
			about = ev.element.qp;
			break;
		}
		ibv_ack_async_event(&ev);
		if (ev.event_type == type && about == obj)
			return true;
		verbs_diag("(%s: also saw %s)", what, ibv_event_type_str(ev.event_type));
	}
	FAIL("%s: no %s event within %d ms", what, ibv_event_type_str(type), TIMEOUT_MS);
}

/* Throw away async events left by earlier tests. */
void drain_async(void)
{
	struct ibv_async_event ev;

	while (fd_readable(E.ctx->async_fd, 0) && !ibv_get_async_event(E.ctx, &ev))
		ibv_ack_async_event(&ev);
}

/* Split len bytes into n pieces, SLOT apart from base with a random
 * misalignment, so that gathering and scattering really happen.
 */
void make_sges(const struct side *s, size_t base, size_t len, int n, struct ibv_sge *sg)
{
	size_t left = len;
	int i;

	for (i = 0; i < n; i++) {
		size_t piece = left;

		if (i < n - 1) {
			size_t room = left - (size_t)(n - 1 - i);	/* leave 1 each */

			piece = room ? 1 + rnd() % room : 0;
			if (piece > SLOT - 64)
				piece = SLOT - 64;
		}
		left -= piece;
		sg[i].addr = (uintptr_t)s->buf + base + (size_t)i * SLOT + 64 + rnd() % 64;
		sg[i].length = (uint32_t)piece;
		sg[i].lkey = s->mr->lkey;
	}
	/* Whatever is left (lengths capped by SLOT) goes to the last piece. */
	sg[n - 1].length += (uint32_t)left;
}

/* Copy the bytes an SGE list covers into out. */
size_t gather(const struct ibv_sge *sg, int n, uint8_t *out)
{
	size_t off = 0;
	int i;

	for (i = 0; i < n; i++) {
		memcpy(out + off, (void *)(uintptr_t)sg[i].addr, sg[i].length);
		off += sg[i].length;
	}
	return off;
}

void scatter_random(const struct ibv_sge *sg, int n)
{
	int i;

	for (i = 0; i < n; i++)
		fill_random((uint8_t *)(uintptr_t)sg[i].addr, sg[i].length);
}

int post_one(struct pair *p, int i, const struct send *w)
{
	struct side *s = &p->s[i];
	uint32_t dest = p->s[1 - i].qp->qp_num;
	struct ibv_send_wr wr = {
		.wr_id = w->wr_id,
		.sg_list = w->sg,
		.num_sge = w->nsge,
		.opcode = w->op,
		.send_flags = w->flags,
		.imm_data = htobe32(w->imm),
	}, *bad = NULL;
	struct ibv_qp_ex *x = s->qpx;
	struct ibv_data_buf bufs[ALL_SGE + 1];
	int k, err;

	if (!x) {
		if (p->type == IBV_QPT_UD) {
			wr.wr.ud.ah = s->ah;
			wr.wr.ud.remote_qpn = dest;
			wr.wr.ud.remote_qkey = QKEY;
		} else if (w->op == IBV_WR_ATOMIC_CMP_AND_SWP ||
			   w->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			wr.wr.atomic.remote_addr = w->raddr;
			wr.wr.atomic.rkey = w->rkey;
			wr.wr.atomic.compare_add = w->compare_add;
			wr.wr.atomic.swap = w->swap;
		} else {
			wr.wr.rdma.remote_addr = w->raddr;
			wr.wr.rdma.rkey = w->rkey;
		}
		err = ibv_post_send(s->qp, &wr, &bad);
		if (err && bad != &wr)
			return -EPROTO;	/* bad_wr must point at the failed WR */
		return err;
	}
	ibv_wr_start(x);
	x->wr_id = w->wr_id;
	x->wr_flags = w->flags & ~IBV_SEND_INLINE;
	switch (w->op) {
	case IBV_WR_SEND:
		ibv_wr_send(x);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(x, htobe32(w->imm));
		break;
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(x, w->rkey, w->raddr);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(x, w->rkey, w->raddr, htobe32(w->imm));
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(x, w->rkey, w->raddr);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		ibv_wr_atomic_cmp_swp(x, w->rkey, w->raddr, w->compare_add, w->swap);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		ibv_wr_atomic_fetch_add(x, w->rkey, w->raddr, w->compare_add);
		break;
	default:
		ibv_wr_abort(x);
		return -EINVAL;
	}
	if (p->type == IBV_QPT_UD)
		ibv_wr_set_ud_addr(x, s->ah, dest, QKEY);
	if (w->flags & IBV_SEND_INLINE) {
		if (w->nsge > ALL_SGE + 1) {
			ibv_wr_abort(x);
			return -E2BIG;
		}
		for (k = 0; k < w->nsge; k++) {
			bufs[k].addr = (void *)(uintptr_t)w->sg[k].addr;
			bufs[k].length = w->sg[k].length;
		}
		ibv_wr_set_inline_data_list(x, (size_t)w->nsge, bufs);
	} else if (w->nsge == 1) {
		ibv_wr_set_sge(x, w->sg[0].lkey, w->sg[0].addr, w->sg[0].length);
	} else {
		ibv_wr_set_sge_list(x, (size_t)w->nsge, w->sg);
	}
	return ibv_wr_complete(x);
}

int post_recv(struct side *s, uint64_t wr_id, struct ibv_sge *sg, int nsge)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = nsge }, *bad = NULL;
	int err = ibv_post_recv(s->qp, &wr, &bad);

	if (err && bad != &wr)
		return -EPROTO;
	return err;
}

enum ibv_wc_opcode req_wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	default:
		return IBV_WC_SEND;
	}
}

bool wait_bytes(const uint8_t *got, const uint8_t *want, size_t n)
{
	int64_t end = now_ms() + TIMEOUT_MS;

	while (memcmp(got, want, n)) {
		if (now_ms() >= end)
			return false;
		sleep_ms(1);
	}
	return true;
}

size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

bool post_write(struct pair *p, uint64_t wr_id, unsigned int flags, size_t off,
		size_t len)
{
	struct ibv_sge sg = { (uintptr_t)p->s[0].buf + off, (uint32_t)len, p->s[0].mr->lkey };
	struct send w = { .op = IBV_WR_RDMA_WRITE, .wr_id = wr_id, .flags = flags, .sg = &sg,
			  .nsge = 1, .raddr = (uintptr_t)p->s[1].buf + REMOTE_OFF + off,
			  .rkey = p->s[1].mr->rkey };
	int err = post_one(p, 0, &w);

	CHECK(!err, "post WRITE %" PRIu64 ": %s", wr_id, strerror(abs(err)));
	return true;
}

bool send_msg(struct pair *p, uint64_t wr_id, unsigned int flags)
{
	struct ibv_sge sg = { (uintptr_t)p->s[0].buf, 64, p->s[0].mr->lkey };
	struct ibv_sge rsg = { (uintptr_t)p->s[1].buf, 64, p->s[1].mr->lkey };
	struct send w = { .op = IBV_WR_SEND, .wr_id = wr_id, .flags = flags | IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1 };

	CHECK(!post_recv(&p->s[1], wr_id, &rsg, 1), "post_recv failed");
	CHECK(!post_one(p, 0, &w), "post_send failed");
	return expect_status(&p->s[0], wr_id, IBV_WC_SUCCESS, "SEND");
}
