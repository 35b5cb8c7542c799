#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Per-QP counters through rdma_counter ("rdma statistic qp"): a QP bound
# by hand counts into a device counter set of its own (packets, bytes,
# WQEs, ...) while a ping-pong runs; unbinding frees the set; in auto mode
# new QPs of a type share one.
# boots: one
# tags: device
source "$(dirname "$0")/../lib.sh"
require_vm

ktap_plan 5
out=$(mktemp -d)
link=$VRNIC_IBDEV/1
cleanup() {
	rdma statistic qp set link "$link" auto off 2>/dev/null
	stop_pingpong
	rm -rf "$out"
}
trap cleanup EXIT

# A long RC ping-pong in the background, server and client; sets pp_pid
# to the client's pid, pp_pids to both.
pingpong() {
	local args=(-d "$VRNIC_IBDEV" -g "$VRNIC_GID_INDEX" -n 1000000 -p "$1")
	ibv_rc_pingpong "${args[@]}" >"$out/s$1" 2>&1 &
	pp_pids=($!)
	wait_listening "$1"
	ibv_rc_pingpong "${args[@]}" 127.0.0.1 >"$out/c$1" 2>&1 &
	pp_pid=$!
	pp_pids+=("$pp_pid")
}

stop_pingpong() {
	kill "${pp_pids[@]}" 2>/dev/null
	wait "${pp_pids[@]}" 2>/dev/null
}

# json FIELD_EXPR: evaluate a Python expression over the QP counters of
# the link (c: the list rdma -j statistic qp show gives).
counters() {
	rdma -j statistic qp show link "$link" | python3 -c "import json, sys
c = json.load(sys.stdin)
print($1)"
}

# The RC QP of process pid, once it is in RTS.
qp_of() {
	local q
	for _ in $(seq 100); do
		q=$(rdma -j res show qp link "$link" | python3 -c "import json, sys
print(' '.join(str(x['lqpn']) for x in json.load(sys.stdin)
      if x.get('pid') == $1 and x.get('state') == 'RTS'))")
		[[ -n $q ]] && { echo "$q"; return 0; }
		nap 0.1
	done
	return 1
}

pingpong 18710
q=$(qp_of "$pp_pid")
rdma statistic qp bind link "$link" lqpn "$q" >"$out/bind" 2>&1
rc=$?
sleep 1
first=$(counters "[(x['cntn'], x['send_wqes'], x['tx_packets'], x['rx_packets']) for x in c if x['lqpn'] == [$q]]")
sleep 1
second=$(counters "[x['send_wqes'] for x in c if x['lqpn'] == [$q]]")
read -r cntn w1 tx rx < <(tr -d '[](),' <<<"$first")
w2=$(tr -d '[]' <<<"$second")
[[ $rc == 0 && -n $cntn ]] && ((w1 > 0 && tx > 0 && rx > 0))
ktap_check "QP $q bound to counter $cntn counts: send_wqes $w1 tx_packets $tx rx_packets $rx" $? \
	"bind exit $rc: $(cat "$out/bind"); counters: $first"
[[ -n $w2 ]] && ((w2 > w1))
ktap_check "its counters grow while the QP works (send_wqes $w1, then $w2)" $?
port_tx=$(hw_counter tx_packets)
((port_tx > tx))
ktap_check "the port counts more than the one QP (port tx_packets $port_tx)" $?

rdma statistic qp unbind link "$link" cntn "$cntn" lqpn "$q" >"$out/unbind" 2>&1
rc=$?
left=$(counters "len(c)")
[[ $rc == 0 && $left == 0 ]]
ktap_check "unbinding frees the counter" $? "unbind exit $rc: $(cat "$out/unbind"); counters left: $left"
stop_pingpong

rdma statistic qp set link "$link" auto type on >"$out/auto" 2>&1
rc=$?
pingpong 18711
qp_of "$pp_pid" >/dev/null
sleep 1
shared=$(counters "[(x['lqpn'], x['send_wqes']) for x in c]")
stop_pingpong
rdma statistic qp set link "$link" auto off
# Both QPs of the ping-pong (server and client), counted together.
[[ $rc == 0 ]] && python3 -c "import sys
c = $shared
sys.exit(0 if len(c) == 1 and len(c[0][0]) == 2 and c[0][1] > 0 else 1)"
ktap_check "auto mode: the new RC QPs share one counter ($shared)" $? "auto: $(cat "$out/auto")"
ktap_finish
