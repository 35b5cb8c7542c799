// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * vrnic_verbs, ibv_rereg_mr: an MR of its own, changed in place while RC
 * pairs write into it through its rkey.  Each change keeps the keys, takes
 * effect on the next access and, when refused, leaves the MR as it was.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "verbs_common.h"

#define MR_LEN (64 << 10)

/* Fresh anonymous memory, never touched: its pages are not there yet. */
static uint8_t *fresh(void)
{
	void *p = mmap(NULL, MR_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * An RDMA WRITE of len random bytes from a new RC pair's side 0 to raddr
 * through rkey; want is its status, and on success the bytes must be
 * there.  A new pair each time: a refused WRITE breaks its QP.
 */
static bool write_to(uint64_t raddr, uint32_t rkey, size_t len, enum ibv_wc_status want,
		     const char *what)
{
	struct qp_opts o = default_opts();
	struct ibv_sge sg;
	struct send w = { .op = IBV_WR_RDMA_WRITE, .wr_id = 7, .flags = IBV_SEND_SIGNALED,
			  .sg = &sg, .nsge = 1, .raddr = raddr, .rkey = rkey };
	struct pair p;
	bool ok = false;

	if (!pair_create(&p, IBV_QPT_RC, &o))
		return false;
	sg = (struct ibv_sge){ (uintptr_t)p.s[0].buf, (uint32_t)len, p.s[0].mr->lkey };
	fill_random(p.s[0].buf, len);
	CHECK_OUT(!post_one(&p, 0, &w), "%s: post failed", what);
	if (!expect_status(&p.s[0], 7, want, what))
		goto out;
	CHECK_OUT(want != IBV_WC_SUCCESS || !memcmp((void *)(uintptr_t)raddr, p.s[0].buf, len),
		  "%s: the data did not land", what);
	ok = true;
out:
	pair_destroy(&p);
	return ok;
}

/* The MR's keys are still the ones it was registered with. */
static bool same_keys(const struct ibv_mr *mr, uint32_t lkey, uint32_t rkey, const char *what)
{
	CHECK(mr->lkey == lkey && mr->rkey == rkey, "%s: keys %#x/%#x, were %#x/%#x", what,
	      mr->lkey, mr->rkey, lkey, rkey);
	return true;
}

/* The end of a case: the MR and its memory go; ok unless that fails. */
static bool mr_done(struct ibv_mr *mr, uint8_t *a, bool ok)
{
	if (mr && ibv_dereg_mr(mr) && ok) {
		snprintf(why, sizeof(why), "ibv_dereg_mr failed");
		ok = false;
	}
	if (a)
		munmap(a, MR_LEN);
	return ok;
}

/*
 * CHANGE_TRANSLATION: the same keys reach the new buffer and refuse the
 * old one, which no write reaches any more.
 */
bool do_rereg_translation(void)
{
	uint8_t *a = fresh(), *b = fresh();
	struct ibv_mr *mr = NULL;
	uint32_t lkey, rkey;
	bool ok = false;
	int rc;

	CHECK_OUT(a && b, "mmap failed");
	memset(a, 0x5a, MR_LEN);
	mr = ibv_reg_mr(E.pd, a, MR_LEN, ALL_ACCESS);
	CHECK_OUT(mr, "ibv_reg_mr failed: %s", strerror(errno));
	lkey = mr->lkey;
	rkey = mr->rkey;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b, MR_LEN, 0);
	CHECK_OUT(!rc, "ibv_rereg_mr(CHANGE_TRANSLATION) returned %d: %s", rc, strerror(errno));
	CHECK_OUT(mr->addr == b && mr->length == MR_LEN, "the MR says %p+%zu, not %p+%d",
		  mr->addr, mr->length, (void *)b, MR_LEN);
	if (!same_keys(mr, lkey, rkey, "CHANGE_TRANSLATION") ||
	    !write_to((uintptr_t)b + 100, rkey, 4096, IBV_WC_SUCCESS, "WRITE into the new range") ||
	    !write_to((uintptr_t)a + 100, rkey, 64, IBV_WC_REM_ACCESS_ERR,
		      "WRITE into the old range"))
		goto out;
	CHECK_OUT(a[100] == 0x5a && a[163] == 0x5a, "the old range was written");
	ok = true;
out:
	if (b)
		munmap(b, MR_LEN);
	return mr_done(mr, a, ok);
}

/*
 * CHANGE_ACCESS: the rights apply to the next access, a WRITE granted over
 * pages never touched lands, and a refused change changes nothing.  (When
 * writability changes, vrnic.ko pins the range again, so that the pages
 * are pinned for writing and marked dirty when unpinned.  Without it the
 * WRITE still lands on 6.1, as a run with the re-pin taken out showed, so
 * this case does not show the re-pin.)
 */
bool do_rereg_access(void)
{
	uint8_t *a = fresh();
	struct ibv_mr *mr = NULL;
	uint32_t lkey, rkey;
	bool ok = false;
	int rc;

	CHECK_OUT(a, "mmap failed");
	mr = ibv_reg_mr(E.pd, a, MR_LEN, IBV_ACCESS_REMOTE_READ);
	CHECK_OUT(mr, "ibv_reg_mr(REMOTE_READ) failed: %s", strerror(errno));
	lkey = mr->lkey;
	rkey = mr->rkey;
	if (!write_to((uintptr_t)a, rkey, 64, IBV_WC_REM_ACCESS_ERR, "WRITE, read-only MR"))
		goto out;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, ALL_ACCESS);
	CHECK_OUT(!rc, "ibv_rereg_mr(CHANGE_ACCESS) returned %d: %s", rc, strerror(errno));
	if (!same_keys(mr, lkey, rkey, "CHANGE_ACCESS") ||
	    !write_to((uintptr_t)a + 8192, rkey, 8192, IBV_WC_SUCCESS,
		      "WRITE after write access was granted (into pages never touched)"))
		goto out;
	/* A refused change (REMOTE_WRITE without LOCAL_WRITE) changes nothing. */
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE);
	CHECK_OUT(rc, "ibv_rereg_mr(REMOTE_WRITE without LOCAL_WRITE) succeeded");
	if (!write_to((uintptr_t)a + 100, rkey, 64, IBV_WC_SUCCESS, "WRITE after a refused rereg"))
		goto out;
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK_OUT(!rc, "ibv_rereg_mr(back to read) returned %d: %s", rc, strerror(errno));
	if (!write_to((uintptr_t)a, rkey, 64, IBV_WC_REM_ACCESS_ERR,
		      "WRITE after write access was taken away"))
		goto out;
	ok = true;
out:
	return mr_done(mr, a, ok);
}

/*
 * CHANGE_PD: in another PD the MR is out of the QPs' reach, and that PD
 * cannot go while the MR is in it; back in the QPs' PD it works again.
 */
bool do_rereg_pd(void)
{
	uint8_t *a = fresh();
	struct ibv_pd *pd2 = ibv_alloc_pd(E.ctx);
	struct ibv_mr *mr = NULL;
	bool ok = false;
	int rc;

	CHECK_OUT(a && pd2, "mmap or ibv_alloc_pd failed");
	mr = ibv_reg_mr(E.pd, a, MR_LEN, ALL_ACCESS);
	CHECK_OUT(mr, "ibv_reg_mr failed: %s", strerror(errno));
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	CHECK_OUT(!rc && mr->pd == pd2, "ibv_rereg_mr(CHANGE_PD) returned %d: %s", rc,
		  strerror(errno));
	if (!write_to((uintptr_t)a, mr->rkey, 64, IBV_WC_REM_ACCESS_ERR,
		      "WRITE from a QP of the PD the MR left"))
		goto out;
	CHECK_OUT(ibv_dealloc_pd(pd2), "the PD the MR is in was deallocated");
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, E.pd, NULL, 0, 0);
	CHECK_OUT(!rc && mr->pd == E.pd, "ibv_rereg_mr(CHANGE_PD back) returned %d: %s", rc,
		  strerror(errno));
	if (!write_to((uintptr_t)a + 4096, mr->rkey, 4096, IBV_WC_SUCCESS,
		      "WRITE once the MR is back in the QPs' PD"))
		goto out;
	ok = true;
out:
	ok = mr_done(mr, a, ok);
	if (pd2 && ibv_dealloc_pd(pd2) && ok) {
		snprintf(why, sizeof(why), "ibv_dealloc_pd failed once the MR left it");
		ok = false;
	}
	return ok;
}

/*
 * Refusals: no change asked for (ib_core's), a new range the process may
 * not touch (the driver's: it cannot pin it); the MR stays where it was.
 */
bool do_rereg_errors(void)
{
	uint8_t *a = fresh(), *gone = fresh();
	struct ibv_mr *mr = NULL;
	bool ok = false;
	int rc;

	CHECK_OUT(a && gone, "mmap failed");
	CHECK_OUT(!mprotect(gone, MR_LEN, PROT_NONE), "mprotect failed");
	mr = ibv_reg_mr(E.pd, a, MR_LEN, ALL_ACCESS);
	CHECK_OUT(mr, "ibv_reg_mr failed: %s", strerror(errno));
	rc = ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0);
	CHECK_OUT(rc, "ibv_rereg_mr with no flags succeeded");
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, gone, MR_LEN, 0);
	CHECK_OUT(rc, "ibv_rereg_mr to PROT_NONE memory succeeded");
	CHECK_OUT(mr->addr == a, "a refused rereg moved the MR to %p", mr->addr);
	if (!write_to((uintptr_t)a + 64, mr->rkey, 1024, IBV_WC_SUCCESS,
		      "WRITE after the refused rereg"))
		goto out;
	ok = true;
out:
	if (gone)
		munmap(gone, MR_LEN);
	return mr_done(mr, a, ok);
}
