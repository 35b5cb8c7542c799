#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# vrnicctl against this guest's live vrnicd (run on the host, through
# host_request): status agrees with what the guest sees of the device,
# qp list with `rdma resource show qp`, qp show with the QP's partner, and
# trace shows a running ping-pong's WQEs, packets and CQEs.  In the guest,
# `rdma resource show qp -dd` shows the device's own view of each QP.
# boots: one
# tags: device
source "$(dirname "$0")/../lib.sh"
require_vm

ktap_plan 9
ctl() { host_request vrnicctl "$VRNIC_VM" "$@"; }
tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# 1. status, as JSON and as text.
if ctl status --json >"$tmp/status.json"; then
	gid=$(cat "/sys/class/infiniband/$VRNIC_IBDEV/ports/1/gids/$VRNIC_GID_INDEX")
	# The same address as the host writes it (inet_ntop).
	want=$(jq -r --argjson i "$VRNIC_GID_INDEX" '.port.gids[] | select(.index == $i) | .gid' \
		"$tmp/status.json")
	same=$(python3 -c 'import ipaddress, sys
print(int(ipaddress.ip_address(sys.argv[1]) == ipaddress.ip_address(sys.argv[2] or "::1")))' \
		"$gid" "$want")
	qps=$(hw_counter objects_qp)
	ok=1
	[[ $same == 1 ]] && jq -e --argjson qps "$qps" '.ok and .device.state == "READY" and
		.port.state == "ACTIVE" and .port.phys_state == "LINK_UP" and
		.objects.qp == $qps and .counters.objects_qp == $qps' "$tmp/status.json" >/dev/null && ok=0
	ktap_check "status --json: READY, port ACTIVE, GID $VRNIC_GID_INDEX $want, $qps QPs as the guest counts them" "$ok" \
		"$(head -c 2000 "$tmp/status.json")"
else
	ktap_not_ok "status --json" "$(cat "$tmp/status.json")"
fi
out=$(ctl status)
grep -q "^port 1: *ACTIVE (LINK_UP)" <<<"$out"
ok=$?
ktap_check "status: $(grep -m1 '^port 1:' <<<"$out" | tr -s ' ')" "$ok" "$out"

# 2. A ping-pong that runs while we look.
ibv_rc_pingpong -d "$VRNIC_IBDEV" -g "$VRNIC_GID_INDEX" -p 18515 -n 1000000 >"$tmp/srv" 2>&1 &
pids+=($!)
wait_listening 18515
ibv_rc_pingpong -d "$VRNIC_IBDEV" -g "$VRNIC_GID_INDEX" -p 18515 -n 1000000 localhost \
	>"$tmp/cli" 2>&1 &
pids+=($!)
rc_qps() {
	rdma -j res show qp link "$VRNIC_IBDEV/1" 2>/dev/null |
		jq -r '[.[] | select(.type == "RC" and .state == "RTS") | .lqpn] | sort | join(" ")'
}
two_qps() { [[ $(rc_qps | wc -w) == 2 ]]; }
retry 100 0.1 two_qps
guest=$(rc_qps)
read -r qa qb <<<"$guest"

# 3. qp list: the same RC QPs as the guest's rdma tool.
if ctl qp list --json >"$tmp/list.json"; then
	hostside=$(jq -r '[.qps[] | select(.type == "RC" and .state == "RTS") | .qpn] | sort | join(" ")' \
		"$tmp/list.json")
	[[ -n $guest && $hostside == "$guest" ]]
	ktap_check "qp list: RC QPs in RTS are $hostside, as rdma resource show qp says ($guest)" $? \
		"$(cat "$tmp/list.json")"
else
	ktap_not_ok "qp list --json" "$(cat "$tmp/list.json")"
fi
out=$(ctl qp list)
grep -Eq "^ +$qa +RC +RTS" <<<"$out"
ktap_check "qp list: a table row for QP $qa" $? "$out"

# 4. qp show: the partner, traffic, no error.
if ctl qp show "${qa:-0}" --json >"$tmp/show.json"; then
	jq -e --argjson b "${qb:-0}" '.ok and .state == "RTS" and .dest_qpn == $b and
		.stats.tx_packets > 0 and .stats.rx_packets > 0 and .last_error == null and
		.path_mtu >= 256' "$tmp/show.json" >/dev/null
	ok=$?
	ktap_check "qp show $qa: RTS, partner $qb, $(jq -r '.stats.tx_packets' "$tmp/show.json") packets out, no error" \
		"$ok" "$(cat "$tmp/show.json")"
else
	ktap_not_ok "qp show $qa" "$(cat "$tmp/show.json")"
fi

# 5. trace: the QP's SEND WQEs, its packets both ways and its CQEs.
if ctl trace --qp "${qa:-0}" --count 40 --seconds 30 --json >"$tmp/trace.json"; then
	jq -se --argjson a "${qa:-0}" 'length == 40 and all(.[]; .qpn == $a) and
		any(.[]; .event == "wqe" and .opcode == "SEND") and
		any(.[]; .event == "tx" and (.opcode | startswith("RC_SEND"))) and
		any(.[]; .event == "rx") and
		any(.[]; .event == "cqe" and .status == "SUCCESS")' "$tmp/trace.json" >/dev/null
	ok=$?
	kinds=$(jq -r '.event + ":" + .opcode' "$tmp/trace.json" | sort -u | tr '\n' ' ')
	ktap_check "trace --qp $qa: 40 events: $kinds" "$ok" "$(head -n 20 "$tmp/trace.json")"
else
	ktap_not_ok "trace --qp $qa" "$(cat "$tmp/trace.json")"
fi
out=$(ctl trace --count 5 --seconds 30)
[[ $(grep -Ec "^ *[0-9]+ qp [0-9]+ +(wqe|tx|rx|cqe) " <<<"$out") == 5 ]]
ok=$?
ktap_check "trace: 5 decoded lines, e.g. $(head -n 1 <<<"$out" | tr -s ' ')" "$ok" "$out"

# 6. The kernel's view: rdma resource show qp -dd has the device's own
# state, PSNs and partner for the QP (vrnic.ko asks the device).
out=$(rdma -dd res show qp link "$VRNIC_IBDEV/1" lqpn "${qa:-0}" 2>&1)
echo "$out" | sed 's/^/# /'
grep -Eq "drv_state RTS drv_sq_psn [0-9]+ drv_rq_psn [0-9]+ drv_sq_draining 0 drv_dest_qpn ${qb:-x} " <<<"$out"
ok=$?
ktap_check "rdma resource show qp -dd: $(grep -Eo 'drv_state .*' <<<"$out" | head -c 160)" "$ok" "$out"

# 7. Errors come back as errors.
out=$(ctl qp show 16777000)
[[ $? != 0 && $out == *"no QP 16777000"* ]]
ktap_check "qp show of no QP: '$out'" $? "$out"

ktap_finish
