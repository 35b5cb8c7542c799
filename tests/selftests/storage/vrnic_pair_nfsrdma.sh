#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NFS over RDMA between the two guests (see nfsrdma_lib.sh): guest 0 is
# the server, guest 1 the client; against an rxe peer, then the other way
# round as well.  The client's 256 MiB of random files must read back with
# the sums they were written with, over one RDMA connection, and the
# server must hold the same bytes.  Neither side may log an
# RPC-over-RDMA error or a kernel warning.
# boots: pair pair-rxe
# tags: storage slow
# order: 60
# timeout: 900
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/nfsrdma_lib.sh
source "$(dirname "$0")/nfsrdma_lib.sh"
require_pair

servers=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && servers+=(1)
n=0
for s in "${servers[@]}"; do
	if [[ $VRNIC_VM == "$s" ]]; then
		n=$((n + nfsrdma_server_results + 2))
	else
		n=$((n + nfsrdma_client_results + 1))
	fi
done
ktap_plan $n

# The client hands its sums to the server through the run directory.
sums=$VRNIC_RUN_DIR/pair/nfsrdma.sums
for s in "${servers[@]}"; do
	mark=$(dmesg_mark)
	if [[ $VRNIC_VM == "$s" ]]; then
		nfsrdma_server_setup "$VRNIC_IP"
		pair_sync nfsrdma.ready 120
		pair_sync nfsrdma.done 840
		nfsrdma_server_check "$sums"
		nfsrdma_server_teardown
		nfsrdma_no_trouble "$mark" "server vm$s"
	else
		pair_sync nfsrdma.ready 120
		nfsrdma_client_run "$VRNIC_PEER_IP" "$sums.tmp"
		mv "$sums.tmp" "$sums"
		pair_sync nfsrdma.done 840
		nfsrdma_no_trouble "$mark" "client, server vm$s"
	fi
done
ktap_finish
