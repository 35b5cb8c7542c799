#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# NVMe over Fabrics between the two guests (see nvmeof_lib.sh): guest 0
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
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/nvmeof_lib.sh
source "$(dirname "$0")/nvmeof_lib.sh"
require_pair

# target guest:nvmet-rdma parameters.  use_srq=1 is the target's: on an
# rxe target it would try rxe's SRQs, so the rxe target serves without.
rounds=(0: 0:use_srq=1)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && rounds+=(1:)
# Each guest's results: per round, the target's or the host's, and the
# warnings check.
n=0
for r in "${rounds[@]}"; do
	if [[ $VRNIC_VM == "${r%%:*}" ]]; then
		n=$((n + nvmeof_target_results + 3))
	else
		n=$((n + nvmeof_host_results + 1))
		[[ ${r#*:} == "" ]] && n=$((n + nvmeof_link_pull_results))
	fi
done
ktap_plan $n

# The target checks that use_srq=1 got its SRQs while the host is
# connected: nvmet-rdma silently falls back to receive queues without.
nvmeof_connected_hook() { pair_sync nvmeof.connected 120; }

for r in "${rounds[@]}"; do
	t=${r%%:*}
	param=${r#*:}
	mark=$(dmesg_mark)
	if [[ $VRNIC_VM == "$t" ]]; then
		nvmeof_target_setup "$VRNIC_IP" $param
		pair_sync nvmeof.ready 120
		pair_sync nvmeof.connected 300
		srqs=$(rdma resource show srq dev "$VRNIC_IBDEV" 2>&1)
		n=$(grep -c 'nvmet_rdma' <<<"$srqs")
		[[ ($param == use_srq=1 && $n -gt 0) || ($param != use_srq=1 && $n == 0) ]]
		ktap_check "target vm$t${param:+ $param}: $n SRQs of nvmet_rdma" $? "$srqs"
		pair_sync nvmeof.done 840
		ktap_check "target vm$t${param:+ $param}: the host finished (see its results)" $?
		nvmet_stop
		no_kernel_warnings "$mark" "target vm$t"
	else
		pair_sync nvmeof.ready 120
		nvmeof_host_run "$VRNIC_PEER_IP" "$mark"
		[[ -z $param ]] && nvmeof_link_pull "$VRNIC_PEER_IP"
		pair_sync nvmeof.done 840
		no_kernel_warnings "$mark" "host, target vm$t${param:+ $param}"
	fi
done
ktap_finish
