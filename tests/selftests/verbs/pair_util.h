/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * What the two-node test programs (vrnic_xfer, vrnic_pair_verbs) share:
 * fatal errors, the data pattern both sides derive from a number, and the
 * TCP control connection that carries the QP handshake.
 */
#ifndef VRNIC_PAIR_UTIL_H
#define VRNIC_PAIR_UTIL_H

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

/* Set by main() to the program's name, for messages. */
static const char *pu_prog = "pair";
/* The control connection. */
static int pu_sock = -1;

static inline void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static inline void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", pu_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static inline int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The byte at offset i of the data named (a, b). */
static inline uint8_t pattern(uint32_t a, uint32_t b, uint64_t i)
{
	uint64_t x = (i >> 3) * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)a << 32 | b);

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	return (uint8_t)(x >> ((i & 7) * 8));
}

static inline void fill(uint8_t *p, uint64_t len, uint32_t a, uint32_t b)
{
	for (uint64_t i = 0; i < len; i++)
		p[i] = pattern(a, b, i);
}

/* Offset of the first wrong byte, or -1. */
static inline int64_t verify(const uint8_t *p, uint64_t len, uint32_t a, uint32_t b)
{
	for (uint64_t i = 0; i < len; i++)
		if (p[i] != pattern(a, b, i))
			return (int64_t)i;
	return -1;
}

static inline void xwrite(const void *p, size_t n)
{
	if (write(pu_sock, p, n) != (ssize_t)n)
		die("control connection: write: %s", strerror(errno));
}

static inline void xread(void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(pu_sock, (char *)p + got, n - got);

		if (r <= 0)
			die("control connection: %s", r ? strerror(errno) : "closed by the peer");
		got += (size_t)r;
	}
}

/* Connect to server:port, or (server NULL) accept one client on port. */
static inline void tcp_connect(const char *server, int port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	char ports[16];
	int one = 1;

	snprintf(ports, sizeof(ports), "%d", port);
	if (server) {
		if (getaddrinfo(server, ports, &hints, &ai))
			die("cannot resolve %s", server);
		pu_sock = socket(AF_INET, SOCK_STREAM, 0);
		if (pu_sock < 0 || connect(pu_sock, ai->ai_addr, ai->ai_addrlen))
			die("Couldn't connect to %s:%d: %s", server, port, strerror(errno));
		freeaddrinfo(ai);
	} else {
		struct sockaddr_in sa = {
			.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
		};
		int ls = socket(AF_INET, SOCK_STREAM, 0);

		setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1))
			die("listen on port %d: %s", port, strerror(errno));
		pu_sock = accept(ls, NULL, NULL);
		if (pu_sock < 0)
			die("accept: %s", strerror(errno));
		close(ls);
	}
	setsockopt(pu_sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Open the RDMA device called name. */
static inline struct ibv_context *open_device_named(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx)
		die("cannot open RDMA device %s", name);
	return ctx;
}

#endif /* VRNIC_PAIR_UTIL_H */
