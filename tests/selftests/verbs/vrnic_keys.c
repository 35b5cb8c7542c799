// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Takes memory keys, for vrnic_keys.sh: the quotas on them.
 *
 *   vrnic_keys DEVICE KIND [MAX] [--hold]
 *
 * Opens a context and a PD on DEVICE and takes keys of KIND (mw: type 1
 * windows, which pin no memory; mr: MRs of one page) until one is refused,
 * or until it has MAX.  Prints "took N", and for a refusal "refused: NAME
 * (what strerror says)", NAME being the errno's (ENOSPC, EAGAIN...).  With
 * --hold it then prints "holding" and keeps them until it is killed.
 * Exits 0 once it has printed, 1 (pair_util.h's die()) if the device or
 * the PD cannot be had.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "pair_util.h"

static const char *errno_name(int err)
{
	switch (err) {
	case ENOSPC:
		return "ENOSPC";
	case EAGAIN:
		return "EAGAIN";
	case ENOMEM:
		return "ENOMEM";
	case EINVAL:
		return "EINVAL";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	default:
		return "another errno";
	}
}

/* One more key of kind on pd: 0, or the errno of the refusal. */
static int take_one(struct ibv_pd *pd, int mw, void *page)
{
	if (mw) {
		if (ibv_alloc_mw(pd, IBV_MW_TYPE_1))
			return 0;
	} else {
		if (ibv_reg_mr(pd, page, 4096, IBV_ACCESS_LOCAL_WRITE))
			return 0;
	}
	return errno ? errno : EIO;
}

int main(int argc, char **argv)
{
	long max = -1, took = 0;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int hold = 0, err = 0, mw;
	static char page[4096] __attribute__((aligned(4096)));

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEVICE mw|mr [MAX] [--hold]\n", argv[0]);
		return 2;
	}
	mw = !strcmp(argv[2], "mw");
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--hold"))
			hold = 1;
		else
			max = strtol(argv[i], NULL, 0);
	}
	pu_prog = "vrnic_keys";
	ctx = open_device_named(argv[1]);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("cannot allocate a PD on %s: %s", argv[1], strerror(errno));
	/* The objects stay until the process ends: its exit frees them. */
	while (max < 0 || took < max) {
		errno = 0;
		err = take_one(pd, mw, page);
		if (err)
			break;
		took++;
	}
	printf("took %ld\n", took);
	if (err)
		printf("refused: %s (%s)\n", errno_name(err), strerror(err));
	fflush(stdout);
	if (hold) {
		printf("holding\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return 0;
}
