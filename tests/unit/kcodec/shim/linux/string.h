/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* Stand-in for the kernel's <linux/string.h> (see types.h here). */
#include <string.h>
