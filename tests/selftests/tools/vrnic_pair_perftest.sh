#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# perftest between the two guests: RC bandwidth for every operation and
# send latency.  Against an rxe peer each runs in both directions.  The
# -R (rdma_cm) variants are in vrnic_pair_cm.sh.
# boots: pair pair-rxe
# tags: smoke tools stack
# order: 20
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair

# Against rxe, whose guest moves about 12 MB/s under TCG, each bandwidth
# run is 500 iterations (still four times round the send queue) rather
# than 2000, as it runs twice as often.
n=2000
servers=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && servers=(0 1) && n=500
runs=(
	"ib_write_bw -n $n"
	"ib_read_bw -n $n"
	"ib_send_bw -n $n"
	"ib_atomic_bw -n $n"
	"ib_send_lat -n 1000"
)
select_cases runs
ktap_plan $((${#runs[@]} * ${#servers[@]}))

result_row() { # file
	awk '/#bytes/ { getline; print; exit }' "$1"
}

# A run whose every iteration completed but whose figure is 0.00
# (perftest_zero_figure in lib.sh): the client says so through the run
# directory and both sides run the case once more.

port=18900
for server in "${servers[@]}"; do
	for r in "${runs[@]}"; do
		name="$r, server vm$server"
		for attempt in 1 2; do
			port=$((port + 1))
			args="$r -d $VRNIC_IBDEV -x $VRNIC_GID_INDEX -p $port -F"
			pair_run "perf-$port" "$server" 180 "$args" "$args \$VRNIC_PEER_IP"
			rc=$?
			row=$(result_row "$pair_out")
			again=$VRNIC_RUN_DIR/pair/perf-$port.again
			[[ $pair_role == client && $attempt == 1 ]] && perftest_zero_figure "$rc" "$row" && : >"$again"
			pair_sync "perf-$port.verdict" 60
			[[ -e $again ]] || break
			echo "# $name: every iteration completed but perftest measured 0.00; once more"
		done
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
