// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, sharing a context by fd: ibv_import_device on a copy of
 * the command fd, ibv_import_pd and ibv_import_mr, then a QP made in the
 * imported context on the imported PD that WRITEs through the imported
 * MR.  Once in this process, and once in a child that got the fd through
 * SCM_RIGHTS; and ibv_import_dm, device memory seen from both contexts.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "verbs_common.h"

#define IMP_LEN 4096

/* Send fd over a UNIX socket. */
static int send_fd(int sock, int fd)
{
	char data = 'f';
	struct iovec iov = { &data, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = { 0 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char data;
	struct iovec iov = { &data, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* What the importer needs of the exporter: handles, where to write. */
struct shared {
	uint32_t pd_handle;
	uint32_t mr_handle;
	uint32_t rkey;		/* of dst */
	uint64_t dst;		/* the exporter's buffer */
	uint32_t qpn;		/* the exporter's QP */
};

/* An RC QP of ctx and pd on its own CQ, to INIT. */
static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (qp && qp_to_init(qp, IBV_QPT_RC, ALL_ACCESS)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

static int connect_qp(struct ibv_qp *qp, uint32_t dest)
{
	struct qp_opts o = default_opts();

	int err = qp_to_rtr(qp, IBV_QPT_RC, dest, &o);

	return err ? err : qp_to_rts(qp, IBV_QPT_RC, &o);
}

/* Poll cq for one completion: its status, or -1 on none. */
static int poll_one(struct ibv_cq *cq)
{
	int64_t end = now_ms() + TIMEOUT_MS;
	struct ibv_wc wc;

	while (now_ms() < end) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			return -1;
		if (n)
			return wc.status;
	}
	return -1;
}

/*
 * The importer's side: import cmd_fd, the PD and the MR, check them, and
 * WRITE IMP_LEN bytes from the imported MR (src, holding the exporter's
 * pattern) to s->dst through a QP of the imported context; swap_qpn
 * trades QP numbers with the exporter.  0, or the step that failed.
 */
static int importer(int cmd_fd, const struct shared *s, const uint8_t *src,
		    int (*swap_qpn)(void *arg, uint32_t mine, uint32_t *theirs), void *arg)
{
	struct ibv_context *ctx = ibv_import_device(cmd_fd);
	struct ibv_pd *pd = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct ibv_sge sg;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED },
		*bad;
	uint32_t peer;
	int step = 1;

	if (!ctx)
		return step;
	step++;
	pd = ibv_import_pd(ctx, s->pd_handle);
	if (!pd || pd->handle != s->pd_handle)
		goto out;
	step++;
	mr = ibv_import_mr(pd, s->mr_handle);
	if (!mr)
		goto out;
	step++;
	/* rdma-core's ibv_cmd_query_mr sets addr NULL, for every provider */
	if (mr->handle != s->mr_handle || mr->length != IMP_LEN || (mr->addr && mr->addr != src)) {
		fprintf(stderr, "imported MR: handle %u (want %u), length %zu, addr %p (want %p)\n",
			mr->handle, s->mr_handle, mr->length, mr->addr, (const void *)src);
		goto out;
	}
	step++;
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	qp = cq ? rc_qp(pd, cq) : NULL;
	if (!qp)
		goto out;
	step++;
	if (swap_qpn(arg, qp->qp_num, &peer) || connect_qp(qp, peer))
		goto out;
	step++;
	sg = (struct ibv_sge){ (uintptr_t)src, IMP_LEN, mr->lkey };
	wr.wr.rdma.remote_addr = s->dst;
	wr.wr.rdma.rkey = s->rkey;
	if (ibv_post_send(qp, &wr, &bad) || poll_one(cq) != IBV_WC_SUCCESS)
		goto out;
	step = 0;
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (mr)
		ibv_unimport_mr(mr);
	if (pd)
		ibv_unimport_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	return step;
}

/* The exporter's QP, on its CQ, in the exporter's own context. */
struct exporter {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *src_mr, *dst_mr;
	uint8_t *src, *dst;
};

static void exporter_destroy(struct exporter *x)
{
	if (x->qp)
		ibv_destroy_qp(x->qp);
	if (x->cq)
		ibv_destroy_cq(x->cq);
	if (x->src_mr)
		ibv_dereg_mr(x->src_mr);
	if (x->dst_mr)
		ibv_dereg_mr(x->dst_mr);
	free(x->src);
	free(x->dst);
}

static bool exporter_create(struct exporter *x, struct shared *s)
{
	memset(x, 0, sizeof(*x));
	x->src = aligned_alloc(4096, IMP_LEN);
	x->dst = aligned_alloc(4096, IMP_LEN);
	CHECK(x->src && x->dst, "no memory");
	fill_random(x->src, IMP_LEN);
	memset(x->dst, 0, IMP_LEN);
	x->src_mr = ibv_reg_mr(E.pd, x->src, IMP_LEN, IBV_ACCESS_LOCAL_WRITE);
	x->dst_mr = ibv_reg_mr(E.pd, x->dst, IMP_LEN, ALL_ACCESS);
	x->cq = ibv_create_cq(E.ctx, 8, NULL, NULL, 0);
	x->qp = x->cq ? rc_qp(E.pd, x->cq) : NULL;
	CHECK(x->src_mr && x->dst_mr && x->qp, "exporter's objects: errno %d", errno);
	*s = (struct shared){ .pd_handle = E.pd->handle, .mr_handle = x->src_mr->handle,
			      .rkey = x->dst_mr->rkey, .dst = (uintptr_t)x->dst,
			      .qpn = x->qp->qp_num };
	return true;
}

static int same_process_swap(void *arg, uint32_t mine, uint32_t *theirs)
{
	struct exporter *x = arg;

	*theirs = x->qp->qp_num;
	return connect_qp(x->qp, mine);
}

/* Import in this process, on a dup() of the command fd. */
static bool import_here(void)
{
	struct exporter x;
	struct shared s;
	bool ok = false;
	int fd = -1, step;

	if (!exporter_create(&x, &s))
		goto out;
	fd = dup(E.ctx->cmd_fd);
	CHECK_OUT(fd >= 0, "dup: errno %d", errno);
	step = importer(fd, &s, x.src, same_process_swap, &x);
	fd = -1;	/* the imported context owned it */
	CHECK_OUT(!step, "the importer failed at step %d (1 import_device, 2 import_pd, "
		  "3 import_mr, 4 its attributes, 5 CQ/QP, 6 connect, 7 WRITE): errno %d", step, errno);
	CHECK_OUT(!memcmp(x.dst, x.src, IMP_LEN), "the imported MR's bytes did not land");
	ok = true;
out:
	if (fd >= 0)
		close(fd);
	exporter_destroy(&x);
	return ok;
}

/* The child's end of the QP number exchange: over the socket. */
static int child_swap(void *arg, uint32_t mine, uint32_t *theirs)
{
	int sock = *(int *)arg;

	if (write(sock, &mine, sizeof(mine)) != sizeof(mine) ||
	    read(sock, theirs, sizeof(*theirs)) != sizeof(*theirs))
		return -1;
	return 0;
}

/* Import in a child process, the fd passed with SCM_RIGHTS. */
static bool import_child(void)
{
	struct exporter x;
	struct shared s;
	uint32_t child_qpn;
	int sv[2] = { -1, -1 }, status = 0;
	bool ok = false;
	pid_t pid = -1;

	if (!exporter_create(&x, &s))
		goto out;
	CHECK_OUT(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair: errno %d", errno);
	pid = fork();
	CHECK_OUT(pid >= 0, "fork: errno %d", errno);
	if (!pid) {
		int fd;

		close(sv[0]);
		fd = recv_fd(sv[1]);
		_exit(fd < 0 ? 100 : importer(fd, &s, x.src, child_swap, &sv[1]));
	}
	close(sv[1]);
	sv[1] = -1;
	CHECK_OUT(!send_fd(sv[0], E.ctx->cmd_fd), "sending the fd: errno %d", errno);
	CHECK_OUT(read(sv[0], &child_qpn, sizeof(child_qpn)) == sizeof(child_qpn),
		  "the child sent no QP number");
	CHECK_OUT(!connect_qp(x.qp, child_qpn), "connecting to the child's QP failed");
	CHECK_OUT(write(sv[0], &s.qpn, sizeof(s.qpn)) == sizeof(s.qpn), "write to the child");
	CHECK_OUT(waitpid(pid, &status, 0) == pid, "waitpid: errno %d", errno);
	pid = -1;
	CHECK_OUT(WIFEXITED(status) && !WEXITSTATUS(status),
		  "the child importer failed (status %#x; step %d)", status, WEXITSTATUS(status));
	CHECK_OUT(!memcmp(x.dst, x.src, IMP_LEN), "the child's WRITE did not land");
	ok = true;
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	exporter_destroy(&x);
	return ok;
}

/*
 * ibv_import_dm in a context imported from a dup() of the command fd:
 * what one side writes, the other reads, both ways.
 */
static bool import_dm(void)
{
	struct ibv_alloc_dm_attr attr = { .length = IMP_LEN };
	struct ibv_device_attr_ex dev;
	struct ibv_context *ctx = NULL;
	struct ibv_dm *dm = NULL, *dm2 = NULL;
	uint8_t a[256], b[256];
	bool ok = false;
	int fd;

	if (ibv_query_device_ex(E.ctx, NULL, &dev) || !dev.max_dm_size)
		return true;	/* do_dm says why it skips */
	dm = ibv_alloc_dm(E.ctx, &attr);
	CHECK(dm, "ibv_alloc_dm: errno %d", errno);
	fd = dup(E.ctx->cmd_fd);
	ctx = fd >= 0 ? ibv_import_device(fd) : NULL;
	CHECK_OUT(ctx, "ibv_import_device: errno %d", errno);
	dm2 = ibv_import_dm(ctx, dm->handle);
	CHECK_OUT(dm2, "ibv_import_dm(%u): errno %d", dm->handle, errno);
	fill_random(a, sizeof(a));
	CHECK_OUT(!ibv_memcpy_to_dm(dm, IMP_LEN - sizeof(a), a, sizeof(a)) &&
		  !ibv_memcpy_from_dm(b, dm2, IMP_LEN - sizeof(b), sizeof(b)) &&
		  !memcmp(a, b, sizeof(a)), "the imported DM does not read what the DM holds");
	fill_random(a, sizeof(a));
	CHECK_OUT(!ibv_memcpy_to_dm(dm2, 0, a, sizeof(a)) &&
		  !ibv_memcpy_from_dm(b, dm, 0, sizeof(b)) && !memcmp(a, b, sizeof(a)),
		  "the DM does not read what was written through the imported one");
	CHECK_OUT(ibv_memcpy_to_dm(dm2, IMP_LEN, a, 4) == EFAULT,
		  "the imported DM took a write past its length");
	ok = true;
out:
	if (dm2)
		ibv_unimport_dm(dm2);
	if (ctx)
		ibv_close_device(ctx);
	else if (fd >= 0)
		close(fd);
	if (ibv_free_dm(dm) && ok) {
		snprintf(why, sizeof(why), "ibv_free_dm failed");
		ok = false;
	}
	return ok;
}

bool do_import(void)
{
	return import_here() && import_child() && import_dm();
}
