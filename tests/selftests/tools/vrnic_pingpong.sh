#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# libibverbs' example programs, server and client in this guest, through
# the device's RoCEv2 GID: RC, UC, UD and SRQ ping-pong, 1000 round trips
# each, polling and then sleeping on CQ events (-e).
# boots: one
# tags: smoke tools
# order: 20
source "$(dirname "$0")/../lib.sh"
require_vm

iters=${VRNIC_PINGPONG_ITERS:-1000}
tools=(ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong)
ktap_plan $((${#tools[@]} * 2))
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

port=18600
for tool in "${tools[@]}"; do
	for events in "" -e; do
		port=$((port + 1))
		args=(-d "$VRNIC_IBDEV" -g "$VRNIC_GID_INDEX" -n "$iters" -p "$port")
		[[ -n $events ]] && args+=("$events")
		# UD messages must fit the port MTU (1024 here).
		[[ $tool == ibv_ud_pingpong ]] && args+=(-s 1024)
		name="$tool -n $iters${events:+ $events}"
		timeout 120 "$tool" "${args[@]}" >"$out/server" 2>&1 &
		server=$!
		# The server listens once it has its QP; retry the connection.
		ok=
		for _ in $(seq 30); do
			timeout 120 "$tool" "${args[@]}" 127.0.0.1 >"$out/client" 2>&1 && { ok=1; break; }
			grep -q "Couldn't connect" "$out/client" || break
			nap 0.3
		done
		wait "$server"
		src=$?
		if [[ -n $ok && $src == 0 ]] &&
			grep -q "^$iters iters in" "$out/client" && grep -q "^$iters iters in" "$out/server"; then
			ktap_ok "$name: $(grep "iters in" "$out/client")"
		else
			ktap_not_ok "$name (server exit $src)" \
				"client: $(tail -n 5 "$out/client")" "server: $(tail -n 5 "$out/server")"
		fi
	done
done
ktap_finish
