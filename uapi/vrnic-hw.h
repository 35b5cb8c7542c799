/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB */
/*
 * vrnic hardware programming interface.
 *
 * This header is the single definition of every format the vrnic device
 * exposes: the PCI identity, the register page in BAR2, doorbells, the
 * admin queue (commands and completions), event queues and the structures
 * that admin commands read and write in guest memory.  The kernel driver,
 * the userspace provider and the device model (vrnicd) all include it.
 *
 * Rules for everything in here:
 *  - every multi-byte field is little endian (__le16/__le32/__le64);
 *  - every structure has naturally aligned fields and no implicit padding,
 *    and its size is checked with VRNIC_ASSERT_SIZE();
 *  - bit fields inside a word are described by VRNIC_<STRUCT>_<FIELD>_MASK
 *    masks, built with VRNIC_GENMASK(), and accessed with FIELD_PREP() and
 *    FIELD_GET() (kernel) or the equivalent helpers in userspace.
 *
 * Documentation/hw-spec.rst is the prose version of this file.
 */
#ifndef VRNIC_HW_H
#define VRNIC_HW_H

#include <linux/types.h>

#define VRNIC_BIT(n)		(1U << (n))
#define VRNIC_GENMASK(h, l)	((~0U >> (31 - (h))) & (~0U << (l)))
#define VRNIC_GENMASK_ULL(h, l)	((~0ULL >> (63 - (h))) & (~0ULL << (l)))

#if defined(__KERNEL__)
#include <linux/build_bug.h>
#elif !defined(__cplusplus)
#include <assert.h>
#endif
#define VRNIC_ASSERT_SIZE(type, size) \
	static_assert(sizeof(type) == (size), "size of " #type)

/* ------------------------------------------------------------------------
 * PCI identity.  vrnic is a QEMU ivshmem-doorbell function; the vrnic
 * signature at the start of BAR2 tells it apart from other ivshmem users.
 */
#define VRNIC_PCI_VENDOR_ID		0x1af4
#define VRNIC_PCI_DEVICE_ID		0x1110

#define VRNIC_BAR_REGS			0	/* ivshmem registers (MMIO) */
#define VRNIC_BAR_MSIX			1	/* MSI-X table and PBA */
#define VRNIC_BAR_SHMEM			2	/* shared memory owned by the device */

/* BAR0: ivshmem registers, 32-bit access only. */
#define VRNIC_IVSHMEM_INTR_MASK		0x00
#define VRNIC_IVSHMEM_INTR_STATUS	0x04
#define VRNIC_IVSHMEM_IV_POSITION	0x08
#define VRNIC_IVSHMEM_DOORBELL		0x0c
#define VRNIC_IVSHMEM_BAR_SIZE		0x100

/* Doorbell register value: destination peer and channel. */
#define VRNIC_DOORBELL_PEER_MASK	VRNIC_GENMASK(31, 16)
#define VRNIC_DOORBELL_CHANNEL_MASK	VRNIC_GENMASK(15, 0)

/*
 * Doorbell channels.  A doorbell carries no data: it wakes the device,
 * which then reads the registers and doorbell records it owns.
 */
enum vrnic_db_channel {
	VRNIC_DB_CHANNEL_CTRL = 0,	/* CTRL, admin queue, EQ re-arm */
	VRNIC_DB_CHANNEL_ENGINE = 1,	/* data path queues */
	VRNIC_DB_NUM_CHANNELS = 2,
};

/* ------------------------------------------------------------------------
 * BAR2 layout.  The first page is the register page, the second page the
 * status page (read-only to the driver and to user contexts).
 */
#define VRNIC_BAR2_REG_PAGE		0x0000
#define VRNIC_BAR2_STATUS_PAGE		0x1000
#define VRNIC_BAR2_PAGE_SIZE		0x1000
#define VRNIC_BAR2_MIN_SIZE		0x2000

/*
 * Register page.  All registers are 32 bits wide and are accessed with
 * aligned 32-bit loads and stores.  (RO) registers are written by the
 * device only, (RW) registers by the driver only, except where a register
 * description says that the device clears a bit to acknowledge it.
 */
#define VRNIC_REG_MAGIC			0x000	/* RO: VRNIC_MAGIC */
#define VRNIC_REG_VERSION		0x004	/* RO: interface version */
#define VRNIC_REG_CAPS_LO		0x008	/* RO: VRNIC_CAP_* bits 31:0 */
#define VRNIC_REG_CAPS_HI		0x00c	/* RO: VRNIC_CAP_* bits 63:32 */
#define VRNIC_REG_STATE			0x010	/* RO: enum vrnic_dev_state */
#define VRNIC_REG_FATAL_CODE		0x014	/* RO: enum vrnic_fatal_code */
#define VRNIC_REG_CTRL			0x018	/* RW: VRNIC_CTRL_* */
#define VRNIC_REG_HEARTBEAT		0x01c	/* RO: ticks while alive */
#define VRNIC_REG_DB_PEER		0x020	/* RO: ivshmem peer of device */
#define VRNIC_REG_NUM_VECTORS		0x024	/* RO: MSI-X vectors driven */
#define VRNIC_REG_QUEUE_LIMITS		0x028	/* RO: VRNIC_QUEUE_LIMITS_* */
#define VRNIC_REG_HEARTBEAT_MS		0x02c	/* RO: heartbeat period */

#define VRNIC_REG_AQ_SQ_BASE_LO		0x040	/* RW: admin SQ ring GPA */
#define VRNIC_REG_AQ_SQ_BASE_HI		0x044
#define VRNIC_REG_AQ_CQ_BASE_LO		0x048	/* RW: admin CQ ring GPA */
#define VRNIC_REG_AQ_CQ_BASE_HI		0x04c
#define VRNIC_REG_AQ_DEPTH		0x050	/* RW: log2 of entries */
#define VRNIC_REG_AQ_SQ_PI		0x054	/* RW: SQ producer index */
#define VRNIC_REG_AQ_CQ_CI		0x058	/* RW: CQ consumer index */
#define VRNIC_REG_AQ_SQ_CI		0x05c	/* RO: SQ consumer index */

#define VRNIC_REG_AEQ_BASE_LO		0x060	/* RW: async EQ ring GPA */
#define VRNIC_REG_AEQ_BASE_HI		0x064
#define VRNIC_REG_AEQ_DEPTH		0x068	/* RW: log2 of entries */
#define VRNIC_REG_AEQ_CI		0x06c	/* RW: AEQ consumer index */
#define VRNIC_REG_AEQ_OVERFLOW		0x070	/* RO: async events dropped */

#define VRNIC_MAGIC			0x43494e56	/* "VNIC" in memory */

#define VRNIC_VERSION_MAJOR_MASK	VRNIC_GENMASK(31, 16)
#define VRNIC_VERSION_MINOR_MASK	VRNIC_GENMASK(15, 0)
#define VRNIC_VERSION_MAJOR		1
#define VRNIC_VERSION_MINOR		0

/* Device capabilities (CAPS_HI:CAPS_LO). */
#define VRNIC_CAP_ROCE_V2		VRNIC_BIT(0)
#define VRNIC_CAP_DB_SUPPRESS		VRNIC_BIT(1)	/* status page flag */
#define VRNIC_CAP_HEARTBEAT		VRNIC_BIT(2)

enum vrnic_dev_state {
	VRNIC_STATE_RESET = 0,	/* disabled; accepts configuration */
	VRNIC_STATE_READY = 1,	/* enabled; admin queue running */
	VRNIC_STATE_FATAL = 2,	/* stopped on an error; needs reset */
	VRNIC_STATE_GONE = 3,	/* device shut down; never comes back */
};

enum vrnic_fatal_code {
	VRNIC_FATAL_NONE = 0,
	VRNIC_FATAL_BAD_CONFIG = 1,	/* ENABLE with invalid AQ/AEQ setup */
	VRNIC_FATAL_AQ_OVERRUN = 2,	/* AQ_SQ_PI moved past a full ring */
	VRNIC_FATAL_DMA = 3,		/* device could not reach a ring */
	VRNIC_FATAL_SHUTDOWN = 4,	/* device process is exiting */
	VRNIC_FATAL_INTERNAL = 5,
	VRNIC_FATAL_DIED = 6,		/* device process died (its keeper
					 * reports it)
					 */
};

/*
 * CTRL: the driver sets ENABLE or RESET and rings VRNIC_DB_CHANNEL_CTRL.
 * The device clears RESET when the reset has completed.
 */
#define VRNIC_CTRL_ENABLE		VRNIC_BIT(0)
#define VRNIC_CTRL_RESET		VRNIC_BIT(1)

/* QUEUE_LIMITS: ring depth limits for the AQ and AEQ, as log2. */
#define VRNIC_QUEUE_LIMITS_AQ_MAX_MASK	VRNIC_GENMASK(7, 0)
#define VRNIC_QUEUE_LIMITS_AEQ_MAX_MASK	VRNIC_GENMASK(15, 8)
#define VRNIC_QUEUE_LIMITS_EQ_MAX_MASK	VRNIC_GENMASK(23, 16)
#define VRNIC_QUEUE_LIMITS_MIN_MASK	VRNIC_GENMASK(31, 24)

/*
 * Status page.  Written by the device, read by the driver and, through a
 * read-only mapping, by user contexts.
 *
 * ENGINE_ASLEEP implements doorbell suppression: while it reads 0 the
 * device is polling the doorbell records of its active queues and a
 * doorbell MMIO write is unnecessary.  The device sets it to 1, issues a
 * full fence and re-checks every doorbell record before it sleeps; a
 * producer writes its doorbell record, issues a full fence and then reads
 * this flag, ringing VRNIC_DB_CHANNEL_ENGINE only when it reads 1.
 */
#define VRNIC_STATUS_ENGINE_ASLEEP	0x000
#define VRNIC_STATUS_DB_PEER		0x004	/* copy of REG_DB_PEER */

/* ------------------------------------------------------------------------
 * Rings.  Producer and consumer indices are free-running 32-bit counters;
 * the slot of index i in a ring of 2^n entries is i & (2^n - 1).  Entries
 * written by the device carry an owner (phase) bit that the device writes
 * as 1 on the first pass over the ring, 0 on the second, and so on; it is
 * in the last 32-bit word of the entry, which the device writes last.
 */

/* ------------------------------------------------------------------------
 * Admin queue.
 *
 * The admin opcodes are listed once, in vrnic-aq-ops.h, as
 * VRNIC_AQ_OP(NAME, name, value) entries.  This enum, the driver's and the
 * device's opcode names and the device's handler table are generated from
 * that list, so a new opcode is one line there (plus its handler in the
 * device and its wrapper in the driver).
 */
enum vrnic_aq_opcode {
#define VRNIC_AQ_OP(NAME, name, value) VRNIC_AQ_OP_##NAME,
#include "vrnic-aq-ops.h"
#undef VRNIC_AQ_OP
	VRNIC_AQ_OP_MAX
};

enum vrnic_aq_status {
	VRNIC_AQ_STATUS_OK = 0,
	VRNIC_AQ_STATUS_BAD_OPCODE = 1,	/* unknown opcode */
	VRNIC_AQ_STATUS_BAD_PARAM = 2,	/* a field is out of range */
	VRNIC_AQ_STATUS_BAD_ADDR = 3,	/* a GPA is misaligned or not RAM */
	VRNIC_AQ_STATUS_NO_RESOURCES = 4,	/* device table full */
	VRNIC_AQ_STATUS_NOT_FOUND = 5,	/* object does not exist */
	VRNIC_AQ_STATUS_BUSY = 6,	/* object exists or is in use */
	VRNIC_AQ_STATUS_INTERNAL = 7,
};

/* Command header, bytes 0..7 of every command. */
struct vrnic_aq_hdr {
	__le16 opcode;		/* enum vrnic_aq_opcode */
	__le16 cookie;		/* echoed in the completion */
	__le32 flags;		/* opcode specific */
};

VRNIC_ASSERT_SIZE(struct vrnic_aq_hdr, 8);

/* A response buffer in guest memory for commands that return data. */
struct vrnic_aq_resp_buf {
	__le64 addr;		/* GPA, 8-byte aligned */
	__le32 len;		/* bytes available at addr */
	__le32 rsvd;
};

VRNIC_ASSERT_SIZE(struct vrnic_aq_resp_buf, 16);

/* NOP: completes with OK; with VRNIC_AQ_NOP_F_EVENT it also posts a
 * VRNIC_EQE_TYPE_NOP entry carrying @cookie to event queue @eqn (0: AEQ).
 */
#define VRNIC_AQ_NOP_F_EVENT		VRNIC_BIT(0)
struct vrnic_aq_nop {
	struct vrnic_aq_hdr hdr;
	__le32 eqn;
	__le32 cookie;
	__le32 rsvd[12];
};

/* QUERY_DEVICE: writes struct vrnic_device_attr to @resp.  The completion
 * result is sizeof(struct vrnic_device_attr); at most @resp.len bytes are
 * written.
 */
struct vrnic_aq_query_device {
	struct vrnic_aq_hdr hdr;
	struct vrnic_aq_resp_buf resp;
	__le32 rsvd[10];
};

/* QUERY_PORT: writes struct vrnic_port_attr to @resp. */
struct vrnic_aq_query_port {
	struct vrnic_aq_hdr hdr;
	struct vrnic_aq_resp_buf resp;
	__le32 port;
	__le32 rsvd[9];
};

/* MODIFY_PORT: hdr.flags selects the fields to apply. */
#define VRNIC_AQ_MODIFY_PORT_F_NETDEV	VRNIC_BIT(0)	/* netdev_state */
#define VRNIC_AQ_MODIFY_PORT_F_MTU	VRNIC_BIT(1)	/* netdev_mtu */
#define VRNIC_AQ_MODIFY_PORT_F_MAC	VRNIC_BIT(2)	/* mac */
#define VRNIC_NETDEV_STATE_UP		VRNIC_BIT(0)	/* admin up */
#define VRNIC_NETDEV_STATE_CARRIER	VRNIC_BIT(1)	/* carrier on */
struct vrnic_aq_modify_port {
	struct vrnic_aq_hdr hdr;
	__le32 port;
	__le32 netdev_state;	/* VRNIC_NETDEV_STATE_* */
	__le32 netdev_mtu;	/* Ethernet MTU in bytes */
	__u8 mac[6];		/* netdev's current MAC address */
	__u8 rsvd0[2];
	__le32 rsvd[9];
};

/* SET_GID: hdr.flags VRNIC_AQ_SET_GID_F_VALID writes entry @index, without
 * it the entry is cleared.  The entry's type is the encapsulation of the
 * packets sent from it: RoCEv2 (IPv4 or IPv6 and UDP) or, with
 * VRNIC_DEV_CAP_ROCE_V1, RoCEv1 (Ethertype 0x8915 and a GRH).
 */
#define VRNIC_AQ_SET_GID_F_VALID	VRNIC_BIT(0)
enum vrnic_gid_type {
	VRNIC_GID_TYPE_ROCE_V2 = 0,
	VRNIC_GID_TYPE_ROCE_V1 = 1,
};

struct vrnic_aq_set_gid {
	struct vrnic_aq_hdr hdr;
	__le32 port;
	__le32 index;
	__u8 gid[16];		/* network byte order */
	__le32 type;		/* enum vrnic_gid_type */
	__le16 vlan_id;		/* 0xffff: untagged */
	__u8 mac[6];		/* source MAC for this GID */
	__le32 rsvd[5];
};

/* CREATE_EQ: a completion event queue.  The ring is physically contiguous,
 * 4 KiB aligned, 2^log_depth entries of struct vrnic_eqe.  @dbrec is the
 * GPA of the EQ's struct vrnic_eq_dbrec.
 */
struct vrnic_aq_create_eq {
	struct vrnic_aq_hdr hdr;
	__le64 ring_addr;
	__le64 dbrec_addr;
	__le32 eqn;		/* 1 .. max_eq - 1; 0 is the AEQ */
	__le32 vector;		/* MSI-X vector, 1 .. NUM_VECTORS - 1 */
	__le32 log_depth;
	__le32 rsvd[7];
};

struct vrnic_aq_destroy_eq {
	struct vrnic_aq_hdr hdr;
	__le32 eqn;
	__le32 rsvd[13];
};

/*
 * A queue buffer: npages pages of 4 KiB in guest memory, listed by a page
 * list at pbl_addr (npages __le64 GPAs, 8-byte aligned, physically
 * contiguous).  Page 0 holds the queue's doorbell records; the rings
 * follow in the pages the command names.
 */
#define VRNIC_QBUF_MAX_PAGES		4096
struct vrnic_qbuf_desc {
	__le64 pbl_addr;
	__le32 npages;
	__le32 rsvd;
};

VRNIC_ASSERT_SIZE(struct vrnic_qbuf_desc, 16);

/* CREATE_PD: result is the PD number. */
struct vrnic_aq_create_pd {
	struct vrnic_aq_hdr hdr;
	__le32 rsvd[14];
};

/* DESTROY_PD: BUSY while an MR, QP or SRQ uses it. */
struct vrnic_aq_destroy_pd {
	struct vrnic_aq_hdr hdr;
	__le32 pdn;
	__le32 rsvd[13];
};

/* Access rights of a memory region and remote rights of a QP. */
#define VRNIC_ACCESS_LOCAL_WRITE	VRNIC_BIT(0)
#define VRNIC_ACCESS_REMOTE_WRITE	VRNIC_BIT(1)
#define VRNIC_ACCESS_REMOTE_READ	VRNIC_BIT(2)
#define VRNIC_ACCESS_REMOTE_ATOMIC	VRNIC_BIT(3)
#define VRNIC_ACCESS_MW_BIND		VRNIC_BIT(4)	/* MRs: windows may bind */
/* Windows of type 2 only: addressed from 0, not from their start. */
#define VRNIC_ACCESS_ZERO_BASED		VRNIC_BIT(5)
/* FLUSH of placement type global visibility, and of persistence */
#define VRNIC_ACCESS_FLUSH_GLOBAL	VRNIC_BIT(6)
#define VRNIC_ACCESS_FLUSH_PERSISTENT	VRNIC_BIT(7)
#define VRNIC_ACCESS_ALL		(VRNIC_GENMASK(4, 0) | \
					 VRNIC_ACCESS_FLUSH_GLOBAL | \
					 VRNIC_ACCESS_FLUSH_PERSISTENT)

/*
 * REG_MR: a memory region of length bytes at I/O virtual address iova,
 * backed by npages pages of 2^page_shift bytes; page i holds
 * [align_down(iova, 2^page_shift) + i * 2^page_shift, ...).  pbl_addr is a
 * page list of npages GPAs; with VRNIC_AQ_REG_MR_F_INDIRECT it is a list of
 * the GPAs of 4 KiB pages that each hold 512 entries of the page list.
 * The device copies the list; the driver may free it on completion.
 * Result: the key, used as both lkey and rkey.
 */
#define VRNIC_AQ_REG_MR_F_INDIRECT	VRNIC_BIT(0)
/*
 * With F_PHYS the region is guest-physical memory itself, for the kernel's
 * local DMA key: addresses are GPAs, and every access must lie in guest
 * RAM.  iova, length, npages, page_shift and pbl_addr must be 0.
 */
#define VRNIC_AQ_REG_MR_F_PHYS		VRNIC_BIT(1)
/*
 * With F_DM the region is device memory (VRNIC_DEV_CAP_DM), addressed from
 * 0: pbl_addr is the byte offset of its start in the device memory, a
 * multiple of 8; iova is 0, page_shift 12 and npages the 4-KiB pages of
 * length bytes.  The region lies inside the device memory.
 */
#define VRNIC_AQ_REG_MR_F_DM		VRNIC_BIT(2)
#define VRNIC_PBL_ENTRIES_PER_PAGE	512
#define VRNIC_MR_MIN_PAGE_SHIFT		12
#define VRNIC_MR_MAX_PAGE_SHIFT		30
struct vrnic_aq_reg_mr {
	struct vrnic_aq_hdr hdr;
	__le64 iova;
	__le64 length;
	__le64 pbl_addr;
	__le32 pdn;
	__le32 access;		/* VRNIC_ACCESS_* */
	__le32 npages;
	__le32 page_shift;
	__le32 rsvd[4];
};

/*
 * Keys: 31:20 the MR table index, 19:8 a tag the device draws when it
 * hands the index out, 7:0 the consumer's variant (ib_inc_rkey(), the
 * key of a REG_MR or BIND_MW WQE; drawn too at first).
 */
#define VRNIC_KEY_INDEX_MASK		VRNIC_GENMASK(31, 20)
#define VRNIC_KEY_TAG_MASK		VRNIC_GENMASK(19, 8)
#define VRNIC_KEY_VARIANT_MASK		VRNIC_GENMASK(7, 0)
/* What the device fixes; a WQE may change only the variant. */
#define VRNIC_KEY_DEVICE_MASK		VRNIC_GENMASK(31, 8)
/* Index 0 is no key's: a device has at most this many. */
#define VRNIC_MAX_KEYS			4095

struct vrnic_aq_dereg_mr {
	struct vrnic_aq_hdr hdr;
	__le32 key;
	__le32 rsvd[13];
};

/*
 * REREG_MR: change a registered region (of REG_MR, not F_PHYS) in place;
 * it keeps its key.  The flags say what changes: F_TRANS its translation
 * (iova, length, pbl_addr, npages, page_shift, as REG_MR takes them, and
 * F_INDIRECT as REG_MR's), F_PD its PD (pdn), F_ACCESS its rights
 * (access); at least one of the three.  Fields of what does not change
 * must be 0.  key must be the region's key exactly.  Refused (BUSY) while
 * windows are bound to the region, as DEREG_MR is.  On any error the
 * region is as it was.  The device copies the page list, as at REG_MR;
 * the old pages are no longer used once the command completes.
 * Announced by VRNIC_DEV_CAP_REREG_MR.
 */
#define VRNIC_AQ_REREG_MR_F_TRANS	VRNIC_BIT(0)
#define VRNIC_AQ_REREG_MR_F_PD		VRNIC_BIT(1)
#define VRNIC_AQ_REREG_MR_F_ACCESS	VRNIC_BIT(2)
#define VRNIC_AQ_REREG_MR_F_INDIRECT	VRNIC_BIT(3)
struct vrnic_aq_rereg_mr {
	struct vrnic_aq_hdr hdr;
	__le64 iova;
	__le64 length;
	__le64 pbl_addr;
	__le32 pdn;
	__le32 access;		/* VRNIC_ACCESS_* */
	__le32 npages;
	__le32 page_shift;
	__le32 key;
	__le32 rsvd[3];
};

/*
 * ALLOC_MR: a fast-register MR of PD pdn, in the free state: no access
 * through it until a REG_MR WQE (struct vrnic_sqe_reg_mr) of a QP of the
 * same PD registers up to max_pages pages (1 .. max_fast_reg_page_list_len).
 * Result: the key; its bits 7:0 are the initial variant.  DEREG_MR takes
 * any key of the MR (it matches bits 31:8 only), since the consumer may
 * have changed bits 7:0.
 *
 * States: free (after ALLOC_MR), valid (after REG_MR), invalid (after
 * LOCAL_INV or a SEND_WITH_INV received).  REG_MR is refused on a valid
 * MR; keys of a free or invalid MR match nothing.
 */
struct vrnic_aq_alloc_mr {
	struct vrnic_aq_hdr hdr;
	__le32 pdn;
	__le32 max_pages;
	__le32 rsvd[12];
};

/*
 * ALLOC_MW: a memory window of PD pdn, of type 1 or 2, unbound.  Result:
 * its key (an rkey only; bits 7:0 the initial variant).  A BIND_MW WQE
 * binds it to part of an MR with MW_BIND access (type 2: for one QP).
 * DEALLOC_MW (the dereg_mr layout: key at 0x8) frees it, bound or not.
 */
#define VRNIC_MW_TYPE_1			1
#define VRNIC_MW_TYPE_2			2
struct vrnic_aq_alloc_mw {
	struct vrnic_aq_hdr hdr;
	__le32 pdn;
	__le32 type;		/* VRNIC_MW_TYPE_* */
	__le32 rsvd[12];
};

/*
 * CREATE_CQ: page 0 of buf holds struct vrnic_cq_dbrec, the ring of
 * 2^log_depth struct vrnic_cqe starts at page 1.  Completion events go to
 * event queue eqn.  Result: the CQ number.
 */
struct vrnic_aq_create_cq {
	struct vrnic_aq_hdr hdr;
	struct vrnic_qbuf_desc buf;
	__le32 log_depth;
	__le32 eqn;
	__le32 rsvd[8];
};

/*
 * MODIFY_CQ: completion event moderation.  Once the CQ is armed, its
 * COMPLETION event waits until count completions that the arm asked for
 * have been written, or until period_us microseconds have passed since the
 * first of them, whichever comes first.  A completion in error raises the
 * event at once.  count 0 or 1 with period_us 0 (the state at CREATE_CQ)
 * is no moderation: the first completion raises it.  count above 1 with
 * period_us 0 waits for count completions, however long that takes.
 * BAD_PARAM above VRNIC_CQ_MOD_MAX_COUNT or VRNIC_CQ_MOD_MAX_PERIOD_US.
 * Announced by VRNIC_DEV_CAP_CQ_MODERATION.
 */
#define VRNIC_CQ_MOD_MAX_COUNT		0xffff
#define VRNIC_CQ_MOD_MAX_PERIOD_US	0xfff
struct vrnic_aq_modify_cq {
	struct vrnic_aq_hdr hdr;
	__le32 cqn;
	__le32 count;
	__le32 period_us;
	__le32 rsvd[11];
};

/* DESTROY_CQ: BUSY while a QP uses it. */
struct vrnic_aq_destroy_cq {
	struct vrnic_aq_hdr hdr;
	__le32 cqn;
	__le32 rsvd[13];
};

/*
 * RESIZE_CQ: move the CQ to a new buffer laid out as for CREATE_CQ.  The
 * device copies the entries the driver has not consumed (from the old
 * doorbell record's ci) to the new ring, starting at index 0, and goes on
 * in the new ring; the CQ is disarmed.  NO_RESOURCES if they do not fit.
 * Result: the number of entries moved.
 */
struct vrnic_aq_resize_cq {
	struct vrnic_aq_hdr hdr;
	struct vrnic_qbuf_desc buf;
	__le32 cqn;
	__le32 log_depth;
	__le32 rsvd[8];
};

/* QP types use the IB encoding. */
enum vrnic_qp_type {
	VRNIC_QPT_RC = 2,
	VRNIC_QPT_UC = 3,
	VRNIC_QPT_UD = 4,
};

/*
 * CREATE_QP: page 0 of buf holds struct vrnic_qp_dbrec; the send ring
 * (2^sq_log_depth entries of 2^sq_log_stride bytes) starts at page sq_page
 * and the receive ring at rq_page.  With F_SRQ the QP receives from SRQ
 * srqn and has no receive ring.  Result: the QP number.
 */
#define VRNIC_AQ_CREATE_QP_F_SQ_SIG_ALL	VRNIC_BIT(0)
#define VRNIC_AQ_CREATE_QP_F_SRQ	VRNIC_BIT(1)
/*
 * F_GSI (type UD only): the general services QP.  It gets QP number 1
 * (BUSY if there is one already), sends every datagram with Q_Key
 * 0x80010000 and accepts only datagrams that carry that Q_Key.
 */
#define VRNIC_AQ_CREATE_QP_F_GSI	VRNIC_BIT(2)
/*
 * F_BLOCK_SELF_MCAST_LB: the QP does not receive the multicast datagrams it
 * sends itself (other members on the port still do).  Announced by
 * VRNIC_DEV_CAP_BLOCK_MCAST_LB.
 */
#define VRNIC_AQ_CREATE_QP_F_BLOCK_SELF_MCAST_LB	VRNIC_BIT(3)
#define VRNIC_GSI_QPN			1
#define VRNIC_GSI_QKEY			0x80010000
#define VRNIC_WQE_MIN_LOG_STRIDE	6
#define VRNIC_WQE_MAX_LOG_STRIDE	12
#define VRNIC_RQE_MIN_LOG_STRIDE	4	/* receive rings, SRQs */
struct vrnic_aq_create_qp {
	struct vrnic_aq_hdr hdr;
	struct vrnic_qbuf_desc buf;
	__le32 type;		/* enum vrnic_qp_type */
	__le32 pdn;
	__le32 send_cqn;
	__le32 recv_cqn;
	__le32 srqn;
	__u8 sq_log_depth;
	__u8 sq_log_stride;
	__u8 rq_log_depth;
	__u8 rq_log_stride;
	__le16 sq_page;
	__le16 rq_page;
	__le32 max_inline;
	__le32 rsvd[2];
};

/* QP states use the IB encoding. */
enum vrnic_qp_state {
	VRNIC_QPS_RESET = 0,
	VRNIC_QPS_INIT = 1,
	VRNIC_QPS_RTR = 2,
	VRNIC_QPS_RTS = 3,
	VRNIC_QPS_SQD = 4,
	VRNIC_QPS_SQE = 5,
	VRNIC_QPS_ERR = 6,
};

/* Which fields of struct vrnic_qp_attr a MODIFY_QP applies. */
#define VRNIC_QP_ATTR_STATE		VRNIC_BIT(0)
#define VRNIC_QP_ATTR_ACCESS		VRNIC_BIT(1)
#define VRNIC_QP_ATTR_PATH_MTU		VRNIC_BIT(2)
#define VRNIC_QP_ATTR_DEST_QPN		VRNIC_BIT(3)
#define VRNIC_QP_ATTR_RQ_PSN		VRNIC_BIT(4)
#define VRNIC_QP_ATTR_SQ_PSN		VRNIC_BIT(5)
#define VRNIC_QP_ATTR_QKEY		VRNIC_BIT(6)
#define VRNIC_QP_ATTR_PKEY_INDEX	VRNIC_BIT(7)
#define VRNIC_QP_ATTR_PORT		VRNIC_BIT(8)
#define VRNIC_QP_ATTR_TIMEOUT		VRNIC_BIT(9)
#define VRNIC_QP_ATTR_RETRY_CNT		VRNIC_BIT(10)
#define VRNIC_QP_ATTR_RNR_RETRY		VRNIC_BIT(11)
#define VRNIC_QP_ATTR_MIN_RNR_TIMER	VRNIC_BIT(12)
#define VRNIC_QP_ATTR_MAX_RD_ATOMIC	VRNIC_BIT(13)
#define VRNIC_QP_ATTR_MAX_DEST_RD_ATOMIC VRNIC_BIT(14)
#define VRNIC_QP_ATTR_AV		VRNIC_BIT(15)
#define VRNIC_QP_ATTR_SQD_ASYNC_NOTIFY	VRNIC_BIT(16)
/* rate_limit and max_burst (VRNIC_DEV_CAP_RATE_LIMIT) */
#define VRNIC_QP_ATTR_RATE_LIMIT	VRNIC_BIT(17)
#define VRNIC_QP_ATTR_ALL		VRNIC_GENMASK(17, 0)

/* An address vector: where RoCEv2 packets go. */
struct vrnic_av {
	__u8 dgid[16];		/* network byte order */
	__u8 dmac[6];
	__u8 sgid_index;
	__u8 hop_limit;
	__le32 flow_label;
	__u8 traffic_class;
	__u8 rsvd;
	__le16 vlan_id;		/* 0xffff: untagged */
};

VRNIC_ASSERT_SIZE(struct vrnic_av, 32);

/* QP attributes, for MODIFY_QP (in) and QUERY_QP (out). */
struct vrnic_qp_attr {
	__le32 state;		/* enum vrnic_qp_state */
	__le32 access;		/* VRNIC_ACCESS_*; LOCAL_WRITE has no effect */
	__le32 path_mtu;	/* IB MTU enumeration */
	__le32 dest_qpn;
	__le32 rq_psn;
	__le32 sq_psn;
	__le32 qkey;
	__le16 pkey_index;
	__u8 port;
	__u8 sq_draining;	/* QUERY_QP: SQD and still draining */
	__u8 timeout;
	__u8 retry_cnt;
	__u8 rnr_retry;
	__u8 min_rnr_timer;
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 sqd_async_notify;
	__u8 rsvd0;
	struct vrnic_av av;
	/*
	 * Pacing of the send queue's packets, in kbit/s of frames on the
	 * wire; 0 sends unpaced.  max_burst: bytes the QP may send at once
	 * after a pause; 0 (or less than two 4-KiB frames) takes two frames.
	 */
	__le32 rate_limit;
	__le32 max_burst;
	__le32 rsvd[12];
};

VRNIC_ASSERT_SIZE(struct vrnic_qp_attr, 128);

/*
 * MODIFY_QP: apply the fields attr_mask selects from the struct
 * vrnic_qp_attr at attr.  The device checks the transition and the
 * attributes the IB specification requires for it.
 */
struct vrnic_aq_modify_qp {
	struct vrnic_aq_hdr hdr;
	__le32 qpn;
	__le32 attr_mask;	/* VRNIC_QP_ATTR_* */
	struct vrnic_aq_resp_buf attr;
	__le32 rsvd[8];
};

/* QUERY_QP: writes struct vrnic_qp_attr to resp. */
struct vrnic_aq_query_qp {
	struct vrnic_aq_hdr hdr;
	__le32 qpn;
	__le32 rsvd0;
	struct vrnic_aq_resp_buf resp;
	__le32 rsvd[8];
};

struct vrnic_aq_destroy_qp {
	struct vrnic_aq_hdr hdr;
	__le32 qpn;
	__le32 rsvd[13];
};

/*
 * CREATE_SRQ: page 0 of buf holds struct vrnic_srq_dbrec, the ring of
 * 2^log_depth receive WQEs of 2^log_stride bytes starts at ring_page.
 * A non-zero limit arms the limit event.  Result: the SRQ number.
 */
struct vrnic_aq_create_srq {
	struct vrnic_aq_hdr hdr;
	struct vrnic_qbuf_desc buf;
	__le32 pdn;
	__u8 log_depth;
	__u8 log_stride;
	__le16 ring_page;
	__le32 limit;
	__le32 rsvd[7];
};

/* MODIFY_SRQ: with F_LIMIT, arm the limit event at limit (0 disarms). */
#define VRNIC_AQ_MODIFY_SRQ_F_LIMIT	VRNIC_BIT(0)
struct vrnic_aq_modify_srq {
	struct vrnic_aq_hdr hdr;
	__le32 srqn;
	__le32 limit;
	__le32 rsvd[12];
};

/*
 * RESIZE_SRQ: move the SRQ to a new queue buffer, laid out as CREATE_SRQ's
 * with 2^log_depth WQEs of the SRQ's stride starting at ring_page.  The
 * device copies the WQEs posted and not yet taken (from its consumer index
 * to the old record's pi) to the new ring from index 0, in order, writes
 * the new record's pi (their count) and ci (0), and takes WQEs from there.
 * BAD_PARAM if they do not fit, if log_depth is below the armed limit or
 * above max_srq_wr, or if the old record's pi is more than a ring ahead of
 * the consumer: the SRQ goes on in its old ring.  Result: the number of
 * WQEs moved, the new ring's producer index.  Announced by
 * VRNIC_DEV_CAP_SRQ_RESIZE.
 */
struct vrnic_aq_resize_srq {
	struct vrnic_aq_hdr hdr;
	struct vrnic_qbuf_desc buf;
	__le32 srqn;
	__u8 log_depth;
	__u8 rsvd0;
	__le16 ring_page;
	__le32 rsvd[8];
};

/* QUERY_SRQ: result is the armed limit (0: not armed). */
struct vrnic_aq_query_srq {
	struct vrnic_aq_hdr hdr;
	__le32 srqn;
	__le32 rsvd[13];
};

/* DESTROY_SRQ: BUSY while a QP uses it. */
struct vrnic_aq_destroy_srq {
	struct vrnic_aq_hdr hdr;
	__le32 srqn;
	__le32 rsvd[13];
};

/* QUERY_STATS: writes struct vrnic_stats to resp. */
struct vrnic_aq_query_stats {
	struct vrnic_aq_hdr hdr;
	struct vrnic_aq_resp_buf resp;
	__le32 rsvd[10];
};

/*
 * ATTACH_MCAST, DETACH_MCAST: add the UD QP qpn to the multicast group
 * gid, or take it out.  Attaching a member again is a no-op; detaching a
 * QP that is not a member is NOT_FOUND.  DESTROY_QP detaches a QP from
 * every group.
 */
struct vrnic_aq_mcast {
	struct vrnic_aq_hdr hdr;
	__le32 qpn;
	__le32 rsvd0;
	__u8 gid[16];
	__le32 rsvd[8];
};

/*
 * Counter sets: per-QP counters.  ALLOC_COUNTER's result is a set id
 * (1 .. max_counter_sets); SET_QP_COUNTER makes QP qpn count into set id
 * (0: into none) from then on; QUERY_COUNTER writes the set as struct
 * vrnic_stats (the per-QP entries of enum vrnic_stat; the rest are 0);
 * DEALLOC_COUNTER frees a set no QP counts into (else BUSY).
 */
struct vrnic_aq_counter {
	struct vrnic_aq_hdr hdr;
	__le32 id;
	__le32 qpn;
	struct vrnic_aq_resp_buf resp;	/* QUERY_COUNTER */
	__le32 rsvd[8];
};

#define VRNIC_AQ_CMD_SIZE	64

union vrnic_aq_cmd {
	struct vrnic_aq_hdr hdr;
	struct vrnic_aq_nop nop;
	struct vrnic_aq_query_device query_device;
	struct vrnic_aq_query_port query_port;
	struct vrnic_aq_modify_port modify_port;
	struct vrnic_aq_set_gid set_gid;
	struct vrnic_aq_create_eq create_eq;
	struct vrnic_aq_destroy_eq destroy_eq;
	struct vrnic_aq_create_pd create_pd;
	struct vrnic_aq_destroy_pd destroy_pd;
	struct vrnic_aq_reg_mr reg_mr;
	struct vrnic_aq_dereg_mr dereg_mr;
	struct vrnic_aq_rereg_mr rereg_mr;
	struct vrnic_aq_alloc_mr alloc_mr;
	struct vrnic_aq_alloc_mw alloc_mw;
	struct vrnic_aq_create_cq create_cq;
	struct vrnic_aq_destroy_cq destroy_cq;
	struct vrnic_aq_resize_cq resize_cq;
	struct vrnic_aq_modify_cq modify_cq;
	struct vrnic_aq_create_qp create_qp;
	struct vrnic_aq_modify_qp modify_qp;
	struct vrnic_aq_query_qp query_qp;
	struct vrnic_aq_destroy_qp destroy_qp;
	struct vrnic_aq_create_srq create_srq;
	struct vrnic_aq_modify_srq modify_srq;
	struct vrnic_aq_query_srq query_srq;
	struct vrnic_aq_destroy_srq destroy_srq;
	struct vrnic_aq_resize_srq resize_srq;
	struct vrnic_aq_query_stats query_stats;
	struct vrnic_aq_mcast mcast;
	struct vrnic_aq_counter counter;
	__u8 raw[VRNIC_AQ_CMD_SIZE];
};

VRNIC_ASSERT_SIZE(struct vrnic_aq_nop, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_query_device, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_query_port, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_modify_port, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_set_gid, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_create_eq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_destroy_eq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_create_pd, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_destroy_pd, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_reg_mr, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_dereg_mr, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_rereg_mr, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_alloc_mr, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_alloc_mw, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_create_cq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_modify_cq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_destroy_cq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_resize_cq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_create_qp, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_modify_qp, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_query_qp, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_destroy_qp, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_create_srq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_modify_srq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_query_srq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_destroy_srq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_resize_srq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_query_stats, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_mcast, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_counter, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(union vrnic_aq_cmd, VRNIC_AQ_CMD_SIZE);

/* Admin completion.  The last word holds cookie, status and owner bit. */
#define VRNIC_AQ_CQE_COOKIE_MASK	VRNIC_GENMASK(15, 0)
#define VRNIC_AQ_CQE_STATUS_MASK	VRNIC_GENMASK(23, 16)
#define VRNIC_AQ_CQE_OWNER_MASK		VRNIC_BIT(31)
struct vrnic_aq_cqe {
	__le64 result;		/* opcode specific */
	__le32 result2;		/* opcode specific */
	__le32 info;		/* VRNIC_AQ_CQE_*_MASK */
};

VRNIC_ASSERT_SIZE(struct vrnic_aq_cqe, 16);

/* ------------------------------------------------------------------------
 * Data returned by QUERY_DEVICE and QUERY_PORT.
 */
#define VRNIC_DEV_CAP_RC		VRNIC_BIT(0)
#define VRNIC_DEV_CAP_UC		VRNIC_BIT(1)
#define VRNIC_DEV_CAP_UD		VRNIC_BIT(2)
#define VRNIC_DEV_CAP_SRQ		VRNIC_BIT(3)
#define VRNIC_DEV_CAP_ATOMIC		VRNIC_BIT(4)
/* RESIZE_SRQ: an SRQ moves to a ring of another depth */
#define VRNIC_DEV_CAP_SRQ_RESIZE	VRNIC_BIT(5)
#define VRNIC_DEV_CAP_RC_RNR_NAK_GEN	VRNIC_BIT(6)
/* ALLOC_MR, REG_MR and LOCAL_INV WQEs, SEND_WITH_INV */
#define VRNIC_DEV_CAP_MEM_MGT_EXT	VRNIC_BIT(7)
/* Memory windows of types 1 and 2: ALLOC_MW, DEALLOC_MW, BIND_MW WQEs */
#define VRNIC_DEV_CAP_MW		VRNIC_BIT(8)
/* REREG_MR: a registered region's translation, PD and rights, in place */
#define VRNIC_DEV_CAP_REREG_MR		VRNIC_BIT(9)
/* CREATE_QP's F_BLOCK_SELF_MCAST_LB */
#define VRNIC_DEV_CAP_BLOCK_MCAST_LB	VRNIC_BIT(10)
/* MODIFY_CQ: completion event moderation by count and period */
#define VRNIC_DEV_CAP_CQ_MODERATION	VRNIC_BIT(11)
/* ATOMIC_WRITE WQEs (RC) */
#define VRNIC_DEV_CAP_ATOMIC_WRITE	VRNIC_BIT(12)
/* FLUSH WQEs (RC) of placement type global visibility */
#define VRNIC_DEV_CAP_FLUSH_GLOBAL	VRNIC_BIT(13)
/* ... and of persistence: guest RAM is a file on a persistent file system */
#define VRNIC_DEV_CAP_FLUSH_PERSISTENT	VRNIC_BIT(14)
/* GIDs of type VRNIC_GID_TYPE_ROCE_V1: RoCEv1 frames, sent and received */
#define VRNIC_DEV_CAP_ROCE_V1		VRNIC_BIT(15)
/* MODIFY_QP's VRNIC_QP_ATTR_RATE_LIMIT: per-QP packet pacing */
#define VRNIC_DEV_CAP_RATE_LIMIT	VRNIC_BIT(16)
/* Device memory in BAR2 (dm_offset, dm_size) and REG_MR's F_DM */
#define VRNIC_DEV_CAP_DM		VRNIC_BIT(17)

struct vrnic_device_attr {
	__le64 fw_version;	/* 16.16.32: major.minor.build */
	__le64 node_guid;	/* the GUID as a 64-bit number */
	__le64 sys_image_guid;	/* the GUID as a 64-bit number */
	__le64 max_mr_size;
	__le64 page_size_cap;
	__le32 vendor_id;
	__le32 vendor_part_id;
	__le32 hw_version;
	__le32 dev_caps;	/* VRNIC_DEV_CAP_* */
	__le32 max_qp;
	__le32 max_qp_wr;
	__le32 max_send_sge;
	__le32 max_recv_sge;
	__le32 max_sge_rd;
	__le32 max_cq;
	__le32 max_cqe;
	__le32 max_mr;
	__le32 max_pd;
	__le32 max_qp_rd_atom;
	__le32 max_qp_init_rd_atom;
	__le32 max_srq;
	__le32 max_srq_wr;
	__le32 max_srq_sge;
	__le32 max_ah;
	__le32 max_inline_data;
	__le32 max_mcast_grp;
	__le32 max_mcast_qp_attach;
	__le32 max_pkeys;
	__le32 max_eq;		/* event queues including the AEQ */
	__le32 max_fast_reg_page_list_len;
	__le32 local_ca_ack_delay;
	__le32 num_ports;
	__u8 mac[6];		/* permanent MAC of port 1 */
	__u8 rsvd0[2];
	__le32 max_counter_sets;	/* per-QP counter sets (ALLOC_COUNTER) */
	__le32 max_mw;		/* memory windows (they share the MR keys) */
	/* The rates MODIFY_QP's rate_limit takes, in kbit/s, besides 0 */
	__le32 rate_limit_min;
	__le32 rate_limit_max;
	/*
	 * Device memory (VRNIC_DEV_CAP_DM): dm_size bytes at BAR2 offset
	 * dm_offset, both multiples of 4 KiB; 0 and 0 without.
	 */
	__le32 dm_offset;
	__le32 dm_size;
	__le32 rsvd[19];
};

VRNIC_ASSERT_SIZE(struct vrnic_device_attr, 256);

/* Port states use the IB encoding so that they pass through unchanged. */
enum vrnic_port_state {
	VRNIC_PORT_DOWN = 1,
	VRNIC_PORT_INIT = 2,
	VRNIC_PORT_ARMED = 3,
	VRNIC_PORT_ACTIVE = 4,
};

enum vrnic_port_phys_state {
	VRNIC_PORT_PHYS_POLLING = 2,	/* no link partner */
	VRNIC_PORT_PHYS_DISABLED = 3,	/* administratively down */
	VRNIC_PORT_PHYS_LINK_UP = 5,
};

/* MTUs use the IB enumeration: 1 = 256 bytes ... 5 = 4096 bytes. */
struct vrnic_port_attr {
	__u8 state;		/* enum vrnic_port_state */
	__u8 phys_state;	/* enum vrnic_port_phys_state */
	__u8 active_mtu;
	__u8 max_mtu;
	__u8 active_speed;	/* IB speed encoding */
	__u8 active_width;	/* IB width encoding */
	__le16 gid_tbl_len;
	__le16 pkey_tbl_len;
	__u8 mac[6];		/* MAC the port sends from */
	__le32 max_msg_sz;
	__le32 netdev_mtu;	/* Ethernet MTU in bytes */
	__le32 link_changes;	/* link state transitions since reset */
	__le32 rsvd[9];
};

VRNIC_ASSERT_SIZE(struct vrnic_port_attr, 64);

/* ------------------------------------------------------------------------
 * Event queues.  EQ 0 is the async EQ (AEQ), configured in the register
 * page and signalled on MSI-X vector 0 together with the admin CQ.
 * Completion EQs are created with CREATE_EQ and signal their own vector.
 */
#define VRNIC_EQE_TYPE_MASK		VRNIC_GENMASK(7, 0)
#define VRNIC_EQE_OWNER_MASK		VRNIC_BIT(31)

enum vrnic_eqe_type {
	VRNIC_EQE_TYPE_NOP = 0,		/* data[0]: NOP cookie */
	VRNIC_EQE_TYPE_COMPLETION = 1,	/* data[0]: CQ number */
	VRNIC_EQE_TYPE_PORT_CHANGE = 2,	/* data[0]: port, data[1]: state,
					 * data[2]: phys_state
					 */
	VRNIC_EQE_TYPE_EQ_OVERRUN = 3,	/* data[0]: EQ number */
	VRNIC_EQE_TYPE_CQ_ERROR = 4,	/* data[0]: CQ number */
	VRNIC_EQE_TYPE_QP_FATAL = 5,	/* data[0]: QP number */
	VRNIC_EQE_TYPE_QP_REQ_ERR = 6,	/* data[0]: QP number */
	VRNIC_EQE_TYPE_QP_ACCESS_ERR = 7, /* data[0]: QP number */
	VRNIC_EQE_TYPE_QP_COMM_EST = 8,	/* data[0]: QP number */
	VRNIC_EQE_TYPE_QP_SQ_DRAINED = 9, /* data[0]: QP number */
	VRNIC_EQE_TYPE_QP_LAST_WQE = 10, /* data[0]: QP number */
	VRNIC_EQE_TYPE_SRQ_LIMIT = 11,	/* data[0]: SRQ number */
};

struct vrnic_eqe {
	__le32 data[3];
	__le32 info;		/* VRNIC_EQE_*_MASK */
};

VRNIC_ASSERT_SIZE(struct vrnic_eqe, 16);

/*
 * Doorbell record of a completion EQ, in guest memory.  The driver writes
 * @ci after consuming entries and increments @arm_sn to ask for the next
 * interrupt; the device raises the EQ's vector once per arm_sn value, as
 * soon as the EQ holds an entry the driver has not consumed.
 */
struct vrnic_eq_dbrec {
	__le32 ci;
	__le32 arm_sn;
};

VRNIC_ASSERT_SIZE(struct vrnic_eq_dbrec, 8);

/* ------------------------------------------------------------------------
 * Data path.  Send and receive work queues are rings the driver (or the
 * user library) produces into and the device consumes; completion queues
 * are rings the device produces into.  Their doorbell records sit in page
 * 0 of each queue buffer.
 */
/*
 * Producer indices are written by the driver; consumer indices by the
 * device.  sq_ci advances when a send WQE completes (signaled or not), so
 * the driver never has more than the ring's depth outstanding; rq_ci and
 * the SRQ ci advance when the device takes a receive WQE into its own
 * state and no longer needs the ring slot.
 */
struct vrnic_qp_dbrec {
	__le32 sq_pi;		/* send ring producer index */
	__le32 rsvd0[7];
	__le32 sq_ci;		/* device: send WQEs completed */
	__le32 rsvd1[7];
	__le32 rq_pi;		/* receive ring producer index */
	__le32 rsvd2[7];
	__le32 rq_ci;		/* device: receive WQEs taken */
	__le32 rsvd3[7];
};

VRNIC_ASSERT_SIZE(struct vrnic_qp_dbrec, 128);

struct vrnic_srq_dbrec {
	__le32 pi;
	__le32 rsvd0[7];
	__le32 ci;		/* device: receive WQEs taken */
	__le32 rsvd1[7];
};

VRNIC_ASSERT_SIZE(struct vrnic_srq_dbrec, 64);

/*
 * A CQ is armed by incrementing arm_sn; the device then posts one
 * COMPLETION event for the next completion (with ARM_SOLICITED only for a
 * solicited or unsuccessful one).
 */
#define VRNIC_CQ_ARM_SOLICITED		VRNIC_BIT(0)
struct vrnic_cq_dbrec {
	__le32 ci;		/* consumer index */
	__le32 arm_sn;
	__le32 arm_flags;	/* VRNIC_CQ_ARM_* */
	__le32 rsvd;
};

VRNIC_ASSERT_SIZE(struct vrnic_cq_dbrec, 16);

/* Work request opcodes use the libibverbs encoding. */
enum vrnic_wqe_opcode {
	VRNIC_WQE_RDMA_WRITE = 0,
	VRNIC_WQE_RDMA_WRITE_WITH_IMM = 1,
	VRNIC_WQE_SEND = 2,
	VRNIC_WQE_SEND_WITH_IMM = 3,
	VRNIC_WQE_RDMA_READ = 4,
	VRNIC_WQE_ATOMIC_CMP_AND_SWP = 5,
	VRNIC_WQE_ATOMIC_FETCH_AND_ADD = 6,
	VRNIC_WQE_LOCAL_INV = 7,	/* invalidate the key in imm_data */
	VRNIC_WQE_BIND_MW = 8,		/* struct vrnic_sqe_bind_mw */
	VRNIC_WQE_SEND_WITH_INV = 9,	/* RC: the responder invalidates imm_data */
	VRNIC_WQE_FLUSH = 14,		/* RC: makes [remote_addr, + length) of
					 * rkey visible or persistent; imm_data
					 * holds VRNIC_FLUSH_*; no SGEs, no data
					 */
	VRNIC_WQE_ATOMIC_WRITE = 15,	/* RC: compare_add's 8 bytes to remote_addr
					 * in one access; no SGEs, no data
					 */
	VRNIC_WQE_REG_MR = 0x20,	/* struct vrnic_sqe_reg_mr (the kernel's
					 * IB_WR_REG_MR)
					 */
};

#define VRNIC_WQE_CTRL_OPCODE_MASK	VRNIC_GENMASK(7, 0)
#define VRNIC_WQE_CTRL_SIGNALED		VRNIC_BIT(8)
#define VRNIC_WQE_CTRL_SOLICITED	VRNIC_BIT(9)
#define VRNIC_WQE_CTRL_FENCE		VRNIC_BIT(10)
#define VRNIC_WQE_CTRL_INLINE		VRNIC_BIT(11)
#define VRNIC_WQE_CTRL_NUM_SGE_MASK	VRNIC_GENMASK(23, 16)

/*
 * FLUSH: imm_data holds the placement type (bits 3:0, at least one of
 * GLOBAL and PERSISTENT) and the selectivity level (bits 5:4: the range
 * of remote_addr and length, or the whole MR or window of rkey), as the
 * FLUSH extended transport header carries them.
 */
#define VRNIC_FLUSH_GLOBAL		VRNIC_BIT(0)
#define VRNIC_FLUSH_PERSISTENT		VRNIC_BIT(1)
#define VRNIC_FLUSH_TYPE_MASK		VRNIC_GENMASK(3, 0)
#define VRNIC_FLUSH_LEVEL_MASK		VRNIC_GENMASK(5, 4)
#define VRNIC_FLUSH_LEVEL_RANGE		0
#define VRNIC_FLUSH_LEVEL_MR		1

/*
 * Send WQE: this header; for UD a struct vrnic_av at 0x40; then, at 0x40
 * (0x60 for UD), num_sge struct vrnic_sge or, with CTRL_INLINE, length
 * bytes of inline data.  The whole WQE fits in the QP's send stride.
 */
struct vrnic_sqe {
	__le64 wr_id;
	__le32 ctrl;		/* VRNIC_WQE_CTRL_* */
	__le32 imm_data;	/* immediate data, as a number; for LOCAL_INV
				 * and SEND_WITH_INV the key to invalidate;
				 * for FLUSH VRNIC_FLUSH_*
				 */
	__le64 remote_addr;	/* RDMA and atomics */
	__le32 rkey;		/* RDMA and atomics */
	__le32 length;		/* with CTRL_INLINE: bytes of inline data;
				 * FLUSH: the range's length
				 */
	__le64 compare_add;	/* atomics; ATOMIC_WRITE: the 8 bytes to
				 * write, in memory order
				 */
	__le64 swap;		/* compare and swap */
	__le32 remote_qpn;	/* UD */
	__le32 remote_qkey;	/* UD */
	__le32 rsvd[2];
};

VRNIC_ASSERT_SIZE(struct vrnic_sqe, 64);

#define VRNIC_SQE_DATA_OFFSET		64

/*
 * REG_MR (fast registration) of an MR made by ALLOC_MR: when the device
 * reaches the WQE, in send queue order, it copies npages page addresses
 * from the physically contiguous list at pbl_addr (8-byte aligned, each
 * entry 2^page_shift aligned) and makes key valid for [iova, iova + length)
 * with access.  key's bits 31:8 name the MR; bits 7:0 are the consumer's and
 * become the key's variant.  Carries no SGEs and no data.
 */
struct vrnic_sqe_reg_mr {
	__le64 wr_id;
	__le32 ctrl;		/* VRNIC_WQE_CTRL_*, opcode REG_MR */
	__le32 key;
	__le64 iova;
	__le64 pbl_addr;
	__le64 length;
	__le32 access;		/* VRNIC_ACCESS_* */
	__le32 npages;
	__le32 page_shift;	/* VRNIC_MR_MIN_PAGE_SHIFT .. MAX */
	__le32 rsvd[3];
};

VRNIC_ASSERT_SIZE(struct vrnic_sqe_reg_mr, 64);

/*
 * BIND_MW: bind the memory window that rkey's bits 31:8 name to [addr, addr
 * + length) of the MR of mr_lkey, with remote access (VRNIC_ACCESS_REMOTE_*;
 * a type 2 window may be VRNIC_ACCESS_ZERO_BASED: remote addresses are then
 * offsets into it), when the device reaches the WQE in send queue order.  rkey's bits 7:0 are
 * the consumer's and become the window's variant.  Length 0 unbinds (type
 * 1 only).  Carries no SGEs and no data.
 */
struct vrnic_sqe_bind_mw {
	__le64 wr_id;
	__le32 ctrl;		/* VRNIC_WQE_CTRL_*, opcode BIND_MW */
	__le32 rkey;		/* the window's new key */
	__le64 addr;
	__le64 length;
	__le32 mr_lkey;
	__le32 access;		/* VRNIC_ACCESS_REMOTE_* */
	__le32 rsvd[6];
};

VRNIC_ASSERT_SIZE(struct vrnic_sqe_bind_mw, 64);
#define VRNIC_SQE_UD_DATA_OFFSET	96

struct vrnic_sge {
	__le64 addr;
	__le32 length;
	__le32 lkey;
};

VRNIC_ASSERT_SIZE(struct vrnic_sge, 16);

/* No WQE carries more SGEs than this, whatever its stride. */
#define VRNIC_MAX_SGE			16

/* Receive WQE: this header and num_sge struct vrnic_sge. */
struct vrnic_rqe {
	__le64 wr_id;
	__le32 num_sge;
	__le32 rsvd;
};

VRNIC_ASSERT_SIZE(struct vrnic_rqe, 16);

/* Completion opcodes and statuses use the libibverbs encodings. */
enum vrnic_cqe_opcode {
	VRNIC_CQE_SEND = 0,
	VRNIC_CQE_RDMA_WRITE = 1,
	VRNIC_CQE_RDMA_READ = 2,
	VRNIC_CQE_COMP_SWAP = 3,
	VRNIC_CQE_FETCH_ADD = 4,
	VRNIC_CQE_BIND_MW = 5,
	VRNIC_CQE_LOCAL_INV = 6,
	VRNIC_CQE_REG_MR = 8,		/* kernel QPs: IB_WC_REG_MR, which has no
					 * uverbs value
					 */
	VRNIC_CQE_ATOMIC_WRITE = 9,
	VRNIC_CQE_FLUSH = 10,		/* libibverbs' 8, which REG_MR has here */
	VRNIC_CQE_RECV = 128,
	VRNIC_CQE_RECV_RDMA_WITH_IMM = 129,
};

enum vrnic_cqe_status {
	VRNIC_CQE_SUCCESS = 0,
	VRNIC_CQE_LOC_LEN_ERR = 1,
	VRNIC_CQE_LOC_QP_OP_ERR = 2,
	VRNIC_CQE_LOC_PROT_ERR = 4,
	VRNIC_CQE_WR_FLUSH_ERR = 5,
	VRNIC_CQE_MW_BIND_ERR = 6,
	VRNIC_CQE_BAD_RESP_ERR = 7,
	VRNIC_CQE_LOC_ACCESS_ERR = 8,
	VRNIC_CQE_REM_INV_REQ_ERR = 9,
	VRNIC_CQE_REM_ACCESS_ERR = 10,
	VRNIC_CQE_REM_OP_ERR = 11,
	VRNIC_CQE_RETRY_EXC_ERR = 12,
	VRNIC_CQE_RNR_RETRY_EXC_ERR = 13,
	VRNIC_CQE_FATAL_ERR = 19,
	VRNIC_CQE_GENERAL_ERR = 21,
};

/*
 * Whether a CQE's opcode and status are ones this interface defines.  A
 * consumer reports a completion with anything else as GENERAL_ERR: it is a
 * device bug, and guessing (a RECV, say) would hide it.
 */
static inline int vrnic_cqe_opcode_valid(__u32 opcode)
{
	switch (opcode) {
	case VRNIC_CQE_SEND:
	case VRNIC_CQE_RDMA_WRITE:
	case VRNIC_CQE_RDMA_READ:
	case VRNIC_CQE_COMP_SWAP:
	case VRNIC_CQE_FETCH_ADD:
	case VRNIC_CQE_BIND_MW:
	case VRNIC_CQE_LOCAL_INV:
	case VRNIC_CQE_REG_MR:
	case VRNIC_CQE_ATOMIC_WRITE:
	case VRNIC_CQE_FLUSH:
	case VRNIC_CQE_RECV:
	case VRNIC_CQE_RECV_RDMA_WITH_IMM:
		return 1;
	default:
		return 0;
	}
}

static inline int vrnic_cqe_status_valid(__u32 status)
{
	switch (status) {
	case VRNIC_CQE_SUCCESS:
	case VRNIC_CQE_LOC_LEN_ERR:
	case VRNIC_CQE_LOC_QP_OP_ERR:
	case VRNIC_CQE_LOC_PROT_ERR:
	case VRNIC_CQE_WR_FLUSH_ERR:
	case VRNIC_CQE_MW_BIND_ERR:
	case VRNIC_CQE_BAD_RESP_ERR:
	case VRNIC_CQE_LOC_ACCESS_ERR:
	case VRNIC_CQE_REM_INV_REQ_ERR:
	case VRNIC_CQE_REM_ACCESS_ERR:
	case VRNIC_CQE_REM_OP_ERR:
	case VRNIC_CQE_RETRY_EXC_ERR:
	case VRNIC_CQE_RNR_RETRY_EXC_ERR:
	case VRNIC_CQE_FATAL_ERR:
	case VRNIC_CQE_GENERAL_ERR:
		return 1;
	default:
		return 0;
	}
}

/*
 * Vendor error codes (CQE bits 30:24, ibv_wc.vendor_err): why the device
 * completed a work request in error.  0 for success and for a flushed WR.
 */
enum vrnic_vendor_err {
	VRNIC_VERR_NONE = 0,
	/* The send WQE itself: LOC_QP_OP_ERR or LOC_LEN_ERR */
	VRNIC_VERR_WQE_OPCODE = 1,	/* no such opcode */
	VRNIC_VERR_WQE_LAYOUT = 2,	/* SGEs or inline data beyond the stride */
	VRNIC_VERR_WQE_INLINE = 3,	/* inline data beyond the QP's max_inline */
	VRNIC_VERR_WQE_AV = 4,		/* UD address vector: no such GID, or
					 * source and destination of two families
					 */
	VRNIC_VERR_WQE_QP_TYPE = 5,	/* opcode not allowed on the QP's type */
	VRNIC_VERR_WQE_LENGTH = 6,	/* longer than 2^31, or than the UD MTU */
	VRNIC_VERR_WQE_ATOMIC_LENGTH = 7, /* atomic target under 8 bytes */
	/* Local memory: LOC_PROT_ERR */
	VRNIC_VERR_LKEY = 8,		/* no such lkey in the PD, or gone */
	VRNIC_VERR_LOCAL_ACCESS = 9,	/* the MR does not allow local write */
	VRNIC_VERR_LOCAL_BOUNDS = 10,	/* an SGE beyond its MR */
	/* Receives */
	VRNIC_VERR_RECV_LENGTH = 11,	/* LOC_LEN_ERR: the message is longer */
	VRNIC_VERR_RECV_WQE = 12,	/* LOC_QP_OP_ERR: malformed receive WQE */
	VRNIC_VERR_RECV_RKEY = 13,	/* REM_ACCESS_ERR: a WRITE with immediate
					 * through an rkey this QP refused
					 */
	/* What the responder said: REM_*_ERR */
	VRNIC_VERR_NAK_ACCESS = 14,	/* NAK: remote access error */
	VRNIC_VERR_NAK_INVALID = 15,	/* NAK: invalid request */
	VRNIC_VERR_NAK_OPERATIONAL = 16, /* NAK: remote operational error */
	/* The transport */
	VRNIC_VERR_RETRY_EXCEEDED = 17,	/* RETRY_EXC_ERR: no ACK in timeout x
					 * retry_cnt, or too many sequence NAKs
					 */
	VRNIC_VERR_RNR_EXCEEDED = 18,	/* RNR_RETRY_EXC_ERR */
	VRNIC_VERR_BAD_RESPONSE = 19,	/* BAD_RESP_ERR: a response that does
					 * not fit the request
					 */
	/* Memory management WQEs: LOC_QP_OP_ERR */
	VRNIC_VERR_MR_KEY = 20,		/* REG_MR or LOCAL_INV: no such MR in
					 * the PD, not a fast-register MR, or
					 * (LOCAL_INV) not its current key
					 */
	VRNIC_VERR_MR_STATE = 21,	/* REG_MR on a valid MR */
	VRNIC_VERR_MR_PAGES = 22,	/* REG_MR: more pages than ALLOC_MR's
					 * max_pages, or a bad page size,
					 * length or access
					 */
	VRNIC_VERR_MR_PBL = 23,		/* REG_MR: page list not in guest RAM */
	/* SEND_WITH_INV at the responder: REM_INV_REQ_ERR */
	VRNIC_VERR_INV_RKEY = 24,	/* the key to invalidate is not a valid
					 * fast-register MR or type 2 window of
					 * the QP's PD
					 */
	/* BIND_MW: MW_BIND_ERR */
	VRNIC_VERR_MW_KEY = 25,		/* no such window in the QP's PD */
	VRNIC_VERR_MW_MR = 26,		/* the MR is not valid, of another PD,
					 * or has no MW_BIND access
					 */
	VRNIC_VERR_MW_BOUNDS = 27,	/* the range is not within the MR */
	VRNIC_VERR_MW_ACCESS = 28,	/* rights the window cannot have:
					 * remote write or atomic without the
					 * MR's local write, or unknown bits
					 */
	VRNIC_VERR_MW_STATE = 29,	/* type 2: bound already, or length 0 */
	/* The send WQE: LOC_QP_OP_ERR */
	VRNIC_VERR_WQE_FLUSH = 30,	/* FLUSH: no placement type, or an
					 * unknown type or level
					 */
};

#define VRNIC_CQE_OPCODE_MASK		VRNIC_GENMASK(7, 0)
#define VRNIC_CQE_STATUS_MASK		VRNIC_GENMASK(15, 8)
#define VRNIC_CQE_F_IMM			VRNIC_BIT(16)	/* imm_data valid */
#define VRNIC_CQE_F_GRH			VRNIC_BIT(17)	/* UD: GRH in buffer */
#define VRNIC_CQE_F_IPV4		VRNIC_BIT(18)	/* UD: it is IPv4 */
#define VRNIC_CQE_F_INV			VRNIC_BIT(19)	/* receive of a
							 * SEND_WITH_INV:
							 * imm_data is the
							 * key invalidated
							 */
#define VRNIC_CQE_F_ROCE_V1		VRNIC_BIT(20)	/* UD: it came as
							 * RoCEv1, its GRH
							 * as received
							 */
#define VRNIC_CQE_VENDOR_ERR_MASK	VRNIC_GENMASK(30, 24)
#define VRNIC_CQE_OWNER_MASK		VRNIC_BIT(31)

struct vrnic_cqe {
	__le64 wr_id;
	__le32 byte_len;
	__le32 imm_data;	/* with F_IMM, as a number; with F_INV the key */
	__le32 qpn;		/* the local QP */
	__le32 src_qp;		/* UD receive: the sender's QP */
	__le32 wqe_idx;		/* ring index of the completed WQE */
	__le32 info;		/* VRNIC_CQE_*_MASK and flags */
};

VRNIC_ASSERT_SIZE(struct vrnic_cqe, 32);
/* CQ rings are arrays of struct vrnic_cqe: entry i at i << VRNIC_CQE_LOG_SIZE. */
#define VRNIC_CQE_LOG_SIZE		5
VRNIC_ASSERT_SIZE(struct vrnic_cqe, 1 << VRNIC_CQE_LOG_SIZE);

/* Bytes of GRH a UD receive buffer starts with. */
#define VRNIC_GRH_SIZE			40

/*
 * Device counters, for QUERY_STATS.  A counter set (QUERY_COUNTER) has the
 * per-QP ones: TX and RX packets and bytes, retransmits, NAKs, duplicates
 * and WQEs, counted for the QPs that count into it.
 */
enum vrnic_stat {
	VRNIC_STAT_TX_PACKETS,
	VRNIC_STAT_TX_BYTES,
	VRNIC_STAT_RX_PACKETS,
	VRNIC_STAT_RX_BYTES,
	VRNIC_STAT_RX_DROPPED,
	VRNIC_STAT_ICRC_ERRORS,
	VRNIC_STAT_RETRANSMITS,
	VRNIC_STAT_RNR_NAKS_SENT,
	VRNIC_STAT_RNR_NAKS_RCVD,
	VRNIC_STAT_SEQ_NAKS_SENT,
	VRNIC_STAT_SEQ_NAKS_RCVD,
	VRNIC_STAT_DUPLICATES,
	VRNIC_STAT_DOORBELLS,		/* ENGINE doorbells received */
	VRNIC_STAT_ENGINE_SLEEPS,
	VRNIC_STAT_WQES,		/* send WQEs executed */
	VRNIC_STAT_CQES,
	VRNIC_STAT_PDS,			/* objects that exist now */
	VRNIC_STAT_MRS,
	VRNIC_STAT_CQS,
	VRNIC_STAT_QPS,
	VRNIC_STAT_SRQS,
	VRNIC_STAT_MR_PAGES,
	/* Packets refused by a QP, by reason (none reaches memory): */
	VRNIC_STAT_RX_ADDR_ERRORS,	/* RC/UC: not from the QP's peer */
	VRNIC_STAT_RX_KEY_ERRORS,	/* R_Key, access or bounds violation */
	VRNIC_STAT_RX_QKEY_ERRORS,	/* UD: wrong Q_Key */
	VRNIC_STAT_RX_PKEY_ERRORS,	/* wrong P_Key */
	VRNIC_STAT_RX_INVALID,		/* out of order in the message, bad length */
	VRNIC_STAT_RX_NO_BUFFER,	/* UC/UD: no receive WQE */
	VRNIC_STAT_TX_ACKS_DROPPED,	/* responses dropped: none, kept at 0 */
	VRNIC_STAT_MAX
};

struct vrnic_stats {
	__le64 counter[32];	/* indexed by enum vrnic_stat */
};

static_assert(VRNIC_STAT_MAX <= 32, "vrnic_stats has room for every counter");

VRNIC_ASSERT_SIZE(struct vrnic_stats, 256);

#endif /* VRNIC_HW_H */
