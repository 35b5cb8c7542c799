#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# SRP in one guest (see srp_lib.sh): ib_srpt and ib_srp on the same
# vrnic0, so every information unit and every RDMA READ and WRITE loops
# back inside vrnicd.  fio's verify must stay clean, the initiator may log
# no SRP error, and the kernel may not warn.
# boots: one
# tags: storage slow
# order: 60
# timeout: 900
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/srp_lib.sh
source "$(dirname "$0")/srp_lib.sh"
require_vm
srp_require_targetcli

ktap_plan $((srp_target_results + srp_initiator_results + 1))
mark=$(dmesg_mark)
srp_target_setup "$VRNIC_IP" "$(srp_initiator_id)"
srp_initiator_run "$VRNIC_IP" "$srp_target_guid" "$mark"
srp_target_teardown
no_kernel_warnings "$mark" "target and initiator"
ktap_finish
