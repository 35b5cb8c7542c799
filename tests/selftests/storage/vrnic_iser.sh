#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# iSER in one guest (see iser_lib.sh): the LIO target and open-iscsi on
# the same vrnic0, so every PDU and every RDMA READ and WRITE loops back
# inside vrnicd.  fio's verify must stay clean, the initiator may log no
# iSER or iSCSI error (but the one after a completed logout, which iscsid
# drops), and the kernel may not warn (but its own iscsi_ctrl flush warning
# at logout; see iser_lib.sh).
# boots: one
# tags: storage slow
# order: 60
# timeout: 900
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/iser_lib.sh
source "$(dirname "$0")/iser_lib.sh"
require_vm

ktap_plan $((iser_target_results + iser_initiator_results + 1))
mark=$(dmesg_mark)
iser_target_setup "$VRNIC_IP"
iser_initiator_run "$VRNIC_IP" "$mark"
iser_target_teardown
iser_no_kernel_warnings "$mark" "target and initiator"
ktap_finish
