#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# vrnic_verbs's data-verifying matrix across the two guests
# (vrnic_pair_verbs): RC, UC and UD; every opcode of each; 1, 2 and 4
# scattered SGEs and inline; every byte and both sides' completions
# checked; RC atomics, ATOMIC_WRITE and a remote access error.  Each guest takes a turn
# as the server.
# boots: pair pair-rxe
# tags: smoke verbs
# order: 30
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair

prog=$VRNIC_BUILD/tests/selftests/vrnic_pair_verbs
ktap_plan 2

port=19200
for server in 0 1; do
	port=$((port + 1))
	args="$prog -d $VRNIC_IBDEV -g $VRNIC_GID_INDEX -p $port"
	pair_run "verbs-$server" "$server" 300 "$args" "$args \$VRNIC_PEER_IP"
	rc=$?
	if [[ $pair_role == client ]]; then
		# Every case, as a diagnostic line.
		sed 's/^/# /' "$pair_out"
		line=$(grep "^cases:" "$pair_out")
		# Only rxe's deviations are skipped, and only against rxe; and
		# what this stack lacks (FLUSH: rdma-core 45, Linux 6.2).
		others=$(grep "^ok .* # SKIP" "$pair_out" | grep -vc "lacks it")
		[[ $rc == 0 && $line == *", 0 failed, "* ]] && ! grep -q "^not ok" "$pair_out" &&
			(($(grep -c "^ok " "$pair_out") >= 60)) &&
			[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe || $others == 0 ]]
		ktap_check "vrnic_pair_verbs, server vm$server (client): ${line:-no summary}" $? \
			"exit $rc: $(tail -n 4 "$pair_out")"
	else
		[[ $rc == 0 ]] && grep -q "^server: done" "$pair_out"
		ktap_check "vrnic_pair_verbs, server vm$server (server)" $? "exit $rc: $(tail -n 4 "$pair_out")"
	fi
done
ktap_finish
