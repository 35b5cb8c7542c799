#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics in one guest (see nvmeof_lib.sh): target and host on
# the same vrnic0, so every capsule and every RDMA READ and WRITE loops
# back inside vrnicd.  The host's dmesg must show no failed work
# completion and no error recovery, and the kernel may not warn.
# boots: one
# tags: storage slow stack
# order: 60
# timeout: 900
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/nvmeof_lib.sh
source "$(dirname "$0")/nvmeof_lib.sh"
require_vm

ktap_plan $((nvmeof_target_results + nvmeof_host_results + 1))
mark=$(dmesg_mark)
nvmeof_target_setup "$VRNIC_IP"
nvmeof_host_run "$VRNIC_IP" "$mark"
nvmet_stop
no_kernel_warnings "$mark" "target and host"
ktap_finish
