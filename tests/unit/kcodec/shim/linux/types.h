/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Stand-in for the kernel's <linux/types.h> and what a kernel .c file
 * gets with it (byte order, errno, fallthrough), for building
 * drivers/vrnic/vrnic_wqe.c on the host: the UAPI types, then the
 * kernel's names for them.  Little-endian hosts only, as vrnic is.
 */
#ifndef VRNIC_KSHIM_TYPES_H
#define VRNIC_KSHIM_TYPES_H

#include_next <linux/types.h>

#include <errno.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif
#include <stddef.h>
#include <stdint.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the kernel codec shim assumes a little-endian host"
#endif

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef u64 dma_addr_t;

#define cpu_to_le16(x) ((__le16)(u16)(x))
#define cpu_to_le32(x) ((__le32)(u32)(x))
#define cpu_to_le64(x) ((__le64)(u64)(x))
#define le32_to_cpu(x) ((u32)(x))
#define be32_to_cpu(x) __builtin_bswap32((u32)(x))
#define cpu_to_be32(x) ((__be32)__builtin_bswap32((u32)(x)))

#define fallthrough __attribute__((__fallthrough__))

#endif
