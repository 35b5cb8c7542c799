// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * An MPI program that checks what it moves, for vrnic_mpi.sh: run it with
 * two ranks (mpirun -np 2), one in each guest.
 *
 *  - ping-pong from 1 B to 4 MiB: rank 0 sends a pattern, rank 1 checks
 *    it and sends back its own, which rank 0 checks;
 *  - a bandwidth loop: a window of nonblocking sends of 1 MiB, each
 *    checked by the receiver;
 *  - MPI_Allreduce (sum and max) and MPI_Alltoall, with known answers;
 *  - one-sided MPI_Put and MPI_Get in a window, with fences.
 *
 * Rank 0 prints one line per part, "ok ..." or "FAIL ...", and the
 * program exits non-zero if any part failed on any rank.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE (4u << 20)
#define BW_SIZE (1u << 20)
#define BW_WINDOW 16
#define BW_ROUNDS 8
#define WIN_WORDS 4096

static int rank, nranks;

static unsigned char pattern(size_t i, unsigned int seed)
{
	return (unsigned char)((i * 131u + seed * 7u + (i >> 8)) & 0xff);
}

static void fill(unsigned char *buf, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(i, seed);
}

static size_t first_bad(const unsigned char *buf, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pattern(i, seed))
			return i;
	return len;
}

/* Every rank's verdict: the part passes only when it passed everywhere. */
static int agree(int ok, const char *what, const char *detail)
{
	int all;

	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!ok)
		fprintf(stderr, "rank %d: %s: %s\n", rank, what, detail);
	if (rank == 0)
		printf("%s %s%s%s\n", all ? "ok" : "FAIL", what,
		       ok && *detail ? ": " : "", ok ? detail : "");
	fflush(stdout);
	return all;
}

static int ping_pong(unsigned char *buf)
{
	char detail[128] = "";
	int ok = 1, sizes = 0;
	int peer = 1 - rank;
	double t0 = 0, lat4 = 0;

	for (size_t len = 1; len <= MAX_SIZE && ok; len *= 2, sizes++) {
		unsigned int seed = (unsigned int)sizes;
		int iters = len <= 65536 ? 20 : 4;

		for (int it = 0; it < iters && ok; it++) {
			size_t bad;

			if (len == 4 && it == 0)
				t0 = MPI_Wtime();
			if (rank == 0) {
				fill(buf, len, seed + it);
				MPI_Send(buf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
				memset(buf, 0, len);
				MPI_Recv(buf, (int)len, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				bad = first_bad(buf, len, seed + it + 1000);
			} else {
				memset(buf, 0, len);
				MPI_Recv(buf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				bad = first_bad(buf, len, seed + it);
				fill(buf, len, seed + it + 1000);
				MPI_Send(buf, (int)len, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
			}
			if (bad != len) {
				snprintf(detail, sizeof(detail),
					 "%zu B message, byte %zu wrong", len, bad);
				ok = 0;
			}
		}
		if (len == 4)
			lat4 = (MPI_Wtime() - t0) / 20 / 2 * 1e6;
	}
	if (ok)
		snprintf(detail, sizeof(detail),
			 "%d sizes, 1 B to 4 MiB, half round trip at 4 B %.1f us",
			 sizes, lat4);
	return agree(ok, "ping-pong", detail);
}

static int bandwidth(unsigned char *buf)
{
	MPI_Request reqs[BW_WINDOW];
	char detail[128] = "";
	int ok = 1;
	double t0 = MPI_Wtime(), secs;

	for (int round = 0; round < BW_ROUNDS && ok; round++) {
		for (int w = 0; w < BW_WINDOW; w++) {
			unsigned char *slot = buf + (size_t)w * BW_SIZE;

			if (rank == 0) {
				fill(slot, BW_SIZE, (unsigned int)(round * BW_WINDOW + w));
				MPI_Isend(slot, BW_SIZE, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &reqs[w]);
			} else {
				MPI_Irecv(slot, BW_SIZE, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &reqs[w]);
			}
		}
		MPI_Waitall(BW_WINDOW, reqs, MPI_STATUSES_IGNORE);
		for (int w = 0; rank == 1 && w < BW_WINDOW && ok; w++) {
			size_t bad = first_bad(buf + (size_t)w * BW_SIZE, BW_SIZE,
					       (unsigned int)(round * BW_WINDOW + w));
			if (bad != BW_SIZE) {
				snprintf(detail, sizeof(detail),
					 "round %d message %d byte %zu wrong", round, w, bad);
				ok = 0;
			}
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	secs = MPI_Wtime() - t0;
	if (ok)
		snprintf(detail, sizeof(detail), "%d x 1 MiB in %.2f s, %.1f MB/s",
			 BW_ROUNDS * BW_WINDOW, secs,
			 BW_ROUNDS * BW_WINDOW * (double)BW_SIZE / secs / 1e6);
	return agree(ok, "bandwidth", detail);
}

static int collectives(void)
{
	enum { N = 1000 };
	static long in[N], sum[N], max[N];
	int *send, *recv;
	char detail[128] = "";
	int ok = 1;

	for (int i = 0; i < N; i++)
		in[i] = (long)(rank + 1) * i;
	MPI_Allreduce(in, sum, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(in, max, N, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
	for (int i = 0; i < N && ok; i++) {
		long want_sum = (long)nranks * (nranks + 1) / 2 * i;

		if (sum[i] != want_sum || max[i] != (long)nranks * i) {
			snprintf(detail, sizeof(detail),
				 "element %d: sum %ld (want %ld), max %ld", i, sum[i],
				 want_sum, max[i]);
			ok = 0;
		}
	}
	if (!agree(ok, "MPI_Allreduce", ok ? "1000 longs, sum and max" : detail))
		return 0;

	send = malloc(sizeof(int) * 256 * nranks);
	recv = malloc(sizeof(int) * 256 * nranks);
	if (!send || !recv)
		ok = 0;
	for (int p = 0; ok && p < nranks; p++)
		for (int j = 0; j < 256; j++)
			send[p * 256 + j] = rank * 1000000 + p * 1000 + j;
	if (ok)
		MPI_Alltoall(send, 256, MPI_INT, recv, 256, MPI_INT, MPI_COMM_WORLD);
	for (int p = 0; ok && p < nranks; p++)
		for (int j = 0; j < 256 && ok; j++)
			if (recv[p * 256 + j] != p * 1000000 + rank * 1000 + j) {
				snprintf(detail, sizeof(detail),
					 "from rank %d element %d: %d", p, j,
					 recv[p * 256 + j]);
				ok = 0;
			}
	free(send);
	free(recv);
	return agree(ok, "MPI_Alltoall", ok ? "256 ints per rank" : detail);
}

static int one_sided(void)
{
	uint64_t *base, local[WIN_WORDS], got[WIN_WORDS];
	char detail[128] = "";
	int peer = (rank + 1) % nranks;
	int from = (rank + nranks - 1) % nranks;
	MPI_Win win;
	int ok = 1;

	MPI_Win_allocate(sizeof(uint64_t) * WIN_WORDS, sizeof(uint64_t),
			 MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
	for (int i = 0; i < WIN_WORDS; i++) {
		base[i] = 0;
		local[i] = ((uint64_t)rank << 32) | (uint64_t)i * 3;
	}
	MPI_Win_fence(0, win);
	MPI_Put(local, WIN_WORDS, MPI_UINT64_T, peer, 0, WIN_WORDS, MPI_UINT64_T, win);
	MPI_Win_fence(0, win);
	for (int i = 0; i < WIN_WORDS && ok; i++)
		if (base[i] != (((uint64_t)from << 32) | (uint64_t)i * 3)) {
			snprintf(detail, sizeof(detail), "MPI_Put: word %d is %#llx",
				 i, (unsigned long long)base[i]);
			ok = 0;
		}
	/* Each rank now changes its own window; the peer reads it back. */
	for (int i = 0; i < WIN_WORDS; i++)
		base[i] = ~(((uint64_t)rank << 40) | (uint64_t)i);
	MPI_Win_fence(0, win);
	MPI_Get(got, WIN_WORDS, MPI_UINT64_T, peer, 0, WIN_WORDS, MPI_UINT64_T, win);
	MPI_Win_fence(0, win);
	for (int i = 0; i < WIN_WORDS && ok; i++)
		if (got[i] != ~(((uint64_t)peer << 40) | (uint64_t)i)) {
			snprintf(detail, sizeof(detail), "MPI_Get: word %d is %#llx",
				 i, (unsigned long long)got[i]);
			ok = 0;
		}
	MPI_Win_free(&win);
	return agree(ok, "MPI_Put/MPI_Get", ok ? "4096 words each way, with fences" : detail);
}

int main(int argc, char **argv)
{
	unsigned char *buf;
	int ok = 1;
	char host[256];
	int len;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Get_processor_name(host, &len);
	printf("rank %d of %d on %s\n", rank, nranks, host);
	fflush(stdout);
	if (nranks != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_check: needs exactly 2 ranks, has %d\n", nranks);
		MPI_Finalize();
		return 2;
	}
	buf = malloc((size_t)BW_SIZE * BW_WINDOW > MAX_SIZE ?
		     (size_t)BW_SIZE * BW_WINDOW : MAX_SIZE);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 2);
	ok &= ping_pong(buf);
	ok &= bandwidth(buf);
	ok &= collectives();
	ok &= one_sided();
	free(buf);
	if (rank == 0)
		printf("%s\n", ok ? "all checks passed" : "some checks FAILED");
	MPI_Finalize();
	return ok ? 0 : 1;
}
