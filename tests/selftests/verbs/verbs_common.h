/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What the parts of vrnic_verbs share: the device under test, the KTAP
 * failure reason, QP pairs looped back through the device's own GID, and
 * helpers to post, poll and check.  Each verbs_*.c file holds the tests of
 * one topic; vrnic_verbs.c lists them and runs them.
 */
#ifndef VRNIC_VERBS_COMMON_H
#define VRNIC_VERBS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <infiniband/verbs.h>

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
/*
 * A UD receive's sl holds the L3 header type of its GRH, as on mlx5: 2 for
 * IPv4 (UCX's UD transport relies on it).
 */
#define UD_SL_IPV4	2

struct verbs_env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid_index;
	union ibv_gid gid;
	uint64_t rng;
};

extern struct verbs_env E;

/* Why a check failed, for the KTAP diagnostic. */
extern char why[256];
/* Why a test did not run, when it returns true with this set. */
extern char skip_why[256];

#define SKIP(...) do {						\
	snprintf(skip_why, sizeof(skip_why), __VA_ARGS__);	\
	return true;						\
} while (0)

/* A KTAP result line and a diagnostic line (vrnic_verbs.c counts them). */
void verbs_result(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void verbs_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define FAIL(...) do {						\
	snprintf(why, sizeof(why), __VA_ARGS__);		\
	return false;						\
} while (0)

#define CHECK(cond, ...) do {					\
	if (!(cond))						\
		FAIL(__VA_ARGS__);				\
} while (0)

/* CHECK for functions with something to clean up at out:. */
#define CHECK_OUT(cond, ...) do {				\
	if (!(cond)) {						\
		snprintf(why, sizeof(why), __VA_ARGS__);	\
		goto out;					\
	}							\
} while (0)

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
	struct ibv_cq *cq0;	/* side 0 completes here (the caller's CQ) */
	uint32_t create_flags0;	/* side 0's IBV_QP_CREATE_* */
	uint64_t more_ops;	/* ex: IBV_QP_EX_WITH_* beyond send_ops() */
	bool stop_at_init;	/* leave both QPs in INIT */
};

struct side {
	struct ibv_cq *cq;
	bool cq_borrowed;	/* qp_opts.cq0: not ours to destroy */
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

#define ALL_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

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

uint64_t rnd(void);
void fill_random(uint8_t *p, size_t n);
int64_t now_ms(void);
void sleep_ms(int ms);
struct qp_opts default_opts(void);
/* Whether the running kernel is at least major.minor. */
bool linux_at_least(int major, int minor);
uint64_t send_ops(enum ibv_qp_type type);
void side_destroy(struct side *s);
void pair_destroy(struct pair *p);
struct ibv_ah *make_ah(void);
int qp_to_init(struct ibv_qp *qp, enum ibv_qp_type type, int access);
int qp_to_rtr(struct ibv_qp *qp, enum ibv_qp_type type, uint32_t dest_qpn,
	      const struct qp_opts *o);
int qp_to_rts(struct ibv_qp *qp, enum ibv_qp_type type, const struct qp_opts *o);
bool side_create(struct pair *p, int i);
bool pair_connect(struct pair *p);
bool pair_create(struct pair *p, enum ibv_qp_type type, const struct qp_opts *o);
int poll_wc(struct side *s, struct ibv_wc *wc, int timeout_ms);
bool expect_wc(struct side *s, struct ibv_wc *wc, const char *what);
bool expect_no_wc(struct side *s, const char *what);
bool expect_status(struct side *s, uint64_t wr_id, enum ibv_wc_status st,
		   const char *what);
bool fd_readable(int fd, int timeout_ms);
bool expect_async(enum ibv_event_type type, const void *obj, const char *what);
void drain_async(void);
void make_sges(const struct side *s, size_t base, size_t len, int n, struct ibv_sge *sg);
size_t gather(const struct ibv_sge *sg, int n, uint8_t *out);
void scatter_random(const struct ibv_sge *sg, int n);
int post_one(struct pair *p, int i, const struct send *w);
int post_recv(struct side *s, uint64_t wr_id, struct ibv_sge *sg, int nsge);
enum ibv_wc_opcode req_wc_opcode(enum ibv_wr_opcode op);
bool wait_bytes(const uint8_t *got, const uint8_t *want, size_t n);
size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n);
bool post_write(struct pair *p, uint64_t wr_id, unsigned int flags, size_t off,
		size_t len);
bool send_msg(struct pair *p, uint64_t wr_id, unsigned int flags);

/* One transfer on a connected pair, every byte and CQE field checked. */
bool xfer(struct pair *p, enum ibv_wr_opcode op, bool inl, int nsge, size_t len);

/* The tests: each returns true on success, or false with why set. */
int matrix_count(void);
void test_matrix(enum ibv_qp_type type, bool ex);
bool do_zero_length(void);
bool do_atomics(bool ex);
bool do_atomic_write(void);
bool do_rdma_flush(void);
bool do_selective_signaling(void);
bool do_sig_all(void);
bool do_fence(void);
bool do_cq_events(bool solicited);
bool do_resize_cq(void);
bool do_resize_cq_below(void);
bool do_cq_moderation(void);
bool do_cq_overrun(void);
bool do_cq_max_cqe(void);
bool do_qp_gone_cleans_cq(bool reset);
bool do_srq(void);
bool do_srq_resize(void);
bool do_query_qp(void);
bool do_bad_transitions(void);
bool do_sqd(void);
bool do_reset_and_reuse(bool ex);
enum bad_kind {
	BAD_LKEY,
	BAD_SGE_BOUNDS,
	BAD_RKEY,
	BAD_REMOTE_ACCESS_WRITE,
	BAD_REMOTE_BOUNDS,
	BAD_REMOTE_ACCESS_READ,
};
bool do_bad_access(enum bad_kind kind);
bool do_sq_error(enum ibv_qp_type type);
bool do_rnr(bool recover);
bool do_flush(void);
bool do_wrong_state(bool ex);
bool do_too_many_sends(void);
bool do_too_many_recvs(void);
bool do_too_many_sges(bool ex);
bool do_inline_too_big(bool ex);
bool do_wr_batch_error(void);
bool do_mcast(void);
bool do_mcast_self_lb(void);
bool do_mw_type1(void);
bool do_mw_zero_based(void);
bool do_mw_type2(void);
bool do_mw_errors(void);
bool do_rereg_translation(void);
bool do_rereg_access(void);
bool do_rereg_pd(void);
bool do_rereg_errors(void);
bool do_dm(void);
bool do_rate_limit(void);
bool do_import(void);

#endif
