/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* Stand-in for the kernel's <linux/log2.h> (see types.h here). */
#ifndef VRNIC_KSHIM_LOG2_H
#define VRNIC_KSHIM_LOG2_H

#include <linux/types.h>

static inline int ilog2(unsigned long long n)
{
	return 63 - __builtin_clzll(n);
}

static inline bool is_power_of_2(unsigned long long n)
{
	return n != 0 && (n & (n - 1)) == 0;
}

#endif
