#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# SRP between the two guests (see srp_lib.sh): guest 0 is the ib_srpt
# target, guest 1 the ib_srp initiator; against an rxe peer, then the
# other way round as well.  The initiator tells the target its port ID
# (for the ACL) and the target tells it its service GUID, through the run
# directory.  fio's verify must stay clean, the initiator may log no SRP
# error, and neither kernel may warn.
# boots: pair pair-rxe
# tags: storage slow
# order: 60
# timeout: 900
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/srp_lib.sh
source "$(dirname "$0")/srp_lib.sh"
require_pair

targets=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && targets+=(1)
n=0
for t in "${targets[@]}"; do
	if [[ $VRNIC_VM == "$t" ]]; then
		n=$((n + srp_target_results + 2))
	else
		n=$((n + srp_initiator_results + 1))
	fi
done
ktap_plan $n

ids=$VRNIC_RUN_DIR/pair
for t in "${targets[@]}"; do
	mark=$(dmesg_mark)
	if [[ $VRNIC_VM == "$t" ]]; then
		pair_sync srp.id 120
		srp_target_setup "$VRNIC_IP" "$(cat "$ids/srp.initiator")"
		echo "$srp_target_guid" >"$ids/srp.target"
		pair_sync srp.ready 120
		pair_sync srp.done 840
		ktap_check "target vm$t: the initiator finished (see its results)" $?
		srp_target_teardown
		no_kernel_warnings "$mark" "target vm$t"
	else
		srp_initiator_id >"$ids/srp.initiator"
		pair_sync srp.id 120
		pair_sync srp.ready 120
		srp_initiator_run "$VRNIC_PEER_IP" "$(cat "$ids/srp.target")" "$mark"
		pair_sync srp.done 840
		no_kernel_warnings "$mark" "initiator, target vm$t"
	fi
done
ktap_finish
