// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The verbs data path of one vrnic, looped back through its own RoCEv2
 * GID: every opcode on every QP type, inline or not, with one to four
 * SGEs, through both post APIs and both CQ APIs; random data checked byte
 * for byte and every CQE field checked; atomics; CQ events; resize; SRQ;
 * the QP state machine; and every error the verbs spec promises.
 *
 *   vrnic_verbs DEVICE GID_INDEX [SEED]
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"

#define BUF_SIZE	(1 << 20)
#define SLOT		(32 << 10)	/* spacing of scattered SGEs */
#define REMOTE_OFF	(512 << 10)	/* RDMA target area in a buffer */
#define READ_OFF	(256 << 10)	/* local READ destination area */
#define QKEY		0x11110000
#define TIMEOUT_MS	5000
#define QUIET_MS	200		/* "nothing happens" window */
#define MAX_SGE		4		/* SGEs the data tests use */
#define ALL_SGE		16		/* the most a vrnic WQE can hold */
#define GRH_SIZE	40

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid_index;
	union ibv_gid gid;
	uint64_t rng;
} E;

/* Why a check failed, for the KTAP diagnostic. */
static char why[256];

#define FAIL(...) do {						\
	snprintf(why, sizeof(why), __VA_ARGS__);		\
	return false;						\
} while (0)

#define CHECK(cond, ...) do {					\
	if (!(cond))						\
		FAIL(__VA_ARGS__);				\
} while (0)

static uint64_t rnd(void)
{
	/* xorshift64*: reproducible from the seed printed at the start */
	E.rng ^= E.rng >> 12;
	E.rng ^= E.rng << 25;
	E.rng ^= E.rng >> 27;
	return E.rng * 0x2545f4914f6cdd1dULL;
}

static void fill_random(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------ */
/* Queue pairs looped back to each other                               */

struct qp_opts {
	int cqe;
	int max_send_wr;
	int max_recv_wr;
	int max_inline;
	int access[2];		/* per side */
	int timeout;
	int retry_cnt;
	int rnr_retry;
	int min_rnr_timer;
	bool sig_all;
	bool ex;		/* ibv_wr_* API and ibv_cq_ex */
	struct ibv_srq *srq;	/* for side 1 */
	struct ibv_comp_channel *channel;
	bool stop_at_init;	/* leave both QPs in INIT */
};

struct side {
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	uint8_t *buf;
	struct ibv_qp_cap cap;
};

struct pair {
	enum ibv_qp_type type;
	struct qp_opts o;
	struct side s[2];
};

static const int all_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

static struct qp_opts default_opts(void)
{
	struct qp_opts o = {
		.cqe = 256,
		.max_send_wr = 64,
		.max_recv_wr = 64,
		.max_inline = 128,
		.access = { all_access, all_access },
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.min_rnr_timer = 1,
	};
	return o;
}

static uint64_t send_ops(enum ibv_qp_type type)
{
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

	if (type != IBV_QPT_UD)
		ops |= IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	if (type == IBV_QPT_RC)
		ops |= IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	return ops;
}

static void side_destroy(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->ah)
		ibv_destroy_ah(s->ah);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

static void pair_destroy(struct pair *p)
{
	side_destroy(&p->s[0]);
	side_destroy(&p->s[1]);
}

static struct ibv_ah *make_ah(void)
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

static int qp_to_init(struct ibv_qp *qp, enum ibv_qp_type type, int access)
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

static int qp_to_rtr(struct ibv_qp *qp, enum ibv_qp_type type, uint32_t dest_qpn,
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

static int qp_to_rts(struct ibv_qp *qp, enum ibv_qp_type type, const struct qp_opts *o)
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

static bool side_create(struct pair *p, int i)
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

	if (o->ex) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = (uint32_t)o->cqe,
			.channel = o->channel,
			.wc_flags = IBV_WC_STANDARD_FLAGS,
		};

		s->cqx = ibv_create_cq_ex(E.ctx, &ca);
		CHECK(s->cqx, "ibv_create_cq_ex: %s", strerror(errno));
		s->cq = ibv_cq_ex_to_cq(s->cqx);
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = send_ops(p->type);
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

static bool pair_connect(struct pair *p)
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

static bool pair_create(struct pair *p, enum ibv_qp_type type, const struct qp_opts *o)
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

/* ------------------------------------------------------------------ */
/* Completions and events                                              */

/* One completion, through ibv_poll_cq or ibv_start_poll: 1, 0 (none in
 * time) or -errno.
 */
static int poll_wc(struct side *s, struct ibv_wc *wc, int timeout_ms)
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

static bool expect_wc(struct side *s, struct ibv_wc *wc, const char *what)
{
	int n = poll_wc(s, wc, TIMEOUT_MS);

	CHECK(n >= 0, "%s: polling failed: %s", what, strerror(-n));
	CHECK(n == 1, "%s: no completion within %d ms", what, TIMEOUT_MS);
	return true;
}

static bool expect_no_wc(struct side *s, const char *what)
{
	struct ibv_wc wc;
	int n = poll_wc(s, &wc, QUIET_MS);

	CHECK(n == 0, "%s: unexpected completion: wr_id %" PRIu64 " status %s", what,
	      wc.wr_id, ibv_wc_status_str(wc.status));
	return true;
}

static bool expect_status(struct side *s, uint64_t wr_id, enum ibv_wc_status st,
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

static bool fd_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms) == 1;
}

/* Wait for an async event of this type about this object. */
static bool expect_async(enum ibv_event_type type, const void *obj, const char *what)
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
		ktap_diag("(%s: also saw %s)", what, ibv_event_type_str(ev.event_type));
	}
	FAIL("%s: no %s event within %d ms", what, ibv_event_type_str(type), TIMEOUT_MS);
}

/* Throw away async events left by earlier tests. */
static void drain_async(void)
{
	struct ibv_async_event ev;

	while (fd_readable(E.ctx->async_fd, 0) && !ibv_get_async_event(E.ctx, &ev))
		ibv_ack_async_event(&ev);
}

/* ------------------------------------------------------------------ */
/* Scatter/gather lists over a side's buffer                           */

/* Split len bytes into n pieces, SLOT apart from base with a random
 * misalignment, so that gathering and scattering really happen.
 */
static void make_sges(const struct side *s, size_t base, size_t len, int n, struct ibv_sge *sg)
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
static size_t gather(const struct ibv_sge *sg, int n, uint8_t *out)
{
	size_t off = 0;
	int i;

	for (i = 0; i < n; i++) {
		memcpy(out + off, (void *)(uintptr_t)sg[i].addr, sg[i].length);
		off += sg[i].length;
	}
	return off;
}

static void scatter_random(const struct ibv_sge *sg, int n)
{
	int i;

	for (i = 0; i < n; i++)
		fill_random((uint8_t *)(uintptr_t)sg[i].addr, sg[i].length);
}

/* ------------------------------------------------------------------ */
/* Posting, through ibv_post_send or ibv_wr_*                          */

struct send {
	enum ibv_wr_opcode op;
	uint64_t wr_id;
	unsigned int flags;
	struct ibv_sge *sg;
	int nsge;
	uint32_t imm;		/* as a number */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t compare_add;
	uint64_t swap;
};

static int post_one(struct pair *p, int i, const struct send *w)
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

static int post_recv(struct side *s, uint64_t wr_id, struct ibv_sge *sg, int nsge)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = nsge }, *bad = NULL;
	int err = ibv_post_recv(s->qp, &wr, &bad);

	if (err && bad != &wr)
		return -EPROTO;
	return err;
}

/* ------------------------------------------------------------------ */
/* Data transfers                                                      */

static const char *op_name(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: return "SEND";
	case IBV_WR_SEND_WITH_IMM: return "SEND_WITH_IMM";
	case IBV_WR_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WR_RDMA_WRITE_WITH_IMM: return "RDMA_WRITE_WITH_IMM";
	case IBV_WR_RDMA_READ: return "RDMA_READ";
	case IBV_WR_ATOMIC_CMP_AND_SWP: return "ATOMIC_CMP_AND_SWP";
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return "ATOMIC_FETCH_AND_ADD";
	default: return "?";
	}
}

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

static enum ibv_wc_opcode req_wc_opcode(enum ibv_wr_opcode op)
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

static bool wait_bytes(const uint8_t *got, const uint8_t *want, size_t n)
{
	int64_t end = now_ms() + TIMEOUT_MS;

	while (memcmp(got, want, n)) {
		if (now_ms() >= end)
			return false;
		sleep_ms(1);
	}
	return true;
}

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n && a[i] == b[i]; i++)
		;
	return i;
}

/* One message of op from side 0 to side 1, checked end to end. */
static bool xfer(struct pair *p, enum ibv_wr_opcode op, bool inl, int nsge, size_t len)
{
	struct side *a = &p->s[0], *b = &p->s[1];
	bool is_send = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	bool has_imm = op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM;
	bool ud = p->type == IBV_QPT_UD;
	struct ibv_sge ssg[MAX_SGE], rsg[MAX_SGE];
	uint64_t wr_id = rnd(), recv_id = rnd();
	uint32_t imm = (uint32_t)rnd();
	uint8_t *want = malloc(len + 1), *got = malloc(len + GRH_SIZE + 1);
	uint8_t *target = b->buf + REMOTE_OFF;
	struct ibv_wc wc;
	struct send w = {
		.op = op, .wr_id = wr_id, .flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
		.sg = ssg, .nsge = nsge, .imm = imm,
		.raddr = (uintptr_t)target, .rkey = b->mr->rkey,
	};
	bool ok = false;
	int err;

	if (!want || !got) {
		snprintf(why, sizeof(why), "out of memory");
		goto out;
	}
	/* The source: scattered over side 0, or side 1's target for READ. */
	if (op == IBV_WR_RDMA_READ) {
		fill_random(target, len);
		memcpy(want, target, len);
		make_sges(a, READ_OFF, len, nsge, ssg);
		scatter_random(ssg, nsge);
	} else {
		make_sges(a, 0, len, nsge, ssg);
		scatter_random(ssg, nsge);
		gather(ssg, nsge, want);
		fill_random(target, len + 1);
	}
	if (is_send || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		int rn = is_send ? nsge : 0;

		if (is_send) {
			make_sges(b, 0, len, nsge, rsg);
			scatter_random(rsg, nsge);
			if (ud) {	/* room for the GRH first */
				rsg[0].addr -= GRH_SIZE;
				rsg[0].length += GRH_SIZE;
			}
		}
		err = post_recv(b, recv_id, rsg, rn);
		if (err) {
			snprintf(why, sizeof(why), "post_recv: %s", strerror(abs(err)));
			goto out;
		}
	}
	err = post_one(p, 0, &w);
	if (err) {
		snprintf(why, sizeof(why), "post: %s", strerror(abs(err)));
		goto out;
	}
	if (!expect_wc(a, &wc, "requester"))
		goto out;
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr_id || wc.opcode != req_wc_opcode(op) ||
	    wc.qp_num != a->qp->qp_num || (op == IBV_WR_RDMA_READ && wc.byte_len != len)) {
		snprintf(why, sizeof(why),
			 "requester CQE: status %s wr_id %s opcode %d qp_num %u byte_len %u",
			 ibv_wc_status_str(wc.status), wc.wr_id == wr_id ? "ok" : "WRONG",
			 wc.opcode, wc.qp_num, wc.byte_len);
		goto out;
	}
	if (is_send || op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		size_t want_len = len + (ud ? GRH_SIZE : 0);
		unsigned int want_flags = (has_imm ? IBV_WC_WITH_IMM : 0) | (ud ? IBV_WC_GRH : 0);
		enum ibv_wc_opcode want_op = is_send ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM;

		if (!expect_wc(b, &wc, "responder"))
			goto out;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != recv_id || wc.opcode != want_op ||
		    wc.byte_len != want_len || wc.qp_num != b->qp->qp_num ||
		    (wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_GRH)) != want_flags ||
		    (has_imm && wc.imm_data != htobe32(imm)) ||
		    (ud && wc.src_qp != a->qp->qp_num)) {
			snprintf(why, sizeof(why),
				 "responder CQE: status %s wr_id %s opcode %d byte_len %u (want %zu) qp_num %u flags %#x (want %#x) imm %#x (want %#x) src_qp %u",
				 ibv_wc_status_str(wc.status), wc.wr_id == recv_id ? "ok" : "WRONG",
				 wc.opcode, wc.byte_len, want_len, wc.qp_num, wc.wc_flags,
				 want_flags, be32toh(wc.imm_data), imm, wc.src_qp);
			goto out;
		}
	}
	if (is_send) {
		gather(rsg, nsge, got);
		if (ud && got[20] >> 4 != 4) {
			snprintf(why, sizeof(why), "UD GRH: no IPv4 header in bytes 20..39");
			goto out;
		}
		if (memcmp(got + (ud ? GRH_SIZE : 0), want, len)) {
			snprintf(why, sizeof(why), "received data differs at byte %zu",
				 first_diff(got + (ud ? GRH_SIZE : 0), want, len));
			goto out;
		}
	} else if (op == IBV_WR_RDMA_READ) {
		gather(ssg, nsge, got);
		if (memcmp(got, want, len)) {
			snprintf(why, sizeof(why), "read data differs at byte %zu",
				 first_diff(got, want, len));
			goto out;
		}
	} else {
		uint8_t guard = target[len];

		/* UC writes complete at the requester once sent. */
		if (!wait_bytes(target, want, len)) {
			snprintf(why, sizeof(why), "written data differs at byte %zu",
				 first_diff(target, want, len));
			goto out;
		}
		if (target[len] != guard) {
			snprintf(why, sizeof(why), "wrote past the end");
			goto out;
		}
	}
	ok = true;
out:
	free(want);
	free(got);
	return ok;
}

static void test_matrix(enum ibv_qp_type type, bool ex)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	};
	static const int sges[] = { 1, 2, 4 };
	struct qp_opts o = default_opts();
	struct pair p;
	bool have = false;
	size_t oi, si;
	int inl;

	o.ex = ex;
	for (oi = 0; oi < sizeof(ops) / sizeof(ops[0]); oi++) {
		enum ibv_wr_opcode op = ops[oi];

		if (!(send_ops(type) & (op == IBV_WR_SEND ? IBV_QP_EX_WITH_SEND :
					op == IBV_WR_SEND_WITH_IMM ? IBV_QP_EX_WITH_SEND_WITH_IMM :
					op == IBV_WR_RDMA_WRITE ? IBV_QP_EX_WITH_RDMA_WRITE :
					op == IBV_WR_RDMA_WRITE_WITH_IMM ?
					IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM :
					IBV_QP_EX_WITH_RDMA_READ)))
			continue;
		for (inl = 0; inl < 2; inl++) {
			if (inl && op == IBV_WR_RDMA_READ)
				continue;
			for (si = 0; si < sizeof(sges) / sizeof(sges[0]); si++) {
				size_t len;
				bool ok;

				if (!have) {
					have = pair_create(&p, type, &o);
					if (!have) {
						pair_destroy(&p);
						ktap_result(0, "%s %s: setup (%s)", type_name(type),
							    op_name(op), why);
						continue;
					}
				}
				if (inl)
					len = p.s[0].cap.max_inline_data < 160 ?
					      p.s[0].cap.max_inline_data : 160;
				else
					len = type == IBV_QPT_UD ? 1000 : 5000 + rnd() % 3000;
				ok = xfer(&p, op, inl, sges[si], len);
				ktap_result(ok, "%s %s %s%d SGE%s %zu bytes, %s", type_name(type),
					    op_name(op), inl ? "inline from " : "", sges[si],
					    sges[si] > 1 ? "s" : "", len,
					    ex ? "ibv_wr_* and ibv_start_poll" :
					    "ibv_post_send and ibv_poll_cq");
				if (!ok) {
					ktap_diag("%s", why);
					pair_destroy(&p);
					have = false;
				}
			}
		}
	}
	if (have)
		pair_destroy(&p);
}

static bool do_zero_length(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_wc wc;
	struct send w = { .op = IBV_WR_SEND_WITH_IMM, .wr_id = 9, .flags = IBV_SEND_SIGNALED,
			  .imm = 0x01020304 };
	bool ok = false;

	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	if (post_recv(&p.s[1], 8, NULL, 0) || post_one(&p, 0, &w)) {
		snprintf(why, sizeof(why), "posting failed");
		goto out;
	}
	if (!expect_status(&p.s[0], 9, IBV_WC_SUCCESS, "requester") ||
	    !expect_wc(&p.s[1], &wc, "responder"))
		goto out;
	if (wc.status != IBV_WC_SUCCESS || wc.byte_len != 0 || wc.opcode != IBV_WC_RECV ||
	    be32toh(wc.imm_data) != 0x01020304) {
		snprintf(why, sizeof(why), "responder CQE: status %s byte_len %u opcode %d",
			 ibv_wc_status_str(wc.status), wc.byte_len, wc.opcode);
		goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Atomics                                                             */

static bool do_atomics(bool ex)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_wc wc;
	struct ibv_sge sg;
	uint64_t *remote, *result, orig = rnd(), add = rnd(), swap = rnd();
	struct send w = { .flags = IBV_SEND_SIGNALED, .sg = &sg, .nsge = 1 };
	bool ok = false;

	o.ex = ex;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	remote = (uint64_t *)(p.s[1].buf + REMOTE_OFF + 8 * (rnd() % 64));
	result = (uint64_t *)(p.s[0].buf + READ_OFF);
	*remote = orig;
	sg = (struct ibv_sge){ (uintptr_t)result, 8, p.s[0].mr->lkey };
	w.raddr = (uintptr_t)remote;
	w.rkey = p.s[1].mr->rkey;

	/* FETCH_AND_ADD returns the original and leaves the sum. */
	w.op = IBV_WR_ATOMIC_FETCH_AND_ADD;
	w.wr_id = 1;
	w.compare_add = add;
	*result = 0;
	if (post_one(&p, 0, &w) || !expect_wc(&p.s[0], &wc, "fetch-add"))
		goto out;
	if (wc.status || wc.opcode != IBV_WC_FETCH_ADD || wc.byte_len != 8) {
		snprintf(why, sizeof(why), "fetch-add CQE: %s opcode %d byte_len %u",
			 ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
		goto out;
	}
	if (*result != orig || *remote != orig + add) {
		snprintf(why, sizeof(why), "fetch-add: returned %#" PRIx64 " (want %#" PRIx64
			 "), left %#" PRIx64 " (want %#" PRIx64 ")", *result, orig, *remote,
			 orig + add);
		goto out;
	}
	/* CMP_AND_SWP that matches: swaps, returns the original. */
	w.op = IBV_WR_ATOMIC_CMP_AND_SWP;
	w.wr_id = 2;
	w.compare_add = orig + add;
	w.swap = swap;
	*result = 0;
	if (post_one(&p, 0, &w) || !expect_wc(&p.s[0], &wc, "cmp-swap"))
		goto out;
	if (wc.status || wc.opcode != IBV_WC_COMP_SWAP || wc.byte_len != 8 ||
	    *result != orig + add || *remote != swap) {
		snprintf(why, sizeof(why), "cmp-swap (equal): status %s opcode %d returned %#"
			 PRIx64 " left %#" PRIx64, ibv_wc_status_str(wc.status), wc.opcode,
			 *result, *remote);
		goto out;
	}
	/* CMP_AND_SWP that does not match: no change, returns the value. */
	w.wr_id = 3;
	w.compare_add = swap + 1;
	w.swap = 0;
	*result = 0;
	if (post_one(&p, 0, &w) || !expect_status(&p.s[0], 3, IBV_WC_SUCCESS, "cmp-swap"))
		goto out;
	if (*result != swap || *remote != swap) {
		snprintf(why, sizeof(why), "cmp-swap (unequal): returned %#" PRIx64 " left %#"
			 PRIx64 " (want both %#" PRIx64 ")", *result, *remote, swap);
		goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Signaling and fences                                                */

static bool post_write(struct pair *p, uint64_t wr_id, unsigned int flags, size_t off,
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

static bool do_selective_signaling(void)
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

static bool do_sig_all(void)
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
static bool do_fence(void)
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

/* ------------------------------------------------------------------ */
/* CQ events, resize                                                   */

static bool send_msg(struct pair *p, uint64_t wr_id, unsigned int flags)
{
	struct ibv_sge sg = { (uintptr_t)p->s[0].buf, 64, p->s[0].mr->lkey };
	struct ibv_sge rsg = { (uintptr_t)p->s[1].buf, 64, p->s[1].mr->lkey };
	struct send w = { .op = IBV_WR_SEND, .wr_id = wr_id, .flags = flags | IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1 };

	CHECK(!post_recv(&p->s[1], wr_id, &rsg, 1), "post_recv failed");
	CHECK(!post_one(p, 0, &w), "post_send failed");
	return expect_status(&p->s[0], wr_id, IBV_WC_SUCCESS, "SEND");
}

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

static bool do_cq_events(bool solicited)
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

static bool do_resize_cq(void)
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

/* ------------------------------------------------------------------ */
/* SRQ                                                                 */

static bool do_srq(void)
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

/* ------------------------------------------------------------------ */
/* The QP state machine                                                */

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

static bool do_query_qp(void)
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

static bool do_bad_transitions(void)
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

static bool do_sqd(void)
{
	struct qp_opts o = default_opts();
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct ibv_qp_init_attr init;
	struct pair p;
	bool ok = false;

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
	if (!expect_status(&p.s[0], 1, IBV_WC_SUCCESS, "the WRITE before SQD"))
		goto out;
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
	if (!expect_status(&p.s[0], 2, IBV_WC_SUCCESS, "the WRITE posted in SQD"))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/* ERR, then RESET and up again: the rings start over and traffic flows. */
static bool do_reset_and_reuse(bool ex)
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
			    qp_to_init(p.s[i].qp, IBV_QPT_RC, all_access)) {
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

/* ------------------------------------------------------------------ */
/* Errors                                                              */

enum bad_kind {
	BAD_LKEY,
	BAD_SGE_BOUNDS,
	BAD_RKEY,
	BAD_REMOTE_ACCESS_WRITE,
	BAD_REMOTE_BOUNDS,
	BAD_REMOTE_ACCESS_READ,
};

static bool do_bad_access(enum bad_kind kind)
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

static bool do_rnr(bool recover)
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

static bool do_flush(void)
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

static bool do_wrong_state(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_sge sg;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad = NULL;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1 }, *rbad = NULL;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	bool ok = false;
	int err;

	o.stop_at_init = true;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf, 64, p.s[0].mr->lkey };
	err = ibv_post_send(p.s[0].qp, &wr, &bad);
	if (err != EINVAL || bad != &wr) {
		snprintf(why, sizeof(why), "post_send in INIT returned %d", err);
		goto out;
	}
	if (qp_to_rtr(p.s[0].qp, IBV_QPT_RC, p.s[1].qp->qp_num, &o)) {
		snprintf(why, sizeof(why), "to RTR failed");
		goto out;
	}
	bad = NULL;
	err = ibv_post_send(p.s[0].qp, &wr, &bad);
	if (err != EINVAL || bad != &wr) {
		snprintf(why, sizeof(why), "post_send in RTR returned %d", err);
		goto out;
	}
	if (ibv_modify_qp(p.s[0].qp, &a, IBV_QP_STATE)) {
		snprintf(why, sizeof(why), "to RESET failed");
		goto out;
	}
	err = ibv_post_recv(p.s[0].qp, &rwr, &rbad);
	if (err != EINVAL || rbad != &rwr) {
		snprintf(why, sizeof(why), "post_recv in RESET returned %d", err);
		goto out;
	}
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

static bool do_too_many_sends(void)
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

static bool do_too_many_recvs(void)
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

static bool do_too_many_sges(bool ex)
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

static bool do_inline_too_big(bool ex)
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

static bool do_cq_overrun(void)
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

/* ibv_wr_complete() with an error posts none of the batch. */
static bool do_wr_batch_error(void)
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

/* ------------------------------------------------------------------ */

struct named_test {
	const char *name;
	bool (*fn)(void);
};

/* One UD datagram from side 0 to group; side 1 has a receive posted. */
static int mcast_send(struct pair *p, struct ibv_ah *ah, uint64_t wr_id)
{
	struct side *a = &p->s[0], *b = &p->s[1];
	struct ibv_sge ssg = { (uintptr_t)a->buf, 256, a->mr->lkey };
	struct ibv_sge rsg = { (uintptr_t)b->buf, 256 + GRH_SIZE, b->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &ssg, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = 0xffffff, .remote_qkey = QKEY },
	}, *bad;
	struct ibv_wc wc;
	int err;

	err = post_recv(b, wr_id, &rsg, 1);
	if (!err)
		err = ibv_post_send(a->qp, &wr, &bad);
	if (err || !expect_wc(a, &wc, "sender"))
		return err ? err : -1;
	return wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/*
 * UD multicast on one device: a datagram to a group reaches an attached
 * QP (multicast loopback) and no longer after it detaches; attaching an
 * RC QP or a unicast GID is refused.
 */
static bool do_mcast(void)
{
	union ibv_gid group = { .raw = { [10] = 0xff, [11] = 0xff, 239, 9, 9, 9 } };
	struct ibv_ah_attr aha = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = group, .sgid_index = (uint8_t)E.gid_index, .hop_limit = 64 },
	};
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
	ah = ibv_create_ah(E.pd, &aha);
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

static bool atomics_post(void) { return do_atomics(false); }
static bool atomics_wr(void) { return do_atomics(true); }
static bool cq_events_next(void) { return do_cq_events(false); }
static bool cq_events_solicited(void) { return do_cq_events(true); }
static bool reset_post(void) { return do_reset_and_reuse(false); }
static bool reset_wr(void) { return do_reset_and_reuse(true); }
static bool bad_lkey(void) { return do_bad_access(BAD_LKEY); }
static bool bad_sge(void) { return do_bad_access(BAD_SGE_BOUNDS); }
static bool bad_rkey(void) { return do_bad_access(BAD_RKEY); }
static bool bad_rwrite(void) { return do_bad_access(BAD_REMOTE_ACCESS_WRITE); }
static bool bad_rbounds(void) { return do_bad_access(BAD_REMOTE_BOUNDS); }
static bool bad_rread(void) { return do_bad_access(BAD_REMOTE_ACCESS_READ); }
static bool rnr_exceeded(void) { return do_rnr(false); }
static bool rnr_recovers(void) { return do_rnr(true); }
static bool sges_post(void) { return do_too_many_sges(false); }
static bool sges_wr(void) { return do_too_many_sges(true); }
static bool inline_post(void) { return do_inline_too_big(false); }
static bool inline_wr(void) { return do_inline_too_big(true); }

static const struct named_test tests[] = {
	{ "SEND_WITH_IMM of 0 bytes, into a receive with no SGE", do_zero_length },
	{ "atomics return the original and leave the result (ibv_post_send)", atomics_post },
	{ "atomics return the original and leave the result (ibv_wr_*)", atomics_wr },
	{ "unsignaled WRs complete silently, the signaled one reports", do_selective_signaling },
	{ "sq_sig_all signals every WR", do_sig_all },
	{ "a fenced SEND carries what an earlier READ brought", do_fence },
	{ "ibv_req_notify_cq: one completion event per arm", cq_events_next },
	{ "ibv_req_notify_cq solicited: only a solicited message wakes", cq_events_solicited },
	{ "ibv_resize_cq keeps unpolled completions and grows", do_resize_cq },
	{ "SRQ: receives, query and the limit event", do_srq },
	{ "query_qp reports what modify_qp set", do_query_qp },
	{ "modify_qp refuses transitions the spec forbids", do_bad_transitions },
	{ "RTS->SQD drains with an event, SQD->RTS resumes", do_sqd },
	{ "ERR->RESET->RTS three times, traffic after (ibv_post_send)", reset_post },
	{ "ERR->RESET->RTS three times, traffic after (ibv_wr_*)", reset_wr },
	{ "bad lkey: LOC_PROT_ERR, then WR_FLUSH_ERR", bad_lkey },
	{ "SGE beyond its MR: LOC_PROT_ERR", bad_sge },
	{ "bad rkey: REM_ACCESS_ERR, nothing written", bad_rkey },
	{ "WRITE to an MR without remote write: REM_ACCESS_ERR, nothing written", bad_rwrite },
	{ "WRITE past the end of the remote MR: REM_ACCESS_ERR, nothing written", bad_rbounds },
	{ "READ from an MR without remote read: REM_ACCESS_ERR", bad_rread },
	{ "receiver not ready, retries run out: RNR_RETRY_EXC_ERR", rnr_exceeded },
	{ "receiver not ready, then a receive: RNR retried to success", rnr_recovers },
	{ "to ERR: every posted WR flushes with WR_FLUSH_ERR", do_flush },
	{ "post_send before RTS and post_recv in RESET: EINVAL", do_wrong_state },
	{ "more send WRs than max_send_wr: ENOMEM", do_too_many_sends },
	{ "more receive WRs than max_recv_wr: ENOMEM at the right WR", do_too_many_recvs },
	{ "more SGEs than allowed: EINVAL (ibv_post_send)", sges_post },
	{ "more SGEs than allowed: EINVAL (ibv_wr_*)", sges_wr },
	{ "inline beyond max_inline_data: EINVAL (ibv_post_send)", inline_post },
	{ "inline beyond max_inline_data: EINVAL (ibv_wr_*)", inline_wr },
	{ "ibv_wr_* batch with a bad WR posts nothing", do_wr_batch_error },
	{ "CQ overrun: IBV_EVENT_CQ_ERR", do_cq_overrun },
	{ "UD multicast: loopback to a member, none after detach, RC refused", do_mcast },
};

static int matrix_count(void)
{
	/* per API: RC 4 ops x 2 + READ = 9, UC 4 x 2 = 8, UD 2 x 2 = 4; x 3 SGE counts */
	return 2 * (9 + 8 + 4) * 3;
}

int main(int argc, char **argv)
{
	struct ibv_device **list, **d;
	uint64_t seed;
	size_t i;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX [SEED]\n", argv[0]);
		return 2;
	}
	seed = argc > 3 ? strtoull(argv[3], NULL, 0) : (uint64_t)time(NULL);
	E.rng = seed | 1;
	E.gid_index = atoi(argv[2]);
	list = ibv_get_device_list(NULL);
	for (d = list; d && *d; d++)
		if (!strcmp(ibv_get_device_name(*d), argv[1]))
			E.ctx = ibv_open_device(*d);
	if (list)
		ibv_free_device_list(list);
	ktap_print_header(matrix_count() + (int)(sizeof(tests) / sizeof(tests[0])));
	ktap_diag("device %s, GID index %d, seed %" PRIu64, argv[1], E.gid_index, seed);
	if (!E.ctx) {
		ktap_diag("cannot open %s", argv[1]);
		return 1;
	}
	E.pd = ibv_alloc_pd(E.ctx);
	if (!E.pd || ibv_query_gid(E.ctx, 1, E.gid_index, &E.gid)) {
		ktap_diag("no PD or no GID %d", E.gid_index);
		return 1;
	}
	for (ret = 0; ret < 2; ret++) {
		test_matrix(IBV_QPT_RC, ret);
		test_matrix(IBV_QPT_UC, ret);
		test_matrix(IBV_QPT_UD, ret);
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		bool ok;

		why[0] = '\0';
		ok = tests[i].fn();
		ktap_result(ok, "%s", tests[i].name);
		if (!ok)
			ktap_diag("%s", why);
	}
	ibv_dealloc_pd(E.pd);
	ibv_close_device(E.ctx);
	return ktap_finish();
}
