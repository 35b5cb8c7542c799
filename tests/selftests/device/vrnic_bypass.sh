#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# Kernel bypass: 100,000 RDMA WRITEs by ib_write_bw, counted with
# strace -f -c, take at least 100 times fewer system calls than WRs (the
# count includes all of perftest's own setup).  And the device is woken by
# doorbells far less often than it is given work.
# boots: one
# tags: device
source "$(dirname "$0")/../lib.sh"
require_vm

wrs=100000
ktap_plan 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

args=(-d "$VRNIC_IBDEV" -x "$VRNIC_GID_INDEX" -p 18801 -F -s 64 -n "$wrs")
db0=$(hw_counter doorbells)
wqe0=$(hw_counter send_wqes)
timeout 300 ib_write_bw "${args[@]}" >"$out/server" 2>&1 &
server=$!
ok=
for _ in $(seq 30); do
	timeout 300 strace -f -c -o "$out/strace" ib_write_bw "${args[@]}" 127.0.0.1 \
		>"$out/client" 2>&1 && { ok=1; break; }
	grep -q "Couldn't connect\|Unable to open file descriptor" "$out/client" || break
	nap 0.3
done
wait "$server"
src=$?
db=$(($(hw_counter doorbells) - db0))
wqes=$(($(hw_counter send_wqes) - wqe0))

# strace -c ends with a line "100.00 SECONDS USECS/CALL CALLS [ERRORS] total".
calls=$(awk '$NF == "total" { print $4 }' "$out/strace" 2>/dev/null)
if [[ -z $ok || $src != 0 || -z $calls ]]; then
	ktap_not_ok "ib_write_bw -n $wrs under strace -f -c" \
		"client: $(tail -n 6 "$out/client")" "server: $(tail -n 6 "$out/server")"
else
	ktap_diag "$(awk '/#bytes/ { getline; print; exit }' "$out/client")"
	ktap_diag "$(sort -k4 -n -r "$out/strace" | awk 'NF >= 5 && $NF != "total" && $NF != "syscall"' | head -n 8)"
	if ((calls * 100 <= wrs)); then
		ktap_ok "$wrs RDMA WRITEs took $calls system calls in all"
	else
		ktap_not_ok "$wrs RDMA WRITEs took $calls system calls (want at most $((wrs / 100)))"
	fi
fi
# Both sides' WQEs count: the device executed at least the client's.
if ((wqes >= wrs && db * 10 <= wqes)); then
	ktap_ok "$wqes send WQEs cost $db doorbell writes"
else
	ktap_not_ok "$wqes send WQEs (want >= $wrs) cost $db doorbell writes (want <= $((wqes / 10)))"
fi
ktap_finish
