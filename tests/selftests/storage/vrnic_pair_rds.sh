#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Reliable Datagram Sockets over RDMA (rds_rdma) between the two guests:
# AF_RDS sockets on the IB transport, driven by rds_check.py.  Guest 1
# sends 300 messages of 1 B to 128 KiB to guest 0, which checks that each
# arrives once, in order, with every byte right; against an rxe peer, then
# the other way round as well.  No kernel may warn, loading, carrying or
# removing it (but on 7.3, where it is not removed: see below).
# boots: pair pair-rxe
# tags: storage slow
# order: 60
# timeout: 600
# shellcheck disable=SC2154,SC2034 # pair_out, pair_role (set), pair_ready (read) by pair_run
source "$(dirname "$0")/../lib.sh"
require_pair

check=$(dirname "$0")/rds_check.py
count=300
receivers=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && receivers+=(1)
ktap_plan $((2 * ${#receivers[@]} + 2))

# Linux 6.12: loading rds_rdma on a guest with rxe0 hangs (modprobe and a
# kworker blocked for good); two rxe guests do the same, so a boot with an
# rxe guest on 6.12 skips, on both sides.
if [[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && [[ $(kernel_series) == 6.12 ]]; then
	why="Linux 6.12: modprobe rds_rdma hangs on the rxe guest (two rxe guests too)"
	ktap_skip "modprobe rds_rdma (rds_tcp not loaded)" "$why"
	for r in "${receivers[@]}"; do
		ktap_skip "receiver vm$r: $count messages" "$why"
		ktap_skip "vm$r's round over" "$why"
	done
	ktap_skip "rds: no kernel warnings" "$why"
	ktap_finish
	exit
fi

mark=$(dmesg_mark)
out=$(modprobe rds_rdma 2>&1)
rc=$?
tcp=$(lsmod | grep -c '^rds_tcp')
[[ $rc == 0 && $tcp == 0 ]]
ktap_check "modprobe rds_rdma (rds_tcp not loaded)" $? "$out"

port=18700
pair_ready='^bound'
for r in "${receivers[@]}"; do
	port=$((port + 1))
	pair_run "rds-$r" "$r" 150 "$check recv $VRNIC_IP $port $count" \
		"$check send $VRNIC_IP $port \$VRNIC_PEER_IP $port $count"
	rc=$?
	sed 's/^/# /' "$pair_out"
	if [[ $pair_role == server ]]; then
		grep -q "^received $count of $count" "$pair_out" || rc=1
		ktap_check "receiver vm$r: $(grep -m1 '^received' "$pair_out")" "$rc" \
			"exit $rc"
	else
		grep -q "^the receiver checked $count of $count" "$pair_out" || rc=1
		ktap_check "sender to vm$r: $(grep -m1 '^sent' "$pair_out"), transport $(grep -m1 -o 'transport [A-Z0-9]*' "$pair_out" | cut -d' ' -f2)" \
			"$rc" "exit $rc"
	fi
	pair_sync "rds-$r.checked" 120
	ktap_check "vm$r's round over" $?
done
# Linux 7.3: removing rds_rdma after its connections carried messages
# leaks their receive buffers (rds_ib_recv_exit warns) and, on an rxe
# guest, ib_cm then runs the removed module's code (a panic).  Two rxe
# guests do the same; the user guide's known problems.  It stays loaded.
if [[ $(kernel_series) == 7.3 ]]; then
	ktap_diag "Linux 7.3: rds_rdma stays loaded: its removal leaks rds_ib_incoming (two rxe guests too)"
else
	modprobe -r rds_rdma rds 2>/dev/null
fi
no_kernel_warnings "$mark" "rds"
ktap_finish
