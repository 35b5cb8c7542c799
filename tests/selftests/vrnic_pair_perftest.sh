#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# perftest between the two guests: RC bandwidth for every operation and
# send latency.  Against an rxe peer each runs in both directions.  The
# -R (rdma_cm) variants are in vrnic_pair_cm.sh.
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/lib.sh"
require_pair

runs=(
	"ib_write_bw -n 2000"
	"ib_read_bw -n 2000"
	"ib_send_bw -n 2000"
	"ib_atomic_bw -n 2000"
	"ib_send_lat -n 1000"
)
servers=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && servers=(0 1)
ktap_plan $((${#runs[@]} * ${#servers[@]}))

result_row() { # file
	awk '/#bytes/ { getline; print; exit }' "$1"
}

port=18900
for server in "${servers[@]}"; do
	for r in "${runs[@]}"; do
		port=$((port + 1))
		args="$r -d $VRNIC_IBDEV -x $VRNIC_GID_INDEX -p $port -F"
		name="$r, server vm$server"
		pair_run "perf-$port" "$server" 180 "$args" "$args \$VRNIC_PEER_IP"
		rc=$?
		row=$(result_row "$pair_out")
		read -r -a f <<<"$row"
		if [[ $rc == 0 && ${#f[@]} -ge 4 && ${f[0]} =~ ^[0-9]+$ && ${f[1]} =~ ^[0-9]+$ ]] &&
			awk -v v="${f[3]}" 'BEGIN { exit !(v + 0 > 0) }'; then
			ktap_ok "$name ($pair_role): $row"
		else
			ktap_not_ok "$name ($pair_role, exit $rc)" "$(tail -n 8 "$pair_out")"
		fi
	done
done
ktap_finish
