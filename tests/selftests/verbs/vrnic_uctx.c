// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * User contexts through libvrnic: opening one maps the device's status
 * page read-only and its doorbell page (kernel bypass), queries work, and
 * closing unmaps everything, many times over.
 *
 *   vrnic_uctx DEVICE          run the checks, print KTAP
 *   vrnic_uctx DEVICE --hold   open a context with a PD, MR, CQ, SRQ and QP,
 *                              a thread asleep in ibv_get_cq_event() on the
 *                              CQ, print "ready", then print async events
 *                              until the device goes away; prints
 *                              "cq wait returned" when the sleeper wakes
 *   vrnic_uctx DEVICE --hold GID_INDEX
 *                              the same, and a second RC QP, connected to
 *                              itself through the GID, moves data with RDMA
 *                              WRITEs until then ("moving data" once it
 *                              does, "moved N bytes" at the end)
 *   vrnic_uctx DEVICE --churn N
 *                              N times: create a PD, MR, CQ, SRQ and QP,
 *                              destroy them; "churned N" if every call
 *                              worked.  Several at once race the device's
 *                              reuse of freed object numbers.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "ktap.h"

struct maps {
	int ro;		/* shared read-only mappings of a uverbs device */
	int wo;		/* shared write-only mappings of a uverbs device */
	int other;	/* any other mapping of a uverbs device */
};

static struct maps count_uverbs_maps(void)
{
	struct maps m = { 0 };
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return m;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%*s %7s", perms) != 1)
			continue;
		if (!strcmp(perms, "r--s"))
			m.ro++;
		else if (!strcmp(perms, "-w-s"))
			m.wo++;
		else
			m.other++;
	}
	fclose(f);
	return m;
}

static struct ibv_device *find_device(struct ibv_device **list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

/* Verbs objects a holder keeps alive across the device going away. */
struct held {
	/* Traffic: a QP connected to itself, on a CQ of its own. */
	struct ibv_cq *tcq;
	struct ibv_qp *tqp;
	atomic_bool stop;
	uint64_t moved;
	struct ibv_comp_channel *channel;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	void *buf;
};

static bool hold_objects(struct ibv_context *ctx, struct held *h)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	h->buf = calloc(1, 65536);
	h->pd = ibv_alloc_pd(ctx);
	if (!h->buf || !h->pd)
		return false;
	h->mr = ibv_reg_mr(h->pd, h->buf, 65536, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	h->channel = ibv_create_comp_channel(ctx);
	if (!h->channel)
		return false;
	h->cq = ibv_create_cq(ctx, 64, NULL, h->channel, 0);
	h->srq = ibv_create_srq(h->pd, &sa);
	if (!h->mr || !h->cq || !h->srq || ibv_req_notify_cq(h->cq, 0))
		return false;
	qa.send_cq = h->cq;
	qa.recv_cq = h->cq;
	h->qp = ibv_create_qp(h->pd, &qa);
	if (!h->qp || ibv_modify_qp(h->qp, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return false;
	sge = (struct ibv_sge){ (uintptr_t)h->buf, 4096, h->mr->lkey };
	return !ibv_post_recv(h->qp, &wr, &bad) && !ibv_post_srq_recv(h->srq, &wr, &bad);
}

/*
 * Destroy what hold_objects() (and traffic_qp()) made; rc gets the status
 * of the QP, SRQ, CQ, MR and PD destroys.  False if any destroy failed.
 */
static bool destroy_objects(struct held *h, int rc[5])
{
	bool ok = true;

	if (h->tqp)
		ok &= !ibv_destroy_qp(h->tqp);
	if (h->tcq)
		ok &= !ibv_destroy_cq(h->tcq);
	rc[0] = h->qp ? ibv_destroy_qp(h->qp) : 0;
	rc[1] = h->srq ? ibv_destroy_srq(h->srq) : 0;
	rc[2] = h->cq ? ibv_destroy_cq(h->cq) : 0;
	rc[3] = h->mr ? ibv_dereg_mr(h->mr) : 0;
	rc[4] = h->pd ? ibv_dealloc_pd(h->pd) : 0;
	if (h->channel)
		ok &= !ibv_destroy_comp_channel(h->channel);
	free(h->buf);
	return ok && !(rc[0] || rc[1] || rc[2] || rc[3] || rc[4]);
}

/* After the device is gone, destroying must not fail or crash. */
static void release_objects(struct held *h)
{
	int rc[5];

	destroy_objects(h, rc);
	printf("destroyed: qp %d srq %d cq %d mr %d pd %d\n", rc[0], rc[1], rc[2], rc[3], rc[4]);
}

static int churn(struct ibv_device *dev, int n)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	int i;

	if (!ctx) {
		printf("churn: ibv_open_device: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct held h = { 0 };
		bool made, gone;
		int rc[5];

		errno = 0;
		made = hold_objects(ctx, &h);
		if (!made)
			printf("churn: round %d: create: %s\n", i + 1, strerror(errno));
		gone = destroy_objects(&h, rc);
		if (!gone)
			printf("churn: round %d: destroy: %s\n", i + 1, strerror(errno));
		if (!made || !gone)
			break;
	}
	ibv_close_device(ctx);
	if (i == n)
		printf("churned %d\n", n);
	return i == n ? 0 : 1;
}

/* An RC QP on its own CQ, connected to itself through GID gid_index. */
static bool traffic_qp(struct ibv_context *ctx, struct held *h, int gid_index)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	union ibv_gid gid;

	h->tcq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!h->tcq || ibv_query_gid(ctx, 1, gid_index, &gid))
		return false;
	qa.send_cq = h->tcq;
	qa.recv_cq = h->tcq;
	h->tqp = ibv_create_qp(h->pd, &qa);
	if (!h->tqp || ibv_modify_qp(h->tqp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return false;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = h->tqp->qp_num,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = (uint8_t)gid_index,
				      .hop_limit = 64 } },
	};
	if (ibv_modify_qp(h->tqp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		return false;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				  .rnr_retry = 7, .max_rd_atomic = 1 };
	return !ibv_modify_qp(h->tqp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* RDMA WRITEs from the first half of the buffer to the second, one at a
 * time, until told to stop or a completion fails.
 */
static void *traffic(void *arg)
{
	struct held *h = arg;
	struct ibv_sge sge = { (uintptr_t)h->buf, 32768, h->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)h->buf + 32768, .rkey = h->mr->rkey },
	}, *bad;
	struct ibv_wc wc;
	int got;

	while (!atomic_load(&h->stop)) {
		if (ibv_post_send(h->tqp, &wr, &bad))
			break;
		do {
			got = ibv_poll_cq(h->tcq, 1, &wc);
		} while (!got && !atomic_load(&h->stop));
		if (got != 1 || wc.status != IBV_WC_SUCCESS)
			break;
		if (!h->moved) {
			printf("moving data\n");
			fflush(stdout);
		}
		h->moved += sge.length;
	}
	return NULL;
}

/*
 * Asleep in ibv_get_cq_event() when the device dies: a verb that blocks
 * must return then, not hang.  An event taken is acknowledged.
 */
static void *cq_sleeper(void *arg)
{
	struct held *h = arg;
	struct ibv_cq *cq;
	void *cq_ctx;

	if (!ibv_get_cq_event(h->channel, &cq, &cq_ctx)) {
		ibv_ack_cq_events(cq, 1);
		printf("cq wait returned: an event\n");
	} else {
		printf("cq wait returned: %s\n", strerror(errno));
	}
	fflush(stdout);
	return NULL;
}

static int hold(struct ibv_device *dev, int gid_index)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_async_event ev;
	struct held h = { 0 };
	pthread_t sleeper, mover;

	if (!ctx) {
		printf("open failed: %s\n", strerror(errno));
		return 1;
	}
	if (!hold_objects(ctx, &h) || (gid_index >= 0 && !traffic_qp(ctx, &h, gid_index))) {
		printf("creating verbs objects failed: %s\n", strerror(errno));
		return 1;
	}
	if (pthread_create(&sleeper, NULL, cq_sleeper, &h) ||
	    (h.tqp && pthread_create(&mover, NULL, traffic, &h))) {
		printf("no thread\n");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (!ibv_get_async_event(ctx, &ev)) {
		printf("event %s\n", ev.event_type == IBV_EVENT_DEVICE_FATAL ?
		       "IBV_EVENT_DEVICE_FATAL" : ibv_event_type_str(ev.event_type));
		fflush(stdout);
		ibv_ack_async_event(&ev);
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL)
			break;
	}
	/* The CQ's event goes before the CQ: wait for the sleeper first. */
	pthread_join(sleeper, NULL);
	if (h.tqp) {
		atomic_store(&h.stop, true);
		pthread_join(mover, NULL);
		printf("moved %" PRIu64 " bytes\n", h.moved);
	}
	release_objects(&h);
	/* Closing a context of a device that is gone must still work. */
	if (ibv_close_device(ctx)) {
		printf("close failed: %s\n", strerror(errno));
		return 1;
	}
	printf("closed\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device_attr_ex attr = { 0 };
	struct ibv_port_attr port;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_device *dev;
	struct maps before, open, after;
	union ibv_gid gid;
	bool cycles_ok = true;
	int i, n;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEVICE [--hold [GID_INDEX] | --churn N]\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(&n);
	dev = list ? find_device(list, argv[1]) : NULL;
	if (argc > 3 && !strcmp(argv[2], "--churn")) {
		int rc = dev ? churn(dev, atoi(argv[3])) : 1;

		if (list)
			ibv_free_device_list(list);
		return rc;
	}
	if (argc > 2 && !strcmp(argv[2], "--hold")) {
		int rc = dev ? hold(dev, argc > 3 ? atoi(argv[3]) : -1) : 1;

		if (list)
			ibv_free_device_list(list);
		return rc;
	}

	ktap_print_header(9);
	ktap_result(dev != NULL, "libibverbs lists %s", argv[1]);
	if (!dev)
		return ktap_finish();

	before = count_uverbs_maps();
	ctx = ibv_open_device(dev);
	ktap_result(ctx != NULL, "ibv_open_device (%s)", ctx ? "ok" : strerror(errno));
	if (!ctx)
		return ktap_finish();

	open = count_uverbs_maps();
	ktap_result(open.ro == before.ro + 1, "status page mapped read-only (%d mappings)",
		    open.ro - before.ro);
	ktap_result(open.wo == before.wo + 1, "doorbell page mapped for kernel bypass (%d mappings)",
		    open.wo - before.wo);

	ktap_result(!ibv_query_device_ex(ctx, NULL, &attr) && attr.orig_attr.max_qp > 0 &&
		    attr.orig_attr.phys_port_cnt == 1,
		    "ibv_query_device_ex: max_qp %d, %u port(s)", attr.orig_attr.max_qp,
		    attr.orig_attr.phys_port_cnt);
	ktap_result(!ibv_query_port(ctx, 1, &port) && port.state == IBV_PORT_ACTIVE &&
		    port.link_layer == IBV_LINK_LAYER_ETHERNET,
		    "ibv_query_port: state %d, link layer %d", port.state, port.link_layer);
	ktap_result(!ibv_query_gid(ctx, 1, 0, &gid) && gid.raw[0] == 0xfe && gid.raw[1] == 0x80,
		    "ibv_query_gid: GID 0 is link-local");

	ibv_close_device(ctx);
	after = count_uverbs_maps();
	ktap_result(after.ro == before.ro && after.wo == before.wo && after.other == before.other,
		    "closing unmaps both pages");

	for (i = 0; i < 200 && cycles_ok; i++) {
		ctx = ibv_open_device(dev);
		if (!ctx) {
			ktap_diag("open %d failed: %s", i, strerror(errno));
			cycles_ok = false;
			break;
		}
		ibv_close_device(ctx);
	}
	after = count_uverbs_maps();
	ktap_result(cycles_ok && after.ro == before.ro && after.wo == before.wo,
		    "200 open/close cycles leave no mapping behind");

	ibv_free_device_list(list);
	return ktap_finish();
}
