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
 */
enum vrnic_aq_opcode {
	VRNIC_AQ_OP_NOP = 0x00,
	VRNIC_AQ_OP_QUERY_DEVICE = 0x01,
	VRNIC_AQ_OP_QUERY_PORT = 0x02,
	VRNIC_AQ_OP_MODIFY_PORT = 0x03,
	VRNIC_AQ_OP_SET_GID = 0x04,
	VRNIC_AQ_OP_CREATE_EQ = 0x05,
	VRNIC_AQ_OP_DESTROY_EQ = 0x06,
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
 * it the entry is cleared.
 */
#define VRNIC_AQ_SET_GID_F_VALID	VRNIC_BIT(0)
enum vrnic_gid_type {
	VRNIC_GID_TYPE_ROCE_V2 = 0,
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
	__u8 raw[VRNIC_AQ_CMD_SIZE];
};

VRNIC_ASSERT_SIZE(struct vrnic_aq_nop, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_query_device, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_query_port, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_modify_port, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_set_gid, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_create_eq, VRNIC_AQ_CMD_SIZE);
VRNIC_ASSERT_SIZE(struct vrnic_aq_destroy_eq, VRNIC_AQ_CMD_SIZE);
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
#define VRNIC_DEV_CAP_SRQ_RESIZE	VRNIC_BIT(5)
#define VRNIC_DEV_CAP_RC_RNR_NAK_GEN	VRNIC_BIT(6)

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
	__le32 rsvd[25];
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

#endif /* VRNIC_HW_H */
