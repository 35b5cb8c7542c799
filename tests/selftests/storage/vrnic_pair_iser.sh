#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# iSER between the two guests (see iser_lib.sh): guest 0 is the LIO
# target, guest 1 the open-iscsi initiator; against an rxe peer, then the
# other way round as well.  fio's verify must stay clean, the initiator
# may log no iSER or iSCSI error (but the one after a completed logout,
# which iscsid drops), and neither kernel may warn (but the kernel's own
# iscsi_ctrl flush warning at logout; see iser_lib.sh).
# boots: pair pair-rxe
# tags: storage slow
# order: 60
# timeout: 900
source "$(dirname "$0")/../lib.sh"
# shellcheck source=tests/selftests/storage/iser_lib.sh
source "$(dirname "$0")/iser_lib.sh"
require_pair

targets=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && targets+=(1)
n=0
for t in "${targets[@]}"; do
	if [[ $VRNIC_VM == "$t" ]]; then
		n=$((n + iser_target_results + 2))
	else
		n=$((n + iser_initiator_results + 1))
	fi
done
ktap_plan $n

for t in "${targets[@]}"; do
	mark=$(dmesg_mark)
	if [[ $VRNIC_VM == "$t" ]]; then
		iser_target_setup "$VRNIC_IP"
		pair_sync iser.ready 120
		pair_sync iser.done 840
		ktap_check "target vm$t: the initiator finished (see its results)" $?
		iser_target_teardown
		# rxe 6.1 runs a finished REG_MR again when it retransmits (see
		# iser_lib.sh): say what made either side resend.
		ktap_diag "$VRNIC_IBDEV's transport counters so far: $(transport_counters)"
		iser_no_kernel_warnings "$mark" "target vm$t"
	else
		pair_sync iser.ready 120
		iser_initiator_run "$VRNIC_PEER_IP" "$mark"
		pair_sync iser.done 840
		ktap_diag "$VRNIC_IBDEV's transport counters so far: $(transport_counters)"
		iser_no_kernel_warnings "$mark" "initiator, target vm$t"
	fi
done
ktap_finish
