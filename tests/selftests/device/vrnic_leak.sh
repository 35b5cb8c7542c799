#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# A client killed with SIGKILL in the middle of ib_write_bw leaves nothing
# behind: no QP, CQ, MR or PD in the kernel (rdma res), none in the device
# (vrnicd's object counters), and no page left pinned.
# boots: one
# tags: lifecycle
source "$(dirname "$0")/../lib.sh"
require_vm

ktap_plan 5
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Kernel objects of this device, by type: "qp 0 cq 0 mr 0 pd 0"
res_counts() {
	local t n
	for t in qp cq mr pd srq; do
		n=$(rdma res show "$t" 2>/dev/null | grep -c "^\(dev\|link\) ${VRNIC_IBDEV}[ /]")
		printf '%s %s ' "$t" "$n"
	done
}
dev_counts() {
	local t
	for t in objects_qp objects_cq objects_mr objects_pd objects_srq mr_pages; do
		printf '%s %s ' "$t" "$(hw_counter "$t")"
	done
}
# Pages pinned through FOLL_PIN (ib_umem) and not yet released.
pinned() {
	awk '/^nr_foll_pin_acquired/ { a = $2 } /^nr_foll_pin_released/ { r = $2 } END { print a - r }' /proc/vmstat
}

res0=$(res_counts)
dev0=$(dev_counts)
pin0=$(pinned)
ktap_diag "before: kernel: $res0"
ktap_diag "before: device: $dev0; pinned pages: $pin0"

args=(-d "$VRNIC_IBDEV" -x "$VRNIC_GID_INDEX" -p 18811 -D 60 -q 4)
ib_write_bw "${args[@]}" >"$out/server" 2>&1 &
server=$!
client=
for _ in $(seq 30); do
	ib_write_bw "${args[@]}" 127.0.0.1 >"$out/client" 2>&1 &
	client=$!
	sleep 1
	kill -0 "$client" 2>/dev/null && break
	client=
done
# Wait until data moves, then kill the client mid-transfer.
tx0=$(hw_counter tx_packets)
moving=
for _ in $(seq 100); do
	(($(hw_counter tx_packets) - tx0 > 1000)) && { moving=1; break; }
	nap 0.1
done
mid_res=$(res_counts)
mid_pin=$(pinned)
[[ -n $client ]] && kill -KILL "$client"
ktap_check "the transfer was running when the client was killed" \
	"$([[ -n $client && -n $moving ]]; echo $?)" "client: $(tail -n 5 "$out/client")"
ktap_diag "mid-transfer: kernel: $mid_res; pinned pages: $mid_pin"
# The server notices its peer is gone or runs out its time; end it too.
sleep 2
kill -KILL "$server" 2>/dev/null
wait 2>/dev/null

# Teardown of a killed process's uverbs file is asynchronous: give it time.
for _ in $(seq 100); do
	[[ $(res_counts) == "$res0" && $(dev_counts) == "$dev0" && $(pinned) == "$pin0" ]] && break
	nap 0.1
done
res1=$(res_counts)
dev1=$(dev_counts)
pin1=$(pinned)
ktap_check "rdma res shows no objects left: $res1" "$([[ $res1 == "$res0" ]]; echo $?)" \
	"before: $res0"
ktap_check "vrnicd's object counters are back: $dev1" "$([[ $dev1 == "$dev0" ]]; echo $?)" \
	"before: $dev0"
ktap_check "pinned pages back to $pin0 (were $mid_pin mid-transfer)" \
	"$([[ $pin1 == "$pin0" && $mid_pin -gt $pin0 ]]; echo $?)" "now: $pin1"
# The device is still fine: a fresh run works.
timeout 60 ib_write_bw -d "$VRNIC_IBDEV" -x "$VRNIC_GID_INDEX" -p 18812 -n 200 >"$out/s2" 2>&1 &
s2=$!
ok=1
for _ in $(seq 30); do
	timeout 60 ib_write_bw -d "$VRNIC_IBDEV" -x "$VRNIC_GID_INDEX" -p 18812 -n 200 127.0.0.1 \
		>"$out/c2" 2>&1 && { ok=0; break; }
	grep -q "Couldn't connect\|Unable to open file descriptor" "$out/c2" || break
	nap 0.3
done
wait "$s2" || ok=1
ktap_check "a new ib_write_bw runs afterwards" "$ok" "$(tail -n 5 "$out/c2")"
ktap_finish
