#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NFS over RDMA between the two guests (see nfsrdma_lib.sh; the
# rounds are the skeleton of storage_lib.sh): guest 0 is
# the server, guest 1 the client; against an rxe peer, then the other way
# round as well.  The client's 256 MiB of random files must read back with
# the sums they were written with, over one RDMA connection, and the
# server must hold the same bytes.  Neither side may log an
# RPC-over-RDMA error or a kernel warning.
# boots: pair pair-rxe
# tags: storage slow
# order: 60
# timeout: 900
# shellcheck disable=SC2034 # the P_*_results and P_rounds storage_lib.sh reads
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/nfsrdma_lib.sh
source "$(dirname "$0")/nfsrdma_lib.sh"
require_pair
# shellcheck source=tests/selftests/storage/storage_lib.sh
source "$(dirname "$0")/storage_lib.sh"

# The client hands its sums to the server through the run directory.
sums=$VRNIC_RUN_DIR/pair/nfsrdma.sums
nfsrdma_serve_results=$nfsrdma_server_results
nfsrdma_serve() { nfsrdma_server_setup "$1"; }
nfsrdma_served_results=1
nfsrdma_served() { nfsrdma_server_check "$sums"; }
nfsrdma_unserve() { nfsrdma_server_teardown; }
nfsrdma_use_results=$nfsrdma_client_results
nfsrdma_use() {
	nfsrdma_client_run "$1" "$sums.tmp"
	mv "$sums.tmp" "$sums"
}
nfsrdma_trouble() { nfsrdma_no_trouble "$@"; }
storage_pair nfsrdma
