#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# perftest, server and client in this guest, through the RoCEv2 GID: every
# RC bandwidth and latency test, UD and UC sends, UC writes, and 16 QPs at
# once.  Each must finish on both sides and report its numbers.  A run
# whose every iteration completed but whose figure is 0.00 runs once more
# (perftest_zero_figure in lib.sh: perftest's clock under TCG).
# boots: one
# tags: smoke tools stack
# order: 20
source "$(dirname "$0")/../lib.sh"
require_vm

runs=(
	"ib_send_bw -n 2000"
	"ib_write_bw -n 2000"
	"ib_read_bw -n 2000"
	"ib_atomic_bw -n 2000"
	"ib_send_lat -n 1000"
	"ib_write_lat -n 1000"
	"ib_read_lat -n 1000"
	"ib_atomic_lat -n 1000"
	"ib_send_bw -c UD -n 2000"
	"ib_send_bw -c UC -n 2000"
	"ib_write_bw -c UC -n 2000"
	"ib_write_bw -q 16 -n 500"
)
ktap_plan ${#runs[@]}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The result row under perftest's header: "#bytes #iterations ..." for
# bandwidth, "#bytes #iterations t_min[usec] ..." for latency.
result_row() { # file
	awk '/#bytes/ { getline; print; exit }' "$1"
}

# run_once CMD...: server and client; sets ok, src and row.
run_once() {
	local args=(-d "$VRNIC_IBDEV" -x "$VRNIC_GID_INDEX" -p "$port" -F) server
	timeout 180 "$@" "${args[@]}" >"$out/server" 2>&1 &
	server=$!
	ok=
	for _ in $(seq 30); do
		timeout 180 "$@" "${args[@]}" 127.0.0.1 >"$out/client" 2>&1 && { ok=1; break; }
		grep -q "Couldn't connect\|Unable to open file descriptor for socket connection" \
			"$out/client" || break
		nap 0.3
	done
	wait "$server"
	src=$?
	row=$(result_row "$out/client")
}

port=18700
for r in "${runs[@]}"; do
	read -r -a cmd <<<"$r"
	for attempt in 1 2; do
		port=$((port + 1))
		run_once "${cmd[@]}"
		[[ $attempt == 1 && -n $ok && $src == 0 ]] && perftest_zero_figure 0 "$row" || break
		echo "# $r: every iteration completed but perftest measured 0.00; once more"
	done
	# A row is: size, iterations, then numbers (bandwidth, rate or usec).
	read -r -a f <<<"$row"
	if [[ -n $ok && $src == 0 && ${#f[@]} -ge 4 && ${f[0]} =~ ^[0-9]+$ && ${f[1]} =~ ^[0-9]+$ ]] &&
		awk -v v="${f[3]}" 'BEGIN { exit !(v + 0 > 0) }'; then
		ktap_ok "$r: $row"
	else
		ktap_not_ok "$r (client ok=${ok:-no}, server exit $src)" \
			"client: $(tail -n 6 "$out/client")" "server: $(tail -n 6 "$out/server")"
	fi
done
ktap_finish
