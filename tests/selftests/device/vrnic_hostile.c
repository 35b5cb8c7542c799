// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A hostile, unprivileged user of vrnic.  Through its own mapped rings and
 * doorbell records (libvrnic's vrnicdv functions say where they are) it
 *
 *   - writes malformed send WQEs: bad opcodes, SGE lists beyond the stride,
 *     inline data beyond the limit, wild lkeys, wild SGE addresses, wild
 *     rkeys and remote addresses, short atomics; then pure random ones;
 *   - runs a send producer index away, and keeps moving it;
 *   - resizes one CQ from several threads at once;
 *   - overruns a CQ, and overruns CQs while destroying them;
 *   - allocates a memory window with driver data vrnic does not define;
 *   - floods UD datagrams through the device's own GID to a QP with no
 *     receives.
 *
 *   vrnic_hostile DEVICE GID_INDEX SECONDS
 *
 * Prints one "hostile:" line per attack with what it tried and what came
 * back, "hostile: FAIL ..." for each expectation not met, and exits 0 only
 * when every malformed WQE completed with an error status and a vendor
 * error, every random one completed, the runaway producer and the overrun
 * were reported as QP_FATAL and CQ_ERR, and the resized CQ still works.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "verbs_common.h"
#include "vrnic-hw.h"
#include "vrnicdv.h"

void verbs_result(bool ok, const char *fmt, ...) { (void)ok; (void)fmt; }
void verbs_diag(const char *fmt, ...) { (void)fmt; }

static int (*dv_query_qp)(struct ibv_qp *, struct vrnicdv_qp *);
static int (*dv_ring)(struct ibv_context *);
static int failures;

#define FAILED(...) do {			\
	printf("hostile: FAIL " __VA_ARGS__);	\
	printf("\n");				\
	failures++;				\
} while (0)

/* libvrnic is loaded by libibverbs: find it among our objects. */
static int find_provider(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (strstr(info->dlpi_name, "/libvrnic-rdmav")) {
		*(void **)data = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
		return 1;
	}
	return 0;
}

static bool load_dv(void)
{
	void *h = NULL;

	dl_iterate_phdr(find_provider, &h);
	if (!h)
		return false;
	dv_query_qp = (int (*)(struct ibv_qp *, struct vrnicdv_qp *))dlsym(h, "vrnicdv_query_qp");
	dv_ring = (int (*)(struct ibv_context *))dlsym(h, "vrnicdv_ring_doorbell");
	return dv_query_qp && dv_ring;
}

/* ------------------------------------------------------------------ */
/* Raw send WQEs                                                        */

static void publish_sq(const struct vrnicdv_qp *q, uint32_t pi)
{
	atomic_store_explicit((_Atomic uint32_t *)((uint8_t *)q->dbrec +
			      offsetof(struct vrnic_qp_dbrec, sq_pi)), pi,
			      memory_order_release);
	dv_ring(E.ctx);
}

static uint8_t *sq_slot(const struct vrnicdv_qp *q, uint32_t pi)
{
	size_t stride = (size_t)1 << q->sq_log_stride;

	return (uint8_t *)q->sq + (size_t)(pi & ((1U << q->sq_log_depth) - 1)) * stride;
}

enum bad { B_OPCODE, B_LAYOUT, B_INLINE, B_LKEY, B_BOUNDS, B_RKEY, B_RADDR, B_ATOMIC,
	   B_KINDS };
static const char *const bad_name[B_KINDS] = {
	"opcode", "layout", "inline", "lkey", "bounds", "rkey", "raddr", "atomic",
};

/* A malformed WQE of one kind, with random values where they are free. */
static void bad_wqe(struct pair *p, const struct vrnicdv_qp *q, enum bad kind,
		    uint64_t wr_id, uint8_t *slot)
{
	size_t stride = (size_t)1 << q->sq_log_stride;
	struct vrnic_sqe h = { .wr_id = wr_id };
	struct vrnic_sge sge = {
		.addr = (uintptr_t)p->s[0].buf, .length = 64, .lkey = p->s[0].mr->lkey,
	};
	uint32_t op = VRNIC_WQE_RDMA_WRITE, nsge = 1;

	h.remote_addr = (uintptr_t)p->s[1].buf + REMOTE_OFF;
	h.rkey = p->s[1].mr->rkey;
	switch (kind) {
	case B_OPCODE:
		op = 7 + (uint32_t)(rnd() % 249);
		break;
	case B_LAYOUT:
		nsge = (uint32_t)(stride / sizeof(sge)) + (uint32_t)(rnd() % 200);
		break;
	case B_INLINE:
		h.ctrl = VRNIC_WQE_CTRL_INLINE;
		h.length = (uint32_t)(stride + rnd() % 100000);
		nsge = 0;
		break;
	case B_LKEY:
		sge.lkey = (uint32_t)rnd() ^ p->s[0].mr->lkey;
		if (sge.lkey == p->s[0].mr->lkey)
			sge.lkey++;
		break;
	case B_BOUNDS:
		sge.addr = rnd() | (1ULL << 47);
		break;
	case B_RKEY:
		h.rkey = (uint32_t)rnd() ^ p->s[1].mr->rkey;
		if (h.rkey == p->s[1].mr->rkey)
			h.rkey++;
		break;
	case B_RADDR:
		h.remote_addr = rnd() | (1ULL << 46);
		break;
	case B_ATOMIC:
		op = VRNIC_WQE_ATOMIC_FETCH_AND_ADD;
		sge.length = 1 + (uint32_t)(rnd() % 7);
		break;
	default:
		break;
	}
	h.ctrl |= VRNIC_WQE_CTRL_SIGNALED | (op & VRNIC_WQE_CTRL_OPCODE_MASK) |
		  (nsge << 16 & VRNIC_WQE_CTRL_NUM_SGE_MASK);
	memset(slot, 0, stride);
	memcpy(slot, &h, sizeof(h));
	if (nsge && kind != B_LAYOUT)
		memcpy(slot + VRNIC_SQE_DATA_OFFSET, &sge, sizeof(sge));
}

/* Back to RTS with empty rings, both sides: each bad WQE gets a fresh QP. */
static bool pair_reset(struct pair *p)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int i;

	for (i = 0; i < 2; i++) {
		CHECK(!ibv_modify_qp(p->s[i].qp, &a, IBV_QP_STATE), "to RESET: %s",
		      strerror(errno));
		CHECK(!qp_to_init(p->s[i].qp, p->type, p->o.access[i]), "to INIT: %s",
		      strerror(errno));
	}
	return pair_connect(p);
}

static void attack_malformed(int rounds)
{
	struct qp_opts o = default_opts();
	unsigned int codes[256] = { 0 }, per_kind[B_KINDS] = { 0 };
	int posted = 0, good = 0, random_posted = 0, random_done = 0, random_err = 0;
	struct vrnicdv_qp q;
	struct ibv_wc wc;
	struct pair p;
	char seen[512];
	size_t n = 0;
	int r, k, i;

	/* Sends find no receive: give up on RNR soon, and on lost ACKs. */
	o.rnr_retry = 1;
	o.retry_cnt = 1;
	o.timeout = 10;
	if (!pair_create(&p, IBV_QPT_RC, &o) || dv_query_qp(p.s[0].qp, &q)) {
		FAILED("malformed: no QP pair: %s", why);
		return;
	}
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < B_KINDS; k++) {
			uint64_t id = (uint64_t)r << 8 | (uint64_t)k;

			if (!pair_reset(&p)) {
				FAILED("malformed: reset: %s", why);
				goto out;
			}
			bad_wqe(&p, &q, (enum bad)k, id, sq_slot(&q, 0));
			publish_sq(&q, 1);
			posted++;
			if (poll_wc(&p.s[0], &wc, TIMEOUT_MS) != 1 || wc.wr_id != id) {
				FAILED("malformed %s: no completion", bad_name[k]);
				continue;
			}
			if (wc.status == IBV_WC_SUCCESS || !wc.vendor_err) {
				FAILED("malformed %s: status %s, vendor error %u", bad_name[k],
				       ibv_wc_status_str(wc.status), wc.vendor_err);
				continue;
			}
			good++;
			per_kind[k]++;
			codes[wc.vendor_err & 0xff]++;
		}
	}
	/* Pure garbage, but signaled: whatever it is, it must complete. */
	for (r = 0; r < rounds * 4; r++) {
		uint8_t *slot = sq_slot(&q, 0);
		uint32_t ctrl;

		if (!pair_reset(&p)) {
			FAILED("random: reset: %s", why);
			goto out;
		}
		fill_random(slot, (size_t)1 << q.sq_log_stride);
		memcpy(&ctrl, slot + offsetof(struct vrnic_sqe, ctrl), sizeof(ctrl));
		ctrl |= VRNIC_WQE_CTRL_SIGNALED;
		memcpy(slot + offsetof(struct vrnic_sqe, ctrl), &ctrl, sizeof(ctrl));
		publish_sq(&q, 1);
		random_posted++;
		if (poll_wc(&p.s[0], &wc, TIMEOUT_MS) == 1) {
			random_done++;
			random_err += wc.status != IBV_WC_SUCCESS;
		}
	}
	seen[0] = 0;
	for (i = 1; i < 256; i++)
		if (codes[i])
			n += (size_t)snprintf(seen + n, sizeof(seen) - n, " %d:%u", i, codes[i]);
	printf("hostile: malformed WQEs: %d posted, %d completed with an error status and a vendor error (vendor errors%s)\n",
	       posted, good, seen);
	if (good != posted)
		FAILED("malformed: %d of %d without an error and a vendor error", posted - good,
		       posted);
	printf("hostile: random WQEs: %d posted, %d completed, %d of them in error\n",
	       random_posted, random_done, random_err);
	if (random_done != random_posted)
		FAILED("random: %d of %d never completed", random_posted - random_done,
		       random_posted);
out:
	pair_destroy(&p);
}

/* ------------------------------------------------------------------ */
/* Async events                                                         */

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int ev_count[64];
static const void *ev_obj[64][8];
static atomic_bool stopping;

/*
 * The async fd is non-blocking: destroying a CQ or QP takes its events
 * off the queue, so an event that poll() saw may be gone by the read
 * (the 70 CQs destroyed at once do that), and a blocking read would then
 * wait for ever.
 */
static void *async_thread(void *arg)
{
	int fd = E.ctx->async_fd;
	struct ibv_async_event ev;

	(void)arg;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK))
		FAILED("async fd: O_NONBLOCK: %s", strerror(errno));
	while (!atomic_load(&stopping)) {
		if (!fd_readable(E.ctx->async_fd, 100) || ibv_get_async_event(E.ctx, &ev))
			continue;
		pthread_mutex_lock(&ev_lock);
		if ((unsigned int)ev.event_type < 64) {
			unsigned int *c = &ev_count[ev.event_type];

			if (*c < 8)
				ev_obj[ev.event_type][*c] = ev.event_type == IBV_EVENT_CQ_ERR ?
					(void *)ev.element.cq : (void *)ev.element.qp;
			(*c)++;
		}
		pthread_mutex_unlock(&ev_lock);
		ibv_ack_async_event(&ev);
	}
	return NULL;
}

/* Wait until an event of type about obj has come; its latency in ms. */
static int64_t wait_event(enum ibv_event_type type, const void *obj, int timeout_ms)
{
	int64_t start = now_ms();
	unsigned int i;

	while (now_ms() - start < timeout_ms) {
		pthread_mutex_lock(&ev_lock);
		for (i = 0; i < ev_count[type] && i < 8; i++) {
			if (ev_obj[type][i] == obj) {
				pthread_mutex_unlock(&ev_lock);
				return now_ms() - start;
			}
		}
		pthread_mutex_unlock(&ev_lock);
		sleep_ms(10);
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* The producer runs away, and keeps running                            */

struct runaway {
	struct vrnicdv_qp q;
	int seconds;
	unsigned long moves;
};

static void *runaway_thread(void *arg)
{
	struct runaway *ra = arg;
	int64_t end = now_ms() + (int64_t)ra->seconds * 1000;

	while (now_ms() < end) {
		publish_sq(&ra->q, (uint32_t)rnd());
		ra->moves++;
		sleep_ms(1);
	}
	return NULL;
}

static void attack_runaway(struct pair *p, pthread_t *thread, struct runaway *ra, int seconds)
{
	int64_t ms;

	if (dv_query_qp(p->s[0].qp, &ra->q)) {
		FAILED("runaway: no rings");
		return;
	}
	ra->seconds = seconds;
	publish_sq(&ra->q, 1U << 30);
	ms = wait_event(IBV_EVENT_QP_FATAL, p->s[0].qp, TIMEOUT_MS);
	printf("hostile: runaway producer (sq_pi 2^30 ahead): %s\n",
	       ms >= 0 ? "QP_FATAL" : "no event");
	if (ms < 0)
		FAILED("runaway: no QP_FATAL");
	if (pthread_create(thread, NULL, runaway_thread, ra))
		FAILED("runaway: no thread");
}

/* ------------------------------------------------------------------ */
/* Resizing one CQ from several threads                                 */

struct resizer {
	struct ibv_cq *cq;
	int ok, failed;
};

static void *resize_thread(void *arg)
{
	struct resizer *rs = arg;
	int i;

	for (i = 0; i < 100; i++) {
		if (ibv_resize_cq(rs->cq, 16 << (rnd() % 7)))
			rs->failed++;
		else
			rs->ok++;
	}
	return NULL;
}

static void attack_resize(void)
{
	struct qp_opts o = default_opts();
	struct resizer rs[4];
	pthread_t t[4];
	struct ibv_wc wc;
	struct pair p;
	int i, ok = 0, failed = 0;
	bool works;

	if (!pair_create(&p, IBV_QPT_RC, &o)) {
		FAILED("resize: no QP pair: %s", why);
		return;
	}
	for (i = 0; i < 4; i++) {
		rs[i] = (struct resizer){ .cq = p.s[0].cq };
		pthread_create(&t[i], NULL, resize_thread, &rs[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ok += rs[i].ok;
		failed += rs[i].failed;
	}
	works = post_write(&p, 77, IBV_SEND_SIGNALED, 0, 4096) &&
		poll_wc(&p.s[0], &wc, TIMEOUT_MS) == 1 && wc.status == IBV_WC_SUCCESS;
	printf("hostile: resize_cq from 4 threads: %d resizes done, %d refused; the CQ %s after\n",
	       ok, failed, works ? "works" : "is broken");
	if (!works)
		FAILED("resize: the CQ does not work after");
	pair_destroy(&p);
}

/* ------------------------------------------------------------------ */
/* CQ overrun                                                           */

static void attack_overrun(void)
{
	struct qp_opts o = default_opts();
	struct pair p;
	int64_t ms;
	int i, n = 0;

	o.cqe = 1;
	o.max_send_wr = 256;
	if (!pair_create(&p, IBV_QPT_RC, &o)) {
		FAILED("overrun: no QP pair: %s", why);
		return;
	}
	for (i = 0; i < 200; i++)
		n += post_write(&p, (uint64_t)i, IBV_SEND_SIGNALED, 0, 0);
	ms = wait_event(IBV_EVENT_CQ_ERR, p.s[0].cq, TIMEOUT_MS);
	printf("hostile: CQ overrun (%d signaled WRITEs, CQ of %d): %s\n", n, p.s[0].cq->cqe,
	       ms >= 0 ? "CQ_ERR" : "no event");
	if (ms < 0)
		FAILED("overrun: no CQ_ERR");
	pair_destroy(&p);
}

/*
 * Overrun CQs and destroy them at once, round after round, while the
 * device is still reporting the overruns: a CQ_ERROR handled in the same
 * async pass as DESTROY_CQ's completion must not reach a CQ ib_core is
 * freeing (under KASAN, make debug-kernel, a use after free).
 */
static void attack_overrun_destroy(int seconds)
{
	int64_t end = now_ms() + (int64_t)seconds * 1000;
	struct qp_opts o = default_opts();
	unsigned long rounds = 0;
	struct pair p;
	int i;

	o.cqe = 1;
	o.max_send_wr = 64;
	while (now_ms() < end) {
		if (!pair_create(&p, IBV_QPT_RC, &o)) {
			FAILED("overrun while destroying: no QP pair: %s", why);
			return;
		}
		for (i = 0; i < 64; i++)
			post_write(&p, (uint64_t)i, IBV_SEND_SIGNALED, 0, 0);
		pair_destroy(&p);
		rounds++;
	}
	printf("hostile: %lu CQs overrun and destroyed at once\n", rounds);
	if (!rounds)
		FAILED("overrun while destroying: no round ran");
}

/*
 * ALLOC_MW through the uverbs write interface, with driver data vrnic
 * does not define: the driver must refuse it, not ignore it (as it would
 * ignore a request from a newer library that it cannot honour).
 */
static void attack_alloc_mw_udata(void)
{
	struct ib_uverbs_cmd_hdr hdr = { .command = IB_USER_VERBS_CMD_ALLOC_MW };
	struct ib_uverbs_alloc_mw cmd = { .mw_type = IBV_MW_TYPE_1 };
	struct ib_uverbs_alloc_mw_resp resp;
	__u64 driver_data = 0x5a5a;
	uint64_t req[8];
	size_t len = sizeof(hdr) + sizeof(cmd) + sizeof(driver_data);
	ssize_t n;

	memset(&resp, 0, sizeof(resp));
	hdr.in_words = (__u16)(len / 4);
	hdr.out_words = (__u16)(sizeof(resp) / 4);
	cmd.response = (uintptr_t)&resp;
	cmd.pd_handle = E.pd->handle;
	memcpy(req, &hdr, sizeof(hdr));
	memcpy((char *)req + sizeof(hdr), &cmd, sizeof(cmd));
	memcpy((char *)req + sizeof(hdr) + sizeof(cmd), &driver_data, sizeof(driver_data));
	n = write(E.ctx->cmd_fd, req, len);
	printf("hostile: ALLOC_MW with driver data: %s\n",
	       n < 0 ? strerror(errno) : "accepted");
	if (n >= 0)
		FAILED("ALLOC_MW with non-zero driver data was accepted (rkey %#x)", resp.rkey);
}

/* ------------------------------------------------------------------ */
/* UD flood through the device's own GID                                */

static void attack_ud_flood(int seconds)
{
	struct qp_opts o = default_opts();
	int64_t end = now_ms() + (int64_t)seconds * 1000;
	unsigned long sent = 0, errors = 0;
	struct ibv_wc wc[32];
	struct pair p;
	int inflight = 0;

	o.max_send_wr = 256;
	o.cqe = 512;
	if (!pair_create(&p, IBV_QPT_UD, &o)) {
		FAILED("ud flood: no QP pair: %s", why);
		return;
	}
	while (now_ms() < end) {
		struct ibv_sge sge = { (uintptr_t)p.s[0].buf, 256, p.s[0].mr->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = p.s[0].ah, .remote_qpn = p.s[1].qp->qp_num,
				   .remote_qkey = QKEY },
		}, *bad;
		int got, i;

		while (inflight < 200 && !ibv_post_send(p.s[0].qp, &wr, &bad))
			inflight++;
		got = ibv_poll_cq(p.s[0].cq, 32, wc);
		for (i = 0; i < got; i++) {
			sent++;
			errors += wc[i].status != IBV_WC_SUCCESS;
		}
		inflight -= got > 0 ? got : 0;
	}
	printf("hostile: UD flood to a QP without receives: %lu datagrams in %d s, %lu in error\n",
	       sent, seconds, errors);
	pair_destroy(&p);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct runaway ra = { 0 };
	pthread_t async, runaway = 0;
	struct qp_opts o;
	struct pair victim;
	int seconds, i;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX SECONDS\n", argv[0]);
		return 2;
	}
	/* Line by line: a hang's report shows how far the attack came. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	seconds = atoi(argv[3]);
	E.gid_index = atoi(argv[2]);
	E.rng = 0x5eed ^ (uint64_t)now_ms();
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			E.ctx = ibv_open_device(list[i]);
	if (!E.ctx || !(E.pd = ibv_alloc_pd(E.ctx)) ||
	    ibv_query_gid(E.ctx, 1, E.gid_index, &E.gid)) {
		printf("hostile: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (!load_dv()) {
		printf("hostile: libvrnic's vrnicdv functions not found\n");
		return 1;
	}
	printf("hostile: running as uid %u for about %d s\n", getuid(), seconds);
	pthread_create(&async, NULL, async_thread, NULL);

	o = default_opts();
	if (!pair_create(&victim, IBV_QPT_RC, &o)) {
		printf("hostile: no QP pair: %s\n", why);
		return 1;
	}
	attack_runaway(&victim, &runaway, &ra, seconds);
	attack_malformed(12);
	attack_resize();
	attack_overrun();
	attack_overrun_destroy(seconds / 4 > 0 ? seconds / 4 : 1);
	attack_alloc_mw_udata();
	attack_ud_flood(seconds / 3 > 0 ? seconds / 3 : 1);
	if (runaway)
		pthread_join(runaway, NULL);
	printf("hostile: the runaway producer moved %lu times while the rest ran\n", ra.moves);
	atomic_store(&stopping, true);
	pthread_join(async, NULL);
	printf("hostile: async events: QP_FATAL %u, CQ_ERR %u, QP_REQ_ERR %u, QP_ACCESS_ERR %u, DEVICE_FATAL %u\n",
	       ev_count[IBV_EVENT_QP_FATAL], ev_count[IBV_EVENT_CQ_ERR],
	       ev_count[IBV_EVENT_QP_REQ_ERR], ev_count[IBV_EVENT_QP_ACCESS_ERR],
	       ev_count[IBV_EVENT_DEVICE_FATAL]);
	if (ev_count[IBV_EVENT_DEVICE_FATAL])
		FAILED("the device died");
	pair_destroy(&victim);
	ibv_dealloc_pd(E.pd);
	ibv_close_device(E.ctx);
	ibv_free_device_list(list);
	printf("hostile: %s\n", failures ? "FAILED" : "done");
	return failures ? 1 : 0;
}
