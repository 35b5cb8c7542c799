/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Minimal KTAP output for vrnic's C selftests, in the spirit of
 * tools/testing/selftests/kselftest.h.
 */
#ifndef VRNIC_KTAP_H
#define VRNIC_KTAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int ktap_count, ktap_failed, ktap_skipped;

static inline void ktap_print_header(int planned)
{
	printf("TAP version 13\n1..%d\n", planned);
	fflush(stdout);
}

static inline void __attribute__((format(printf, 2, 3)))
ktap_result(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", ok ? "" : "not ", ++ktap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		ktap_failed++;
}

static inline void __attribute__((format(printf, 2, 3)))
ktap_skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("ok %d %s # SKIP ", ++ktap_count, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	ktap_skipped++;
}

static inline void __attribute__((format(printf, 1, 2)))
ktap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static inline int ktap_finish(void)
{
	printf("# totals: pass:%d fail:%d skip:%d\n",
	       ktap_count - ktap_failed - ktap_skipped, ktap_failed,
	       ktap_skipped);
	return ktap_failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* VRNIC_KTAP_H */
