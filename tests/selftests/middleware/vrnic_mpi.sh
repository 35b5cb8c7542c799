#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Open MPI over UCX in one guest: mpirun -np 2 --mca pml ucx runs
# mpi_check (ping-pong 1 B to 4 MiB, a bandwidth loop, MPI_Allreduce,
# MPI_Alltoall, MPI_Put/MPI_Get), with UCX kept to vrnic0's verbs
# transports (no shared memory), so both ranks talk through the device:
# its send WQE counter must rise by what the program moved.
# boots: one
# tags: middleware slow
# order: 70
# timeout: 400
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/middleware/mpi_lib.sh
source "$(dirname "$0")/mpi_lib.sh"
require_vm
require_ucx_verbs

prog=$VRNIC_BUILD/tests/selftests/mpi_check
ktap_plan $((${#mpi_parts[@]} + 3))
mark=$(dmesg_mark)
if [[ ! -x $prog ]]; then
	ktap_not_ok "mpi_check built" "$prog is missing: scripts/setup installs libopenmpi-dev"
	ktap_finish
	exit
fi
wqes=$(hw_counter send_wqes)
out=$(UCX_NET_DEVICES=$VRNIC_IBDEV:1 UCX_TLS=rc_verbs,ud_verbs,self \
	timeout 300 mpirun --allow-run-as-root --oversubscribe -np 2 \
	--mca pml ucx --mca osc ucx --mca btl self \
	-x UCX_NET_DEVICES -x UCX_TLS "$prog" 2>&1)
rc=$?
wqes=$(($(hw_counter send_wqes) - wqes))
mpi_report "mpirun -np 2 --mca pml ucx mpi_check" "$out" "$rc"
# 4 MiB and 128 x 1 MiB alone are thousands of MTU-sized pieces; small
# messages go as one WQE each.
((wqes > 500))
ktap_check "the ranks talked through $VRNIC_IBDEV: $wqes send WQEs" $?
no_kernel_warnings "$mark" "mpi"
ktap_finish
