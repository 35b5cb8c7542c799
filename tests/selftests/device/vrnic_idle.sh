#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# What the device costs when nobody uses it, and how rarely it is rung
# when somebody does:
#  - idle, vrnicd uses under 1% of a host core (the host samples
#    /proc/PID/stat over 5 s, after 1 s of quiet, at our request);
#  - under ib_write_lat, doorbell writes are far fewer than WRs: the
#    device polls its doorbell records while busy.
# boots: one
# tags: device
source "$(dirname "$0")/../lib.sh"
require_vm

ktap_plan 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Some traffic first, so that the engine has run and gone back to sleep.
run_pair() { # port, tool args...
	local port=$1 ok=1
	shift
	timeout 120 "$@" -d "$VRNIC_IBDEV" -x "$VRNIC_GID_INDEX" -p "$port" >"$out/server" 2>&1 &
	local server=$!
	for _ in $(seq 30); do
		timeout 120 "$@" -d "$VRNIC_IBDEV" -x "$VRNIC_GID_INDEX" -p "$port" 127.0.0.1 \
			>"$out/client" 2>&1 && { ok=0; break; }
		grep -q "Couldn't connect\|Unable to open file descriptor" "$out/client" || break
		nap 0.3
	done
	wait "$server" || ok=1
	return $ok
}

iters=5000
db0=$(hw_counter doorbells)
wqe0=$(hw_counter send_wqes)
run_pair 18821 ib_write_lat -n "$iters"
rc=$?
db=$(($(hw_counter doorbells) - db0))
wqes=$(($(hw_counter send_wqes) - wqe0))
ktap_diag "$(awk '/#bytes/ { getline; print; exit }' "$out/client")"
ktap_check "ib_write_lat -n $iters ran" "$rc" "$(tail -n 5 "$out/client")"
# Both sides post: 2 x iters WRs.
if ((rc == 0 && wqes >= 2 * iters && db * 10 <= wqes)); then
	ktap_ok "$wqes WRs under ib_write_lat cost $db doorbell writes"
else
	ktap_not_ok "$wqes WRs (want >= $((2 * iters))) cost $db doorbell writes (want <= $((wqes / 10)))"
fi

sleep 1
if ans=$(host_request cpu "$VRNIC_VM" 5); then
	read -r _ pct _ ticks _ hz _ secs <<<"$ans"
	if awk -v p="$pct" 'BEGIN { exit !(p < 1.0) }'; then
		ktap_ok "idle vrnicd used $pct% of a core ($ticks ticks at $hz Hz in $secs s)"
	else
		ktap_not_ok "idle vrnicd used $pct% of a core ($ticks ticks at $hz Hz in $secs s)"
	fi
else
	ktap_not_ok "sampling vrnicd's CPU use" "$ans"
fi
ktap_finish
