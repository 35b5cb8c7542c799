#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Data-verifying RC transfer between the two guests (vrnic_xfer): RDMA
# WRITE, RDMA READ, SEND and atomics, every byte checked on the side that
# received it.  Against an rxe peer it runs in both directions.  The size
# comes from VRNIC_XFER_BYTES (default 16M).
# boots: pair pair-rxe
# tags: verbs
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair

bytes=${VRNIC_XFER_BYTES:-16M}
xfer=$VRNIC_BUILD/tests/selftests/vrnic_xfer
servers=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && servers=(0 1)
ktap_plan ${#servers[@]}

port=19100
for server in "${servers[@]}"; do
	port=$((port + 1))
	args="$xfer -d $VRNIC_IBDEV -g $VRNIC_GID_INDEX -p $port -b $bytes"
	pair_run "xfer-$server" "$server" 600 "$args" "$args \$VRNIC_PEER_IP"
	rc=$?
	line=$(grep "^verified" "$pair_out")
	if [[ $rc == 0 && -n $line ]]; then
		ktap_ok "vrnic_xfer -b $bytes, server vm$server ($pair_role): $line"
	else
		ktap_not_ok "vrnic_xfer -b $bytes, server vm$server ($pair_role, exit $rc)" \
			"$(tail -n 8 "$pair_out")"
	fi
done
ktap_finish
