#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NFS over RDMA in one guest (see nfsrdma_lib.sh): nfsd and the client on
# the same vrnic0, so every RPC and every RDMA READ and WRITE loops back
# inside vrnicd.  256 MiB of random files must read back with the sums
# they were written with, over one RDMA connection, with no RPC-over-RDMA
# error and no kernel warning.
# boots: one
# tags: storage slow
# order: 60
# timeout: 600
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/nfsrdma_lib.sh
source "$(dirname "$0")/nfsrdma_lib.sh"
require_vm

ktap_plan $((nfsrdma_server_results + nfsrdma_client_results + 2))
mark=$(dmesg_mark)
nfsrdma_server_setup "$VRNIC_IP"
nfsrdma_client_run "$VRNIC_IP" /tmp/nfsrdma.sums
nfsrdma_server_check /tmp/nfsrdma.sums
nfsrdma_server_teardown
nfsrdma_no_trouble "$mark" "server and client"
ktap_finish
