#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# libibverbs' ping-pong examples between the two guests, over the wire
# between their ports: RC, UD and SRQ.  Against an rxe peer each runs
# in both directions (vrnic as server, then rxe as server).
# boots: pair pair-rxe
# tags: smoke tools
# order: 20
# shellcheck disable=SC2154 # pair_out and pair_role come from pair_run (lib.sh)
source "$(dirname "$0")/../lib.sh"
require_pair

iters=${VRNIC_PINGPONG_ITERS:-500}
# Not ibv_uc_pingpong: UC has no recovery, and the example waits for ever
# for a message that lost a packet.  Against rxe under TCG that happened
# (about one run in six), and killing it then trips a WARN in rxe.  UC over
# one device is in vrnic_pingpong.sh and vrnic_verbs.
tools=(ibv_rc_pingpong ibv_ud_pingpong ibv_srq_pingpong)
servers=(0)
[[ $(peer_kind) == rxe || $VRNIC_ROLE == rxe ]] && servers=(0 1)
ktap_plan $((${#tools[@]} * ${#servers[@]}))

port=18800
for server in "${servers[@]}"; do
	for tool in "${tools[@]}"; do
		port=$((port + 1))
		args="-d $VRNIC_IBDEV -g $VRNIC_GID_INDEX -n $iters -p $port"
		# UD messages must fit the path MTU (1024 on a 1500-byte link).
		[[ $tool == ibv_ud_pingpong ]] && args+=" -s 1024"
		name="$tool -n $iters, server vm$server"
		pair_run "$tool-$server" "$server" 120 "$tool $args" "$tool $args \$VRNIC_PEER_IP"
		rc=$?
		line=$(grep "iters in" "$pair_out")
		if [[ $rc == 0 && $line == "$iters iters in"* ]]; then
			ktap_ok "$name ($pair_role): $line"
		else
			ktap_not_ok "$name ($pair_role, exit $rc)" "$(tail -n 8 "$pair_out")"
		fi
	done
done
ktap_finish
