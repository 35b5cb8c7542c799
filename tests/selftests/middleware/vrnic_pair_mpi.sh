#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Open MPI over UCX across the guests: guest 0 runs mpirun -np 2 with one
# rank in each guest and --mca pml ucx, UCX kept to the verbs transports
# (rc_verbs, with ud_verbs for wireup); mpi_check checks everything it
# moves.  The guests run no sshd: mpirun starts its daemon in guest 1
# through vrsh.py (plm_rsh_agent), which guest 1 serves for one session.
# Guest 0 names itself by host name: Open MPI 5 (Debian 13) finds no
# slots on a local node named by an IP address other than 127.0.0.1.
# Both guests' send counters must rise.  Against rxe as well: see below.
# boots: pair pair-rxe
# tags: middleware slow
# order: 70
# timeout: 500
# shellcheck disable=SC2154,SC2034 # pair_out, pair_role (set) by pair_run
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/middleware/mpi_lib.sh
source "$(dirname "$0")/mpi_lib.sh"
require_pair
require_ucx_verbs

dir=$(cd "$(dirname "$0")" && pwd)
prog=$VRNIC_BUILD/tests/selftests/mpi_check
port=18801
if [[ $VRNIC_VM == 0 ]]; then
	ktap_plan $((${#mpi_parts[@]} + 3))
else
	ktap_plan 3
fi
mark=$(dmesg_mark)
# rxe's UD receives say sl 0 for a RoCEv2 GRH, and UCX 1.13 then drops
# them (vrnic_pair_ucx.sh): the rxe guest alone takes UCX's setting for it,
# and its orted, started by vrsh.py, passes it to its rank.
counter=send_wqes
note=
if [[ $VRNIC_ROLE == rxe ]]; then
	export UCX_UD_ETH_DGID_CHECK=n
	counter=sent_pkts
fi
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && note=" (rxe guest: UCX_UD_ETH_DGID_CHECK=n)"
wqes=$(hw_counter $counter)
net=${VRNIC_IP%.*}.0/24
mpirun_cmd="UCX_TLS=rc_verbs,ud_verbs,self timeout 300 mpirun --allow-run-as-root \
	-np 2 --host \$(hostname):1,\$VRNIC_PEER_IP:1 \
	--mca plm_rsh_agent '$dir/vrsh.py -p $port' --mca oob_tcp_if_include $net \
	--mca pml ucx --mca osc ucx --mca btl self -x UCX_TLS $prog"
pair_run mpi 1 400 "$dir/vrsh.py serve $port 1" "$mpirun_cmd"
rc=$?
out=$(<"$pair_out")
wqes=$(($(hw_counter $counter) - wqes))
if [[ $pair_role == server ]]; then
	grep -q "session from $VRNIC_PEER_IP" <<<"$out"
	ktap_check "vrsh.py ran vm0's mpirun daemon here, one session" $((rc || $?)) \
		"exit $rc" "$(tail -n 8 <<<"$out")"
else
	sed 's/^/# /' <<<"$out" | grep -E '^# rank [0-9]'
	mpi_report "mpirun -np 2 --mca pml ucx mpi_check, a rank in each guest$note" "$out" "$rc"
fi
((wqes > 500))
ktap_check "vm$VRNIC_VM's rank talked through $VRNIC_IBDEV: $wqes more $counter" $?
no_kernel_warnings "$mark" "mpi"
ktap_finish
