// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A data-verifying RC transfer between two nodes (any RoCE devices: vrnic,
 * rxe, ...).  The client moves data with RDMA WRITE, RDMA READ, SEND and
 * atomics, round after round, and every byte is checked against a pattern
 * both sides derive from the round number: the server checks what was
 * written and sent to it, the client what it read and what the atomics
 * returned.  A TCP connection carries the QP handshake and the round
 * control; the data moves only over RDMA.
 *
 *   vrnic_xfer -d DEV -g GID_INDEX [OPTIONS]             (server)
 *   vrnic_xfer -d DEV -g GID_INDEX [OPTIONS] SERVER_IP   (client)
 *
 *   -p PORT       TCP port (default 18515)
 *   -b BYTES      move at least this much (default 8M; K/M/G suffixes)
 *   -s BYTES      buffer per round (default 1M)
 *   -m BYTES      message size (default 64K)
 *   -t TIMEOUT    the QP's local ACK timeout exponent (default 14)
 *   -r RETRY      the QP's retry count (default 7)
 *   -c FILE       server: also register a 64 KiB canary buffer (remote write
 *                 allowed) in the QP's PD, write "QPN RKEY ADDR" to FILE,
 *                 and at the end check that nothing wrote it ("canary
 *                 intact", or exit 5); for the hostile-wire test
 *   -w            client: only RDMA WRITEs, and on a work completion error
 *                 print its status and how long the failing WRITE took
 *                 (exit 3); server: wait for the client to go, or for
 *                 IBV_EVENT_DEVICE_FATAL (exit 4)
 *
 * Waiting for completions, either side exits 4 on IBV_EVENT_DEVICE_FATAL.
 *
 * Prints "verified N bytes: ..." and exits 0 when every byte was right;
 * any error exits non-zero with the reason.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "pair_util.h"

#define WC_TIMEOUT_MS	60000
#define SEND_DEPTH	64
#define ATOMICS		16

struct conn_info {
	uint32_t qpn;
	uint32_t psn;
	uint32_t rkey;
	uint32_t pad;
	uint64_t addr;
	uint64_t size;
	uint8_t gid[16];
};

/* Round control, client to server; the server answers with a status. */
enum { OP_WRITE = 1, OP_READ, OP_SEND, OP_ATOMIC, OP_DONE };
struct ctl {
	uint32_t op;
	uint32_t round;
	uint64_t len;
	uint64_t arg;
};

static struct {
	const char *dev;
	int gid_index;
	int port;
	uint64_t total;
	uint64_t size;
	uint64_t msg;
	int timeout;
	int retry;
	bool write_only;
	const char *server;
	const char *canary_file;
} O = {
	.port = 18515, .total = 8 << 20, .size = 1 << 20, .msg = 64 << 10,
	.timeout = 14, .retry = 7, .gid_index = -1,
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* [0, size): the peer's target; [size, 2 size): staging */
	struct conn_info peer;
	uint8_t *canary;
	struct ibv_mr *canary_mr;
} R;

#define CANARY_SIZE	(64 << 10)
#define CANARY_BYTE	0x5a

/* -c: a buffer nobody should write, and where to find it. */
static void make_canary(void)
{
	FILE *f;

	if (posix_memalign((void **)&R.canary, 4096, CANARY_SIZE))
		die("out of memory");
	memset(R.canary, CANARY_BYTE, CANARY_SIZE);
	R.canary_mr = ibv_reg_mr(R.pd, R.canary, CANARY_SIZE,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!R.canary_mr)
		die("cannot register the canary: %s", strerror(errno));
	f = fopen(O.canary_file, "w");
	if (!f || fprintf(f, "%u %u %" PRIu64 "\n", R.qp->qp_num, R.canary_mr->rkey,
			  (uint64_t)(uintptr_t)R.canary) < 0 || fclose(f))
		die("%s: %s", O.canary_file, strerror(errno));
}

static void check_canary(void)
{
	for (size_t i = 0; i < CANARY_SIZE; i++) {
		if (R.canary[i] != CANARY_BYTE) {
			printf("canary overwritten at offset %zu\n", i);
			fflush(stdout);
			exit(5);
		}
	}
	printf("canary intact\n");
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	}
	if (*end || !v)
		die("bad size '%s'", s);
	return v;
}

static void setup(void)
{
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SEND_DEPTH, .max_recv_wr = SEND_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	R.ctx = open_device_named(O.dev);
	R.pd = ibv_alloc_pd(R.ctx);
	R.cq = ibv_create_cq(R.ctx, 2 * SEND_DEPTH, NULL, NULL, 0);
	if (!R.pd || !R.cq)
		die("cannot create a PD or CQ: %s", strerror(errno));
	qia.send_cq = R.cq;
	qia.recv_cq = R.cq;
	R.qp = ibv_create_qp(R.pd, &qia);
	if (posix_memalign((void **)&R.buf, 4096, 2 * O.size))
		die("out of memory");
	memset(R.buf, 0, 2 * O.size);
	R.mr = ibv_reg_mr(R.pd, R.buf, 2 * O.size, access);
	if (!R.qp || !R.mr)
		die("cannot create the QP or MR: %s", strerror(errno));
}

static void connect_qp(void)
{
	struct conn_info me = {
		.qpn = R.qp->qp_num, .psn = (uint32_t)now_us() & 0xffffff,
		.rkey = R.mr->rkey, .addr = (uintptr_t)R.buf, .size = O.size,
	};
	union ibv_gid gid;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (ibv_query_gid(R.ctx, 1, O.gid_index, &gid))
		die("cannot read GID %d", O.gid_index);
	memcpy(me.gid, gid.raw, 16);
	xwrite(&me, sizeof(me));
	xread(&R.peer, sizeof(R.peer));
	if (R.peer.size < O.size)
		die("the peer's buffer is smaller (%" PRIu64 ")", R.peer.size);

	if (ibv_modify_qp(R.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("modify QP to INIT: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = R.peer.qpn;
	a.rq_psn = R.peer.psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = (uint8_t)O.gid_index;
	memcpy(a.ah_attr.grh.dgid.raw, R.peer.gid, 16);
	if (ibv_modify_qp(R.qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("modify QP to RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me.psn;
	a.timeout = (uint8_t)O.timeout;
	a.retry_cnt = (uint8_t)O.retry;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(R.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify QP to RTS: %s", strerror(errno));
	/* Both QPs must be ready before the first request: one that reached
	 * a QP still in INIT would be dropped, and on a lossy link the peer
	 * may be late by a TCP retransmission (which outlasts the retries). */
	char ready = 'r';

	xwrite(&ready, 1);
	xread(&ready, 1);
}

/* Ack an async event; IBV_EVENT_DEVICE_FATAL ends the run (exit 4). */
static void take_async_event(struct ibv_async_event *ev)
{
	enum ibv_event_type type = ev->event_type;

	ibv_ack_async_event(ev);
	if (type == IBV_EVENT_DEVICE_FATAL) {
		printf("device fatal: %s\n", ibv_event_type_str(type));
		fflush(stdout);
		exit(4);
	}
}

/*
 * Now and then while a CQ stays empty: a device that died completes
 * nothing more, so IBV_EVENT_DEVICE_FATAL ends the run (exit 4) rather
 * than the completion timeout.
 */
static void check_device_fatal(void)
{
	struct pollfd pfd = { .fd = R.ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	while (poll(&pfd, 1, 0) > 0 && !ibv_get_async_event(R.ctx, &ev))
		take_async_event(&ev);
}

/* Wait for n completions; all must succeed with the expected opcode. */
static void wait_wcs(int n, enum ibv_wc_opcode want, struct ibv_wc *last)
{
	int64_t deadline = now_us() + (int64_t)WC_TIMEOUT_MS * 1000;
	struct ibv_wc wc[16];
	unsigned int idle = 0;

	while (n > 0) {
		int got = ibv_poll_cq(R.cq, n < 16 ? n : 16, wc);

		if (!got && ++idle % 4096 == 0)
			check_device_fatal();

		if (got < 0)
			die("ibv_poll_cq failed");
		for (int i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				die("work completion error: %s (%d), opcode %d, wr_id %" PRIu64,
				    ibv_wc_status_str(wc[i].status), wc[i].status, wc[i].opcode,
				    wc[i].wr_id);
			if (wc[i].opcode != want)
				die("completion opcode %d, expected %d", wc[i].opcode, want);
			if (last)
				*last = wc[i];
		}
		n -= got;
		if (!got && now_us() > deadline)
			die("no completion for %d s (%d outstanding)", WC_TIMEOUT_MS / 1000, n);
	}
}

static void post_send(enum ibv_wr_opcode op, uint64_t local, uint32_t len, uint64_t remote,
		      uint64_t compare_add, uint64_t swap, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)R.buf + local, .length = len, .lkey = R.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = R.peer.addr + remote;
		wr.wr.atomic.rkey = R.peer.rkey;
		wr.wr.atomic.compare_add = compare_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = R.peer.addr + remote;
		wr.wr.rdma.rkey = R.peer.rkey;
	}
	if (ibv_post_send(R.qp, &wr, &bad))
		die("ibv_post_send: %s", strerror(errno));
}

static void post_recv(uint64_t local, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)R.buf + local, .length = len, .lkey = R.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = local, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(R.qp, &wr, &bad))
		die("ibv_post_recv: %s", strerror(errno));
}

/* Move [0, len) of the staging area to/from the peer's target area, in
 * messages, keeping up to SEND_DEPTH / 2 in flight. */
static void rdma_stream(enum ibv_wr_opcode op, uint64_t len)
{
	enum ibv_wc_opcode want = op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
				  op == IBV_WR_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE;
	uint64_t off = 0;
	int inflight = 0;

	while (off < len) {
		uint32_t n = (uint32_t)(len - off < O.msg ? len - off : O.msg);

		if (inflight == SEND_DEPTH / 2) {
			wait_wcs(1, want, NULL);
			inflight--;
		}
		post_send(op, O.size + off, n, off, 0, 0, off);
		inflight++;
		off += n;
	}
	wait_wcs(inflight, want, NULL);
}

static int64_t round_trip(uint32_t op, uint32_t round, uint64_t len, uint64_t arg)
{
	struct ctl c = { .op = op, .round = round, .len = len, .arg = arg };
	int64_t status;

	xwrite(&c, sizeof(c));
	xread(&status, sizeof(status));
	return status;
}

static void client(void)
{
	uint64_t moved = 0, atomics = 0, counts[4] = { 0 };
	uint32_t round = 0;
	int64_t bad, t0 = now_us();

	while (moved < O.total) {
		uint64_t len = O.size;

		round++;
		if (O.write_only) {
			int64_t start = now_us();
			struct ibv_wc wc;
			int got;

			fill(R.buf + O.size, len, round, OP_WRITE);
			post_send(IBV_WR_RDMA_WRITE, O.size, (uint32_t)(len < O.msg ? len : O.msg),
				  0, 0, 0, round);
			unsigned int idle = 0;

			do {
				got = ibv_poll_cq(R.cq, 1, &wc);
				if (!got && ++idle % 4096 == 0)
					check_device_fatal();
			} while (got == 0 && now_us() - start < (int64_t)WC_TIMEOUT_MS * 1000);
			if (got != 1)
				die("no completion for %d s", WC_TIMEOUT_MS / 1000);
			if (wc.status != IBV_WC_SUCCESS) {
				printf("write %u failed after %" PRId64 " ms: %s (%d)\n", round,
				       (now_us() - start) / 1000, ibv_wc_status_str(wc.status),
				       wc.status);
				fflush(stdout);
				exit(3);
			}
			moved += len < O.msg ? len : O.msg;
			continue;
		}

		/* WRITE: the server checks its target area. */
		fill(R.buf + O.size, len, round, OP_WRITE);
		rdma_stream(IBV_WR_RDMA_WRITE, len);
		bad = round_trip(OP_WRITE, round, len, 0);
		if (bad >= 0)
			die("round %u: RDMA WRITE data wrong at offset %" PRId64 " (server)", round, bad);
		counts[0] += len;

		/* READ: the server fills its target area, we check what we read. */
		round_trip(OP_READ, round, len, 0);
		memset(R.buf + O.size, 0, len);
		rdma_stream(IBV_WR_RDMA_READ, len);
		bad = verify(R.buf + O.size, len, round, OP_READ);
		if (bad >= 0)
			die("round %u: RDMA READ data wrong at offset %" PRId64, round, bad);
		counts[1] += len;

		/* SEND: the server posts receives, then checks each message. */
		round_trip(OP_SEND, round, len, 0);
		fill(R.buf + O.size, len, round, OP_SEND);
		rdma_stream(IBV_WR_SEND, len);
		bad = round_trip(OP_SEND, round, len, 1);
		if (bad >= 0)
			die("round %u: SEND data wrong at offset %" PRId64 " (server)", round, bad);
		counts[2] += len;

		/* Atomics on a counter the server set: every original must be
		 * the value before our operation; the server checks the end. */
		uint64_t v = (uint64_t)round << 40;
		uint64_t *res = (uint64_t *)(R.buf + O.size);

		round_trip(OP_ATOMIC, round, 8, v);
		for (int i = 0; i < ATOMICS; i++) {
			bool cas = i == ATOMICS - 1;

			post_send(cas ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD,
				  O.size, 8, 0, cas ? v : (uint64_t)i + 1, ~v, (uint64_t)i);
			wait_wcs(1, cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD, NULL);
			if (*res != v)
				die("round %u: atomic %d returned %#" PRIx64 ", expected %#" PRIx64,
				    round, i, *res, v);
			v += (uint64_t)i + 1;
		}
		bad = round_trip(OP_ATOMIC, round, 8, ~((uint64_t)round << 40 |
							 (ATOMICS - 1) * ATOMICS / 2));
		if (bad >= 0)
			die("round %u: the counter holds the wrong value (server)", round);
		atomics += ATOMICS;
		moved += 3 * len + ATOMICS * 8;
	}
	if (!O.write_only)
		round_trip(OP_DONE, round, 0, 0);
	printf("verified %" PRIu64 " bytes in %.1f s: RDMA WRITE %" PRIu64 ", RDMA READ %" PRIu64
	       ", SEND %" PRIu64 ", %" PRIu64 " atomics, %u rounds\n",
	       moved, (double)(now_us() - t0) / 1e6, counts[0], counts[1], counts[2], atomics,
	       round);
}

static void server(void)
{
	uint64_t checked = 0;
	struct ctl c;

	for (;;) {
		int64_t status = -1;

		xread(&c, sizeof(c));
		if (c.len > O.size)
			die("the client asked for %" PRIu64 " bytes", c.len);
		switch (c.op) {
		case OP_WRITE:
			status = verify(R.buf, c.len, c.round, OP_WRITE);
			checked += c.len;
			break;
		case OP_READ:
			fill(R.buf, c.len, c.round, OP_READ);
			break;
		case OP_SEND:
			if (!c.arg) {
				for (uint64_t off = 0; off < c.len; off += O.msg)
					post_recv(off, (uint32_t)O.msg);
				memset(R.buf, 0, c.len);
			} else {
				uint64_t n = (c.len + O.msg - 1) / O.msg;
				struct ibv_wc wc;

				for (uint64_t i = 0; i < n; i++) {
					wait_wcs(1, IBV_WC_RECV, &wc);
					if (wc.byte_len != (c.len - wc.wr_id < O.msg ?
							    c.len - wc.wr_id : O.msg))
						die("SEND at %" PRIu64 ": byte_len %u", wc.wr_id,
						    wc.byte_len);
				}
				status = verify(R.buf, c.len, c.round, OP_SEND);
				checked += c.len;
			}
			break;
		case OP_ATOMIC:
			if (c.arg >> 40 == c.round)
				memcpy(R.buf, &c.arg, 8);
			else if (memcmp(R.buf, &c.arg, 8))
				status = 0;
			break;
		case OP_DONE:
			xwrite(&status, sizeof(status));
			printf("verified %" PRIu64 " bytes written and sent to us, %u rounds\n",
			       checked, c.round);
			return;
		default:
			die("bad control message %u", c.op);
		}
		xwrite(&status, sizeof(status));
	}
}

/*
 * -w server: wait until the client goes, or this device dies (when the
 * peer-death test kills our vrnicd, the NIC goes with it, and the
 * client's goodbye can never arrive).
 */
static void wait_for_client(void)
{
	struct pollfd pfd[2] = {
		{ .fd = pu_sock, .events = POLLIN },
		{ .fd = R.ctx->async_fd, .events = POLLIN },
	};
	struct ibv_async_event ev;
	char c;

	for (;;) {
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (pfd[0].revents) {
			if (read(pu_sock, &c, 1) <= 0)
				return;
		}
		if (pfd[1].revents && !ibv_get_async_event(R.ctx, &ev))
			take_async_event(&ev);
	}
}

int main(int argc, char **argv)
{
	int opt;

	pu_prog = "vrnic_xfer";
	while ((opt = getopt(argc, argv, "d:g:p:b:s:m:t:r:wc:")) != -1) {
		switch (opt) {
		case 'd': O.dev = optarg; break;
		case 'g': O.gid_index = atoi(optarg); break;
		case 'p': O.port = atoi(optarg); break;
		case 'b': O.total = parse_size(optarg); break;
		case 's': O.size = parse_size(optarg); break;
		case 'm': O.msg = parse_size(optarg); break;
		case 't': O.timeout = atoi(optarg); break;
		case 'r': O.retry = atoi(optarg); break;
		case 'w': O.write_only = true; break;
		case 'c': O.canary_file = optarg; break;
		default:
			fprintf(stderr, "usage: %s -d DEV -g GID_INDEX [-p PORT] [-b BYTES] [-s BYTES] [-m BYTES] [-t TIMEOUT] [-r RETRY] [-w] [-c FILE] [SERVER_IP]\n",
				argv[0]);
			return 2;
		}
	}
	if (optind < argc)
		O.server = argv[optind];
	if (!O.dev || O.gid_index < 0)
		die("-d and -g are required");
	if (O.msg > O.size || O.size % 8 || O.size > (1ULL << 30) ||
	    (O.size + O.msg - 1) / O.msg > SEND_DEPTH)
		die("bad sizes: -s must be a multiple of 8 and at most %d messages of -m",
		    SEND_DEPTH);
	tcp_connect(O.server, O.port);
	setup();
	if (O.canary_file && !O.server)
		make_canary();
	connect_qp();
	if (O.server)
		client();
	else if (!O.write_only)
		server();
	else
		wait_for_client();
	if (R.canary)
		check_canary();
	fflush(stdout);
	return 0;
}
