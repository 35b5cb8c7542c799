// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, data: every opcode on every QP type, inline or not, from one
 * to four SGEs, both post APIs and both CQ APIs, every byte and every CQE
 * field checked; zero-length messages; atomics.
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

/* One message of op from side 0 to side 1, checked end to end. */
bool xfer(struct pair *p, enum ibv_wr_opcode op, bool inl, int nsge, size_t len)
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
		    (ud && (wc.src_qp != a->qp->qp_num || wc.sl != UD_SL_IPV4))) {
			snprintf(why, sizeof(why),
				 "responder CQE: status %s wr_id %s opcode %d byte_len %u (want %zu) qp_num %u flags %#x (want %#x) imm %#x (want %#x) src_qp %u sl %u",
				 ibv_wc_status_str(wc.status), wc.wr_id == recv_id ? "ok" : "WRONG",
				 wc.opcode, wc.byte_len, want_len, wc.qp_num, wc.wc_flags,
				 want_flags, be32toh(wc.imm_data), imm, wc.src_qp, wc.sl);
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

void test_matrix(enum ibv_qp_type type, bool ex)
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
						verbs_result(0, "%s %s: setup (%s)", type_name(type),
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
				verbs_result(ok, "%s %s %s%d SGE%s %zu bytes, %s", type_name(type),
					    op_name(op), inl ? "inline from " : "", sges[si],
					    sges[si] > 1 ? "s" : "", len,
					    ex ? "ibv_wr_* and ibv_start_poll" :
					    "ibv_post_send and ibv_poll_cq");
				if (!ok) {
					verbs_diag("%s", why);
					pair_destroy(&p);
					have = false;
				}
			}
		}
	}
	if (have)
		pair_destroy(&p);
}

int matrix_count(void)
{
	/* per API: RC 4 ops x 2 + READ = 9, UC 4 x 2 = 8, UD 2 x 2 = 4; x 3 SGE counts */
	return 2 * (9 + 8 + 4) * 3;
}

bool do_zero_length(void)
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

/*
 * The kernel's IB_UVERBS_DEVICE_ATOMIC_WRITE in device_cap_flags_ex:
 * rdma-core 44's verbs.h has no name for it (librpma tests the bit).
 */
#define DEVICE_ATOMIC_WRITE	(1ULL << 40)

/* One ibv_wr_atomic_write() of the 8 bytes at val to raddr, signaled. */
static int post_atomic_write(struct pair *p, uint64_t wr_id, uint64_t raddr, const void *val)
{
	struct ibv_qp_ex *x = p->s[0].qpx;

	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, p->s[1].mr->rkey, raddr, val);
	return ibv_wr_complete(x);
}

/* Only RC has it: a UC QP asked for op (IBV_QP_EX_WITH_*) is EOPNOTSUPP. */
static bool rc_only(struct ibv_cq *cq, uint64_t op, const char *name)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_UC,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = E.pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | op,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(E.ctx, &qa);

	if (qp) {
		ibv_destroy_qp(qp);
		FAIL("a UC QP with %s was created", name);
	}
	CHECK(errno == EOPNOTSUPP, "UC QP with %s: %s, want EOPNOTSUPP", name, strerror(errno));
	return true;
}

/*
 * ATOMIC_WRITE (IBA 1.5, ibv_wr_atomic_write): announced by the device;
 * its 8 bytes land whole at an aligned remote address, the neighbours
 * untouched, and it completes as IBV_WC_ATOMIC_WRITE.  ibv_post_send()
 * has no field for its data and refuses it; an unaligned target is
 * REM_INV_REQ_ERR with nothing written.
 */
bool do_atomic_write(void)
{
	struct ibv_device_attr_ex attr;
	struct qp_opts o = default_opts();
	struct pair p;
	struct ibv_wc wc;
	uint8_t val[8], before[24];
	uint8_t *remote;
	struct ibv_send_wr wr = { .wr_id = 9, .opcode = IBV_WR_ATOMIC_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	bool ok = false;
	int err;

	CHECK(!ibv_query_device_ex(E.ctx, NULL, &attr), "ibv_query_device_ex: %s", strerror(errno));
	CHECK(attr.device_cap_flags_ex & DEVICE_ATOMIC_WRITE,
	      "device_cap_flags_ex %#" PRIx64 " lacks ATOMIC_WRITE (bit 40)",
	      (uint64_t)attr.device_cap_flags_ex);
	o.ex = true;
	o.more_ops = IBV_QP_EX_WITH_ATOMIC_WRITE;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	if (!rc_only(p.s[0].cq, IBV_QP_EX_WITH_ATOMIC_WRITE, "ATOMIC_WRITE"))
		goto out;
	remote = p.s[1].buf + REMOTE_OFF + 8 * (1 + rnd() % 62);
	fill_random(remote - 8, sizeof(before));
	memcpy(before, remote - 8, sizeof(before));
	fill_random(val, sizeof(val));
	err = post_atomic_write(&p, 1, (uintptr_t)remote, val);
	CHECK_OUT(!err, "ibv_wr_atomic_write: %s", strerror(err));
	if (!expect_wc(&p.s[0], &wc, "atomic write"))
		goto out;
	CHECK_OUT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE &&
		  wc.byte_len == 8, "atomic write CQE: %s opcode %d byte_len %u",
		  ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
	CHECK_OUT(!memcmp(remote, val, 8), "the 8 bytes did not land (first differs at %zu)",
		  first_diff(remote, val, 8));
	CHECK_OUT(!memcmp(remote - 8, before, 8) && !memcmp(remote + 8, before + 16, 8),
		  "an atomic write touched its neighbours");
	err = ibv_post_send(p.s[0].qp, &wr, &bad);
	CHECK_OUT(err == EINVAL && bad == &wr, "ibv_post_send(IBV_WR_ATOMIC_WRITE): %s, want EINVAL",
		  strerror(err));
	memcpy(before, remote, 8);
	err = post_atomic_write(&p, 2, (uintptr_t)remote + 4, val + 1);
	CHECK_OUT(!err, "ibv_wr_atomic_write: %s", strerror(err));
	if (!expect_status(&p.s[0], 2, IBV_WC_REM_INV_REQ_ERR, "unaligned atomic write"))
		goto out;
	CHECK_OUT(!memcmp(remote, before, 8), "an unaligned atomic write wrote");
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

#if VRNIC_RDMA_CORE_MAJOR >= 45
/* The kernel's IB_UVERBS_DEVICE_FLUSH_GLOBAL and _PERSISTENT (6.2 on). */
#define DEVICE_FLUSH_GLOBAL	(1ULL << 38)
#define DEVICE_FLUSH_PERSISTENT	(1ULL << 39)

/* One signaled ibv_wr_flush() of the peer's MR. */
static int post_flush(struct pair *p, uint64_t wr_id, uint64_t raddr, size_t len, uint8_t type,
		      uint8_t level)
{
	struct ibv_qp_ex *x = p->s[0].qpx;

	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(x, p->s[1].mr->rkey, raddr, len, type, level);
	return ibv_wr_complete(x);
}

/* A FLUSH that completes as IBV_WC_FLUSH with byte_len len. */
static bool flush_ok(struct pair *p, uint64_t wr_id, uint64_t raddr, size_t len, uint8_t type,
		     uint8_t level)
{
	struct ibv_wc wc;
	int err = post_flush(p, wr_id, raddr, len, type, level);

	CHECK(!err, "ibv_wr_flush: %s", strerror(err));
	if (!expect_wc(&p->s[0], &wc, "flush"))
		return false;
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FLUSH && wc.byte_len == len,
	      "flush (type %u, level %u) CQE: %s opcode %d byte_len %u, want FLUSH %zu", type,
	      level, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len, len);
	return true;
}

/*
 * Persistence is announced only where guest RAM can persist: then an MR
 * with the right flushes to it, else ib_core refuses the right.
 */
static bool flush_persistent(struct pair *p, bool announced)
{
	struct ibv_mr *mr = ibv_reg_mr(E.pd, p->s[1].buf, 4096,
				       ALL_ACCESS | IBV_ACCESS_FLUSH_PERSISTENT);

	if (!announced) {
		if (mr)
			ibv_dereg_mr(mr);
		CHECK(!mr && errno == EOPNOTSUPP,
		      "an MR with FLUSH_PERSISTENT on a device without it: %s, want EOPNOTSUPP",
		      mr ? "registered" : strerror(errno));
		return true;
	}
	CHECK(mr, "an MR with FLUSH_PERSISTENT: %s", strerror(errno));
	ibv_dereg_mr(mr);
	return flush_ok(p, 5, (uintptr_t)p->s[1].buf, 4096, IBV_FLUSH_PERSISTENT, IBV_FLUSH_RANGE);
}

/*
 * FLUSH (IBA 1.5, ibv_wr_flush): announced by the device from Linux 6.2
 * on; a range and the whole MR complete as IBV_WC_FLUSH with the range's
 * length and change nothing; ibv_post_send() has no fields for it and
 * refuses it; persistence is offered as the device announces it; a QP
 * without the flush right answers REM_INV_REQ_ERR; UC cannot have it.
 */
bool do_rdma_flush(void)
{
	struct ibv_device_attr_ex attr;
	struct qp_opts o = default_opts();
	struct pair p = { 0 };
	struct ibv_send_wr wr = { .wr_id = 9, .opcode = IBV_WR_FLUSH,
				  .send_flags = IBV_SEND_SIGNALED }, *bad = NULL;
	uint8_t before[256];
	uint8_t *remote;
	bool ok = false;
	int err;

	CHECK(!ibv_query_device_ex(E.ctx, NULL, &attr), "ibv_query_device_ex: %s", strerror(errno));
	if (!linux_at_least(6, 2)) {
		CHECK(!(attr.device_cap_flags_ex & (DEVICE_FLUSH_GLOBAL | DEVICE_FLUSH_PERSISTENT)),
		      "FLUSH announced on a kernel without it");
		SKIP("Linux before 6.2 has no flush access rights");
	}
	CHECK(attr.device_cap_flags_ex & DEVICE_FLUSH_GLOBAL,
	      "device_cap_flags_ex %#" PRIx64 " lacks FLUSH_GLOBAL (bit 38)",
	      (uint64_t)attr.device_cap_flags_ex);
	o.ex = true;
	o.more_ops = IBV_QP_EX_WITH_FLUSH;
	o.access[1] |= IBV_ACCESS_FLUSH_GLOBAL;
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	if (!rc_only(p.s[0].cq, IBV_QP_EX_WITH_FLUSH, "FLUSH"))
		goto out;
	remote = p.s[1].buf + REMOTE_OFF;
	fill_random(remote, sizeof(before));
	memcpy(before, remote, sizeof(before));
	if (!flush_ok(&p, 1, (uintptr_t)remote, sizeof(before), IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE) ||
	    !flush_ok(&p, 2, 0, 0, IBV_FLUSH_GLOBAL, IBV_FLUSH_MR))
		goto out;
	CHECK_OUT(!memcmp(remote, before, sizeof(before)), "a FLUSH changed memory");
	err = ibv_post_send(p.s[0].qp, &wr, &bad);
	CHECK_OUT(err == EINVAL && bad == &wr, "ibv_post_send(IBV_WR_FLUSH): %s, want EINVAL",
		  strerror(err));
	if (!flush_persistent(&p, attr.device_cap_flags_ex & DEVICE_FLUSH_PERSISTENT))
		goto out;
	pair_destroy(&p);
	o.access[1] = ALL_ACCESS;  /* no flush right: the QP's is checked first */
	if (!pair_create(&p, IBV_QPT_RC, &o))
		goto out;
	err = post_flush(&p, 3, (uintptr_t)p.s[1].buf, 64, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE);
	CHECK_OUT(!err, "ibv_wr_flush: %s", strerror(err));
	if (!expect_status(&p.s[0], 3, IBV_WC_REM_INV_REQ_ERR, "flush without the QP's right"))
		goto out;
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}
#else
bool do_rdma_flush(void)
{
	SKIP("rdma-core %d has no ibv_wr_flush (45 added it)", VRNIC_RDMA_CORE_MAJOR);
}
#endif

bool do_atomics(bool ex)
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
