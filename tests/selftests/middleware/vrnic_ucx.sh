#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# UCX in one guest: ucx_perftest's server and client on the same vrnic0,
# over rc_verbs with ud_verbs for wireup and over ud_verbs alone, with
# UCX's defaults except UCX_NET_DEVICES and UCX_TLS.  Each of tag_lat,
# tag_bw, ucp_put_bw, ucp_get, ucp_add and ucp_am_bw must run to the end
# on both sides.  UCX's UD transport (1.13) finds a datagram's destination
# in its GRH by the receive completion's sl, as mlx5 reports it: before
# libvrnic did the same, every datagram was dropped and both sides
# aborted ("UD endpoint ...: unhandled timeout error").  Then 20 runs
# back to back over rc_verbs, tag_lat and tag_bw in turn: every run must
# end with its result, none may hang.
# boots: one
# tags: middleware slow
# order: 70
# timeout: 900
source "$(dirname "$0")/../lib.sh"
require_vm
require_ucx_verbs

tests=(tag_lat tag_bw ucp_put_bw ucp_get ucp_add ucp_am_bw)
tls_sets=("rc_verbs,ud_verbs" ud_verbs)
ktap_plan $((${#tests[@]} * ${#tls_sets[@]} + 2))
mark=$(dmesg_mark)
export UCX_NET_DEVICES=$VRNIC_IBDEV:1
read -r -a ucx_perftest <<<"$(ucx_perftest_cmd)"
port=13400
for tls in "${tls_sets[@]}"; do
	for t in "${tests[@]}"; do
		port=$((port + 1))
		srv=$(mktemp)
		UCX_TLS=$tls timeout 120 "${ucx_perftest[@]}" -p "$port" >"$srv" 2>&1 &
		pid=$!
		wait_listening "$port"
		out=$(UCX_TLS=$tls timeout 120 "${ucx_perftest[@]}" "$VRNIC_IP" -p "$port" -t "$t" -n 2000 -w 100 2>&1)
		rc=$?
		wait "$pid"
		src=$?
		final=$(grep -m1 '^Final:' <<<"$out" | tr -s ' ')
		[[ $rc == 0 && $src == 0 && -n $final ]]
		ktap_check "UCX_TLS=$tls ucx_perftest -t $t: ${final:-no result}" $? \
			"client exit $rc, server exit $src" "$(tail -n 8 <<<"$out")" "$(tail -n 8 "$srv")"
		rm -f "$srv"
	done
done
done_runs=0 why=
for ((run = 1; run <= 20; run++)); do
	t=tag_lat
	((run % 2)) || t=tag_bw
	port=$((port + 1))
	UCX_TLS=rc_verbs,ud_verbs timeout 60 "${ucx_perftest[@]}" -p "$port" >/dev/null 2>&1 &
	pid=$!
	wait_listening "$port"
	out=$(UCX_TLS=rc_verbs,ud_verbs timeout 60 "${ucx_perftest[@]}" "$VRNIC_IP" -p "$port" -t "$t" -n 500 -w 50 2>&1)
	rc=$?
	wait "$pid"
	src=$?
	if [[ $rc != 0 || $src != 0 ]] || ! grep -q '^Final:' <<<"$out"; then
		why="run $run (-t $t): client exit $rc, server exit $src: $(tail -n 3 <<<"$out")"
		break
	fi
	done_runs=$run
done
((done_runs == 20))
ktap_check "20 back-to-back ucx_perftest runs over rc_verbs, tag_lat and tag_bw in turn: $done_runs of 20 ended with a result" \
	$? "$why"
no_kernel_warnings "$mark" "ucx"
ktap_finish
