#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics between the two guests (see nvmeof_lib.sh; the
# rounds are the skeleton of storage_lib.sh): guest 0
# is the target, guest 1 the host, first with nvmet-rdma's default
# receive queues and then with use_srq=1; against an rxe peer, then the
# other way round as well (the rxe target with its default queues only).
# In the first round of each, the host also loses its link for 5 s under
# fio (see nvmeof_link_pull).  The host's dmesg must show no failed work
# completion and no error recovery, and neither kernel may warn.
# boots: pair pair-rxe
# tags: storage slow
# order: 60
# timeout: 900
# shellcheck disable=SC2034 # the P_*_results and P_rounds storage_lib.sh reads
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/nvmeof_lib.sh
source "$(dirname "$0")/nvmeof_lib.sh"
require_pair
# shellcheck source=tests/selftests/storage/storage_lib.sh
source "$(dirname "$0")/storage_lib.sh"

# target guest:nvmet-rdma parameters.  use_srq=1 is the target's: on an
# rxe target it would try rxe's SRQs, so the rxe target serves without.
nvmeof_rounds=(0: 0:use_srq=1)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && nvmeof_rounds+=(1:)

nvmeof_serve_results=$nvmeof_target_results
nvmeof_serve() { nvmeof_target_setup "$1" ${2:+"$2"}; }
nvmeof_unserve() { nvmet_stop; }
# The target checks that use_srq=1 got its SRQs while the host is
# connected: nvmet-rdma silently falls back to receive queues without.
nvmeof_connected_hook() { pair_sync nvmeof.connected 120; }
nvmeof_serving_results=1
nvmeof_serving() {
	local srqs n
	pair_sync nvmeof.connected 300
	srqs=$(rdma resource show srq dev "$VRNIC_IBDEV" 2>&1)
	n=$(grep -c 'nvmet_rdma' <<<"$srqs")
	[[ ($1 == use_srq=1 && $n -gt 0) || ($1 != use_srq=1 && $n == 0) ]]
	ktap_check "target vm$VRNIC_VM${1:+ $1}: $n SRQs of nvmet_rdma" $? "$srqs"
}
nvmeof_use_results=$nvmeof_host_results
nvmeof_use() { nvmeof_host_run "$1" "$2"; }
# The first round of each direction pulls the host's link under fio.
nvmeof_used_results() { [[ -z $1 ]] && echo "$nvmeof_link_pull_results" || echo 0; }
nvmeof_used() { [[ -n $1 ]] || nvmeof_link_pull "$VRNIC_PEER_IP"; }
storage_pair nvmeof
