// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The verbs data path of one vrnic, looped back through its own RoCEv2
 * GID: every opcode on every QP type, inline or not, with one to four
 * SGEs, through both post APIs and both CQ APIs; random data checked byte
 * for byte and every CQE field checked; atomics; CQ events; resize; SRQ;
 * the QP state machine; memory windows; ibv_rereg_mr; and every error the
 * verbs spec promises.
 *
 *   vrnic_verbs DEVICE GID_INDEX [SEED]
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "verbs_common.h"

void verbs_result(bool ok, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ktap_result(ok, "%s", line);
}

void verbs_diag(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ktap_diag("%s", line);
}

struct named_test {
	const char *name;
	bool (*fn)(void);
};

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
static bool sq_error_ud(void) { return do_sq_error(IBV_QPT_UD); }
static bool sq_error_uc(void) { return do_sq_error(IBV_QPT_UC); }
static bool rnr_exceeded(void) { return do_rnr(false); }
static bool rnr_recovers(void) { return do_rnr(true); }
static bool sges_post(void) { return do_too_many_sges(false); }
static bool sges_wr(void) { return do_too_many_sges(true); }
static bool inline_post(void) { return do_inline_too_big(false); }
static bool inline_wr(void) { return do_inline_too_big(true); }
static bool wrong_state_post(void) { return do_wrong_state(false); }
static bool wrong_state_wr(void) { return do_wrong_state(true); }
static bool destroy_cleans_cq(void) { return do_qp_gone_cleans_cq(false); }
static bool reset_cleans_cq(void) { return do_qp_gone_cleans_cq(true); }

static const struct named_test tests[] = {
	{ "SEND_WITH_IMM of 0 bytes, into a receive with no SGE", do_zero_length },
	{ "atomics return the original and leave the result (ibv_post_send)", atomics_post },
	{ "atomics return the original and leave the result (ibv_wr_*)", atomics_wr },
	{ "ATOMIC_WRITE (ibv_wr_atomic_write): 8 bytes whole, IBV_WC_ATOMIC_WRITE; post_send "
	  "EINVAL; unaligned REM_INV_REQ_ERR; UC EOPNOTSUPP", do_atomic_write },
	{ "FLUSH (ibv_wr_flush): range and MR levels complete as IBV_WC_FLUSH; post_send EINVAL; "
	  "persistence as announced; no flush right REM_INV_REQ_ERR; UC EOPNOTSUPP", do_rdma_flush },
	{ "unsignaled WRs complete silently, the signaled one reports", do_selective_signaling },
	{ "sq_sig_all signals every WR", do_sig_all },
	{ "a fenced SEND carries what an earlier READ brought", do_fence },
	{ "ibv_req_notify_cq: one completion event per arm", cq_events_next },
	{ "ibv_req_notify_cq solicited: only a solicited message wakes", cq_events_solicited },
	{ "ibv_resize_cq keeps unpolled completions and grows", do_resize_cq },
	{ "a CQ of max_cqe (>= rxm's 262144) completes; max_cqe + 1 is EINVAL", do_cq_max_cqe },
	{ "SRQ: receives, query and the limit event", do_srq },
	{ "SRQ resize (ibv_modify_srq max_wr): posted WQEs kept and taken first, then more "
	  "than it held; below the posted or the limit EINVAL", do_srq_resize },
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
	{ "UD: a failed send takes the send queue to SQE; receives go on; RTS sends again",
	  sq_error_ud },
	{ "UC: a failed send takes the send queue to SQE; receives go on; RTS sends again",
	  sq_error_uc },
	{ "receiver not ready, retries run out: RNR_RETRY_EXC_ERR", rnr_exceeded },
	{ "receiver not ready, then a receive: RNR retried to success", rnr_recovers },
	{ "to ERR: every posted WR flushes with WR_FLUSH_ERR", do_flush },
	{ "sends before RTS (ibv_post_send) and post_recv in RESET: EINVAL, nothing posted",
	  wrong_state_post },
	{ "sends before RTS (ibv_wr_complete) and post_recv in RESET: EINVAL, nothing posted",
	  wrong_state_wr },
	{ "ibv_resize_cq below the unpolled completions: EINVAL, none lost", do_resize_cq_below },
	{ "ibv_modify_cq moderation: events wait for cq_count or cq_period; fewer "
	  "interrupts; limits in ibv_query_device_ex", do_cq_moderation },
	{ "more send WRs than max_send_wr: ENOMEM", do_too_many_sends },
	{ "more receive WRs than max_recv_wr: ENOMEM at the right WR", do_too_many_recvs },
	{ "more SGEs than allowed: EINVAL (ibv_post_send)", sges_post },
	{ "more SGEs than allowed: EINVAL (ibv_wr_*)", sges_wr },
	{ "inline beyond max_inline_data: EINVAL (ibv_post_send)", inline_post },
	{ "inline beyond max_inline_data: EINVAL (ibv_wr_*)", inline_wr },
	{ "ibv_wr_* batch with a bad WR posts nothing", do_wr_batch_error },
	{ "CQ overrun: IBV_EVENT_CQ_ERR", do_cq_overrun },
	{ "ibv_destroy_qp takes the QP's unpolled completions out of a shared CQ",
	  destroy_cleans_cq },
	{ "to ERR and RESET: the QP's unpolled completions, its flush too, leave a shared CQ",
	  reset_cleans_cq },
	{ "UD multicast: loopback to a member, none after detach, RC refused", do_mcast },
	{ "UD multicast: a sender that is a member gets its own datagram, not with "
	  "IBV_QP_CREATE_BLOCK_SELF_MCAST_LB; the other member does", do_mcast_self_lb },
	{ "memory window type 1: ibv_bind_mw (LOCAL_WRITE beside the remote rights taken, "
	  "zero-based EINVAL), WRITE within it, refused past it", do_mw_type1 },
	{ "memory window type 2: IBV_WR_BIND_MW (LOCAL_WRITE taken); SEND_WITH_INV "
	  "(IBV_WC_WITH_INV), LOCAL_INV; the invalidated key refused", do_mw_type2 },
	{ "memory window type 2, zero-based: addressed from 0, ends at its length",
	  do_mw_zero_based },
	{ "memory windows: bind without MW_BIND is MW_BIND_ERR; SEND_WITH_INV of another PD's "
	  "window is REM_INV_REQ_ERR on both sides", do_mw_errors },
	{ "ibv_rereg_mr CHANGE_TRANSLATION: same keys; the new range written, the old refused",
	  do_rereg_translation },
	{ "ibv_rereg_mr CHANGE_ACCESS: write granted (over pages never touched) and taken "
	  "away; a refused change changes nothing", do_rereg_access },
	{ "ibv_rereg_mr CHANGE_PD: out of the QPs' reach, its new PD busy; back, in reach",
	  do_rereg_pd },
	{ "ibv_rereg_mr refused (no flags; PROT_NONE range): the MR stays", do_rereg_errors },
	{ "device memory: ibv_alloc_dm, memcpy to and from in words (EINVAL, EFAULT), a "
	  "zero-based DM MR that WRITE, READ and SEND reach; busy EBUSY; new memory zeroed",
	  do_dm },
	{ "packet pacing: caps; ibv_modify_qp_rate_limit holds a WRITE to its rate, 0 unpaces; "
	  "out-of-range rates and INIT EINVAL; UD and UC paced", do_rate_limit },
	{ "ibv_import_device/pd/mr: a QP of the imported context WRITEs through the imported "
	  "MR, in this process and in a child given the fd by SCM_RIGHTS; ibv_import_dm",
	  do_import },
};

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
		skip_why[0] = '\0';
		ok = tests[i].fn();
		if (ok && skip_why[0]) {
			ktap_skip(tests[i].name, "%s", skip_why);
			continue;
		}
		ktap_result(ok, "%s", tests[i].name);
		if (!ok)
			ktap_diag("%s", why);
	}
	ibv_dealloc_pd(E.pd);
	ibv_close_device(E.ctx);
	return ktap_finish();
}
