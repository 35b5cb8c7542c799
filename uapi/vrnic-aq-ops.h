/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB */
/*
 * vrnic admin queue opcodes: the one list of them.
 *
 * Each entry is VRNIC_AQ_OP(NAME, name, value): the opcode's upper-case
 * name (VRNIC_AQ_OP_<NAME> in enum vrnic_aq_opcode), its lower-case name
 * (the device model's handler cmd_<name>) and its value in the command
 * header.  Opcodes are dense: each value is the entry's position, which
 * the device model checks at compile time.
 *
 * This file has no include guard on purpose: it is included once per use,
 * with VRNIC_AQ_OP defined to what that use needs (see vrnic-hw.h).
 */
VRNIC_AQ_OP(NOP, nop, 0x00)
VRNIC_AQ_OP(QUERY_DEVICE, query_device, 0x01)
VRNIC_AQ_OP(QUERY_PORT, query_port, 0x02)
VRNIC_AQ_OP(MODIFY_PORT, modify_port, 0x03)
VRNIC_AQ_OP(SET_GID, set_gid, 0x04)
VRNIC_AQ_OP(CREATE_EQ, create_eq, 0x05)
VRNIC_AQ_OP(DESTROY_EQ, destroy_eq, 0x06)
VRNIC_AQ_OP(CREATE_PD, create_pd, 0x07)
VRNIC_AQ_OP(DESTROY_PD, destroy_pd, 0x08)
VRNIC_AQ_OP(REG_MR, reg_mr, 0x09)
VRNIC_AQ_OP(DEREG_MR, dereg_mr, 0x0a)
VRNIC_AQ_OP(CREATE_CQ, create_cq, 0x0b)
VRNIC_AQ_OP(DESTROY_CQ, destroy_cq, 0x0c)
VRNIC_AQ_OP(RESIZE_CQ, resize_cq, 0x0d)
VRNIC_AQ_OP(CREATE_QP, create_qp, 0x0e)
VRNIC_AQ_OP(MODIFY_QP, modify_qp, 0x0f)
VRNIC_AQ_OP(QUERY_QP, query_qp, 0x10)
VRNIC_AQ_OP(DESTROY_QP, destroy_qp, 0x11)
VRNIC_AQ_OP(CREATE_SRQ, create_srq, 0x12)
VRNIC_AQ_OP(MODIFY_SRQ, modify_srq, 0x13)
VRNIC_AQ_OP(QUERY_SRQ, query_srq, 0x14)
VRNIC_AQ_OP(DESTROY_SRQ, destroy_srq, 0x15)
VRNIC_AQ_OP(QUERY_STATS, query_stats, 0x16)
VRNIC_AQ_OP(ATTACH_MCAST, attach_mcast, 0x17)
VRNIC_AQ_OP(DETACH_MCAST, detach_mcast, 0x18)
VRNIC_AQ_OP(ALLOC_COUNTER, alloc_counter, 0x19)
VRNIC_AQ_OP(DEALLOC_COUNTER, dealloc_counter, 0x1a)
VRNIC_AQ_OP(SET_QP_COUNTER, set_qp_counter, 0x1b)
VRNIC_AQ_OP(QUERY_COUNTER, query_counter, 0x1c)
VRNIC_AQ_OP(ALLOC_MR, alloc_mr, 0x1d)
VRNIC_AQ_OP(ALLOC_MW, alloc_mw, 0x1e)
VRNIC_AQ_OP(DEALLOC_MW, dealloc_mw, 0x1f)
VRNIC_AQ_OP(REREG_MR, rereg_mr, 0x20)
VRNIC_AQ_OP(MODIFY_CQ, modify_cq, 0x21)
VRNIC_AQ_OP(RESIZE_SRQ, resize_srq, 0x22)
