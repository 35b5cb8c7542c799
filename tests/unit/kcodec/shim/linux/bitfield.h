/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* Stand-in for the kernel's <linux/bitfield.h> (see types.h here). */
#ifndef VRNIC_KSHIM_BITFIELD_H
#define VRNIC_KSHIM_BITFIELD_H

#define FIELD_PREP(mask, val) \
	((__typeof__(mask))(((unsigned long long)(val) << __builtin_ctzll(mask)) & (mask)))
#define FIELD_GET(mask, reg) \
	((__typeof__(mask))(((reg) & (mask)) >> __builtin_ctzll(mask)))

#endif
